"""Range sweeps of the level conversions (issue 32, item 1): zCDP <-> (eps, delta), GDP
<-> (eps, delta) and the composition of (eps, delta)-DP, each level on a log grid from 1e-300 to
1e300 (delta from 1e-300, and below for the functions that take subnormal delta, to 1 - 1e-16).

At every grid point the result is finite, on the safe side of an mpmath evaluation of the same
formula written here from the paper (40 digits, or more where the formula cancels), close to it,
monotone where the quantity is monotone, and outside the documented range the call raises a
``ValueError`` that names the limit.
"""

from __future__ import annotations

import math

import mpmath as mp
import numpy as np
import pytest
from scipy.special import log_ndtr

from shuffle_lib.accounting import (
    advanced_composition,
    approx_dp_to_zcdp,
    gaussian_zcdp,
    gdp_delta,
    gdp_epsilon,
    gdp_mu,
    group_privacy,
    optimal_composition_delta,
    optimal_composition_epsilon,
    zcdp_to_approx_dp,
)
from shuffle_lib.accounting.fdp import MU_RANGE

LEVELS = 10.0 ** np.arange(-300, 301, 50)  # 1e-300, 1e-250, ..., 1e300
FINE_LEVELS = 10.0 ** np.arange(-300, 301, 10)
DELTAS = [5e-324, 1e-300, 1e-100, 1e-10, 0.5, 1 - 1e-16]
DELTAS_NORMAL = [1e-300, 1e-100, 1e-10, 1e-3, 0.5, 1 - 1e-16]


# --- mpmath references, from the definitions ------------------------------------------------------

def _golden_min(f, lo: mp.mpf, hi: mp.mpf, iters: int = 120) -> mp.mpf:
    ratio = (mp.sqrt(5) - 1) / 2
    c, d = hi - ratio * (hi - lo), lo + ratio * (hi - lo)
    fc, fd = f(c), f(d)
    for _ in range(iters):
        if fc < fd:
            hi, d, fd = d, c, fc
            c = hi - ratio * (hi - lo)
            fc = f(c)
        else:
            lo, c, fc = c, d, fd
            d = lo + ratio * (hi - lo)
            fd = f(d)
    return min(fc, fd)


def _scan_min(f, lo: mp.mpf, hi: mp.mpf, points: int = 120) -> mp.mpf:
    """Minimum of a unimodal f on [lo, hi]: a scan, then golden section around the best point."""
    step = (hi - lo) / points
    grid = [lo + i * step for i in range(points + 1)]
    values = [f(t) for t in grid]
    best = min(range(len(values)), key=values.__getitem__)
    return min(values[best], _golden_min(f, grid[max(best - 1, 0)], grid[min(best + 1, points)]))


def _log_one_minus_inverse_alpha(t: mp.mpf, a: mp.mpf) -> mp.mpf:
    # ln(1 - 1/alpha) for alpha = 1 + a, a = e^t: ln(a) - ln(1 + a), in the form that keeps its
    # digits on each side of a = 1
    return t - mp.log1p(a) if a < 1 else mp.log1p(-1 / (1 + a))


def _cks_c(t: mp.mpf, log_delta: mp.mpf) -> mp.mpf:
    """ln(1 - 1/alpha) - (ln alpha + ln delta) / (alpha - 1) at alpha = 1 + e^t."""
    a = mp.exp(t)
    return _log_one_minus_inverse_alpha(t, a) - (mp.log1p(a) + log_delta) / a


def cks_mp(rho: float, delta: float) -> mp.mpf:
    """Canonne, Kamath & Steinke (2020): inf over alpha > 1 of alpha rho + c(alpha), clamped at 0
    (an upper bound on the infimum within about 1e-30 relative)."""
    with mp.workdps(40):
        r, log_delta = mp.mpf(rho), mp.log(mp.mpf(delta))
        big = -log_delta
        lo = mp.log(min(big, mp.sqrt(big / r))) - 40
        hi = mp.log(mp.sqrt(big / r)) + 40
        return max(_scan_min(lambda t: (1 + mp.exp(t)) * r + _cks_c(t, log_delta), lo, hi), 0)


