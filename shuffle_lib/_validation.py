"""Input checks shared by the library: each raises ``ValueError`` naming the bad value."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

RngLike = np.random.Generator | int | None


def as_rng(rng: RngLike) -> np.random.Generator:
    """Normalize ``rng`` (Generator, int seed or None) to a ``numpy.random.Generator``."""
    if isinstance(rng, bool):
        raise ValueError(f"rng must be a numpy Generator, an int seed or None, got {rng!r}")
    return np.random.default_rng(rng)


def _as_float_array(value: ArrayLike, name: str) -> np.ndarray:
    try:
        arr = np.asarray(value, dtype=float)
    except (TypeError, ValueError) as err:
        raise ValueError(f"{name} must be numeric, got {value!r}") from err
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


def check_integer(value: object, name: str, minimum: int) -> int:
    """Return ``value`` as an ``int`` after checking it is an integer (no bool) >= ``minimum``."""
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return int(value)


def check_categories(values: ArrayLike, k: int, name: str = "values") -> np.ndarray:
    """Return ``values`` as an int array after checking entries are integers in {0, ..., k-1}."""
    check_integer(k, "k", 2)
    arr = np.asarray(values)
    if arr.size == 0:
        raise ValueError(f"{name} must not be empty")
    if arr.dtype == bool:
        arr = arr.astype(np.int64)
    if not np.issubdtype(arr.dtype, np.integer):
        as_float = np.asarray(arr, dtype=float)
        if not np.array_equal(as_float, np.round(as_float)):
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
