"""Issue 36, Meehan et al. 2022 items: groups on a social graph (fixed-size groups, per-owner
radii, the attacker's random sources), the generated social graph, its spectral positions, and
the width lower bound of the attack chapter. Every check uses a route that shares no code with
the function tested: networkx's own searches and shortest paths, brute-force distances, dense
eigendecompositions, exhaustive search over reference rankings."""

from __future__ import annotations

import itertools
import math

import networkx as nx
import numpy as np
import pytest

from shuffle_lib.dsigma import (
    MAX_GRAPH_NEAREST,
    MAX_GRAPH_NODES,
    MAX_GRAPH_REACH,
    bfs_reference_permutation,
    graph_attack_sources,
    group_widths,
    groups_from_graph,
    groups_nearest_in_graph,
    groups_within_radius,
    optimal_width_brute_force,
    social_graph,
    spectral_positions,
)


def _graphs() -> list[nx.Graph]:
    """Small graphs of several shapes, two of them disconnected."""
    out = [nx.path_graph(6), nx.star_graph(7), nx.cycle_graph(9), nx.complete_graph(5),
           nx.petersen_graph(), nx.disjoint_union(nx.path_graph(3), nx.cycle_graph(4))]
    for seed in range(4):
        out.append(nx.gnp_random_graph(18, 0.15, seed=seed))
        out.append(nx.powerlaw_cluster_graph(30, 2, 0.4, seed=seed))
    return out


# ------------------------------------------------------------------ fixed-size groups on a graph
@pytest.mark.parametrize("k", [1, 2, 3, 5, 8])
def test_nearest_in_graph_is_networkx_bfs_prefix(k: int) -> None:
    """G_i is the first k nodes of networkx's breadth-first search from i with sorted neighbours
    (the whole component when it is smaller)."""
    for graph in _graphs():
        groups = groups_nearest_in_graph(graph, k)
        for i in graph.nodes:
            order = [i] + [v for _, v in nx.bfs_edges(graph, i, sort_neighbors=sorted)]
            assert groups[i].tolist() == order[:k]


@pytest.mark.parametrize("k", [2, 3, 10, 40])
def test_nearest_in_graph_on_hubs_and_self_loops(k: int) -> None:
    """The neighbour scan reads at most k neighbours of a node: on stars (a hub of 60 leaves,
    two hubs joined), hub-heavy random graphs and graphs with self-loops the groups are still
    the first k nodes of networkx's sorted breadth-first search."""
    graphs = [nx.star_graph(60), nx.barbell_graph(30, 2),
              nx.disjoint_union(nx.star_graph(25), nx.star_graph(35))]
    for seed in range(3):
        graphs.append(nx.barabasi_albert_graph(120, 2, seed=seed))
    looped = nx.star_graph(20)
    looped.add_edges_from([(0, 0), (3, 3)])
    graphs.append(looped)
    for graph in graphs:
        groups = groups_nearest_in_graph(graph, k)
        for i in graph.nodes:
            order = [i] + [v for _, v in nx.bfs_edges(graph, i, sort_neighbors=sorted)]
            assert groups[i].tolist() == order[:k]


def test_nearest_in_graph_members_are_closest() -> None:
    """Every member is at most as far (in path length) from the owner as every non-member of
    the owner's component."""
    for graph in _graphs():
        for k in (2, 4, 7):
            groups = groups_nearest_in_graph(graph, k)
            for i in graph.nodes:
                dist = nx.single_source_shortest_path_length(graph, i)
                inside = [dist[j] for j in groups[i].tolist()]
                outside = [d for j, d in dist.items() if j not in set(groups[i].tolist())]
                assert len(set(groups[i].tolist())) == groups[i].size == min(k, len(dist))
                if outside:
                    assert max(inside) <= min(outside)