def cks_inverse_mp(eps: float, delta: float) -> mp.mpf:
    """Largest rho with inf_alpha [alpha rho + c(alpha)] <= eps, i.e. sup_alpha (eps - c) / alpha
    (a lower bound on the supremum within about 1e-30 relative)."""
    with mp.workdps(40):
        e, log_delta = mp.mpf(eps), mp.log(mp.mpf(delta))
        lo = mp.log(min(-log_delta, 1)) - 60
        return -_scan_min(lambda t: -(e - _cks_c(t, log_delta)) / (1 + mp.exp(t)), lo,
                          mp.mpf(800), 400)


def bs_mp(rho: float, delta: float) -> mp.mpf:
    """Bun & Steinke (2016), Proposition 1.3: rho + 2 sqrt(rho ln(1/delta))."""
    with mp.workdps(40):
        return mp.mpf(rho) + 2 * mp.sqrt(mp.mpf(rho) * -mp.log(mp.mpf(delta)))


def bs_inverse_mp(eps: float, delta: float) -> mp.mpf:
    """(sqrt(L + eps) - sqrt(L))^2, in the subtracted form, with the digits that cancel added."""
    with mp.workdps(40):
        big = -mp.log(mp.mpf(delta))
        lost = max(0, int(mp.log10(big / mp.mpf(eps)))) if eps > 0 else 0
    with mp.workdps(40 + lost):
        big = -mp.log(mp.mpf(delta))
        root = mp.sqrt(big + mp.mpf(eps)) - mp.sqrt(big)
        return root * root


def gdp_delta_mp(mu: float, eps: float) -> mp.mpf:
    """Dong, Roth & Su (2022), Corollary 2.13: Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2),
    with the digits that cancel at small mu added to the working precision."""
    with mp.workdps(60 + 2 * max(0, int(-math.log10(mu)))):
        m, e = mp.mpf(mu), mp.mpf(eps)
        return mp.ncdf(-e / m + m / 2) - mp.exp(e) * mp.ncdf(-e / m - m / 2)


def composed_rr_delta_mp(eps0: float, k: int, eps: float) -> mp.mpf:
    """Kairouz, Oh & Viswanath (2015): the hockey-stick divergence of Bin(k, p) and
    Bin(k, 1 - p), p = 1 / (1 + e^-eps0), outcome by outcome:
    sum_x P(x) (1 - e^(eps - (2x - k) eps0))_+."""
    with mp.workdps(60 + max(0, int(-math.log10(eps0))) if eps0 > 0 else 60):
        e0 = mp.mpf(eps0)
        keep, flip = 1 / (1 + mp.exp(-e0)), 1 / (1 + mp.exp(e0))
        total = mp.mpf(0)
        for x in range(k + 1):
            prob = mp.binomial(k, x) * keep**x * flip ** (k - x)
            total += prob * max(-mp.expm1(mp.mpf(eps) - (2 * x - k) * e0), 0)
        return total


# --- zCDP -----------------------------------------------------------------------------------------

@pytest.mark.parametrize("delta", DELTAS)
def test_zcdp_forward_bun_steinke_is_safe_and_tight_over_the_whole_range(delta: float) -> None:
    values = zcdp_to_approx_dp(FINE_LEVELS, delta)
    assert np.isfinite(values).all() and (values > 0).all()
    assert (np.diff(values) >= 0).all()
    for rho, value in zip(FINE_LEVELS, values, strict=True):
        exact = bs_mp(rho, delta)
        assert value >= exact, (rho, delta, value, exact)
        assert value <= exact * (1 + 1e-14), (rho, delta, value, exact)


