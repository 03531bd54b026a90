"""Inferential privacy by enumeration (Meehan et al. 2022, Theorems 4.1 and 4.2, Definition A.1,
Appendix A.3): every quantity is checked against a second route that shares none of its code
(explicit loops over dictionaries, Monte Carlo, closed forms), and against the paper's bounds."""

from __future__ import annotations

import itertools
import math
from collections import defaultdict

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shuffle_lib import krr_channel
from shuffle_lib.dsigma import (
    DSigmaMechanism,
    exhaustive_privacy_loss,
    reidentification_odds_bound,
)
from shuffle_lib.inference import (
    all_orders,
    all_sequences,
    arrangement_loss,
    assignment_belief_levels,
    assignment_likelihood,
    bayes_guess_accuracy,
    blind_reidentification_success,
    household_prior,
    inferential_privacy_loss,
    informed_log_odds_shift,
    ldp_likelihood,
    optimal_reidentification_success,
    posterior_log_odds,
    reidentification_alpha_threshold,
    release_likelihood,
    release_order_probabilities,
)

# --------------------------------------------------------------------------- helpers (loops only)


def _random_prior(rng: np.random.Generator, n: int, k: int = 2) -> np.ndarray:
    return rng.dirichlet(np.full(k**n, 0.5)).reshape((k,) * n)


def _loop_joint(prior: np.ndarray, channel: np.ndarray, order_probs: np.ndarray) -> dict:
    """P[x, y, z] as a dictionary, by explicit loops over datasets, reports and orders."""
    n, k, m = prior.ndim, channel.shape[0], channel.shape[1]
    out: dict = defaultdict(float)
    orders = list(itertools.permutations(range(n)))
    for x in itertools.product(range(k), repeat=n):
        if prior[x] == 0:
            continue
        for y in itertools.product(range(m), repeat=n):
            p_y = prior[x] * math.prod(channel[x[j], y[j]] for j in range(n))
            for order, p_o in zip(orders, order_probs, strict=True):
                z = tuple(y[j] for j in order)
                out[(x, y, z)] += p_y * p_o
    return out


def _mechanisms() -> list[DSigmaMechanism]:
    return [
        DSigmaMechanism([[0, 1], [1, 0], [2]], alpha=1.0),
        DSigmaMechanism([[0, 1, 2], [1, 0], [2, 0]], alpha=0.7),
        DSigmaMechanism([[0, 1], [1, 0, 2], [2, 1]], alpha=2.0, distance="hamming"),
        DSigmaMechanism([[0, 1], [1, 0], [2, 3], [3, 2]], alpha=1.3),
    ]


# --------------------------------------------------------------------------- enumeration


def test_sequences_and_orders_follow_itertools() -> None:
    assert all_sequences(3, 3).tolist() == [list(s) for s in itertools.product(range(3), repeat=3)]
    assert all_orders(4).tolist() == [list(p) for p in itertools.permutations(range(4))]
    with pytest.raises(ValueError, match="n <= 8"):
        all_orders(9)
    with pytest.raises(ValueError, match="too many"):
        all_sequences(30, 2)


def test_ldp_likelihood_is_the_product_channel() -> None:
    channel = krr_channel(3, 0.8)
    lik = ldp_likelihood(channel, 3)
    xs, ys = all_sequences(3, 3), all_sequences(3, 3)
    for row, x in enumerate(xs):
        for col, y in enumerate(ys):
            expected = math.prod(channel[a, b] for a, b in zip(x, y, strict=True))
            assert lik[row, col] == pytest.approx(expected)
    np.testing.assert_allclose(lik.sum(axis=1), 1.0)


def test_release_likelihood_counts_orders() -> None:
    rng = np.random.default_rng(1)
    probs = rng.dirichlet(np.ones(6))
    lik = release_likelihood(probs, 2)
    ys = [tuple(s) for s in itertools.product(range(2), repeat=3)]
    for row, y in enumerate(ys):
        expected: dict = defaultdict(float)
        for order, p in zip(itertools.permutations(range(3)), probs, strict=True):
            expected[tuple(y[j] for j in order)] += p
        for col, z in enumerate(ys):
            assert lik[row, col] == pytest.approx(expected[z], abs=1e-15)
    # a uniform law depends only on the multiset: P[z | y] = #{o : y[o] = z} / n!
    uniform = release_likelihood(np.full(6, 1 / 6), 2)
    assert uniform[ys.index((0, 0, 1)), ys.index((1, 0, 0))] == pytest.approx(2 / 6)


