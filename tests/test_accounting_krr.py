"""Exact shuffled k-ary randomized response (``accounting.krr``): against exhaustive enumeration of
the histograms, a 40-digit direct sum of the definition, the binary floor at k = 2, and the
upper bounds it must stay below; swept over its range for monotonicity and no 0/NaN."""

from __future__ import annotations

import itertools
import math

import mpmath as mp
import numpy as np
import pytest

from shuffle_lib.accounting import (
    clone_numerical_epsilon,
    krr,
    shuffled_rr_exact_delta,
)
from shuffle_lib.accounting.decomposition import neutral_clone_delta, shuffled_channel_delta
from shuffle_lib.accounting.krr import shuffled_krr_exact_delta, shuffled_krr_exact_epsilon
from shuffle_lib.randomizers import krr_channel


@pytest.mark.parametrize("k", [2, 3, 5])
def test_agrees_with_enumerating_every_histogram(k: int) -> None:
    for n in (2, 3, 5):
        for eps0 in (0.3, 1.0, 3.0):
            channel = krr_channel(k, eps0)
            for eps in (0.0, 0.1, 0.5, 2.0):
                both = max(shuffled_channel_delta(channel, (0, 1), [0] * (n - 1), eps),
                           shuffled_channel_delta(channel, (1, 0), [0] * (n - 1), eps))
                got = shuffled_krr_exact_delta(eps, eps0, n, k)
                assert got <= both + 1e-15 and abs(got - both) <= 1e-12, (k, n, eps0, eps)


def _mp_delta(eps: float, eps0: float, n: int, k: int, others: str = "same") -> mp.mpf:
    """The definition at 40 digits: every (t, y), both directions, no shortcut. Others inside
    the pair with probability w_o, x^1 there with probability g."""
    with mp.workdps(40):
        p = mp.e ** mp.mpf(eps0)
        w = (p + 1) / (p + k - 1)
        f = 1 / (p + 1)
        w_o, g = (w, f) if others == "same" else (2 / (p + k - 1), mp.mpf(1) / 2)
        gamma = mp.e ** mp.mpf(eps)

        def s_law(t: int) -> mp.mpf:
            return (mp.binomial(n - 1, t) * w_o**t * (1 - w_o) ** (n - 1 - t)
                    if 0 <= t <= n - 1 else 0)

        def f_law(m: int, y: int) -> mp.mpf:
            return mp.binomial(m, y) * g**y * (1 - g) ** (m - y) if 0 <= y <= m else 0

        forward = backward = mp.mpf(0)
        for t in range(n + 1):
            for y in range(t + 1):
                laws = [w * s_law(t - 1) * (pi * f_law(t - 1, y - 1) + (1 - pi) * f_law(t - 1, y))
                        + (1 - w) * s_law(t) * f_law(t, y) for pi in (f, 1 - f)]
                forward += max(laws[1] - gamma * laws[0], 0)
                backward += max(laws[0] - gamma * laws[1], 0)
        return max(forward, backward)


@pytest.mark.parametrize(("eps0", "n", "k"), [(0.5, 60, 3), (2.0, 50, 10), (4.0, 40, 1000),
                                              (1e-3, 40, 4), (12.0, 30, 50)])
def test_is_a_floor_close_to_the_40_digit_definition(eps0: float, n: int, k: int) -> None:
    """Never above the definition; below it by at most 1e-9 relative, or 1e-7 at tiny eps0,
    where the two laws differ by about eps0 / 4 of their mass and the error bars of both count."""
    tolerance = 1e-9 if eps0 >= 0.1 else 1e-7
    for eps in (0.0, eps0 / 20, eps0 / 4, eps0 / 2):
        got = shuffled_krr_exact_delta(eps, eps0, n, k)
        exact = _mp_delta(eps, eps0, n, k)
        assert got <= exact * (1 + mp.mpf(1e-15)) + mp.mpf(1e-300)
        assert got >= exact * (1 - mp.mpf(tolerance)) - mp.mpf(1e-200), (eps, got, exact)


@pytest.mark.parametrize(("eps0", "n", "k"), [(0.5, 60, 3), (2.0, 50, 10), (4.0, 40, 1000),
                                              (1e-3, 40, 4), (12.0, 30, 3)])
