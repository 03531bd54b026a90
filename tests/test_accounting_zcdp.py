"""zCDP: the Gaussian mechanism's rho, conversions to (eps, delta), and the 2020 Census table."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import integrate, stats

from shuffle_lib.accounting import (
    approx_dp_to_zcdp,
    gaussian_zcdp,
    gdp_epsilon,
    zcdp_compose,
    zcdp_to_approx_dp,
)

# seed 003, "Comparisons with 2020 Census": rho (rounded) and the eps printed at delta = 1e-10
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
    assert approx_dp_to_zcdp(0.0, 1e-6, "cks") == 0.0
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