@pytest.mark.parametrize("delta", DELTAS)
def test_zcdp_forward_cks_is_safe_and_tight_over_the_whole_range(delta: float) -> None:
    values = zcdp_to_approx_dp(FINE_LEVELS, delta, "cks")
    assert np.isfinite(values).all() and (values >= 0).all()
    assert (np.diff(values) >= 0).all()
    assert (values <= zcdp_to_approx_dp(FINE_LEVELS, delta) * (1 + 1e-12)).all()
    for rho, value in zip(LEVELS, zcdp_to_approx_dp(LEVELS, delta, "cks"), strict=True):
        exact = cks_mp(rho, delta)  # within 1e-30 above the infimum
        assert value >= exact * (1 - 1e-25), (rho, delta, value, exact)
        # the float result is rounded up by 4e-15 of its terms' size (at most the BS value)
        slack = 1e-11 * exact + 1e-13 * float(bs_mp(rho, delta))
        assert value <= exact + slack, (rho, delta, value, exact)


def test_zcdp_forward_is_monotone_in_delta() -> None:
    deltas = np.array(DELTAS)
    for method in ("bun-steinke", "cks"):
        for rho in LEVELS:
            values = zcdp_to_approx_dp(rho, deltas, method)
            assert (np.diff(values) <= 0).all(), (method, rho, values)


@pytest.mark.parametrize("delta", DELTAS)
def test_zcdp_inverse_bun_steinke_is_safe_and_tight_over_the_whole_range(delta: float) -> None:
    values = approx_dp_to_zcdp(FINE_LEVELS, delta)
    assert np.isfinite(values).all() and (values >= 0).all()
    assert (np.diff(values) >= 0).all()
    for eps, rho in zip(FINE_LEVELS, values, strict=True):
        exact = bs_inverse_mp(eps, delta)
        assert rho <= exact, (eps, delta, rho, exact)
        # answers below the normal range keep only their leading digits; below 5e-324 they are 0
        assert rho >= exact * (1 - 1e-13) - 1e-322, (eps, delta, rho, exact)
        assert zcdp_to_approx_dp(rho, delta) <= eps


@pytest.mark.parametrize("delta", DELTAS_NORMAL)
def test_zcdp_inverse_cks_converges_and_is_safe_over_the_whole_range(delta: float) -> None:
    # formerly: RuntimeError (the root search failed to converge) for eps below about 1e-175
    values = approx_dp_to_zcdp(LEVELS, delta, "cks")
    assert np.isfinite(values).all() and (values >= 0).all()
    # monotone up to the float noise of the forward minimization (an ulp or two)
    assert (values[1:] >= values[:-1] * (1 - 1e-13)).all()
    for eps, rho in zip(LEVELS, values, strict=True):
        exact = cks_inverse_mp(eps, delta)  # within 1e-30 below the supremum
        assert rho <= exact * (1 + 1e-25), (eps, delta, rho, exact)
        assert rho >= exact * (1 - 1e-11) - 1e-300, (eps, delta, rho, exact)
        assert zcdp_to_approx_dp(rho, delta, "cks") <= eps
        assert rho >= approx_dp_to_zcdp(eps, delta) * (1 - 1e-13)  # CKS is never looser


def test_zcdp_inverse_is_monotone_in_delta() -> None:
    deltas = np.array(DELTAS_NORMAL)
    for method in ("bun-steinke", "cks"):
        for eps in LEVELS[::2]:
            values = approx_dp_to_zcdp(eps, deltas, method)
            assert (np.diff(values) >= 0).all(), (method, eps, values)


def test_gaussian_zcdp_over_the_whole_range_is_never_zero_or_below() -> None:
    for sigma in FINE_LEVELS[::3]:
        for sens in FINE_LEVELS[::3]:
            exact = mp.mpf(sens) ** 2 / (2 * mp.mpf(sigma) ** 2)
            if exact > 1.7e308:
                with pytest.raises(ValueError, match="float range"):
                    gaussian_zcdp(sigma, sens)
                continue
            rho = gaussian_zcdp(sigma, sens)
            assert rho > 0
            if exact >= 2.3e-308:  # normal range: within the three roundings of the formula
                assert abs(rho - exact) <= 4.5e-16 * exact, (sigma, sens, rho, exact)
            else:  # rounded up below the normal range
                assert exact <= rho <= exact + 2e-323, (sigma, sens, rho, exact)


