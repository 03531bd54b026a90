r"""Zero-concentrated DP (zCDP) and its conversion to :math:`(\varepsilon,\delta)`-DP.

A mechanism is :math:`\rho`-zCDP when the Rényi divergence of order :math:`\alpha` between its
outputs on neighbouring datasets is at most :math:`\rho\alpha` for every :math:`\alpha>1`
(Bun & Steinke 2016). The US Census Bureau states its 2020 budgets in :math:`\rho` and converts
them with the Bun-Steinke formula (Bailie, Gong & Meng 2023, "Comparisons with 2020 Census").
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from numpy.typing import ArrayLike
from scipy.optimize import minimize_scalar

from shuffle_lib._numerics import scalar_or_array
from shuffle_lib._validation import check_delta, check_epsilon, check_positive

METHODS = ("bun-steinke", "cks")
#: Largest rho (forward) and eps (inverse) the conversions take: the results, rounded up by a
#: relative margin, then stay inside the float range.
VALUE_MAX = 1e300


def _check_at_most(values: np.ndarray, name: str) -> np.ndarray:
    if (values > VALUE_MAX).any():
        raise ValueError(f"{name} must be at most {VALUE_MAX:g}, got {float(values.max())!r}")
    return values


def _check_method(method: str) -> str:
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    return method


def gaussian_zcdp(sigma: ArrayLike, sensitivity: ArrayLike = 1.0) -> np.ndarray | float:
    r"""The Gaussian mechanism with noise :math:`N(0,\sigma^2)` and L2 sensitivity
    :math:`\Delta` is :math:`\rho`-zCDP with :math:`\rho=\Delta^2/(2\sigma^2)`
    (Bun & Steinke 2016, Proposition 1.6; exact).

    Where a square leaves the normal float range, :math:`\tfrac12(\Delta/\sigma)^2` is used
    instead (a subnormal square had lost digits: ``gaussian_zcdp(1e-160, 1.3e-160)`` gave
    0.845109 for the exact 0.845). A :math:`\rho` below the smallest normal double (2.2e-308) is
    rounded up by two subnormal steps, so it is never 0 or below the exact value (it was 0 for
    ``sensitivity / sigma`` below 1e-162). ``sigma`` and ``sensitivity`` any finite positive
    numbers; ``ValueError`` when :math:`\rho` itself exceeds the float range (``sigma`` below
    about 1e-154 times ``sensitivity``).

    >>> gaussian_zcdp(2.0)
    0.125
    """
    sigma_arr = check_positive(sigma, "sigma")
    sens_arr = check_positive(sensitivity, "sensitivity")
    tiny = np.finfo(float).tiny
    with np.errstate(over="ignore", under="ignore", invalid="ignore", divide="ignore"):
        sens_sq, sigma_sq = sens_arr**2, sigma_arr**2
        rho = sens_sq / (2 * sigma_sq)
        ratio_form = 0.5 * (sens_arr / sigma_arr) ** 2
        normal = (np.isfinite(sens_sq) & np.isfinite(sigma_sq) & (sens_sq >= tiny)
                  & (sigma_sq >= tiny) & np.isfinite(rho))
        rho = np.where(normal, rho, ratio_form)
        # below the normal range each rounding costs up to half a subnormal step (and the ratio
        # adds less than one): two steps up cover them, so rho is never 0 or below the truth
        rho = np.where(rho < tiny, np.nextafter(np.nextafter(rho, np.inf), np.inf), rho)
    if not np.isfinite(rho).all():
        raise ValueError(f"sensitivity / sigma is too large: rho exceeds the float range, got "
                         f"sigma={sigma!r} and sensitivity={sensitivity!r}")
    return scalar_or_array(rho)


def zcdp_compose(rhos: ArrayLike) -> float:
    r"""Composition of zCDP: running :math:`\rho_1,\dots,\rho_T`-zCDP mechanisms is
    :math:`(\sum_t\rho_t)`-zCDP (Bun & Steinke 2016).

    ``ValueError`` if the sum exceeds the float range.

    >>> zcdp_compose([0.5, 0.25])
    0.75
    """
    with np.errstate(over="ignore"):
        total = float(np.sum(check_epsilon(rhos, "rhos")))
    if not np.isfinite(total):
        raise ValueError(f"the entries of rhos sum beyond the float range: {rhos!r}")
    return total


#: Relative rounding margin of the floating-point conversions. Each formula below takes at most
#: about eight roundings, each with relative error at most 2^-53 (``log`` and ``log1p`` at most one
#: unit in the last place), so its computed value is within 2e-15 relative of the exact value;
#: 4e-15 leaves a factor two of room and still changes the result only in the 15th digit.
_REL_MARGIN = 4e-15


def _log_inv_delta(delta: np.ndarray) -> np.ndarray:
    # -log(delta) rather than log(1 / delta): 1 / delta overflows for subnormal delta
    return -np.log(delta)


def _bs_epsilon(rho: np.ndarray, log_inv: np.ndarray) -> np.ndarray:
    # rho + 2 sqrt(rho L), a sum of non-negative terms: relative error below 2e-15, so the relative
    # margin rounds the result up; sqrt(rho) sqrt(L) instead of sqrt(rho L) cannot overflow
    exact_ish = rho + 2 * np.sqrt(rho) * np.sqrt(log_inv)
    return exact_ish * (1 + _REL_MARGIN)


def _cks_epsilon_at(gap: np.ndarray | float, rho: float, log_delta: float) -> np.ndarray:
    r"""Upper bound on the CKS expression at order :math:`\alpha = 1 + \text{gap}`.

    With :math:`a=\alpha-1`: :math:`\ln(1-1/\alpha) = -\ln(1+1/a)` and
    :math:`\ln\alpha = \ln(1+a)`, so no term is formed by subtracting two nearby numbers (the old
    form :math:`\ln\alpha - \ln(\alpha - 1)` lost every digit for tiny rho, where a ~ 1e13).
    The result is rounded up by a margin proportional to the terms' magnitudes, so it is never
    below the exact expression at this order (and every order gives a valid bound).
    """
    with np.errstate(over="ignore"):  # (1 + gap) rho = inf at the scan's far end: never the min
        first = (1 + gap) * rho
    second = np.log1p(1 / gap)
    third = (np.log1p(gap) + log_delta) / gap
    value = first - second - third
    scale = first + second + (np.log1p(gap) + abs(log_delta)) / gap
    return value + _REL_MARGIN * scale


#: Points of the coarse scan over log(alpha - 1) that brackets the CKS optimum (step about 0.3).
_CKS_SCAN = 256


def _cks_epsilon(rho: float, delta: float) -> float:
    log_delta = float(np.log(delta))
    log_inv = -log_delta
    # Any order gives a valid bound. The optimum a = alpha - 1 lies between about
    # min(L, sqrt(L / rho)) (delta near 1, where the log(1 - 1/alpha) term dominates) and the
    # Bun-Steinke optimum sqrt(L / rho): scan log(a) over that range with a margin of e^10 on
    # each side, then refine around the best point by a bounded search. (A search within e^10 of
    # the Bun-Steinke optimum alone missed the optimum near delta = 1: rho = 40 at
    # delta = 1 - 1e-16 gave 18.7 where the infimum is 3.2.)
    log_gap_bs = 0.5 * (np.log(log_inv) - np.log(rho))  # no overflow for subnormal rho
    low = min(log_gap_bs, float(np.log(log_inv))) - 10.0
    high = log_gap_bs + 10.0
    grid = np.linspace(low, high, _CKS_SCAN)
    values = _cks_epsilon_at(np.exp(grid), rho, log_delta)
    best_index = int(np.argmin(values))
    best = float(values[best_index])
    step = grid[1] - grid[0]
    found = minimize_scalar(
        lambda t: float(_cks_epsilon_at(np.exp(t), rho, log_delta)),
        bounds=(grid[best_index] - step, grid[best_index] + step),
        method="bounded",
        options={"xatol": 1e-12},
    )
    return float(max(0.0, min(best, found.fun)))


def zcdp_to_approx_dp(
    rho: ArrayLike, delta: ArrayLike, method: str = "bun-steinke"
) -> np.ndarray | float:
    r"""Convert :math:`\rho`-zCDP to :math:`(\varepsilon,\delta)`-DP; returns :math:`\varepsilon`.

    - ``"bun-steinke"``: :math:`\varepsilon=\rho+2\sqrt{\rho\ln(1/\delta)}` (Bun & Steinke 2016,
      Proposition 1.3), the formula the Census Bureau uses (Bailie, Gong & Meng 2023, 2020 Census
      table).
    - ``"cks"``: :math:`\varepsilon=\inf_{\alpha>1}\,\alpha\rho+\ln(1-1/\alpha)
      -\frac{\ln\alpha+\ln\delta}{\alpha-1}` (Canonne, Kamath & Steinke 2020, Section 2.3),
      never larger than Bun-Steinke. Every :math:`\alpha` gives a valid bound, so the numerical
      minimization (a scan of :math:`\ln(\alpha-1)` from :math:`\min(L, \sqrt{L/\rho})e^{-10}`
      to :math:`\sqrt{L/\rho}\,e^{10}`, :math:`L=\ln(1/\delta)`, then a bounded search) can
      only err on the safe (larger) side; within 1e-11 relative (plus 1e-13 of the
      Bun-Steinke value) of a 40-digit minimization. It is 0 for small enough :math:`\rho`
      (e.g. :math:`\rho\le 0.38` at :math:`\delta=0.5`): such mechanisms are
      :math:`(0,\delta)`-DP.

    Upper bound for any :math:`\rho`-zCDP mechanism: both formulas are evaluated without
    cancellation and rounded up by a relative margin of 4e-15 of their terms' magnitudes, so the
    floating-point result is never below the exact value. ``rho`` in [0, 1e300]
    (:data:`VALUE_MAX`), ``delta`` in (0, 1) (subnormal delta included); ``ValueError`` outside.

    >>> round(zcdp_to_approx_dp(7.70, 1e-10), 2)
    34.33
    """
    method = _check_method(method)
    rho_arr = _check_at_most(check_epsilon(rho, "rho"), "rho")
    delta_arr = check_delta(delta, allow_zero=False)
    if method == "bun-steinke":
        result = _bs_epsilon(rho_arr, _log_inv_delta(delta_arr))
    else:
        def one(r: float, d: float) -> float:
            return 0.0 if r == 0 else _cks_epsilon(r, d)

        result = np.vectorize(one, otypes=[float])(rho_arr, delta_arr)
    return scalar_or_array(result)


def _step_down(rho: float, too_large: Callable[[float], bool]) -> float:
    """Lower ``rho`` by 1, 2, 4, ... units of 2^-52 rho (at least the smallest subnormal, so that
    a subnormal ``rho`` moves: its relative step underflowed to 0, and the loop never ended for
    ``approx_dp_to_zcdp(1e-160, 5e-324)``) until ``too_large`` fails (0 at worst)."""
    step = max(rho * np.finfo(float).eps, 5e-324)
    while rho > 0 and too_large(rho):
        rho = max(rho - step, 0.0)
        step *= 2
    return rho


def _largest_rho_bs(eps: float, delta: float) -> float:
    log_inv = float(_log_inv_delta(np.float64(delta)))
    # sqrt(rho) solves rho + 2 sqrt(rho L) = eps: sqrt(L + eps) - sqrt(L), written without the
    # subtraction (which cancels when eps << L and lost 12% at eps = 1e-12, delta = 1e-300)
    root = eps / (np.sqrt(log_inv + eps) + np.sqrt(log_inv))
    rho = float(root * root)
    # round down: the forward conversion of the answer must not exceed eps in floating point
    return _step_down(rho, lambda r: float(_bs_epsilon(np.float64(r), log_inv)) > eps)


def _largest_rho_cks(eps: float, delta: float) -> float:
    def fits(r: float) -> bool:
        return r == 0 or _cks_epsilon(r, delta) <= eps  # the conversion of 0 is 0

    # Bracket: F(low) <= eps < F(high) for the non-decreasing F = CKS conversion. CKS never
    # exceeds Bun-Steinke, so the Bun-Steinke answer qualifies (stepped down should rounding say
    # otherwise). F is 0 on some [0, rho_0], so even eps = 0 has a positive answer.
    low = _step_down(_largest_rho_bs(eps, delta), lambda r: not fits(r))
    high, growth = (4 * low, 10.0) if low > 0 else (1e-300, 1e10)
    while fits(high):
        if high >= VALUE_MAX:  # F(rho) >= rho - |terms| grows without bound: never reached
            return high
        low, high = high, min(growth * high, VALUE_MAX)
    # Bisect the predicate F(rho) <= eps, in log rho while the bracket spans a factor 2, then
    # linearly: about 60 steps, each a valid bracket, so it converges at every eps and delta.
    # (A Brent root search on F - eps failed to converge at tiny eps, where F - eps is flat at
    # -eps below the answer: approx_dp_to_zcdp(1e-300, 1e-10, "cks") raised RuntimeError.)
    # Answers below 1e-300 (delta near 1e-300 with eps below about 1e-150) are reported as 0,
    # which is safe.
    if low == 0:  # the loop above found F(1e-300) > eps
        return 0.0
    while high > low * (1 + 1e-15):
        mid = float(np.sqrt(low) * np.sqrt(high)) if high > 2 * low else (low + high) / 2
        if not low < mid < high:
            break
        low, high = (mid, high) if fits(mid) else (low, mid)
    return low


def approx_dp_to_zcdp(
    eps: ArrayLike, delta: ArrayLike, method: str = "bun-steinke"
) -> np.ndarray | float:
    r"""Largest :math:`\rho` whose conversion by ``method`` is at most :math:`\varepsilon` at
    :math:`\delta`: the inverse of :func:`zcdp_to_approx_dp`.

    Bun-Steinke has the closed form :math:`\sqrt\rho=\sqrt{\ln(1/\delta)+\varepsilon}
    -\sqrt{\ln(1/\delta)}=\varepsilon/(\sqrt{\ln(1/\delta)+\varepsilon}+\sqrt{\ln(1/\delta)})`,
    evaluated in the second (cancellation-free) form; CKS bisects the predicate
    ``zcdp_to_approx_dp(rho, delta, "cks") <= eps`` (in log rho, then linearly) to relative
    tolerance 1e-15, which converges at every ``eps`` and ``delta``. Both answers are then
    lowered until ``zcdp_to_approx_dp(result, delta, method) <= eps`` holds in floating point,
    so the returned :math:`\rho` is never more generous than the (safely rounded) forward
    conversion allows; relative gap to the exact inverse below 1e-13 for Bun-Steinke and 1e-11
    for CKS (whose rounding margin is relative to its terms, which cancel near the answer at
    tiny ``eps``; 40-digit sweeps over eps from 1e-300 to 1e300 and delta from 1e-300 to
    1 - 1e-16). For ``"cks"`` the answer at ``eps = 0`` is the largest :math:`\rho` the CKS
    bound certifies as :math:`(0,\delta)`-DP, which is positive. Used to recover the unrounded
    :math:`\rho` behind a published :math:`\varepsilon`. ``eps`` in [0, 1e300]
    (:data:`VALUE_MAX`) and ``delta`` in (0, 1), subnormal delta included; ``ValueError``
    outside.
    An answer below the smallest double is reported as 0 (safe: a smaller rho).

    >>> round(approx_dp_to_zcdp(zcdp_to_approx_dp(2.56, 1e-10), 1e-10), 9)
    2.56
    """
    method = _check_method(method)
    eps_arr = _check_at_most(check_epsilon(eps), "eps")
    delta_arr = check_delta(delta, allow_zero=False)
    solver = _largest_rho_bs if method == "bun-steinke" else _largest_rho_cks
    return scalar_or_array(np.vectorize(solver, otypes=[float])(eps_arr, delta_arr))
