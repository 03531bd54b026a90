"""Small numerical helpers shared by the accountants: result shapes, bisection, safe rounding,
and the search for the smallest certified epsilon."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from scipy.optimize import brentq

#: Absolute tolerance of the epsilon searches (the answer is then rounded to the safe side).
EPS_TOL = 1e-12


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


def smallest_certified_eps(delta_of: Callable[[float], float], cap: float, delta: float,
                           monotone: bool = True) -> float:
    """Smallest eps in [0, cap] with ``delta_of(eps) <= delta``, rounded up (tolerance EPS_TOL).

    For a decreasing ``delta_of`` a root search suffices. Otherwise a grid of 200 points locates
    the first grid point that meets the target and the search runs on the cell before it: the
    answer is valid whatever the shape (each eps is checked), and minimal up to a narrow dip
    falling between grid points. Returns ``cap`` when nothing below it can be certified (callers
    pass a level that holds by other means, e.g. the local level: shuffling never hurts).

    >>> bool(smallest_certified_eps(lambda e: float(np.exp(-e)), 10.0, 0.5) >= np.log(2))
    True
    """
    if delta_of(0.0) <= delta:
        return 0.0
    low, high = 0.0, cap
    if not monotone:
        grid = np.linspace(0.0, cap, 201)[1:-1]
        ok = [g for g in grid if delta_of(g) <= delta]
        if not ok:
            return cap
        high = ok[0]
        low = float(grid[np.searchsorted(grid, high) - 1]) if high > grid[0] else 0.0
    elif delta_of(cap) > delta:
        return cap

    def excess(e: float) -> float:
        return np.log(max(delta_of(e), 1e-320)) - np.log(delta)

    root = brentq(excess, low, high, xtol=EPS_TOL, rtol=4 * np.finfo(float).eps)
    root = nudge(root, lambda e: delta_of(e) > delta and e < cap, EPS_TOL, +1)  # round up
    return float(min(root, cap))
