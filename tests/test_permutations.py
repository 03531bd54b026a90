"""Permutations, rank distances and the Mallows model (Meehan et al. 2022, Section 3.2 and
Appendix A.2)."""

from __future__ import annotations

import itertools
import math
from collections import defaultdict

import numpy as np
import pytest
from scipy import stats
from scipy.special import gammaln

from shuffle_lib.permutations import (
    _fill_uniform_derangement,
    _hamming_log_weights,
    check_permutation,
    compose,
    hamming_distance,
    hamming_moved_pmf,
    inverse,
    is_permutation,
    kendall_extremal_permutation,
    kendall_tau_distance,
    log_derangements,
    mallows_log_normalizer,
    mallows_log_pmf,
    mallows_sample,
    max_kendall_given_hamming,
    random_derangement,
    rank_distance,
)


def _kendall_brute_force(a: np.ndarray, b: np.ndarray) -> int:
    """Pairs of items ordered differently by the rankings a and b, by enumeration."""
    pos_a, pos_b = np.argsort(a), np.argsort(b)
    n = len(a)
    return sum((pos_a[x] - pos_a[y]) * (pos_b[x] - pos_b[y]) < 0
               for x in range(n) for y in range(x + 1, n))


def test_meehan_examples() -> None:
    identity = np.arange(10)
    swapped = np.array([0, 1, 2, 5, 4, 3, 6, 7, 8, 9])  # (1 2 3 6 5 4 7 8 9 10), 0-based
    assert kendall_tau_distance(identity, swapped) == 3
    assert hamming_distance(identity, swapped) == 2


def test_kendall_matches_brute_force(rng: np.random.Generator) -> None:
    for n in (1, 2, 5, 30, 200):
        for _ in range(5):
            a, b = rng.permutation(n), rng.permutation(n)
            assert kendall_tau_distance(a, b) == _kendall_brute_force(a, b)
            assert kendall_tau_distance(a, b) == kendall_tau_distance(b, a)


def test_kendall_is_invariant_under_relabelling_items(rng: np.random.Generator) -> None:
    # the property the fast sampler relies on: d(r[a], r[b]) = d(a, b) for any relabelling r
    for _ in range(20):
        a, b, r = (rng.permutation(50) for _ in range(3))
        assert kendall_tau_distance(r[a], r[b]) == kendall_tau_distance(a, b)


def test_inverse_and_compose(rng: np.random.Generator) -> None:
    a, b = rng.permutation(20), rng.permutation(20)
    y = rng.normal(size=20)
    np.testing.assert_array_equal(y[a][b], y[compose(a, b)])
    np.testing.assert_array_equal(compose(a, inverse(a)), np.arange(20))
    np.testing.assert_array_equal(inverse(inverse(a)), a)
    assert is_permutation(a) and not is_permutation([0, 0, 1]) and not is_permutation([[0]])


@pytest.mark.parametrize("kind", ["kendall", "hamming"])
@pytest.mark.parametrize("theta", [0.0, 0.3, 2.0])
def test_normalizer_and_pmf_match_enumeration(kind: str, theta: float) -> None:
    n = 5
    reference = np.array([3, 0, 4, 1, 2])
    perms = [np.array(p) for p in itertools.permutations(range(n))]
    weights = [math.exp(-theta * rank_distance(p, reference, kind)) for p in perms]
    assert mallows_log_normalizer(n, theta, kind) == pytest.approx(math.log(sum(weights)),
                                                                   rel=1e-12)
    total = sum(math.exp(mallows_log_pmf(p, theta, reference, kind)) for p in perms)
    assert total == pytest.approx(1.0, rel=1e-12)


@pytest.mark.parametrize("theta", [0.0, 0.3, 2.0])
def test_hamming_moved_pmf_matches_enumeration(theta: float) -> None:
    n = 6
    counts = np.zeros(n + 1)
    for p in itertools.permutations(range(n)):
        h = hamming_distance(np.array(p), np.arange(n))
        counts[h] += math.exp(-theta * h)
    np.testing.assert_allclose(hamming_moved_pmf(n, theta), counts / counts.sum(), rtol=1e-12,
                               atol=1e-15)


@pytest.mark.parametrize(("kind", "method"), [("kendall", "lehmer"), ("kendall", "rim"),
                                              ("hamming", "auto")])
def test_samplers_match_the_exact_pmf(kind: str, method: str) -> None:
    # chi-square goodness of fit over all 120 permutations of 5 items, 30,000 draws
    n, theta, draws = 5, 0.4, 30_000
    reference = np.array([2, 4, 0, 1, 3])
    perms = list(itertools.permutations(range(n)))
    index = {p: i for i, p in enumerate(perms)}
    sample = mallows_sample(n, theta, reference, kind, size=draws, rng=7, method=method)
    observed = np.bincount([index[tuple(s)] for s in sample], minlength=len(perms))
    expected = draws * np.exp([mallows_log_pmf(np.array(p), theta, reference, kind)
                               for p in perms])
    assert stats.chisquare(observed, expected).pvalue > 1e-3


