"""Cross-check against Google's dp-accounting (PLD, analytic Gaussian and RDP accountants).

dp-accounting's privacy loss distributions (PLDs) put every privacy loss on a grid of step
``DVI`` (its ``value_discretization_interval``). The *pessimistic* PLD rounds each loss up, the
*optimistic* one rounds it down, so for an exact curve delta(eps) and its inverse eps(delta):

* shifting a loss by less than DVI shifts the hockey-stick curve by less than DVI in eps:
  ``delta(eps) <= delta_pess(eps) <= delta(eps - DVI)`` and
  ``delta(eps + DVI) <= delta_opt(eps) <= delta(eps)``; hence
  ``eps(delta) <= eps_pess(delta) <= eps(delta) + DVI`` and
  ``eps(delta) - DVI <= eps_opt(delta) <= eps(delta)``;
* composing ``k`` PLDs adds the roundings: ``k * DVI`` replaces ``DVI``;
* the Gaussian PLD also truncates tails of mass below e^-50 (about 2e-22): the pessimistic side
  adds it to delta, the optimistic side drops it, so delta bounds get ``TAIL`` of slack;
* for the Gaussian, the pessimistic PLD is built by connect-the-dots, which is exact on the grid
  (no rounding of delta at grid points), and it is then much closer than DVI.

Our exact quantities must therefore lie between the two estimates (up to float noise ``FLOAT``
and our own documented safe-side rounding: gdp_delta <= 1e-11 relative above exact,
epsilon_for_delta <= 1e-12 above exact), and our upper bounds (advanced composition, RDP-type
conversions) must never fall below dp-accounting's optimistic estimate.
"""

from __future__ import annotations

import math
from functools import cache

import dp_accounting
import numpy as np
import pytest
from dp_accounting.pld import common
from dp_accounting.pld import privacy_loss_distribution as pld

from shuffle_lib import gaussian_sigma, krr_channel
from shuffle_lib.accounting import (
    advanced_composition,
    channel_delta,
    epsilon_for_delta,
    fmt21_numerical_epsilon,
    gdp_delta,
    gdp_epsilon,
    gdp_mu,
    hockey_stick_divergence,
    optimal_composition_delta,
    optimal_composition_epsilon,
    zcdp_to_approx_dp,
)
from shuffle_lib.accounting.high_precision import clone_pair_laws, clone_probability_mp

DVI = 2e-4  # PLD grid step (value_discretization_interval)
TAIL = 1e-20  # above the Gaussian PLD's truncated tail mass, e^-50 = 1.9e-22
FLOAT = 1e-9  # relative slack for floating-point differences between the two libraries
FFT = 1e-13  # absolute float noise of delta from dp-accounting's FFT self-composition


def _bisect_tol(eps: float) -> float:
    """epsilon_for_delta rounds up by at most 1e-12 * max(1, eps) (its bisection tolerance)."""
    return 1e-12 * max(1.0, eps)


def _between(low: float, value: float, high: float, rel: float = FLOAT, abs_: float = 0.0) -> bool:
    return low * (1 - rel) - abs_ <= value <= high * (1 + rel) + abs_


# --- (a) Gaussian / GDP: delta(eps) and eps(delta) ----------------------------------------------

SIGMAS = [0.5, 1.0, 3.0]  # noise multipliers; the Gaussian mechanism is mu-GDP with mu = 1 / sigma


@cache
def _gaussian_plds(sigma: float) -> tuple[pld.PrivacyLossDistribution, ...]:
    pessimistic = pld.from_gaussian_mechanism(
        sigma, pessimistic_estimate=True, value_discretization_interval=DVI
    )
    optimistic = pld.from_gaussian_mechanism(
        sigma, pessimistic_estimate=False, value_discretization_interval=DVI, use_connect_dots=False
    )
    return pessimistic, optimistic


