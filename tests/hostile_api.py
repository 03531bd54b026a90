"""Machinery for the hostile-input suite (``test_hostile_inputs.py``).

The public API is enumerated, not listed: every function and class defined in a public module of
``shuffle_lib`` (no leading underscore in the module path or the name). A valid call of each one is
taken from its own docstring example, which the doctest run already keeps correct, so a new public
function is covered as soon as it has an example. Each argument of that call is then replaced, one
at a time, by hostile values chosen from the argument's kind (number, integer, array, boolean,
other object). A call passes when it either

* raises ``ValueError`` or ``TypeError`` from an explicit ``raise`` inside ``shuffle_lib`` (our own
  validation, not an error leaking from numpy, scipy, numba or cvxpy), or
* returns a value with no NaN, no infinity (unless the function documents one, see
  ``MAY_RETURN_INFINITY``) and, where the hostile value has the valid value's shape, the valid
  result's shape,

within a time limit and a memory limit. Calls run in a forked worker process, so a call stuck in C
code (a convolution, a solver) is killed at the limit and reported instead of hanging the suite.

Two further families of cases (issue 32) look for defects that a few hostile values miss:

* **Range sweeps.** Every real-valued argument (a float, or the first entry of an array of floats)
  is also set to each magnitude of ``SWEEP_GRID``, a log grid from 1e-300 to 1e300 that includes
  the edges of double-precision exponentials (709.8, 710, 745, 746). The verdict is the one above:
  refused cleanly, or a finite, non-NaN result of the valid call's shape. For the epsilon
  accountants (``is_epsilon_accountant``) a result of 0 where the valid call's result is positive
  also fails when the level is larger than the example's (a local level ``eps*``, ``mu``, ``rho``
  raised) or the target ``delta`` smaller: the true epsilon can only grow there, so a returned 0
  is an upper bound below the truth (the "user at 710 vanishes" defect). To keep the suite's
  runtime within twice its size without sweeps, a function whose example call takes 0.02 s or
  more is swept over a coarser grid that keeps the edges (``sweep_grid``); ``python
  tests/hostile_api.py --full-grid`` sweeps every function over the whole grid.
* **Huge broadcast views.** Every array argument is also replaced by a read-only broadcast view of
  its first entry with ``HUGE_ENTRIES`` (1e10) entries (a 2-D or higher array keeps its trailing
  axes; a square matrix becomes 1e5 x 1e5). The view costs no memory, so only a size check made
  before any copy or pass over the data refuses it in time: the call must raise our
  ``ValueError``/``TypeError`` naming the argument, never a ``MemoryError`` or a timeout.
"""

from __future__ import annotations

import copy
import dataclasses
import dis
import doctest
import importlib
import inspect
import math
import multiprocessing
import multiprocessing.connection
import os
import pkgutil
import resource
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np

import shuffle_lib

LIBRARY_DIR = Path(shuffle_lib.__file__).resolve().parent
HUGE_INT = 10**30
MEMORY_LIMIT_BYTES = 8 * 2**30


def public_modules() -> list[ModuleType]:
    """``shuffle_lib`` and every submodule with no dotted-path component starting with ``_``."""
    modules = [shuffle_lib]
    for info in pkgutil.walk_packages(shuffle_lib.__path__, "shuffle_lib."):
        if any(part.startswith("_") for part in info.name.split(".")):
            continue
        modules.append(importlib.import_module(info.name))
    return modules


def public_api() -> dict[str, Callable[..., Any]]:
    """Every public function, class and public method of a public class, keyed by its dotted
    name where it is defined (``module.function``, ``module.Class.method``)."""
    api: dict[str, Callable[..., Any]] = {}
    public = {module.__name__ for module in public_modules()}
    for module in public_modules():
        for name, obj in vars(module).items():
            if name.startswith("_"):
                continue
            if type(obj).__name__.endswith("Dispatcher"):  # a compiled numba kernel
                obj = obj.py_func
            if not (inspect.isfunction(obj) or inspect.isclass(obj)):
                continue
            home = getattr(obj, "__module__", "")
            if home not in public or obj.__name__ != name:
                continue
            api.setdefault(f"{home}.{name}", obj)
            if inspect.isclass(obj):
                for method_name, method in vars(obj).items():
                    if not method_name.startswith("_") and inspect.isfunction(method):
                        api.setdefault(f"{home}.{name}.{method_name}", method)
    return dict(sorted(api.items()))