def test_fast_sampler_has_the_right_mean_distance_at_large_n() -> None:
    n, theta, draws = 2000, 0.01, 200
    q = math.exp(-theta)
    sizes = np.arange(1, n + 1)
    mean_each = q / (1 - q) - sizes * q**sizes / (1 - q**sizes)  # truncated geometric means
    var_each = (q / (1 - q) ** 2 - sizes**2 * q**sizes / (1 - q**sizes) ** 2)
    reference = np.random.default_rng(1).permutation(n)
    sample = mallows_sample(n, theta, reference, size=draws, rng=2)
    distances = np.array([kendall_tau_distance(s, reference) for s in sample])
    standard_error = math.sqrt(var_each.sum() / draws)
    assert abs(distances.mean() - mean_each.sum()) < 4 * standard_error


def test_derangements() -> None:
    exact = [1, 0, 1, 2, 9, 44, 265]
    for m in range(7, 26):
        exact.append((m - 1) * (exact[-1] + exact[-2]))
    np.testing.assert_allclose(np.exp(log_derangements(np.arange(26))),
                               np.array(exact, dtype=float), rtol=1e-12)
    draws = [tuple(random_derangement(4, rng=seed)) for seed in range(9_000)]
    counts = np.unique(draws, axis=0, return_counts=True)[1]
    assert counts.size == 9 and stats.chisquare(counts).pvalue > 1e-3
    assert random_derangement(0).size == 0
    with pytest.raises(ValueError, match="no derangement"):  # the compiled kernel guards itself
        _fill_uniform_derangement(np.empty(1, np.int64), np.random.default_rng(0))


def test_extreme_theta_stays_finite() -> None:
    assert mallows_log_normalizer(10**5, 1e-9) == pytest.approx(
        math.lgamma(10**5 + 1), rel=1e-3)  # nearly uniform: log n!
    assert mallows_log_normalizer(10**5, 800.0) == pytest.approx(0.0, abs=1e-300)
    assert np.isfinite(mallows_log_normalizer(10**4, 1e-12, "hamming"))
    concentrated = mallows_sample(10**4, 700.0, rng=0)
    np.testing.assert_array_equal(concentrated, np.arange(10**4))


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: kendall_tau_distance([0, 0], [0, 1]), "not a permutation"),
        (lambda: kendall_tau_distance([0, 1], [0, 1, 2]), "same length"),
        (lambda: inverse([0.0, 1.0]), "integers"),
        (lambda: mallows_log_normalizer(5, -1.0), "theta"),
        (lambda: mallows_log_normalizer(5, float("nan")), "theta"),
        (lambda: mallows_log_normalizer(5, 1.0, "spearman"), "distance"),
        (lambda: mallows_sample(5, 1.0, reference=[0, 1, 2]), "reference"),
        (lambda: mallows_sample(5, 1.0, method="fast"), "method"),
        (lambda: random_derangement(1), "no derangement"),
        (lambda: log_derangements([-1]), "non-negative"),
    ],
)
def test_bad_input_raises(call, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        call()


def test_max_kendall_by_brute_force_over_all_pairs() -> None:
    for n in range(2, 6):
        perms = [np.array(p) for p in itertools.permutations(range(n))]
        best: dict = defaultdict(int)
        for a in perms:
            for b in perms:
                h = hamming_distance(a, b)
                best[h] = max(best[h], kendall_tau_distance(a, b))
        assert set(best) == {0, *range(2, n + 1)}
        for h, value in best.items():
            assert max_kendall_given_hamming(n, h) == value


def test_max_kendall_against_the_identity_up_to_eight() -> None:
    """Both distances are unchanged by relabelling items, so comparing with the identity covers
    all pairs; inversions and fixed points are counted here without the library."""
    for n in (6, 7, 8):
        perms = np.array(list(itertools.permutations(range(n))))
        upper = np.triu(np.ones((n, n), dtype=bool), 1)
        inversions = ((perms[:, :, None] > perms[:, None, :]) & upper).sum(axis=(1, 2))
        moved = (perms != np.arange(n)).sum(axis=1)
        for h in {0, *range(2, n + 1)}:
            assert max_kendall_given_hamming(n, h) == inversions[moved == h].max()


def test_extremal_permutation_attains_the_maximum() -> None:
    for n in range(2, 41):
        for h in (0, *range(2, n + 1)):
            perm = kendall_extremal_permutation(n, h)
            assert hamming_distance(np.arange(n), perm) == h
            assert kendall_tau_distance(np.arange(n), perm) == max_kendall_given_hamming(n, h)


def test_max_kendall_is_not_monotone() -> None:
    for n in range(3, 30):
        for h in range(3, n + 1, 2):
            assert max_kendall_given_hamming(n, h) == max_kendall_given_hamming(n, h - 1) - 1
    with pytest.raises(ValueError, match="exactly 1"):
        max_kendall_given_hamming(5, 1)
    with pytest.raises(ValueError, match="exactly 6"):
        max_kendall_given_hamming(5, 6)



# Hostile input: refused by our own checks with the argument's name, or answered correctly; never
# a silent truncation, never an error leaking from numpy or numba.


@pytest.mark.parametrize("bad", ["1.0", True, None])
@pytest.mark.parametrize(
    "call",
    [
        lambda t: mallows_log_normalizer(5, t),
        lambda t: mallows_log_normalizer(5, t, "hamming"),
        lambda t: mallows_log_pmf([1, 0, 2], t),
        lambda t: mallows_sample(5, t, rng=0),
        lambda t: hamming_moved_pmf(5, t),
    ],
)
def test_theta_of_the_wrong_type_is_refused(call, bad) -> None:
    with pytest.raises(TypeError, match="theta"):
        call(bad)


@pytest.mark.parametrize(
    ("call", "name"),
    [
        (lambda: random_derangement(10**12), "m"),
        (lambda: hamming_moved_pmf(10**12, 1.0), "n"),
        (lambda: mallows_log_normalizer(10**30, 1.0), "n"),
        (lambda: mallows_sample(10**12, 1.0), "n"),
        (lambda: mallows_sample(10**6, 1.0, size=11), "size"),
        (lambda: kendall_extremal_permutation(10**12, 2), "n"),
    ],
)
def test_sizes_beyond_the_documented_limit_are_refused(call, name: str) -> None:
    with pytest.raises(ValueError, match=f"{name} must be at most"):
        call()


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (lambda: inverse([1.5, 0.0]), ValueError, "a must"),  # not truncated to [1, 0]
        (lambda: inverse([1.0, 0.0]), ValueError, "a must hold integers"),
        (lambda: check_permutation([0, True]), TypeError, "sigma"),
        (lambda: check_permutation(["1", "0"]), TypeError, "sigma"),
        (lambda: check_permutation(None, "order"), TypeError, "order"),
        (lambda: check_permutation([0, 2**62]), ValueError, "not a permutation"),
        (lambda: check_permutation([0, 10**30]), ValueError, "too large"),
        (lambda: check_permutation([[0, 1], [2]]), ValueError, "sigma"),  # ragged
        (lambda: is_permutation([0.5, 1.5]), ValueError, "a must"),
        (lambda: is_permutation("ab"), TypeError, "a must"),
        (lambda: log_derangements(10**30), ValueError, "m has entries too large"),
        (lambda: log_derangements([0.0, 2.0]), ValueError, "m must hold integers"),
        (lambda: log_derangements(["a"]), TypeError, "m must"),
        (lambda: rank_distance([1, 0], [0, 1], "spearman"), ValueError, "kind must"),
        (lambda: rank_distance([1, 0], [0, 1], None), ValueError, "kind must"),
        (lambda: mallows_sample(5, 1.0, method=None), ValueError, "method must"),
        (lambda: max_kendall_given_hamming(5, 1), ValueError, "h must"),
        (lambda: max_kendall_given_hamming(5, 10**30), ValueError, "h must"),
        (lambda: kendall_extremal_permutation(5, 2.0), TypeError, "h must"),
    ],
)
def test_hostile_arguments_are_refused_by_name(call, error: type, message: str) -> None:
    with pytest.raises(error, match=message):
        call()


