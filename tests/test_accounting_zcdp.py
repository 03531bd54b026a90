"""zCDP: the Gaussian mechanism's rho, conversions to (eps, delta), and the 2020 Census table."""

from __future__ import annotations

import mpmath
import numpy as np
import pytest
from scipy import integrate, stats

from shuffle_lib.accounting import (
    approx_dp_to_zcdp,
    gaussian_zcdp,
    gdp_delta,
    gdp_epsilon,
    zcdp_compose,
    zcdp_to_approx_dp,
)

# Bailie, Gong & Meng (2023), "Comparisons with 2020 Census": rho (rounded) and the eps printed
# at delta = 1e-10
CENSUS_RHO = np.array([0.07, 2.56, 7.70, 4.96, 15.29])
CENSUS_EPS = np.array([2.70, 17.90, 34.33, 26.34, 52.83])
CENSUS_DELTA = 1e-10


def _gaussian_renyi(sigma: float, alpha: float) -> float:
    """Renyi divergence of order alpha between N(1, sigma^2) and N(0, sigma^2), by quadrature."""

    def integrand(x: float) -> float:
        return stats.norm.pdf(x, 1, sigma) ** alpha * stats.norm.pdf(x, 0, sigma) ** (1 - alpha)

    value, _ = integrate.quad(integrand, -15 * sigma, 1 + 15 * sigma, limit=400)
    return float(np.log(value) / (alpha - 1))


@pytest.mark.parametrize("sigma", [0.7, 1.0, 3.0])
def test_gaussian_zcdp_is_the_renyi_slope(sigma: float) -> None:
    rho = gaussian_zcdp(sigma)
    for alpha in (1.5, 2.0, 5.0):
        assert _gaussian_renyi(sigma, alpha) == pytest.approx(rho * alpha, rel=1e-7)


def test_bun_steinke_reproduces_the_census_rows_up_to_rho_rounding() -> None:
    # Each printed eps must come from some rho that rounds to the printed rho.
    low = approx_dp_to_zcdp(CENSUS_EPS - 0.005, CENSUS_DELTA)
    high = approx_dp_to_zcdp(CENSUS_EPS + 0.005, CENSUS_DELTA)
    assert np.all(np.maximum(low, CENSUS_RHO - 0.005) < np.minimum(high, CENSUS_RHO + 0.005))
    # and the one row whose rho carries enough digits is reproduced to the printed precision
    assert round(zcdp_to_approx_dp(7.70, CENSUS_DELTA), 2) == 34.33


def test_census_total_is_the_composition_of_the_rows() -> None:
    assert zcdp_compose(CENSUS_RHO[:4]) == pytest.approx(CENSUS_RHO[4], abs=0.005)
    # converting the summed rho is far tighter than summing the converted epsilons
    assert zcdp_to_approx_dp(CENSUS_RHO[4], CENSUS_DELTA) < CENSUS_EPS[:4].sum() - 25


@pytest.mark.parametrize("rho", [1e-8, 1e-3, 0.07, 1.0, 15.29, 1e3])
@pytest.mark.parametrize("delta", [1e-12, 1e-6, 0.1])
def test_conversions_are_ordered_and_valid(rho: float, delta: float) -> None:
    bs = zcdp_to_approx_dp(rho, delta, method="bun-steinke")
    cks = zcdp_to_approx_dp(rho, delta, method="cks")
    # the Gaussian mechanism with this rho is rho-zCDP and mu-GDP with mu = sqrt(2 rho),
    # so any valid conversion is at least its exact epsilon
    exact = gdp_epsilon(np.sqrt(2 * rho), delta)
    assert exact <= cks * (1 + 1e-12) + 1e-12
    assert cks <= bs * (1 + 1e-12)


@pytest.mark.parametrize("method", ["bun-steinke", "cks"])
def test_round_trip_rho_eps_rho(method: str) -> None:
    for rho in (1e-4, 0.07, 2.56, 15.29, 200.0):
        for delta in (1e-10, 1e-3):
            eps = zcdp_to_approx_dp(rho, delta, method)
            back = approx_dp_to_zcdp(eps, delta, method)
            assert back == pytest.approx(rho, rel=1e-9)
            assert zcdp_to_approx_dp(back, delta, method) <= eps * (1 + 1e-12)


