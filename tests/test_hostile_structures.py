"""Property-based hostile inputs for arguments with structure: permutations, group assignments,
graphs, channels, profile graphs and data frames.

For each generated input the library must either accept it and return what the definition says
(checked against a brute-force answer computed here), or refuse it with a ``ValueError`` or
``TypeError`` raised by its own validation. Inputs are drawn around the boundary between valid
and invalid (off-by-one indices, repeated entries, rows that almost sum to one, float indices).
"""

from __future__ import annotations

import networkx as nx
import numpy as np
import pandas as pd
import pytest
from hostile_api import _raised_by_us
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from shuffle_lib.accounting.finite import check_channel
from shuffle_lib.dsigma import check_groups, groups_from_graph
from shuffle_lib.permutations import check_permutation, compose, inverse
from shuffle_lib.profile import _SIMPLEX_TOL, ProfileGraph
from shuffle_lib.swapping import swap, swapping_invariants

SETTINGS = settings(max_examples=150, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])


def outcome(call):
    """``("ok", value)`` or ``("refused", error)``; any other exception fails the test."""
    try:
        return "ok", call()
    except (ValueError, TypeError) as error:
        assert _raised_by_us(error), f"error leaked from a dependency: {error!r}"
        return "refused", error


small_ints = st.integers(min_value=-2, max_value=8)
index_lists = st.lists(small_ints, min_size=0, max_size=7)
float_or_int = st.one_of(small_ints, st.floats(min_value=-2, max_value=8), st.just(float("nan")))


@SETTINGS
@given(st.one_of(index_lists, st.lists(float_or_int, max_size=7)))
def test_check_permutation_accepts_exactly_the_permutations(values: list) -> None:
    kind, result = outcome(lambda: check_permutation(values))
    arr = np.asarray(values, dtype=float) if values else np.array([])
    is_permutation = (
        arr.size > 0
        and all(isinstance(v, int) or float(v).is_integer() for v in values)
        and np.array_equal(np.sort(arr), np.arange(arr.size))
    )
    if kind == "ok":
        assert is_permutation and np.array_equal(result, arr.astype(np.int64))
    elif is_permutation and all(isinstance(v, int) for v in values):
        pytest.fail(f"refused the permutation {values}: {result}")


@SETTINGS
@given(st.permutations(list(range(6))), st.permutations(list(range(6))))
def test_compose_and_inverse_follow_the_definition(a: list[int], b: list[int]) -> None:
    composed = compose(a, b)
    assert [composed[i] for i in range(6)] == [a[b[i]] for i in range(6)]
    assert compose(a, inverse(a)).tolist() == list(range(6))


@SETTINGS
@given(st.integers(min_value=1, max_value=5).flatmap(
    lambda n: st.tuples(st.just(n), st.lists(index_lists, min_size=n - 1, max_size=n + 1))))
def test_check_groups_accepts_exactly_valid_assignments(case: tuple[int, list[list[int]]]) -> None:
    n, groups = case
    kind, result = outcome(lambda: check_groups(groups, n))
    valid = len(groups) == n and all(
        g and all(0 <= m < n for m in g) and i in g for i, g in enumerate(groups)
    )
    if kind == "ok":
        assert valid
        for i, group in enumerate(result):
            assert list(dict.fromkeys(groups[i])) == group.tolist()
    else:
        assert not valid, f"refused the valid assignment {groups}: {result}"


@SETTINGS
@given(st.integers(min_value=1, max_value=8), st.floats(min_value=0, max_value=1),
       st.integers(min_value=0, max_value=10**9), st.integers(min_value=0, max_value=2**32 - 1))
def test_groups_from_graph_are_balls_of_radius_r(n: int, density: float, r: int, seed: int) -> None:
    graph = nx.gnp_random_graph(n, density, seed=seed)
    groups = groups_from_graph(graph, r)
    for i in range(n):
        ball = nx.single_source_shortest_path_length(graph, i, cutoff=min(r, n))
        assert sorted(groups[i].tolist()) == sorted(ball)


@SETTINGS
@given(st.sampled_from([None, "graph", 3.5, nx.DiGraph([(0, 1)]), nx.Graph([("a", "b")]),
                        nx.Graph([(0, 2)])]),
       st.one_of(st.integers(-3, 3), st.floats(), st.text(max_size=2)))
