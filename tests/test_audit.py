"""Privacy auditing: the Clopper-Pearson bound against the binomial law, coverage of the audit's
lower bound on mechanisms with known epsilon, convergence, exact audits, bad input."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.optimize import brentq
from scipy.stats import beta, binom, norm

from shuffle_lib.audit import (
    AttackOutcome,
    audit,
    clopper_pearson_upper,
    epsilon_lower_bound,
    exact_epsilon,
    threshold_attack,
    worst_pair,
)
from shuffle_lib.randomizers import krr_channel


@pytest.mark.parametrize(("k", "n"), [(0, 10), (3, 10), (9, 10), (0, 1000), (250, 1000)])
def test_clopper_pearson_is_the_binomial_root(k: int, n: int) -> None:
    # the upper bound r solves P(Bin(n, r) <= k) = 1 - level, found here by root finding
    for level in (0.9, 0.975):
        root = brentq(lambda r, level=level: binom.cdf(k, n, r) - (1 - level), 1e-15, 1 - 1e-15)
        assert float(clopper_pearson_upper(k, n, level)) == pytest.approx(root, rel=1e-8)
    assert float(clopper_pearson_upper(n, n, 0.95)) == 1.0


def test_lower_bound_formula_by_hand() -> None:
    fp, fn, n, delta = 30, 120, 1000, 1e-3
    level = 1 - 0.05 / 2
    fpr = brentq(lambda r: binom.cdf(fp, n, r) - (1 - level), 1e-12, 1 - 1e-12)
    fnr = brentq(lambda r: binom.cdf(fn, n, r) - (1 - level), 1e-12, 1 - 1e-12)
    by_hand = max(0.0, math.log((1 - delta - fnr) / fpr), math.log((1 - delta - fpr) / fnr))
    assert epsilon_lower_bound(fp, fn, n, delta) == pytest.approx(by_hand, rel=1e-8)
    # the two errors play symmetric roles
    assert epsilon_lower_bound(fn, fp, n, delta) == pytest.approx(by_hand, rel=1e-12)
    # more confidence, or more slack delta, can only lower the bound
    assert epsilon_lower_bound(fp, fn, n, delta, 0.99) < by_hand
    assert epsilon_lower_bound(fp, fn, n, 0.1) < by_hand


def _rr_sampler(eps: float):
    keep = math.exp(eps) / (1 + math.exp(eps))
    return lambda which, size, gen: ((gen.random(size) < keep) == (which == 0)).astype(float)


def _coverage_failures(sample, truth: float, confidence: float, runs: int, trials: int,
                       delta: float = 0.0) -> int:
    return sum(audit(sample, trials, delta=delta, confidence=confidence, rng=seed).epsilon
               > truth + 1e-12 for seed in range(runs))


def _allowed(runs: int, miss: float) -> float:
    # the number of runs above the truth is at most Binomial(runs, miss): allow 3 sd above
    return runs * miss + 3 * math.sqrt(runs * miss * (1 - miss))


def test_coverage_when_nothing_can_be_distinguished() -> None:
    # two identical continuous laws: the truth is eps = 0, so any positive bound is a false
    # claim; the threshold is searched over every observed score, the hardest case for coverage
    same = lambda which, size, gen: gen.normal(size=size)  # noqa: E731
    runs, confidence = 200, 0.8
    failures = _coverage_failures(same, 0.0, confidence, runs, 200)
    assert failures <= _allowed(runs, 1 - confidence)


def test_coverage_on_randomized_response_and_the_gaussian() -> None:
    runs, confidence = 150, 0.8
    eps = 1.0
    assert _coverage_failures(_rr_sampler(eps), eps, confidence, runs, 1000) <= _allowed(
        runs, 1 - confidence)
    # Gaussian mechanism, shift mu = 1 in units of sigma: exact eps(delta) from its GDP curve
    mu, delta = 1.0, 1e-3
    truth = brentq(lambda e: norm.cdf(-e / mu + mu / 2) - math.exp(e) * norm.cdf(-e / mu - mu / 2)
                   - delta, 0, 20)
    shifted = lambda which, size, gen: gen.normal(mu * (which == 0), 1.0, size)  # noqa: E731
    assert _coverage_failures(shifted, truth, confidence, runs, 1000, delta) <= _allowed(
        runs, 1 - confidence)


def test_the_bound_approaches_the_truth_as_trials_grow() -> None:
    eps = math.log(3)
    bounds = [audit(_rr_sampler(eps), trials, rng=7).epsilon for trials in (500, 5_000, 100_000)]
    assert bounds[0] < bounds[1] < bounds[2] <= eps
    assert eps - bounds[2] < 0.05


def test_threshold_attack_counts_on_the_held_out_half() -> None:
    scores_x, scores_xp = np.arange(1000.0, 1400.0), np.arange(0.0, 400.0)
    outcome = threshold_attack(scores_x, scores_xp, rng=0)
    assert isinstance(outcome, AttackOutcome)
    assert outcome.trials == 200 and outcome.direction == "greater"
    assert 400 <= outcome.threshold <= 1000
    assert outcome.false_positives == outcome.false_negatives == 0
    assert outcome.epsilon == pytest.approx(epsilon_lower_bound(0, 0, 200))
    reversed_outcome = threshold_attack(scores_xp, scores_x, rng=0)
    assert reversed_outcome.direction == "less" and reversed_outcome.false_positives == 0
    # too few samples to prove anything: the bound is 0 and the test still separates the
    # selection half as well as it can (largest empirical advantage)
    small = threshold_attack(np.arange(10.0, 14.0), np.arange(0.0, 4.0), rng=0)
    assert small.epsilon == 0.0 and small.false_positives + small.false_negatives == 0


def test_exact_audits_against_closed_forms() -> None:
    for eps in (0.1, 1.0, 3.0):
        keep = math.exp(eps) / (1 + math.exp(eps))
        rr = [keep, 1 - keep]
        assert exact_epsilon(rr, rr[::-1]) == pytest.approx(eps, abs=1e-9)
        # with slack delta: H_{e^x}(P||Q) = keep - e^x (1 - keep) below eps
        delta = 0.05 * (2 * keep - 1)
        assert exact_epsilon(rr, rr[::-1], delta) == pytest.approx(
            math.log((keep - delta) / (1 - keep)), abs=1e-9)
        channel = krr_channel(5, eps)
        value, pair = worst_pair(channel)
        assert value == pytest.approx(eps, abs=1e-9) and pair[0] != pair[1]
    assert exact_epsilon([1.0, 0.0], [0.0, 1.0]) == math.inf
    laws = np.array([[0.5, 0.5], [0.6, 0.4], [0.9, 0.1]])
    assert worst_pair(laws, pairs=[(0, 1), (1, 2)])[1] == (1, 2)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: epsilon_lower_bound(-1, 0, 10), "false_positives"),
        (lambda: epsilon_lower_bound(0, 11, 10), "false_negatives"),
        (lambda: epsilon_lower_bound(0.5, 0, 10), "false_positives"),
        (lambda: epsilon_lower_bound(0, 0, 0), "trials"),
        (lambda: epsilon_lower_bound(0, 0, True), "trials"),
        (lambda: epsilon_lower_bound(0, 0, 10, delta=1.0), "delta"),
        (lambda: epsilon_lower_bound(0, 0, 10, delta=-0.1), "delta"),
        (lambda: epsilon_lower_bound(0, 0, 10, confidence=1.0), "confidence"),
        (lambda: epsilon_lower_bound(0, 0, 10, confidence=math.nan), "confidence"),
        (lambda: threshold_attack([0.0, 1.0], [0.0, 1.0, 2.0]), "as many"),
        (lambda: threshold_attack([0.0, math.nan], [0.0, 1.0]), "scores_x must not contain NaN"),
        (lambda: threshold_attack([[0.0, 1.0]], [[0.0, 1.0]]), "1-D"),
        (lambda: audit(lambda w, n, g: np.zeros((n, 2)), 10, rng=0), "one number"),
        (lambda: audit(lambda w, n, g: np.zeros(n), 0), "trials"),
        (lambda: audit("not callable", 10), "callable"),
        (lambda: exact_epsilon([0.5, 0.5], [0.5, 0.5], delta=2.0), "delta"),
        (lambda: worst_pair([[1.0, 0.0]]), "2 rows"),
        (lambda: worst_pair([[1.0, 0.0], [0.0, 1.0]], pairs=[(0, 0)]), "two different"),
        (lambda: worst_pair([[1.0, 0.0], [0.0, 1.0]], pairs=[]), "empty"),
    ],
)
def test_bad_input_raises(call, message: str) -> None:
    # a value of the wrong type (a float count, a bool, a non-callable) is a TypeError
    with pytest.raises((ValueError, TypeError), match=message):
        call()


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (lambda: clopper_pearson_upper(-1, 10, 0.95), ValueError, "successes must be >= 0"),
        (lambda: clopper_pearson_upper(11, 10, 0.95), ValueError, "successes must be <= 10"),
        (lambda: clopper_pearson_upper(2.5, 10, 0.95), ValueError, "successes must contain whole"),
        (lambda: clopper_pearson_upper(math.nan, 10, 0.95), ValueError, "successes"),
        (lambda: clopper_pearson_upper("3", 10, 0.95), TypeError, "successes"),
        (lambda: clopper_pearson_upper(True, 10, 0.95), TypeError, "successes"),
        (lambda: clopper_pearson_upper(3, math.nan, 0.95), TypeError, "trials"),
        (lambda: clopper_pearson_upper(3, 10.0, 0.95), TypeError, "trials"),
        (lambda: clopper_pearson_upper(3, 10, 1.5), ValueError, "level must lie in"),
        (lambda: clopper_pearson_upper(3, 10, 0.0), ValueError, "level must lie in"),
        (lambda: clopper_pearson_upper(3, 10, math.nan), ValueError, "level must not be NaN"),
        (lambda: clopper_pearson_upper(3, 10, "0.9"), TypeError, "level"),
        (lambda: audit(lambda w, n, g: np.zeros(n), 10**12), ValueError, "trials must be at most"),
        (lambda: audit(lambda w, n, g: np.zeros(n), 10, progress="no"), TypeError, "progress"),
        (lambda: audit(lambda w, n, g: np.zeros(n), 10, confidence=2.0), ValueError, "confidence"),
        (lambda: threshold_attack(["a", "b"], [0.0, 1.0]), TypeError, "scores_x"),
        (lambda: exact_epsilon(["a", "b"], [0.5, 0.5]), TypeError, "p must be"),
        (lambda: worst_pair("x"), TypeError, "laws"),
        (lambda: worst_pair([[1.0, 0.0], [0.0, 1.0]], pairs=[(0.5, 1)]), TypeError, "pairs"),
        (lambda: worst_pair([[1.0, 0.0], [0.0, 1.0]], pairs=[(0, 1, 1)]), ValueError, "pairs"),
    ],
)
def test_hostile_input_is_refused_by_our_checks(call, error, message: str) -> None:
    with pytest.raises(error, match=message):
        call()


def test_clopper_pearson_stays_finite_at_the_extremes() -> None:
    values = clopper_pearson_upper(np.array([0, 5, 10]), 10, 1e-300)
    assert np.isfinite(values).all() and values[-1] == 1.0
    assert 0 < float(clopper_pearson_upper(0, 10**12, 0.95)) < 1e-11  # about 3 / n


def _random_laws(rng: np.random.Generator, count: int) -> list[np.ndarray]:
    out = []
    for _ in range(count):
        rows, cols = int(rng.integers(2, 7)), int(rng.integers(1, 6))
        laws = rng.dirichlet(np.ones(cols), size=rows)
        if rng.random() < 0.4:  # impossible outputs on some rows
            laws[rng.random(laws.shape) < 0.3] = 0.0
            laws[:, 0] += laws.sum(axis=1) == 0
            laws /= laws.sum(axis=1, keepdims=True)
        if rng.random() < 0.2:  # a repeated row: ties
            laws = np.vstack([laws, laws[:1]])
        out.append(laws)
    return out


def test_worst_pair_equals_the_pairwise_search(rng: np.random.Generator) -> None:
    # the old definition: exact_epsilon over every pair, the first strict maximum kept
    for laws in _random_laws(rng, 40):
        n = laws.shape[0]
        every = [(i, j) for i in range(n) for j in range(i + 1, n)]
        some = [every[k] for k in rng.integers(0, len(every), 4)]
        for pairs in (None, some):
            for delta in (0.0, 1e-3, 0.05, 0.3):
                best: tuple[float, tuple[int, int]] = (-1.0, (0, 0))
                for pair in pairs or every:
                    value = exact_epsilon(laws[pair[0]], laws[pair[1]], delta)
                    if value > best[0]:
                        best = (value, pair)
                got = worst_pair(laws, pairs, delta)
                assert got[1] == best[1]
                assert got[0] == best[0] or got[0] == pytest.approx(best[0], rel=2e-12, abs=2e-12)


def test_worst_pair_ties_and_closed_forms() -> None:
    # k-RR: every pair ties; the first pair is reported, with RR's closed forms
    for k, eps in ((5, 1.0), (40, 2.0)):
        keep, other = math.exp(eps) / (math.exp(eps) + k - 1), 1 / (math.exp(eps) + k - 1)
        assert worst_pair(krr_channel(k, eps)) == (pytest.approx(eps, abs=1e-9), (0, 1))
        delta = 0.5 * (keep - other)  # H_{e^x}(P||Q) = keep - e^x other on the kept value
        value, pair = worst_pair(krr_channel(k, eps), delta=delta)
        assert pair == (0, 1)
        assert value == pytest.approx(math.log((keep - delta) / other), abs=1e-9)
    # an exclusive output: infinite, at the first pair that shows it
    laws = [[0.5, 0.5, 0.0], [0.5, 0.5, 0.0], [0.25, 0.25, 0.5]]
    assert worst_pair(laws) == (math.inf, (0, 2))
    assert worst_pair(laws, delta=0.1) == (math.inf, (0, 2))


def test_worst_pair_is_linear_at_delta_zero_and_bounded_above() -> None:
    laws = np.tile(krr_channel(2, 1.0), (1500, 1))  # 3,000 rows: 4.5 million pairs
    assert worst_pair(laws) == (pytest.approx(1.0, abs=1e-9), (0, 1))
    with pytest.raises(ValueError, match="MAX_PAIR_TERMS"):
        worst_pair(laws, delta=0.01)
    with pytest.raises(ValueError, match="MAX_PAIR_TERMS"):
        worst_pair(np.broadcast_to([[0.5, 0.5]], (10**9, 2)), delta=0.01)
    with pytest.raises(ValueError, match="distributions"):
        worst_pair([[0.5, 0.6], [0.5, 0.5]])


@pytest.mark.parametrize(
    ("fields", "error", "name"),
    [
        ({"false_positives": -1}, ValueError, "false_positives"),
        ({"false_positives": 1001}, ValueError, "false_positives"),
        ({"false_negatives": 2.5}, TypeError, "false_negatives"),
        ({"false_negatives": None}, TypeError, "false_negatives"),
        ({"trials": 0}, ValueError, "trials"),
        ({"trials": True}, TypeError, "trials"),
        ({"threshold": math.nan}, ValueError, "threshold"),
        ({"threshold": "0.5"}, TypeError, "threshold"),
        ({"direction": "up"}, ValueError, "direction"),
        ({"direction": None}, TypeError, "direction"),
        ({"delta": 1.0}, ValueError, "delta"),
        ({"confidence": 0.0}, ValueError, "confidence"),
        ({"confidence": None}, TypeError, "confidence"),
    ],
)
def test_attack_outcome_checks_its_fields(fields: dict, error: type, name: str) -> None:
    valid = {"false_positives": 5, "false_negatives": 10, "trials": 1000, "threshold": 0.5,
             "direction": "greater", "delta": 0.0, "confidence": 0.95}
    with pytest.raises(error, match=name):
        AttackOutcome(**{**valid, **fields})
    # the valid record keeps its bound, and +inf is the 'never guess x' test
    assert AttackOutcome(**valid).epsilon == epsilon_lower_bound(5, 10, 1000)
    assert AttackOutcome(**{**valid, "threshold": math.inf}).threshold == math.inf


def test_audit_refuses_scores_that_are_not_numbers() -> None:
    with pytest.raises(TypeError, match="sample/score must give numbers"):
        audit(lambda w, n, g: np.full(n, "a"), 10, rng=0)


def _threshold_attack_sorting_each_direction(scores_x: np.ndarray, scores_x_prime: np.ndarray,
                                             delta: float, confidence: float, seed: int
                                             ) -> tuple[int, int, float, str]:
    """threshold_attack as it was before issue 32: each direction sorts its negated halves,
    every threshold gets its own Clopper-Pearson bounds, the counting halves are sorted too."""
    def errors(from_x, from_xp, thresholds):
        below_x = np.searchsorted(np.sort(from_x), thresholds, side="left")
        below_xp = np.searchsorted(np.sort(from_xp), thresholds, side="left")
        return from_xp.size - below_xp, below_x

    gen = np.random.default_rng(seed)
    half = scores_x.size // 2
    x_order, xp_order = gen.permutation(scores_x.size), gen.permutation(scores_x.size)
    choose_x, count_x = scores_x[x_order[:half]], scores_x[x_order[half:2 * half]]
    choose_xp = scores_x_prime[xp_order[:half]]
    count_xp = scores_x_prime[xp_order[half:2 * half]]
    candidates = np.unique(np.concatenate([choose_x, choose_xp, [np.inf]]))
    level = 1 - (1 - confidence) / 2
    best = ((-1.0, -2.0), np.inf, "greater")
    for direction, sign in (("greater", 1.0), ("less", -1.0)):
        fp, fn = errors(sign * choose_x, sign * choose_xp, sign * candidates)
        fpr = np.where(fp >= half, 1.0, beta.ppf(level, fp + 1.0, half - fp))
        fnr = np.where(fn >= half, 1.0, beta.ppf(level, fn + 1.0, half - fn))
        bounds = np.zeros(candidates.size)
        with np.errstate(divide="ignore", invalid="ignore"):
            for err, other in ((fpr, fnr), (fnr, fpr)):
                top = 1 - delta - other
                bounds = np.maximum(bounds, np.where(
                    top > 0, np.log(np.where(top > 0, top, 1.0)) - np.log(err), 0.0))
        advantage = (half - fn - fp) / half
        pick = int(np.lexsort((advantage, bounds))[-1])
        key = (float(bounds[pick]), float(advantage[pick]))
        if key > best[0]:
            best = (key, float(candidates[pick]), direction)
    _, threshold, direction = best
    sign = 1.0 if direction == "greater" else -1.0
    fp, fn = errors(sign * count_x, sign * count_xp, np.array([sign * threshold]))
    return int(fp[0]), int(fn[0]), threshold, direction


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("kind", ["normal", "rounded", "binary", "reversed", "equal", "tiny"])
def test_threshold_attack_matches_the_implementation_sorting_each_direction(
        seed: int, kind: str) -> None:
    """One sort per half, both directions from it, Clopper-Pearson once per distinct count and
    two counts on the held-out halves: the same test and the same counts as before, on
    continuous scores, heavy ties, two values, the 'less' direction and identical laws."""
    gen = np.random.default_rng(100 + seed)
    size = int(gen.integers(2, 3000)) if kind != "tiny" else int(gen.integers(2, 6))
    x, xp = gen.normal(1.0, 1.0, size), gen.normal(0.0, 1.0, size)
    if kind == "rounded":
        x, xp = np.round(x, 1), np.round(xp, 1)
    elif kind == "binary":
        x, xp = (x > 0.5).astype(float), (xp > 0.5).astype(float)
    elif kind == "reversed":
        x, xp = -x, -xp
    elif kind == "equal":
        xp = gen.normal(1.0, 1.0, size)
    for delta, confidence in ((0.0, 0.95), (1e-3, 0.5), (0.3, 0.999)):
        got = threshold_attack(x, xp, delta, confidence, rng=seed)
        want = _threshold_attack_sorting_each_direction(x, xp, delta, confidence, seed)
        assert (got.false_positives, got.false_negatives, got.threshold, got.direction) == want