@pytest.mark.parametrize("sigma", SIGMAS)
@pytest.mark.parametrize("eps", [0.0, 0.3, 1.0, 2.5, 6.0])
def test_gaussian_delta_lies_between_the_pld_estimates(sigma: float, eps: float) -> None:
    pessimistic, optimistic = _gaussian_plds(sigma)
    mu = 1.0 / sigma
    ours = gdp_delta(mu, eps)
    d_pess = float(pessimistic.get_delta_for_epsilon(eps))
    d_opt = float(optimistic.get_delta_for_epsilon(eps))
    assert _between(d_opt, ours, d_pess, abs_=TAIL), (d_opt, ours, d_pess)
    # and both estimates stay within one grid step (in eps) of ours
    if eps >= DVI:
        assert d_pess <= gdp_delta(mu, eps - DVI) * (1 + FLOAT) + TAIL
    assert d_opt >= gdp_delta(mu, eps + DVI) * (1 - FLOAT) - TAIL


@pytest.mark.parametrize("sigma", SIGMAS)
@pytest.mark.parametrize("delta", [1e-2, 1e-5, 1e-10])
def test_gaussian_epsilon_lies_between_the_pld_estimates(sigma: float, delta: float) -> None:
    pessimistic, optimistic = _gaussian_plds(sigma)
    ours = gdp_epsilon(1.0 / sigma, delta)
    e_pess = pessimistic.get_epsilon_for_delta(delta)
    e_opt = optimistic.get_epsilon_for_delta(delta)
    assert e_opt <= ours + FLOAT * ours  # our upper bound is never below their optimistic one
    assert ours <= e_pess + FLOAT * ours  # and, being exact, not above their pessimistic one
    assert e_pess - ours <= DVI and ours - e_opt <= DVI  # within one grid step either way


@pytest.mark.parametrize("sigma", [0.2, 0.5, 1.0, 3.0, 20.0])
@pytest.mark.parametrize("delta", [1e-3, 1e-8, 1e-14])
def test_gaussian_epsilon_matches_the_analytic_gaussian_accountant(
    sigma: float, delta: float
) -> None:
    # dp_accounting.get_epsilon_gaussian solves Balle & Wang's equation (the same delta(eps))
    # with brentq, xtol 1e-12, no directed rounding: agreement to 1e-9 relative both ways
    theirs = dp_accounting.get_epsilon_gaussian(sigma, delta)
    ours = gdp_epsilon(1.0 / sigma, delta)
    assert ours == pytest.approx(theirs, rel=FLOAT, abs=1e-11)
    assert ours >= theirs * (1 - FLOAT) - 1e-11


# --- (b) analytic Gaussian calibration: sigma for a target (eps, delta) -------------------------


@pytest.mark.parametrize("eps", [0.1, 1.0, 4.0])
@pytest.mark.parametrize("delta", [1e-5, 1e-10])
def test_analytic_sigma_matches_dp_accounting_and_passes_its_pld(eps: float, delta: float) -> None:
    sigma = gaussian_sigma(eps, delta, calibration="analytic")
    theirs = dp_accounting.get_sigma_gaussian(eps, delta)  # brentq on sigma, xtol 1e-12
    assert sigma == pytest.approx(theirs, rel=FLOAT)
    assert sigma >= theirs * (1 - FLOAT)  # ours is rounded up (more noise), never less
    assert 1.0 / sigma <= gdp_mu(eps, delta)  # consistent with our own inverse
    # Judged by dp-accounting's own PLD: the optimistic delta at eps never exceeds the target
    # (it is below the exact one), and the pessimistic one is within one grid step of it.
    pessimistic = pld.from_gaussian_mechanism(
        sigma, pessimistic_estimate=True, value_discretization_interval=DVI
    )
    optimistic = pld.from_gaussian_mechanism(
        sigma, pessimistic_estimate=False, value_discretization_interval=DVI, use_connect_dots=False
    )
    assert optimistic.get_delta_for_epsilon(eps) <= delta
    assert pessimistic.get_delta_for_epsilon(eps + DVI) <= delta * (1 + FLOAT) + TAIL
    # and the calibration is tight: slightly less noise already fails the pessimistic check
    tighter = pld.from_gaussian_mechanism(
        sigma * (1 - 1e-3), pessimistic_estimate=False, value_discretization_interval=DVI,
        use_connect_dots=False,
    )
    assert tighter.get_delta_for_epsilon(eps - DVI) > delta


