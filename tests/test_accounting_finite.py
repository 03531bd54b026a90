"""Exact accountants for finite mechanisms, and the (eps, delta) composition rules they certify."""

from __future__ import annotations

import itertools
import math
from fractions import Fraction
from functools import reduce

import numpy as np
import pytest
from scipy import stats

from shuffle_lib import krr_channel
from shuffle_lib.accounting import (
    advanced_composition,
    basic_composition,
    channel_delta,
    channel_epsilon,
    epsilon_for_delta,
    group_privacy,
    hockey_stick_divergence,
    optimal_composition_delta,
    optimal_composition_epsilon,
    renyi_divergence,
)


def _event_masses(p: np.ndarray, q: np.ndarray) -> list[tuple[float, float]]:
    """(P(S), Q(S)) for every one of the 2^m events S."""
    return [(p[np.array(mask)].sum(), q[np.array(mask)].sum())
            for mask in itertools.product([False, True], repeat=p.size)]


def _brute_force_hockey_stick(p: np.ndarray, q: np.ndarray, eps: float) -> float:
    """max over all 2^m events S of P(S) - e^eps Q(S)."""
    return max(ps - np.exp(eps) * qs for ps, qs in _event_masses(p, q))


def _brute_force_mult(p: np.ndarray, q: np.ndarray, delta: float) -> float:
    """The MULT^delta of Bailie, Gong & Meng (2023): sup over events of ln([P(S) - delta]^+ / Q(S)),
    both directions, and 0."""
    best = 0.0
    for ps, qs in _event_masses(p, q):
        for a, b in ((ps, qs), (qs, ps)):
            if a - delta > 0:
                best = max(best, math.inf if b == 0 else math.log((a - delta) / b))
    return best


def _leaky_rr(eps: float, delta: float) -> np.ndarray:
    """(eps, delta)-DP channel: with probability delta reveal the bit, else randomized response."""
    rr = krr_channel(2, eps) * (1 - delta)
    reveal = np.diag([delta, delta])
    return np.hstack([rr, reveal])


def test_hockey_stick_equals_the_worst_event(rng: np.random.Generator) -> None:
    for _ in range(25):
        p, q = rng.dirichlet(np.ones(6)), rng.dirichlet(np.ones(6))
        for eps in (0.0, 0.3, 1.5):
            expected = _brute_force_hockey_stick(p, q, eps)
            assert hockey_stick_divergence(p, q, eps) == pytest.approx(expected, abs=1e-12)


def test_epsilon_for_delta_is_the_mult_delta_divergence(rng: np.random.Generator) -> None:
    """Bailie et al.'s MULT^delta (sup over events) equals the accountant's smallest eps with both
    hockey-stick divergences below delta."""
    for _ in range(150):
        k = int(rng.integers(2, 7))
        p, q = rng.dirichlet(np.ones(k)), rng.dirichlet(np.ones(k))
        if rng.random() < 0.3:  # impossible outcomes on one side
            q[rng.integers(k)] = 0.0
            q /= q.sum()
        for delta in (0.0, 0.01, 0.2):
            expected = _brute_force_mult(p, q, delta)
            got = epsilon_for_delta(p, q, delta)
            assert got == pytest.approx(expected, rel=1e-9, abs=1e-9) or got == expected == math.inf


def test_epsilon_for_delta_known_values() -> None:
    eps = 1.3
    rr = np.array([math.exp(eps), 1.0]) / (1 + math.exp(eps))
    assert epsilon_for_delta(rr, rr[::-1], 0.0) == pytest.approx(eps)
    assert epsilon_for_delta([1.0, 0.0], [0.0, 1.0], 0.999) == math.inf  # total variation 1
    # a point mass of 0.05 missing under q costs delta = 0.05, no more
    p, q = np.array([0.05, 0.475, 0.475]), np.array([0.0, 0.5, 0.5])
    assert epsilon_for_delta(p, q, 0.05) == pytest.approx(0.0, abs=1e-9)


def test_hockey_stick_vectorizes_and_decreases_in_eps() -> None:
    p, q = np.array([0.6, 0.3, 0.1]), np.array([0.2, 0.3, 0.5])
    values = hockey_stick_divergence(p, q, np.linspace(0, 3, 31))
    assert values.shape == (31,)
    assert np.all(np.diff(values) <= 1e-15)


