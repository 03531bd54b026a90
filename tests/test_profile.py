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

from shuffle_lib.profile import (
    ProfileGraph,
    apply_channel,
    apply_flips,
    expected_accuracy,
    flip_channels,
    independent_releases,
    one_bit_cluster,
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