@dataclasses.dataclass
class Call:
    """A recorded call: positional and keyword arguments that the function accepted."""

    args: tuple[Any, ...]
    kwargs: dict[str, Any]


def example_call(qualname: str, obj: Callable[..., Any]) -> Call | None:
    """The first call of ``obj`` in its own docstring example, with the actual argument values.

    The example runs in a copy of its module's namespace where ``obj``'s name is bound to a
    recorder, so names defined earlier in the example resolve as in the doctest itself.
    """
    module = importlib.import_module(obj.__module__)
    examples = doctest.DocTestParser().get_examples(obj.__doc__ or "")
    if not examples:
        return None
    recorded: list[Call] = []

    def recorder(*args: Any, **kwargs: Any) -> Any:
        if not recorded:
            recorded.append(Call(copy.deepcopy(args), copy.deepcopy(kwargs)))
        return obj(*args, **kwargs)

    namespace = dict(vars(module))
    owner = getattr(module, obj.__qualname__.split(".")[0]) if "." in obj.__qualname__ else None
    if owner is None:
        namespace[obj.__name__] = recorder
    else:  # a method: record through the class, so ``instance.method(...)`` is seen
        setattr(owner, obj.__name__, recorder)
    try:
        for example in examples:
            try:
                exec(compile(example.source, f"<example of {qualname}>", "single"), namespace)
            except Exception:  # an example showing an error: keep going, the earlier call counts
                continue
            if recorded:
                break
    finally:
        if owner is not None:
            setattr(owner, obj.__name__, obj)
    return recorded[0] if recorded else None


# Hostile values by kind of argument. Each is (label, value).
FLOAT_VALUES: list[tuple[str, Any]] = [
    ("nan", math.nan),
    ("inf", math.inf),
    ("-inf", -math.inf),
    ("-1", -1.0),
    ("0", 0.0),
    ("1e-300", 1e-300),
    ("-1e-300", -1e-300),
    ("1e300", 1e300),
    ("huge int", HUGE_INT),
    ("string", "1.0"),
    ("None", None),
    ("bool", True),
]
INT_VALUES: list[tuple[str, Any]] = [
    ("-1", -1),
    ("0", 0),
    ("1", 1),
    ("10**12", 10**12),
    ("huge int", HUGE_INT),
    ("float 2.5", 2.5),
    ("nan", math.nan),
    ("inf", math.inf),
    ("string", "3"),
    ("None", None),
    ("bool", True),
]
BOOL_VALUES: list[tuple[str, Any]] = [("string", "no"), ("int 2", 2), ("None", None)]
OTHER_VALUES: list[tuple[str, Any]] = [("None", None), ("float", 3.5), ("string", "x")]
RNG_VALUES: list[tuple[str, Any]] = [("string", "seed"), ("float", 1.5), ("bool", True)]

# Magnitudes every real-valued argument is swept through (see the module docstring). 709.8 and
# 710 straddle the overflow of exp, 745 and 746 the underflow of exp(-x) to 0.
SWEEP_GRID: tuple[float, ...] = (
    1e-300, 1e-100, 1e-30, 1e-8, 0.01, 0.5, 1.0, 2.0, 30.0, 100.0, 700.0, 709.8, 710.0, 745.0,
    746.0, 1e3, 1e5, 1e10, 1e30, 1e100, 1e300,
)
# Cheaper grids for functions whose valid call is slow (see ``sweep_grid``).
SWEEP_GRID_MEDIUM: tuple[float, ...] = (1e-30, 1e-8, 0.5, 2.0, 30.0, 709.8, 710.0, 746.0, 1e10,
                                        1e100)
