"""Issue 36 (Meehan et al. 2022): the d_sigma level of any mechanism read from its table
(``privacy_loss_from_table``), Lemma 2 and Theorems A.1 and A.2 by exact enumeration, and the
Alice, Bob and Luis argument of Appendix A.5.

The level is checked against a literal reading of Definitions 4.2 and 4.3 (every pair of input
orders that agree at every position outside a group, every output), against
``exhaustive_privacy_loss`` (which works on the law of release orders, not on a table) and
against ``inference.arrangement_loss`` (which works on report sequences with repeated values).
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy.sparse import coo_array
from scipy.sparse.csgraph import connected_components

from shuffle_lib.dsigma import (
    DSigmaMechanism,
    exhaustive_privacy_loss,
    groups_within_radius,
    privacy_loss_from_table,
)
from shuffle_lib.inference import (
    all_orders,
    arrangement_loss,
    assignment_likelihood,
    release_order_probabilities,
)


def literal_level(table: np.ndarray, groups: list[list[int]]) -> float:
    """Definition 4.3 read literally: max over groups, neighbouring pairs and outputs."""
    n = len(groups)
    orders = [tuple(o) for o in itertools.permutations(range(n))]
    worst = 0.0
    for group in groups:
        outside = [j for j in range(n) if j not in group]
        for a, sigma in enumerate(orders):
            for b, other in enumerate(orders):
                if a == b or any(sigma[j] != other[j] for j in outside):
                    continue
                for w in range(table.shape[1]):
                    if table[a, w] > 0 and table[b, w] == 0:
                        return math.inf
                    if table[a, w] > 0:
                        worst = max(worst, math.log(table[a, w] / table[b, w]))
    return worst


def random_groups(n: int, rng: np.random.Generator) -> list[list[int]]:
    groups = []
    for i in range(n):
        others = [j for j in range(n) if j != i and rng.random() < 0.4]
        groups.append(sorted([i, *others]))
    return groups


def random_table(n: int, outputs: int, rng: np.random.Generator, zeros: bool = False
                 ) -> np.ndarray:
    table = rng.random((math.factorial(n), outputs)) + (0.0 if zeros else 0.05)
    if zeros:
        table[rng.random(table.shape) < 0.1] = 0.0
        table[:, 0] += 1e-3  # every row keeps some mass
    return table / table.sum(axis=1, keepdims=True)


def row_of(n: int) -> list[np.ndarray]:
    return groups_within_radius(np.arange(n, dtype=float), 1.0)


@pytest.mark.parametrize("seed", range(12))
def test_table_level_matches_the_literal_definition(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = 3 + seed % 2
    groups = random_groups(n, rng)
    table = random_table(n, 5, rng, zeros=seed % 3 == 0)
    expected = literal_level(table, groups)
    got = privacy_loss_from_table(table, groups)
    if math.isinf(expected):
        assert math.isinf(got)
    else:
        assert math.isclose(got, expected, rel_tol=1e-12, abs_tol=1e-12)


@pytest.mark.parametrize(("n", "radius", "distance"), [
    (4, 1.0, "kendall"), (5, 1.0, "hamming"), (6, 1.0, "kendall"), (6, 2.0, "hamming"),
])
def test_table_level_matches_exhaustive_privacy_loss(n: int, radius: float,
                                                     distance: str) -> None:
    groups = groups_within_radius(np.arange(n, dtype=float), radius)
    mechanism = DSigmaMechanism(groups, alpha=1.0, distance=distance)
    table = assignment_likelihood(release_order_probabilities(mechanism))
    level = privacy_loss_from_table(table, groups)
    assert math.isclose(level, exhaustive_privacy_loss(mechanism), rel_tol=1e-9)
    assert level <= 1.0 + 1e-9  # Theorem 4.3


def test_table_level_matches_arrangement_loss_for_a_random_shuffler() -> None:
    # arrangement_loss enumerates report sequences in {0..3}^4 (repeated values included)
    rng = np.random.default_rng(5)
    law = rng.dirichlet(np.ones(24))
    table = assignment_likelihood(law)
    for group in ([0, 1], [1, 2, 3], [0, 3]):
        own = [group if i == group[0] else [i] for i in range(4)]
        assert math.isclose(privacy_loss_from_table(table, own),
                            arrangement_loss(law, 4, group), rel_tol=1e-9)


@pytest.mark.parametrize("seed", range(6))
def test_convexity_post_processing_and_composition(seed: int) -> None:
    rng = np.random.default_rng(100 + seed)
    groups = random_groups(4, rng)
    tables = [random_table(4, 6, rng) for _ in range(3)]
    levels = [privacy_loss_from_table(t, groups) for t in tables]
    # Lemma 2: a mixture is at most as revealing as its most revealing part
    weights = rng.dirichlet(np.ones(3))
    mixture = sum(w * t for w, t in zip(weights, tables, strict=True))
    assert privacy_loss_from_table(mixture, groups) <= max(levels) + 1e-12
    # Theorem A.1: a random stochastic map and a deterministic one (merging outputs)
    garble = rng.dirichlet(np.ones(4), size=6)
    merge = np.zeros((6, 2))
    merge[np.arange(6), rng.integers(0, 2, 6)] = 1.0
    for post in (garble, merge):
        assert privacy_loss_from_table(tables[0] @ post, groups) <= levels[0] + 1e-12
    # Theorem A.2: two independent runs add at most their levels, exactly for one table twice
    joint = np.einsum("ij,ik->ijk", tables[0], tables[1]).reshape(24, -1)
    assert privacy_loss_from_table(joint, groups) <= levels[0] + levels[1] + 1e-12
    twice = np.einsum("ij,ik->ijk", tables[2], tables[2]).reshape(24, -1)
    assert math.isclose(privacy_loss_from_table(twice, groups), 2 * levels[2], rel_tol=1e-12)


def test_repeated_reports_are_a_post_processing_of_distinct_ones() -> None:
    # the release for y = (0, 1, 1, 0, 1) computed directly, order by order, equals the release
    # for distinct reports read through y, and its level is at most theirs
    groups = row_of(5)
    law = release_order_probabilities(DSigmaMechanism(groups, alpha=1.0))
    orders = all_orders(5)
    y = np.array([0, 1, 1, 0, 1])
    codes = 2 ** np.arange(5)
    direct = np.zeros((120, 32))
    for k, sigma in enumerate(orders):
        for o, p in zip(orders, law, strict=True):
            direct[k, y[sigma][o] @ codes] += p
    reading = np.zeros((120, 32))
    reading[np.arange(120), y[orders] @ codes] = 1.0
    distinct = assignment_likelihood(law)
    assert np.allclose(direct, distinct @ reading)
    assert privacy_loss_from_table(direct, groups) <= privacy_loss_from_table(distinct, groups)


def test_alice_bob_luis() -> None:
    groups = [[0, 1], [0, 1, 2], [1, 2]]
    orders = [tuple(o) for o in all_orders(3)]
    sequential = np.zeros(6)  # shuffle the slots of G_A, then those of G_L
    for first in ((0, 1, 2), (1, 0, 2)):
        for second in ((0, 1, 2), (0, 2, 1)):
            sequential[orders.index(tuple(np.array(first)[list(second)]))] += 0.25
    table = assignment_likelihood(sequential)
    per_person = [privacy_loss_from_table(
        table, [groups[j] if j == i else [j] for j in range(3)]) for i in range(3)]
    assert per_person == [0.0, math.inf, math.inf]
    # one shuffled bag per group: a deterministic output that differs between neighbours
    reports = np.array([10, 20, 30])
    outputs = [tuple(frozenset(reports[list(o)][g].tolist()) for g in groups) for o in orders]
    assert len(set(outputs)) == 6  # every input order is recognised from its bags
    bag_table = np.eye(6)[[list(dict.fromkeys(outputs)).index(out) for out in outputs]]
    assert math.isinf(privacy_loss_from_table(bag_table, groups))


def groups_shuffled_in_turn(groups: list[list[int]]) -> np.ndarray:
    """Law of the release order when the slots of each group are shuffled uniformly, one group
    after another: every tuple of per-group shuffles, composed, has equal weight."""
    n = len(groups)
    index = {tuple(o): k for k, o in enumerate(all_orders(n))}
    choices = []
    for group in groups:
        full = []
        for moved in itertools.permutations(group):
            perm = np.arange(n)
            perm[list(group)] = moved
            full.append(perm)
        choices.append(full)
    law = np.zeros(math.factorial(n))
    combos = list(itertools.product(*choices))
    for combo in combos:
        order = np.arange(n)
        for perm in combo:
            order = order[perm]
        law[index[tuple(order)]] += 1 / len(combos)
    return law


def test_shuffling_the_groups_in_turn() -> None:
    # Alice, Bob and Luis: G_B is everybody, so the three shuffles in turn are a uniform shuffle
    abl = [[0, 1], [0, 1, 2], [1, 2]]
    law = groups_shuffled_in_turn(abl)
    assert np.allclose(law, 1 / 6)
    table = assignment_likelihood(law)
    assert all(literal_level(table, [abl[j] if j == i else [j] for j in range(3)]) < 1e-12
               for i in range(3))
    # four in a row at radius 1: the first slot is settled before the fourth report can move
    row = [g.tolist() for g in row_of(4)]
    assert row == [[0, 1], [0, 1, 2], [1, 2, 3], [2, 3]]
    law = groups_shuffled_in_turn(row)
    assert law[all_orders(4)[:, 0] == 3].sum() == 0
    table = assignment_likelihood(law)
    levels = [literal_level(table, [row[j] if j == i else [j] for j in range(4)])
              for i in range(4)]
    assert levels[0] < 1e-12 and levels[1] < 1e-12
    assert math.isinf(levels[2]) and math.isinf(levels[3])


@pytest.mark.parametrize("n", [4, 5, 6])
def test_alpha_zero_forces_a_uniform_release_on_a_row(n: int) -> None:
    # level 0 asks P(o) = P(tau o) for every rearrangement tau inside a group; joining those
    # orders leaves a single class, so only the uniform law qualifies
    groups = row_of(n)
    orders = all_orders(n)
    index = {tuple(o): k for k, o in enumerate(orders)}
    rows, cols = [], []
    for group in groups:
        for a, b in itertools.combinations(group.tolist(), 2):
            tau = np.arange(n)
            tau[[a, b]] = [b, a]
            for k, o in enumerate(orders):
                rows.append(k)
                cols.append(index[tuple(tau[o])])
    graph = coo_array((np.ones(len(rows)), (rows, cols)), shape=(len(orders), len(orders)))
    assert connected_components(graph, directed=False)[0] == 1
    uniform = np.full(len(orders), 1 / len(orders))
    assert privacy_loss_from_table(assignment_likelihood(uniform), groups) == 0.0


def test_privacy_loss_from_table_validation() -> None:
    pair = [[0, 1], [1, 0]]
    assert math.isclose(privacy_loss_from_table([[0.75, 0.25], [0.25, 0.75]], pair),
                        math.log(3))
    assert privacy_loss_from_table(np.eye(2), [[0], [1]]) == 0.0
    assert math.isinf(privacy_loss_from_table(np.eye(2), pair))
    with pytest.raises(ValueError, match="rows"):
        privacy_loss_from_table(np.full((3, 2), 0.5), pair)
    with pytest.raises(ValueError, match="sum to 1"):
        privacy_loss_from_table([[0.5, 0.2], [0.5, 0.5]], pair)
    with pytest.raises(ValueError, match="likelihood"):
        privacy_loss_from_table([[1.5, -0.5], [0.5, 0.5]], pair)
    with pytest.raises(ValueError, match="n <= 8"):
        privacy_loss_from_table(np.ones((1, 1)), [[i] for i in range(9)])
    with pytest.raises(ValueError, match="10\\*\\*7"):
        privacy_loss_from_table(np.broadcast_to(0.5, (2, 10**7)), pair)
    with pytest.raises(TypeError):
        privacy_loss_from_table(np.eye(2), "groups")