def test_nearest_in_graph_limits() -> None:
    with pytest.raises(ValueError, match="MAX_GRAPH_NEAREST"):
        groups_nearest_in_graph(nx.empty_graph(MAX_GRAPH_NEAREST // 10 + 1), 10)
    with pytest.raises(ValueError, match="k"):
        groups_nearest_in_graph(nx.path_graph(3), 0)
    with pytest.raises(ValueError, match=r"0\.\.n-1"):
        groups_nearest_in_graph(nx.relabel_nodes(nx.path_graph(3), {0: 5}), 2)


# ------------------------------------------------------------------ per-owner radii (footnote 2)
def test_graph_groups_with_per_owner_radii() -> None:
    """groups_from_graph with one radius per person equals networkx's balls of those radii."""
    rng = np.random.default_rng(36)
    for graph in _graphs():
        n = graph.number_of_nodes()
        radii = rng.integers(0, 4, size=n)
        groups = groups_from_graph(graph, radii)
        for i in range(n):
            ball = nx.single_source_shortest_path_length(graph, i, cutoff=int(radii[i]))
            assert groups[i].tolist() == sorted(ball)


def test_plane_groups_with_per_owner_radii() -> None:
    """groups_within_radius with one radius per person equals a brute-force distance table."""
    rng = np.random.default_rng(7)
    points = rng.random((60, 2))
    radii = rng.uniform(0.0, 0.3, size=60)
    table = np.sqrt(((points[:, None, :] - points[None, :, :]) ** 2).sum(axis=2))
    groups = groups_within_radius(points, radii)
    for i in range(60):
        assert sorted(groups[i].tolist()) == np.flatnonzero(table[i] <= radii[i]).tolist()


def test_per_owner_radii_are_not_symmetric() -> None:
    """The worked example of the attack chapter: on a path of five people with radii
    (2, 0, 1, 0, 0), person 0's group is {0, 1, 2} while person 1's is {1}."""
    groups = groups_from_graph(nx.path_graph(5), [2, 0, 1, 0, 0])
    assert [g.tolist() for g in groups] == [[0, 1, 2], [1], [1, 2, 3], [3], [4]]


# ------------------------------------------------------------------ the attacker's sources
def test_graph_attack_sources_are_random_members_of_the_ball() -> None:
    for graph in _graphs():
        for r, k in ((1, 2), (2, 5), (3, 25)):
            sources = graph_attack_sources(graph, r, k, rng=r)
            for i in graph.nodes:
                ball = set(nx.single_source_shortest_path_length(graph, i, cutoff=r)) - {i}
                chosen = sources[i][sources[i] >= 0].tolist()
                assert len(chosen) == len(set(chosen)) == min(k, len(ball))
                assert set(chosen) <= ball
                assert (sources[i][len(chosen):] == -1).all()


def test_graph_attack_sources_reach_limit() -> None:
    """A star whose hub is within r - 1 hops of everybody: the product for r = 2 would list
    about (leaves + 1)**2 entries, refused when that exceeds MAX_GRAPH_REACH; r = 1 is fine."""
    leaves = math.isqrt(MAX_GRAPH_REACH) + 10
    star = nx.star_graph(leaves)
    with pytest.raises(ValueError, match="MAX_GRAPH_REACH"):
        graph_attack_sources(star, 2, 1, rng=0)
    sources = graph_attack_sources(star, 1, 1, rng=0)
    assert (sources[1:, 0] == 0).all() and 1 <= sources[0, 0] <= leaves


def test_graph_attack_sources_uniform() -> None:
    """On a star with 20 leaves, a leaf's 3 sources within 2 hops are 3 of the other 20 people
    (the centre and 19 leaves): each is chosen with probability 3/20. Seeded, so deterministic;
    the tolerance is five standard errors."""
    graph = nx.star_graph(20)
    counts = np.zeros(21)
    draws = 500
    for seed in range(draws):
        chosen = graph_attack_sources(graph, 2, 3, rng=seed)[1]
        counts[chosen] += 1
    share = counts / draws
    se = math.sqrt(0.15 * 0.85 / draws)
    assert share[1] == 0
    others = np.delete(share, 1)
    assert np.all(np.abs(others - 0.15) < 5 * se)


# ------------------------------------------------------------------ the generated social graph
def test_social_graph_shape_and_homophily() -> None:
    graph, x = social_graph(2000, m=3, p=0.5, rounds=4, rng=1)
    assert graph.number_of_nodes() == 2000 and nx.is_connected(graph)
    assert x.sum() == 1000  # cut at the median of a continuous field
    degrees = np.array([d for _, d in graph.degree])
    assert degrees.min() >= 3 and degrees.max() > 20 * np.median(degrees) / 3  # a heavy tail
    agree = np.mean([x[u] == x[v] for u, v in graph.edges])
    assert agree > 0.65  # friends share the bit far more often than the 1/2 of chance
    _, unrelated = social_graph(2000, m=3, p=0.5, rounds=0, rng=1)
    graph0, _ = social_graph(2000, m=3, p=0.5, rounds=0, rng=1)
    agree0 = np.mean([unrelated[u] == unrelated[v] for u, v in graph0.edges])
    assert abs(agree0 - 0.5) < 0.03
    with pytest.raises(ValueError, match="n"):
        social_graph(MAX_GRAPH_NODES + 1)


def test_social_graph_indices_are_random() -> None:
    """networkx numbers the nodes by arrival, so there the oldest nodes (small indices) have
    the most friends; after the random relabelling an index says nothing about a degree: the
    correlation of index and log degree is near 0 (it is strongly negative by arrival)."""
    graph, _ = social_graph(2000, rng=3)
    assert set(graph.nodes) == set(range(2000))
    degrees = np.log([graph.degree[i] for i in range(2000)])
    grown = nx.powerlaw_cluster_graph(2000, 3, 0.5, seed=3)
    by_arrival = np.log([grown.degree[i] for i in range(2000)])
    index_corr = np.corrcoef(np.arange(2000), degrees)[0, 1]
    arrival_corr = np.corrcoef(np.arange(2000), by_arrival)[0, 1]
    assert abs(index_corr) < 0.1 < -arrival_corr


def test_spectral_positions_are_eigenvectors() -> None:
    """Columns are eigenvectors of D^-1/2 A D^-1/2 for its 2nd..(dims+1)th largest eigenvalues,
    compared with a dense eigendecomposition."""
    graph = nx.powerlaw_cluster_graph(80, 2, 0.3, seed=3)
    adjacency = nx.to_numpy_array(graph, nodelist=range(80))
    scale = 1 / np.sqrt(adjacency.sum(axis=1))
    normalized = scale[:, None] * adjacency * scale[None, :]
    values = np.sort(np.linalg.eigvalsh(normalized))[::-1]
    positions = spectral_positions(graph, 5)
    assert positions.shape == (80, 5)
    for col in range(5):
        v = positions[:, col]
        rayleigh = v @ normalized @ v / (v @ v)
        assert np.allclose(normalized @ v, rayleigh * v, atol=1e-8)
        assert math.isclose(rayleigh, values[col + 1], abs_tol=1e-8)
    with pytest.raises(ValueError, match="friend"):
        spectral_positions(nx.disjoint_union(nx.path_graph(3), nx.empty_graph(1)), 1)


# ------------------------------------------------------------------ the width lower bound
def _group_graph(groups: list[np.ndarray]) -> nx.Graph:
    graph = nx.empty_graph(len(groups))
    graph.add_edges_from((i, int(j)) for i, g in enumerate(groups) for j in g if j != i)
    return graph


def _bound(groups: list[np.ndarray]) -> int:
    """max over connected components of ceil((c - 1) / D) of the group graph."""
    graph = _group_graph(groups)
    best = 0
    for component in nx.connected_components(graph):
        if len(component) > 1:
            diameter = nx.diameter(graph.subgraph(component))
            best = max(best, math.ceil((len(component) - 1) / diameter))
    return best


def test_width_lower_bound_against_exhaustive_search() -> None:
    """The smallest width over every reference ranking (exhaustive) is at least ceil((c-1)/D)
    for every component of the group graph; on a path the bound is attained."""
    rng = np.random.default_rng(5)
    tight = 0
    for trial in range(25):
        n = int(rng.integers(3, 8))
        graph = nx.gnp_random_graph(n, 0.4, seed=trial)
        groups = groups_nearest_in_graph(graph, int(rng.integers(2, 4)))
        best, _ = optimal_width_brute_force(groups)
        assert best >= _bound(groups)
        tight += best == _bound(groups)
    path = groups_nearest_in_graph(nx.path_graph(7), 2)  # {i, i - 1}: the path itself
    assert optimal_width_brute_force(path)[0] == _bound(path) == 1
    assert tight > 0


def test_width_lower_bound_for_the_bfs_reference() -> None:
    """The breadth-first reference on a generated social graph obeys the bound too, at every
    fixed group size of the attack chapter; from k = 5 on, the bound itself is about a tenth of
    the people or more (k = 2 splits the group graph into small trees)."""
    graph, _ = social_graph(200, rng=2)
    for k in (2, 5, 25):
        groups = groups_nearest_in_graph(graph, k)
        width = int(group_widths(bfs_reference_permutation(groups), groups).max())
        assert width >= _bound(groups) >= (1 if k == 2 else 200 // 12)


def test_exhaustive_widths_match_group_widths() -> None:
    """Sanity link between the two width routes on one small case: the brute force's optimal
    ranking has exactly the width it reports."""
    groups = groups_nearest_in_graph(nx.cycle_graph(6), 3)
    best, ranking = optimal_width_brute_force(groups)
    assert int(group_widths(ranking, groups).max()) == best
    widths = [int(group_widths(np.array(p), groups).max())
              for p in itertools.permutations(range(6))]
    assert min(widths) == best