SWEEP_GRID_COSTLY: tuple[float, ...] = (1e-8, 30.0, 710.0, 746.0)
SWEEP_CHEAP_SECONDS = 0.02
SWEEP_COSTLY_SECONDS = 0.2
HUGE_ENTRIES = 10**10
HUGE_LABEL = "huge view"


def _array_values(valid: np.ndarray) -> list[tuple[str, Any]]:
    values: list[tuple[str, Any]] = [
        ("empty", np.array([], dtype=valid.dtype)),
        ("scalar in place of array", valid.reshape(-1)[0].item()),
        ("extra axis", valid.reshape((1, *valid.shape))),
        ("strings", np.full(valid.shape, "a")),
    ]
    if valid.dtype.kind in "iuf":
        as_float = valid.astype(float)
        for label, fill in (("nan", math.nan), ("inf", math.inf), ("1e300", 1e300)):
            bad = as_float.copy()
            bad.reshape(-1)[0] = fill
            values.append((f"entry {label}", bad))
        values.append(("negated", -as_float - 1))
    if valid.dtype.kind in "iu":
        values.append(("non-integer entries", valid.astype(float) + 0.5))
        huge = valid.astype(np.int64).copy()
        huge.reshape(-1)[0] = 2**62
        values.append(("entry 2**62", huge))
    return values


def hostile_values(name: str, valid: Any, annotation: str) -> list[tuple[str, Any]]:
    """Hostile replacements for an argument named ``name`` whose valid value is ``valid``."""
    if name == "rng":
        values = list(RNG_VALUES)
    elif isinstance(valid, bool | np.bool_):
        values = list(BOOL_VALUES)
    elif isinstance(valid, int | np.integer):
        values = list(INT_VALUES)
    elif isinstance(valid, float | np.floating):
        values = list(FLOAT_VALUES)
    elif isinstance(valid, np.ndarray) and valid.dtype.kind in "biuf" and valid.size:
        values = _array_values(valid)
    elif (
        isinstance(valid, list | tuple)
        and valid
        and all(isinstance(v, int | float | np.number) and not isinstance(v, bool) for v in valid)
    ):
        values = _array_values(np.asarray(valid))
    elif isinstance(valid, str):  # a choice or a free-text label: another string may be valid
        values = [("None", None), ("float", 3.5), ("other string", "x")]
    else:
        values = list(OTHER_VALUES)
    if "None" in annotation:  # None is a documented value of this argument
        values = [(label, value) for label, value in values if value is not None]
    return values


@dataclasses.dataclass
class Case:
    """One hostile call: which function, which argument, which value."""

    qualname: str
    argument: str
    label: str
    call: Call
    keeps_shape: bool = False  # a real number replaced by a real number: same result shape
    swept: tuple[float, float] | None = None  # (valid, new) positive level of a real argument

    @property
    def name(self) -> str:
        return f"{self.qualname}({self.argument}={self.label})"


def hostile_cases(
    qualname: str, obj: Callable[..., Any], valid: Call, grid: tuple[float, ...] = ()
) -> list[Case]:
    """Every one-argument replacement of the valid call by a hostile value, a huge view (array
    arguments) and, when ``grid`` is given, the range sweep of each real argument over it."""
    try:
        signature = inspect.signature(obj)
        bound = signature.bind(*valid.args, **valid.kwargs)
    except (TypeError, ValueError):
        return []
    cases = []
    parameters = signature.parameters
    for name, value in bound.arguments.items():
        parameter = parameters[name]
        if name == "self" or parameter.kind in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD):
            continue
        real = isinstance(value, float | np.floating)
        hostile_list = [] if grid else hostile_values(name, value, str(parameter.annotation))
        for label, hostile in hostile_list:
            arguments = dict(bound.arguments)
            arguments[name] = hostile
            replaced = inspect.BoundArguments(signature, arguments)  # type: ignore[arg-type]
            keeps_shape = real and isinstance(hostile, float) and label != "huge int"
            call = Call(replaced.args, replaced.kwargs)
            swept = (float(value), hostile) if keeps_shape and hostile > 0 else None
            cases.append(Case(qualname, name, label, call, keeps_shape, swept))
        for label, hostile, swept, keeps_shape in _extra_values(value, grid):
            arguments = dict(bound.arguments)
            arguments[name] = hostile
            replaced = inspect.BoundArguments(signature, arguments)  # type: ignore[arg-type]
            call = Call(replaced.args, replaced.kwargs)
            cases.append(Case(qualname, name, label, call, keeps_shape, swept))
    return cases


