"""d_sigma-privacy mechanism (Meehan et al. 2022, Algorithm 1): worked example, exhaustive privacy
check, groups, widths, sensitivity, preservation."""

from __future__ import annotations

import itertools
import math
import time

import networkx as nx
import numpy as np
import pytest
from scipy.stats import hypergeom

from shuffle_lib.dsigma import (
    DSigmaMechanism,
    bfs_reference_permutation,
    check_groups,
    empirical_preservation,
    empirical_preservation_of_subsets,
    exhaustive_privacy_loss,
    group_widths,
    groups_from_forest,
    groups_from_graph,
    groups_nearest,
    groups_with_known_width,
    groups_within_radius,
    hamming_class_count,
    hamming_crossing_counts,
    hamming_decomposition,
    hamming_preservation_delta,
    kendall_neighbour_changes,
    kendall_sensitivity,
    kendall_tau_positions,
    max_width,
    optimal_width_brute_force,
    output_order,
    preservation,
    random_reference_width,
    reidentification_odds_bound,
    rescaled_alpha,
    sensitivity_brute_force,
    z_order,
)
from shuffle_lib.permutations import kendall_tau_distance, rank_distance

# Appendix A.10 of Meehan et al. (2022), 1-based as printed: G5 = {5, 2, 3, 8, 4}, G4 = {4, 5, 7},
# G8 = {8, 3, 5}; the other groups are one choice consistent with its figure and reference.
A10_GROUPS = [np.array(g) - 1 for g in ([1, 2], [2, 1, 5], [3, 6, 5, 8], [4, 5, 7],
                                         [5, 2, 3, 8, 4], [6, 3], [7, 4], [8, 3, 5])]
A10_REFERENCE = np.array([5, 2, 3, 8, 4, 1, 6, 7]) - 1


def test_worked_example_of_appendix_a10() -> None:
    reference = bfs_reference_permutation(A10_GROUPS)
    np.testing.assert_array_equal(reference, A10_REFERENCE)
    widths = group_widths(reference, A10_GROUPS)
    assert widths[3] == 7 and widths.max() == 7  # omega_4 = 7
    mech = DSigmaMechanism(A10_GROUPS, alpha=2.8)
    assert mech.sensitivity == 28.0 and mech.theta == pytest.approx(0.1)
    drawn = np.array([3, 2, 5, 4, 8, 1, 7, 6]) - 1
    order = output_order(reference, drawn)
    y = np.array([f"y{i}" for i in range(1, 9)])
    assert y[order].tolist() == ["y1", "y2", "y5", "y8", "y3", "y7", "y6", "y4"]


def _random_groups(n: int, rng: np.random.Generator, max_extra: int = 3) -> list[np.ndarray]:
    groups = []
    for i in range(n):
        extra = rng.choice(np.delete(np.arange(n), i), size=rng.integers(0, max_extra + 1),
                           replace=False)
        groups.append(np.concatenate([[i], extra]))
    return groups


@pytest.mark.parametrize("distance", ["kendall", "hamming"])
def test_exhaustive_privacy_check_on_random_groups(distance: str) -> None:
    rng = np.random.default_rng(3)
    reached = []
    for n in (4, 5, 6):
        for _ in range(3):
            groups = _random_groups(n, rng)
            mech = DSigmaMechanism(groups, alpha=1.0, distance=distance)
            loss = exhaustive_privacy_loss(mech)
            assert loss <= mech.alpha + 1e-9
            assert loss == pytest.approx(mech.theta * sensitivity_brute_force(
                mech.reference, groups, distance), abs=1e-9)
            reached.append(loss > mech.alpha - 1e-9)
    if distance == "hamming":
        assert all(reached)  # the Hamming sensitivity (largest group) is always attained


def test_sensitivity_bound_of_property_4_holds_and_is_tight_for_contiguous_groups() -> None:
    rng = np.random.default_rng(5)
    for _ in range(12):
        groups = _random_groups(6, rng, max_extra=2)
        reference = rng.permutation(6)
        exact = sensitivity_brute_force(reference, groups)
        assert exact <= kendall_sensitivity(max_width(reference, groups)) + 1e-12
    # a group filling its window of the reference can be reversed: the bound is attained
    groups = [np.array([0, 1, 2])] + [np.array([i]) for i in range(1, 6)]
    assert sensitivity_brute_force(np.arange(6), groups) == kendall_sensitivity(2) == 3.0


def test_wrong_convention_fails_the_check() -> None:
    # members 0 and 5 form a group: the BFS reference puts them side by side (width 1), so theta
    # = alpha; a Mallows model on inversions of the release order itself (ignoring the reference)
    # would let their swap change the distance by up to 9.
    n = 6
    groups = [np.array([0, 5])] + [np.array([i]) for i in range(1, 5)] + [np.array([5, 0])]
    mech = DSigmaMechanism(groups, alpha=1.0)
    assert mech.width == 1 and exhaustive_privacy_loss(mech) <= 1.0 + 1e-9
    orders = np.array(list(itertools.permutations(range(n))))
    wrong = np.array([-mech.theta * sum(o[i] > o[j] for i in range(n) for j in range(i + 1, n))
                      for o in orders], dtype=float)
    swap = np.arange(n)
    swap[[0, 5]] = [5, 0]
    lookup = {tuple(o): k for k, o in enumerate(orders)}
    partner = np.array([lookup[tuple(swap[o])] for o in orders])
    assert np.max(wrong - wrong[partner]) == pytest.approx(9.0)


def test_rescaled_alpha_covers_other_groupings() -> None:
    rng = np.random.default_rng(8)
    for _ in range(4):
        groups, others = _random_groups(5, rng, 2), _random_groups(5, rng, 2)
        mech = DSigmaMechanism(groups, alpha=1.0)
        assert exhaustive_privacy_loss(mech, others) <= rescaled_alpha(mech, others) + 1e-9


