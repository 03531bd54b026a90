"""f-DP and Gaussian DP: closed forms vs numerical integration, round trips, safe rounding."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import integrate, stats

from shuffle_lib import krr_channel
from shuffle_lib.accounting import (
    approx_dp_tradeoff,
    gdp_compose,
    gdp_delta,
    gdp_epsilon,
    gdp_group,
    gdp_mu,
    gdp_tradeoff,
    tradeoff_chain,
    tradeoff_from_distributions,
)

MUS = [1e-4, 1e-2, 0.5, 1.0, 3.0, 8.0, 20.0]


def _gaussian_hockey_stick(shift: np.ndarray, eps: float) -> float:
    """delta(eps) between N(shift, I) and N(0, I) by direct numerical integration.

    The integrand depends on the data only through the projection on the shift direction,
    but we integrate in the original coordinates (1-D or 2-D) to stay independent of that fact.
    """
    shift = np.atleast_1d(np.asarray(shift, dtype=float))
    scale = float(np.exp(eps))
    if shift.size == 1:
        def gap(x: float) -> float:
            return max(0.0, stats.norm.pdf(x - shift[0]) - scale * stats.norm.pdf(x))

        value, _ = integrate.quad(gap, -12, shift[0] + 12, points=[shift[0] / 2], limit=400)
        return value

    def gap2(y: float, x: float) -> float:
        first = stats.norm.pdf(x - shift[0]) * stats.norm.pdf(y - shift[1])
        return max(0.0, first - scale * stats.norm.pdf(x) * stats.norm.pdf(y))

    value, _ = integrate.dblquad(gap2, -9, shift[0] + 9, -9, shift[1] + 9, epsabs=1e-10)
    return value


@pytest.mark.parametrize("mu", [0.3, 1.0, 2.5])
@pytest.mark.parametrize("eps", [0.0, 0.5, 2.0])
def test_gdp_delta_matches_numerical_integration(mu: float, eps: float) -> None:
    assert gdp_delta(mu, eps) == pytest.approx(_gaussian_hockey_stick(mu, eps), abs=1e-8)


def test_gdp_compose_matches_two_dimensional_integration() -> None:
    mus = [0.8, 1.5]
    for eps in (0.5, 1.5):
        exact = _gaussian_hockey_stick(np.array(mus), eps)
        assert gdp_delta(gdp_compose(mus), eps) == pytest.approx(exact, abs=1e-7)


def test_gdp_group_matches_integration() -> None:
    mu, k, eps = 0.4, 3, 1.0
    assert gdp_delta(gdp_group(mu, k), eps) == pytest.approx(
        _gaussian_hockey_stick(k * mu, eps), abs=1e-8
    )


def test_gdp_delta_is_finite_and_monotone_on_the_whole_grid() -> None:
    mu = np.array(MUS)[:, None]
    eps = np.linspace(0, 50, 201)[None, :]
    delta = gdp_delta(mu, eps)
    assert np.isfinite(delta).all() and (delta >= 0).all() and (delta <= 1).all()
    assert (np.diff(delta, axis=1) <= 1e-15).all()  # decreasing in eps
    assert (np.diff(delta, axis=0) >= -1e-15).all()  # increasing in mu


@settings(max_examples=150, deadline=None)
@given(
    log_mu=st.floats(np.log(1e-4), np.log(20.0)),
    log_delta=st.floats(np.log(1e-300), np.log(0.5)),
)
def test_gdp_epsilon_inverts_gdp_delta_on_the_safe_side(log_mu: float, log_delta: float) -> None:
    mu, delta = float(np.exp(log_mu)), float(np.exp(log_delta))
    eps = gdp_epsilon(mu, delta)
    assert np.isfinite(eps) and eps >= 0
    assert gdp_delta(mu, eps) <= delta  # never under-reports epsilon
    if eps > 0:
        assert gdp_delta(mu, max(eps - 1e-9, 0.0)) >= delta * (1 - 1e-6)  # and is tight
        assert gdp_mu(eps, delta) == pytest.approx(mu, rel=1e-9)  # round trip


def test_round_trip_eps_delta_eps() -> None:
    checked = 0
    for mu in MUS:
        for eps in np.linspace(0.0, 50.0, 101)[1:]:
            delta = gdp_delta(mu, eps)
            if not 1e-300 <= delta <= 0.99:  # underflow, or too flat to invert in floats
                continue
            assert gdp_epsilon(mu, delta) == pytest.approx(eps, abs=1e-9)
            checked += 1
    assert checked > 150


@pytest.mark.parametrize("mu", [1e-6, 1e-4, 1e-2])
@pytest.mark.parametrize("fraction", [1 - 1e-6, 1 - 1e-12])
def test_gdp_epsilon_just_below_delta_at_zero(mu: float, fraction: float) -> None:
    # near eps = 0 the log-space formula and the exact erf value differ in the last digits;
    # the answer must still be finite, small and on the safe side
    delta = gdp_delta(mu, 0.0) * fraction
    eps = gdp_epsilon(mu, delta)
    assert 0 < eps < 1e-6
    assert gdp_delta(mu, eps) <= delta


def test_gdp_mu_is_safe_and_handles_eps_zero() -> None:
    for eps in (0.0, 0.2, 5.0, 50.0):
        for delta in (1e-12, 1e-5, 0.3):
            mu = gdp_mu(eps, delta)
            assert np.isfinite(mu) and mu > 0
            assert gdp_delta(mu, eps) <= delta * (1 + 1e-12)
            assert gdp_delta(mu * (1 + 1e-7), eps) > delta


def test_each_approx_dp_curve_lies_below_gdp_and_touches_it() -> None:
    # Fact 3 as a primal-dual statement: G_mu is the upper envelope of f_{eps, delta(eps)}.
    alpha = np.linspace(0, 1, 20_001)
    for mu in (0.5, 1.0, 2.0):
        g = gdp_tradeoff(mu, alpha)
        for eps in (0.1, 0.8, 2.0):
            gap = g - approx_dp_tradeoff(eps, gdp_delta(mu, eps), alpha)
            assert gap.min() >= -1e-12
            assert gap.min() <= 1e-4


@pytest.mark.parametrize("eps", [0.0, 0.4, 1.0, 4.0])
def test_randomized_response_tradeoff_is_exactly_f_eps_0(eps: float) -> None:
    # Fact 1 is tight: the trade-off curve of eps-RR is f_{eps, 0}.
    channel = krr_channel(2, eps)
    alpha = np.linspace(0, 1, 501)
    exact = tradeoff_from_distributions(channel[0], channel[1], alpha)
    np.testing.assert_allclose(exact, approx_dp_tradeoff(eps, 0.0, alpha), atol=1e-12)


def test_tradeoff_functions_are_valid_tradeoff_curves(rng: np.random.Generator) -> None:
    alpha = np.linspace(0, 1, 401)
    for _ in range(20):
        p, q = rng.dirichlet(np.ones(5)), rng.dirichlet(np.ones(5))
        p[1], p[0] = p[1] + p[0], 0.0  # an outcome impossible under P
        curve = tradeoff_from_distributions(p, q, alpha)
        assert (curve <= 1 - alpha + 1e-12).all()
        assert (np.diff(curve) <= 1e-12).all()
        assert (np.diff(curve, 2) >= -1e-9).all()  # convex
    for curve in (gdp_tradeoff(1.0, alpha), approx_dp_tradeoff(1.0, 0.01, alpha)):
        assert (curve <= 1 - alpha + 1e-12).all() and (np.diff(curve) <= 1e-12).all()


def test_gdp_compose_and_group_basic_facts() -> None:
    assert gdp_compose([0.5] * 16) == pytest.approx(2.0)
    assert gdp_group(np.array([0.1, 0.2]), 4) == pytest.approx([0.4, 0.8])


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: gdp_delta(-1.0, 1.0), "mu must be finite and > 0, got -1.0"),
        (lambda: gdp_delta(0.0, 1.0), "mu"),
        (lambda: gdp_delta(1.0, -0.1), "eps must be >= 0"),
        (lambda: gdp_epsilon(1.0, 0.0), r"delta must lie in \(0, 1\)"),
        (lambda: gdp_epsilon(1.0, 1.0), "delta"),
        (lambda: gdp_mu(1.0, 1.5), "delta"),
        (lambda: gdp_tradeoff(1.0, 1.2), r"alpha must lie in \[0, 1\]"),
        (lambda: approx_dp_tradeoff(1.0, -0.1, 0.5), "delta"),
        (lambda: gdp_compose([]), "empty"),
        (lambda: gdp_group(1.0, 0), "k must be an integer >= 1"),
        (lambda: tradeoff_from_distributions([0.5, 0.5], [0.2, 0.2], 0.1), "sum to 1"),
    ],
)
def test_bad_input_raises(call, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        call()


def test_tradeoff_chain_is_a_valid_lower_bound_on_finite_triples(rng: np.random.Generator) -> None:
    alphas = np.linspace(0, 1, 201)
    for _ in range(20):
        p, q, r = rng.dirichlet(np.ones(6), size=3)

        def f(a: np.ndarray, p=p, q=q) -> np.ndarray:
            return tradeoff_from_distributions(p, q, a)

        def g(a: np.ndarray, q=q, r=r) -> np.ndarray:
            return tradeoff_from_distributions(q, r, a)

        direct = tradeoff_from_distributions(p, r, alphas)
        assert np.all(direct >= tradeoff_chain(f, g, alphas) - 1e-12)


def test_tradeoff_chain_is_exact_for_gaussian_shifts() -> None:
    alphas = np.linspace(0, 1, 101)
    chained = tradeoff_chain(lambda a: gdp_tradeoff(0.7, a), lambda a: gdp_tradeoff(1.1, a), alphas)
    np.testing.assert_allclose(chained, gdp_tradeoff(1.8, alphas), atol=1e-12)


def test_tradeoff_chain_rejects_functions_leaving_the_unit_interval() -> None:
    with pytest.raises(ValueError, match="f\\(alpha\\)"):
        tradeoff_chain(lambda a: a + 2, lambda a: a, 0.5)


# Hostile input (issue: clear errors for bad input, no silent NaN, no hangs)


def test_gdp_delta_at_the_audited_extremes_is_the_smallest_double() -> None:
    # exact delta far below 5e-324 (a = eps / mu - mu / 2 is astronomically large): formerly NaN
    assert gdp_delta(1e-300, 1.0) == 5e-324
    assert gdp_delta(1.0, 1e300) == 5e-324


def test_gdp_mu_at_a_subnormal_eps_is_the_eps_zero_answer() -> None:
    # the bracket ln(2 eps / ...) underflowed: "math domain error" from math.log
    tiny, zero = gdp_mu(5e-324, 1e-5), gdp_mu(0.0, 1e-5)
    assert zero <= tiny <= zero * (1 + 1e-12)


@pytest.mark.parametrize("bad", [None, 3.5, "x"])
def test_tradeoff_chain_refuses_what_is_not_callable(bad) -> None:
    def f(a):
        return gdp_tradeoff(1.0, a)

    with pytest.raises(TypeError, match="f must be a callable"):
        tradeoff_chain(bad, f, 0.1)
    with pytest.raises(TypeError, match="g must be a callable"):
        tradeoff_chain(f, bad, 0.1)


def test_gdp_compose_and_group_do_not_overflow_silently() -> None:
    assert gdp_compose([1e300, 1e300]) == pytest.approx(np.sqrt(2) * 1e300, rel=1e-15)
    assert gdp_compose([3e-300, 4e-300]) == pytest.approx(5e-300, rel=1e-15)  # squares underflow
    with pytest.raises(ValueError, match="mus"):
        gdp_compose([1.5e308, 1.5e308])
    with pytest.raises(ValueError, match="k \\* mu"):
        gdp_group(1e308, 3)


def test_distributions_given_as_strings_are_a_type_error() -> None:
    with pytest.raises(TypeError, match="p must be"):
        tradeoff_from_distributions(np.array(["a", "b"]), [0.5, 0.5], 0.1)


# --- issue 32: what a trade-off callable returns is checked, naming the argument -----------------

@pytest.mark.parametrize(
    ("f", "error", "message"),
    [
        (lambda a: 0.5, ValueError, "f must return an array of the shape of its argument"),
        (lambda a: np.full(1, 0.5), ValueError, "f must return an array of the shape"),
        (lambda a: np.zeros((3, 3)), ValueError, "f must return an array of the shape"),
        (lambda a: np.full(a.shape, np.nan), ValueError, "f must return finite values"),
        (lambda a: np.full(a.shape, np.inf), ValueError, "f must return finite values"),
        (lambda a: -a, ValueError, "f must return type II errors in \\[0, 1\\]"),
        (lambda a: None, TypeError, "f must return numbers"),
        (lambda a: "0.5", TypeError, "f must return numbers"),
        (lambda a: np.array(["x"] * a.size), TypeError, "f must return real numbers"),
        (lambda a: [[0.1], [0.2, 0.3]], ValueError, "f must return an array of the shape"),
    ],
)
def test_tradeoff_chain_validates_what_f_returns(f, error, message: str) -> None:
    # formerly a scalar or a (1,)-array from f was broadcast silently against three alphas
    with pytest.raises(error, match=message):
        tradeoff_chain(f, lambda a: gdp_tradeoff(1.0, a), np.array([0.1, 0.2, 0.3]))


@pytest.mark.parametrize("g", [lambda a: 0.5, lambda a: np.full(a.shape, np.nan), lambda a: a - 2])
def test_tradeoff_chain_validates_what_g_returns(g) -> None:
    with pytest.raises(ValueError, match=r"^g must return"):
        tradeoff_chain(lambda a: gdp_tradeoff(1.0, a), g, np.array([0.1, 0.2, 0.3]))


def test_tradeoff_chain_accepts_lists_and_scalar_alpha() -> None:
    alphas = [0.1, 0.2, 0.3]
    listed = tradeoff_chain(lambda a: list(gdp_tradeoff(1.0, a)), lambda a: gdp_tradeoff(0.5, a),
                            np.array(alphas))
    np.testing.assert_allclose(listed, gdp_tradeoff(1.5, np.array(alphas)), atol=1e-12)
    assert np.isclose(tradeoff_chain(lambda a: gdp_tradeoff(1.0, a),
                                     lambda a: gdp_tradeoff(0.5, a), 0.1), gdp_tradeoff(1.5, 0.1))