def test_release_order_probabilities_are_the_mallows_law() -> None:
    from shuffle_lib.permutations import rank_distance  # only to restate the model's weight

    mech = DSigmaMechanism([[0, 2], [1, 0], [2, 0, 1]], alpha=1.5)
    probs = release_order_probabilities(mech)
    weights = np.array([math.exp(-mech.theta * rank_distance(o[mech.reference], mech.reference))
                        for o in all_orders(3)])
    np.testing.assert_allclose(probs, weights / weights.sum(), rtol=1e-12)


# --------------------------------------------------------------------------- posteriors


def test_posterior_log_odds_matches_bayes_by_loops() -> None:
    rng = np.random.default_rng(2)
    prior = _random_prior(rng, 3)
    channel = krr_channel(2, 1.2)
    got = posterior_log_odds(prior, ldp_likelihood(channel, 3), 1, 1, 0)
    for col, y in enumerate(itertools.product(range(2), repeat=3)):
        mass = [0.0, 0.0]
        for x in itertools.product(range(2), repeat=3):
            mass[x[1]] += prior[x] * math.prod(channel[x[j], y[j]] for j in range(3))
        assert got[col] == pytest.approx(math.log(mass[1] / mass[0]), rel=1e-12)


def test_posterior_matches_a_seeded_simulation(rng: np.random.Generator) -> None:
    prior = np.array([[0.4, 0.1], [0.1, 0.4]])  # two correlated people
    channel = krr_channel(2, 1.0)
    exact = posterior_log_odds(prior, ldp_likelihood(channel, 2), 0, 1, 0)
    draws = 400_000
    x = all_sequences(2, 2)[rng.choice(4, size=draws, p=prior.ravel())]
    flip = rng.random(x.shape) < channel[0, 1]
    y = np.where(flip, 1 - x, x)
    for col, target in enumerate(itertools.product(range(2), repeat=2)):
        hit = (y == target).all(axis=1)
        p_hat = x[hit, 0].mean()
        p_exact = 1 / (1 + math.exp(-exact[col]))
        se = math.sqrt(p_exact * (1 - p_exact) / hit.sum())
        assert abs(p_hat - p_exact) < 5 * se


def test_inferential_loss_independent_and_correlated() -> None:
    eps = 0.9
    channel = krr_channel(2, eps)
    for n in (1, 2, 3):
        independent = np.full((2,) * n, 0.5**n)
        loss = inferential_privacy_loss(independent, ldp_likelihood(channel, n))
        assert loss == pytest.approx(eps)
        identical = np.zeros((2,) * n)
        identical[(0,) * n] = identical[(1,) * n] = 0.5
        assert inferential_privacy_loss(identical, ldp_likelihood(channel, n)) == pytest.approx(
            n * eps)


def test_inferential_loss_equals_the_likelihood_ratio_form() -> None:
    """Definition A.1 states the loss twice: as a posterior-minus-prior log-odds and as a ratio of
    conditional likelihoods P[w | x_i = a] / P[w | x_i = b]. Compute the second by loops."""
    rng = np.random.default_rng(3)
    prior = _random_prior(rng, 3, k=3)
    channel = krr_channel(3, 0.6)
    worst = 0.0
    for i in range(3):
        for y in itertools.product(range(3), repeat=3):
            cond = []
            for a in range(3):
                num = den = 0.0
                for x in itertools.product(range(3), repeat=3):
                    if x[i] == a:
                        den += prior[x]
                        num += prior[x] * math.prod(channel[x[j], y[j]] for j in range(3))
                cond.append(num / den)
            worst = max(worst, math.log(max(cond) / min(cond)))
    assert inferential_privacy_loss(prior, ldp_likelihood(channel, 3)) == pytest.approx(worst)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.floats(0.0, 1.0), min_size=4, max_size=4).filter(lambda w: sum(w) > 1e-3),
       st.floats(0.0, 20.0))