# --- (c) k-ary randomized response: finite-channel accountant vs from_randomized_response -------


@cache
def _rr_plds(k: int, eps: float) -> tuple[pld.PrivacyLossDistribution, ...]:
    # dp-accounting's RR outputs a uniform bucket with probability p, so it keeps the input with
    # probability 1 - p + p / k; ours keeps it with e^eps / (e^eps + k - 1): p = k / (e^eps + k - 1)
    noise = k / (math.exp(eps) + k - 1)
    return tuple(
        pld.from_randomized_response(
            noise, k, pessimistic_estimate=pessimistic, value_discretization_interval=DVI
        )
        for pessimistic in (True, False)
    )


@pytest.mark.parametrize("k", [2, 3, 10])
@pytest.mark.parametrize("eps", [0.1, 1.0, 3.3])
def test_randomized_response_delta_and_epsilon_match_the_pld(k: int, eps: float) -> None:
    channel = krr_channel(k, eps)
    pessimistic, optimistic = _rr_plds(k, eps)
    for target_eps in (0.0, eps / 3, eps / 2, eps - 0.01):
        ours = channel_delta(channel, target_eps)
        d_pess = float(pessimistic.get_delta_for_epsilon(target_eps))
        d_opt = float(optimistic.get_delta_for_epsilon(target_eps))
        assert _between(d_opt, ours, d_pess, abs_=1e-15), (target_eps, d_opt, ours, d_pess)
    assert channel_delta(channel, eps) <= 1e-15  # pure eps-DP: delta(eps) = 0
    for delta in (0.0, 1e-6, 0.01, 0.1):
        ours = epsilon_for_delta(channel[0], channel[1], delta)  # exact, rounded up
        e_pess = pessimistic.get_epsilon_for_delta(delta)
        e_opt = optimistic.get_epsilon_for_delta(delta)
        assert e_opt <= ours <= e_pess + _bisect_tol(ours), (delta, e_opt, ours, e_pess)
        assert e_pess - e_opt <= DVI + 1e-12  # one grid step: RR has only the losses 0, +-eps


# --- (d) a general pair of finite distributions vs from_two_probability_mass_functions ----------


def _log_pmf(p: np.ndarray) -> dict[int, float]:
    return {i: math.log(v) for i, v in enumerate(p) if v > 0}


