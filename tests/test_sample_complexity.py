"""Sample-complexity formulas quoted by Canonne (2021) and its 'plug in the amplified epsilon'
argument."""

from __future__ import annotations

import numpy as np
import pytest

from shuffle_lib.sample_complexity import (
    heuristic_local_epsilon,
    learning_central,
    learning_ldp,
    learning_shuffle,
    plugged_sample_complexity,
    uniformity_testing_central,
    uniformity_testing_ldp,
    uniformity_testing_nonprivate,
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
def test_plugging_the_amplified_epsilon_gives_the_closed_form_growth(task, closed_form, exponent):
    # in the privacy-dominated regime (small eps, moderate alpha) the fixed point solved
    # numerically grows in k like the closed form Canonne (2021) derives by hand
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


# exponents of (k, alpha, eps) in the four terms of the central testing rate
CENTRAL_TERMS = {
    "non-private sqrt(k)/alpha^2": (0.5, -2.0, 0.0),
    "sqrt(k)/(alpha sqrt(eps))": (0.5, -1.0, -0.5),
    "k^(1/3)/(alpha^(4/3) eps^(2/3))": (1 / 3, -4 / 3, -2 / 3),
    "1/(alpha eps)": (0.0, -1.0, -1.0),
}


@pytest.mark.parametrize(
    ("term", "point"),
    [
        # each point puts one term at least 100 times above each of the three others
        ("non-private sqrt(k)/alpha^2", (100.0, 1e-2, 1e3)),
        ("sqrt(k)/(alpha sqrt(eps))", (1e20, 1.0, 1e-4)),
        ("k^(1/3)/(alpha^(4/3) eps^(2/3))", (1e18, 1e-6, 1e-18)),
        ("1/(alpha eps)", (1.0, 1.0, 1e-6)),
    ],
)
def test_central_testing_rate_follows_its_dominant_term(term, point) -> None:
    exponents = np.array(CENTRAL_TERMS[term])
    k, alpha, eps = point
    dominant = float(np.prod(np.array(point) ** exponents))
    value = uniformity_testing_central(k, alpha, eps)
    assert 1.0 < value / dominant < 1.03  # the three other terms add at most 3 x 1%
    # local log-log slopes in k, alpha and eps are the dominant term's exponents (step down, so
    # that alpha stays in (0, 1])
    step = 1e-3
    for axis in range(3):
        moved = np.array(point)
        moved[axis] *= np.exp(-step)
        slope = np.log(uniformity_testing_central(*moved) / value) / -step
        assert slope == pytest.approx(exponents[axis], abs=0.03)


def test_central_testing_rate_is_monotone_and_tends_to_the_non_private_rate() -> None:
    grid = np.geomspace(1e-3, 1e3, 40)
    assert np.all(np.diff(uniformity_testing_central(np.geomspace(2, 1e9, 40), 0.2, 0.5)) > 0)
    assert np.all(np.diff(uniformity_testing_central(1e4, np.geomspace(1e-3, 1, 40), 0.5)) < 0)
    assert np.all(np.diff(uniformity_testing_central(1e4, 0.2, grid)) < 0)
    ks = np.geomspace(10, 1e8, 8)
    no_privacy = uniformity_testing_nonprivate(ks, 0.1)
    assert np.all(uniformity_testing_central(ks, 0.1, 1e-3) > no_privacy)
    assert np.allclose(uniformity_testing_central(ks, 0.1, 1e12), no_privacy, rtol=1e-4)


def test_central_testing_never_costs_more_than_shuffled_testing() -> None:
    # each privacy term of the central rate is at most the larger of the shuffled private-coin
    # rate's two terms (sqrt(k)/alpha^2 and k^(3/4)/(alpha eps)), hence the factor 3 once
    # ln(1/delta) >= 1; against the public-coin rate the factor is 2
    k, alpha, eps, delta = np.meshgrid(
        np.geomspace(1, 1e12, 13),
        np.geomspace(1e-4, 1, 9),
        np.geomspace(1e-6, 50, 12),
        [np.exp(-1), 1e-6, 1e-15],
        indexing="ij",
    )
    central = uniformity_testing_central(k, alpha, eps)
    private = uniformity_testing_shuffle(k, alpha, eps, delta)
    public = uniformity_testing_shuffle(k, alpha, eps, delta, public_coin=True)
    assert np.all(np.isfinite(central))
    assert np.all(central <= 3 * private)
    assert np.all(central <= 2 * public)
    # where the non-private term dominates both rates they agree, log factor and all
    assert uniformity_testing_shuffle(100, 1e-4, 1.0, 1e-6) == pytest.approx(
        uniformity_testing_central(100, 1e-4, 1.0), rel=0.01
    )
    # but in the privacy-dominated regime the shuffled private-coin tester pays a factor
    # growing like k^(1/4) sqrt(ln(1/delta))
    ks = np.geomspace(1e8, 1e12, 5)
    ratio = uniformity_testing_shuffle(ks, 0.5, 0.01, 1e-6) / uniformity_testing_central(
        ks, 0.5, 0.01
    )
    assert _slope(ks, ratio) == pytest.approx(0.25, abs=0.02)


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
        (lambda: uniformity_testing_central(10, 0.0, 1.0), "alpha"),
        (lambda: uniformity_testing_central(10, 1.01, 1.0), "alpha must lie in"),
        (lambda: uniformity_testing_central(0, 0.1, 1.0), "k must be finite and > 0"),
        (lambda: uniformity_testing_central(10, 0.1, 0.0), "eps must be finite and > 0"),
        (lambda: uniformity_testing_central(10, 0.1, np.inf), "eps"),
        (lambda: uniformity_testing_central(10, 0.1, np.nan), "eps must not contain NaN"),
    ],
)
def test_bad_input_raises(call, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        call()


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (lambda: learning_central(10.0, 1e-300, 1.0), ValueError, "exceeds the largest float"),
        (lambda: learning_ldp(10.0, 0.1, 1e-300), ValueError, "exceeds the largest float"),
        (lambda: learning_central("10", 0.1, 1.0), TypeError, "k"),
        (lambda: learning_central(True, 0.1, 1.0), TypeError, "k"),
        (lambda: uniformity_testing_ldp(100.0, 0.5, 1.0, "no"), TypeError, "public_coin"),
        (lambda: uniformity_testing_shuffle(100.0, 0.5, 1.0, 1e-6, None), TypeError,
         "public_coin"),
        (lambda: heuristic_local_epsilon(1.0, 2.5, 1e-6), ValueError, "n must contain whole"),
        (lambda: heuristic_local_epsilon(1.0, 0, 1e-6), ValueError, "n must be >= 1"),
        (lambda: plugged_sample_complexity(10.0, 1e-300, 1.0, 1e-6), ValueError, "k / alpha"),
        (lambda: plugged_sample_complexity(0.5, 0.1, 1.0, 1e-6), ValueError, "k must lie in"),
        (lambda: plugged_sample_complexity(10.0, 0.1, [1.0, 2.0], 1e-6), TypeError, "eps"),
    ],
)
def test_hostile_input_is_refused_by_our_checks(call, error, message: str) -> None:
    with pytest.raises(error, match=message):
        call()