def test_channel_epsilon_handles_pairs_and_impossible_outputs() -> None:
    channel = np.array([[0.5, 0.5, 0.0], [0.25, 0.75, 0.0], [0.0, 0.5, 0.5]])
    assert channel_epsilon(channel, pairs=[(0, 1), (1, 0)]) == pytest.approx(np.log(2))
    assert channel_epsilon(channel) == float("inf")


def test_channel_delta_of_leaky_rr_is_its_delta() -> None:
    for eps, delta in [(0.5, 1e-3), (2.0, 0.05)]:
        assert channel_delta(_leaky_rr(eps, delta), eps) == pytest.approx(delta, abs=1e-12)
        assert channel_epsilon(_leaky_rr(eps, delta)) == float("inf")


def test_basic_composition_is_exact_for_randomized_response() -> None:
    eps = [0.3, 1.1, 0.6]
    product = reduce(np.kron, [krr_channel(2, e) for e in eps])
    # the two extreme inputs (all zeros vs all ones) differ in every coordinate
    total_eps, total_delta = basic_composition(eps, [0.0] * 3)
    assert channel_epsilon(product) == pytest.approx(total_eps, abs=1e-12)
    assert total_delta == 0.0


def test_basic_composition_delta_bound_holds_exactly() -> None:
    budgets = [(0.4, 1e-3), (0.9, 2e-3)]
    product = np.kron(_leaky_rr(*budgets[0]), _leaky_rr(*budgets[1]))
    total_eps, total_delta = basic_composition([b[0] for b in budgets], [b[1] for b in budgets])
    assert channel_delta(product, total_eps) <= total_delta + 1e-15


@pytest.mark.parametrize("k", [2, 3, 4])
def test_group_privacy_bounds_hold_for_k_people(k: int) -> None:
    eps, delta = 0.5, 1e-3
    # k people each randomized independently; the two datasets differ in all k of them
    pure = reduce(np.kron, [krr_channel(2, eps)] * k)
    group_eps, _ = group_privacy(eps, 0.0, k)
    assert channel_epsilon(pure, pairs=[(0, 2**k - 1)]) == pytest.approx(group_eps)
    leaky = reduce(np.kron, [_leaky_rr(eps, delta)] * k)
    rows = [0, int("".join(["1"] * k), 2)]  # all-zero vs all-one input rows of the product
    group_eps, group_delta = group_privacy(eps, delta, k)
    assert channel_delta(leaky, group_eps, pairs=[(rows[0], rows[1])]) <= group_delta


def test_advanced_composition_bound_holds_for_composed_rr() -> None:
    # k-fold eps-RR: the number of reports agreeing with input 0 is Bin(k, p) vs Bin(k, 1 - p),
    # a sufficient statistic, so the hockey-stick between the binomials is the exact delta.
    eps, k, slack = 0.1, 200, 1e-6
    p = krr_channel(2, eps)[0, 0]
    support = np.arange(k + 1)
    first, second = stats.binom.pmf(support, k, p), stats.binom.pmf(support, k, 1 - p)
    adv_eps, adv_delta = advanced_composition(eps, 0.0, k, slack)
    assert hockey_stick_divergence(first, second, adv_eps) <= adv_delta
    assert adv_eps < k * eps  # and it is a real improvement over basic composition here