@pytest.mark.parametrize(
    ("call", "limit"),
    [
        (lambda: zcdp_to_approx_dp(2e300, 0.5), "rho must be at most 1e\\+300"),
        (lambda: zcdp_to_approx_dp(1.0, 1.0), "delta must lie in \\(0, 1\\)"),
        (lambda: zcdp_to_approx_dp(1.0, 0.0, "cks"), "delta must lie in \\(0, 1\\)"),
        (lambda: approx_dp_to_zcdp(2e300, 0.5, "cks"), "eps must be at most 1e\\+300"),
        (lambda: approx_dp_to_zcdp(1.0, 1.0), "delta must lie in \\(0, 1\\)"),
        (lambda: gdp_delta(2e4, 1.0), "mu must lie in \\[1e-300, 10000\\]"),
        (lambda: gdp_delta(1e-301, 1.0), "mu must lie in \\[1e-300, 10000\\]"),
        (lambda: gdp_epsilon(1.0, 1e-301), "delta must be >= 1e-300"),
        (lambda: gdp_epsilon(2e4, 0.5), "mu must lie in"),
        (lambda: gdp_mu(1e300, 1e-10), "supported range"),
        (lambda: gdp_mu(1.0, 1e-301), "delta must be >= 1e-300"),
        (lambda: optimal_composition_epsilon(1.0, 10**6 + 1, 1e-6), "k must be at most 1000000"),
        (lambda: optimal_composition_epsilon(1.0, 2, 1e-301), "delta must be 0 or at least"),
        (lambda: optimal_composition_epsilon(1e308, 10, 1e-6), "beyond the float range"),
        (lambda: advanced_composition(1e3, 0.0, 10, 1e-6), "beyond the float range"),
        (lambda: group_privacy(1e308, 0.0, 10), "beyond the float range"),
    ],
)
def test_outside_the_documented_range_a_value_error_names_the_limit(call, limit: str) -> None:
    with pytest.raises(ValueError, match=limit):
        call()


# --- GDP ------------------------------------------------------------------------------------------

MUS = np.array([1e-300, 1e-200, 1e-100, 1e-30, 1e-8, 1e-3, 0.3, 1.0, 3.0, 30.0, 1e3, 1e4])
EPS_GRID = np.concatenate([[0.0], FINE_LEVELS])


def test_gdp_delta_over_the_whole_range_is_monotone_positive_and_never_below() -> None:
    table = gdp_delta(MUS[:, None], EPS_GRID[None, :])
    assert np.isfinite(table).all() and (table > 0).all() and (table <= 1).all()
    assert (np.diff(table, axis=1) <= 0).all()  # non-increasing in eps
    assert (np.diff(table, axis=0) >= 0).all()  # non-decreasing in mu
    for i, mu in enumerate(MUS):
        for j in range(0, EPS_GRID.size, 4):
            if EPS_GRID[j] > (1e3 + mu / 2) * mu:  # delta below e^-(5e5): reported as 5e-324
                assert table[i, j] == 5e-324
                continue
            exact = gdp_delta_mp(mu, EPS_GRID[j])
            if exact < 1e-300:
                continue
            assert table[i, j] >= exact, (mu, EPS_GRID[j], table[i, j], exact)
            assert table[i, j] <= exact * (1 + 1e-9), (mu, EPS_GRID[j], table[i, j], exact)


def test_gdp_epsilon_round_trips_gdp_delta_over_the_whole_range() -> None:
    for mu in MUS:
        for eps in EPS_GRID:
            delta = gdp_delta(mu, eps)
            if not 1e-300 <= delta < 1:
                continue
            back = gdp_epsilon(mu, delta)
            assert gdp_delta(mu, back) <= delta  # safe: the inverse meets the delta it was given
            # equal wherever delta resolves eps: the relative slope eps |delta'| / delta, with
            # |delta'(eps)| = e^eps Phi(-eps/mu - mu/2), is not tiny (where it is, delta is flat
            # in eps to its own rounding and the answer is only safe)
            slope = eps * math.exp(eps + float(log_ndtr(-eps / mu - mu / 2))) / delta
            if slope >= 1e-3:
                assert back <= eps * (1 + 1e-13), (mu, eps, delta, back)
                assert back == pytest.approx(eps, rel=1e-7), (mu, eps, delta, back)