def test_groups_from_graph_refuses_malformed_graphs_and_radii(graph, r) -> None:
    kind, _ = outcome(lambda: groups_from_graph(graph, r))
    valid_graph = isinstance(graph, nx.Graph) and not graph.is_directed() and set(graph) == {0, 1}
    valid_r = isinstance(r, int) and r >= 0
    assert (kind == "ok") == (valid_graph and valid_r)


row_entries = st.one_of(st.floats(min_value=-0.2, max_value=1.2),
                        st.sampled_from([float("nan"), float("inf")]))


@SETTINGS
@given(st.integers(1, 4), st.integers(1, 4), st.data())
def test_check_channel_accepts_exactly_stochastic_matrices(rows: int, cols: int, data) -> None:
    raw = np.array(data.draw(st.lists(row_entries, min_size=rows * cols, max_size=rows * cols)),
                   dtype=float).reshape(rows, cols)
    if data.draw(st.booleans()):  # normalized rows half of the time, so valid inputs occur
        with np.errstate(all="ignore"):
            raw = np.abs(raw) / np.abs(raw).sum(axis=1, keepdims=True)
    kind, _ = outcome(lambda: check_channel(raw))
    valid = (np.isfinite(raw).all() and (raw >= 0).all()
             and np.allclose(raw.sum(axis=1), 1, atol=1e-9, rtol=0))
    assert (kind == "ok") == bool(valid)


@SETTINGS
@given(st.lists(st.one_of(st.floats(min_value=-0.1, max_value=1.1), st.just(float("nan"))),
                min_size=1, max_size=5),
       st.lists(st.tuples(float_or_int, float_or_int), max_size=5))
def test_profile_graph_validates_profiles_and_edges(p: list[float], edges: list) -> None:
    kind, graph = outcome(lambda: ProfileGraph(p, edges))
    k = len(p)
    if any(-_SIMPLEX_TOL <= x < 0 or 1 < x <= 1 + _SIMPLEX_TOL for x in p):
        return  # round-off below the documented tolerance: clipped, either answer is right
    valid_p = all(0 <= x <= 1 for x in p)
    valid_edges = all(
        isinstance(a, int) and isinstance(b, int) and 0 <= a < k and 0 <= b < k and a != b
        for a, b in edges
    )
    assert (kind == "ok") == (valid_p and valid_edges)
    if kind == "ok":
        expected = {tuple(sorted(e)) for e in edges}
        assert {tuple(e) for e in graph.edges.tolist()} == expected


frames = st.integers(1, 12).flatmap(lambda m: st.fixed_dictionaries({
    "county": st.lists(st.sampled_from("ABC"), min_size=m, max_size=m),
    "tenure": st.lists(st.sampled_from(["owned", "rented"]), min_size=m, max_size=m),
    "size": st.lists(st.integers(1, 3), min_size=m, max_size=m),
}))


@SETTINGS
@given(frames, st.floats(min_value=0, max_value=1), st.integers(0, 2**32 - 1))
def test_swap_keeps_its_invariants_on_any_frame(columns: dict, p: float, seed: int) -> None:
    records = pd.DataFrame(columns)
    swapped = swap(records, ["size"], ["county"], p, rng=seed)
    before = swapping_invariants(records, ["size"], ["county"], hold=["tenure"])
    after = swapping_invariants(swapped, ["size"], ["county"], hold=["tenure"])
    assert before.keys() == after.keys()
    for name in before:
        pd.testing.assert_series_equal(before[name], after[name])


@SETTINGS
@given(st.sampled_from([None, "records", 3.5, pd.DataFrame({"size": [1, 2]})]),
       st.sampled_from([["size"], ["missing"], "size", None]),
       st.one_of(st.floats(), st.text(max_size=1)))
def test_swap_refuses_malformed_frames_keys_and_rates(records, key, p) -> None:
    frame = pd.DataFrame({"size": [1, 1, 2], "county": ["A", "B", "A"]})
    target = frame if isinstance(records, str) else records
    kind, _ = outcome(lambda: swap(target, key, ["county"], p, rng=0))
    valid = (isinstance(target, pd.DataFrame) and "county" in target
             and key in (["size"], "size") and isinstance(p, float) and 0 <= p <= 1)
    assert (kind == "ok") == valid