def _is_number_list(value: Any) -> bool:
    return (isinstance(value, list | tuple) and bool(value)
            and all(isinstance(v, int | float | np.number) and not isinstance(v, bool | np.bool_)
                    for v in value))


def _huge_view(valid: np.ndarray) -> np.ndarray:
    """A read-only broadcast view of ``valid``'s first entry with ``HUGE_ENTRIES`` entries."""
    first = valid.reshape(-1)[0]
    if valid.ndim == 2 and valid.shape[0] == valid.shape[1]:  # a square matrix (a channel)
        side = math.isqrt(HUGE_ENTRIES)
        return np.broadcast_to(first, (side, side))
    trailing = valid.shape[1:]
    rows = HUGE_ENTRIES // max(1, math.prod(trailing))
    return np.broadcast_to(first, (rows, *trailing))


def _extra_values(
    valid: Any, grid: tuple[float, ...]
) -> list[tuple[str, Any, tuple[float, float] | None, bool]]:
    """Huge-view replacements (array arguments, when ``grid`` is empty) or range-sweep
    replacements over ``grid`` (real arguments) of an argument whose valid value is ``valid``:
    ``(label, value, (valid level, swept level) or None, keeps_shape)``. Levels that the hostile
    values already try (1e-300 and 1e300 for a number, 1e300 for an array's first entry) and the
    valid value itself are left out."""
    extra: list[tuple[str, Any, tuple[float, float] | None, bool]] = []
    if isinstance(valid, float | np.floating) and not isinstance(valid, bool | np.bool_):
        present = {v for _, v in FLOAT_VALUES if isinstance(v, float)}
        for level in grid:
            if level not in present and level != valid:
                extra.append((f"sweep {level:g}", level, (float(valid), level), True))
        return extra
    if isinstance(valid, np.ndarray) and valid.dtype.kind in "biuf" and valid.size:
        array = valid
    elif _is_number_list(valid):
        array = np.asarray(valid)
    else:
        return extra
    if not grid:
        extra.append((HUGE_LABEL, _huge_view(array), None, False))
    if array.dtype.kind == "f":  # the first entry of a real-valued array through the grid
        first = float(array.reshape(-1)[0])
        for level in grid:
            if level in (first, 1e300):
                continue
            swept = array.copy()
            swept.reshape(-1)[0] = level
            if isinstance(valid, list | tuple):  # keep the argument's own container
                swept = type(valid)(swept.tolist())
            extra.append((f"entry 0 sweep {level:g}", swept, (first, level), True))
    return extra


# ---------------------------------------------------------------------------------------------
# Judging an outcome


def _numbers(value: Any, depth: int = 0) -> Iterator[np.ndarray]:
    """Every numeric array inside a result (tuples, dicts, dataclasses, pandas objects)."""
    if depth > 4:
        return
    if isinstance(value, bool | np.bool_ | str | bytes) or value is None:
        return
    if isinstance(value, int | float | complex | np.number):
        yield np.asarray(value, dtype=float)
    elif isinstance(value, np.ndarray):
        if value.dtype.kind in "iufc":
            yield value.astype(float, copy=False)
        elif value.dtype == object:
            for item in value.reshape(-1)[:1000]:
                yield from _numbers(item, depth + 1)
    elif hasattr(value, "to_numpy") and hasattr(value, "dtypes"):  # pandas
        frame = value.to_frame() if hasattr(value, "to_frame") else value
        for column in frame.columns:
            data = frame[column].to_numpy()
            if data.dtype.kind in "iuf":
                yield data.astype(float)
    elif isinstance(value, dict):
        for item in value.values():
            yield from _numbers(item, depth + 1)
    elif isinstance(value, list | tuple):
        for item in value[:1000]:
            yield from _numbers(item, depth + 1)
    elif dataclasses.is_dataclass(value):
        for field in dataclasses.fields(value):
            yield from _numbers(getattr(value, field.name), depth + 1)