def test_mechanism_probabilities_sum_to_one_and_match_sampling() -> None:
    mech = DSigmaMechanism(_random_groups(5, np.random.default_rng(2)), 2.0)
    orders = list(itertools.permutations(range(5)))
    probs = np.exp([mech.permutation_log_prob(np.array(o)) for o in orders])
    assert probs.sum() == pytest.approx(1.0, rel=1e-12)
    draws = [tuple(mech.sample_permutation(seed)) for seed in range(4000)]
    counts = {o: 0 for o in orders}
    for d in draws:
        counts[d] += 1
    observed = np.array([counts[o] for o in orders])
    expected = probs * len(draws)
    big = expected > 20
    chi2 = np.sum((observed[big] - expected[big]) ** 2 / expected[big])
    assert chi2 < big.sum() + 6 * np.sqrt(2 * big.sum())  # about 6 standard deviations


def test_group_constructions_against_brute_force(rng: np.random.Generator) -> None:
    points = rng.random((300, 2))
    radius = 0.08
    dist = np.linalg.norm(points[:, None] - points[None], axis=2)
    for i, g in enumerate(groups_within_radius(points, radius)):
        np.testing.assert_array_equal(g, np.flatnonzero(dist[i] <= radius))
    nearest = groups_nearest(points, 5)
    assert all(g.size == 5 and i in g for i, g in enumerate(nearest))
    graph = nx.gnp_random_graph(80, 0.04, seed=1)
    for i, g in enumerate(groups_from_graph(graph, 2)):
        reach = nx.single_source_shortest_path_length(graph, i, cutoff=2)
        assert g.tolist() == sorted(reach)


def test_bfs_covers_every_component_and_beats_random() -> None:
    rng = np.random.default_rng(4)
    points = np.sort(rng.random(2000))
    groups = groups_within_radius(points[rng.permutation(2000)], 0.002)
    reference = bfs_reference_permutation(groups)
    assert np.array_equal(np.sort(reference), np.arange(2000))
    assert max_width(reference, groups) < random_reference_width(groups, rng) / 10


def test_restart_order_keeps_components_contiguous_and_in_order() -> None:
    rng = np.random.default_rng(5)
    points = rng.random((600, 2))
    groups = groups_within_radius(points, 0.03)
    graph = nx.Graph()
    graph.add_nodes_from(range(600))
    graph.add_edges_from((i, j) for i, g in enumerate(groups) for j in g if i != j)
    component = np.empty(600, dtype=int)
    for label, nodes in enumerate(nx.connected_components(graph)):
        component[list(nodes)] = label
    restarts = rng.permutation(600)
    reference = bfs_reference_permutation(groups, restart_order=restarts)
    labels = component[reference]
    runs = labels[np.r_[True, labels[1:] != labels[:-1]]]
    assert runs.size == component.max() + 1  # every component is one contiguous run
    first_seen = component[restarts][np.sort(np.unique(component[restarts], return_index=True)[1])]
    assert np.array_equal(runs, first_seen)  # and components follow the restart order
    assert reference[0] == restarts[0]
    with pytest.raises(ValueError, match="restart_order"):
        bfs_reference_permutation(groups, restart_order=np.arange(5))


def test_from_positions_orders_components_along_the_line() -> None:
    rng = np.random.default_rng(7)
    points = rng.permutation(np.concatenate([rng.uniform(c, c + 1, 40) for c in (0, 3, 6, 9)]))
    mech = DSigmaMechanism.from_positions(points, 0.5, alpha=2.0)
    groups = groups_within_radius(points, 0.5)
    manual = bfs_reference_permutation(groups, restart_order=z_order(points))
    np.testing.assert_array_equal(mech.reference, manual)
    clusters = np.floor(points[mech.reference] / 3).astype(int)
    assert np.all(np.diff(clusters) >= 0)  # clusters follow each other left to right
    assert mech.width == max_width(manual, groups)