def test_gdp_mu_over_the_whole_range_is_safe_and_monotone() -> None:
    deltas = np.array(DELTAS_NORMAL)
    for delta in deltas:
        previous = 0.0
        for eps in EPS_GRID[::2]:
            try:
                mu = gdp_mu(eps, delta)
            except ValueError as err:
                assert "supported range" in str(err) and eps > 1e6
                continue
            assert MU_RANGE[0] / 10 < mu <= MU_RANGE[1], (eps, delta, mu)
            assert mu >= previous * (1 - 1e-13), (eps, delta, mu, previous)  # up to float noise
            assert gdp_delta(mu, eps) <= delta
            previous = mu


# --- (eps, delta) composition ---------------------------------------------------------------------

@pytest.mark.parametrize("k", [1, 2, 7, 40])
def test_optimal_composition_delta_matches_the_exact_sum_over_the_whole_range(k: int) -> None:
    for eps0 in LEVELS:
        if not np.isfinite(k * eps0):
            continue
        eps = np.array([0.0, 0.3, 0.9, 0.999]) * k * eps0
        values = optimal_composition_delta(eps0, k, eps)
        assert np.isfinite(values).all() and (np.diff(values) <= 0).all()
        for e, value in zip(eps, values, strict=True):
            exact = composed_rr_delta_mp(eps0, k, e)
            assert abs(value - exact) <= 1e-10 * exact + 1e-320, (eps0, k, e, value, exact)


@pytest.mark.parametrize("k", [1, 2, 7, 40])
def test_optimal_composition_epsilon_is_never_below_over_the_whole_range(k: int) -> None:
    for eps0 in LEVELS:
        if not np.isfinite(k * eps0):
            continue
        previous = math.inf
        for delta in [0.0, *DELTAS_NORMAL[:-1]]:
            eps = optimal_composition_epsilon(eps0, k, delta)
            assert np.isfinite(eps) and 0 <= eps <= previous, (eps0, k, delta, eps)
            assert composed_rr_delta_mp(eps0, k, eps) <= delta, (eps0, k, delta, eps)
            assert eps <= np.nextafter(k * eps0, np.inf)  # never above basic composition
            previous = eps
        # formerly 4.9999999999999995e90 at (1e90, 5): below the exact 5 * 1e90 (the double)
        assert mp.mpf(optimal_composition_epsilon(eps0, k, 0.0)) >= k * mp.mpf(eps0)


def test_optimal_composition_is_monotone_in_k_and_eps0() -> None:
    for delta in (1e-300, 1e-10, 0.5):
        by_k = [optimal_composition_epsilon(1.0, k, delta) for k in (1, 2, 5, 50, 500)]
        assert np.all(np.diff(by_k) >= 0), (delta, by_k)
        by_eps0 = [optimal_composition_epsilon(e0, 5, delta) for e0 in LEVELS if e0 < 1e300]
        assert np.all(np.diff(by_eps0) >= 0), (delta, by_eps0)


def test_advanced_and_group_privacy_over_the_whole_range() -> None:
    for eps in LEVELS:
        for k in (1, 10, 10**6):
            for slack in (1e-300, 1e-10, 0.5):
                exact = (mp.sqrt(2 * k * -mp.log(mp.mpf(slack))) * mp.mpf(eps)
                         + k * mp.mpf(eps) * mp.expm1(mp.mpf(eps)))
                if exact > 1.7e308:
                    with pytest.raises(ValueError, match="beyond the float range"):
                        advanced_composition(eps, 0.0, k, slack)
                    continue
                value, _ = advanced_composition(eps, 0.0, k, slack)
                assert value == pytest.approx(float(exact), rel=1e-13), (eps, k, slack)
                assert value >= eps  # never below a single mechanism's level
            if k * eps > 1.7e308:
                continue
            total, group_delta = group_privacy(eps, 1e-10, k)
            assert total == pytest.approx(k * eps, rel=1e-15)
            exact_delta = min(mp.mpf(1), k * mp.exp((k - 1) * mp.mpf(eps)) * mp.mpf(1e-10))
            assert group_delta == pytest.approx(float(exact_delta), rel=1e-12)