def test_third_value_is_a_floor_close_to_the_40_digit_definition(eps0: float, n: int, k: int
                                                                  ) -> None:
    tolerance = 1e-9 if eps0 >= 0.1 else 1e-7
    for eps in (0.0, eps0 / 20, eps0 / 4, eps0 / 2):
        got = shuffled_krr_exact_delta(eps, eps0, n, k, "third")
        exact = _mp_delta(eps, eps0, n, k, "third")
        assert got <= exact * (1 + mp.mpf(1e-15)) + mp.mpf(1e-300)
        assert got >= exact * (1 - mp.mpf(tolerance)) - mp.mpf(1e-200), (eps, got, exact)


@pytest.mark.parametrize("k", [3, 4, 6])
def test_third_value_against_enumerating_every_histogram(k: int) -> None:
    """Exact at k = 3 (the count of x^2 is n - t); a floor at k > 3, where the values outside
    the pair are merged (a post-processing), so never above the enumeration."""
    for n in (2, 3, 5):
        for eps0 in (0.3, 1.0, 3.0):
            channel = krr_channel(k, eps0)
            for eps in (0.0, 0.1, 0.5, 2.0):
                full = shuffled_channel_delta(channel, (0, 1), [2] * (n - 1), eps)
                got = shuffled_krr_exact_delta(eps, eps0, n, k, "third")
                assert got <= full + 1e-15, (k, n, eps0, eps)
                if k == 3:
                    assert abs(got - full) <= 1e-12, (n, eps0, eps)


@pytest.mark.parametrize("eps0", [1e-6, 0.3, 2.0, 9.0, 40.0, 100.0])
@pytest.mark.parametrize("k", [3, 7, 10**6])
def test_third_value_parameters_are_a_post_processing(eps0: float, k: int) -> None:
    """The rounded (w, w_o, f) are the laws after a per-report post-processing of the merged k-RR
    (up to the rounding of 1 - w, covered by the floor's error bars): with u = 1/(p + k - 1),
    keeping a report in the pair with probability A <= 1 and moving an outside report in
    (uniformly) with probability sigma >= 0 must give w and w_o,
    and the target's x^1 share s after that must not exceed f <= 1/2 (an extra flip closes the
    gap). Checked at 40 digits on the floats the floor uses."""
    curve = krr._KrrCurve(eps0, 10, k, "third")
    with mp.workdps(40):
        p = mp.e ** mp.mpf(eps0)
        u = 1 / (p + k - 1)
        w_t, w_o, f = mp.mpf(curve.inside), mp.mpf(curve.others_inside), mp.mpf(curve.flip)
        # outside the pair the target has (k - 2) u and another person (p + k - 3) u, so
        # (p + 1) u A + (k - 2) u sigma = w_t and 2 u A + (p + k - 3) u sigma = w_o
        det = (p + 1) * (p + k - 3) - 2 * (k - 2)
        sigma = ((p + 1) * w_o - 2 * w_t) / (u * det)
        keep = ((p + k - 3) * w_t - (k - 2) * w_o) / (u * det)
        share = (keep + sigma * (k - 2) / 2) * u / w_t
        assert sigma >= 0 and 0 <= keep <= 1, (sigma, keep)
        assert share <= f <= mp.mpf(1) / 2
        assert abs(1 - w_t - mp.mpf(curve.outside)) <= mp.mpf(2) ** -53
        assert curve.share == 0.5


def test_which_dataset_is_worse_at_k_3() -> None:
    """Others on a third value leak more than others on x^0 at k = 3 where shuffling amplifies
    much, less where it hardly does (n = 100, eps0 = 4); both stay below the stronger clone
    bound for every randomizer."""
    for n, eps0, third_worse in ((10**4, 1.0, True), (10**6, 4.0, True), (100, 4.0, False)):
        third = shuffled_krr_exact_epsilon(eps0, n, 3, 1e-6, "third")
        same = shuffled_krr_exact_epsilon(eps0, n, 3, 1e-6)
        assert (same < third) == third_worse, (n, eps0, same, third)
        assert max(same, third) <= clone_numerical_epsilon(eps0, n, 1e-6, "stronger")


