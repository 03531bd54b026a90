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
                           monotone: bool = True,
                           on_grid: Callable[[np.ndarray], np.ndarray] | None = None) -> float:
    """Smallest eps in [0, cap] with ``delta_of(eps) <= delta``, rounded up (tolerance EPS_TOL).

    For a decreasing ``delta_of`` a root search suffices. Otherwise a grid of 200 points locates
    the first grid point that meets the target and the search runs on the cell before it: the
    answer is valid whatever the shape (each eps is checked), and minimal up to a narrow dip
    falling between grid points. ``on_grid`` (optional) is ``delta_of`` vectorized: the grid is
    then one call. Returns ``cap`` when nothing below it can be certified (callers pass a level
    that holds by other means, e.g. the local level: shuffling never hurts).

    >>> bool(smallest_certified_eps(lambda e: float(np.exp(-e)), 10.0, 0.5) >= np.log(2))
    True
    """
    at_zero = delta_of(0.0)
    if np.isnan(at_zero):
        raise FloatingPointError("the delta curve is NaN at eps = 0")
    if at_zero <= delta:
        return 0.0
    low, high = 0.0, cap
    if not monotone:
        grid = np.linspace(0.0, cap, 201)[1:-1]
        if on_grid is not None:
            certified = grid[np.asarray(on_grid(grid)) <= delta]
            first = float(certified[0]) if certified.size else None
        else:  # stops at the first certified point
            first = next((float(g) for g in grid if delta_of(g) <= delta), None)
        if first is None:
            return cap
        high = first
        low = float(grid[np.searchsorted(grid, high) - 1]) if high > grid[0] else 0.0
    elif delta_of(cap) > delta:
        return cap

    def excess(e: float) -> float:
        return np.log(max(delta_of(e), 1e-320)) - np.log(delta)

    root = brentq(excess, low, high, xtol=EPS_TOL, rtol=4 * np.finfo(float).eps)
    root = nudge(root, lambda e: delta_of(e) > delta and e < cap, EPS_TOL, +1)  # round up
    return float(min(root, cap))


#: Relative tolerance of :func:`certified_epsilon` (the bracket it returns is this narrow).
CERTIFIED_RTOL = 1e-10


def certified_epsilon(bound: Callable[[float], tuple[float, float]], cap: float,
                      delta: float, guess: float | None = None) -> float:
    r"""Smallest :math:`\varepsilon` in :math:`[0,\mathrm{cap}]` whose certified
    :math:`\delta(\varepsilon)` is at most ``delta``, to relative tolerance
    :data:`CERTIFIED_RTOL`, rounded up.

    ``bound(eps)`` returns an upper bound on a non-increasing :math:`\delta(\varepsilon)` (one
    that already includes its own rounding error) and the derivative of :math:`\delta`;
    ``cap`` is known to be certified by other means. The search keeps a bracket
    ``[low, high]`` with ``bound(low) > delta >= bound(high)``, steps by Newton's method on
    :math:`\ln\delta(\varepsilon)` (falling back to bisection outside the bracket), and returns
    ``high``: every returned value has been evaluated and certified, whatever the shape of the
    curve, and when Newton converges from one side a probe just past the root closes the bracket.
    ``guess`` (optional) is the first point tried; a good one saves most of the evaluations.
    While the bracket spans more than a factor of 4 above 1, the fallback step is its geometric
    midpoint, so any ``cap`` up to the float limit (1e308) is resolved within the 200 steps.
    A NaN bound is a ``FloatingPointError`` (a defect of ``bound``, never read as certified).

    >>> def bound(e):
    ...     return float(np.exp(-e * e)), float(-2 * e * np.exp(-e * e))
    >>> root = certified_epsilon(bound, 10.0, 1e-6)
    >>> bool(np.sqrt(np.log(1e6)) <= root <= np.sqrt(np.log(1e6)) * (1 + 1e-9))
    True
    """
    def checked(eps: float) -> tuple[float, float]:
        upper, slope = bound(eps)
        if np.isnan(upper):
            raise FloatingPointError(f"the delta bound is NaN at eps = {eps!r}")
        return upper, slope

    def middle(low: float, high: float) -> float:
        # geometric while the bracket spans orders of magnitude (caps up to 1e308 in ~10 steps)
        floor = max(low, 1.0)
        if high > 4 * floor:
            return float(np.sqrt(floor) * np.sqrt(high))
        return low + (high - low) / 2  # no overflow near the float limit

    upper, _ = checked(0.0)
    if upper <= delta:
        return 0.0
    low, high = 0.0, cap
    guess = middle(low, high) if guess is None or not 0 < guess < cap else guess
    for _ in range(200):
        upper, slope = checked(guess)
        certified = upper <= delta
        if certified:
            high = guess
        else:
            low = guess
        if high - low <= CERTIFIED_RTOL * high:
            break
        if not (upper > 0 and slope < 0):
            guess = middle(low, high)
            continue
        with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
            newton = guess - (np.log(upper) - np.log(delta)) * upper / slope
        if abs(newton - guess) <= CERTIFIED_RTOL * guess:
            if certified:
                break  # Newton puts the root within the tolerance below a certified point
            newton = max(newton, guess) + CERTIFIED_RTOL * guess / 2  # probe just past the root
        guess = newton if low < newton < high else middle(low, high)
    return float(high)
