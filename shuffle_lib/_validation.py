"""Input checks shared by the library: each raises ``ValueError`` naming the bad value."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

RngLike = np.random.Generator | int | None

ARRAY_MAX = 2 * 10**8
"""Most entries an array argument of any public function may have (``ValueError`` beyond).

It sits above every per-function limit the library documents on the entries of an array (the
largest are the ``10**8`` entries of ``learning.MAX_PATH_ENTRIES``; most others, among them
``attacks.MAX_TABLE_ENTRIES``, are ``10**7``) and far below what a copy would cost in
memory (1.6 GB of float64 at the ceiling). It is checked on the array as given, before any
copy, cast or scan, so an input that costs no memory itself (a broadcast view of length
``10**12``) is refused at once instead of exhausting memory in the first ``astype``."""


def as_rng(rng: RngLike) -> np.random.Generator:
    """Normalize ``rng`` (Generator, int seed >= 0 or None) to a ``numpy.random.Generator``."""
    if rng is None or isinstance(rng, np.random.Generator):
        return np.random.default_rng(rng)
    if isinstance(rng, bool) or not isinstance(rng, int | np.integer):
        raise TypeError(f"rng must be a numpy Generator, an int seed or None, got {rng!r}")
    if rng < 0:
        raise ValueError(f"rng must be a non-negative int seed, got {rng!r}")
    return np.random.default_rng(int(rng))


def check_size(arr: np.ndarray, name: str) -> None:
    """Raise ``ValueError`` when ``arr`` has more than :data:`ARRAY_MAX` entries (``arr.size``
    reads the shape only: no copy and no pass over the data)."""
    if arr.size > ARRAY_MAX:
        raise ValueError(f"{name} has {arr.size} entries (shape {arr.shape}), more than the "
                         f"limit ARRAY_MAX = {ARRAY_MAX} entries of an array argument")


def _numeric_array(value: object, name: str) -> np.ndarray:
    """``value`` as a numpy array of numbers; ``TypeError`` for strings, bools, None, objects.
    Its size is checked against :data:`ARRAY_MAX` before any copy or pass over the entries.

    Python integers too large for int64 become floats (their exact size no longer matters once
    they exceed every documented range, and the range checks that follow refuse them).
    """
    if value is None or isinstance(value, str | bytes | bool | np.bool_):
        raise TypeError(f"{name} must be a number or an array of numbers, got {value!r}")
    if isinstance(value, list | tuple) and any(isinstance(v, bool | np.bool_) for v in value):
        raise TypeError(f"{name} must be numbers, not bools, got {value!r:.80}")  # [0, True]
    if isinstance(value, list | tuple) and any(isinstance(v, np.ndarray) for v in value):
        # np.asarray would copy arrays nested in a list: count their entries first
        entries = sum(v.size if isinstance(v, np.ndarray) else 1 for v in value)
        if entries > ARRAY_MAX:
            raise ValueError(f"{name} has {entries} entries, more than the limit ARRAY_MAX = "
                             f"{ARRAY_MAX} entries of an array argument")
    try:
        arr = np.asarray(value)
    except ValueError as err:  # ragged nesting
        raise ValueError(f"{name} must be a rectangular array, got {value!r:.80}") from err
    except TypeError as err:
        raise TypeError(f"{name} must be a number or an array of numbers, got {value!r}") from err
    check_size(arr, name)
    if arr.dtype == object:
        flat = arr.reshape(-1)
        if not all(isinstance(v, int | float | np.number) and not isinstance(v, bool | np.bool_)
                   for v in flat):
            raise TypeError(f"{name} must be a number or an array of numbers, got {value!r}")
        try:
            arr = np.array([float(v) for v in flat], dtype=float).reshape(arr.shape)
        except OverflowError:
            arr = np.array([np.inf if v > 0 else -np.inf for v in flat]).reshape(arr.shape)
    if arr.dtype.kind not in "iuf":
        raise TypeError(f"{name} must be a number or an array of numbers, got {value!r}")
    return arr


def _as_float_array(value: ArrayLike, name: str) -> np.ndarray:
    arr = _numeric_array(value, name).astype(float)
    if arr.size == 0:
        raise ValueError(f"{name} must not be empty")
    if np.isnan(arr).any():
        raise ValueError(f"{name} must not contain NaN, got {value!r}")
    return arr


def check_epsilon(eps: ArrayLike, name: str = "eps", *, positive: bool = False) -> np.ndarray:
    """Return ``eps`` as a float array after checking it is finite and >= 0 (> 0 if asked)."""
    arr = _as_float_array(eps, name)
    if not np.isfinite(arr).all():
        raise ValueError(f"{name} must be finite, got {eps!r}")
    if positive and (arr <= 0).any():
        raise ValueError(f"{name} must be > 0, got {eps!r}")
    if (arr < 0).any():
        raise ValueError(f"{name} must be >= 0, got {eps!r}")
    return arr


def check_delta(delta: ArrayLike, name: str = "delta", *, allow_zero: bool = True) -> np.ndarray:
    """Return ``delta`` as a float array after checking it lies in [0, 1) (or (0, 1))."""
    arr = _as_float_array(delta, name)
    low_ok = (arr >= 0) if allow_zero else (arr > 0)
    if not (low_ok & (arr < 1)).all():
        interval = "[0, 1)" if allow_zero else "(0, 1)"
        raise ValueError(f"{name} must lie in {interval}, got {delta!r}")
    return arr


def check_positive(value: ArrayLike, name: str) -> np.ndarray:
    """Return ``value`` as a float array after checking it is finite and > 0."""
    arr = _as_float_array(value, name)
    if not (np.isfinite(arr).all() and (arr > 0).all()):
        raise ValueError(f"{name} must be finite and > 0, got {value!r}")
    return arr


def check_probability(p: ArrayLike, name: str = "p") -> np.ndarray:
    """Return ``p`` as a float array after checking every entry lies in [0, 1]."""
    arr = _as_float_array(p, name)
    if not ((arr >= 0) & (arr <= 1)).all():
        raise ValueError(f"{name} must lie in [0, 1], got {p!r}")
    return arr


def check_integer(
    value: object, name: str, minimum: int, maximum: int | None = None
) -> int:
    """Return ``value`` as an ``int`` after checking it is an integer (no bool) >= ``minimum``
    and, when ``maximum`` is given, <= ``maximum`` (a documented limit, or a bound that the
    caller's other arguments set)."""
    if isinstance(value, bool) or not isinstance(value, int | np.integer):
        raise TypeError(f"{name} must be an integer, got {value!r}")
    if value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    if maximum is not None and value > maximum:
        raise ValueError(f"{name} must be at most {maximum}, got {value!r}")
    return int(value)


def check_categories(values: ArrayLike, k: int, name: str = "values") -> np.ndarray:
    """Return ``values`` as an int array after checking entries are integers in {0, ..., k-1}."""
    check_integer(k, "k", 2)
    is_bool_array = isinstance(values, np.ndarray) and values.dtype == bool
    if is_bool_array:
        check_size(values, name)
    arr = values.astype(np.int64) if is_bool_array else _numeric_array(values, name)
    if arr.size == 0:
        raise ValueError(f"{name} must not be empty")
    if not np.issubdtype(arr.dtype, np.integer):
        as_float = np.asarray(arr, dtype=float)
        if not (np.isfinite(as_float).all() and np.array_equal(as_float, np.round(as_float))):
            raise ValueError(f"{name} must be integers, got {values!r}")
        arr = as_float.astype(np.int64)
    if ((arr < 0) | (arr >= k)).any():
        raise ValueError(f"{name} must lie in {{0, ..., {k - 1}}}, got {values!r}")
    return arr.astype(np.int64)


def broadcast_per_user(param: np.ndarray, shape: tuple[int, ...], name: str) -> np.ndarray:
    """Broadcast a scalar or per-user parameter to ``shape`` or raise a ``ValueError``."""
    try:
        return np.broadcast_to(param, shape)
    except ValueError as err:
        raise ValueError(
            f"{name} must be a scalar or have one value per user (shape {shape}), "
            f"got shape {param.shape}"
        ) from err


def check_real(
    value: object,
    name: str,
    *,
    low: float = -np.inf,
    high: float = np.inf,
    low_open: bool = False,
    high_open: bool = False,
    allow_inf: bool = False,
) -> float:
    """Return ``value`` as a Python float after checking it is a real number (not a bool, string
    or None), not NaN, finite (unless ``allow_inf``) and inside the interval from ``low`` to
    ``high`` (closed unless the ``*_open`` flags say so)."""
    if value is None or isinstance(value, str | bytes | bool | np.bool_):
        raise TypeError(f"{name} must be a real number, got {value!r}")
    if not isinstance(value, int | float | np.integer | np.floating):
        if isinstance(value, np.ndarray) and value.ndim == 0 and value.dtype.kind in "iuf":
            value = value.item()
        else:
            raise TypeError(f"{name} must be a real number, got {value!r}")
    try:
        number = float(value)
    except OverflowError:
        number = np.inf if value > 0 else -np.inf
    if np.isnan(number):
        raise ValueError(f"{name} must not be NaN")
    too_low = number <= low if low_open else number < low
    too_high = number >= high if high_open else number > high
    if np.isinf(number) and not allow_inf:
        raise ValueError(f"{name} must be finite, got {value!r}")
    if too_low or too_high:
        left, right = "(" if low_open else "[", ")" if high_open else "]"
        raise ValueError(f"{name} must lie in {left}{low}, {high}{right}, got {value!r}")
    return number


def check_array(
    value: object,
    name: str,
    *,
    ndim: int | None = None,
    integer: bool = False,
    finite: bool = True,
    low: float | None = None,
    high: float | None = None,
    allow_empty: bool = False,
    allow_nan: bool = False,
    whole_floats: bool = True,
) -> np.ndarray:
    """Return ``value`` as a float array (an int64 array when ``integer``) after checking its
    type (numbers only), its number of axes, emptiness, NaN (kept only with ``allow_nan``, e.g.
    gaps in a plotted curve), finiteness and the closed range [``low``, ``high``]. ``integer``
    also requires whole-number entries; with ``whole_floats=False`` it refuses floats altogether
    (an index is never rounded, even from 1.0)."""
    arr = _numeric_array(value, name)
    if ndim is not None and arr.ndim != ndim:
        raise ValueError(f"{name} must have {ndim} axis(es), got shape {arr.shape}")
    if arr.size == 0 and not allow_empty:
        raise ValueError(f"{name} must not be empty")
    as_float = arr.astype(float)
    if np.isnan(as_float).any() and not (allow_nan and not integer):
        raise ValueError(f"{name} must not contain NaN")
    if (finite or integer) and not np.isfinite(as_float).all():
        raise ValueError(f"{name} must be finite")
    if low is not None and (as_float < low).any():  # NaN compares False: kept when allowed
        raise ValueError(f"{name} must be >= {low}, got minimum {as_float.min()!r}")
    if high is not None and (as_float > high).any():
        raise ValueError(f"{name} must be <= {high}, got maximum {as_float.max()!r}")
    if integer:
        if np.abs(as_float).max(initial=0) >= 2**63:
            raise ValueError(f"{name} has entries too large for int64")
        if arr.dtype.kind == "f" and not whole_floats and arr.size:
            raise ValueError(f"{name} must hold integers, not floats, got {value!r:.80}")
        if arr.dtype.kind == "f" and not np.array_equal(as_float, np.round(as_float)):
            raise ValueError(f"{name} must contain whole numbers")
        return arr.astype(np.int64)
    return as_float


def check_instance(value: object, name: str, kind: type | tuple[type, ...]) -> None:
    """Raise ``TypeError`` unless ``value`` is an instance of ``kind``."""
    if not isinstance(value, kind):
        kinds = kind if isinstance(kind, tuple) else (kind,)
        expected = " or ".join(k.__name__ for k in kinds)
        raise TypeError(f"{name} must be a {expected}, got {type(value).__name__} {value!r:.80}")


def check_bool(value: object, name: str) -> bool:
    """Return ``value`` after checking it is a bool (a string like "no" is not)."""
    if not isinstance(value, bool | np.bool_):
        raise TypeError(f"{name} must be True or False, got {value!r}")
    return bool(value)


def check_points(value: object, name: str, max_abs: float, min_rows: int = 1) -> np.ndarray:
    """Return positions as an ``(n, d)`` float array (a 1-D array is one coordinate per row)
    after checking ``n >= min_rows``, finite numbers and ``|coordinate| <= max_abs`` (the
    caller's documented limit, so that squared distances stay finite)."""
    arr = check_array(value, name, low=-max_abs, high=max_abs)
    arr = arr[:, None] if arr.ndim == 1 else arr
    if arr.ndim != 2 or arr.shape[0] < min_rows:
        raise ValueError(f"{name} must be an (n, d) array with n >= {min_rows}, got shape "
                         f"{arr.shape}")
    return arr
