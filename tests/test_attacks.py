"""Datasets, inference attacks and learnability for the d_sigma experiments (Meehan et al.
2022, Sec. 5)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import binom
from sklearn.model_selection import cross_val_score
from sklearn.neighbors import KNeighborsClassifier

import shuffle_lib as sl
from shuffle_lib.attacks import (
    MAX_MODEL_CATEGORIES,
    MAX_MODEL_ENTRIES,
    MAX_TABLE_ENTRIES,
    attack_neighbours,
    granularity_accuracy,
    knn_reconstruction,
    learnability_error,
    local_distributions,
    majority_vote,
    predicted_distributions,
    relative_tv_error,
    vulnerability_rate,
    vulnerable,
)
from shuffle_lib.datasets import anes96, household_trend, synthetic_clusters, synthetic_households


@pytest.fixture(scope="module")
def synthetic():
    return synthetic_clusters(3000, rng=11)


def test_three_granularities_are_separable(synthetic) -> None:
    for divisor, floor in ((4, 0.97), (2, 0.95), (1, 0.9)):
        target = synthetic.x // divisor
        scores = cross_val_score(KNeighborsClassifier(10), synthetic.t, target, cv=3)
        assert scores.mean() >= floor


def test_attack_neighbours_against_brute_force(rng: np.random.Generator) -> None:
    t = rng.random((200, 2))
    side = rng.random(200)
    sources = attack_neighbours(t, 0.15, 5, t_p=side, rng=0)
    dist = np.linalg.norm(t[:, None] - t[None], axis=2)
    for i in range(200):
        near = np.flatnonzero((dist[i] <= 0.15) & (np.arange(200) != i))
        expected = near[np.argsort(np.abs(side[near] - side[i]), kind="stable")][:5]
        got = sources[i][sources[i] >= 0]
        np.testing.assert_array_equal(np.sort(got), np.sort(expected))


def test_majority_vote() -> None:
    sources = np.array([[1, 2, -1], [0, 2, -1], [-1, -1, -1]])
    assert majority_vote(np.array([0, 1, 1]), sources, 2).tolist() == [1, 0, -1]


def test_attack_succeeds_on_ldp_and_fails_under_uniform_shuffling(synthetic) -> None:
    gen = np.random.default_rng(3)
    sources = attack_neighbours(synthetic.t, 0.2, 25, rng=gen)
    n = synthetic.x.size
    ldp = vulnerability_rate(synthetic.x, sources, np.arange(n), 2.5, 8, rng=gen)
    uniform = vulnerability_rate(synthetic.x, sources, gen.permutation(n), 2.5, 8, rng=gen)
    assert ldp >= 0.9  # nearly everyone recovered from the neighbours' reports
    assert uniform <= 0.02  # a vote over random reports is right 90% of the time for nobody


def test_categorical_privileged_information_ignores_code_order() -> None:
    # owner 0 has code 0; the others hold codes 1 and 5 but none shares 0. An ordered t_p
    # always prefers code 1 (closest number); a categorical one draws among all five at random.
    t, side = np.zeros(6), [0, 1, 5, 5, 5, 5]
    ordered = {int(attack_neighbours(t, 0.0, 1, side, rng=seed)[0, 0]) for seed in range(50)}
    assert ordered == {1}
    picks = np.array([attack_neighbours(t, 0.0, 1, side, rng=seed, categorical=True)[0, 0]
                      for seed in range(400)])
    # a uniform pick of 1 among 5: 80 expected, sd 8; 5 sd either side
    assert 40 < np.sum(picks == 1) < 120 and set(picks.tolist()) == {1, 2, 3, 4, 5}


def test_vulnerable_against_exact_binomial_probabilities(rng: np.random.Generator) -> None:
    """Each person's chance of being vulnerable from the binomial laws of the vote (25 fixed
    sources, binary randomized response) and of the 50 resamples. People share reports, so the
    simulated rate's standard error is measured over 20 independent replicates; the mean must
    agree within 5 of them (a strict ">" for the 90% rule would be off by about 20)."""
    n, k, eps, resamples, replicates = 2_000, 25, 1.0, 50, 20
    x = (rng.random(n) < 0.3).astype(int)
    sources = np.array([rng.choice(np.delete(np.arange(n), i), k, replace=False)
                        for i in range(n)])
    keep = np.exp(eps) / (1 + np.exp(eps))  # P[report = true value]
    ones = x[sources].sum(axis=1)
    counts = np.arange(k + 1)
    # P[j reports say 1] = sum_a P[Bin(ones, keep) = a] P[Bin(k - ones, 1 - keep) = j - a]
    law = np.array([np.convolve(binom.pmf(counts[: m + 1], m, keep),
                                binom.pmf(counts[: k - m + 1], k - m, 1 - keep)) for m in ones])
    says_one = law[:, k // 2 + 1:].sum(axis=1)  # 25 voters: no ties
    right = np.where(x == 1, says_one, 1 - says_one)
    expected = binom.sf(np.ceil(0.9 * resamples) - 1, resamples, right).mean()
    rates = np.array([vulnerable(x, sources, np.arange(n), eps, 2, resamples, rng=rng).mean()
                      for _ in range(replicates)])
    se = rates.std(ddof=1) / np.sqrt(replicates)
    assert abs(rates.mean() - expected) < 5 * se
    assert vulnerability_rate(x, sources, np.arange(n), eps, 2, resamples, rng=5) == float(
        np.mean(vulnerable(x, sources, np.arange(n), eps, 2, resamples, rng=5)))


def test_learnability_extremes(synthetic) -> None:
    gen = np.random.default_rng(4)
    n = synthetic.x.size
    reports = sl.k_randomized_response(synthetic.x, 8, 10.0, rng=gen)
    ldp = learnability_error(synthetic.t, reports, synthetic.x, 0.3, 8, eps=10.0, rng=gen)
    shuffled = learnability_error(synthetic.t, reports[gen.permutation(n)], synthetic.x, 0.3, 8,
                                  eps=10.0, rng=gen)
    assert ldp < 0.35  # most of the local structure is learned from clean-ish reports
    assert abs(shuffled - 1.0) < 0.1  # uniform shuffling: no better than the uniform guess


def test_granularity_accuracy_on_held_out_points(synthetic) -> None:
    test = synthetic_clusters(1000, rng=12)
    probs = predicted_distributions(synthetic.t, synthetic.x, 8, rng=0, at=test.t)
    accuracies = [granularity_accuracy(probs, test.x, block) for block in (1, 2, 4)]
    assert accuracies[0] > 0.85 and accuracies[1] > 0.9 and accuracies[2] > 0.95
    assert accuracies == sorted(accuracies)  # merging classes can only help here
    by_hand = np.mean(probs.reshape(-1, 2, 4).sum(axis=2).argmax(axis=1) == test.x // 4)
    assert accuracies[2] == by_hand
    with pytest.raises(ValueError, match="multiple of block"):
        granularity_accuracy(probs, test.x, 3)
    with pytest.raises(ValueError, match="columns"):
        predicted_distributions(synthetic.t, synthetic.x, 8, at=np.zeros((2, 3)))


def test_predicted_distributions_match_a_direct_fit_on_the_default_blas_pools() -> None:
    """One BLAS thread (for the Platt scaling's L-BFGS-B) and one evaluation per distinct query
    point change the time and not the probabilities: bit for bit those of the same calibrated
    model fitted with the default BLAS pools and evaluated at every row; the pools are restored
    afterwards. (OpenMP stays at one thread here too: the default OpenMP pool gives the same
    trees, only far more slowly on a loaded machine.)"""
    from sklearn.calibration import CalibratedClassifierCV
    from sklearn.ensemble import HistGradientBoostingClassifier
    from threadpoolctl import threadpool_info, threadpool_limits

    def pools() -> list[tuple[str, int]]:
        return sorted((pool["filepath"], pool["num_threads"]) for pool in threadpool_info())

    data = anes96()
    t, x = data.t[:300], data.x[:300]  # 300 people at 204 distinct points
    query = np.vstack([t, data.t[::-5]])  # repeated rows, and points not in t
    before = pools()
    for seed, eps in ((0, None), (1, 2.5)):
        reports = sl.k_randomized_response(x, 3, eps or 2.5, rng=seed)
        gen = np.random.default_rng(seed)
        booster = HistGradientBoostingClassifier(max_iter=30, learning_rate=0.2,
                                                 random_state=int(gen.integers(2**31)))
        with threadpool_limits(limits=1, user_api="openmp"):
            model = CalibratedClassifierCV(booster, method="sigmoid", cv=2).fit(t, reports)
            expected = model.predict_proba(query)
        if eps is not None:
            expected = np.clip(expected @ np.linalg.inv(sl.krr_channel(3, eps)), 0, None)
            expected /= expected.sum(axis=1, keepdims=True)
        got = predicted_distributions(t, reports, 3, eps, rng=seed, at=query)
        np.testing.assert_array_equal(got, expected)
    assert pools() == before


def test_relative_tv_error_against_direct_sums(rng: np.random.Generator) -> None:
    truth = rng.dirichlet(np.ones(4), size=50)
    predicted = rng.dirichlet(np.ones(4), size=50)
    direct = sum(0.5 * np.abs(truth[i] - predicted[i]).sum() for i in range(50)) / sum(
        0.5 * np.abs(truth[i] - 0.25).sum() for i in range(50))
    assert relative_tv_error(predicted, truth) == pytest.approx(direct)
    assert relative_tv_error(np.full((50, 4), 0.25), truth) == pytest.approx(1.0)
    assert relative_tv_error(truth, truth) == 0.0
    with pytest.raises(ValueError, match="undefined"):
        relative_tv_error(truth[:2], np.full((2, 4), 0.25))


def _brute_local_distributions(t: np.ndarray, x: np.ndarray, r: float, k: int) -> np.ndarray:
    close = np.abs(t[:, None] - t[None, :]) <= r  # the definition, pair by pair
    counts = np.stack([(close & (x == c)).sum(axis=1) for c in range(k)], axis=1)
    return counts / counts.sum(axis=1, keepdims=True)


@pytest.mark.parametrize("r", [0.0, 0.1, 0.2, 0.3, 0.7, 1.5, 100.0])
def test_local_distributions_on_a_decimal_grid_matches_the_definition(
        r: float, rng: np.random.Generator) -> None:
    """Multiples of 0.1 are not exact in binary, so t_i + r and |t_i - t_j| round differently:
    the 1-D fast path must still count exactly the people with |t_i - t_j| <= r."""
    t = rng.integers(0, 40, 500) * 0.1
    x = rng.integers(0, 3, 500)
    np.testing.assert_array_equal(local_distributions(t, x, r, 3),
                                  _brute_local_distributions(t, x, r, 3))
    assert local_distributions([0.1, 0.30000000000000004], [0, 1], 0.2, 2).tolist() == [
        [1.0, 0.0], [0.0, 1.0]]  # 0.30000000000000004 - 0.1 > 0.2, though 0.1 + 0.2 is it


def test_local_distributions_with_ties_and_reals_matches_the_definition(
        rng: np.random.Generator) -> None:
    t = np.concatenate([rng.integers(17, 91, 300).astype(float), rng.normal(50, 20, 200)])
    x = rng.integers(0, 2, 500)
    for r in (0.0, 0.5, 1.0, 3.3):
        expected = _brute_local_distributions(t, x, r, 2)
        np.testing.assert_array_equal(local_distributions(t, x, r, 2), expected)
        np.testing.assert_allclose(local_distributions(np.column_stack([t, np.zeros(500)]), x, r,
                                                       2), expected)  # the 2-D route agrees


def test_households_share_position_and_value_and_follow_the_trend() -> None:
    data = synthetic_households(20_000, size=3, rng=5)
    by_home = data.x.reshape(-1, 3)
    assert np.all(by_home == by_home[:, :1]) and np.all(data.t.reshape(-1, 3) == data.t[::3])
    bins = np.minimum((data.t[::3, 0] * 10).astype(int), 9)
    observed = np.bincount(bins, by_home[:, 0]) / np.bincount(bins)
    expected = [np.mean(household_trend(np.linspace(b / 10, (b + 1) / 10, 1001)))
                for b in range(10)]
    # about 2000 households per bin: a binomial share has sd <= 0.012; 4 sd tolerance
    np.testing.assert_allclose(observed, expected, atol=0.05)


def test_anes96_is_bundled_and_coded() -> None:
    data = anes96()
    assert data.t.shape == (944, 2) and data.t_p.shape == (944,)
    assert set(np.unique(data.x)) == {0, 1, 2} and data.n_categories == 3
    # the public attributes carry a local trend: clean data in place beats the global mix
    in_place = learnability_error(data.t, data.x, data.x, 1.0, 3, rng=0)
    mixed = learnability_error(data.t, data.x[np.random.default_rng(1).permutation(944)], data.x,
                               1.0, 3, rng=0)
    assert in_place < 0.5 and mixed > 0.6


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: synthetic_clusters(4), "n"),
        (lambda: synthetic_clusters(100, noise=-1.0), "noise"),
        (lambda: attack_neighbours([[0.0]], 1.0), "n >= 2"),
        (lambda: attack_neighbours([0.0, 1.0], -1.0), "r must"),
        (lambda: attack_neighbours([0.0, 1.0], 1.0, t_p=[1.0]), "t_p"),
        (lambda: vulnerability_rate([0, 1], np.zeros((2, 1), int), [0, 0], 1.0, 2), "permutation"),
        (lambda: vulnerable([0, 1], np.zeros((2, 1), int), [0, 1], 1.0, 2, threshold=0.0),
         "threshold"),
    ],
)
def test_bad_input_raises(call, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        call()


# --------------------------------------------------------------------------- hostile input


_SOURCES = np.array([[1, 2], [0, 2], [-1, -1]])


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        # index arrays: NaN, non-integer, out-of-range or 2**62 entries are refused, not indexed
        (lambda: majority_vote([0, 1, 1], [[1.5, 2], [0, 2], [-1, -1]], 2), ValueError,
         "neighbours must contain whole numbers"),
        (lambda: majority_vote([0, 1, 1], [[np.nan, 2], [0, 2], [-1, -1]], 2), ValueError,
         "neighbours must not contain NaN"),
        (lambda: majority_vote([0, 1, 1], [[2**62, 2], [0, 2], [-1, -1]], 2), ValueError,
         "neighbours"),
        (lambda: majority_vote([0, 1, 1], [[3, 2], [0, 2], [-1, -1]], 2), ValueError,
         "neighbours must be <= 2"),
        (lambda: majority_vote([0, 1, 1], [[-2, 2], [0, 2], [-1, -1]], 2), ValueError,
         "neighbours must be >= -1"),
        (lambda: majority_vote([0, 1, 5], _SOURCES, 2), ValueError, "released must hold values"),
        (lambda: majority_vote([0, 1, 1], _SOURCES, 10**12), ValueError, "n_categories"),
        (lambda: majority_vote(np.zeros((10**5, 3), int), _SOURCES, 1000), ValueError,
         "documented limit"),
        (lambda: vulnerable([0, 1, 0.5], _SOURCES, [0, 1, 2], 1.0, 2), ValueError,
         "x must contain whole numbers"),
        (lambda: vulnerable([0, 1, -1], _SOURCES, [0, 1, 2], 1.0, 2), ValueError, "x must be >= 0"),
        (lambda: vulnerable([0, 1, 1], 3, [0, 1, 2], 1.0, 2), ValueError, "neighbours must have 2"),
        (lambda: vulnerable([0, 1, 1], _SOURCES, [0, 1, 2], 1.0, 10**12), ValueError,
         "n_categories"),
        (lambda: vulnerable([0, 1, 1], _SOURCES, [0, 1, 2], 1.0, 2, resamples=10**12), ValueError,
         "resamples x people x n_categories"),
        (lambda: vulnerable([0, 1, 1], _SOURCES, [0, 1, 2], 1.0, 2, threshold=np.nan), ValueError,
         "threshold must not be NaN"),
        (lambda: vulnerable([0, 1, 1], _SOURCES, [0, 1, 2], 1.0, True), TypeError, "n_categories"),
        (lambda: attack_neighbours([0.0, 1.0], "1.0"), TypeError, "r must be a real number"),
        (lambda: attack_neighbours([0.0, 1.0], True), TypeError, "r must be a real number"),
        (lambda: attack_neighbours([0.0, 1.0], 1.0, 10**12), ValueError, "n x k"),
        (lambda: attack_neighbours([0.0, 1e300], 1.0), ValueError, "t must be <= 1e"),
        (lambda: attack_neighbours([0.0, 1.0], 1.0, categorical="no"), TypeError, "categorical"),
        (lambda: local_distributions([0.0, 1.0], [0, np.nan], 1.0, 2), ValueError,
         "x must not contain NaN"),
        (lambda: local_distributions([0.0, 1.0], [0, 1], 1.0, 1), ValueError, "n_categories - 1"),
        (lambda: local_distributions([0.0, 1.0], [0, 1], 1.0, 10**12), ValueError,
         "n_categories"),
        (lambda: granularity_accuracy([[0.5, 0.5]], [0.5], 1), ValueError, "x must contain whole"),
        (lambda: granularity_accuracy("x", [0], 1), TypeError, "probs"),
        (lambda: relative_tv_error("x", [[1.0, 0.0]]), TypeError, "predicted"),
        (lambda: knn_reconstruction([0.0, 1.0, 2.0], [0, 1, 1], 4), ValueError, "n_neighbors"),
    ],
)
def test_hostile_input_is_refused_by_our_checks(call, error, message: str) -> None:
    with pytest.raises(error, match=message):
        call()


def test_labels_are_checked_before_the_classifier_is_fitted() -> None:
    t, x = np.repeat([0.0, 10.0], 100), np.repeat([0, 1], 100)
    for z, message in [(np.r_[x[:-1], 2], "z must hold each of its values at least twice"),
                       (-x - 1, "z must be >= 0"), (x + 0.5, "z must contain whole numbers"),
                       (np.r_[x[:-1], np.nan], "z must not contain NaN"),
                       (x[:50], r"z must hold one value per person \(200\)")]:
        with pytest.raises(ValueError, match=message):
            learnability_error(t, z, x, 1.0, 3, rng=0)
    with pytest.raises(ValueError, match="eps must lie in"):
        predicted_distributions(t, x, 2, eps=1e-17, rng=0)  # the channel is singular there
    with pytest.raises(ValueError, match="n_categories"):
        learnability_error(t, x, x, 1.0, 10**12, rng=0)


def test_the_vote_by_counting_matches_a_loop_over_categories(rng: np.random.Generator) -> None:
    z = rng.integers(0, 4, (5, 40))
    sources = rng.integers(-1, 40, (40, 7))
    votes = majority_vote(z, sources, 4)
    for draw in range(5):
        for person in range(40):
            picked = z[draw, sources[person][sources[person] >= 0]]
            expected = np.bincount(picked, minlength=4).argmax() if picked.size else -1
            assert votes[draw, person] == expected


@pytest.mark.parametrize("size", [1, 2, 3, 8, 16, 17, 40])
def test_sparse_and_gathered_vote_counts_agree(size: int, rng: np.random.Generator,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """Up to SPARSE_VOTE_CATEGORIES categories the vote counts come from sparse products, above
    it from a gather of every source's report: both give the loop's votes, ties and people
    without sources included (sources repeat, and every fifth person has none)."""
    import shuffle_lib.attacks as attacks

    z = rng.integers(0, size, (2, 3, 60))
    sources = rng.integers(-1, 60, (45, 6))
    sources[::5] = -1
    expected = np.full((2, 3, 45), -1)
    for person in range(45):
        mine = sources[person][sources[person] >= 0]
        if mine.size:
            for draw in np.ndindex(2, 3):
                expected[draw][person] = np.bincount(z[draw][mine], minlength=size).argmax()
    votes = majority_vote(z, sources, size)
    sparse = size <= attacks.SPARSE_VOTE_CATEGORIES
    monkeypatch.setattr(attacks, "SPARSE_VOTE_CATEGORIES", 0 if sparse else attacks.MAX_CATEGORIES)
    other_route = majority_vote(z, sources, size)
    np.testing.assert_array_equal(votes, expected)
    np.testing.assert_array_equal(other_route, expected)
    assert votes.dtype == other_route.dtype


def test_knn_reconstruction_reads_the_nearest_released_values() -> None:
    t = np.concatenate([np.zeros(5), np.full(5, 10.0)])
    z = np.array([0, 0, 0, 1, 0, 1, 1, 1, 0, 1])
    assert knn_reconstruction(t, z, 5).tolist() == [0] * 5 + [1] * 5


def test_knn_reconstruction_is_scikit_learns_classifier() -> None:
    rng = np.random.default_rng(21)
    for _ in range(15):  # no ties: scikit-learn's KNeighborsClassifier, an independent route
        n, d = int(rng.integers(2, 300)), int(rng.integers(1, 4))
        k = int(rng.integers(1, n + 1))
        t, z = rng.random((n, d)), rng.integers(-3, 4, n)
        expected = KNeighborsClassifier(n_neighbors=k).fit(t, z).predict(t)
        np.testing.assert_array_equal(knn_reconstruction(t, z, k), expected)


def test_knn_reconstruction_with_heavy_ties() -> None:
    # every position holds exactly k people, so the k nearest are unique: those at one's own
    # position; scikit-learn's answer is then defined, and so is the majority (ties to the
    # smallest value)
    rng = np.random.default_rng(22)
    for k in (1, 4, 7):
        positions = rng.permutation(np.repeat(np.arange(60.0), k))
        z = rng.integers(0, 3, positions.size)
        got = knn_reconstruction(positions, z, k)
        expected = KNeighborsClassifier(n_neighbors=k).fit(positions[:, None], z).predict(
            positions[:, None])
        np.testing.assert_array_equal(got, expected)
        for value in np.unique(positions):
            here = positions == value
            assert np.all(got[here] == np.argmax(np.bincount(z[here], minlength=3)))


def test_knn_reconstruction_limits_come_first() -> None:
    with pytest.raises(ValueError, match="n_neighbors"):
        knn_reconstruction([0.0, 1.0], [0, 1], 3)
    with pytest.raises(ValueError, match="documented limit"):
        knn_reconstruction(np.broadcast_to(0.0, (10**12,)), np.broadcast_to(0, (10**12,)), 1)


def test_neighbour_pairs_are_counted_before_they_are_listed(monkeypatch) -> None:
    from shuffle_lib import attacks

    t = np.array([[0.0, 0.0]] * 7 + [[0.0, 1.0]] * 3 + [[5.0, 5.0]])  # 7 x 7 + 3 x 3 + 1 pairs
    for radius, pairs in ((0.0, 59), (1.0, 101)):  # at r = 1 the 7 and the 3 also meet: + 42
        monkeypatch.setattr(attacks, "MAX_TABLE_ENTRIES", pairs)
        attack_neighbours(t, radius, 2, rng=0)
        local_distributions(t, np.arange(11) % 2, radius, 2)
        monkeypatch.setattr(attacks, "MAX_TABLE_ENTRIES", pairs - 1)
        with pytest.raises(ValueError, match="pairs"):
            attack_neighbours(t, radius, 2, rng=0)
        with pytest.raises(ValueError, match="pairs"):
            local_distributions(t, np.arange(11) % 2, radius, 2)
    monkeypatch.undo()
    with pytest.raises(ValueError, match="documented limit"):  # 4e8 pairs, refused at once
        attack_neighbours(np.zeros(20_000), 0.0, 1)


def test_table_limit_is_checked_at_its_value_before_any_work() -> None:
    # issue 32: 10**8 entries took 15 to 50 s of CPU; 10**7 answers within seconds, and the
    # book's paper-scale cells build at most 50 resamples x 20,000 people x 8 categories
    assert MAX_TABLE_ENTRIES == 10**7 >= 50 * 20_000 * 8
    n = MAX_TABLE_ENTRIES // 25 + 1  # one person too many for k = 25
    with pytest.raises(ValueError, match="documented limit of 10000000"):
        attack_neighbours(np.broadcast_to(0.0, (n,)), 0.0, 25)


def test_calibrated_model_limits_come_before_any_work() -> None:
    # one set of trees per class: 1000 classes took minutes (issue 32); the book's paper-scale
    # cells fit 20,000 people and query 20,000 points with 8 categories
    assert MAX_MODEL_CATEGORIES >= 8 and MAX_MODEL_ENTRIES >= (20_000 + 20_000) * 8
    t, z = np.repeat([0.0, 1.0], 20), np.tile(np.arange(2), 20)
    with pytest.raises(ValueError, match="documented limit of 16 classes"):
        predicted_distributions(t, z, MAX_MODEL_CATEGORIES + 1)
    with pytest.raises(ValueError, match="documented limit of 16 classes"):
        learnability_error(t, z, z, 1.0, MAX_MODEL_CATEGORIES + 1)
    half = MAX_MODEL_ENTRIES // (2 * 2) + 1  # (half + half) x 2 categories: one entry too many
    huge = np.broadcast_to(0.0, (half,))
    with pytest.raises(ValueError, match="documented limit of 500000"):
        predicted_distributions(huge, np.broadcast_to(0, (half,)), 2)
    with pytest.raises(ValueError, match="documented limit of 500000"):
        learnability_error(huge, np.broadcast_to(0, (half,)), np.broadcast_to(0, (half,)), 1.0, 2)
    # within the limit, as before
    assert predicted_distributions(t, z, 2, rng=0).shape == (40, 2)
