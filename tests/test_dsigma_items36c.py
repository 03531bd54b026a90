"""Issue 36 items of Meehan et al. (2022) computed in book/dsigma/mechanism.md, checked here by
routes that share no code with the library functions the chapter uses: the Property 4 example
(Appendix A.8), the breadth-first ranking of Figure 6 (Appendix A.10), the optimum of Figure 10's
groups on the unit interval, and the job-shop problem of Theorem A.3 (Appendix A.9)."""
from __future__ import annotations

import itertools
from collections import deque

import numpy as np
import pytest

from shuffle_lib.dsigma import (
    bfs_reference_permutation,
    group_widths,
    groups_within_radius,
    max_width,
    optimal_width_brute_force,
    sensitivity_brute_force,
)

A10_GROUPS_1BASED = {1: [1, 2], 2: [2, 1, 5], 3: [3, 6, 5, 8], 4: [4, 5, 7], 5: [5, 2, 3, 8, 4],
                     6: [6, 3], 7: [7, 4], 8: [8, 3, 5]}


def _a10_groups() -> list[np.ndarray]:
    return [np.array(A10_GROUPS_1BASED[i]) - 1 for i in range(1, 9)]


def _kendall_items(rankings: np.ndarray, reference: np.ndarray) -> np.ndarray:
    """Kendall distance (pairs of items in opposite order) of each row of ``rankings`` from
    ``reference``, from the positions of every item, vectorised over rows."""
    n = reference.size
    pos = np.argsort(rankings, axis=1)
    pos0 = np.argsort(reference)
    total = np.zeros(len(rankings), dtype=np.int64)
    for a, b in itertools.combinations(range(n), 2):
        total += (pos[:, a] - pos[:, b]) * (pos0[a] - pos0[b]) < 0
    return total


def test_property4_example_window_width_and_exact_sensitivity() -> None:
    reference = np.array([2, 4, 6, 8, 1, 3, 5, 7]) - 1
    group = np.array([2, 6, 8]) - 1
    ranks = [int(np.flatnonzero(reference == p)[0]) for p in group]
    window = reference[min(ranks):max(ranks) + 1] + 1
    assert sorted(window.tolist()) == [2, 4, 6, 8]  # the paper's W_i
    groups = [np.array([i]) for i in range(8)]
    groups[1] = group
    assert int(group_widths(reference, groups)[1]) == max(ranks) - min(ranks) == 3
    # exact sensitivity from the definition: every release order o, every rearrangement rho of
    # the group, |D(o) - D(rho o)| with D(o) = d_tau(o sigma_0, sigma_0)
    orders = np.array(list(itertools.permutations(range(8))))
    base = _kendall_items(orders[:, reference], reference)
    worst = 0
    for rearranged in itertools.permutations(group):
        rho = np.arange(8)
        rho[group] = rearranged
        moved = _kendall_items(rho[orders][:, reference], reference)
        worst = max(worst, int(np.abs(base - moved).max()))
    assert worst == 5 < 3 * 4 // 2  # below Property 4's w(w + 1)/2 = 6
    assert sensitivity_brute_force(reference, groups, "kendall") == worst


def _bfs_by_the_rules(groups: list[list[int]]) -> list[int]:
    """Breadth-first order as documented: start at the largest group (ties: smaller index); a
    node's neighbours are its own group in listed order, then the people whose groups list it by
    increasing index; restart at the largest unvisited group."""
    n = len(groups)
    listed_by = [[j for j in range(n) if i in groups[j]] for i in range(n)]
    roots = sorted(range(n), key=lambda i: (-len(groups[i]), i))
    seen, order = set(), []
    for root in roots:
        if root in seen:
            continue
        seen.add(root)
        queue = deque([root])
        while queue:
            node = queue.popleft()
            order.append(node)
            for nxt in list(groups[node]) + listed_by[node]:
                if nxt not in seen:
                    seen.add(nxt)
                    queue.append(nxt)
    return order


