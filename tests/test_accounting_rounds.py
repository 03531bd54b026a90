"""Composition over shuffled rounds (``accounting.rounds``): the PLDs against the certified
single-round accountants, a brute-force two-round composition of the exact pairs (an independent
route), basic and advanced composition, and monotonicity in the number of rounds."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import binom

from shuffle_lib.accounting import (
    advanced_composition,
    clone_numerical_epsilon,
    clone_probability,
    shuffled_rr_exact_epsilon,
)
from shuffle_lib.accounting.rounds import (
    shuffled_rounds_epsilon,
    shuffled_rr_pld,
    shuffled_rr_rounds_floor,
    stronger_clone_pld,
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


def test_refuses_what_is_outside_its_range() -> None:
    with pytest.raises(ValueError, match="rounds"):
        shuffled_rounds_epsilon(1.0, 100, 1e-6, 0)
    with pytest.raises(ValueError, match="eps0"):
        stronger_clone_pld(31.0, 100)
    with pytest.raises(ValueError, match="PLD_CELLS_MAX"):
        stronger_clone_pld(0.01, 10**9)
    with pytest.raises(ValueError, match="delta"):
        shuffled_rr_rounds_floor(1.0, 100, 1e-20, 2)