def test_inferential_loss_is_never_nan(weights: list[float], eps: float) -> None:
    prior = np.array(weights).reshape(2, 2) / sum(weights)
    prior /= prior.sum()
    loss = inferential_privacy_loss(prior, ldp_likelihood(krr_channel(2, eps), 2))
    assert not math.isnan(loss) and loss >= 0


# --------------------------------------------------------------------------- Theorem 4.1


def _informed_shift_by_loops(prior, channel, order_probs, group, person) -> float:
    joint = _loop_joint(prior, channel, order_probs)
    n = prior.ndim
    outside = [j for j in range(n) if j not in group]

    def knows(y):
        return tuple(y[j] for j in outside), tuple(sorted(y[j] for j in group))

    after: dict = defaultdict(float)
    before: dict = defaultdict(float)
    for (x, y, z), p in joint.items():
        after[(knows(y), z, x[person])] += p
        before[(knows(y), x[person])] += p
    worst = 0.0
    for (key, z, a), p_a in after.items():
        for b in range(prior.shape[0]):
            p_b = after.get((key, z, b), 0.0)
            if b == a or p_b == 0 or p_a == 0:
                continue
            shift = math.log(p_a / p_b) - math.log(before[(key, a)] / before[(key, b)])
            worst = max(worst, shift)
    return worst


def test_informed_shift_matches_loops() -> None:
    rng = np.random.default_rng(4)
    mech = DSigmaMechanism([[0, 1, 2], [1, 0], [2, 0]], alpha=1.1)
    probs = release_order_probabilities(mech)
    for channel in (krr_channel(2, 0.7), np.eye(2)):
        prior = _random_prior(rng, 3)
        got = informed_log_odds_shift(prior, channel, probs, [0, 1, 2], 0)
        assert got == pytest.approx(_informed_shift_by_loops(prior, channel, probs, [0, 1, 2], 0))


def test_theorem_4_1_holds_for_random_priors() -> None:
    rng = np.random.default_rng(5)
    for mech in _mechanisms():
        probs = release_order_probabilities(mech)
        n = mech.n
        for person in range(n):
            group = mech._checked[person]
            proof_bound = arrangement_loss(probs, 2, group)
            assert proof_bound <= mech.alpha + 1e-9
            for eps in (0.3, 2.0):
                prior = _random_prior(rng, n)
                shift = informed_log_odds_shift(prior, krr_channel(2, eps), probs, group, person)
                assert shift <= proof_bound + 1e-9


def test_theorem_4_1_is_attained_without_noise() -> None:
    """Two datasets that differ by swapping persons 0 and 1 (adjacent in the reference): the
    release likelihoods differ by exactly e^alpha for the best output, so the bound is attained;
    with randomized response the shift is strictly smaller."""
    for alpha in (0.5, 1.0, 3.0):
        mech = DSigmaMechanism([[0, 1], [1, 0], [2, 3], [3, 2]], alpha=alpha)
        probs = release_order_probabilities(mech)
        two_points = np.zeros((2,) * 4)
        two_points[1, 0, 0, 1] = two_points[0, 1, 0, 1] = 0.5
        assert informed_log_odds_shift(two_points, np.eye(2), probs, [0, 1], 0) == pytest.approx(
            alpha, abs=1e-12)
        noisy = informed_log_odds_shift(two_points, krr_channel(2, 2.0), probs, [0, 1], 0)
        assert noisy < alpha - 1e-3


def test_arrangement_loss_is_the_exact_group_loss() -> None:
    for mech in _mechanisms():
        probs = release_order_probabilities(mech)
        for person in range(mech.n):
            group = mech._checked[person]
            only = [group if j == person else [j] for j in range(mech.n)]
            exact = exhaustive_privacy_loss(mech, only)
            assert arrangement_loss(probs, mech.n, group) == pytest.approx(exact, abs=1e-12)


# --------------------------------------------------------------------------- Theorem 4.2


def test_blind_success_by_enumerating_subsets() -> None:
    for r, k in ((6, 1), (6, 2), (9, 3), (10, 4)):
        targets = set(range(k))
        wins = sum(len(targets & set(h)) > k / 2 for h in itertools.combinations(range(r), k))
        assert blind_reidentification_success(r, k) == pytest.approx(wins / math.comb(r, k))