def test_z_order_visits_aligned_blocks_contiguously() -> None:
    side = 16
    grid = np.array([(x, y) for x in range(side) for y in range(side)], dtype=float)
    order = z_order(grid[np.random.default_rng(6).permutation(side * side)], bits=4)
    for block in (2, 4, 8):
        cells = np.random.default_rng(6).permutation(side * side)[order]
        ids = (grid[cells, 0] // block) * side + grid[cells, 1] // block
        assert np.count_nonzero(np.diff(ids)) == (side // block) ** 2 - 1
    values = np.array([3.0, 1.0, 2.0, 1.0])
    assert np.array_equal(z_order(values), np.argsort(values, kind="stable"))
    with pytest.raises(ValueError, match="bits"):
        z_order(np.zeros((3, 4)), bits=20)
    with pytest.raises(ValueError, match="points must not contain NaN"):
        z_order([[0.0, np.nan]])


def test_optimal_width_brute_force_small() -> None:
    groups = [np.array(g) for g in ([0, 3], [1, 2], [2, 1], [3, 0])]
    width, ranking = optimal_width_brute_force(groups)
    assert width == 1 and max_width(ranking, groups) == 1


def test_preservation_and_the_hamming_count() -> None:
    order = np.array([5, 3, 2, 6, 7, 9, 8, 1, 4, 10]) - 1
    assert preservation(order, np.array([1, 4, 5, 7, 8]) - 1) == 0.8
    n, ell = 8, 3
    counts = np.zeros((n + 1, ell + 1))
    for p in itertools.permutations(range(n)):
        p = np.array(p)
        counts[np.count_nonzero(p != np.arange(n)), ell - np.isin(p[:ell], range(ell)).sum()] += 1
    np.testing.assert_array_equal(hamming_crossing_counts(n, ell), counts)


def test_hamming_preservation_delta_matches_sampling() -> None:
    n, ell, eta, theta = 8, 4, 0.75, 0.8
    # groups of all n people: the Hamming sensitivity is n, so alpha = theta n
    mech = DSigmaMechanism([np.roll(np.arange(n), -i) for i in range(n)], alpha=theta * n,
                           distance="hamming")
    assert mech.theta == pytest.approx(theta)
    exact = hamming_preservation_delta(n, ell, eta, theta)
    subset = mech.reference[:ell]
    fails = np.mean([preservation(mech.sample_permutation(s), subset) < eta
                     for s in range(4000)])
    assert abs(fails - exact) < 4 * np.sqrt(exact * (1 - exact) / 4000)


def test_empirical_preservation_is_a_lower_quantile() -> None:
    mech = DSigmaMechanism(A10_GROUPS, alpha=4.0)
    eta = empirical_preservation(mech, [1, 2, 4, 7], 0.1, 200, rng=1)
    values = [preservation(mech.sample_permutation(s), [1, 2, 4, 7]) for s in range(2000)]
    assert np.mean(np.array(values) >= eta) >= 0.85


def test_reidentification_bound() -> None:
    assert reidentification_odds_bound(0.2, 2.0, 60, 5) == pytest.approx(
        11 * np.exp(-(2 * 5 * 0.2 + 2.0)))
    with pytest.raises(ValueError, match="k < r / 2"):
        reidentification_odds_bound(0.2, 1.0, 10, 5)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: DSigmaMechanism([[1], [1]], 1.0), "contain its owner"),
        (lambda: DSigmaMechanism([[0, 2], [1]], 1.0), "outside"),
        (lambda: DSigmaMechanism([[0], [1]], -1.0), "alpha"),
        (lambda: DSigmaMechanism([[0], [1]], 1.0, distance="cayley"), "distance"),
        (lambda: DSigmaMechanism([[0], [1]], 1.0, reference=[0, 0]), "permutation"),
        (lambda: DSigmaMechanism([[0], [1]], 1.0).shuffle([1, 2, 3]), "one report"),
        (lambda: groups_within_radius(np.empty((0, 2)), 1.0), "points must not be empty"),
        (lambda: groups_within_radius([[0.0], [1.0]], -1.0), "radii"),
        (lambda: groups_from_graph(nx.path_graph(3), -1), "non-negative"),
        (lambda: preservation([1, 0], []), "subset"),
        (lambda: sensitivity_brute_force(np.arange(9), [[i] for i in range(9)]), "n <= 8"),
        (lambda: exhaustive_privacy_loss(DSigmaMechanism([[0], [1]], 1.0), reading="pairs"),
         "reading"),
        (lambda: kendall_tau_positions([0, 1], [0, 1, 2]), "same length"),
        (lambda: kendall_neighbour_changes([0, 1, 2], [[0, 1]], [0, 1, 2]), "entries"),
        (lambda: kendall_neighbour_changes([0, 1, 2], [[0, 1, 1]], [0, 1, 2]), "permutation"),
        (lambda: groups_from_forest(nx.cycle_graph(4)), "forest"),
        (lambda: groups_from_forest(nx.relabel_nodes(nx.path_graph(3), {0: 5})), "0..n-1"),
        (lambda: groups_with_known_width(5, 5), "at most n - 1"),
        (lambda: groups_with_known_width(5, -1), "width"),
        (lambda: groups_with_known_width(5, 2, placement="left"), "placement"),
        (lambda: hamming_decomposition([0, 1, 2], [0, 1, 2], [3]), "subset"),
        (lambda: hamming_decomposition([0, 1, 2], [0, 1], [0]), "same length"),
        (lambda: hamming_class_count(4, 5, 0, 0, 0), "exceeds"),
        (lambda: hamming_class_count(4, 2, -1, 0, 0), "a"),
    ],
)
def test_bad_input_raises(call, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        call()


def test_check_groups_drops_repeated_members_and_keeps_order() -> None:
    from shuffle_lib.dsigma import check_groups

    cleaned = check_groups([[0, 2, 2, 1], [1], [2, 0, 2]])
    assert [g.tolist() for g in cleaned] == [[0, 2, 1], [1], [2, 0]]


def _definition_a2_literally(a: np.ndarray, b: np.ndarray) -> int:
    n = a.size
    return sum(int((a[i] - a[j]) * (b[i] - b[j]) < 0) for i in range(n) for j in range(i + 1, n))


def test_kendall_tau_positions_is_definition_a2_read_literally(rng: np.random.Generator) -> None:
    identity = np.arange(10)
    assert kendall_tau_positions(identity, [0, 1, 2, 5, 4, 3, 6, 7, 8, 9]) == 3  # the paper's
    differ = 0
    for _ in range(200):
        a, b = rng.permutation(7), rng.permutation(7)
        assert kendall_tau_positions(a, b) == _definition_a2_literally(a, b)
        assert kendall_tau_positions(a, np.arange(7)) == kendall_tau_distance(a, np.arange(7))
        differ += kendall_tau_positions(a, b) != kendall_tau_distance(a, b)
    assert differ > 50  # the two readings really are different distances


def test_position_reading_breaks_the_guarantee_and_item_reading_keeps_it() -> None:
    # 0 and 5 form a group; the reference puts them side by side (width 1, theta = alpha = 1).
    # Read by positions, the Mallows model ignores the reference (d = inversions of o), and
    # swapping the reports of 0 and 5 changes the distance by up to 2 (n - 2) + 1 = 9.
    groups = [np.array([0, 5])] + [np.array([i]) for i in range(1, 5)] + [np.array([5, 0])]
    mech = DSigmaMechanism(groups, alpha=1.0)
    assert mech.width == 1
    assert exhaustive_privacy_loss(mech) == pytest.approx(1.0)
    assert exhaustive_privacy_loss(mech, reading="positions") == pytest.approx(9.0)
    # brute force of the position reading, sharing no code with the library's loop
    orders = [np.array(o) for o in itertools.permutations(range(6))]
    weight = {tuple(o): -_definition_a2_literally(o[mech.reference], mech.reference)
              for o in orders}
    swap = np.array([5, 1, 2, 3, 4, 0])
    assert max(weight[tuple(o)] - weight[tuple(swap[o])] for o in orders) == 9
    hamming = DSigmaMechanism(groups, alpha=1.0, distance="hamming")
    assert exhaustive_privacy_loss(hamming, reading="positions") == exhaustive_privacy_loss(hamming)


def test_exhaustive_loss_against_a_dictionary_lookup() -> None:
    mech = DSigmaMechanism(_random_groups(5, np.random.default_rng(11), 2), alpha=1.5)
    orders = [np.array(o) for o in itertools.permutations(range(5))]
    logp = {tuple(o): mech.permutation_log_prob(o) for o in orders}
    worst = 0.0
    for g in mech._checked:
        for rearranged in itertools.permutations(g.tolist()):
            relabel = np.arange(5)
            relabel[g] = rearranged
            worst = max(worst, max(logp[tuple(o)] - logp[tuple(relabel[o])] for o in orders))
    assert exhaustive_privacy_loss(mech) == pytest.approx(worst, abs=1e-12)


def test_kendall_neighbour_changes_against_brute_force(rng: np.random.Generator) -> None:
    n = 6
    reference = rng.permutation(n)
    ranks = np.argsort(reference)
    orders = np.array(list(itertools.permutations(range(n))))
    relabel = np.arange(n)
    relabel[[1, 4, 2]] = [4, 2, 1]
    before, after, changed = kendall_neighbour_changes(reference, orders, relabel)
    for m in rng.choice(len(orders), size=60, replace=False):
        o = orders[m]
        assert before[m] == rank_distance(o[reference], reference)
        assert after[m] == rank_distance(relabel[o][reference], reference)
        expected = np.zeros((n, n), dtype=bool)
        for s, t in itertools.combinations(range(n), 2):  # slots by reference rank, s < t
            x, y = o[reference[s]], o[reference[t]]  # people whose reports land there
            flips = (ranks[x] > ranks[y]) != (ranks[relabel[x]] > ranks[relabel[y]])
            if flips:
                expected[min(ranks[x], ranks[y]), max(ranks[x], ranks[y])] = True
        np.testing.assert_array_equal(changed[m], expected)
    # the signed sum over changed pairs is the change of the distance
    assert np.all(np.abs(before - after) <= changed.sum(axis=(1, 2)))


@pytest.mark.parametrize("ranks", [(0, 1), (0, 5), (2, 3, 4), (0, 2, 5), (1, 2, 4, 6), (0, 3)])
def test_window_argument_of_the_sensitivity_bound(ranks: tuple[int, ...]) -> None:
    """Only pairs with both reference ranks inside the group's window change status, so the
    Kendall change is at most w (w + 1) / 2; the triangle-inequality step is false."""
    n = 7 if max(ranks) == 6 else 6
    reference = np.random.default_rng(sum(ranks)).permutation(n)
    group = reference[list(ranks)]
    width = max(ranks) - min(ranks)
    window = np.zeros(n, dtype=bool)
    window[min(ranks):max(ranks) + 1] = True
    orders = np.array(list(itertools.permutations(range(n))))
    largest = 0
    for rearranged in itertools.permutations(group):
        relabel = np.arange(n)
        relabel[group] = rearranged
        before, after, changed = kendall_neighbour_changes(reference, orders, relabel)
        u, v = np.nonzero(changed.any(axis=0))
        assert window[u].all() and window[v].all()
        assert changed.sum(axis=(1, 2)).max() <= width * (width + 1) // 2
        largest = max(largest, int(np.abs(before - after).max()))
    assert largest <= kendall_sensitivity(width)
    if len(ranks) == width + 1:  # the group fills its window: it can be reversed, bound attained
        assert largest == kendall_sensitivity(width)
    else:
        assert largest < kendall_sensitivity(width)


def test_the_false_step_counterexample() -> None:
    # sigma_0 = identity, G = {0, 1}: width 1, but the two draws differ by a swap of items that
    # sit at ranks 0 and 5 of the draw, Kendall distance 9 > 1 = w (w + 1) / 2.
    o = np.array([0, 2, 3, 4, 5, 1])
    relabel = np.array([1, 0, 2, 3, 4, 5])
    assert kendall_tau_distance(o, relabel[o]) == 9
    before, after, _ = kendall_neighbour_changes(np.arange(6), o, relabel)
    assert abs(int(before[0]) - int(after[0])) == 1


def _bandwidth(graph: nx.Graph, ordering: np.ndarray) -> int:
    position = {int(v): k for k, v in enumerate(ordering)}
    return max((abs(position[u] - position[v]) for u, v in graph.edges), default=0)


def test_forest_groups_turn_the_width_into_the_bandwidth() -> None:
    gen = np.random.default_rng(9)
    trees = [nx.path_graph(7), nx.star_graph(6), nx.balanced_tree(2, 2)]
    while len(trees) < 6:  # random trees of maximum degree 3
        tree = nx.random_labeled_tree(7, seed=int(gen.integers(1_000_000)))
        if max(d for _, d in tree.degree) <= 3:
            trees.append(tree)
    orderings = [np.array(p) for p in itertools.permutations(range(7))]
    for tree in trees:
        groups = groups_from_forest(tree)
        assert sorted(tuple(sorted(g.tolist())) for g in groups if g.size == 2) == sorted(
            tuple(sorted(e)) for e in tree.edges)
        for ordering in orderings[::7]:
            assert max_width(ordering, groups) == _bandwidth(tree, ordering)
        best, ranking = optimal_width_brute_force(groups)
        assert best == min(_bandwidth(tree, o) for o in orderings)
        assert _bandwidth(tree, ranking) == best
    assert optimal_width_brute_force(groups_from_forest(nx.star_graph(6)))[0] == 3  # ceil(6/2)
    forest = nx.union(nx.path_graph(3), nx.path_graph(range(3, 5)))
    assert [g.tolist() for g in groups_from_forest(forest)] == [[0], [1, 0], [2, 1], [3], [4, 3]]


@pytest.mark.parametrize("placement", ["centred", "random"])
def test_groups_with_known_width_have_that_optimum(placement: str) -> None:
    gen = np.random.default_rng(12)
    for n, width in ((7, 1), (7, 2), (8, 3), (8, 0), (6, 5)):
        groups, hidden = groups_with_known_width(n, width, placement, rng=gen)
        assert all(g.size == width + 1 and i in g for i, g in enumerate(groups))
        assert all(np.unique(g).size == g.size for g in groups)
        assert max_width(hidden, groups) == width
        assert optimal_width_brute_force(groups)[0] == width  # brute force
    groups, hidden = groups_with_known_width(500, 7, placement, rng=gen)
    ranks = np.argsort(hidden)
    assert all(np.ptp(ranks[g]) == 7 for g in groups)  # every group is a run of hidden ranks
    for _ in range(50):  # the lower bound: no ranking does better
        assert max_width(gen.permutation(500), groups) >= 7
    assert max_width(bfs_reference_permutation(groups), groups) >= 7


def test_groups_with_known_width_centred_runs_and_seeding() -> None:
    groups, hidden = groups_with_known_width(9, 4, "centred", rng=3)
    ranks = np.argsort(hidden)
    for k in range(9):
        start = min(max(k - 2, 0), 4)
        assert sorted(ranks[groups[hidden[k]]].tolist()) == list(range(start, start + 5))
    again, _ = groups_with_known_width(9, 4, "centred", rng=3)
    assert all(np.array_equal(a, b) for a, b in zip(groups, again, strict=True))


def test_hamming_decomposition_of_the_paper_and_of_random_draws(rng: np.random.Generator) -> None:
    ref = np.array([1, 2, 3, 5, 4, 7, 8, 10, 9, 6]) - 1
    drawn = np.array([1, 3, 2, 7, 8, 5, 4, 6, 10, 9]) - 1
    subset = np.array([2, 4, 5, 8]) - 1
    a, b, c, d = hamming_decomposition(ref, drawn, subset)
    assert [(x + 1).tolist() for x in (a, b, c, d)] == [[3, 7], [4, 8], [2, 5], [6, 9, 10]]
    assert rank_distance(drawn, ref, "hamming") == 9
    assert preservation(output_order(ref, drawn), subset) == 0.5
    for _ in range(300):
        ref = rng.permutation(12)
        drawn = ref.copy()
        free = np.flatnonzero(rng.random(12) < 0.5)  # keep about half of the ranks in place
        drawn[free] = ref[free][rng.permutation(free.size)]
        subset = rng.choice(12, size=int(rng.integers(1, 12)), replace=False)
        parts = hamming_decomposition(ref, drawn, subset)
        together = np.concatenate(parts)
        assert np.unique(together).size == together.size  # disjoint
        assert np.array_equal(np.sort(together), np.sort(ref[drawn != ref]))  # = who moved
        assert parts[0].size == parts[2].size
        assert preservation(output_order(ref, drawn), subset) == pytest.approx(
            1 - parts[0].size / np.unique(subset).size)


def test_hamming_class_count_against_enumeration_and_the_crossing_counts() -> None:
    n, ell = 8, 3
    ref = np.arange(n)
    subset = np.array([1, 4, 6])
    classes: dict[tuple[int, int, int], int] = {}
    for p in itertools.permutations(range(n)):
        a, b, _, d = hamming_decomposition(ref, np.array(p), subset)
        key = (a.size, b.size, d.size)
        classes[key] = classes.get(key, 0) + 1
    for a in range(ell + 1):
        for b in range(ell + 1):
            for d in range(n + 1):
                assert hamming_class_count(n, ell, a, b, d) == classes.get((a, b, d), 0)
    assert hamming_class_count(10, 4, 2, 2, 3) == 322560  # the paper's example class
    for n, ell in ((12, 5), (20, 7)):
        counts = hamming_crossing_counts(n, ell)
        for h in range(n + 1):
            for a in range(ell + 1):
                total = sum(hamming_class_count(n, ell, a, b, h - 2 * a - b)
                            for b in range(max(0, h - 2 * a + 1)))
                assert counts[h, a] == pytest.approx(total, rel=1e-12)


def test_preservation_of_several_subsets_matches_one_subset_at_a_time() -> None:
    mech = DSigmaMechanism(groups_within_radius(np.arange(40.0), 3.0), alpha=4.0)
    subsets = [np.arange(5, 15), np.arange(20, 22), np.arange(40)]
    together = empirical_preservation_of_subsets(mech, subsets, 0.1, 30, rng=5)
    alone = [empirical_preservation(mech, s, 0.1, 30, rng=5) for s in subsets]
    assert together == alone
    assert together[2] == 1.0  # everybody stays among everybody


# Hostile input: refused by our own checks with the argument's name, or answered correctly; never
# a silent truncation, never an error leaking from numpy, scipy, networkx or numba.

_MECH = DSigmaMechanism([[0, 1], [1, 0], [2, 3], [3, 2]], alpha=1.0)


def test_graph_radius_beyond_the_diameter_costs_nothing_more() -> None:
    graph = nx.path_graph(40)
    start = time.perf_counter()
    huge = groups_from_graph(graph, 10**7)
    per_node = groups_from_graph(graph, np.full(40, 2**61))
    assert time.perf_counter() - start < 1.0
    expected = groups_from_graph(graph, 39)
    assert all(np.array_equal(a, b) for a, b in zip(huge, expected, strict=True))
    assert all(np.array_equal(a, b) for a, b in zip(per_node, expected, strict=True))
    assert all(g.tolist() == list(range(40)) for g in huge)
    weighted = nx.path_graph(3)
    nx.set_edge_attributes(weighted, 0, "weight")  # path length ignores weights
    assert [g.tolist() for g in groups_from_graph(weighted, 1)] == [[0, 1], [0, 1, 2], [1, 2]]
    parallel = nx.MultiGraph([(0, 1)] * 256 + [(1, 2)])  # 256 edges must not wrap around to 0
    assert [g.tolist() for g in groups_from_graph(parallel, 1)] == [[0, 1], [0, 1, 2], [1, 2]]


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (lambda: groups_from_graph(None, 1), TypeError, "graph"),
        (lambda: groups_from_graph(3.5, 1), TypeError, "graph"),
        (lambda: groups_from_graph("x", 1), TypeError, "graph"),
        (lambda: groups_from_graph(nx.DiGraph([(0, 1)]), 1), ValueError, "undirected"),
        (lambda: groups_from_graph(nx.path_graph(3), 1.5), ValueError, "r must"),  # not 1
        (lambda: groups_from_graph(nx.path_graph(3), 1.0), ValueError, "r must"),
        (lambda: groups_from_graph(nx.path_graph(3), True), TypeError, "r must"),
        (lambda: groups_from_graph(nx.path_graph(3), "2"), TypeError, "r must"),
        (lambda: groups_from_graph(nx.path_graph(3), [1, 2]), ValueError, "radii r"),
        (lambda: groups_from_forest(None), TypeError, "forest"),
        (lambda: groups_from_forest("x"), TypeError, "forest"),
        (lambda: groups_from_forest(nx.DiGraph([(0, 1)])), ValueError, "forest must"),
        (lambda: check_groups(None), TypeError, "groups"),
        (lambda: check_groups(3.5), TypeError, "groups"),
        (lambda: check_groups("x"), TypeError, "groups"),
        (lambda: check_groups([[0, 1.5], [1]]), ValueError, r"groups\[0\]"),  # not [0, 1]
        (lambda: check_groups([[0.0], [1.0]]), ValueError, r"groups\[0\]"),
        (lambda: check_groups([[0, True], [1]]), TypeError, r"groups\[0\]"),
        (lambda: check_groups([[0, np.nan], [1]]), ValueError, r"groups\[0\]"),
        (lambda: check_groups([[0, 2**62], [1]]), ValueError, r"groups\[0\] has an index"),
        (lambda: check_groups([[0], [1]], n=10**12), ValueError, "one group per person"),
        (lambda: bfs_reference_permutation(None), TypeError, "groups"),
        (lambda: group_widths([0, 1], 3.5), TypeError, "groups"),
        (lambda: rescaled_alpha(_MECH, None), TypeError, "other_groups"),
        (lambda: rescaled_alpha(_MECH, "x"), TypeError, "other_groups"),
        (lambda: rescaled_alpha(None, [[0], [1], [2], [3]]), TypeError, "mechanism"),
        (lambda: empirical_preservation(None, [0], 0.1, 5), TypeError, "mechanism"),
        (lambda: empirical_preservation("x", [0], 0.1, 5), TypeError, "mechanism"),
        (lambda: empirical_preservation_of_subsets(3.5, [[0]], 0.1, 5), TypeError, "mechanism"),
        (lambda: exhaustive_privacy_loss(None), TypeError, "mechanism"),
        (lambda: empirical_preservation(_MECH, [0], 0.1, 10**12), ValueError, "trials must"),
        (lambda: empirical_preservation(_MECH, [0], None, 5), TypeError, "delta"),
        (lambda: empirical_preservation_of_subsets(_MECH, "x", 0.1, 5), TypeError, "subsets"),
        (lambda: empirical_preservation_of_subsets(_MECH, None, 0.1, 5), TypeError, "subsets"),
        (lambda: preservation([1, 0, 2], [1.5]), ValueError, "subset"),  # not person 1
        (lambda: preservation([1, 0, 2], [0.0, 1.0]), ValueError, "subset"),
        (lambda: preservation([1, 0, 2], [np.nan]), ValueError, "subset"),
        (lambda: preservation([1, 0, 2], [-1]), ValueError, "subset"),
        (lambda: preservation([1, 0, 2], [2**62]), ValueError, "subset"),
        (lambda: preservation([1, 0, 2], ["a"]), TypeError, "subset"),
        (lambda: hamming_decomposition([0, 1], [1, 0], [0.5]), ValueError, "subset"),
        (lambda: kendall_sensitivity(2.5), ValueError, "width"),
        (lambda: kendall_sensitivity("3"), TypeError, "width"),
        (lambda: kendall_sensitivity(True), TypeError, "width"),
        (lambda: kendall_sensitivity(2**62), ValueError, "width"),
        (lambda: hamming_preservation_delta(8, 4, "0.5", 1.0), TypeError, "eta"),
        (lambda: hamming_preservation_delta(8, 4, True, 1.0), TypeError, "eta"),
        (lambda: hamming_preservation_delta(8, 4, 0.5, None), TypeError, "theta"),
        (lambda: hamming_preservation_delta(8, 4, 0.5, "1"), TypeError, "theta"),
        (lambda: hamming_preservation_delta(8, 4, 0.5, False), TypeError, "theta"),
        (lambda: hamming_preservation_delta(151, 4, 0.5, 1.0), ValueError, "n must be at most"),
        (lambda: hamming_crossing_counts(10**12, 3), ValueError, "n must be at most"),
        (lambda: hamming_class_count(10**6, 10, 0, 0, 10**5), ValueError, "d must be at most"),
        (lambda: groups_with_known_width(10**12, 2), ValueError, "n must be at most"),
        (lambda: groups_with_known_width(10**5, 500), ValueError, "n \\* \\(width \\+ 1\\)"),
        (lambda: groups_within_radius([[0.0], [1e300]], 1.0), ValueError, "points"),
        (lambda: groups_within_radius(["a", "b"], 1.0), TypeError, "points"),
        (lambda: groups_within_radius([0.0, 1.0], True), TypeError, "r must"),
        (lambda: groups_within_radius([0.0, 1.0], [1.0, 1.0, 1.0]), ValueError, "radii r"),
        (lambda: groups_nearest(np.zeros((1, 3)), 2), ValueError, "points"),
        (lambda: reidentification_odds_bound(0.2, 0.0, 1, 5), ValueError, "group_size"),
        (lambda: kendall_neighbour_changes(np.arange(4000), np.arange(4000), np.arange(4000)),
         ValueError, "orders"),
        (lambda: sensitivity_brute_force([0, 1], [[0], [1]], "cayley"), ValueError, "distance"),
        (lambda: _MECH.shuffle([[1], [2, 3], [4], [5]]), ValueError, "y must"),
    ],
)
def test_hostile_arguments_are_refused_by_name(call, error: type, message: str) -> None:
    with pytest.raises(error, match=message):
        call()


