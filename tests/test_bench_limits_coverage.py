"""``benchmarks/bench_limits.py`` has a row for every documented size limit (issue 32, item 3).

No timing here (times belong to ``make bench``): these tests only check that the table of
at-limit calls is complete, so that a new limit gets its row. A size limit is a module constant
named ``*_MAX`` or ``MAX_*``; one that bounds a value rather than a size is listed, with its
reason, in ``bench_limits.NOT_SIZE_LIMITS``. A public function needs a row naming a limit when

- its docstring names the constant (``:data:`N_MAX```, ````MAX_CELLS````, or plain text), or
- its own code, or a private helper of its module that it calls, reads the constant, unless the
  size cannot be reached through that function (``bench_limits.UNREACHED``, with the reason).
"""

from __future__ import annotations

import ast
import functools
import importlib
import inspect
import re
import sys
import textwrap
from pathlib import Path
from types import ModuleType
from typing import Any

import hostile_api

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"
LIMIT_NAME = re.compile(r"^(?:[A-Z][A-Z0-9_]*_MAX|MAX_[A-Z0-9_]+)$")
WORD = re.compile(r"\b[A-Z][A-Z0-9_]*[A-Z0-9]\b")


@functools.cache
def bench_limits() -> ModuleType:
    sys.path.insert(0, str(BENCHMARKS))
    try:
        return importlib.import_module("bench_limits")
    finally:
        sys.path.remove(str(BENCHMARKS))


def limit_constants(module: ModuleType) -> set[str]:
    """Names of the size-limit-like constants visible in ``module`` (numbers named like limits)."""
    return {name for name, value in vars(module).items()
            if LIMIT_NAME.match(name) and isinstance(value, int | float)
            and not isinstance(value, bool)}


def covered() -> set[tuple[str, str]]:
    """(function, constant) pairs that have a row."""
    return {(limit.qualname, constant) for limit in bench_limits().LIMITS
            for constant in limit.constants}


@functools.cache
def _module_functions(module_name: str) -> dict[str, set[str]]:
    """Top-level functions of a module and the names each one's body reads."""
    tree = ast.parse(inspect.getsource(importlib.import_module(module_name)))
    return {node.name: _names(node) for node in tree.body
            if isinstance(node, ast.FunctionDef | ast.ClassDef)}


def _names(node: ast.AST) -> set[str]:
    return ({n.id for n in ast.walk(node) if isinstance(n, ast.Name)}
            | {n.attr for n in ast.walk(node) if isinstance(n, ast.Attribute)})


def names_read(obj: Any) -> set[str]:
    """Names read by ``obj``'s own code and by the private helpers of its module it calls."""
    try:
        source = textwrap.dedent(inspect.getsource(obj))
    except (OSError, TypeError):
        return set()
    functions = _module_functions(obj.__module__)
    seen: set[str] = set()
    todo = _names(ast.parse(source))
    read = set(todo)
    while todo:
        name = todo.pop()
        if name.startswith("_") and name in functions and name not in seen:
            seen.add(name)
            new = functions[name] - read
            read |= new
            todo |= new
    return read


def required_pairs() -> dict[tuple[str, str], str]:
    """(function, constant) pairs that need a row, with where the need comes from."""
    needs: dict[tuple[str, str], str] = {}
    exempt = set(bench_limits().NOT_SIZE_LIMITS)
    unreached = set(bench_limits().UNREACHED)
    for qualname, obj in hostile_api.public_api().items():
        module = importlib.import_module(obj.__module__)
        limits = limit_constants(module) - exempt
        for name in set(WORD.findall(inspect.getdoc(obj) or "")) & limits:
            needs[(qualname, name)] = "its docstring names it"
        for name in names_read(obj) & limits:
            if (qualname, name) not in unreached:
                needs.setdefault((qualname, name), "its code reads it")
    return needs


def test_every_documented_or_enforced_limit_has_a_row() -> None:
    have = covered()
    missing = [f"{function}: {constant} ({why})"
               for (function, constant), why in sorted(required_pairs().items())
               if (function, constant) not in have]
    assert not missing, ("size limits without a row in benchmarks/bench_limits.py (add a Limit, "
                         "or classify the constant in NOT_SIZE_LIMITS / the pair in UNREACHED):\n"
                         + "\n".join(missing))


def test_every_limit_constant_is_timed_or_classified() -> None:
    """A limit constant defined in a public module is reached by some row of a function of that
    module, or is listed as not a size limit."""
    rows = {(limit.function.__module__, constant) for limit in bench_limits().LIMITS
            for constant in limit.constants}
    exempt = set(bench_limits().NOT_SIZE_LIMITS)
    unclassified = []
    for module in hostile_api.public_modules():
        tree = ast.parse(inspect.getsource(module))
        defined = {target.id for node in tree.body if isinstance(node, ast.Assign | ast.AnnAssign)
                   for target in (node.targets if isinstance(node, ast.Assign) else [node.target])
                   if isinstance(target, ast.Name)}
        for name in sorted(limit_constants(module) & defined - exempt):
            if (module.__name__, name) not in rows:
                unclassified.append(f"{module.__name__}.{name}")
    assert not unclassified, f"limit constants with no row and no classification: {unclassified}"


def test_rows_name_public_functions_and_real_constants() -> None:
    api = hostile_api.public_api()
    problems = []
    for limit in bench_limits().LIMITS:
        if limit.qualname not in api:
            problems.append(f"{limit.qualname} is not a public function")
        module = importlib.import_module(limit.function.__module__)
        for constant in limit.constants:
            if constant not in limit_constants(module):
                problems.append(f"{limit.qualname}: no limit constant {constant} in its module")
        if not limit.budget > 0:
            problems.append(f"{limit.qualname}: budget {limit.budget}")
    for pair in bench_limits().UNREACHED:
        if pair[0] not in api:
            problems.append(f"UNREACHED names {pair[0]}, not a public function")
    assert not problems, "\n".join(problems)


def test_the_runner_gets_one_budgeted_row_per_limit() -> None:
    rows = bench_limits().BENCHMARKS
    assert len(rows) == len(bench_limits().LIMITS)
    assert all(row.baseline is None and row.budget is not None for row in rows)
    assert len({row.name for row in rows}) == len(rows), "row names must be distinct"
