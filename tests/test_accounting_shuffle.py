"""Amplification by shuffling: orderings of the bounds, exact small-n checks, published numbers."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from scipy import stats

from shuffle_lib import krr_channel
from shuffle_lib.accounting import hockey_stick_divergence
from shuffle_lib.accounting.shuffle import (
    bbgn19_delta,
    bbgn19_epsilon,
    clone_numerical_epsilon,
    clone_reduction_delta,
    erlingsson19_epsilon,
    fmt21_closed_form_epsilon,
    fmt21_numerical_epsilon,
    fmt21_regime_approximation,
    fmt21_theorem_epsilon,
    fmt21_validity_limit,
    local_epsilon_for_target,
    sample_clone_pair,
    shuffled_rr_exact_delta,
    shuffled_rr_exact_epsilon,
)

GRID = [(eps0, n, delta) for eps0 in (0.5, 1.0, 2.0, 4.0) for n in (10_000, 100_000, 1_000_000)
        for delta in (1e-6, 1e-9)]


def _clone_laws_by_enumeration(eps0: float, n: int, q: float) -> tuple[np.ndarray, np.ndarray]:
    """Joint pmfs of (first coordinate, C) under P and Q, built term by term from the definition."""
    keep = np.exp(eps0) / (np.exp(eps0) + 1)
    first = np.zeros((n + 1, n))
    second = np.zeros((n + 1, n))
    for c in range(n):
        weight = stats.binom.pmf(c, n - 1, q)
        for a in range(c + 1):
            base = weight * stats.binom.pmf(a, c, 0.5)
            first[a + 1, c] += base * keep          # Delta = 1
            first[a, c] += base * (1 - keep)        # Delta = 0
            second[a, c] += base * keep             # 1 - Delta = 0
            second[a + 1, c] += base * (1 - keep)
    return first.ravel(), second.ravel()


@pytest.mark.parametrize("n", [2, 5, 12, 30])
@pytest.mark.parametrize("eps0", [0.5, 2.0])
def test_clone_delta_matches_enumeration(n: int, eps0: float) -> None:
    q = float(np.exp(-eps0))
    first, second = _clone_laws_by_enumeration(eps0, n, q)
    for eps in (0.0, 0.1, 0.4, eps0 * 0.9):
        exact = hockey_stick_divergence(first, second, eps)
        assert clone_reduction_delta(eps, eps0, n, q) == pytest.approx(exact, abs=1e-12)
        # the pair is symmetric: the reverse divergence is the same
        assert hockey_stick_divergence(second, first, eps) == pytest.approx(exact, abs=1e-12)


def test_clone_delta_matches_monte_carlo(rng: np.random.Generator) -> None:
    # E_P[(1 - e^eps Q/P)_+] estimated from simulated clone samples; the pmfs come from enumeration.
    eps0, n, eps, draws = 1.5, 40, 0.3, 400_000
    q = float(np.exp(-eps0))
    first, second = _clone_laws_by_enumeration(eps0, n, q)
    clones = rng.binomial(n - 1, q, size=draws)
    heads = rng.binomial(clones, 0.5)
    flip = rng.random(draws) < np.exp(eps0) / (np.exp(eps0) + 1)
    index = (heads + flip) * n + clones
    with np.errstate(divide="ignore", invalid="ignore"):
        gain = np.clip(1 - np.exp(eps) * second[index] / first[index], 0, None)
    estimate, error = gain.mean(), gain.std(ddof=1) / np.sqrt(draws)
    assert abs(estimate - clone_reduction_delta(eps, eps0, n, q)) <= 5 * error


@pytest.mark.parametrize(("eps0", "n", "delta"), GRID)
def test_bounds_are_ordered(eps0: float, n: int, delta: float) -> None:
    floor = shuffled_rr_exact_epsilon(eps0, n, delta)
    stronger = clone_numerical_epsilon(eps0, n, delta, variant="stronger")
    numerical = fmt21_numerical_epsilon(eps0, n, delta)
    assert floor <= stronger + 1e-12
    assert stronger <= numerical + 1e-12
    assert numerical <= eps0
    if eps0 <= fmt21_validity_limit(n, delta):
        theorem = fmt21_theorem_epsilon(eps0, n, delta)
        assert numerical <= theorem
        assert theorem <= fmt21_closed_form_epsilon(eps0, n, delta)


@pytest.mark.parametrize(("eps0", "n", "delta"), GRID[:6])
def test_blanket_bound_is_above_the_rr_floor(eps0: float, n: int, delta: float) -> None:
    floor = shuffled_rr_exact_epsilon(eps0, n, delta)
    assert bbgn19_epsilon(eps0, n, delta, randomizer=("krr", 2)) >= floor
    assert bbgn19_epsilon(eps0, n, delta) >= floor


def test_clone_delta_is_monotone_in_eps_and_eps0() -> None:
    n = 5_000
    eps_grid = np.linspace(0.0, 0.9, 40)
    for eps0 in (1.0, 2.0, 3.0):
        values = [clone_reduction_delta(e, eps0, n, float(np.exp(-eps0))) for e in eps_grid]
        assert np.all(np.diff(values) <= 1e-15)
    for eps in (0.05, 0.3):
        by_eps0 = [clone_reduction_delta(eps, e0, n, float(np.exp(-e0))) for e0 in (1.0, 2.0, 3.0)]
        assert np.all(np.diff(by_eps0) >= 0)


def test_published_example_of_the_authors_code() -> None:
    # Feldman, McMillan & Talwar's script: n = 100000, eps0 = 4, delta = 1e-6 gives an upper
    # estimate 0.1728 and a lower estimate 0.1675 for the numerical bound.
    value = fmt21_numerical_epsilon(4.0, 100_000, 1e-6)
    assert 0.1675 <= value <= 0.1728
    assert fmt21_theorem_epsilon(4.0, 100_000, 1e-6) == pytest.approx(0.535, abs=0.005)


def test_equation_one_follows_from_the_theorem_on_its_domain() -> None:
    for n in (1_000, 10_000, 10**6):
        for delta in (1e-3, 1e-6, 1e-10):
            limit = fmt21_validity_limit(n, delta)
            if limit <= 0:
                continue
            eps0 = np.linspace(0, limit, 30)
            theorem = fmt21_theorem_epsilon(eps0, n, delta)
            assert np.all(theorem <= fmt21_closed_form_epsilon(eps0, n, delta))


def _shuffled_rr_counts_by_convolution(eps0: float, n: int, ones: int, target: int) -> np.ndarray:
    """Law of the number of ones, convolving the n users' report laws one at a time."""
    channel = krr_channel(2, eps0)
    law = np.ones(1)
    bits = [1] * ones + [0] * (n - 1 - ones) + [target]
    for bit in bits:
        law = np.convolve(law, channel[bit])  # row `bit`: P(report 0), P(report 1)
    return law