def test_optimal_success_without_information_is_the_blind_guess() -> None:
    uniform = np.full(math.factorial(5), 1 / math.factorial(5))
    for k in (1, 2):
        got = optimal_reidentification_success(krr_channel(2, 0.0), np.zeros(5, dtype=int),
                                               uniform, list(range(k)))
        assert got == pytest.approx(blind_reidentification_success(5, k))


def _optimal_success_by_loops(channel, x, order_probs, targets) -> float:
    n, size = len(x), len(targets)
    score: dict = defaultdict(float)
    for y in itertools.product(range(channel.shape[1]), repeat=n):
        p_y = math.prod(channel[x[j], y[j]] for j in range(n))
        for order, p_o in zip(itertools.permutations(range(n)), order_probs, strict=True):
            z = tuple(y[j] for j in order)
            for h in itertools.combinations(range(n), size):
                hits = sum(order[pos] in targets for pos in h)
                score[(z, h)] += p_y * p_o * (hits > size / 2)
    best: dict = defaultdict(float)
    for (z, _), value in score.items():
        best[z] = max(best[z], value)
    return sum(best.values())


def test_optimal_success_matches_loops() -> None:
    mech = DSigmaMechanism([[0, 1, 2, 3]] * 4, alpha=2.0)
    probs = release_order_probabilities(mech)
    channel = krr_channel(2, 0.8)
    for x, targets in (((1, 0, 0, 1), [0]), ((0, 1, 1, 0), [1]), ((1, 1, 0, 0), [0, 3])):
        got = optimal_reidentification_success(channel, np.array(x), probs, targets)
        assert got == pytest.approx(_optimal_success_by_loops(channel, x, probs, targets))


def test_theorem_4_2_bounds_the_best_adversary() -> None:
    n = 5
    datasets = all_sequences(n, 2)
    for alpha in (0.5, 2.0, 6.0):
        mech = DSigmaMechanism([list(range(n))] * n, alpha=alpha)
        probs = release_order_probabilities(mech)
        for eps in (0.1, 1.0):
            for k in (1, 2):
                success = optimal_reidentification_success(krr_channel(2, eps), datasets, probs,
                                                           list(range(k)))
                cap = 1 / (1 + reidentification_odds_bound(eps, alpha, n, k))
                assert success.max() <= cap + 1e-12
                assert success.min() >= blind_reidentification_success(n, k) - 1e-12


def test_no_shuffling_means_certain_reidentification() -> None:
    identity = np.eye(1, 24).ravel()
    got = optimal_reidentification_success(krr_channel(2, 0.0), np.array([0, 1, 1, 0]), identity,
                                           [2, 3])
    assert got == pytest.approx(1.0)


def test_alpha_threshold_puts_the_bound_at_the_level() -> None:
    for eps, r, k, level in ((0.2, 100, 1, 0.5), (0.05, 100, 5, 0.5), (0.1, 40, 2, 0.2)):
        alpha = reidentification_alpha_threshold(eps, r, k, level)
        assert alpha > 0
        cap = 1 / (1 + reidentification_odds_bound(eps, alpha, r, k))
        assert cap == pytest.approx(level, rel=1e-12)
        above = 1 / (1 + reidentification_odds_bound(eps, alpha + 0.01, r, k))
        assert above > level
    assert reidentification_alpha_threshold(0.2, 100, 5, 0.5) == pytest.approx(math.log(19) - 2)
    with pytest.raises(ValueError, match="level"):
        reidentification_alpha_threshold(0.2, 100, 5, 1.0)
    with pytest.raises(ValueError, match="k < r / 2"):
        reidentification_alpha_threshold(0.2, 10, 5)


# --------------------------------------------------------------------------- Appendix A.3


def test_assignment_likelihood_rows() -> None:
    mech = DSigmaMechanism([[0, 1, 2]] * 3, alpha=1.0)
    lik = assignment_likelihood(release_order_probabilities(mech))
    np.testing.assert_allclose(lik.sum(axis=1), 1.0)
    uniform = assignment_likelihood(np.full(6, 1 / 6))
    np.testing.assert_allclose(uniform, 1 / 6)