def test_zero_budget_and_vectorization() -> None:
    assert zcdp_to_approx_dp(0.0, 1e-6, "cks") == 0.0
    assert approx_dp_to_zcdp(0.0, 1e-6) == 0.0  # Bun-Steinke is positive for every rho > 0
    # CKS certifies (0, delta)-DP for small rho > 0; the inverse at eps = 0 is the largest such rho
    rho0 = approx_dp_to_zcdp(0.0, 1e-6, "cks")
    assert rho0 > 0 and zcdp_to_approx_dp(rho0, 1e-6, "cks") == 0.0
    assert zcdp_to_approx_dp(rho0 * (1 + 1e-9), 1e-6, "cks") > 0
    # consistency: the Gaussian mechanism with that rho is then (0, 1e-6)-DP
    assert gdp_delta(np.sqrt(2 * rho0), 0.0) <= 1e-6
    out = zcdp_to_approx_dp(CENSUS_RHO, CENSUS_DELTA, "cks")
    assert out.shape == CENSUS_RHO.shape and np.isfinite(out).all()


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: zcdp_to_approx_dp(-1.0, 1e-6), "rho must be >= 0, got -1.0"),
        (lambda: zcdp_to_approx_dp(1.0, 0.0), "delta"),
        (lambda: zcdp_to_approx_dp(1.0, 1e-6, method="rdp"), "method must be one of"),
        (lambda: approx_dp_to_zcdp(-2.0, 1e-6), "eps must be >= 0"),
        (lambda: gaussian_zcdp(0.0), "sigma"),
    ],
)
def test_bad_input_raises(call, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        call()


# --- extreme arguments: safe rounding and tightness ----------------------------------------------

GRID_EPS = [1e-12, 1e-9, 1e-6, 1e-4, 1e-2, 0.3, 1.0, 5.0, 20.0, 50.0]
GRID_DELTA = [1e-300, 1e-100, 1e-20, 1e-10, 1e-5, 1e-2, 0.5]


@pytest.mark.parametrize("method", ["bun-steinke", "cks"])
@pytest.mark.parametrize("delta", GRID_DELTA)
def test_inverse_is_safe_and_tight_on_an_extreme_grid(method: str, delta: float) -> None:
    for eps in GRID_EPS:
        rho = approx_dp_to_zcdp(eps, delta, method)
        back = zcdp_to_approx_dp(rho, delta, method)
        # safe: the returned rho never converts to more than eps (no tolerance at all)
        assert back <= eps, (eps, rho, back)
        # tight in rho: a rho larger by 1e-9 relative already converts to more than eps
        assert zcdp_to_approx_dp(rho * (1 + 1e-9), delta, method) > eps, (eps, rho)
        # tight in eps: the round trip loses less than 1e-9 relative. CKS near its flat part
        # (delta = 0.5) resolves eps only to about 1e-15 absolute (a sum of O(1) terms), so
        # tiny eps is held to an absolute gap there.
        if method == "bun-steinke" or eps >= 1e-4:
            assert (eps - back) / eps < 1e-9, (eps, rho, back)
        else:
            assert eps - back < 1e-13, (eps, rho, back)


def test_reported_cancellation_case_is_fixed() -> None:
    # (sqrt(L + eps) - sqrt(L))^2 with L = ln(1e300) = 690.8 lost six digits here: the round
    # trip used to give 1.00000015e-6, above the target (unsafe)
    rho = approx_dp_to_zcdp(1e-6, 1e-300)
    assert zcdp_to_approx_dp(rho, 1e-300) <= 1e-6
    assert zcdp_to_approx_dp(rho, 1e-300) > 1e-6 * (1 - 1e-13)


MP_RHO = [1e-30, 1e-12, 1e-6, 0.07, 15.29, 1e3, 1e8]
MP_DELTA = [1e-300, 1e-100, 1e-10, 0.5, 1 - 2**-53]


def _mp_bun_steinke(rho: float, delta: float) -> mpmath.mpf:
    log_inv = -mpmath.log(mpmath.mpf(delta))  # mpf(float) is exact: the float we pass in
    return rho + 2 * mpmath.sqrt(mpmath.mpf(rho) * log_inv)


@pytest.mark.parametrize("delta", MP_DELTA)
def test_bun_steinke_forward_is_an_upper_bound_within_1e_12_of_mpmath(delta: float) -> None:
    with mpmath.workdps(50):
        for rho in MP_RHO:
            exact = _mp_bun_steinke(rho, delta)
            ours = zcdp_to_approx_dp(rho, delta)
            assert ours >= exact, (rho, ours, exact)
            assert (ours - exact) / exact <= 1e-12, (rho, ours, exact)


@pytest.mark.parametrize("delta", MP_DELTA)
def test_bun_steinke_inverse_is_a_lower_bound_within_1e_12_of_mpmath(delta: float) -> None:
    with mpmath.workdps(50):
        log_inv = -mpmath.log(mpmath.mpf(delta))
        for eps in [1e-12, 1e-9, 1e-6, 1e-3, 1.0, 50.0, 1e4]:
            exact = (mpmath.sqrt(log_inv + eps) - mpmath.sqrt(log_inv)) ** 2
            ours = approx_dp_to_zcdp(eps, delta)
            assert ours <= exact, (eps, ours, exact)
            assert (exact - ours) / exact <= 1e-12, (eps, ours, exact)


def test_the_naive_inverse_really_cancels() -> None:
    # why the rewrite was needed: the textbook form in floats is off by more than 10% here
    log_inv = float(np.log(1e300))
    naive = (np.sqrt(log_inv + 1e-12) - np.sqrt(log_inv)) ** 2
    with mpmath.workdps(50):
        mp_log = mpmath.log(mpmath.mpf(1e300))
        exact = (mpmath.sqrt(mp_log + mpmath.mpf(1e-12)) - mpmath.sqrt(mp_log)) ** 2
        assert abs(naive - exact) / exact > 0.1
        assert abs(approx_dp_to_zcdp(1e-12, 1e-300) - exact) / exact < 1e-12


def _mp_cks(rho: float, delta: float) -> mpmath.mpf:
    """inf over a = alpha - 1 > 0 of the CKS bound, by golden-section search in log(a)."""
    rho_mp, log_delta = mpmath.mpf(rho), mpmath.log(mpmath.mpf(delta))

    def value(t: mpmath.mpf) -> mpmath.mpf:
        a = mpmath.exp(t)
        return (1 + a) * rho_mp - mpmath.log1p(1 / a) - (mpmath.log1p(a) + log_delta) / a

    centre = mpmath.log(mpmath.sqrt(-log_delta / rho_mp))
    low, high = centre - 15, centre + 15
    ratio = (mpmath.sqrt(5) - 1) / 2
    for _ in range(160):
        left, right = high - ratio * (high - low), low + ratio * (high - low)
        if value(left) < value(right):
            high = right
        else:
            low = left
    return max(mpmath.mpf(0), value((low + high) / 2))


@pytest.mark.parametrize(
    ("rho", "delta"),
    [(1e-20, 1e-300), (1e-8, 1e-10), (0.07, 1e-10), (15.29, 1e-10), (2.0, 0.5), (1e3, 1e-5),
     (1e-26, 1e-300)],
)
def test_cks_forward_is_an_upper_bound_close_to_the_exact_infimum(rho: float, delta: float) -> None:
    with mpmath.workdps(40):
        exact = _mp_cks(rho, delta)
        ours = zcdp_to_approx_dp(rho, delta, "cks")
        assert exact > 0
        assert ours >= exact, (ours, exact)
        assert (ours - exact) / exact <= 1e-9, (ours, exact)


# Hostile input (issue: clear errors for bad input, no silent NaN, no hangs)


def test_gaussian_zcdp_beyond_the_float_range_is_an_error_and_tiny_squares_are_fine() -> None:
    with pytest.raises(ValueError, match="sigma"):  # rho = 5e599 was returned as inf
        gaussian_zcdp(1e-300)
    # both squares overflow (or underflow): inf / inf and 0 / 0 were NaN
    assert gaussian_zcdp(1e200, 1e200) == 0.5
    assert gaussian_zcdp(1e-200, 1e-200) == 0.5


def test_cks_inverse_at_tiny_and_huge_eps() -> None:
    # the answer underflows to 0 here (rho ~ eps^2 / (4 ln(1 / delta))): the search evaluated the
    # conversion at rho = 0 and divided by zero inside scipy's optimizer
    assert approx_dp_to_zcdp(1e-300, 1e-300, method="cks") == 0.0
    tiny, zero = approx_dp_to_zcdp(5e-324, 0.5, "cks"), approx_dp_to_zcdp(0.0, 0.5, "cks")
    assert zero <= tiny <= zero * (1 + 1e-12)
    for call in (lambda: approx_dp_to_zcdp(1.7e308, 1e-10, method="cks"),
                 lambda: zcdp_to_approx_dp(1.7e308, 1e-10)):
        with pytest.raises(ValueError, match="must be at most 1e\\+300"):
            call()


def test_zcdp_compose_overflow_is_an_error() -> None:
    with pytest.raises(ValueError, match="rhos"):
        zcdp_compose([1.5e308, 1.5e308])


# --- issue 32: conversions at every level (sweeps: test_level_sweeps_conversions.py) ---


def _cks_bound_mp(rho: float, delta: float, gap: mpmath.mpf) -> mpmath.mpf:
    """The CKS expression at alpha = 1 + gap, from Canonne, Kamath & Steinke (2020), 40 digits."""
    with mpmath.workdps(40):
        alpha = 1 + mpmath.mpf(gap)
        return (alpha * rho + mpmath.log(1 - 1 / alpha)
                - (mpmath.log(alpha) + mpmath.log(delta)) / (alpha - 1))


def test_cks_inverse_converges_at_tiny_eps() -> None:
    # formerly RuntimeError("Failed to converge after 100 iterations") for eps below ~1e-175
    for eps in (1e-300, 1e-250, 1e-200):
        for delta in (1e-100, 1e-10, 1e-3, 1 - 1e-10):
            rho = approx_dp_to_zcdp(eps, delta, "cks")
            assert rho >= approx_dp_to_zcdp(0.0, delta, "cks") > 0
            assert zcdp_to_approx_dp(rho, delta, "cks") <= eps


def test_cks_finds_the_optimum_near_delta_one() -> None:
    # the optimal order is alpha - 1 ~ ln(1/delta), far below the Bun-Steinke optimum: formerly
    # 8.79 at (40, 1 - 1e-16), where the order alpha - 1 = 1.1e-16 alone certifies 3.27
    value = zcdp_to_approx_dp(40.0, 1 - 1e-16, "cks")
    log_inv = -np.log1p(-1e-16)
    witness = _cks_bound_mp(40.0, 1 - 1e-16, mpmath.mpf(log_inv))
    assert value <= witness
    assert value == pytest.approx(3.2631994303229, rel=1e-12)  # the 40-digit infimum (sweep test)
    assert approx_dp_to_zcdp(3.0, 1 - 1e-16, "cks") == pytest.approx(39.7368005696771, rel=1e-12)


def test_bs_inverse_terminates_at_subnormal_delta() -> None:
    # formerly an endless loop: the relative rounding step of a subnormal rho underflowed to 0
    for eps in (1e-160, 1e-155, 1e-152):
        rho = approx_dp_to_zcdp(eps, 5e-324)
        assert zcdp_to_approx_dp(rho, 5e-324) <= eps
        exact = (mpmath.mpf(eps) / (2 * mpmath.sqrt(-mpmath.log(mpmath.mpf(5e-324))))) ** 2
        assert rho <= exact and rho >= exact * (1 - 1e-6) - 1e-323


def test_gaussian_zcdp_never_vanishes_and_keeps_digits_at_subnormal_squares() -> None:
    # formerly 0.0 for sensitivity / sigma below about 1e-162, and the subnormal squares lost
    # digits: gaussian_zcdp(1.0408e-160, 1.2041e-160) gave 0.66895 for the exact 0.66917
    sigma, sens = 1.0408163265306123e-160, 1.2040816326530612e-160
    exact = mpmath.mpf(sens) ** 2 / (2 * mpmath.mpf(sigma) ** 2)
    assert gaussian_zcdp(sigma, sens) == pytest.approx(float(exact), rel=1e-15)
    for sigma, sens in ((1.0, 1e-170), (1e200, 1.0), (1e300, 1e-300)):
        assert gaussian_zcdp(sigma, sens) > 0