def test_group_privacy_delta_stays_finite_and_capped() -> None:
    assert group_privacy(50.0, 1e-10, 30) == (1500.0, 1.0)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: hockey_stick_divergence([0.5, 0.6], [0.5, 0.5], 1.0), "sum to 1"),
        (lambda: hockey_stick_divergence([1.0], [0.5, 0.5], 1.0), "same length"),
        (lambda: channel_epsilon([[0.5, 0.5], [1.2, -0.2]]), "non-negative"),
        (lambda: channel_epsilon([[0.5, 0.5], [0.5, 0.5]], pairs=[(0, 0)]), "two different"),
        (lambda: basic_composition([0.1, 0.1], [0.6, 0.6]), "no guarantee"),
        (lambda: group_privacy(1.0, 0.0, 0), "k must be an integer >= 1, got 0"),
        (lambda: advanced_composition(0.1, 0.0, 10, 0.0), "delta_slack"),
    ],
)
def test_bad_input_raises(call, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        call()


@pytest.mark.parametrize("k", [1, 2, 4, 6])
@pytest.mark.parametrize("eps0", [0.2, 1.0])
def test_optimal_composition_matches_brute_force_products(k: int, eps0: float) -> None:
    product = reduce(np.kron, [krr_channel(2, eps0)] * k)
    last = 2**k - 1  # all-zero vs all-one inputs: the pair that differs in every round
    for eps in (0.0, 0.5 * k * eps0, k * eps0):
        brute = max(channel_delta(product, eps, pairs=[(0, last)]),
                    channel_delta(product, eps, pairs=[(last, 0)]))
        assert optimal_composition_delta(eps0, k, eps) == pytest.approx(brute, abs=1e-12)


@pytest.mark.parametrize("k", [10, 100, 1000])
def test_optimal_composition_beats_basic_and_advanced(k: int) -> None:
    eps0, delta = 0.1, 1e-6
    optimal = optimal_composition_epsilon(eps0, k, delta)
    assert optimal_composition_delta(eps0, k, optimal) <= delta
    assert optimal_composition_delta(eps0, k, max(optimal - 1e-6, 0.0)) > delta
    assert optimal <= k * eps0
    assert optimal <= advanced_composition(eps0, 0.0, k, delta)[0]


def test_epsilon_for_delta_is_tight_and_safe(rng: np.random.Generator) -> None:
    for _ in range(20):
        p, q = rng.dirichlet(np.ones(8)), rng.dirichlet(np.ones(8))
        for delta in (0.0, 1e-3, 0.1):
            eps = epsilon_for_delta(p, q, delta)
            assert hockey_stick_divergence(p, q, eps) <= delta + 1e-15
            assert hockey_stick_divergence(q, p, eps) <= delta + 1e-15
            if eps > 0:
                below = eps - 1e-9
                assert max(hockey_stick_divergence(p, q, below),
                           hockey_stick_divergence(q, p, below)) > delta


def test_epsilon_for_delta_is_infinite_when_an_outcome_is_exclusive() -> None:
    assert epsilon_for_delta([0.5, 0.5, 0.0], [0.25, 0.25, 0.5], 0.1) == float("inf")
    assert np.isfinite(epsilon_for_delta([0.5, 0.5, 0.0], [0.25, 0.25, 0.5], 0.5))


def test_renyi_divergence_matches_direct_sum_and_orders(rng: np.random.Generator) -> None:
    for _ in range(20):
        p, q = rng.dirichlet(np.ones(5)), rng.dirichlet(np.ones(5))
        values = [renyi_divergence(p, q, a) for a in (1.5, 2.0, 4.0, 16.0)]
        direct = np.log(np.sum(p**2 * q**-1.0))
        assert values[1] == pytest.approx(direct, rel=1e-12)
        assert np.all(np.diff(values) >= -1e-12)  # non-decreasing in the order


def test_pure_dp_implies_half_eps_squared_zcdp_on_rr() -> None:
    # Bun & Steinke (2016), Proposition 1.4: eps-DP implies (eps^2 / 2)-zCDP.
    for eps in (0.1, 1.0, 3.0):
        channel = krr_channel(2, eps)
        orders = np.geomspace(1.01, 1e4, 60)
        slopes = [renyi_divergence(channel[0], channel[1], a) / a for a in orders]
        assert max(slopes) <= eps**2 / 2 + 1e-12


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: renyi_divergence([0.5, 0.5], [0.5, 0.5], 1.0), "alpha must be finite and > 1"),
        (lambda: optimal_composition_delta(-1.0, 3, 0.5), "eps0 must be >= 0"),
        (lambda: optimal_composition_epsilon(1.0, 0, 0.1), "k must be an integer >= 1"),
        (lambda: epsilon_for_delta([1.0], [1.0], 1.5), "delta"),
    ],
)
def test_bad_input_raises_for_new_accountants(call, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        call()


# Hostile input (issue: clear errors for bad input, no silent NaN, no hangs)


def _exact_composed_rr_delta(eps0: float, k: int, eps: float) -> float:
    """delta(eps) of k-fold eps0-RR from its privacy loss (2x - k) eps0, in 60 digits."""
    import mpmath

    with mpmath.workdps(60):
        keep = mpmath.e**eps0 / (1 + mpmath.e**eps0)
        total = mpmath.mpf(0)
        for x in range(k + 1):
            loss = (2 * x - k) * mpmath.mpf(eps0)
            if loss > eps:
                weight = mpmath.binomial(k, x) * keep**x * (1 - keep) ** (k - x)
                total += weight * (1 - mpmath.e ** (eps - loss))
        return float(total)


def test_optimal_composition_survives_the_underflow_of_the_second_law() -> None:
    # Bin(1000, 1 - p) underflows on the bulk of Bin(1000, p) at eps0 = 2: the old float
    # hockey-stick returned delta = 1 at eps = 1800 (exact 1.6e-14) and epsilon = k eps0 = 2000
    exact = _exact_composed_rr_delta(2.0, 1000, 1800.0)
    assert optimal_composition_delta(2.0, 1000, 1800.0) == pytest.approx(exact, rel=1e-10)
    eps = optimal_composition_epsilon(2.0, 1000, 1e-6)
    assert _exact_composed_rr_delta(2.0, 1000, eps) <= 1e-6
    assert _exact_composed_rr_delta(2.0, 1000, eps * (1 - 1e-9)) > 1e-6
    assert eps < 1800


def test_optimal_composition_at_delta_zero_is_exactly_k_eps0() -> None:
    # the extreme outcome's probability underflows, but it is possible: pure DP needs k eps0,
    # the exact product of 2000 and the double 0.01, rounded up to a double (at most one step)
    exact = Fraction(2000) * Fraction(0.01)
    got = optimal_composition_epsilon(0.01, 2000, 0.0)
    assert Fraction(got) >= exact and got <= np.nextafter(float(exact), np.inf)
    with pytest.raises(ValueError, match="delta must be 0 or at least 1e-300"):
        optimal_composition_epsilon(0.5, 10, 1e-310)


@pytest.mark.parametrize("k", [10**12, 10**30])
def test_optimal_composition_refuses_k_beyond_its_limit_instead_of_allocating(k: int) -> None:
    for call in (optimal_composition_delta, optimal_composition_epsilon):
        with pytest.raises(ValueError, match="k must be at most"):
            call(0.5, k, 0.1)


def test_epsilon_for_delta_refuses_tolerances_it_cannot_meet() -> None:
    p, q = [0.75, 0.25], [0.25, 0.75]
    for tol in (0.0, 1e-300, -1.0, float("nan"), float("inf")):
        with pytest.raises(ValueError, match="tol"):
            epsilon_for_delta(p, q, 0.1, tol=tol)
    with pytest.raises(TypeError, match="tol"):
        epsilon_for_delta(p, q, 0.1, tol="1e-12")
    # the smallest accepted tolerance ends (the bracket reaches adjacent doubles)
    assert epsilon_for_delta(p, q, 0.1, tol=2.3e-16) == pytest.approx(
        epsilon_for_delta(p, q, 0.1), abs=1e-11)


def test_wrong_types_are_refused_with_a_type_error() -> None:
    with pytest.raises(TypeError, match="p must be"):
        hockey_stick_divergence(["a", "b"], [0.5, 0.5], 0.0)
    with pytest.raises(TypeError, match="channel"):
        channel_epsilon("x")
    with pytest.raises(TypeError, match="alpha"):
        renyi_divergence([0.5, 0.5], [0.5, 0.5], None)
    with pytest.raises(TypeError, match="pairs"):  # a float row index is not truncated to 0
        channel_epsilon([[0.75, 0.25], [0.25, 0.75]], pairs=[(0.5, 1)])


def test_hockey_stick_counts_exclusive_outcomes_when_e_to_the_eps_overflows() -> None:
    # e^800 overflows; inf * 0 used to be NaN and drop the outcome that Q cannot produce
    assert hockey_stick_divergence([0.5, 0.5], [1.0, 0.0], 800.0) == 0.5


def test_composition_results_beyond_the_float_range_are_errors_not_infinities() -> None:
    with pytest.raises(ValueError, match="eps=1e\\+300"):
        advanced_composition(1e300, 0.0, 100, 1e-5)
    with pytest.raises(ValueError, match="eps=1e\\+308"):
        group_privacy(1e308, 0.0, 3)
    with pytest.raises(ValueError, match="eps sum beyond"):
        basic_composition([1.5e308, 1.5e308], 0.0)
    # a subnormal slack: 1 / slack overflows, its logarithm does not
    eps, _ = advanced_composition(0.1, 0.0, 100, 5e-324)
    assert eps == pytest.approx(np.sqrt(200 * 744.44007) * 0.1 + 10 * np.expm1(0.1), rel=1e-6)


def test_basic_composition_names_delta_when_its_shape_does_not_fit() -> None:
    with pytest.raises(ValueError, match="delta must be a scalar or have the shape of eps"):
        basic_composition(0.5, [1e-6, 0.0])
    with pytest.raises(ValueError, match="delta must be a scalar or have the shape of eps"):
        basic_composition([0.5, 0.25], [[1e-6, 0.0]])


def test_epsilon_for_delta_beyond_the_overflow_of_e_to_the_eps() -> None:
    # Q(o) = 1e-320 with P(o) = 1/2: e^eps Q(o) was inf * 1e-320 = inf past eps = 709.78, so the
    # bisection stopped there, below the exact ln(0.25 / 1e-320) = 735.44 (unsafe)
    p, q = [0.5, 0.5], [1.0, 1e-320]
    exact = math.log(0.25) - math.log(1e-320)
    assert epsilon_for_delta(p, q, 0.25) == pytest.approx(exact, rel=1e-11)
    assert epsilon_for_delta(p, q, 0.25) >= exact * (1 - 1e-15)
    assert hockey_stick_divergence(p, q, 720.0) == pytest.approx(
        0.5 - math.exp(720.0 + math.log(1e-320)), rel=1e-12)


def _random_channels(rng: np.random.Generator, count: int) -> list[np.ndarray]:
    """Small channels with zeros (impossible outputs), repeated rows and one-row channels."""
    out = []
    for _ in range(count):
        rows, cols = int(rng.integers(1, 7)), int(rng.integers(1, 6))
        channel = rng.dirichlet(np.ones(cols), size=rows)
        if rng.random() < 0.4:
            channel[rng.random(channel.shape) < 0.3] = 0.0
            channel[:, 0] += channel.sum(axis=1) == 0
            channel /= channel.sum(axis=1, keepdims=True)
        if rng.random() < 0.2:
            channel = np.vstack([channel, channel[:1]])
        out.append(channel)
    return out


def _pairwise_pure_eps(channel: np.ndarray, pairs: list[tuple[int, int]]) -> float:
    """The definition, pair by pair and output by output, in plain Python."""
    worst = 0.0
    for i, j in pairs:
        for a, b in zip(channel[i], channel[j], strict=True):
            if a > 0 and b == 0:
                return math.inf
            if a > 0:
                worst = max(worst, math.log(a) - math.log(b))
    return worst


def test_channel_epsilon_linear_form_equals_the_pairwise_definition(
        rng: np.random.Generator) -> None:
    # max over outputs of ln(max_x / min_x), against the maximum over every ordered pair
    for channel in _random_channels(rng, 300):
        n = channel.shape[0]
        every = [(i, j) for i in range(n) for j in range(n) if i != j]
        expected = _pairwise_pure_eps(channel, every)
        got = channel_epsilon(channel)
        assert got == expected or got == pytest.approx(expected, rel=1e-14, abs=1e-300)
        if n > 1:
            some = [every[k] for k in rng.integers(0, len(every), 3)]
            got = channel_epsilon(channel, pairs=some)
            expected = _pairwise_pure_eps(channel, some)
            assert got == expected or got == pytest.approx(expected, rel=1e-14, abs=1e-300)


def test_channel_delta_vectorized_equals_the_pairwise_maximum(rng: np.random.Generator) -> None:
    # every ordered pair through hockey_stick_divergence (itself checked against the worst event)
    for channel in _random_channels(rng, 150):
        n = channel.shape[0]
        for eps in (0.0, 0.3, 2.0, 800.0):  # 800: e^eps overflows, the log form is used
            expected = max((float(hockey_stick_divergence(channel[i], channel[j], eps))
                            for i in range(n) for j in range(n) if i != j), default=0.0)
            assert channel_delta(channel, eps) == pytest.approx(expected, rel=1e-14, abs=1e-16)


def test_pairwise_maxima_work_on_large_tables_and_refuse_past_their_limit() -> None:
    # 3,000 rows: the linear pure epsilon answers; the quadratic delta is refused before work,
    # even for a broadcast view that claims 10**9 rows
    rows = np.tile(krr_channel(2, 1.0), (1500, 1))
    assert channel_epsilon(rows) == pytest.approx(1.0, abs=1e-12)
    with pytest.raises(ValueError, match="MAX_PAIR_TERMS"):
        channel_delta(rows, 0.5)
    with pytest.raises(ValueError, match="MAX_PAIR_TERMS"):
        channel_delta(np.broadcast_to([[0.5, 0.5]], (10**9, 2)), 0.5)
    # explicit pairs count too; one row has nothing to tell apart
    assert channel_delta(rows, 0.0, pairs=[(0, 1)]) == pytest.approx(np.tanh(0.5), abs=1e-12)
    assert channel_delta([[0.25, 0.75]], 0.0) == 0.0 == channel_epsilon([[0.25, 0.75]])