def test_lemma_1_counterexample_and_the_true_relation() -> None:
    prob_level, odds_level = assignment_belief_levels([0.5, 0.5], [[0.8, 0.2], [0.2, 0.8]])
    assert prob_level == pytest.approx(math.log(2.5))
    assert odds_level == pytest.approx(math.log(4))
    rng = np.random.default_rng(6)
    for n in (2, 3):
        size = math.factorial(n)
        for _ in range(30):
            prior = rng.dirichlet(np.full(size, 0.7))
            lik = rng.dirichlet(np.full(4, 0.7), size=size)
            p7, p8 = assignment_belief_levels(prior, lik)
            assert p7 <= p8 + 1e-12
            assert p8 <= 2 * p7 + 1e-12


def test_property_1_whole_population_group() -> None:
    rng = np.random.default_rng(7)
    for alpha in (0.3, 1.0, 2.5):
        mech = DSigmaMechanism([[0, 1, 2]] * 3, alpha=alpha)
        lik = assignment_likelihood(release_order_probabilities(mech))
        for _ in range(20):
            _, odds_level = assignment_belief_levels(rng.dirichlet(np.full(6, 0.5)), lik)
            assert odds_level <= alpha + 1e-9


def test_property_2_needs_a_lopsided_prior() -> None:
    """A two-person mechanism with likelihood ratio t = e^1.2 is not 1-d_sigma private. The even
    prior of the paper's proof moves beliefs by only log((1 + t) / 2) < 1; a prior with little
    mass on one assignment moves them by almost log t > 1."""
    t = math.exp(1.2)
    lik = assignment_likelihood(release_order_probabilities(DSigmaMechanism([[0, 1]] * 2, 1.2)))
    even, _ = assignment_belief_levels([0.5, 0.5], lik)
    assert even == pytest.approx(math.log((1 + t) / 2)) and even < 1.0
    lopsided, _ = assignment_belief_levels([0.99, 0.01], lik)
    # the rare assignment's event, after the output that favours it (t) or disfavours it (1 / t)
    up, down = math.log(t / (0.01 * t + 0.99)), math.log(0.01 + 0.99 * t)
    assert lopsided == pytest.approx(max(up, down)) and min(up, down) > 1.0


# --------------------------------------------------------------------------- bad input


def test_bad_input_raises() -> None:
    channel = krr_channel(2, 1.0)
    probs = np.full(6, 1 / 6)
    with pytest.raises(ValueError, match="sum to 1"):
        inferential_privacy_loss(np.full((2, 2), 0.3), ldp_likelihood(channel, 2))
    with pytest.raises(ValueError, match="non-negative"):
        inferential_privacy_loss(np.array([[1.5, -0.5], [0, 0]]), ldp_likelihood(channel, 2))
    with pytest.raises(ValueError, match="shape"):
        inferential_privacy_loss(np.full((2, 3), 1 / 6), ldp_likelihood(channel, 2))
    with pytest.raises(ValueError, match="row of channel"):
        ldp_likelihood([[0.5, 0.6], [0.5, 0.5]], 2)
    with pytest.raises(ValueError, match="n! probabilities"):
        release_likelihood(np.full(5, 0.2), 2)
    with pytest.raises(ValueError, match="contain person"):
        informed_log_odds_shift(np.full((2,) * 3, 1 / 8), channel, probs, [1, 2], 0)
    with pytest.raises(ValueError, match="person"):
        posterior_log_odds(np.full((2,) * 3, 1 / 8), ldp_likelihood(channel, 3), 3, 1, 0)
    with pytest.raises(ValueError, match="x must lie"):
        optimal_reidentification_success(channel, np.array([0, 2, 0]), probs, [0])
    with pytest.raises(ValueError, match="at most the group size"):
        blind_reidentification_success(3, 4)


# --------------------------------------------------------------------------- priors and accuracy


def test_household_prior_by_loops() -> None:
    p, a = 0.3, 0.8
    prior = household_prior([2, 1], p, a)
    for x in itertools.product(range(2), repeat=3):
        first = sum((p if s else 1 - p) * math.prod(a if v == s else 1 - a for v in x[:2])
                    for s in (0, 1))
        second = sum((p if s else 1 - p) * (a if x[2] == s else 1 - a) for s in (0, 1))
        assert prior[x] == pytest.approx(first * second)
    assert prior.sum() == pytest.approx(1.0)
    independent = household_prior([3], 0.7, 0.5)
    np.testing.assert_allclose(independent, 1 / 8)
    with pytest.raises(ValueError, match="sizes"):
        household_prior([2, 0], 0.5, 0.9)
    with pytest.raises(ValueError, match="lie in"):
        household_prior([2], 1.5, 0.9)