def test_huge_derangement_counts_stay_finite() -> None:
    values = log_derangements(np.array([2**62, 10**15]))
    assert np.isfinite(values).all()
    assert values[1] == pytest.approx(math.lgamma(10**15 + 1) - 1, rel=1e-12)  # !m ~ m!/e


def test_check_permutation_has_an_example() -> None:
    assert ">>>" in check_permutation.__doc__


def test_mallows_reference_length_is_checked_before_its_entries() -> None:
    with pytest.raises(ValueError, match="reference has 6 items"):
        mallows_sample(5, 1.0, reference=np.array(["a"] * 6, dtype=object))
    with pytest.raises(ValueError, match="reference has 1000000000000 items"):
        mallows_sample(5, 1.0, reference=np.broadcast_to(0, (10**12,)))


def _hamming_log_weights_reference(n: int, theta: float) -> np.ndarray:
    """The former ``_hamming_log_weights`` (three ``gammaln`` passes and ``log_derangements``),
    kept as the reference: the one-pass version must give the same floats, bit for bit, so that
    every seeded Hamming-Mallows draw is unchanged."""
    h = np.arange(n + 1)
    log_choose = gammaln(n + 1.0) - gammaln(h + 1.0) - gammaln(n - h + 1.0)
    return log_choose + log_derangements(h) - theta * h


@pytest.mark.parametrize("n", [1, 2, 3, 20, 21, 22, 997, 10**5 + 3])
@pytest.mark.parametrize("theta", [0.0, 1e-300, 1e-3, 1.0, 50.0, 1e300])
def test_hamming_log_weights_identical_to_the_former_implementation(n: int, theta: float) -> None:
    with np.errstate(invalid="ignore", over="ignore"):
        np.testing.assert_array_equal(_hamming_log_weights(n, theta),
                                      _hamming_log_weights_reference(n, theta))