@cache
def _random_pair(seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    p, q = rng.dirichlet(np.full(8, 0.7), size=2)
    if seed % 2:  # outcomes possible under one law only: infinite privacy loss, tiny masses
        p[0], p[1] = p[0] + 1e-4 - p[0], p[1] + p[0] - 1e-4
        q[2], q[3] = 0.0, q[3] + q[2]
        p[5], p[6] = 0.0, p[6] + p[5]
    return p, q


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_finite_pair_hockey_stick_and_epsilon_match_the_pld(seed: int) -> None:
    p, q = _random_pair(seed)
    estimates = [
        pld.from_two_probability_mass_functions(
            _log_pmf(q), _log_pmf(p), pessimistic_estimate=pessimistic,
            value_discretization_interval=DVI, symmetric=False,
        )
        for pessimistic in (True, False)
    ]
    pessimistic, optimistic = estimates
    for eps in (0.0, 0.05, 0.4, 1.5):
        # dp-accounting's asymmetric PLD reports the worse of H(P||Q) and H(Q||P)
        ours = max(hockey_stick_divergence(p, q, eps), hockey_stick_divergence(q, p, eps))
        d_pess = float(pessimistic.get_delta_for_epsilon(eps))
        d_opt = float(optimistic.get_delta_for_epsilon(eps))
        assert _between(d_opt, ours, d_pess, abs_=1e-15), (eps, d_opt, ours, d_pess)
    for delta in (1e-6, 1e-3, 0.05, 0.2):
        ours = epsilon_for_delta(p, q, delta)
        e_pess = pessimistic.get_epsilon_for_delta(delta)
        e_opt = optimistic.get_epsilon_for_delta(delta)
        if math.isinf(e_pess):  # more than delta of mass has infinite loss: both must say so
            assert math.isinf(ours) and math.isinf(e_opt)
            continue
        assert e_opt <= ours <= e_pess + _bisect_tol(ours), (delta, e_opt, ours, e_pess)
        assert e_pess - e_opt <= DVI + 1e-12


def test_the_infinite_loss_cases_are_exercised() -> None:
    p, q = _random_pair(1)
    assert epsilon_for_delta(p, q, 1e-6) == math.inf  # the mass 1e-4 of P where Q = 0
    assert math.isfinite(epsilon_for_delta(p, q, 1e-3)) or q[p == 0].sum() > 1e-3


# --- (e) composition of k pure eps0-DP mechanisms -----------------------------------------------


@cache
def _composed_plds(eps0: float, k: int) -> tuple[pld.PrivacyLossDistribution, ...]:
    # pessimistic: dp-accounting's own worst case for an (eps0, 0)-DP mechanism (losses +-eps0,
    # rounded up); optimistic: the same two-point law with the losses rounded down
    pessimistic = pld.from_privacy_parameters(
        common.DifferentialPrivacyParameters(eps0, 0.0), value_discretization_interval=DVI
    )
    up = 1.0 / (1.0 + math.exp(-eps0))
    optimistic = pld.PrivacyLossDistribution.create_from_rounded_probability(
        {math.floor(eps0 / DVI): up, math.floor(-eps0 / DVI): 1.0 - up}, 0.0, DVI,
        pessimistic_estimate=False,
    )
    # self_compose's tail truncation moves up to 1e-15 of mass to the infinite loss for the
    # optimistic PLD too, which is then no lower bound (it moved eps(1e-9) up by 8e-8 at
    # eps0 = 0.1, k = 50): the optimistic side is composed without truncation
    return pessimistic.self_compose(k), optimistic.self_compose(k, tail_mass_truncation=0.0)


# eps0 off the DVI grid, so that the two estimates differ (0.1 = 500 DVI exactly, and even
# 0.13 / 2e-4 == 650.0 in floating point, would make them equal)
@pytest.mark.parametrize(("eps0", "k"), [(0.1234567, 50), (0.3711, 10), (1.0123, 5), (0.0517, 200)])
def test_optimal_composition_matches_the_composed_pld(eps0: float, k: int) -> None:
    pessimistic, optimistic = _composed_plds(eps0, k)
    slack = k * DVI  # each of the k losses is rounded by less than DVI
    for eps in (0.0, 0.25 * k * eps0, math.sqrt(k) * eps0, 2 * math.sqrt(k) * eps0):
        ours = optimal_composition_delta(eps0, k, eps)
        d_pess = float(pessimistic.get_delta_for_epsilon(eps))
        d_opt = float(optimistic.get_delta_for_epsilon(eps))
        assert _between(d_opt, ours, d_pess, abs_=FFT), (eps, d_opt, ours, d_pess)
        # within k grid steps in eps on either side
        if eps >= slack:
            assert d_pess <= optimal_composition_delta(eps0, k, eps - slack) + FFT
        assert d_opt >= optimal_composition_delta(eps0, k, eps + slack) - FFT
    # delta >= 1e-6 keeps the FFT noise (FFT in delta) small next to delta
    for delta in (1e-6, 1e-4, 1e-2):
        ours = optimal_composition_epsilon(eps0, k, delta)
        e_pess = pessimistic.get_epsilon_for_delta(delta)
        e_opt = optimistic.get_epsilon_for_delta(delta)
        # delta_opt <= delta_exact + FFT, so eps_opt <= exact eps at delta - FFT (and the mirror
        # image for the pessimistic side); our answer is exact, rounded up by _bisect_tol
        assert e_opt <= optimal_composition_epsilon(eps0, k, delta - FFT), (e_opt, ours)
        assert optimal_composition_epsilon(eps0, k, delta + FFT) <= e_pess + _bisect_tol(ours)
        assert e_pess - ours <= slack and ours - e_opt <= slack, (e_opt, ours, e_pess)
        # the classical upper bounds are never below dp-accounting's optimistic estimate
        advanced, _ = advanced_composition(eps0, 0.0, k, delta)
        assert advanced >= e_opt and advanced >= ours
        assert k * eps0 >= e_opt


# --- RDP: dp-accounting's RDP-to-(eps, delta) conversion is the CKS bound at each order ---------


FINE_ORDERS = np.concatenate([np.linspace(1.02, 10, 2000), np.geomspace(10, 1e4, 2000)[1:]])


@pytest.mark.parametrize("rho", [0.005, 0.07, 1.0, 15.29])
@pytest.mark.parametrize("delta", [1e-3, 1e-10])
def test_cks_conversion_is_the_infimum_of_the_rdp_accountant(rho: float, delta: float) -> None:
    # dp-accounting minimizes alpha rho + log(1 - 1/alpha) - log(delta alpha)/(alpha - 1) over
    # its orders (Canonne, Kamath & Steinke 2020, Prop. 12): our CKS conversion minimizes the same
    # expression over every alpha > 1, so it is at most theirs (1e-12: our safe rounding); with
    # their default orders the gap is their grid's (at most 1.7e-3 relative here: orders step
    # 0.1, then 1, then double above 64), with a fine grid (steps 0.0045 up to 10, then 0.35%)
    # it nearly vanishes (1.6e-6 here); the quadratic minimum makes the gap about f'' h^2 / 8.
    ours = zcdp_to_approx_dp(rho, delta, method="cks")
    for orders, gap in ((None, 5e-3), (FINE_ORDERS, 1e-5)):
        accountant = dp_accounting.rdp.RdpAccountant(orders=orders)
        accountant.compose(dp_accounting.ZCDpEvent(rho))
        theirs = accountant.get_epsilon(delta)
        assert ours <= theirs * (1 + 1e-12), (ours, theirs)
        assert theirs - ours <= gap * theirs, (ours, theirs)
    # Bun-Steinke is the cruder form of the same bound; the Gaussian with this rho (noise
    # multiplier 1 / sqrt(2 rho)) has the same RDP curve, and its exact epsilon is below both
    assert zcdp_to_approx_dp(rho, delta) >= theirs
    gaussian = dp_accounting.rdp.RdpAccountant()
    gaussian.compose(dp_accounting.GaussianDpEvent(1.0 / math.sqrt(2 * rho)))
    assert gaussian.get_epsilon(delta) >= gdp_epsilon(math.sqrt(2 * rho), delta)


@cache
def _clone_pair_plds(eps0: float, n: int) -> tuple[pld.PrivacyLossDistribution, ...]:
    """dp-accounting's PLDs (pessimistic, optimistic) of the clone pair, built from its two laws
    listed outcome by outcome."""
    first, second = clone_pair_laws(eps0, n, clone_probability_mp(eps0))
    log_p = {o: math.log(float(v)) for o, v in first.items() if v > 0}
    log_q = {o: math.log(float(v)) for o, v in second.items() if v > 0}
    return tuple(
        pld.from_two_probability_mass_functions(
            log_q, log_p, pessimistic_estimate=pessimistic, value_discretization_interval=DVI
        )
        for pessimistic in (True, False)
    )


@pytest.mark.parametrize(("eps0", "n"), [(0.5, 2), (2.0, 30), (1.0, 120), (4.0, 150)])
@pytest.mark.parametrize("delta", [1e-3, 1e-6])
def test_clone_bound_lies_between_the_pld_estimates(eps0: float, n: int, delta: float) -> None:
    # the shuffle accountant against an independent library on the same reduction: our certified
    # eps is at least the exact one, hence above the optimistic PLD; it is within 1e-6 relative of
    # the exact one, hence at most the pessimistic PLD plus that
    pessimistic, optimistic = _clone_pair_plds(eps0, n)
    ours = fmt21_numerical_epsilon(eps0, n, delta)
    low = optimistic.get_epsilon_for_delta(delta)
    high = pessimistic.get_epsilon_for_delta(delta)
    assert low - 1e-12 <= ours <= high + 1e-6 * ours + 1e-12
    assert high - low <= 2 * DVI  # the PLD brackets are narrow enough to mean something
