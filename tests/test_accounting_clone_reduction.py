"""The general clone reduction (person-specific clone probabilities) against full enumeration of
shuffled reports, the FMT21 identity, and monotonicity in the blanket."""

from __future__ import annotations

import numpy as np
import pytest

from shuffle_lib.accounting import (
    clone_reduction_epsilon,
    epsilon_for_delta,
    fmt21_numerical_epsilon,
)


def _shuffled_counts_law(target_bit: int, target_eps0: float, other_p: np.ndarray) -> np.ndarray:
    """Exact law of (number of 0s, number of 1s) among the shuffled reports: the target runs
    binary randomized response on {0, 1}; person j outputs 0 and 1 with probability other_p[j]
    each, anything else otherwise (k-ary randomized response on a value outside {0, 1}). Given
    these two counts the other symbols have the same law under both datasets, so this pair of
    counts carries everything the shuffled multiset says about the target."""
    n_others = other_p.size
    law = np.zeros((n_others + 2, n_others + 2))
    law[0, 0] = 1.0
    for p in other_p:  # convolve user by user on the (zeros, ones) grid
        law = (1 - 2 * p) * law + p * np.roll(law, 1, axis=0) + p * np.roll(law, 1, axis=1)
    keep = np.exp(target_eps0) / (1 + np.exp(target_eps0))
    truthful, flipped = (np.roll(law, 1, axis=target_bit), np.roll(law, 1, axis=1 - target_bit))
    return (keep * truthful + (1 - keep) * flipped).ravel()


@pytest.mark.parametrize(("target_eps0", "delta", "seed"), [
    (1.0, 1e-3, 0), (2.0, 1e-6, 1), (0.5, 1e-2, 2), (3.0, 1e-9, 3),
])
def test_matches_full_enumeration_of_the_shuffled_reports(
    target_eps0: float, delta: float, seed: int
) -> None:
    gen = np.random.default_rng(seed)
    levels = gen.uniform(0.05, 2.0, 30)
    k = 5
    other_p = 1 / (np.exp(levels) + k - 1)  # k-ary RR at its own level on a value outside {0, 1}
    exact = epsilon_for_delta(
        _shuffled_counts_law(0, target_eps0, other_p),
        _shuffled_counts_law(1, target_eps0, other_p),
        delta,
    )
    ours = clone_reduction_epsilon(target_eps0, 2 * other_p, delta)
    assert exact - 1e-11 <= ours <= exact * (1 + 1e-6) + 1e-11


@pytest.mark.parametrize(("eps0", "n", "delta"), [(0.5, 50, 1e-3), (1.0, 10_000, 1e-6),
                                                  (4.0, 100_000, 1e-9)])
def test_equal_probabilities_are_the_fmt21_bound(eps0: float, n: int, delta: float) -> None:
    ours = clone_reduction_epsilon(eps0, np.full(n - 1, np.exp(-eps0)), delta)
    grouped = clone_reduction_epsilon(eps0, [np.exp(-eps0)], delta, counts=[n - 1])
    expected = fmt21_numerical_epsilon(eps0, n, delta)
    assert ours == pytest.approx(expected, rel=1e-9)
    assert grouped == pytest.approx(expected, rel=1e-9)


def test_the_personal_randomizer_counterexample() -> None:
    # everyone 1-LDP, yet the target (binary RR at 1) hides among 100-ary RR users at 0.01 whose
    # reports are rarely clones of its own: the bound at the largest level does not hold
    n, delta = 10_000, 1e-6
    exact = clone_reduction_epsilon(1.0, np.full(n - 1, 2 / (np.exp(0.01) + 99)), delta)
    claimed = fmt21_numerical_epsilon(1.0, n, delta)
    assert exact > 4 * claimed


def test_adding_a_person_to_the_blanket_never_increases_epsilon() -> None:
    gen = np.random.default_rng(4)
    for _ in range(20):
        probs = gen.uniform(0.0, 1.0, int(gen.integers(2, 200)))
        eps0, delta = float(gen.uniform(0.1, 4.0)), float(10 ** gen.uniform(-9, -2))
        before = clone_reduction_epsilon(eps0, probs, delta)
        after = clone_reduction_epsilon(eps0, np.append(probs, gen.uniform()), delta)
        assert after <= before * (1 + 1e-9) + 1e-12


@pytest.mark.parametrize("probs", [[-0.1, 0.5], [0.5, 1.5], [[0.5, 0.5]], [np.nan]])
def test_bad_probabilities_raise(probs: list) -> None:
    with pytest.raises(ValueError):
        clone_reduction_epsilon(1.0, probs, 1e-6)


@pytest.mark.parametrize("level", [0.5, 3.0, 30.0, 709.8, 746.0, 1e300])
def test_closed_form_of_the_top_outcome_agrees_with_the_count_by_count_sum(level: float) -> None:
    # from e^eps >= c_max + 1 on, only each count's top outcome counts: the closed form the
    # reduction switches to there must agree with the general count-by-count sum (both certified)
    from shuffle_lib.accounting._binomial import CloneCountReduction, averaged_mixture_divergence

    probs, sizes = np.array([0.3, 0.05, 0.8]), np.array([4, 3, 2])
    reduction = CloneCountReduction(probs, sizes, level, 1e-18)
    for eps in np.linspace(reduction.closed_from, min(level, 30.0), 7)[:-1]:
        closed, _ = reduction.bound(float(eps))
        summed, _, error = averaged_mixture_divergence(
            reduction.weights, reduction.counts, reduction.keep, reduction.flip, float(eps),
            reduction.weight_rtol, level,
        )
        assert summed <= closed <= summed + error + reduction.dropped + 1e-15
