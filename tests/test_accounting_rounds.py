"""Composition over shuffled rounds (``accounting.rounds``): the PLDs against the certified
single-round accountants, a brute-force two-round composition of the exact pairs (an independent
route), basic and advanced composition, and monotonicity in the number of rounds."""

from __future__ import annotations

import math

import mpmath as mp
import numpy as np
import pytest
from scipy.stats import binom, norm

from shuffle_lib.accounting import (
    advanced_composition,
    clone_numerical_epsilon,
    clone_probability,
    local_epsilon_for_target,
    shuffled_rr_exact_epsilon,
)
from shuffle_lib.accounting.rounds import (
    RDP_ORDERS,
    composed_epsilon,
    rdp_to_epsilon,
    rounds_local_epsilon,
    shuffled_rounds_epsilon,
    shuffled_rounds_rdp_epsilon,
    shuffled_rr_pld,
    shuffled_rr_rounds_floor,
    stronger_clone_pld,
    stronger_clone_rdp,
)

CASES = [(1.0, 10**4), (4.0, 10**5), (8.0, 10**6)]


@pytest.mark.parametrize(("eps0", "n"), CASES)
def test_one_round_matches_the_certified_accountants(eps0: float, n: int) -> None:
    certified = float(clone_numerical_epsilon(eps0, n, 1e-6, "stronger"))
    upper = stronger_clone_pld(eps0, n).get_epsilon_for_delta(1e-6)
    assert certified * (1 - 1e-6) <= upper <= certified * 1.003
    exact = shuffled_rr_exact_epsilon(eps0, n, 1e-6, others_ones=0)
    floor = shuffled_rr_pld(eps0, n).get_epsilon_for_delta(1e-6)
    assert exact * 0.997 <= floor <= exact * (1 + 1e-9)


def _clone_pair(eps0: float, n: int) -> tuple[np.ndarray, np.ndarray]:
    """The stronger clone pair's two laws on (c, x), by direct enumeration."""
    q, k = clone_probability(eps0, "stronger"), 1 / (1 + math.exp(-eps0))
    upper, lower = [], []
    for c in range(n):
        w = binom.pmf(c, n - 1, q)
        a = binom.pmf(np.arange(c + 2) - 1, c, 0.5)  # A = x - 1
        b = binom.pmf(np.arange(c + 2), c, 0.5)  # A = x
        upper.append(w * (k * a + (1 - k) * b))
        lower.append(w * ((1 - k) * a + k * b))
    return np.concatenate(upper), np.concatenate(lower)


def _rr_pair(eps0: float, n: int) -> tuple[np.ndarray, np.ndarray]:
    f = 1 / (1 + math.exp(eps0))
    y = np.arange(n + 1)
    prev, here = binom.pmf(y - 1, n - 1, f), binom.pmf(y, n - 1, f)
    return (1 - f) * prev + f * here, f * prev + (1 - f) * here


def _two_rounds_delta(p: np.ndarray, q: np.ndarray, eps: float) -> float:
    return float(np.maximum(np.outer(p, p) - math.exp(eps) * np.outer(q, q), 0).sum())


@pytest.mark.parametrize("eps0", [0.5, 2.0])
def test_two_rounds_against_brute_force(eps0: float) -> None:
    n = 40
    upper_pld = stronger_clone_pld(eps0, n).self_compose(2)
    floor_pld = shuffled_rr_pld(eps0, n).self_compose(2)
    p, q = _clone_pair(eps0, n)
    rp, rq = _rr_pair(eps0, n)
    for eps in (0.0, 0.2, 0.6, 1.0):
        exact_upper = _two_rounds_delta(p, q, eps)
        exact_rr = max(_two_rounds_delta(rp, rq, eps), _two_rounds_delta(rq, rp, eps))
        assert upper_pld.get_delta_for_epsilon(eps) >= exact_upper - 1e-12
        assert upper_pld.get_delta_for_epsilon(eps) <= exact_upper + 0.01
        assert floor_pld.get_delta_for_epsilon(eps) <= exact_rr + 1e-12
        assert exact_rr <= exact_upper + 1e-12