def _shape(value: Any) -> Any:
    if isinstance(value, np.ndarray):
        return ("array", value.shape)
    if isinstance(value, tuple) and not hasattr(value, "_fields"):
        return ("tuple", tuple(_shape(item) for item in value))
    if isinstance(value, int | float | np.number):
        return ("scalar",)
    return (type(value).__name__,)


def _raised_by_us(error: BaseException) -> bool:
    """True when the error comes from an explicit ``raise`` statement inside shuffle_lib: the
    innermost frame is library code and its current instruction is a ``raise`` (read from the
    bytecode, so it does not depend on the source file on disk)."""
    tb = error.__traceback__
    if tb is None:
        return False
    while tb.tb_next is not None:
        tb = tb.tb_next
    code = tb.tb_frame.f_code
    if not Path(code.co_filename).resolve().is_relative_to(LIBRARY_DIR):
        return False
    opnames = {instruction.offset: instruction.opname for instruction in dis.get_instructions(code)}
    return opnames.get(tb.tb_lasti) == "RAISE_VARARGS"


@dataclasses.dataclass
class Outcome:
    """What a call did, reduced to what the judge needs (it crosses a process boundary)."""

    kind: str  # "returned", "raised", "timeout", "crashed"
    detail: str = ""
    clean_error: bool = False
    names_argument: bool = False
    has_nan: bool = False
    has_inf: bool = False
    shape: Any = None
    seconds: float = 0.0
    values: np.ndarray | None = None  # a scalar or small array result, flattened to floats


def _fresh_arguments(call: Call) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """A deep copy of the call's arguments that shares read-only arrays (a broadcast view of
    1e10 entries would be materialized by ``deepcopy``; being read-only, the call cannot alter
    it)."""
    memo: dict[int, Any] = {}
    for value in (*call.args, *call.kwargs.values()):
        if isinstance(value, np.ndarray) and not value.flags.writeable:
            memo[id(value)] = value
    return copy.deepcopy(call.args, memo), copy.deepcopy(call.kwargs, memo)


def run_call(obj: Callable[..., Any], call: Call, argument: str) -> Outcome:
    """Run one call and summarize its outcome."""
    args, kwargs = _fresh_arguments(call)
    start = time.perf_counter()
    try:
        result = obj(*args, **kwargs)
    except (ValueError, TypeError) as error:
        message = str(error)
        return Outcome(
            "raised",
            f"{type(error).__name__}: {message[:300]}",
            clean_error=_raised_by_us(error),
            names_argument=argument in message,
            seconds=time.perf_counter() - start,
        )
    except BaseException as error:
        return Outcome(
            "raised",
            f"{type(error).__name__}: {str(error)[:300]}",
            seconds=time.perf_counter() - start,
        )
    seconds = time.perf_counter() - start
    has_nan = has_inf = False
    try:
        for array in _numbers(result):
            has_nan |= bool(np.isnan(array).any())
            has_inf |= bool(np.isinf(array).any())
    except MemoryError:  # a result too large to scan (e.g. from a huge input accepted)
        return Outcome("returned", "a result too large to inspect", shape=_shape(result),
                       seconds=seconds)
    values = None
    scalar = isinstance(result, int | float | np.number) and not isinstance(result, bool | np.bool_)
    small = isinstance(result, np.ndarray) and result.dtype.kind in "iuf" and result.size <= 10**4
    if scalar or small:
        values = np.asarray(result, dtype=float).reshape(-1)
    return Outcome("returned", "", has_nan=has_nan, has_inf=has_inf, shape=_shape(result),
                   seconds=seconds, values=values)