def test_hamming_preservation_delta_is_fast_at_its_documented_maximum() -> None:
    from shuffle_lib.dsigma import _crossing_counts

    _crossing_counts.cache_clear()
    start = time.perf_counter()
    value = hamming_preservation_delta(150, 75, 0.5, 0.0)
    assert time.perf_counter() - start < 5.0  # was about 465 s
    # theta = 0 is a uniform permutation: the subset keeps a hypergeometric number of its slots
    below = int(np.ceil(0.5 * 75)) - 1
    assert value == pytest.approx(hypergeom.cdf(below, 150, 75, 75), rel=1e-9)


def test_hamming_class_count_handles_huge_n_exactly() -> None:
    # f(2, 2) = 4! - 2 3! + 2! = 14 and f(3, 2) = 5! - 3 4! + 3 3! - 2! = 64 (n = 10: 322560)
    n = 10**30
    expected = math.comb(4, 2) * math.comb(n - 4, 2) * math.comb(n - 6, 3) * 14 * 64
    assert hamming_class_count(n, 4, 2, 2, 3) == expected


@pytest.mark.parametrize("function", [check_groups, hamming_crossing_counts, max_width,
                                      random_reference_width, DSigmaMechanism.sample_permutation,
                                      DSigmaMechanism.shuffle,
                                      DSigmaMechanism.permutation_log_prob])