@pytest.mark.parametrize("n", [3, 8, 25])
def test_shuffled_rr_delta_matches_brute_force(n: int) -> None:
    eps0 = 1.2
    for ones in range(n):
        one = _shuffled_rr_counts_by_convolution(eps0, n, ones, 1)
        zero = _shuffled_rr_counts_by_convolution(eps0, n, ones, 0)
        for eps in (0.0, 0.3):
            exact = max(
                hockey_stick_divergence(one, zero, eps), hockey_stick_divergence(zero, one, eps)
            )
            ours = shuffled_rr_exact_delta(eps, eps0, n, others_ones=ones)
            assert ours == pytest.approx(exact, abs=1e-12)


def test_shuffled_rr_floor_is_the_worst_composition_for_small_n() -> None:
    n, eps0, eps = 40, 2.0, 0.2
    worst = max(shuffled_rr_exact_delta(eps, eps0, n, others_ones=m) for m in range(n))
    assert shuffled_rr_exact_delta(eps, eps0, n) == pytest.approx(worst, abs=1e-15)


def test_erlingsson_bound_and_its_range() -> None:
    value = erlingsson19_epsilon(0.5, 10_000, 1e-6)
    assert value == pytest.approx(12 * 0.5 * np.sqrt(np.log(1e6) / 10_000))
    assert value >= fmt21_numerical_epsilon(0.5, 10_000, 1e-6)
    for bad in [(0.6, 10_000, 1e-6), (0.5, 999, 1e-6), (0.5, 10_000, 0.02)]:
        with pytest.raises(ValueError, match="Erlingsson"):
            erlingsson19_epsilon(*bad)


