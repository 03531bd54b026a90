"""Personalized shuffling (GSPA): GSPA's mu and where it is not a bound, the exact reduction,
the rigorous accountant, the shuffled-RR floor and the Liu et al. baseline."""

from __future__ import annotations

import numpy as np
import pytest

from shuffle_lib.accounting import (
    clone_numerical_epsilon,
    clone_reduction_delta,
    fmt21_theorem_epsilon,
    gdp_delta,
    gspa_epsilon,
    gspa_mu,
    gspa_normal_approximation_error,
    hockey_stick_divergence,
    liu23_epsilon,
    personalized_clone_delta,
    personalized_numerical_epsilon,
    poisson_binomial_pmf,
    sample_personalized_reduction,
    shuffled_personalized_rr_delta,
    shuffled_personalized_rr_epsilon,
    shuffled_rr_exact_delta,
    shuffled_rr_exact_epsilon,
)
from shuffle_lib.accounting._binomial import mixture_divergence


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


def _joint_law_by_enumeration(eps_i, delta_i, target: int, target_bit: int) -> np.ndarray:
    """pmf over (total, first coordinate) of Theorem 1's rho, user by user (dynamic programming)."""
    n = len(eps_i)
    law = np.zeros((n + 1, n + 1))
    law[0, 0] = 1.0
    for i in range(n):
        if i == target:
            continue
        p = (1 - delta_i[i]) / (1 + np.exp(eps_i[i]))
        new = (1 - 2 * p) * law
        new[1:, 1:] += p * law[:-1, :-1]   # a clone of x^0: total and first coordinate + 1
        new[1:, :] += p * law[:-1, :]      # a clone of x^1: total + 1
        law = new
    keep = np.exp(eps_i[target]) / (1 + np.exp(eps_i[target]))
    first_prob = keep if target_bit == 0 else 1 - keep
    d = delta_i[target]
    out = d * law
    out[1:, 1:] += (1 - d) * first_prob * law[:-1, :-1]
    out[1:, :] += (1 - d) * (1 - first_prob) * law[:-1, :]
    return out.ravel()


def test_poisson_binomial_matches_brute_force(rng: np.random.Generator) -> None:
    for _ in range(10):
        probs = np.round(rng.random(30), 1)  # repeated values exercise the grouping
        law = np.ones(1)
        for r in probs:
            law = np.convolve(law, [1 - r, r])
        offset, pmf, dropped = poisson_binomial_pmf(probs)
        full = np.zeros(law.size)
        full[offset:offset + pmf.size] = pmf
        np.testing.assert_allclose(full, law, atol=1e-15)
        assert dropped <= 1e-15


def test_poisson_binomial_counts_equal_the_expanded_users() -> None:
    grouped = poisson_binomial_pmf([0.2, 0.7, 0.2], counts=[3, 5, 0])
    expanded = poisson_binomial_pmf([0.2] * 3 + [0.7] * 5)
    assert grouped[0] == expanded[0]
    np.testing.assert_allclose(grouped[1], expanded[1], atol=1e-16)
    assert poisson_binomial_pmf([0.3], counts=[0])[1].tolist() == [1.0]
    large = poisson_binomial_pmf([0.4], counts=[10**8])  # no per-user array, only the bulk
    # two bulk tails below 1e-18 each, plus trimming below 2e-20 per convolution step
    assert large[1].size < 10**5 and large[2] < 2e-18 + 1e-19


@pytest.mark.parametrize("target", [0, 3])
def test_personalized_delta_matches_enumeration_of_theorem_1(target: int) -> None:
    eps_i = np.array([0.3, 1.0, 2.0, 0.7, 1.5, 0.1, 2.5, 0.9])
    delta_i = np.array([0.0, 0.01, 0.0, 0.05, 0.0, 0.0, 0.02, 0.0])
    first = _joint_law_by_enumeration(eps_i, delta_i, target, 0)
    second = _joint_law_by_enumeration(eps_i, delta_i, target, 1)
    for eps in (0.0, 0.2, 0.6, 1.2):
        exact = hockey_stick_divergence(first, second, eps)
        ours = personalized_clone_delta(eps, eps_i, delta_i, target)
        assert exact - 1e-15 <= ours <= exact + 1e-10  # an upper bound with its error bar
        assert hockey_stick_divergence(second, first, eps) == pytest.approx(exact, abs=1e-12)