def test_public_functions_have_examples(function) -> None:
    assert ">>>" in function.__doc__


def _tied_points(rng: np.random.Generator, n: int, d: int) -> np.ndarray:
    """Positions on a coarse integer grid: many people share a position, and many distinct
    positions are at equal distance from each other."""
    return rng.integers(0, 4, size=(n, d)).astype(float)


@pytest.mark.parametrize("d", [1, 2])
def test_groups_nearest_with_ties_matches_brute_force(d: int) -> None:
    rng = np.random.default_rng(40 + d)
    for _ in range(30):
        n = int(rng.integers(1, 60))
        points = _tied_points(rng, n, d)
        k = int(rng.integers(1, n + 1))
        dist = np.linalg.norm(points[:, None] - points[None], axis=2)  # the O(n^2) route
        for i, g in enumerate(groups_nearest(points, k)):
            assert g.size == k and np.unique(g).size == k and i in g
            # the k nearest: the same distances as the k smallest of the full row
            np.testing.assert_array_equal(np.sort(dist[i, g]), np.sort(dist[i])[:k])
            # closest first, and people who share a position by increasing index (after the
            # owner, when the owner is put in front)
            assert np.all(np.diff(dist[i, g]) >= 0)
            listed = g[1:] if g[0] == i else g
            for position in np.unique(points[listed], axis=0):
                same = listed[(points[listed] == position).all(axis=1)]
                assert np.all(np.diff(same) > 0)