@pytest.mark.parametrize(("eps0", "n"), CASES)
def test_many_rounds_beat_basic_and_advanced_composition(eps0: float, n: int) -> None:
    previous = 0.0
    for rounds in (1, 10, 100):
        upper = shuffled_rounds_epsilon(eps0, n, 1e-6, rounds)
        floor = shuffled_rr_rounds_floor(eps0, n, 1e-6, rounds)
        assert floor <= upper and upper > previous
        previous = upper
        if rounds > 1:
            single = float(clone_numerical_epsilon(eps0, n, 1e-6 / (2 * rounds), "stronger"))
            assert upper <= rounds * single  # basic composition at delta split
            advanced, total = advanced_composition(single, 1e-6 / (2 * rounds), rounds, 5e-7)
            assert total <= 1e-6 * (1 + 1e-12) and upper <= advanced


def test_floor_stays_finite_where_the_direct_search_gives_infinity() -> None:
    """At n = 1e3, eps0 = 8, 100 rounds dp-accounting's search returns infinity for the floor;
    the bisection on delta gives a finite floor, on its safe side, below the upper bound."""
    composed = shuffled_rr_pld(8.0, 1000).self_compose(100)
    floor = shuffled_rr_rounds_floor(8.0, 1000, 1e-6, 100)
    assert floor == composed_epsilon(shuffled_rr_pld(8.0, 1000), 100, 1e-6, upper=False)
    assert math.isfinite(floor) and floor <= shuffled_rounds_epsilon(8.0, 1000, 1e-6, 100)
    assert composed.get_delta_for_epsilon(floor) > 1e-6
    assert composed.get_delta_for_epsilon(floor * (1 + 1e-8)) <= 1e-6


@pytest.mark.parametrize(("n", "rounds"), [(10**4, 10), (10**5, 100)])
def test_local_level_for_many_rounds_is_certified_and_nearly_largest(n: int, rounds: int) -> None:
    """The level returned is certified for the total budget, 0.2% more is not, and it is above
    the level that basic composition of the one-round certified bound allows."""
    level = rounds_local_epsilon(1.0, n, 1e-6, rounds)
    assert shuffled_rounds_epsilon(level, n, 1e-6, rounds) <= 1.0
    assert shuffled_rounds_epsilon(level * 1.002, n, 1e-6, rounds) > 1.0
    basic = local_epsilon_for_target(1.0 / rounds, n, 1e-6 / rounds, "stronger")
    assert level > basic
    assert rounds_local_epsilon(1.0, 100, 1e-6, 1, eps0_max=0.5) == 0.5  # the cap is certified
    # below the PLD's grid step, basic composition of pure rounds is the better certificate
    assert rounds_local_epsilon(1e-6, 1000, 1e-6, 10) >= 1e-7


def _mp_rdp(eps0: float, n: int, alpha: float) -> mp.mpf:
    """D_alpha of the stronger clone pair at 40 digits: every (c, x), no shortcut."""
    with mp.workdps(40):
        p = mp.e ** mp.mpf(eps0)
        q, k = 2 / (p + 1), p / (p + 1)
        total = mp.mpf(0)
        for c in range(n):
            w = mp.binomial(n - 1, c) * q**c * (1 - q) ** (n - 1 - c)
            for x in range(c + 2):
                a = mp.binomial(c, x - 1) / mp.mpf(2) ** c if x >= 1 else 0
                b = mp.binomial(c, x) / mp.mpf(2) ** c if x <= c else 0
                upper, lower = w * (k * a + (1 - k) * b), w * ((1 - k) * a + k * b)
                total += upper**alpha * lower ** (1 - alpha)
        return mp.log(total) / (alpha - 1)