@pytest.mark.parametrize("eps0", [0.5, 2.0, 4.0])
def test_equal_levels_match_the_stronger_clone_delta_above_the_rr_floor(eps0: float) -> None:
    n = 400
    for eps in (0.0, 0.1, 0.3, 0.8):
        ours = personalized_clone_delta(eps, np.full(n, eps0), 0.0, target=0)
        stronger = clone_reduction_delta(eps, eps0, n, float(2 / (np.exp(eps0) + 1)))
        assert ours == pytest.approx(stronger, rel=1e-9, abs=1e-15)
        assert ours >= shuffled_rr_exact_delta(eps, eps0, n) - 1e-15


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: personalized_clone_delta(0.1, [1.0, 1.0], 0.0, target=2), "target"),
        (lambda: personalized_clone_delta(-0.1, [1.0, 1.0], 0.0, target=0), "eps must be >= 0"),
        (lambda: personalized_clone_delta(0.1, [1.0, 1.0], [0.0, 1.0], target=0), "delta"),
        (lambda: poisson_binomial_pmf([0.5, 1.5]), r"\[0, 1\]"),
        (lambda: poisson_binomial_pmf([]), "non-empty"),
        (lambda: poisson_binomial_pmf([0.5], counts=[-1]), "counts"),
        (lambda: poisson_binomial_pmf([0.5, 0.5], counts=[1.5, 1]), "counts"),
    ],
)
def test_bad_input_for_the_exact_accountant(call, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        call()


# ---- the rigorous personalized accountant, its floor, and the Liu et al. baseline ----


@pytest.mark.parametrize(("eps0", "n"), [(0.5, 300), (2.0, 1000), (4.0, 1000)])
def test_equal_levels_give_the_stronger_clone_epsilon(eps0: float, n: int) -> None:
    levels = np.full(n, eps0)
    expected = clone_numerical_epsilon(eps0, n, 1e-6, variant="stronger")
    assert personalized_numerical_epsilon(levels, 0.0, 1e-6) == pytest.approx(expected, abs=1e-9)
    assert personalized_numerical_epsilon(levels, 0.0, 1e-6, target=7) == pytest.approx(
        expected, abs=1e-9
    )


def test_divergence_per_clone_count_is_monotone() -> None:
    # the two facts behind the single dominating evaluation: fewer clones or a larger target
    # level never lower the per-count divergence
    counts = np.arange(0, 400)
    for eps in (0.05, 0.3, 1.0):
        previous_keep = None
        for keep in (0.55, 0.7, 0.9, 0.99):
            per_c, _, _ = mixture_divergence(counts, keep, 1 - keep, eps)
            positive = per_c[per_c > 0]
            assert np.all(np.diff(per_c) <= 1e-15)
            assert np.all(per_c[positive.size:] == 0)  # once zero, zero for more clones
            if previous_keep is not None:
                assert np.all(per_c >= previous_keep - 1e-15)
            previous_keep = per_c


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_dominating_bound_covers_every_target_and_stays_close(seed: int) -> None:
    gen = np.random.default_rng(seed)
    levels = np.concatenate([gen.uniform(0.01, 2.0, 40), [0.01, 3.0]])  # mixed, with extremes
    delta = 1e-3
    per_target = [personalized_numerical_epsilon(levels, 0.0, delta, target=t)
                  for t in range(levels.size)]
    bound = personalized_numerical_epsilon(levels, 0.0, delta)
    assert bound >= max(per_target) - 1e-12
    assert bound <= max(per_target) + 0.05  # it swaps one user's clone probability only
    assert int(np.argmax(per_target)) == int(np.argmax(levels))


@pytest.mark.parametrize("others", ["zeros", "ones", "random"])
def test_rigorous_bound_is_above_the_exact_shuffled_rr_floor(others: str) -> None:
    gen = np.random.default_rng(5)
    levels = gen.uniform(0.5, 3.0, 500)
    bits = {"zeros": np.zeros(500), "ones": np.ones(500), "random": gen.integers(0, 2, 500)}
    for target in (int(np.argmax(levels)), 3):
        floor = shuffled_personalized_rr_epsilon(levels, 1e-6, target, bits[others])
        upper = personalized_numerical_epsilon(levels, 0.0, 1e-6, target=target)
        assert 0 < floor <= upper


def test_personalized_rr_delta_with_equal_levels_matches_the_uniform_floor() -> None:
    n, eps0 = 200, 2.0
    bits = np.r_[np.ones(60), np.zeros(140)]  # the target is user 199, holding a 0 here
    for eps in (0.0, 0.3, 0.9):
        ours = shuffled_personalized_rr_delta(eps, np.full(n, eps0), target=199, others_bits=bits)
        assert ours == pytest.approx(shuffled_rr_exact_delta(eps, eps0, n, others_ones=60),
                                     abs=1e-10)  # two floors, each below its error bound


def test_personalized_rr_delta_matches_enumeration() -> None:
    levels = np.array([0.4, 1.3, 2.2, 0.8, 1.9])
    bits = np.array([0, 1, 1, 0, 1])
    target = 2

    def law(target_bit: int) -> np.ndarray:
        out = np.ones(1)
        for i, level in enumerate(levels):
            bit = target_bit if i == target else bits[i]
            p_one = np.exp(level) / (1 + np.exp(level)) if bit else 1 / (1 + np.exp(level))
            out = np.convolve(out, [1 - p_one, p_one])
        return out

    for eps in (0.0, 0.5, 1.5):
        exact = max(hockey_stick_divergence(law(1), law(0), eps),
                    hockey_stick_divergence(law(0), law(1), eps))
        ours = shuffled_personalized_rr_delta(eps, levels, target, bits)
        assert exact - 1e-10 <= ours <= exact  # a floor: never above the enumerated value


def test_exposed_delta_part_is_added_and_must_fit_the_target() -> None:
    levels = np.full(300, 1.0)
    pure = personalized_numerical_epsilon(levels, 0.0, 1e-4)
    with_delta = personalized_numerical_epsilon(levels, 1e-6, 1e-4)
    assert with_delta >= pure  # exposing 1e-6 of the target's report costs something
    with pytest.raises(ValueError, match="must exceed every delta_i"):
        personalized_numerical_epsilon(levels, 1e-4, 1e-4)


def test_monte_carlo_reduction_matches_the_exact_divergence() -> None:
    # 200,000 draws of each law on a 12-user population; the empirical hockey-stick of the
    # (count of 0s, total) histograms has standard error below 3e-3 here
    levels = np.array([0.3, 1.0, 2.0, 0.7, 1.5, 0.1, 2.5, 0.9, 0.2, 1.1, 0.4, 1.8])
    deltas = np.r_[np.zeros(11), 0.05]
    target = 11
    first, second = sample_personalized_reduction(levels, deltas, target, 200_000, rng=3)
    n = levels.size

    def histogram(counts: np.ndarray) -> np.ndarray:
        index = counts[:, 0] * (n + 1) + counts.sum(axis=1)
        return np.bincount(index, minlength=(n + 1) ** 2) / counts.shape[0]

    for eps in (0.0, 0.5, 1.0):
        empirical = hockey_stick_divergence(histogram(first), histogram(second), eps)
        exact = personalized_clone_delta(eps, levels, deltas, target)
        assert empirical == pytest.approx(exact, abs=0.01)


def test_liu23_matches_its_quadratic_definition_and_fmt21_for_equal_levels(
    rng: np.random.Generator,
) -> None:
    levels = np.r_[rng.uniform(0.0, 2.0, 3000), [1.0, 1.0, 0.0]]  # ties and a zero level
    n = levels.size
    g = np.where(levels > 0, -np.expm1(-levels) / np.where(levels > 0, levels, 1), 1.0)
    pairs = g[None, :] / g[:, None] * np.exp(-np.maximum(levels[:, None], levels[None, :]))
    echo = pairs.sum(axis=1) / n
    total = echo.sum() - echo[np.argmax(levels)]
    top = levels.max()
    expected = np.log(1 + np.tanh(top / 2) * (8 * np.sqrt(np.log(4e6) / total) + 8 / total))
    assert liu23_epsilon(levels, 1e-6) == pytest.approx(expected, rel=1e-10)
    assert liu23_epsilon(np.full(5001, 1.0), 1e-6) == pytest.approx(
        fmt21_theorem_epsilon(1.0, 5000, 1e-6), rel=1e-12
    )
    assert liu23_epsilon(np.full(100, 1.0), 1e-6) == 1.0  # outside its regime: no amplification


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: personalized_numerical_epsilon([1.0, 1.0], 0.0, 0.0), "delta"),
        (lambda: personalized_numerical_epsilon([1.0, 1.0], 0.0, 1e-6, target=5), "target"),
        (lambda: personalized_numerical_epsilon([1.0, -1.0], 0.0, 1e-6), "eps_i must be >= 0"),
        (lambda: personalized_numerical_epsilon([[1.0, 1.0]], 0.0, 1e-6), "1-D"),
        (lambda: shuffled_personalized_rr_delta(0.1, [1.0, 1.0], 0, [0, 2]), "others_bits"),
        (lambda: shuffled_personalized_rr_epsilon([1.0, 1.0], 1e-6, 0, [0]), "others_bits"),
        (lambda: liu23_epsilon([1.0], 1e-6), "at least 2 users"),
        (lambda: sample_personalized_reduction([1.0, 1.0], 0.0, 0, size=0), "size"),
    ],
)
def test_bad_input_for_the_rigorous_accountants(call, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        call()


def test_normal_approximation_error_against_direct_rectangle_probabilities() -> None:
    from scipy.stats import binom, multivariate_normal

    n, eps0 = 40, 1.0
    m, p = n - 1, 2 / (1 + np.exp(eps0))
    mean = np.full(2, m * p / 2)
    cov = np.array([[m * p / 2 * (1 - p / 2), -m * p * p / 4],
                    [-m * p * p / 4, m * p / 2 * (1 - p / 2)]])
    law = multivariate_normal(mean, cov)
    gaps = []
    for k0 in range(m + 1):
        for k1 in range(m + 1 - k0):
            exact = binom.pmf(k0 + k1, m, p) * binom.pmf(k0, k0 + k1, 0.5)
            upper = law.cdf([k0 + 0.5, k1 + 0.5]) - law.cdf([k0 - 0.5, k1 + 0.5])
            lower = law.cdf([k0 + 0.5, k1 - 0.5]) - law.cdf([k0 - 0.5, k1 - 0.5])
            gaps.append(exact - (upper - lower))
    point, tv = gspa_normal_approximation_error(eps0, n)
    assert point == pytest.approx(np.max(np.abs(gaps)), rel=1e-3)
    assert tv >= 0.5 * np.sum(np.abs(gaps)) - 1e-4  # the grid also counts cells with k0 + k1 > m


def test_normal_approximation_error_shrinks_like_one_over_root_n() -> None:
    small = gspa_normal_approximation_error(2.0, 100)[1]
    large = gspa_normal_approximation_error(2.0, 10_000)[1]
    assert 7 < small / large < 13  # sqrt(10_000 / 100) = 10


@pytest.mark.parametrize("n", [2, 10_000, 10**7, 10**9])
def test_population_counts_with_one_level_match_the_clone_accountant(n: int) -> None:
    # one level held by n users is the clone pair with q = 2 / (e^eps0 + 1), n - 1 blankets
    ours = personalized_numerical_epsilon([1.0], 0.0, 1e-10, counts=[n])
    expected = clone_numerical_epsilon(1.0, n, 1e-10, variant="stronger")
    assert ours == pytest.approx(expected, rel=1e-9)


def test_population_counts_match_the_user_by_user_array() -> None:
    levels, sizes = np.array([0.3, 1.0, 2.5]), np.array([300, 150, 50])
    per_user = np.repeat(levels, sizes)
    for target_level, user in ((None, None), (1, 300), (0, 0)):
        grouped = personalized_numerical_epsilon(levels, 0.0, 1e-8, target=target_level,
                                                 counts=sizes)
        listed = personalized_numerical_epsilon(per_user, 0.0, 1e-8, target=user)
        assert grouped == pytest.approx(listed, rel=1e-9)


@pytest.mark.parametrize("counts", [[1, 0], [-1, 5], [1.5, 2], [3], [10**10, 1]])
def test_population_counts_are_validated(counts: list) -> None:
    with pytest.raises(ValueError):
        personalized_numerical_epsilon([0.5, 1.0], 0.0, 1e-6, counts=counts)


def test_population_counts_reject_an_empty_target_level() -> None:
    with pytest.raises(ValueError, match="no users"):
        personalized_numerical_epsilon([0.5, 1.0], 0.0, 1e-6, target=1, counts=[10, 0])


# Hostile input (issue: clear errors for bad input, no silent NaN, no hangs)


def test_normal_approximation_error_refuses_what_it_cannot_compute() -> None:
    # a Gaussian far narrower than a unit cell fell between the quadrature nodes: (1.0, 1.0)
    # where the error is about 0
    with pytest.raises(ValueError, match=r"standard deviation below 0\.5"):
        gspa_normal_approximation_error(50.0, 1000)
    # the grid would have held 6e9 cells (45 GiB)
    with pytest.raises(ValueError, match="points per axis"):
        gspa_normal_approximation_error(1.0, 10**8)


def test_messages_name_the_per_user_arguments() -> None:
    with pytest.raises(ValueError, match="eps_i must hold the levels of at least 2 users"):
        liu23_epsilon([1.0], 1e-6)
    with pytest.raises(ValueError, match="delta_i"):
        personalized_clone_delta(0.1, [1.0, 1.0, 1.0], [0.0, 0.0], target=0)
    with pytest.raises(TypeError, match="delta_i"):
        gspa_epsilon([1.0, 1.0], "0.0", 1e-6)
    with pytest.raises(ValueError, match="eps must hold"):
        gspa_mu(1.0)


def test_limits_of_the_sampler_and_of_the_certified_accountants() -> None:
    with pytest.raises(ValueError, match="size must be at most"):
        sample_personalized_reduction([1.0, 0.5, 2.0], 0.0, 0, size=10**12)
    with pytest.raises(ValueError, match="random numbers"):
        sample_personalized_reduction(np.ones(10_001), 0.0, 0, size=10**6)
    # the truncation 1e-12 delta underflowed to 0 ("tail must lie in (0, 1)")
    with pytest.raises(ValueError, match="delta must lie in \\[1e-150"):
        personalized_numerical_epsilon([1.0, 1.0], 0.0, 5e-324)


def test_levels_too_small_for_the_population_are_a_value_error() -> None:
    # formerly a FloatingPointError from inside the divergence
    with pytest.raises(ValueError, match="eps_i"):
        personalized_clone_delta(0.0, np.full(10**5, 1e-12), 0.0, 0)


def test_gspa_mu_beyond_the_float_range_is_an_error_not_an_infinity() -> None:
    with pytest.raises(ValueError, match="mu exceeds the float range"):
        gspa_mu([1500.0, 1500.0])
    with pytest.raises(ValueError, match="above the supported"):
        gspa_epsilon([40.0, 40.0], 0.0, 1e-6)