def test_groups_nearest_all_at_one_position() -> None:
    groups = groups_nearest(np.zeros(6), 3)
    # the first k people by index; anybody else is added in front of the first k - 1
    assert [g.tolist() for g in groups] == [[0, 1, 2]] * 3 + [[3, 0, 1], [4, 0, 1], [5, 0, 1]]


def test_groups_nearest_without_ties_is_the_kd_tree_answer() -> None:
    from scipy.spatial import cKDTree

    points = np.random.default_rng(3).random((500, 2))
    _, expected = cKDTree(points).query(points, k=7)
    np.testing.assert_array_equal(np.vstack(groups_nearest(points, 7)), expected)


def test_groups_nearest_limit_is_checked_before_any_copy() -> None:
    huge = np.broadcast_to(0.0, (10**6,))  # no memory of its own; a copy would be 8 MB
    with pytest.raises(ValueError, match="MAX_NEAREST"):
        groups_nearest(huge, 5)
    with pytest.raises(ValueError, match="MAX_NEAREST"):
        groups_nearest(np.zeros(10**5), 41)
    with pytest.raises(ValueError, match="MAX_NEAREST"):
        groups_nearest(np.broadcast_to(0.0, (10**12,)), 2)


def test_size_limits_come_before_validation_of_the_entries() -> None:
    # invalid entries beyond the documented size: the size is what is reported
    with pytest.raises(ValueError, match="n <= 9"):
        optimal_width_brute_force([["a"]] * 10)
    with pytest.raises(ValueError, match="n <= 8"):
        sensitivity_brute_force([0.5] * 9, [[0]] * 9)
    with pytest.raises(ValueError, match=r"len\(orders\) \* n \* n"):
        kendall_neighbour_changes(np.zeros(4000, dtype=int), np.zeros(4000, dtype=int),
                                  np.zeros(4000, dtype=int))
    with pytest.raises(ValueError, match="trials must"):
        empirical_preservation(_MECH, ["not", "a", "subset"], 0.1, 10**12)
    with pytest.raises(ValueError, match="trials must"):
        empirical_preservation_of_subsets(_MECH, [["x"]], 0.1, 10**12)


