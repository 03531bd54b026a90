"""Small numerical helpers shared by the accountants: result shapes, bisection, safe rounding."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np


def scalar_or_array(arr: np.ndarray) -> np.ndarray | float:
    """A 0-d result as a Python float, anything else unchanged."""
    return float(arr) if np.ndim(arr) == 0 else arr


def bisect(holds: Callable[[float], bool], low: float, high: float,
           rel_tol: float) -> tuple[float, float]:
    """Shrink ``[low, high]`` around the switch of a monotone predicate that is false at ``low``
    and true at ``high``, until ``high - low <= rel_tol * max(1, high)``.

    Returns the final ``(low, high)``: the caller keeps ``high`` to round toward the side where the
    predicate holds and ``low`` to round toward the side where it fails.

    >>> bisect(lambda x: x * x >= 2, 1.0, 2.0, 1e-12)[1] >= 2 ** 0.5
    True
    """
    while high - low > rel_tol * max(1.0, high):
        mid = (low + high) / 2
        low, high = (low, mid) if holds(mid) else (mid, high)
    return low, high


def nudge(x: float, unsafe: Callable[[float], bool], step: float, direction: float) -> float:
    """Move ``x`` in ``direction`` (+1 or -1) by ``step``, ``2 step``, ``4 step``, ... until
    ``unsafe(x)`` is false: the last step of a root search, so that floating-point error in the
    root never lands on the unsafe side.

    >>> nudge(1.0, lambda x: x < 1.5, 0.1, +1) >= 1.5
    True
    """
    while unsafe(x):
        x += direction * step
        step *= 2
    return x