def test_figure6_ranking_is_the_documented_breadth_first_order() -> None:
    groups = _a10_groups()
    library = bfs_reference_permutation(groups)
    assert (library + 1).tolist() == [5, 2, 3, 8, 4, 1, 6, 7]
    assert library.tolist() == _bfs_by_the_rules([g.tolist() for g in groups])
    # breadth-first: graph distance from the root never decreases along the ranking
    adjacency = {i: set() for i in range(8)}
    for i, g in enumerate(groups):
        for j in g.tolist():
            if j != i:
                adjacency[i].add(j)
                adjacency[j].add(i)
    depth, queue = {int(library[0]): 0}, deque([int(library[0])])
    while queue:
        node = queue.popleft()
        for nxt in adjacency[node]:
            if nxt not in depth:
                depth[nxt] = depth[node] + 1
                queue.append(nxt)
    layers = [depth[int(p)] for p in library]
    assert layers == sorted(layers) == [0, 1, 1, 1, 1, 2, 2, 2]
    assert int(group_widths(library, groups)[3]) == 7  # G_4 spans ranks 1 to 8


@pytest.mark.parametrize("seed", range(6))
def test_sorted_points_reach_the_optimum_on_a_line(seed: int) -> None:
    gen = np.random.default_rng(seed)
    points = gen.random(8)
    radius = float(gen.uniform(0.05, 0.4))
    groups = groups_within_radius(points, radius)
    # groups from the definition, without the KD-tree
    for i, g in enumerate(groups):
        assert sorted(g.tolist()) == [j for j in range(8) if abs(points[j] - points[i]) <= radius]
    best, _ = optimal_width_brute_force(groups)  # every one of the 8! rankings
    largest = max(g.size for g in groups)
    assert best == largest - 1 == max_width(np.argsort(points), groups)


def _processing_times(schedule: list[int], sets: list[set[int]]) -> list[int]:
    """Our reading of equation (10) of Meehan et al. (2022): after each prefix, the most
    non-members inside the shortest stretch holding a set's scheduled members."""
    out = []
    for i in range(1, len(schedule) + 1):
        prefix = schedule[:i]
        worst = 0
        for members in sets:
            at = [k for k, op in enumerate(prefix) if op in members]
            if at:
                stretch = prefix[at[0]:at[-1] + 1]
                worst = max(worst, sum(op not in members for op in stretch))
        out.append(worst)
    return out


def test_job_shop_example_of_theorem_a3() -> None:
    times = _processing_times([1, 3, 4, 5, 9, 8, 10, 6, 7, 2], [{3, 5, 7}])
    assert times[3] == 1  # S_4 = 1345, stretch 345 holds {3, 5}: one non-member
    assert times == sorted(times) and times[-1] == 5  # p_n = max_i p_i; 7 - 2 non-members


def _final_processing_time(schedule: list[int], sets: list[set[int]]) -> int:
    """p_n alone: the most non-members inside the stretch from a set's first to its last member."""
    worst = 0
    for members in sets:
        at = [k for k, op in enumerate(schedule) if op in members]
        worst = max(worst, sum(op not in members for op in schedule[at[0]:at[-1] + 1]))
    return worst


def test_job_shop_and_width_have_different_optima_on_the_a10_groups() -> None:
    groups = _a10_groups()
    sets = [set((g + 1).tolist()) for g in groups]
    orders = np.array(list(itertools.permutations(range(8))))
    p_n = np.array([_final_processing_time((order + 1).tolist(), sets) for order in orders])
    assert _final_processing_time([5, 2, 3, 8, 4, 1, 6, 7], sets) == _processing_times(
        [5, 2, 3, 8, 4, 1, 6, 7], sets)[-1]
    ranks = np.argsort(orders, axis=1)
    width = np.max([ranks[:, g].max(axis=1) - ranks[:, g].min(axis=1) for g in groups], axis=0)
    assert width.min() == optimal_width_brute_force(groups)[0] == 4
    assert p_n.min() == 1
    assert set(width[p_n == p_n.min()].tolist()) == {5}  # least p_n: never the least width
    assert p_n[width == width.min()].min() == 2  # least width: never the least p_n