def _household_prior_by_rows(sizes: list[int], p: float, a: float) -> np.ndarray:
    """household_prior as it was before issue 32 (one row per dataset, 2^n x n integers)."""
    n = sum(sizes)
    datasets = np.array(list(itertools.product(range(2), repeat=n)), dtype=np.int64)
    out = np.ones(datasets.shape[0])
    start = 0
    for size in np.array(sizes, dtype=np.int64):
        ones = datasets[:, start:start + size].sum(axis=1)
        out *= (p * a**ones * (1 - a) ** (size - ones)
                + (1 - p) * (1 - a) ** ones * a ** (size - ones))
        start += size
    return out.reshape((2,) * n)


@pytest.mark.parametrize("sizes", [[1], [3], [2, 1], [1, 2, 3], [4, 1, 1, 2], [5, 5]])
@pytest.mark.parametrize(("p", "a"), [(0.3, 0.9), (1e-200, 0.5), (0.7, 1.0), (0.5, 1e-12)])
def test_household_prior_is_the_row_by_row_product(sizes: list[int], p: float, a: float) -> None:
    """The outer product of one table per household gives the same bits as the old row-by-row
    product (same values, multiplied in the same order)."""
    np.testing.assert_array_equal(household_prior(sizes, p, a),
                                  _household_prior_by_rows(sizes, p, a))


def test_bayes_guess_accuracy_by_loops_and_simulation(rng: np.random.Generator) -> None:
    prior = household_prior([2, 1], 0.3, 0.9)
    channel = krr_channel(2, 1.0)
    lik = ldp_likelihood(channel, 3)
    got = bayes_guess_accuracy(prior, lik, 0)
    total = 0.0
    for y in itertools.product(range(2), repeat=3):
        mass = [0.0, 0.0]
        for x in itertools.product(range(2), repeat=3):
            mass[x[0]] += prior[x] * math.prod(channel[x[j], y[j]] for j in range(3))
        total += max(mass)
    assert got == pytest.approx(total)
    # no information: the prior guess
    assert bayes_guess_accuracy(prior, np.ones((8, 1)), 0) == pytest.approx(
        max(prior[0].sum(), prior[1].sum()))
    # simulate the Bayes rule found by enumeration and count its hits
    datasets = all_sequences(3, 2)
    guess = np.argmax([posterior_log_odds(prior, lik, 0, 1, 0) < 0,
                       posterior_log_odds(prior, lik, 0, 1, 0) >= 0], axis=0)
    draws = 200_000
    x = datasets[rng.choice(8, size=draws, p=prior.ravel())]
    y = np.where(rng.random(x.shape) < channel[0, 1], 1 - x, x)
    hits = np.mean(guess[y @ np.array([4, 2, 1])] == x[:, 0])
    assert abs(hits - got) < 5 * math.sqrt(got * (1 - got) / draws)