# ---------------------------------------------------------------------------------------------
# A forked worker with a time limit per call


class Worker:
    """A forked process that runs calls by index; killed and replaced when a call overruns."""

    def __init__(self, api: dict[str, Callable[..., Any]], cases: list[Case]) -> None:
        self._api = api
        self._cases = cases
        self._context = multiprocessing.get_context("fork")
        self._start()

    def _start(self) -> None:
        self._parent, child = self._context.Pipe()
        self._process = self._context.Process(target=self._serve, args=(child,), daemon=True)
        self._process.start()

    def _serve(self, connection: multiprocessing.connection.Connection) -> None:
        resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT_BYTES, MEMORY_LIMIT_BYTES))
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.dup2(devnull, 2)
        while True:
            index = connection.recv()
            if index is None:
                return
            case = self._cases[index]
            connection.send(run_call(self._api[case.qualname], case.call, case.argument))

    def run(self, index: int, timeout: float) -> Outcome:
        self._parent.send(index)
        if self._parent.poll(timeout):
            try:
                return self._parent.recv()
            except EOFError:
                pass
        else:
            self.close()
            self._start()
            return Outcome("timeout", f"no answer within {timeout:.0f} s")
        self.close()
        self._start()
        return Outcome("crashed", "the worker process died")

    def close(self) -> None:
        if self._process.is_alive():
            self._process.kill()
        self._process.join()


# ---------------------------------------------------------------------------------------------
# The verdict

# Hostile values of the wrong type: the call must refuse them (a number given as a string, a
# bool where a number is expected, a non-integer where an integer is expected, None where the
# signature does not allow it, an object of the wrong kind).
MUST_REFUSE = {"string", "strings", "None", "bool", "float 2.5", "non-integer entries", "float",
               "int 2", HUGE_LABEL}

# Argument names of an accountant that are privacy levels (its epsilon grows with them) and of
# the target delta (its epsilon shrinks as delta grows).
LEVEL_PREFIXES = ("eps", "target_eps", "mu", "rho")
DELTA_NAMES = {"delta"}


def is_epsilon_accountant(qualname: str, obj: Callable[..., Any]) -> bool:
    """An accountant whose result is a privacy guarantee, so it must never return 0 where the
    truth is positive: a function of ``shuffle_lib.accounting`` named ``*_epsilon`` whose
    docstring calls it an upper bound or certified, or that does not call itself a floor, a lower
    bound or an approximation (published bounds such as ``erlingsson19_epsilon`` or exact values
    such as ``optimal_composition_epsilon``). Floors (``shuffled_rr_exact_epsilon``) may be 0."""
    if not (qualname.startswith("shuffle_lib.accounting.") and qualname.endswith("_epsilon")):
        return False
    doc = " ".join((obj.__doc__ or "").split()).lower()
    if "upper bound" in doc or "certified" in doc:
        return True
    return not any(word in doc for word in ("floor", "lower bound", "approximation"))


def vanishes(case: Case, outcome: Outcome, valid: Outcome) -> bool:
    """True when an accountant returned 0 where the valid call's epsilon is positive although
    the swept argument moved towards less privacy (a larger level or a smaller delta)."""
    if case.swept is None or outcome.values is None or valid.values is None:
        return False
    before, after = case.swept
    name = case.argument
    raised_level = after > before and name.startswith(LEVEL_PREFIXES)
    lowered_delta = after < before and name in DELTA_NAMES
    weaker = raised_level or lowered_delta
    if not weaker or outcome.values.shape != valid.values.shape:
        return False
    return bool(((valid.values > 0) & (outcome.values == 0)).any())


