"""Profile-based privacy (Geumlek & Chaudhuri 2019): certificates, LP optima against closed forms
and brute force, sampling, bad input."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats
from scipy.optimize import linprog, minimize

from shuffle_lib.profile import (
    ProfileGraph,
    apply_channel,
    apply_flips,
    expected_accuracy,
    flip_channels,
    independent_releases,
    one_bit_cluster,
    output_laws,
    parallel_releases,
    profile_privacy_loss,
    same_sample_releases,
    smooth_categorical,
    smooth_one_bit,
    two_profile_flip,
    two_profile_flip_bound,
)

CERTIFICATE_SLACK = 1e-9


@st.composite
def bernoulli_graphs(draw, max_profiles: int = 6):
    k = draw(st.integers(2, max_profiles))
    p = draw(st.lists(st.floats(0, 1), min_size=k, max_size=k))
    pairs = list(itertools.combinations(range(k), 2))
    chosen = draw(st.lists(st.sampled_from(pairs), min_size=1, max_size=len(pairs)))
    return ProfileGraph(p, chosen)


@st.composite
def categorical_graphs(draw):
    k = draw(st.integers(2, 4))
    d = draw(st.integers(2, 4))
    raw = np.array(draw(st.lists(st.floats(0.01, 1), min_size=k * d, max_size=k * d)))
    rows = raw.reshape(k, d) / raw.reshape(k, d).sum(axis=1, keepdims=True)
    pairs = list(itertools.combinations(range(k), 2))
    chosen = draw(st.lists(st.sampled_from(pairs), min_size=1, max_size=len(pairs)))
    return ProfileGraph(rows, chosen)


@settings(max_examples=40, deadline=None)
@given(bernoulli_graphs(), st.floats(0.05, 5))
def test_one_bit_mechanisms_are_certified(graph: ProfileGraph, eps: float) -> None:
    cluster = one_bit_cluster(graph, eps)
    smooth = smooth_one_bit(graph, eps)
    for flips in (cluster, smooth):
        assert profile_privacy_loss(graph, flip_channels(flips)) <= eps + CERTIFICATE_SLACK
    # Smooth One Bit optimizes the largest flip; One Bit Cluster is one feasible point
    assert smooth.max() <= cluster.max() + 1e-6


@settings(max_examples=25, deadline=None)
@given(categorical_graphs(), st.floats(0.05, 3))
def test_smooth_categorical_is_certified(graph: ProfileGraph, eps: float) -> None:
    for objective in ("max_offdiag", "expected_accuracy"):
        mats = smooth_categorical(graph, eps, objective)
        assert np.allclose(mats.sum(axis=2), 1.0) and (mats >= 0).all()
        assert profile_privacy_loss(graph, mats) <= eps + CERTIFICATE_SLACK


def test_single_edge_lp_equals_observation_10(rng: np.random.Generator) -> None:
    for _ in range(60):
        p_i, p_j = rng.random(2)
        eps = rng.uniform(0.05, 4)
        assert two_profile_flip(p_i, p_j, eps) == pytest.approx(
            two_profile_flip_bound(p_i, p_j, eps), abs=1e-6)


def test_randomized_response_is_the_extreme_couplet() -> None:
    for eps in (0.1, 1.0, 3.0):
        rr = 1 / (1 + math.exp(eps))
        assert two_profile_flip(0.0, 1.0, eps) == pytest.approx(rr, abs=1e-7)
        assert two_profile_flip_bound(0.0, 1.0, eps) == pytest.approx(rr, rel=1e-12)
        graph = ProfileGraph([0.0, 1.0], [(0, 1)])
        assert profile_privacy_loss(graph, flip_channels([rr, rr])) == pytest.approx(eps)


def test_smooth_one_bit_matches_a_grid_search() -> None:
    graph = ProfileGraph([0.1, 0.45, 0.9], [(0, 1), (1, 2)])
    eps = 0.7
    grid = np.linspace(0, 0.5, 101)
    flips = np.stack(np.meshgrid(grid, grid, grid, indexing="ij"), axis=-1).reshape(-1, 3)
    p = graph.profiles[:, 1]
    q = p + flips * (1 - 2 * p)  # P[output 1] for every grid point, written out independently
    loss = np.zeros(len(flips))
    for i, j in ((0, 1), (1, 2)):
        for out in (q, 1 - q):
            loss = np.maximum(loss, np.abs(np.log(out[:, i]) - np.log(out[:, j])))
    best = flips[loss <= eps].max(axis=1).min()
    lp = smooth_one_bit(graph, eps).max()
    assert lp <= best + 1e-9  # the LP is at least as good as every grid point
    assert best - lp <= grid[1]  # and the grid gets within one step of it


def test_monotone_log_ratios_behind_one_bit_cluster() -> None:
    graph = ProfileGraph([0.2, 0.7], [(0, 1)])
    losses = [profile_privacy_loss(graph, flip_channels([f, f])) for f in np.linspace(0, 0.5, 51)]
    assert np.all(np.diff(losses) <= 1e-12) and losses[-1] == 0.0


def test_categorical_binary_case_and_objectives() -> None:
    graph = ProfileGraph([0.1, 0.45, 0.9], [(0, 1), (1, 2)])
    eps = 0.7
    mats = smooth_categorical(graph, eps)
    # two categories allow asymmetric flips, so the largest corruption can only be smaller
    assert mats[:, [0, 1], [1, 0]].max() <= smooth_one_bit(graph, eps).max() + 1e-6
    accurate = smooth_categorical(graph, eps, "expected_accuracy")
    accuracy = [np.mean(np.einsum("kd,kd->k", graph.profiles, np.diagonal(m, axis1=1, axis2=2)))
                for m in (mats, accurate)]
    by_loop = sum(graph.profiles[i, x] * accurate[i, x, x] for i in range(3) for x in range(2)) / 3
    assert expected_accuracy(graph, accurate, np.full(3, 1 / 3)) == pytest.approx(by_loop)
    assert accuracy[1] >= accuracy[0] - 1e-7
    off = ~np.eye(2, dtype=bool)
    assert mats[:, off].max() <= accurate[:, off].max() + 1e-7


def test_local_dp_implies_profile_privacy_on_random_graphs(rng: np.random.Generator) -> None:
    # Theorem 9: the k-ary randomized-response channel, the same for every profile
    for _ in range(20):
        k, d = rng.integers(2, 6), rng.integers(2, 5)
        profiles = rng.dirichlet(np.ones(d), size=k)
        edges = [e for e in itertools.combinations(range(k), 2) if rng.random() < 0.6] or [(0, 1)]
        eps = rng.uniform(0.1, 3)
        keep = math.exp(eps) / (math.exp(eps) + d - 1)
        krr = np.full((d, d), (1 - keep) / (d - 1))
        np.fill_diagonal(krr, keep)
        graph = ProfileGraph(profiles, edges)
        assert profile_privacy_loss(graph, np.broadcast_to(krr, (k, d, d))) <= eps + 1e-12


def test_composition_through_joint_channels(rng: np.random.Generator) -> None:
    for _ in range(20):
        k, d = 3, 2
        profiles = rng.dirichlet(np.ones(d), size=k)
        graph = ProfileGraph(profiles, [(0, 1), (1, 2)])
        first, second = rng.dirichlet(np.ones(d), size=(2, k, d))
        eps1, eps2 = profile_privacy_loss(graph, first), profile_privacy_loss(graph, second)
        # independent samples from one profile: a channel on the pair (x1, x2) of the product
        # profile; Observation 4 says the loss is at most eps1 + eps2
        pair = ProfileGraph(np.einsum("ka,kb->kab", profiles, profiles).reshape(k, d * d),
                            graph.edges)
        both = np.einsum("kac,kbe->kabce", first, second).reshape(k, d * d, d * d)
        assert profile_privacy_loss(pair, both) <= eps1 + eps2 + 1e-12
        library_pair, library_both = independent_releases(graph, first, second)
        np.testing.assert_allclose(library_pair.profiles, pair.profiles)
        np.testing.assert_allclose(library_both, both)
        # the same sample privatized twice: one channel with output pairs
        twice = np.einsum("kac,kae->kace", first, second).reshape(k, d, d * d)
        np.testing.assert_allclose(same_sample_releases(first, second), twice)
        assert np.allclose(twice.sum(axis=2), 1.0)
        assert profile_privacy_loss(graph, twice) >= max(eps1, eps2) - 1e-12


def test_two_views_of_one_sample_break_additive_composition() -> None:
    # x = (b1, b2): profile 0 draws b1 = b2, profile 1 draws b1 != b2, both uniformly.
    graph = ProfileGraph([[0.5, 0.0, 0.0, 0.5], [0.0, 0.5, 0.5, 0.0]], [(0, 1)])
    bits = np.array([[0, 0], [0, 1], [1, 0], [1, 1]])
    first_bit = np.stack([np.eye(2)[bits[:, 0]]] * 2)  # report b1 exactly
    second_bit = np.stack([np.eye(2)[bits[:, 1]]] * 2)  # report b2 exactly
    assert profile_privacy_loss(graph, first_bit) == 0.0  # each bit alone is a fair coin
    assert profile_privacy_loss(graph, second_bit) == 0.0
    both = np.einsum("kam,kab->kamb", first_bit, second_bit).reshape(2, 4, 4)
    assert profile_privacy_loss(graph, both) == np.inf  # together they name the profile


def test_isolated_profiles_and_empty_edge_lists() -> None:
    graph = ProfileGraph([0.0, 1.0, 0.3], [(0, 1)])
    assert one_bit_cluster(graph, 1.0)[2] == 0.0
    empty = ProfileGraph([[0.5, 0.5], [0.1, 0.9]], [])
    assert np.array_equal(smooth_categorical(empty, 1.0), np.stack([np.eye(2)] * 2))
    assert profile_privacy_loss(empty, np.stack([np.eye(2)] * 2)) == 0.0


def test_sampling_matches_the_channels() -> None:
    gen = np.random.default_rng(9)
    mats = np.array([[[0.7, 0.2, 0.1], [0.1, 0.8, 0.1], [0.3, 0.3, 0.4]]])
    values = np.repeat([0, 1, 2], 20_000)
    reports = apply_channel(values, np.zeros_like(values), mats, rng=gen)
    for x in range(3):
        counts = np.bincount(reports[values == x], minlength=3)
        assert stats.chisquare(counts, 20_000 * mats[0, x]).pvalue > 1e-4
    profile = np.array([[[0.5, 0.3, 0.2]]])  # a profile is a channel from one dummy input
    drawn = apply_channel(np.zeros(30_000, dtype=int), np.zeros(30_000, dtype=int), profile,
                          rng=gen)
    assert stats.chisquare(np.bincount(drawn, minlength=3), 30_000 * profile[0, 0]).pvalue > 1e-4
    bits = np.repeat([0, 1], 50_000)
    flipped = apply_flips(bits, np.repeat([0, 1], 50_000), [0.1, 0.3], rng=gen)
    assert abs(np.mean(flipped[:50_000]) - 0.1) < 5 * math.sqrt(0.09 / 50_000)
    assert abs(np.mean(1 - flipped[50_000:]) - 0.3) < 5 * math.sqrt(0.21 / 50_000)


def _random_graph(gen: np.random.Generator, k: int, d: int) -> ProfileGraph:
    profiles = gen.dirichlet(np.ones(d), size=k)
    edges = [e for e in itertools.combinations(range(k), 2) if gen.random() < 0.5] or [(0, 1)]
    return ProfileGraph(profiles, edges)


def _bit_rows(graph: ProfileGraph, eps: float) -> tuple[np.ndarray, np.ndarray]:
    """Problem (5) as explicit rows ``G @ alpha <= h``, written out from the definition: for both
    orientations (a, b) of every edge, q_a <= e^eps q_b and 1 - q_a <= e^eps (1 - q_b), where
    q = p + alpha (1 - 2p)."""
    p, e = graph.profiles[:, 1], math.exp(eps)
    rows, rhs = [], []
    for i, j in graph.edges:
        for a, b in ((i, j), (j, i)):
            for sign in (1, -1):  # output 1, then output 0 (1 - q)
                row = np.zeros(graph.k)
                row[a] += sign * (1 - 2 * p[a])
                row[b] -= sign * e * (1 - 2 * p[b])
                rows.append(row)
                if sign == 1:
                    rhs.append(e * p[b] - p[a])
                else:
                    rhs.append((e - 1) - e * p[b] + p[a])
    return np.array(rows), np.array(rhs)


def test_smooth_one_bit_stages_match_an_independent_formulation(
        rng: np.random.Generator) -> None:
    # scipy's linprog on explicit matrices (no cvxpy) for the two LP stages, SLSQP for the last
    for _ in range(12):
        k = int(rng.integers(2, 7))
        graph = ProfileGraph(rng.random(k), _random_graph(rng, k, 2).edges)
        eps = float(rng.uniform(0.1, 3))
        ours = smooth_one_bit(graph, eps)
        G, h = _bit_rows(graph, eps)
        # stage 1: variables (alpha, t), minimize t with alpha_i <= t
        stage1 = linprog(np.r_[np.zeros(k), 1.0],
                         A_ub=np.block([[G, np.zeros((len(G), 1))], [np.eye(k), -np.ones((k, 1))]]),
                         b_ub=np.r_[h, np.zeros(k)], bounds=[(0, 0.5)] * k + [(0, 0.5)])
        assert ours.max() == pytest.approx(stage1.fun, abs=1e-7)
        top = stage1.fun + 1e-9
        stage2 = linprog(np.ones(k), A_ub=G, b_ub=h, bounds=[(0, top)] * k)
        assert ours.sum() == pytest.approx(stage2.fun, abs=1e-6)
        # stage 3: the unique flips of smallest sum of squares among the stage-2 optima
        held = [{"type": "ineq", "fun": lambda a, G=G, h=h: h - G @ a},
                {"type": "ineq", "fun": lambda a, total=stage2.fun: total + 1e-9 - a.sum()}]
        stage3 = minimize(lambda a: a @ a, stage2.x, jac=lambda a: 2 * a, method="SLSQP",
                          bounds=[(0, top)] * k, constraints=held,
                          options={"ftol": 1e-14, "maxiter": 500})
        np.testing.assert_allclose(ours, stage3.x, atol=1e-5)


def test_smooth_one_bit_follows_relabelling(rng: np.random.Generator) -> None:
    for _ in range(10):
        k = int(rng.integers(3, 8))
        p = rng.random(k)
        graph = ProfileGraph(p, _random_graph(rng, k, 2).edges)
        eps = float(rng.uniform(0.1, 2))
        flips = smooth_one_bit(graph, eps)
        perm = rng.permutation(k)  # new profile a is old profile perm[a]
        where = np.argsort(perm)
        relabelled = ProfileGraph(p[perm], where[graph.edges])
        np.testing.assert_allclose(smooth_one_bit(relabelled, eps)[where], flips, atol=1e-7)
        # exchanging the meaning of the bits (p -> 1 - p) changes nothing either
        mirrored = ProfileGraph(1 - p, graph.edges)
        np.testing.assert_allclose(smooth_one_bit(mirrored, eps), flips, atol=1e-7)


def test_smooth_one_bit_is_algorithm_1_exactly_on_couplets_straddling_one_half(
        rng: np.random.Generator) -> None:
    # p_i < 1/2 < p_j: every binding constraint has positive coefficients on both flips, so the
    # unique answer gives both profiles Algorithm 1's shared flip (mirror couplets included)
    for _ in range(25):
        p_i, p_j = rng.uniform(0, 0.49), rng.uniform(0.51, 1)
        eps = float(rng.uniform(0.05, 3))
        smooth = smooth_one_bit(ProfileGraph([p_i, p_j], [(0, 1)]), eps)
        assert smooth == pytest.approx([two_profile_flip_bound(p_i, p_j, eps)] * 2, abs=1e-7)
    # on one side of 1/2 separate flips can do better: only profile i flips, just enough for
    # q_j <= e^eps q_i
    smooth = smooth_one_bit(ProfileGraph([0.1, 0.3], [(0, 1)]), 0.5)
    e = math.exp(0.5)
    assert smooth[0] == pytest.approx((0.3 - e * 0.1) / (e * 0.8), rel=1e-6)
    assert smooth[1] == pytest.approx(0.0, abs=1e-7)
    assert smooth[0] < two_profile_flip_bound(0.1, 0.3, 0.5) - 0.04


def _categorical_rows(graph: ProfileGraph, eps: float) -> tuple[np.ndarray, np.ndarray,
                                                               np.ndarray, np.ndarray]:
    """Problem (6) on the stacked entries A[i, x, y] (index (i * d + x) * d + y): the edge rows
    G @ a <= 0 and the row sums E @ a = 1, written out from the definition."""
    k, d, e = graph.k, graph.d, math.exp(eps)
    size = k * d * d
    G = []
    for i, j in graph.edges:
        for a, b in ((i, j), (j, i)):
            for y in range(d):  # (P_a A^a)_y - e^eps (P_b A^b)_y <= 0
                row = np.zeros(size)
                for x in range(d):
                    row[(a * d + x) * d + y] += graph.profiles[a, x]
                    row[(b * d + x) * d + y] -= e * graph.profiles[b, x]
                G.append(row)
    E = np.zeros((k * d, size))
    for r in range(k * d):
        E[r, r * d:(r + 1) * d] = 1
    return np.array(G), np.zeros(len(G)), E, np.ones(k * d)


@pytest.mark.parametrize("d", [3, 4, 5])
def test_smooth_categorical_is_optimal_against_an_independent_lp(
        d: int, rng: np.random.Generator) -> None:
    for _ in range(4):
        k = int(rng.integers(2, 5))
        graph = _random_graph(rng, k, d)
        eps = float(rng.uniform(0.05, 1.5))
        G, h, E, ones = _categorical_rows(graph, eps)
        size = k * d * d
        off = np.tile((~np.eye(d, dtype=bool)).ravel(), k)
        # largest off-diagonal entry: epigraph variable t >= every off-diagonal entry
        A_t = np.zeros((off.sum(), size + 1))
        A_t[np.arange(off.sum()), np.flatnonzero(off)] = 1
        A_t[:, -1] = -1
        best_max = linprog(np.r_[np.zeros(size), 1.0], A_ub=np.vstack([np.c_[G, np.zeros(len(G))],
                                                                        A_t]),
                           b_ub=np.r_[h, np.zeros(off.sum())], A_eq=np.c_[E, np.zeros(k * d)],
                           b_eq=ones, bounds=(0, 1)).fun
        mats = smooth_categorical(graph, eps)
        assert mats[:, ~np.eye(d, dtype=bool)].max() == pytest.approx(best_max, abs=1e-7)
        # expected accuracy under a prior: maximize sum_i pi_i sum_x P_i(x) A^i_xx
        prior = rng.dirichlet(np.ones(k))
        gain = np.zeros(size)
        for i in range(k):
            for x in range(d):
                gain[(i * d + x) * d + x] = prior[i] * graph.profiles[i, x]
        best_acc = -linprog(-gain, A_ub=G, b_ub=h, A_eq=E, b_eq=ones, bounds=(0, 1)).fun
        accurate = smooth_categorical(graph, eps, "expected_accuracy", prior)
        assert expected_accuracy(graph, accurate, prior) == pytest.approx(best_acc, abs=1e-7)
        for channels in (mats, accurate):
            assert profile_privacy_loss(graph, channels) <= eps + CERTIFICATE_SLACK


def test_smooth_categorical_follows_relabelling(rng: np.random.Generator) -> None:
    for objective in ("max_offdiag", "expected_accuracy"):
        for _ in range(4):
            k, d = int(rng.integers(2, 5)), int(rng.integers(3, 5))
            graph = _random_graph(rng, k, d)
            prior = rng.dirichlet(np.ones(k))
            eps = float(rng.uniform(0.05, 1.0))
            mats = smooth_categorical(graph, eps, objective, prior)
            perm, cats = rng.permutation(k), rng.permutation(d)
            where = np.argsort(perm)
            relabelled = ProfileGraph(graph.profiles[perm][:, cats], where[graph.edges])
            again = smooth_categorical(relabelled, eps, objective, prior[perm])
            np.testing.assert_allclose(again, mats[perm][:, cats][:, :, cats], atol=1e-7)


def test_ties_are_broken_towards_keeping_the_data() -> None:
    # a profile at p = 1/2 reports a fair coin whatever it flips: its flip is free, and is 0
    graph = ProfileGraph([0.0, 0.5, 1.0], [(0, 1), (1, 2)])
    assert smooth_one_bit(graph, 0.5)[1] == pytest.approx(0.0, abs=1e-7)
    # a category a profile never produces: its row is unconstrained, and is the identity row
    zeros = ProfileGraph([[0.5, 0.5, 0.0], [0.2, 0.3, 0.5]], [(0, 1)])
    for objective in ("max_offdiag", "expected_accuracy"):
        mats = smooth_categorical(zeros, 0.3, objective)
        np.testing.assert_allclose(mats[0, 2], [0, 0, 1], atol=1e-9)


def test_post_processing_observation_3(rng: np.random.Generator) -> None:
    for _ in range(30):
        k, d, m = int(rng.integers(2, 5)), int(rng.integers(2, 4)), int(rng.integers(2, 5))
        graph = _random_graph(rng, k, d)
        channels = rng.dirichlet(np.ones(m), size=(k, d))
        kernel = rng.dirichlet(np.ones(int(rng.integers(2, 5))), size=m)
        assert profile_privacy_loss(graph, channels @ kernel) <= (
            profile_privacy_loss(graph, channels) + 1e-12)
    # a map that looks at the profile is not post-processing: it can reveal the profile
    graph = ProfileGraph([0.5, 0.5], [(0, 1)])
    uniform = flip_channels([0.5, 0.5])
    tagged = np.stack([np.kron(uniform[0], [1, 0]), np.kron(uniform[1], [0, 1])])
    assert profile_privacy_loss(graph, uniform) == 0.0
    assert profile_privacy_loss(graph, tagged) == np.inf


def test_parallel_composition_observation_5(rng: np.random.Generator) -> None:
    for _ in range(15):
        k, d = int(rng.integers(2, 5)), int(rng.integers(2, 4))
        graph = _random_graph(rng, k, d)
        first, second = rng.dirichlet(np.ones(3), size=(2, k, d))
        prior = rng.dirichlet(np.ones(k))
        joint, channel = parallel_releases(graph, first, second, prior)
        assert np.allclose(channel.sum(axis=2), 1.0)
        # independently of the library's product: the law given profile i, written directly
        second_law = prior @ output_laws(graph, second)
        direct = np.einsum("ka,b->kab", output_laws(graph, first), second_law).reshape(k, -1)
        np.testing.assert_allclose(output_laws(joint, channel), direct, atol=1e-12)
        eps1 = profile_privacy_loss(graph, first)
        assert profile_privacy_loss(joint, channel) == pytest.approx(eps1, rel=1e-9)
        # the same person twice (dependent selections) composes additively, not in parallel
        pair, both = independent_releases(graph, first, first)
        assert profile_privacy_loss(pair, both) == pytest.approx(2 * eps1, rel=1e-9)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: ProfileGraph([[0.5, 0.6]], []), "sum to 1"),
        (lambda: ProfileGraph([[-0.1, 1.1]], []), "non-negative"),
        (lambda: ProfileGraph([0.2, 0.3], [(0, 2)]), "endpoints"),
        (lambda: ProfileGraph([0.2, 0.3], [(1, 1)]), "self-loops"),
        (lambda: smooth_one_bit(ProfileGraph([0.2, 0.3], [(0, 1)]), 0.0), "eps"),
        (lambda: one_bit_cluster(ProfileGraph([0.2, 0.3], [(0, 1)]), -1.0), "eps"),
        (lambda: smooth_one_bit(ProfileGraph([[0.2, 0.3, 0.5]] * 2, [(0, 1)]), 1.0), "d = 2"),
        (lambda: smooth_categorical(ProfileGraph([0.2, 0.3], [(0, 1)]), 1.0, "median"),
         "objective"),
        (lambda: smooth_categorical(ProfileGraph([0.2, 0.3], [(0, 1)]), 1.0, prior=[1, 1]),
         "prior"),
        (lambda: two_profile_flip_bound(0.2, 1.3, 1.0), "Bernoulli"),
        (lambda: flip_channels([0.2, 1.5]), "flip"),
        (lambda: apply_flips([0, 2], [0, 0], [0.1]), "0/1"),
        (lambda: apply_channel([0, 1], [0, 3], [np.eye(2)]), "profile_index"),
        (lambda: profile_privacy_loss(ProfileGraph([0.2, 0.3], [(0, 1)]), np.ones((2, 2, 2))),
         "probability distribution"),
    ],
)
def test_bad_input_raises(call, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        call()


@pytest.mark.parametrize("eps", [30.0, 709.0, 710.0, 1000.0, 1e300])
def test_huge_eps_neither_overflows_nor_fails(eps: float) -> None:
    # math.exp(eps) overflowed beyond 709, and the LP solvers failed from about eps = 20 on;
    # every answer is private at the capped level, hence at eps
    bits = ProfileGraph([0.0, 1.0, 0.5, 0.3], [(0, 1), (1, 2), (2, 3)])
    for flips in (smooth_one_bit(bits, eps), one_bit_cluster(bits, eps)):
        assert np.all((flips >= 0) & (flips <= 1e-8))
        assert profile_privacy_loss(bits, flip_channels(flips)) <= min(eps, 700.0) + 1e-9
    cats = ProfileGraph([[0.2, 0.3, 0.5], [0.0, 0.5, 0.5], [1.0, 0.0, 0.0]], [(0, 1), (1, 2)])
    mats = smooth_categorical(cats, eps)
    assert profile_privacy_loss(cats, mats) <= min(eps, 20.0) + 1e-9
    assert 0 <= two_profile_flip(0.0, 1.0, eps) <= 1e-8
    # the closed form, at min(eps, 700): exactly randomized response there
    assert two_profile_flip_bound(0.0, 1.0, eps) == pytest.approx(
        1 / (1 + math.exp(min(eps, 700.0))), rel=1e-12)


def test_redundant_constraints_no_longer_break_the_projection() -> None:
    # at eps = 20 the rows of this edge have right-hand sides near 1e8 and bind nothing; the
    # projection's solver used to fail on them
    flips = smooth_one_bit(ProfileGraph([0.5, 0.3], [(0, 1)]), 20.0)
    np.testing.assert_allclose(flips, 0.0, atol=1e-9)  # nothing needs a flip


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        # float or bool endpoints are refused, not truncated (0.5 used to become profile 0)
        (lambda: ProfileGraph([0.2, 0.3], [(0.5, 1)]), ValueError, "edges"),
        (lambda: ProfileGraph([0.2, 0.3], [(0.0, 1.0)]), TypeError, "edges"),
        (lambda: ProfileGraph([0.2, 0.3], [(True, False)]), TypeError, "edges"),
        (lambda: ProfileGraph([0.2, 0.3], "x"), TypeError, "edges"),
        (lambda: ProfileGraph([0.2, 0.3], [0, 1]), ValueError, "pairs"),
        (lambda: ProfileGraph(["0.2", "0.3"], []), TypeError, "profiles"),
        (lambda: ProfileGraph([[[0.5, 0.5]]], []), ValueError, "profiles"),
        (lambda: apply_flips([0, 1], [0.0, 0.0], [0.1]), TypeError, "profile_index"),
        (lambda: apply_flips(["0", "1"], [0, 0], [0.1]), TypeError, "bits"),
        (lambda: apply_flips([0, 1], [0, 1], 0.1), ValueError, "flips"),
        (lambda: apply_channel([0.0, 1.0], [0, 0], [np.eye(2)]), TypeError, "values"),
        (lambda: smooth_one_bit("graph", 1.0), TypeError, "graph"),
        (lambda: output_laws(None, flip_channels([0.1])), TypeError, "graph"),
        (lambda: smooth_one_bit(ProfileGraph([0.2, 0.3], [(0, 1)]), float("nan")), ValueError,
         "eps"),
        (lambda: smooth_categorical(ProfileGraph([0.2, 0.3], [(0, 1)]), "1.0"), TypeError, "eps"),
        (lambda: two_profile_flip(True, 0.5, 1.0), TypeError, "p_i"),
        (lambda: two_profile_flip_bound(0.2, float("nan"), 1.0), ValueError, "p_j"),
        (lambda: profile_privacy_loss(ProfileGraph([0.2], []), [[["a", "b"]]]), TypeError,
         "matrices"),
        (lambda: independent_releases(ProfileGraph([0.2], []), flip_channels([0.1]), [[[2.0]]]),
         ValueError, "second"),
        (lambda: same_sample_releases(np.full((1, 2, 2), np.nan), flip_channels([0.1])),
         ValueError, "first"),
        (lambda: expected_accuracy(ProfileGraph([0.2], []), flip_channels([0.1]), ["1"]),
         TypeError, "prior"),
    ],
)
def test_hostile_inputs_are_refused_by_name(call, error: type, message: str) -> None:
    with pytest.raises(error, match=message):
        call()
