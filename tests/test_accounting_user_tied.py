"""Accountants for the user-tied model of personalized shuffling (Chen, Cao & Ge, GSPA): people
own their randomizers. Personalized Laplace reports (Algorithm 1) through a proved clone weight,
and randomized response whose reports carry their level (Algorithm 2 with levels attached)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy.special import expit

from shuffle_lib.accounting import (
    clone_reduction_epsilon,
    epsilon_for_delta,
    fmt21_numerical_epsilon,
    hockey_stick_divergence,
    laplace_clone_probabilities,
    level_tagged_rr_epsilon,
    personalized_laplace_epsilon,
    personalized_numerical_epsilon,
    shuffled_rr_exact_epsilon,
)


def laplace_density(y: np.ndarray, centre: float, level: float, width: float = 1.0) -> np.ndarray:
    scale = width / level
    return np.exp(-np.abs(y - centre) / scale) / (2 * scale)


@pytest.mark.parametrize(("target", "other"), [(1.0, 1.0), (1.0, 0.5), (2.0, 0.1), (0.3, 0.29)])
def test_laplace_clone_weight_is_the_infimum_of_the_density_ratio(
    target: float, other: float
) -> None:
    # brute force over the data (x_j, x^0, x^1 in {0, 1/2, 1}) and a fine grid of outputs
    y = np.linspace(-30, 31, 244_001)
    weight = laplace_clone_probabilities(target, [other])[0]
    smallest = np.inf
    for x_other, x0, x1 in itertools.product((0.0, 0.5, 1.0), repeat=3):
        mixture = 0.5 * (laplace_density(y, x0, target) + laplace_density(y, x1, target))
        smallest = min(smallest, float(np.min(laplace_density(y, x_other, other) / mixture)))
    assert smallest >= weight * (1 - 1e-12)  # a valid clone weight ...
    assert smallest == pytest.approx(weight, rel=1e-9)  # ... attained at x^0 = x^1, |x_j - x^0| = 1


def test_a_less_noisy_person_has_no_clone_weight() -> None:
    assert laplace_clone_probabilities(0.5, [1.0])[0] == 0.0
    # far out, the target's heavier tail beats the other person's: the ratio tends to 0
    y = np.array([60.0])
    ratio = laplace_density(y, 1.0, 1.0) / laplace_density(y, 0.0, 0.5)
    assert ratio[0] < 1e-10


def shuffled_pair_law(target: float, other: float, x_other: float, x_target: float,
                      y: np.ndarray) -> np.ndarray:
    """Density, on a grid, of the unordered pair of two Laplace reports (target and one other)."""
    first, second = np.meshgrid(y, y, indexing="ij")
    ordered = (laplace_density(first, x_target, target) * laplace_density(second, x_other, other)
               + laplace_density(second, x_target, target) * laplace_density(first, x_other, other))
    return np.where(first < second, ordered, np.where(first == second, ordered / 2, 0.0))


@pytest.mark.parametrize("x_other", [0.0, 0.5, 1.0])
def test_personalized_laplace_bound_holds_for_two_people_by_integration(x_other: float) -> None:
    # two people, target at level 1, the other at 0.5: integrate the exact divergence of the
    # shuffled pair of reports on a grid (step 0.02, tails beyond 25 scale lengths left out)
    step = 0.02
    y = np.arange(-25.0, 26.0, step)
    laws = [shuffled_pair_law(1.0, 0.5, x_other, x_target, y) * step**2 for x_target in (0.0, 1.0)]
    assert laws[0].sum() == pytest.approx(1.0, abs=1e-4)  # the grid's error, well below 1e-3
    laws = [law / law.sum() for law in laws]

    def exact_delta(eps: float) -> float:
        return max(hockey_stick_divergence(laws[0].ravel(), laws[1].ravel(), eps),
                   hockey_stick_divergence(laws[1].ravel(), laws[0].ravel(), eps))

    for delta in (0.3, 0.2, 0.1):
        certified = personalized_laplace_epsilon([1.0, 0.5], delta)
        assert certified < 1.0
        assert exact_delta(certified) <= delta + 1e-3
    if x_other != 0.5:  # the check has teeth: calling the other report a sure clone claims too much
        assert exact_delta(clone_reduction_epsilon(1.0, [1.0], 0.2)) > 0.2


def test_equal_laplace_levels_give_the_fmt21_bound() -> None:
    # with one level the clone weight is e^-eps0, Feldman, McMillan & Talwar (2021)'s
    for eps0, n in ((0.5, 1_000), (2.0, 50_000)):
        ours = personalized_laplace_epsilon(np.full(n, eps0), 1e-6)
        assert ours == pytest.approx(fmt21_numerical_epsilon(eps0, n, 1e-6), rel=1e-9)


def test_personalized_laplace_counts_match_the_listed_population() -> None:
    levels, sizes = np.array([0.1, 0.5, 1.0]), np.array([540, 370, 90])
    grouped = personalized_laplace_epsilon(levels, 1e-6, counts=sizes)
    listed = personalized_laplace_epsilon(np.repeat(levels, sizes), 1e-6)
    assert grouped == pytest.approx(listed, rel=1e-12)
    assert grouped <= 1.0


def test_personalized_laplace_needs_more_than_the_personalized_rr_bound() -> None:
    # Laplace reports are weaker clones than randomized-response reports
    levels = np.repeat([0.1, 0.5, 1.0], [5_400, 3_700, 900])
    assert personalized_laplace_epsilon(levels, 1e-6) > personalized_numerical_epsilon(
        levels, 0.0, 1e-6)


def tagged_rr_laws(
    levels: np.ndarray, target: int, others_bits: np.ndarray, bit: int
) -> np.ndarray:
    """Joint law of the number of ones at every distinct level (levels attached to reports)."""
    distinct = np.unique(levels)
    law = {(): 1.0}
    for level in distinct:
        members = np.flatnonzero(levels == level)
        counts = np.zeros(members.size + 1)
        counts[0] = 1.0
        for person in members:
            holds_one = bit if person == target else others_bits[person]
            one = expit(level) if holds_one else expit(-level)
            counts = counts * (1 - one) + np.concatenate([[0.0], counts[:-1] * one])
        law = {(*key, k): p * counts[k] for key, p in law.items() for k in range(members.size + 1)}
    return np.array([law[key] for key in sorted(law)])


def test_level_tagged_rr_matches_enumeration_of_the_per_level_counts() -> None:
    levels = np.array([1.0, 1.0, 1.0, 1.0, 1.0, 0.5, 0.5, 0.5, 2.0])
    delta = 0.05
    exact = 0.0
    for target in range(levels.size):
        others = [p for p in range(levels.size) if p != target]
        for bits in itertools.product((0, 1), repeat=len(others)):
            others_bits = np.zeros(levels.size, dtype=int)
            others_bits[others] = bits
            laws = [tagged_rr_laws(levels, target, others_bits, b) for b in (0, 1)]
            exact = max(exact, epsilon_for_delta(laws[0], laws[1], delta))
    floor = level_tagged_rr_epsilon(levels, delta, floor=True)
    bound = level_tagged_rr_epsilon(levels, delta)
    assert floor == pytest.approx(exact, abs=1e-9)  # every composition is tried for small groups
    assert floor <= exact + 1e-12 <= bound + 2e-12
    # the lone user at level 2 is exposed: no amplification
    assert exact == pytest.approx(np.log(np.exp(2.0) * (1 - delta) - delta), rel=1e-9)


def test_level_tagged_rr_is_no_better_than_hiding_in_the_own_group() -> None:
    levels = np.repeat([0.1, 0.5, 1.0], [5_400, 3_700, 900])
    assert level_tagged_rr_epsilon(levels, 1e-6, floor=True) == pytest.approx(
        shuffled_rr_exact_epsilon(1.0, 900, 1e-6), abs=1e-12)
    untagged = personalized_numerical_epsilon(levels, 0.0, 1e-6)
    assert level_tagged_rr_epsilon(levels, 1e-6, floor=True) > 3 * untagged


def test_all_distinct_levels_give_no_amplification() -> None:
    levels = np.linspace(0.5, 2.0, 1_000)
    delta = 1e-6
    assert level_tagged_rr_epsilon(levels, delta, floor=True) == pytest.approx(
        2.0 + np.log(1 - delta - delta * np.exp(-2.0)), abs=1e-12)


def test_level_tagged_counts_match_the_listed_population() -> None:
    levels, sizes = np.array([0.2, 1.0]), np.array([40, 3])
    for floor in (False, True):
        grouped = level_tagged_rr_epsilon(levels, 1e-4, counts=sizes, floor=floor)
        listed = level_tagged_rr_epsilon(np.repeat(levels, sizes), 1e-4, floor=floor)
        assert grouped == pytest.approx(listed, abs=1e-12)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: laplace_clone_probabilities(0.0, [1.0]), "target_eps"),
        (lambda: laplace_clone_probabilities(1.0, [-1.0]), "eps_i"),
        (lambda: laplace_clone_probabilities(1.0, [[1.0]]), "1-D"),
        (lambda: personalized_laplace_epsilon([1.0], 1e-6), "at least 2"),
        (lambda: personalized_laplace_epsilon([1.0, 0.0], 1e-6), "eps_i"),
        (lambda: personalized_laplace_epsilon([1.0, 1.0], 0.0), "delta"),
        (lambda: level_tagged_rr_epsilon([1.0, np.nan], 1e-6), "eps_i"),
        (lambda: level_tagged_rr_epsilon([1.0, 1.0], 1.0), "delta"),
        (lambda: level_tagged_rr_epsilon([1.0, 1.0], 1e-6, counts=[1, -1]), "counts"),
    ],
)
def test_bad_input_raises(call, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        call()


@pytest.mark.parametrize("floor", ["yes", None, 2])
def test_level_tagged_floor_must_be_a_bool(floor) -> None:
    # a string was read as True
    with pytest.raises(TypeError, match="floor"):
        level_tagged_rr_epsilon([1.0, 1.0], 1e-6, floor=floor)


@pytest.mark.parametrize("levels, sizes", [
    ([0.1, 0.5, 1.0], [5_400, 3_700, 900]),
    ([0.05, 2.0, 3.0], [90_000, 40, 3]),       # the largest level is not the worst target
    ([0.3, 0.31, 4.0, 8.0], [10**6, 10**5, 2, 1]),
])
@pytest.mark.parametrize("delta", [1e-3, 1e-9])
def test_multi_target_maxima_match_the_targets_one_by_one(levels, sizes, delta):
    """Issue 32, item 3: personalized_laplace_epsilon and level_tagged_rr_epsilon try targets in
    the order of a Gaussian guess and skip a target already certified at the running maximum.
    The result must still be the largest of the targets' own certified values, each computed
    alone by the public single-target routes (up to the root search's 1e-10 tolerance), and
    never below any of them."""
    levels, sizes = np.array(levels), np.array(sizes)
    one_by_one = []
    for t in range(levels.size):
        others = sizes.copy()
        others[t] -= 1
        one_by_one.append(clone_reduction_epsilon(
            float(levels[t]), laplace_clone_probabilities(float(levels[t]), levels), delta,
            counts=others))
    laplace = personalized_laplace_epsilon(levels, delta, counts=sizes)
    assert max(one_by_one) * (1 - 1e-9) <= laplace <= max(one_by_one) * (1 + 1e-9)
    tagged_each = [
        min(personalized_numerical_epsilon([float(level)], 0.0, delta, counts=[int(size)]),
            float(level))
        for level, size in zip(levels, sizes, strict=True) if size > 1
    ]
    tagged = level_tagged_rr_epsilon(levels, delta, counts=sizes)
    assert tagged >= max(tagged_each) * (1 - 1e-9)
    if (sizes > 1).all():
        assert tagged <= max(tagged_each) * (1 + 1e-9)