def verdict(
    case: Case, outcome: Outcome, valid: Outcome, may_return_infinity: bool,
    accountant: bool = False, shape_follows_value: bool = False,
) -> str | None:
    """``None`` when the outcome is acceptable, otherwise the reason it is not
    (``shape_follows_value``: the result's shape may depend on a real argument's value)."""
    if outcome.kind in ("timeout", "crashed"):
        return outcome.detail
    if outcome.kind == "raised":
        if not outcome.clean_error:
            return f"error not raised by our validation: {outcome.detail}"
        if not outcome.names_argument:
            return f"the message does not name {case.argument!r}: {outcome.detail}"
        return None
    if case.label == HUGE_LABEL:
        return f"accepted a broadcast view of {HUGE_ENTRIES:.0e} entries"
    if case.label in MUST_REFUSE:
        return "accepted a value of the wrong type"
    if outcome.has_nan:
        return "returned NaN"
    if outcome.has_inf and not may_return_infinity:
        return "returned an infinity"
    if case.keeps_shape and not shape_follows_value and outcome.shape != valid.shape:
        return f"returned shape {outcome.shape}, the valid call returns {valid.shape}"
    if accountant and vanishes(case, outcome, valid):
        return (f"returned epsilon 0 at {case.argument} = {case.swept[1]:g} (less private than "
                f"the example's {case.swept[0]:g}, where it is positive)")
    return None