@pytest.mark.parametrize(("eps0", "n"), [(0.5, 30), (3.0, 25)])
def test_renyi_divergences_against_40_digits(eps0: float, n: int) -> None:
    """Never below the exact Rényi divergence; above it by about the grid step at most."""
    orders = np.array([1.5, 2.0, 8.0, 64.0])
    got = stronger_clone_rdp(eps0, n, orders, discretization=1e-4)
    for alpha, value in zip(orders, got, strict=True):
        exact = _mp_rdp(eps0, n, float(alpha))
        assert exact * (1 - mp.mpf(1e-12)) <= value <= exact + 2e-4, (alpha, value, exact)


@pytest.mark.parametrize(("eps0", "n"), CASES)
def test_renyi_accounting_is_valid_and_looser_than_the_pld(eps0: float, n: int) -> None:
    """The divergences rise with the order and stay below eps0; the converted epsilon of T
    rounds is at least the PLD bound and at most T eps0 (and falls as delta grows)."""
    rdp = stronger_clone_rdp(eps0, n)
    # non-decreasing up to the masses' allowance, 1e-10 / (order - 1) at most
    assert np.all(np.diff(rdp) >= -2e-10 / (RDP_ORDERS[:-1] - 1))
    assert np.all((rdp > 0) & (rdp <= eps0))
    for rounds in (1, 10, 100):
        renyi = shuffled_rounds_rdp_epsilon(eps0, n, 1e-6, rounds)
        assert shuffled_rounds_epsilon(eps0, n, 1e-6, rounds) <= renyi <= rounds * eps0
        assert shuffled_rounds_rdp_epsilon(eps0, n, 1e-3, rounds) <= renyi


def test_renyi_conversion_is_the_canonne_kamath_steinke_formula() -> None:
    """At one order the conversion is the closed form; over many, the smallest of them; and an
    (alpha, tau)-RDP Gaussian (tau = alpha / (2 sigma^2)) converts above its exact epsilon."""
    sigma, delta = 4.0, 1e-6
    taus = RDP_ORDERS / (2 * sigma**2)
    per_order = taus + np.log1p(-1 / RDP_ORDERS) - (np.log(RDP_ORDERS) + math.log(delta)) / (
        RDP_ORDERS - 1)
    converted = rdp_to_epsilon(RDP_ORDERS, taus, delta)
    assert converted == pytest.approx(per_order.min(), rel=1e-14)
    # the Gaussian mechanism's exact epsilon at delta (Balle & Wang 2018), by bisection
    def gaussian_delta(eps: float) -> float:
        return float(norm.cdf(1 / (2 * sigma) - eps * sigma)
                     - math.exp(eps) * norm.cdf(-1 / (2 * sigma) - eps * sigma))

    low, high = 0.0, 10.0
    for _ in range(200):
        mid = (low + high) / 2
        low, high = (mid, high) if gaussian_delta(mid) > delta else (low, mid)
    assert high <= converted <= 1.3 * high


def test_refuses_what_is_outside_its_range() -> None:
    with pytest.raises(ValueError, match="rounds"):
        shuffled_rounds_epsilon(1.0, 100, 1e-6, 0)
    with pytest.raises(ValueError, match="eps0"):
        stronger_clone_pld(31.0, 100)
    with pytest.raises(ValueError, match="PLD_CELLS_MAX"):
        stronger_clone_pld(0.01, 10**9)
    with pytest.raises(ValueError, match="delta"):
        shuffled_rr_rounds_floor(1.0, 100, 1e-20, 2)
    with pytest.raises(ValueError, match="orders"):
        stronger_clone_rdp(1.0, 100, np.array([1.0, 2.0]))
    with pytest.raises(ValueError, match="rdp"):
        rdp_to_epsilon(np.array([2.0]), np.array([-0.1]), 1e-6)
    with pytest.raises(ValueError, match="rounds"):
        shuffled_rounds_rdp_epsilon(1.0, 100, 1e-6, 0)
    with pytest.raises(ValueError, match="eps"):
        rounds_local_epsilon(0.0, 100, 1e-6, 2)
    with pytest.raises(TypeError, match="pld"):
        composed_epsilon("pld", 2, 1e-6)
    with pytest.raises(ValueError, match="eps0_max"):
        rounds_local_epsilon(1.0, 100, 1e-6, 2, eps0_max=31.0)
