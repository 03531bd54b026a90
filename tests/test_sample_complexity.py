"""Sample-complexity formulas of seed 004 and its 'plug in the amplified epsilon' argument."""

from __future__ import annotations

import numpy as np
import pytest

from shuffle_lib.sample_complexity import (
    heuristic_local_epsilon,
    learning_central,
    learning_ldp,
    learning_shuffle,
    plugged_sample_complexity,
    uniformity_testing_ldp,
    uniformity_testing_shuffle,
)


def _slope(xs: np.ndarray, ys: np.ndarray) -> float:
    return float(np.polyfit(np.log(xs), np.log(ys), 1)[0])


@pytest.mark.parametrize(
    ("task", "closed_form", "exponent"),
    [
        ("learning", lambda k: learning_shuffle(k, 0.5, 0.05, 1e-6), 1.0),
        ("testing-private-coin", lambda k: uniformity_testing_shuffle(k, 0.5, 0.05, 1e-6), 0.75),
    ],
)
def test_plugging_the_amplified_epsilon_gives_the_seeds_growth_in_k(task, closed_form, exponent):
    # in the privacy-dominated regime (small eps, moderate alpha) the fixed point solved
    # numerically grows in k like the closed form the seed derives by hand
    ks = np.geomspace(1e3, 1e5, 9)
    plugged = np.array([plugged_sample_complexity(k, 0.5, 0.05, 1e-6, task) for k in ks])
    assert _slope(ks, plugged) == pytest.approx(exponent, abs=0.08)
    assert _slope(ks, closed_form(ks)) == pytest.approx(exponent, abs=0.08)
    ratio = plugged / closed_form(ks)
    assert ratio.max() / ratio.min() < 1.5  # same shape up to a constant


def test_shuffling_closes_the_gap_to_central_for_learning() -> None:
    ks = np.geomspace(10, 1e4, 8)
    central = learning_central(ks, 0.1, 0.5)
    shuffle = learning_shuffle(ks, 0.1, 0.5, 1e-6)
    ldp = learning_ldp(ks, 0.1, 0.5)
    assert np.all(shuffle / central < np.sqrt(np.log(1e6)) + 1)  # within the sqrt(log 1/delta)
    assert ldp[-1] / shuffle[-1] > 100  # while LDP pays an extra factor of order k


def test_public_coin_testing_is_cheaper() -> None:
    ks = np.geomspace(100, 1e6, 6)
    assert np.all(uniformity_testing_ldp(ks, 0.3, 1.0, public_coin=True)
                  < uniformity_testing_ldp(ks, 0.3, 1.0))
    assert np.all(uniformity_testing_shuffle(ks, 0.3, 0.5, 1e-6, public_coin=True)
                  < uniformity_testing_shuffle(ks, 0.3, 0.5, 1e-6))


def test_heuristic_local_epsilon_regimes() -> None:
    small = heuristic_local_epsilon(0.01, 1000, 1e-6)  # r < 1: eps sqrt(n / ln(1/delta))
    assert small == pytest.approx(0.01 * np.sqrt(1000 / np.log(1e6)))
    large = heuristic_local_epsilon(1.0, 10**6, 1e-6)  # r > 1: ln(r)
    assert large == pytest.approx(np.log(10**6 / np.log(1e6)))


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: learning_ldp(10, 1.5, 1.0), "alpha must lie in"),
        (lambda: learning_central(-1, 0.1, 1.0), "k must be finite and > 0"),
        (lambda: learning_shuffle(10, 0.1, 0.0, 1e-6), "eps"),
        (lambda: plugged_sample_complexity(10, 0.1, 1.0, 1e-6, task="counting"), "task"),
    ],
)
def test_bad_input_raises(call, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        call()