def run_all(
    api: dict[str, Callable[..., Any]], cases: list[Case], timeout: float, workers: int = 2
) -> list[Outcome]:
    """Run every case in ``workers`` forked processes (one thread feeding each); same order."""
    import queue
    import threading

    todo: queue.Queue[int] = queue.Queue()
    for index in range(len(cases)):
        todo.put(index)
    outcomes: list[Outcome | None] = [None] * len(cases)

    def feed() -> None:
        worker = Worker(api, cases)
        try:
            while True:
                try:
                    index = todo.get_nowait()
                except queue.Empty:
                    return
                outcomes[index] = worker.run(index, timeout)
        finally:
            worker.close()

    threads = [threading.Thread(target=feed) for _ in range(workers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return [outcome for outcome in outcomes if outcome is not None]


def sweep_grid(valid_seconds: float) -> tuple[float, ...]:
    """The sweep grid of a function whose valid call took ``valid_seconds``: the whole
    ``SWEEP_GRID`` for a cheap function, fewer magnitudes for an expensive one, so that the sweeps
    cost about as much as the rest of the suite. Every tier keeps the edges of double precision
    (709.8, 710, 746: exp overflows, exp(-x) underflows) and the tiny and large magnitudes; the
    hostile values add 1e-300 and 1e300 to every tier. Which tier a function falls in depends on
    the machine's speed, so a borderline function is swept over a few more or fewer magnitudes
    from run to run; the verdicts do not change."""
    if valid_seconds < SWEEP_CHEAP_SECONDS:
        return SWEEP_GRID
    if valid_seconds < SWEEP_COSTLY_SECONDS:
        return SWEEP_GRID_MEDIUM
    return SWEEP_GRID_COSTLY


def sweep_cases(
    api: dict[str, Callable[..., Any]], calls: dict[str, Call], cases: list[Case],
    outcomes: list[Outcome],
) -> list[Case]:
    """The range sweeps of every object whose valid call returned (see ``sweep_grid``)."""
    swept: list[Case] = []
    for case, outcome in zip(cases, outcomes, strict=True):
        if case.label == "valid" and outcome.kind == "returned":
            grid = sweep_grid(outcome.seconds)
            swept.extend(hostile_cases(case.qualname, api[case.qualname], calls[case.qualname],
                                       grid))
    return swept


def run_suite(
    api: dict[str, Callable[..., Any]], timeout: float
) -> tuple[dict[str, Call], list[Case], list[Outcome]]:
    """Build and run every case: first the valid calls, hostile values and huge views, then the
    range sweeps, whose grid depends on how long each valid call took."""
    calls, cases = build_cases(api)
    outcomes = run_all(api, cases, timeout)
    sweeps = sweep_cases(api, calls, cases, outcomes)
    return calls, cases + sweeps, outcomes + run_all(api, sweeps, timeout)


def build_cases(api: dict[str, Callable[..., Any]]) -> tuple[dict[str, Call], list[Case]]:
    """The valid example call of each object that has one, and its cases (valid call first)
    without the range sweeps (``sweep_cases`` adds them once the valid calls have run)."""
    import contextlib
    import io

    calls: dict[str, Call] = {}
    with contextlib.redirect_stdout(io.StringIO()):
        for qualname, obj in api.items():
            call = example_call(qualname, obj)
            if call is not None:
                calls[qualname] = call
    cases: list[Case] = []
    for qualname, call in calls.items():
        cases.append(Case(qualname, "<valid>", "valid", call))
        cases.extend(hostile_cases(qualname, api[qualname], call))
    return calls, cases


def case_family(case: Case) -> str:
    """Which family a case belongs to: valid, hostile value, sweep, entry sweep or huge view."""
    if case.label == "valid":
        return "valid"
    if case.label == HUGE_LABEL:
        return "huge view"
    if case.label.startswith("entry 0 sweep"):
        return "entry sweep"
    return "sweep" if case.label.startswith("sweep") else "hostile value"


def judge(
    cases: list[Case], outcomes: list[Outcome], may_return_infinity: set[str],
    accountants: set[str] | None = None, shape_follows_value: set[str] | None = None,
) -> dict[str, list[str]]:
    """Failures per object: ``"argument=label: reason"`` strings. ``accountants`` are the
    epsilon accountants (``is_epsilon_accountant``), checked for a vanishing epsilon;
    ``shape_follows_value`` the objects whose result shape may depend on a real argument."""
    accountants = accountants or set()
    shape_follows_value = shape_follows_value or set()
    valid = {c.qualname: o for c, o in zip(cases, outcomes, strict=True) if c.label == "valid"}
    failures: dict[str, list[str]] = {}
    for case, outcome in zip(cases, outcomes, strict=True):
        if case.label == "valid":
            failed = outcome.kind != "returned"
            reason = f"the example call failed: {outcome.detail}" if failed else None
        else:
            reason = verdict(case, outcome, valid[case.qualname],
                             case.qualname in may_return_infinity, case.qualname in accountants,
                             case.qualname in shape_follows_value)
        if reason:
            failures.setdefault(case.qualname, []).append(f"{case.argument}={case.label}: {reason}")
    return failures


if __name__ == "__main__":  # python tests/hostile_api.py [--full-grid] [substring]: failures
    import sys

    from test_hostile_inputs import MAY_RETURN_INFINITY, SHAPE_FOLLOWS_VALUE, TIME_LIMIT_SECONDS

    if "--full-grid" in sys.argv:  # every function over the whole SWEEP_GRID, however slow
        sys.argv.remove("--full-grid")
        SWEEP_CHEAP_SECONDS = math.inf
    selected = {q: o for q, o in public_api().items() if (sys.argv[1:] or [""])[0] in q}
    started = time.perf_counter()
    _, all_cases, results = run_suite(selected, TIME_LIMIT_SECONDS)
    found = judge(all_cases, results, set(MAY_RETURN_INFINITY),
                  {q for q, o in selected.items() if is_epsilon_accountant(q, o)},
                  set(SHAPE_FOLLOWS_VALUE))
    for qualname, reasons in found.items():
        print(qualname)
        for reason in reasons:
            print("    " + reason[:200])
    slowest = sorted(zip((o.seconds for o in results), (c.name for c in all_cases),
                         strict=True))[-5:]
    print(f"{len(all_cases)} calls on {len(selected)} objects in "
          f"{time.perf_counter() - started:.0f} s; {sum(map(len, found.values()))} failing")
    print("slowest:", ", ".join(f"{name} {seconds:.2f} s" for seconds, name in slowest))
    spent: dict[str, float] = {}
    for case, outcome in zip(all_cases, results, strict=True):
        family = case_family(case)
        module = selected[case.qualname].__module__
        for key in (family, f"{family} in {module}"):
            spent[key] = spent.get(key, 0.0) + outcome.seconds
    print("seconds in calls:", ", ".join(f"{key} {seconds:.1f}" for key, seconds in
                                          sorted(spent.items(), key=lambda kv: -kv[1])[:14]))