@pytest.mark.parametrize("distance", ["kendall", "hamming"])
def test_sample_permutation_is_the_documented_draw(distance: str) -> None:
    from shuffle_lib.permutations import mallows_sample

    mech = DSigmaMechanism(A10_GROUPS, alpha=2.0, distance=distance)
    for seed in range(20):
        drawn = mallows_sample(mech.n, mech.theta, mech.reference, distance, rng=seed)
        np.testing.assert_array_equal(mech.sample_permutation(seed),
                                      output_order(mech.reference, drawn))


def test_empirical_preservation_is_the_quantile_of_the_drawn_orders() -> None:
    mech = DSigmaMechanism(A10_GROUPS, alpha=1.5)
    subsets = [[1, 2, 4, 7], [0], [3, 5]]
    gen = np.random.default_rng(9)
    orders = [mech.sample_permutation(gen) for _ in range(300)]
    for delta in (0.0, 0.05, 0.5):
        expected = [float(np.sort([preservation(o, s) for o in orders])[300 - math.ceil(
            (1 - delta) * 300)]) for s in subsets]
        assert empirical_preservation_of_subsets(mech, subsets, delta, 300, rng=9) == expected


def test_reidentification_odds_bound_at_every_group_size() -> None:
    import mpmath

    mpmath.mp.dps = 40
    largest = np.finfo(float).max
    for exponent in range(1, 401, 7):  # group sizes 10 to 1e400 on a log grid
        r = 10**exponent + 3
        for eps, alpha, k in ((0.2, 0.0, 1), (1.0, 3.0, 4), (50.0, 1e3, 2)):
            if not 2 * k < r:
                continue
            exact = mpmath.mpf((r - k) // k) * mpmath.exp(-(2 * k * eps + alpha))
            got = reidentification_odds_bound(eps, alpha, r, k)
            assert math.isfinite(got) and got >= 0
            if exact > largest:
                assert got == pytest.approx(largest, rel=1e-12)
            else:
                assert float(exact) == pytest.approx(got, rel=1e-12, abs=1e-300)


@pytest.mark.parametrize("placement", ["centred", "random"])
def test_known_width_groups_are_runs_of_the_hidden_ranking(placement: str) -> None:
    for n, width in ((1, 0), (7, 3), (50, 0), (200, 9)):
        groups, hidden = groups_with_known_width(n, width, placement, rng=n + width)
        rank = np.empty(n, dtype=int)
        rank[hidden] = np.arange(n)
        for person, g in enumerate(groups):
            assert person in g and g.dtype == np.int64
            ranks = np.sort(rank[g])
            np.testing.assert_array_equal(ranks, np.arange(ranks[0], ranks[0] + width + 1))
            if placement == "centred":  # centred on the person, moved inwards at the ends
                assert ranks[0] == min(max(rank[person] - width // 2, 0), n - 1 - width)


def _worst_change_by_every_rearrangement(values, orders, groups) -> float:
    """The definition: every group, every rearrangement rho of it, every order o."""
    index = {tuple(o): i for i, o in enumerate(orders.tolist())}
    worst = 0.0
    for group in groups:
        for rearranged in itertools.permutations(group.tolist()):
            relabel = np.arange(orders.shape[1])
            relabel[group] = rearranged
            partner = np.array([index[tuple(row)] for row in relabel[orders].tolist()])
            worst = max(worst, float(np.max(values - values[partner])))
    return worst


@pytest.mark.parametrize("distance", ["kendall", "hamming"])
def test_exhaustive_checks_equal_the_definition(distance: str) -> None:
    from shuffle_lib.dsigma import _all_permutations

    rng = np.random.default_rng(17)
    for _ in range(12):
        n = int(rng.integers(2, 6))
        groups = [np.unique(np.r_[i, rng.choice(n, int(rng.integers(0, 3)))]) for i in range(n)]
        ref = rng.permutation(n)
        orders = _all_permutations(n)
        distances = np.array([rank_distance(o[ref], ref, distance) for o in orders], float)
        expected = max(_worst_change_by_every_rearrangement(d, orders, groups)
                       for d in (-distances, distances))
        assert sensitivity_brute_force(ref, groups, distance) == expected
        mech = DSigmaMechanism(groups, 1.3, distance, ref)
        log_probs = np.array([mech.permutation_log_prob(o) for o in orders])
        assert exhaustive_privacy_loss(mech) == _worst_change_by_every_rearrangement(
            log_probs, orders, mech._checked)
        if distance == "kendall":
            positions = np.array([kendall_tau_positions(o[ref], ref) for o in orders])
            log_probs = -mech.theta * positions - np.log(np.sum(np.exp(-mech.theta * distances)))
            assert exhaustive_privacy_loss(mech, None, "positions") == pytest.approx(
                _worst_change_by_every_rearrangement(log_probs, orders, mech._checked),
                rel=1e-12)
