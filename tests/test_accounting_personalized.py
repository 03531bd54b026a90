"""GSPA's mu (seed 001, Theorem 2): the formula, its conversion, and where it is not a bound."""

from __future__ import annotations

import numpy as np
import pytest

from shuffle_lib.accounting import (
    gdp_delta,
    gspa_epsilon,
    gspa_mu,
    shuffled_rr_exact_epsilon,
)


def test_gspa_mu_matches_a_hand_computation() -> None:
    eps = np.array([0.5, 1.0, 2.0, 0.5])
    delta = np.array([0.0, 0.1, 0.0, 0.2])
    weights = [(1 - d) / (1 + np.exp(e)) for e, d in zip(eps, delta, strict=True)]
    expected = np.sqrt(2 / (sum(weights) - max(weights)))
    assert gspa_mu(eps, delta) == pytest.approx(expected, rel=1e-14)


def test_uniform_levels_reduce_to_the_n_minus_one_form() -> None:
    n, eps0 = 5_000, 1.5
    assert gspa_mu(np.full(n, eps0)) == pytest.approx(np.sqrt(2 * (1 + np.exp(eps0)) / (n - 1)))


def test_gspa_epsilon_round_trips_through_fact_3() -> None:
    eps, delta = np.full(2_000, 2.0), 1e-6
    central = gspa_epsilon(eps, 0.0, delta)
    assert gdp_delta(gspa_mu(eps), central) == pytest.approx(delta, rel=1e-6)


def test_gspa_is_an_approximation_not_a_bound() -> None:
    # n = 1000, eps0 = 4, delta = 1e-6: GSPA reports about 1.45, while shuffled randomized
    # response (one of the randomizers it covers) is exactly at least about 1.69 there.
    gspa = gspa_epsilon(np.full(1000, 4.0), 0.0, 1e-6)
    floor = shuffled_rr_exact_epsilon(4.0, 1000, 1e-6)
    assert gspa == pytest.approx(1.45, abs=0.01)
    assert gspa < floor
    # and at eps0 = 8 it exceeds eps0 itself, which shuffling can never make worse
    assert gspa_epsilon(np.full(1000, 8.0), 0.0, 1e-6) > 8.0


def test_large_levels_stay_finite_and_exact_in_log_space() -> None:
    # weights e^{-800} underflow in linear space; mu = sqrt(2 / (9 e^{-800})) is still a float
    value = gspa_mu(np.full(10, 800.0))
    assert np.log(value) == pytest.approx(0.5 * np.log(2 / 9) + 400, rel=1e-12)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: gspa_mu([1.0, -0.5]), "eps must be >= 0"),
        (lambda: gspa_mu([1.0, np.nan]), "NaN"),
        (lambda: gspa_mu([1.0]), "at least 2 users"),
        (lambda: gspa_mu([]), "empty"),
        (lambda: gspa_mu([1.0, 1.0], [0.0, 1.0]), "delta"),
        (lambda: gspa_epsilon([1.0, 1.0], 0.0, 0.0), "delta"),
    ],
)
def test_bad_input_raises(call, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        call()