# --------------------------------------------------------------------------- hostile input


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (lambda: all_sequences(10**12, 2), ValueError, "too many"),
        (lambda: all_sequences(2, 10**30), ValueError, "k = "),
        (lambda: ldp_likelihood(krr_channel(2, 1.0), 10**12), ValueError, "n must be at most 22"),
        (lambda: ldp_likelihood("x", 2), TypeError, "channel"),
        (lambda: release_order_probabilities(None), TypeError, "mechanism must be a"),
        (lambda: release_order_probabilities("x"), TypeError, "mechanism must be a"),
        (lambda: household_prior([2**61], 0.5, 0.9), ValueError, "sizes add up to"),
        (lambda: household_prior([2**62], 0.5, 0.9), ValueError, "sizes"),
        (lambda: household_prior([2], "0.5", 0.9), TypeError, "prevalence"),
        (lambda: household_prior([2], 0.5, None), TypeError, "agreement"),
        (lambda: household_prior([2], 0.5, True), TypeError, "agreement"),
        (lambda: posterior_log_odds(np.full((2, 2), 0.25), ldp_likelihood(krr_channel(2, 1.0), 2),
                                    0, True, 0), TypeError, "a must be an integer"),
        (lambda: posterior_log_odds(np.full((2, 2), 0.25), ldp_likelihood(krr_channel(2, 1.0), 2),
                                    0, 1, "0"), TypeError, "b must be an integer"),
        (lambda: posterior_log_odds(np.full((2, 2), 0.25), ldp_likelihood(krr_channel(2, 1.0), 2),
                                    0, 1, 2), ValueError, "b must be at most 1"),
        (lambda: optimal_reidentification_success(krr_channel(2, 1.0), [0, 1, 0], np.full(6, 1 / 6),
                                                  [1.5]), ValueError, "targets"),
        (lambda: optimal_reidentification_success(krr_channel(2, 1.0), [0, 1, 0], np.full(6, 1 / 6),
                                                  [2**62]), ValueError, "targets"),
        (lambda: arrangement_loss(np.full(2, 0.5), 2, [np.nan]), ValueError, "group"),
        (lambda: assignment_belief_levels([0.5, np.nan], np.eye(2)), ValueError, "prior"),
        (lambda: assignment_likelihood(np.full(5040, 1 / 5040)), ValueError, "too large"),
        (lambda: reidentification_alpha_threshold(0.2, 1, 5), ValueError, "group_size = 1"),
        (lambda: reidentification_alpha_threshold(0.2, 100, 5, np.nan), ValueError, "level"),
        (lambda: reidentification_alpha_threshold(1e308, 100, 5), ValueError, "float"),
    ],
)
def test_hostile_input_is_refused_by_our_checks(call, error, message: str) -> None:
    with pytest.raises(error, match=message):
        call()


def test_order_law_size_is_checked_before_its_entries() -> None:
    with pytest.raises(ValueError, match="n <= 8"):
        release_likelihood(np.full(math.factorial(8) + 1, "x", dtype=object), 2)
    with pytest.raises(ValueError, match="n <= 8"):
        release_likelihood(np.broadcast_to(0.5, (10**12,)), 2)


def test_reidentification_at_huge_group_sizes() -> None:
    import mpmath

    from shuffle_lib.inference import (
        blind_reidentification_success,
        reidentification_alpha_threshold,
    )

    mpmath.mp.dps = 40
    for exponent in (3, 20, 100, 400):
        r = 10**exponent
        exact = mpmath.log((r - 5) // 5) - 2 * 5 * mpmath.mpf("0.2")  # level 1/2: log(1) = 0
        assert reidentification_alpha_threshold(0.2, r, 5) == pytest.approx(float(exact),
                                                                              rel=1e-12)
    with pytest.raises(ValueError, match="k must be at most 1000"):
        blind_reidentification_success(10**6, 1001)
    with pytest.raises(ValueError, match="group_size must be at most"):
        blind_reidentification_success(10**400, 3)
    assert blind_reidentification_success(10**15, 1) == pytest.approx(1e-15, rel=1e-12)


def test_all_sequences_is_itertools_product() -> None:
    import itertools

    for n, k in ((1, 1), (4, 1), (1, 5), (3, 3), (7, 2), (2, 9), (5, 4)):
        expected = np.array(list(itertools.product(range(k), repeat=n)), dtype=np.int64)
        got = all_sequences(n, k)
        assert got.dtype == np.int64
        np.testing.assert_array_equal(got, expected.reshape(-1, n))
    assert all_sequences(10**6, 1).shape == (1, 10**6)  # one sequence, built at once


def test_assignment_likelihood_is_the_definition() -> None:
    rng = np.random.default_rng(31)
    for n in range(1, 6):
        probs = rng.random(math.factorial(n))
        probs /= probs.sum()
        orders = all_orders(n)
        index = {tuple(o): row for row, o in enumerate(orders.tolist())}
        expected = np.zeros((len(orders), len(orders)))
        for row, sigma in enumerate(orders):  # P[release = sigma[o] | sigma], o by o
            for order, p in zip(orders, probs, strict=True):
                expected[row, index[tuple(sigma[order].tolist())]] += p
        np.testing.assert_array_equal(assignment_likelihood(probs), expected)