def test_rates_stay_finite_and_right_where_the_direct_formula_overflows() -> None:
    # k**2 overflows, but e^eps in the denominator makes those terms vanish: k / alpha^2 is left
    assert learning_ldp(1e200, 0.5, 1000.0) == pytest.approx(4e200, rel=1e-12)
    # alpha^2 underflows to 0, but k is small enough that k / alpha^2 is a float
    assert learning_central(1e-300, 1e-170, 1.0) == pytest.approx(1e40, rel=1e-12)
    assert uniformity_testing_nonprivate(1e-300, 1e-170) == pytest.approx(1e190, rel=1e-12)
    # eps^2 n / ln(1/delta) overflows: eps_0 = ln r, from logarithms
    r_log = 2 * np.log(1e300) + np.log(10) - np.log(np.log(1e300))
    assert heuristic_local_epsilon(1e300, 10, 1e-300) == pytest.approx(r_log, rel=1e-14)
    # it underflows: eps_0 = sqrt(r) = eps sqrt(n / ln(1/delta)); a subnormal delta is fine too
    small = heuristic_local_epsilon(1e-200, 10, 5e-324)
    assert small == pytest.approx(1e-200 * np.sqrt(10 / (324 * np.log(10) - np.log(4.94))),
                                  rel=1e-3)
    assert 0 < plugged_sample_complexity(10.0, 0.1, 1e300, 1e-6) < 1e5