def test_blanket_delta_decreases_to_zero_at_eps0() -> None:
    assert bbgn19_delta(4.0, 4.0, 10_000) == 0.0
    values = [bbgn19_delta(e, 1.0, 100_000, ("krr", 4)) for e in np.linspace(0.01, 0.99, 30)]
    assert values[0] > values[-1]


def test_local_epsilon_for_target_inverts_the_numerical_bound() -> None:
    eps0 = local_epsilon_for_target(0.3, 50_000, 1e-6)
    assert fmt21_numerical_epsilon(eps0, 50_000, 1e-6) <= 0.3
    assert fmt21_numerical_epsilon(eps0 + 1e-3, 50_000, 1e-6) > 0.3


def test_extreme_inputs_are_finite_and_quiet() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for function in (fmt21_numerical_epsilon, bbgn19_epsilon, shuffled_rr_exact_epsilon):
            value = function(50.0, 10**8, 1e-12)
            assert np.isfinite(value) and 0 <= value <= 50.0
        value = clone_numerical_epsilon(50.0, 10**8, 1e-12, variant="stronger")
        assert np.isfinite(value)
        assert np.isfinite(fmt21_numerical_epsilon(0.01, 10**8, 1e-12))


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: fmt21_closed_form_epsilon(8.0, 10_000, 1e-6), "eps0 <= ln"),
        (lambda: fmt21_theorem_epsilon(8.0, 10_000, 1e-6), "eps0 <= ln"),
        (lambda: fmt21_numerical_epsilon(-1.0, 10_000, 1e-6), "eps0 must be >= 0"),
        (lambda: fmt21_numerical_epsilon(1.0, 1, 1e-6), "n must be >= 2"),
        (lambda: fmt21_numerical_epsilon(1.0, 100.5, 1e-6), "integer"),
        (lambda: fmt21_numerical_epsilon(1.0, 1000, 0.0), "delta"),
        (lambda: clone_numerical_epsilon(1.0, 1000, 1e-6, variant="blanket"), "variant"),
        (lambda: clone_reduction_delta(0.1, 1.0, 100, 1.5), "clone_probability"),
        (lambda: bbgn19_epsilon(1.0, 1000, 1e-6, randomizer="laplace"), "randomizer"),
        (lambda: shuffled_rr_exact_delta(0.1, 1.0, 10, others_ones=10), "at most n - 1"),
    ],
)
def test_bad_input_raises(call, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        call()


def test_regime_approximations_match_their_exact_formulas_in_their_regimes() -> None:
    n, delta = 10**7, 1e-6
    small = 0.01
    assert fmt21_regime_approximation(small, n, delta, "small") == pytest.approx(
        fmt21_closed_form_epsilon(small, n, delta), rel=0.01
    )
    large = 8.0
    assert fmt21_regime_approximation(large, n, delta, "large-log") == pytest.approx(
        fmt21_theorem_epsilon(large, n, delta), rel=0.01
    )
    tiny_eps = fmt21_regime_approximation(large, 10**9, delta, "large-log")
    direct = fmt21_regime_approximation(large, 10**9, delta, "large")
    assert direct == pytest.approx(tiny_eps, rel=0.1)
    with pytest.raises(ValueError, match="regime"):
        fmt21_regime_approximation(1.0, n, delta, "medium")


def test_clone_sampler_follows_the_exact_laws(rng: np.random.Generator) -> None:
    eps0, n, draws = 1.0, 30, 200_000
    first, second = _clone_laws_by_enumeration(eps0, n, float(np.exp(-eps0)))
    marginal_p = first.reshape(n + 1, n).sum(axis=1)
    marginal_q = second.reshape(n + 1, n).sum(axis=1)
    sample_p, sample_q = sample_clone_pair(eps0, n, draws, rng=rng)
    for sample, law in ((sample_p, marginal_p), (sample_q, marginal_q)):
        observed = np.bincount(sample, minlength=n + 1)
        support = law * draws > 5  # chi-square needs expected counts of at least 5
        expected = law[support] * draws
        expected *= observed[support].sum() / expected.sum()
        assert stats.chisquare(observed[support], expected).pvalue > 1e-4


def test_shuffled_rr_floor_matches_an_independent_value() -> None:
    # The project's issue on personalized shuffling quotes, independently of this code, that
    # shuffled randomized response with n = 1000, eps0 = 4, delta = 1e-6 is at least about 1.69.
    assert shuffled_rr_exact_epsilon(4.0, 1000, 1e-6) == pytest.approx(1.69, abs=0.005)


def test_numerical_bounds_cover_the_promised_range_without_nan_or_collapse() -> None:
    # corners of the certified range, in one vectorized call per variant: finite, within
    # [0, eps0], and non-increasing in n (more users, more clones)
    eps0 = np.array([0.01, 1.0, 8.0, 50.0, 100.0])[:, None]
    n = np.array([2, 1000, 10**6, 10**9])[None, :]
    for variant in ("fmt21", "stronger"):
        for delta in (1e-150, 1e-6, 0.5):
            eps = clone_numerical_epsilon(eps0, n, delta, variant)
            assert eps.shape == (5, 4) and np.isfinite(eps).all()
            assert ((eps >= 0) & (eps <= eps0)).all()
            assert np.all(np.diff(eps, axis=1) <= 1e-9 * eps[:, :-1])


@pytest.mark.parametrize(
    ("eps0", "n", "delta", "limit"),
    [(1.0, 10**10 + 1, 1e-6, "n must be at most"), (1.0, 1000, 1e-151, "delta must be at least"),
     (100.5, 1000, 1e-6, "eps0 must be at most")],
)
def test_numerical_bounds_refuse_what_they_cannot_certify(
    eps0: float, n: int, delta: float, limit: str
) -> None:
    for call in (lambda: fmt21_numerical_epsilon(eps0, n, delta),
                 lambda: shuffled_rr_exact_epsilon(eps0, n, delta)):
        with pytest.raises(ValueError, match=limit):
            call()


def test_a_non_finite_probability_is_an_error_not_a_zero() -> None:
    from shuffle_lib.accounting._binomial import binomial_sf

    with pytest.raises(FloatingPointError):
        binomial_sf(np.array([3]), np.array([10]), float("nan"))


# Hostile input (issue: clear errors for bad input, no silent NaN, no hangs)


@pytest.mark.parametrize("n", ["3", "100000", True, None])
def test_n_of_the_wrong_type_is_refused(n) -> None:
    # a string n was read as a number of users
    calls = (lambda: fmt21_validity_limit(n, 1e-6),
             lambda: fmt21_regime_approximation(0.1, n, 1e-6, "small"),
             lambda: fmt21_numerical_epsilon(1.0, n, 1e-6),
             lambda: bbgn19_epsilon(1.0, n, 1e-6))
    for call in calls:
        with pytest.raises(TypeError, match="n must be"):
            call()


def test_a_local_level_of_zero_or_subnormal_needs_no_root_search() -> None:
    # brentq was called with xtol = 1e-6 * eps0 = 0 ("xtol too small")
    for eps0 in (0.0, 5e-324):
        assert clone_numerical_epsilon(eps0, 1000, 1e-6) == 0.0
        assert fmt21_numerical_epsilon(eps0, 1000, 1e-6) == 0.0


def test_shuffled_rr_exact_refuses_populations_beyond_its_range() -> None:
    # the audit's call sat in an uninterruptible convolution
    for call in (lambda: shuffled_rr_exact_delta(0.5, 1.0, 10**12),
                 lambda: shuffled_rr_exact_epsilon(1.0, 10**12, 1e-6)):
        with pytest.raises(ValueError, match="n must be at most"):
            call()


@pytest.mark.parametrize(("n", "size", "limit"), [
    (100, 10**12, "size must be at most"), (10**30, 5, "n must be at most"),
])
def test_sample_clone_pair_refuses_what_it_cannot_allocate(n: int, size: int, limit: str) -> None:
    with pytest.raises(ValueError, match=limit):
        sample_clone_pair(1.0, n, size, rng=0)


def test_subnormal_delta_and_overflowing_approximations_are_errors() -> None:
    # ln(4 / delta) was inf: -inf from the validity limit, inf from the regimes, a failed root
    # search in the blanket bound
    for call in (lambda: fmt21_validity_limit(1000, 5e-324),
                 lambda: fmt21_regime_approximation(0.1, 1000, 5e-324, "small"),
                 lambda: bbgn19_epsilon(1.0, 1000, 5e-324)):
        with pytest.raises(ValueError, match="delta must be at least 1e-300"):
            call()
    with pytest.raises(ValueError, match="eps0 is so large"):
        fmt21_regime_approximation(1.7e308, 1000, 1e-6, "large")


def test_local_epsilon_for_target_checks_its_search_range() -> None:
    for bad in (float("nan"), 0.0, 1e300):
        with pytest.raises(ValueError, match="eps0_max"):
            local_epsilon_for_target(0.5, 10_000, 1e-6, eps0_max=bad)


def test_binomial_quantile_meets_its_definition() -> None:
    # the quantile calls Boost's kernel directly (no argument checks): it must still be the
    # smallest k with P(X <= k) >= mass, read with the public CDF, at random points of the range
    from shuffle_lib.accounting._binomial import _quantile

    rng = np.random.default_rng(35)
    for _ in range(300):
        size = int(10 ** rng.uniform(0, 9))
        prob = float(10 ** rng.uniform(-9, 0)) * 0.999
        mass = float(10 ** rng.uniform(-240, -1))
        k = _quantile(mass, size, prob)
        assert 0 <= k <= size
        assert stats.binom.cdf(k, size, prob) >= mass * (1 - 1e-9)
        assert k == 0 or stats.binom.cdf(k - 1, size, prob) < mass * (1 + 1e-9)


def test_binomial_bulk_where_boost_quantile_gives_up() -> None:
    # Boost's quantile warns and guesses for Bin(154, 0.9975) at 1e-240 (its tail at 0 is 1e-401);
    # the bulk must then come from a bisection, with no warning and the tails right
    import warnings

    import mpmath as mp

    from shuffle_lib.accounting._binomial import binomial_bulk

    size, prob, mass = 154, 0.0025, 1e-240
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        low, high, left_out = binomial_bulk(size, prob, mass)
    mp.mp.dps = 40
    p = mp.mpf(prob)
    def pmf(k: int) -> mp.mpf:
        return mp.binomial(size, k) * p**k * (1 - p) ** (size - k)
    above = mp.fsum(pmf(k) for k in range(high + 1, size + 1))
    below = mp.fsum(pmf(k) for k in range(low))
    assert low == 0 and above <= 2 * mass  # the bulk holds all but about 2 * mass
    assert pmf(high) > mass  # and is not wider than it needs to be
    assert left_out >= float(above + below) * (1 - 1e-12)  # the reported loss covers the tails
