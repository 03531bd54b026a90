"""The neutral-clone decomposition and the theorem it proves: the stronger clone bound
(clone probability 2/(e^eps0+1)) holds for every eps0-LDP randomizer.

Checked by exhaustive enumeration: random and extremal (vertex) eps0-LDP channels with up to four
inputs, every dataset of the others drawn at random, n up to 6, the exact shuffled divergence
against the reduction's and the stronger clone pair's; the monotonicity in alpha on a grid, and the
reference sum against a brute-force enumeration of the four types.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from shuffle_lib.accounting import (
    clone_numerical_epsilon,
    clone_probability,
    clone_reduction_delta,
)
from shuffle_lib.accounting.decomposition import (
    extremal_ldp_channel,
    interior_ldp_channel,
    neutral_clone_decomposition,
    neutral_clone_delta,
    neutral_clone_enumerated,
    neutral_clone_probabilities,
    shuffled_channel_delta,
)

EPS0S = (0.5, 1.5, 3.0)
EPS_GRID = (0.0, 0.1, 0.4, 1.0)


def test_channel_generators_are_ldp_and_extremal_ones_are_vertices() -> None:
    rng = np.random.default_rng(7)
    for _ in range(60):
        eps0 = float(rng.choice([0.1, 1.0, 4.0, 15.0]))
        inputs = int(rng.integers(2, 7))
        vertex = extremal_ldp_channel(eps0, inputs, rng)
        inside = interior_ldp_channel(eps0, inputs, int(rng.integers(1, 9)), rng)
        for channel in (vertex, inside):
            assert np.allclose(channel.sum(axis=1), 1.0, rtol=0, atol=1e-12)
            assert (channel > 0).all()
        ratios = np.log(vertex.max(axis=0) / vertex.min(axis=0))
        assert ratios.max() <= eps0 * (1 + 1e-9)
        # a vertex of {w >= 0 : every row sums to 1} has at most one positive weight per row
        assert vertex.shape[1] <= inputs
        # every column is a pattern: each entry is its column's smallest one, or p times it
        scaled = vertex / vertex.min(axis=0)
        assert np.allclose(np.minimum(abs(scaled - 1), abs(scaled - math.exp(eps0))), 0,
                           atol=1e-9 * math.exp(eps0))
        assert np.log(inside.max(axis=0) / inside.min(axis=0)).max() < eps0


def brute_force_shuffled_delta(channel: np.ndarray, targets: tuple[int, int],
                               others: list[int], eps: float) -> float:
    """Every sequence of reports, then group by its sorted multiset: an independent route."""
    laws = []
    for target in targets:
        rows = [channel[target]] + [channel[o] for o in others]
        law: dict[tuple[int, ...], float] = {}
        for seq in itertools.product(range(channel.shape[1]), repeat=len(rows)):
            key = tuple(sorted(seq))
            law[key] = law.get(key, 0.0) + math.prod(r[y] for r, y in zip(rows, seq, strict=True))
        laws.append(law)
    return sum(max(v - math.exp(eps) * laws[1].get(k, 0.0), 0.0) for k, v in laws[0].items())


def test_exact_shuffled_divergence_agrees_with_brute_force() -> None:
    rng = np.random.default_rng(1)
    for eps0 in EPS0S:
        channel = interior_ldp_channel(eps0, 3, 3, rng)
        for others in ([0, 2], [2, 2, 1], [1]):
            for eps in EPS_GRID:
                exact = shuffled_channel_delta(channel, (0, 1), others, eps)
                brute = brute_force_shuffled_delta(channel, (0, 1), others, eps)
                assert abs(exact - brute) <= 1e-12, (eps0, others, eps, exact, brute)


@pytest.mark.parametrize("eps0", EPS0S)
def test_the_decomposition_rebuilds_every_row(eps0: float) -> None:
    rng = np.random.default_rng(2)
    p = math.exp(eps0)
    for trial in range(40):
        inputs = 2 + trial % 3
        channel = (extremal_ldp_channel(eps0, inputs, rng) if trial % 2
                   else interior_ldp_channel(eps0, inputs, 5, rng))
        parts = neutral_clone_decomposition(channel, eps0)
        assert 0 <= parts.alpha <= 1 / (p + 1) + 1e-15
        assert abs(parts.nu - (1 - (p + 1) * parts.alpha)) < 1e-9
        a, nu = parts.alpha, parts.nu
        assert np.allclose(channel[0], p * a * parts.m0 + a * parts.m1 + nu * parts.neutral,
                           atol=1e-12)
        assert np.allclose(channel[1], a * parts.m0 + p * a * parts.m1 + nu * parts.neutral,
                           atol=1e-12)
        clones = a * parts.m0 + a * parts.m1 + nu * parts.neutral / p
        # every row is the clones plus a non-negative leftover of the stated mass
        assert np.allclose(channel, clones + parts.leftover, atol=1e-12)
        leftover_mass = 1 - 2 * a - nu / p
        assert np.allclose(parts.leftover.sum(axis=1), leftover_mass, atol=1e-9)


def test_the_decomposition_refuses_a_channel_above_its_level() -> None:
    with pytest.raises(ValueError, match="not eps0"):
        neutral_clone_decomposition([[0.9, 0.1], [0.1, 0.9]], 1.0)


@pytest.mark.parametrize("eps0", EPS0S)
def test_every_ldp_channel_stays_below_the_stronger_clone_pair(eps0: float) -> None:
    """The theorem, by exhaustive enumeration: exact shuffled divergence <= reduction's divergence
    G(alpha) <= stronger clone pair, for random and extremal channels and random datasets."""
    rng = np.random.default_rng(3)
    stronger = clone_probability(eps0, "stronger")
    worst_ratio = 0.0
    for trial in range(30):
        inputs = 3 + trial % 2
        channel = (extremal_ldp_channel(eps0, inputs, rng) if trial % 3
                   else interior_ldp_channel(eps0, inputs, 4, rng))
        if channel.shape[1] > 6:
            channel = channel[:, :6] / channel[:, :6].sum(axis=1, keepdims=True)
            if np.log(channel.max(axis=0) / channel.min(axis=0)).max() > eps0:
                continue
        n = 2 + trial % 4
        others = list(rng.integers(0, inputs, size=n - 1))
        alpha = neutral_clone_decomposition(channel, eps0).alpha
        for eps in EPS_GRID:
            exact = shuffled_channel_delta(channel, (0, 1), others, eps)
            reduced = neutral_clone_delta(eps, eps0, n, alpha)
            pair = clone_reduction_delta(eps, eps0, n, stronger)
            assert exact <= reduced + 1e-12, (trial, eps, exact, reduced)
            assert reduced <= pair + 1e-12, (trial, eps, reduced, pair)
            if pair > 1e-9:
                worst_ratio = max(worst_ratio, exact / pair)
    assert 0 < worst_ratio <= 1


@pytest.mark.parametrize("eps0", EPS0S)
@pytest.mark.parametrize("n", [2, 7, 40, 300])
def test_the_reduction_grows_with_alpha_up_to_the_stronger_clone_pair(eps0: float, n: int) -> None:
    p = math.exp(eps0)
    for eps in (0.0, 0.05, 0.3, eps0 / 2, 0.99 * eps0):
        values = [neutral_clone_delta(eps, eps0, n, f / (p + 1))
                  for f in np.linspace(0, 1, 21)]
        assert all(b >= a - 1e-13 for a, b in itertools.pairwise(values)), (eps, values)
        pair = clone_reduction_delta(eps, eps0, n, clone_probability(eps0, "stronger"))
        # the certified pair is an upper bound within its tolerance (1e-6 relative + 1e-120)
        assert values[-1] <= pair * (1 + 1e-9) + 1e-15
        assert pair <= values[-1] * (1 + 1e-6) + 1e-119


def test_the_reference_sum_agrees_with_enumerating_the_types() -> None:
    for eps0 in EPS0S:
        p = math.exp(eps0)
        for n in (2, 5, 9):
            for f in (0.0, 0.3, 1.0):
                for eps in EPS_GRID:
                    got = neutral_clone_delta(eps, eps0, n, f / (p + 1))
                    want = neutral_clone_enumerated(eps, eps0, n, f / (p + 1))
                    assert abs(got - want) <= 1e-12, (eps0, n, f, eps, got, want)


def test_type_probabilities_sum_to_one_and_match_the_stronger_clone() -> None:
    for eps0 in (1e-6, 0.5, 3.0, 50.0):
        p = math.exp(eps0)
        top = neutral_clone_probabilities(eps0, 1 / (p + 1))
        assert math.isclose(top[:2].sum(), clone_probability(eps0, "stronger"), rel_tol=1e-12)
        assert abs(top[2]) < 1e-15
        for f in (0.0, 0.5):
            probs = neutral_clone_probabilities(eps0, f / (p + 1))
            assert math.isclose(probs.sum(), 1.0, rel_tol=1e-12) and (probs >= 0).all()


def test_the_epsilon_of_the_reduction_is_its_root_and_falls_with_alpha() -> None:
    from shuffle_lib.accounting.decomposition import neutral_clone_epsilon

    for eps0, n in ((1.0, 200), (3.0, 1000)):
        p = math.exp(eps0)
        previous = math.inf
        for f in (1.0, 0.5, 0.1):
            eps = neutral_clone_epsilon(eps0, n, 1e-6, f / (p + 1))
            assert eps <= previous
            previous = eps
            assert neutral_clone_delta(eps, eps0, n, f / (p + 1)) <= 1e-6
            if eps > 0:
                assert neutral_clone_delta(eps * (1 - 1e-6), eps0, n, f / (p + 1)) > 1e-6
        # at the largest alpha it is the certified stronger clone bound, up to its tolerance
        top = neutral_clone_epsilon(eps0, n, 1e-6, 1 / (p + 1))
        certified = float(clone_numerical_epsilon(eps0, n, 1e-6, "stronger"))
        assert abs(top - certified) <= 1e-6 * certified