def test_binary_case_is_the_binary_floor() -> None:
    for n in (10, 1000, 10**6):
        for eps0 in (0.5, 2.0):
            for eps in (0.0, 0.01, 0.1):
                got = shuffled_krr_exact_delta(eps, eps0, n, 2)
                binary = float(shuffled_rr_exact_delta(eps, eps0, n, others_ones=0))
                # both are floors with their own error bars (relative, growing into deep tails)
                assert math.isclose(got, binary, rel_tol=1e-6, abs_tol=1e-200), (n, eps0, eps)


@pytest.mark.parametrize(("eps0", "n", "k"), [(1.0, 10**4, 3), (4.0, 10**5, 100),
                                              (8.0, 10**6, 10**4), (2.0, 10**6, 2)])
def test_stays_below_the_upper_bounds(eps0: float, n: int, k: int) -> None:
    """Every eps0-LDP randomizer is below the stronger clone pair; k-RR is also below the
    neutral-clone reduction at its own total variation (alpha = 1/(p + k - 1))."""
    eps = shuffled_krr_exact_epsilon(eps0, n, k, 1e-6)
    assert 0 < eps <= clone_numerical_epsilon(eps0, n, 1e-6, "stronger")
    assert shuffled_krr_exact_delta(eps, eps0, n, k) > 1e-6  # rounded down: still above delta
    if n <= 5000:
        alpha = 1 / (math.exp(eps0) + k - 1)
        assert shuffled_krr_exact_delta(eps, eps0, n, k) <= neutral_clone_delta(eps, eps0, n,
                                                                                   alpha)


def test_small_reduction_check_at_moderate_n() -> None:
    for eps0, k in ((1.0, 3), (3.0, 20)):
        alpha = 1 / (math.exp(eps0) + k - 1)
        for eps in (0.0, 0.05, 0.2):
            for others in ("same", "third"):
                assert (shuffled_krr_exact_delta(eps, eps0, 2000, k, others)
                        <= neutral_clone_delta(eps, eps0, 2000, alpha) + 1e-15)


def test_range_sweep_is_monotone_and_never_nan() -> None:
    """Across the range: epsilon falls as n grows and as delta grows, rises with eps0, is never
    NaN, and is positive wherever the floor at 0 is above delta."""
    for k, others in ((2, "same"), (7, "same"), (10**4, "same"), (3, "third"), (10**4, "third")):
        for eps0 in (1e-6, 0.1, 1.0, 5.0, 20.0, 100.0):
            previous = math.inf
            for n in (2, 100, 10**4, 10**6):
                eps = shuffled_krr_exact_epsilon(eps0, n, k, 1e-10, others)
                assert np.isfinite(eps) and 0 <= eps <= eps0
                assert eps <= previous * (1 + 1e-9)
                previous = eps
                if shuffled_krr_exact_delta(0.0, eps0, n, k, others) > 1e-10 * (1 + 1e-12):
                    assert eps > 0, (k, eps0, n)
            by_delta = [shuffled_krr_exact_epsilon(eps0, 1000, k, d, others)
                        for d in (1e-150, 1e-60, 1e-12, 1e-3, 0.5)]
            assert all(a >= b * (1 - 1e-9) for a, b in itertools.pairwise(by_delta))


@pytest.mark.parametrize("k", [2, 10**4])
def test_reaches_its_largest_n(k: int) -> None:
    eps = shuffled_krr_exact_epsilon(5.0, 10**8, k, 1e-10)
    assert 0 < eps < shuffled_krr_exact_epsilon(5.0, 10**6, k, 1e-10)
    assert eps <= clone_numerical_epsilon(5.0, 10**8, 1e-10, "stronger")


def test_refuses_what_is_outside_its_range() -> None:
    with pytest.raises(ValueError, match="eps0"):
        shuffled_krr_exact_delta(0.1, 101.0, 10, 3)
    with pytest.raises(ValueError, match="n"):
        shuffled_krr_exact_delta(0.1, 1.0, 10**9, 3)
    with pytest.raises(ValueError, match="k"):
        shuffled_krr_exact_delta(0.1, 1.0, 10, 1)
    with pytest.raises(ValueError, match="delta"):
        shuffled_krr_exact_epsilon(1.0, 10, 3, 1e-200)
    with pytest.raises(ValueError, match="others"):
        shuffled_krr_exact_delta(0.1, 1.0, 10, 2, "third")
    with pytest.raises(ValueError, match="others"):
        shuffled_krr_exact_delta(0.1, 1.0, 10, 3, "x0")
