"""The exact floors of shuffled randomized response (``shuffled_rr_exact_*``) and of shuffled
personalized randomized response (``shuffled_personalized_rr_*``) against a 40-digit route from the
definition, over their whole documented range (issue 32, items 2 and 5).

The reference shares no code with the library: the others' count is convolved user by user in
mpmath (50 digits), the two laws of the number of ones follow from the target's bit, and delta is
the larger hockey-stick divergence, taken in the worst case over the others' bits wherever the
function claims a worst case. Every probability difference is written as
``P(x) - e^eps Q(x) = g o(x - 1) - l o(x)`` with ``g = f e^eps expm1(L - eps)`` and
``l = f expm1(L + eps)`` (an identity, checked against the plain difference below), so that a
level of 1e-300 keeps its digits; the floor must never exceed this value and must stay within a
stated tolerance of it.
"""

from __future__ import annotations

import itertools

import mpmath as mp
import numpy as np
import pytest

from shuffle_lib.accounting._binomial import poisson_binomial_pmf
from shuffle_lib.accounting.personalized import (
    shuffled_personalized_rr_delta,
    shuffled_personalized_rr_epsilon,
)
from shuffle_lib.accounting.shuffle import (
    clone_numerical_epsilon,
    shuffled_rr_exact_delta,
    shuffled_rr_exact_epsilon,
)

DIGITS = 50
#: Local levels swept: a log grid over the whole documented range, 1e-300 to the cap 100.
LEVELS = [1e-300, 1e-120, 1e-30, 1e-8, 1e-3, 0.05, 0.5, 1.0, 2.5, 6.0, 15.0, 40.0, 70.0, 100.0]
#: Targets swept: a log grid from 1e-150 (DELTA_MIN) to 0.5.
DELTAS = [1e-150, 1e-100, 1e-60, 1e-30, 1e-15, 1e-9, 1e-6, 1e-3, 0.05, 0.5]


# --- the 40-digit route ---------------------------------------------------------------------


def _mp_others_law(levels: list[float], bits: list[int]) -> list[mp.mpf]:
    """Law of the number of ones reported by users at ``levels`` holding ``bits``: a direct
    convolution, user by user, of their randomized-response reports (a user holding 1 reports 1
    with probability e^L / (1 + e^L), a user holding 0 with 1 / (1 + e^L))."""
    law = [mp.mpf(1)]
    for level, bit in zip(levels, bits, strict=True):
        flip = 1 / (1 + mp.e ** mp.mpf(level))
        keep = 1 / (1 + mp.e ** -mp.mpf(level))
        one = keep if bit else flip
        zero = flip if bit else keep
        law = [(law[j] * zero if j < len(law) else 0) + (law[j - 1] * one if j else 0)
               for j in range(len(law) + 1)]
    return law


def _mp_delta(eps: float, level: float, others: list[mp.mpf]) -> tuple[mp.mpf, mp.mpf]:
    """delta(eps) = max(H(P || Q), H(Q || P)) for a target at ``level`` (P: it holds 1, Q: 0) and
    the others' count law ``others``; also the scale of its error for a floor whose probabilities
    are known to a relative error r (it may sit r times this below)."""
    level_mp, eps_mp = mp.mpf(level), mp.mpf(eps)
    if eps_mp >= level_mp:
        return mp.mpf(0), mp.mpf(0)
    flip = 1 / (1 + mp.e ** level_mp)
    g = flip * mp.e ** eps_mp * mp.expm1(level_mp - eps_mp)  # k - e^eps f
    ell = flip * mp.expm1(level_mp + eps_mp)  # e^eps k - f
    padded = [mp.mpf(0), *others, mp.mpf(0)]
    below, same = padded[:-1], padded[1:]  # o(x - 1), o(x)
    forward = [g * b - ell * s for b, s in zip(below, same, strict=True)]  # P - e^eps Q
    backward = [g * s - ell * b for b, s in zip(below, same, strict=True)]  # Q - e^eps P
    best, scale = mp.mpf(0), mp.mpf(0)
    for terms, weights in ((forward, (g, ell)), (backward, (ell, g))):
        value = mp.fsum(t for t in terms if t > 0)
        spread = mp.fsum(weights[0] * b + weights[1] * s
                         for t, b, s in zip(terms, below, same, strict=True) if t > 0)
        if value > best:
            best, scale = value, spread
    return best, scale


def _mp_epsilon(delta: float, level: float, others: list[mp.mpf]) -> mp.mpf:
    """Smallest eps with delta(eps) <= delta. Every event S gives delta(eps) >= P(S) - e^eps Q(S),
    so eps >= ln((P(S) - delta) / Q(S)), and the optimal event at the answer attains it
    (Neyman-Pearson: it is a superlevel set of P / Q, an increasing function of o(x-1) / o(x)). So
    the answer is the largest of these over the superlevel sets of o(x-1) / o(x) (and of the
    reverse, for Q against P), written as
    log1p((tanh(L/2) (U - V) - delta) / (f U + k V)), U and V the sums of o(x-1) and o(x) over S,
    so that a level of 1e-300 keeps its digits."""
    level_mp, target = mp.mpf(level), mp.mpf(delta)
    flip = 1 / (1 + mp.e ** level_mp)
    keep = 1 / (1 + mp.e ** -level_mp)
    gap = mp.tanh(level_mp / 2)  # keep - flip
    padded = [mp.mpf(0), *others, mp.mpf(0)]
    below, same = padded[:-1], padded[1:]
    best = mp.mpf(0)
    for first, second in ((below, same), (same, below)):
        # decreasing ratio first / second (an entry with second = 0 has ratio infinity)
        order = sorted(range(len(first)), key=lambda i: (second[i] == 0,
                                                         first[i] / second[i] if second[i] else 0),
                       reverse=True)
        big, small = mp.mpf(0), mp.mpf(0)
        for i in order:
            big, small = big + first[i], small + second[i]
            excess = gap * (big - small) - target
            if excess > 0:
                best = max(best, mp.log1p(excess / (flip * big + keep * small)))
    return best


def _rr_others(eps0: float, n: int, ones: int) -> list[mp.mpf]:
    return _mp_others_law([eps0] * (n - 1), [1] * ones + [0] * (n - 1 - ones))


def test_reference_identity_matches_the_plain_difference() -> None:
    """The g / l form of the reference equals sum_x (P(x) - e^eps Q(x))_+ computed plainly (at
    levels where 50 digits are enough for the plain form)."""
    with mp.workdps(DIGITS):
        for eps0, n, ones in ((0.3, 6, 2), (2.0, 5, 0), (9.0, 4, 3)):
            others = _rr_others(eps0, n, ones)
            keep = 1 / (1 + mp.e ** -mp.mpf(eps0))
            flip = 1 / (1 + mp.e ** mp.mpf(eps0))
            padded = [mp.mpf(0), *others, mp.mpf(0)]
            first = [keep * padded[j] + flip * padded[j + 1] for j in range(len(others) + 1)]
            second = [flip * padded[j] + keep * padded[j + 1] for j in range(len(others) + 1)]
            for eps in (0.0, eps0 / 3, 0.9 * eps0):
                scale = mp.e ** mp.mpf(eps)
                pairs = list(zip(first, second, strict=True))
                plain = max(mp.fsum(max(a - scale * b, 0) for a, b in pairs),
                            mp.fsum(max(b - scale * a, 0) for a, b in pairs))
                assert abs(_mp_delta(eps, eps0, others)[0] - plain) <= mp.mpf(10) ** -40


# --- shuffled randomized response -------------------------------------------------------------


@pytest.mark.parametrize("eps0", LEVELS)
def test_rr_delta_agrees_with_the_40_digit_convolution(eps0: float) -> None:
    """For every composition of small populations, the floor on delta(eps) never exceeds the
    40-digit value and sits at most 1e-10 of its error scale below it (the probabilities are
    known to about 1e-12, relative), at eps from 0 to just below eps0."""
    with mp.workdps(DIGITS):
        for n in (2, 5, 12):
            for ones in range(n):
                others = _rr_others(eps0, n, ones)
                for share in (0.0, 0.3, 0.7, 0.99, 0.999999):
                    eps = share * eps0
                    exact, scale = _mp_delta(eps, eps0, others)
                    ours = shuffled_rr_exact_delta(eps, eps0, n, others_ones=ones)
                    assert ours <= exact * (1 + 1e-15), (eps0, n, ones, eps, ours, exact)
                    assert ours >= exact - 1e-10 * scale - 1e-200, (eps0, n, ones, eps, ours,
                                                                     exact)


@pytest.mark.parametrize("eps0", LEVELS)
def test_rr_worst_case_delta_is_the_worst_over_every_composition(eps0: float) -> None:
    """Without ``others_ones`` and n <= 200 the floor is the worst over the others' bits: every
    composition of the 40-digit route (all n of them, not only the ones the function tries)."""
    with mp.workdps(DIGITS):
        for n in (3, 10):
            laws = [_rr_others(eps0, n, ones) for ones in range(n)]
            for share in (0.0, 0.5, 0.9, 0.99999):
                eps = share * eps0
                values = [_mp_delta(eps, eps0, others) for others in laws]
                exact, scale = max(values, key=lambda pair: pair[0])
                ours = shuffled_rr_exact_delta(eps, eps0, n)
                assert ours <= exact * (1 + 1e-15)
                assert ours >= exact - 1e-10 * scale - 1e-200


@pytest.mark.parametrize("eps0", LEVELS)
def test_rr_epsilon_agrees_with_the_40_digit_route(eps0: float) -> None:
    """The floor on epsilon, worst over compositions, never exceeds the 40-digit epsilon and is
    within 1e-10 of it (relative), at every delta from 1e-150 to 0.5."""
    with mp.workdps(DIGITS):
        for n in (2, 7, 20):
            laws = [_rr_others(eps0, n, ones) for ones in range(n)]
            for delta in DELTAS:
                exact = max(_mp_epsilon(delta, eps0, others) for others in laws)
                ours = shuffled_rr_exact_epsilon(eps0, n, delta)
                assert ours <= exact, (eps0, n, delta, ours, exact)
                assert ours >= exact * (1 - 1e-10) - 1e-300, (eps0, n, delta, ours, exact)


def test_the_issue_calls_are_exact() -> None:
    """The three calls of issue 32 that were wrong: the floor is now the 40-digit value."""
    with mp.workdps(DIGITS):
        worst = max(_mp_delta(40.0, 50.0, _rr_others(50.0, 10, m))[0] for m in range(10))
        assert float(worst) == pytest.approx(0.99995, abs=5e-6)
        ours = shuffled_rr_exact_delta(40.0, 50.0, 10)
        assert float(worst) * (1 - 1e-12) <= ours <= float(worst)  # was 0.0
        assert shuffled_rr_exact_epsilon(50.0, 10, 1e-12) >= shuffled_rr_exact_epsilon(
            50.0, 10, 1e-6)  # was 31.61 against 31.78
        levels = [30.0] + [1.0] * 9
        exact = _mp_epsilon(1e-6, 30.0, _mp_others_law(levels[1:], [0] * 9))
        ours = shuffled_personalized_rr_epsilon(levels, 1e-6)
        assert float(exact) * (1 - 1e-12) <= ours <= exact  # was 24.67 for 30.0


@pytest.mark.parametrize(("eps0", "n"), [(1e-8, 50), (0.01, 30), (1.0, 30), (1.0, 300),
                                         (8.0, 10**5), (50.0, 10), (100.0, 3)])
def test_rr_epsilon_never_increases_with_delta(eps0: float, n: int) -> None:
    """Exactly monotone in delta: every bisection starts from the same bracket."""
    deltas = np.logspace(-150, np.log10(0.5), 40)
    for ones in (0, None):
        values = [shuffled_rr_exact_epsilon(eps0, n, float(d), others_ones=ones) for d in deltas]
        assert all(b <= a for a, b in itertools.pairwise(values)), (eps0, n, ones, values)


@pytest.mark.parametrize("delta", [1e-150, 1e-12, 1e-6, 0.1])
def test_rr_epsilon_grows_with_the_level_and_shrinks_with_n(delta: float) -> None:
    """Randomized response at a lower level is a post-processing of a higher one, and one more
    user adds an independent report (post-processing too): the true epsilon grows with eps0 and
    falls with n, so the floors do, up to their tolerance."""
    levels = np.logspace(-300, 2, 25)
    for n in (2, 9, 40):
        values = [shuffled_rr_exact_epsilon(float(e), n, delta) for e in levels]
        assert all(b >= a - 1e-10 * max(a, 1e-300) for a, b in itertools.pairwise(values))
    for eps0 in (0.01, 1.0, 5.0, 60.0):
        values = [shuffled_rr_exact_epsilon(eps0, n, delta) for n in range(2, 60, 5)]
        assert all(b <= a * (1 + 1e-10) for a, b in itertools.pairwise(values))
        zero = [shuffled_rr_exact_epsilon(eps0, int(n), delta, others_ones=0)
                for n in np.unique(np.logspace(0.4, 6, 10).astype(int))]
        assert all(b <= a * (1 + 1e-10) for a, b in itertools.pairwise(zero))


def test_rr_floor_stays_below_the_stronger_clone_bound_at_large_n() -> None:
    """At n = 1e6 and 1e7 the floor stays below the certified upper bound of the stronger
    clone reduction (Feldman, McMillan & Talwar 2023), over levels and targets."""
    for eps0, n, delta in itertools.product((0.01, 1.0, 8.0), (10**6, 10**7), (1e-150, 1e-6)):
        floor = shuffled_rr_exact_epsilon(eps0, n, delta)
        upper = float(clone_numerical_epsilon(eps0, n, delta, "stronger"))
        assert 0.0 < floor <= upper, (eps0, n, delta, floor, upper)


# --- tightness at large n: the all-zero composition, exactly ----------------------------------


def _mp_all_zero_epsilon(eps0: float, n: int, deltas: list[float]) -> list[mp.mpf]:
    """40-digit epsilon of shuffled RR, the others all holding 0, at large n: the others' count is
    Bin(n - 1, f), and (the law being log-concave) the events are tails: {x >= t} for P against
    Q, {x <= t} for Q against P. The binomial is summed from its mode outward while above 1e-200
    of it, in 40 digits; the tails are running sums of it."""
    with mp.workdps(40):
        level = mp.mpf(eps0)
        f = 1 / (1 + mp.e ** level)
        k = 1 / (1 + mp.e ** -level)
        size = n - 1
        mode = int(mp.floor((size + 1) * f))
        top = mp.exp(mp.loggamma(size + 1) - mp.loggamma(mode + 1) - mp.loggamma(size - mode + 1)
                     + mode * mp.log(f) + (size - mode) * mp.log(k))
        cut, odds = top * mp.mpf(10) ** -200, f / k
        up, x, w = [], mode, top
        while x <= size and w > cut:
            up.append(w)
            w, x = w * (size - x) / (x + 1) * odds, x + 1
        down, x, w = [], mode, top
        while x > 0 and w > cut:
            w, x = w * x / (size - x + 1) / odds, x - 1
            down.append(w)
        low = mode - len(down)
        pmf = down[::-1] + up
        upper = [mp.mpf(0)] * (len(pmf) + 1)  # upper[i] = P(X >= low + i)
        for i in range(len(pmf) - 1, -1, -1):
            upper[i] = upper[i + 1] + pmf[i]
        lower = [mp.mpf(0)] * (len(pmf) + 1)  # lower[i] = P(X <= low + i - 1)
        for i, value in enumerate(pmf):
            lower[i + 1] = lower[i] + value

        def tail_up(j: int) -> mp.mpf:
            return upper[min(max(j - low, 0), len(pmf))]

        def tail_down(j: int) -> mp.mpf:
            return lower[min(max(j - low + 1, 0), len(pmf))]

        def delta_at(eps: mp.mpf) -> mp.mpf:
            scale = mp.e ** eps
            if scale * f >= k:
                return mp.mpf(0)
            ratio = (scale * k - f) / (k - scale * f)  # P(x) > e^eps Q(x) iff o(x-1)/o(x) > ratio
            start = int(mp.floor(ratio * f * n / (k + ratio * f))) + 1
            end = int(mp.floor(f * n / (ratio * k + f)))
            best = mp.mpf(0)
            for c in (start - 1, start, start + 1):
                best = max(best, k * tail_up(c - 1) + f * tail_up(c)
                           - scale * (f * tail_up(c - 1) + k * tail_up(c)))
            for c in (end - 1, end, end + 1):
                best = max(best, f * tail_down(c - 1) + k * tail_down(c)
                           - scale * (k * tail_down(c - 1) + f * tail_down(c)))
            return best

        results = []
        for delta in deltas:
            low_e, high_e = mp.mpf(0), level
            for _ in range(120):
                middle = (low_e + high_e) / 2
                low_e, high_e = (low_e, middle) if delta_at(middle) <= delta else (middle, high_e)
            results.append(high_e)
        return results


def test_rr_floor_is_tight_at_small_levels_and_large_n() -> None:
    """Issue 32, item 5: at eps0 = 0.01 and n = 1e7 the floor sat up to 4.5e-5 (relative) below
    the exact value; with errors proportionate to each entry it is within 1e-6 (relative) of the
    40-digit value at every delta from 1e-150 to 1e-6 (measured: 5e-8 at 1e-6, 5e-9 at 1e-150),
    and never above it."""
    deltas = [1e-6, 1e-12, 1e-40, 1e-150]
    exact = _mp_all_zero_epsilon(0.01, 10**7, deltas)
    for delta, value in zip(deltas, exact, strict=True):
        ours = shuffled_rr_exact_epsilon(0.01, 10**7, delta, others_ones=0)
        assert ours <= value, (delta, ours, value)
        assert ours >= float(value) * (1 - 1e-6), (delta, ours, value)
        assert shuffled_rr_exact_epsilon(0.01, 10**7, delta) >= ours  # the worst case tries it


# --- shuffled personalized randomized response ------------------------------------------------


def _personalized_cases() -> list[tuple[list[float], int, list[int]]]:
    """Levels drawn on a log grid over the whole range (1e-300 to 100), with a few hand-picked
    extremes; the target and the others' bits vary."""
    generator = np.random.default_rng(32)
    cases = [([30.0] + [1.0] * 9, 0, [0] * 10), ([100.0, 1e-300, 50.0], 0, [0, 1, 1]),
             ([1e-300] * 4, 2, [1, 0, 1, 0]), ([70.0, 70.0, 0.5, 3.0], 1, [1, 1, 0, 1])]
    for size in (2, 4, 8, 14):
        for _ in range(3):
            levels = [float(x) for x in 10 ** generator.uniform(-300, 2, size)]
            levels = [x if generator.random() < 0.5 else float(10 ** generator.uniform(-3, 2))
                      for x in levels]
            target = int(generator.integers(size))
            bits = [int(b) for b in generator.integers(0, 2, size)]
            cases.append((levels, target, bits))
    return cases


@pytest.mark.parametrize(("levels", "target", "bits"), _personalized_cases())
def test_personalized_floor_agrees_with_the_40_digit_convolution(
    levels: list[float], target: int, bits: list[int]
) -> None:
    """The personalized floors never exceed the 40-digit delta and epsilon of their pair of
    datasets and stay within 1e-10 of them (delta: of its error scale; epsilon: relative)."""
    with mp.workdps(DIGITS):
        others = _mp_others_law(levels[:target] + levels[target + 1:],
                                bits[:target] + bits[target + 1:])
        level = levels[target]
        for share in (0.0, 0.2, 0.6, 0.95, 0.9999):
            eps = share * level
            exact, scale = _mp_delta(eps, level, others)
            ours = shuffled_personalized_rr_delta(eps, levels, target, others_bits=bits)
            assert ours <= exact * (1 + 1e-15), (eps, ours, exact)
            assert ours >= exact - 1e-10 * scale - 1e-200, (eps, ours, exact)
        for delta in (1e-150, 1e-40, 1e-9, 1e-3, 0.3):
            exact_eps = _mp_epsilon(delta, level, others)
            ours = shuffled_personalized_rr_epsilon(levels, delta, target=target, others_bits=bits)
            assert ours <= exact_eps, (delta, ours, exact_eps)
            assert ours >= exact_eps * (1 - 1e-10) - 1e-300, (delta, ours, exact_eps)


def test_personalized_epsilon_is_monotone_in_delta_and_in_a_level() -> None:
    """Exactly monotone in delta; non-decreasing in the target's level and in another user's
    level (a report at a lower level is a post-processing of one at a higher level), up to the
    tolerance."""
    base = [2.0, 0.7, 1.5, 0.3, 4.0, 1.0]
    deltas = np.logspace(-150, np.log10(0.5), 50)
    values = [shuffled_personalized_rr_epsilon(base, float(d)) for d in deltas]
    assert all(b <= a for a, b in itertools.pairwise(values))
    for position in (4, 1):
        grid = np.logspace(-300, 2, 30)
        eps = []
        for level in grid:
            levels = list(base)
            levels[position] = float(level)
            eps.append(shuffled_personalized_rr_epsilon(levels, 1e-9, target=4))
        assert all(b >= a - 1e-10 * max(a, 1e-300) for a, b in itertools.pairwise(eps)), position


def test_personalized_floor_large_population_below_the_upper_bound() -> None:
    """2,000 and 20,000 users: the floor is positive and below the certified bound for the same
    levels (clone reduction, stronger for randomized response)."""
    from shuffle_lib.accounting.personalized import personalized_numerical_epsilon

    for size in (2_000, 20_000):
        levels = np.linspace(0.5, 1.0, size)
        for delta in (1e-150, 1e-6):
            floor = shuffled_personalized_rr_epsilon(levels, delta)
            upper = personalized_numerical_epsilon(levels, 0.0, delta)
            assert 0.0 < floor <= upper, (size, delta, floor, upper)


# --- refusals at the limits -------------------------------------------------------------------


@pytest.mark.parametrize("beyond", [100.0 + 1e-9, 101.0, 1e3, 1e300])
def test_levels_past_the_cap_are_refused(beyond: float) -> None:
    with pytest.raises(ValueError, match="eps0 must be at most 100"):
        shuffled_rr_exact_epsilon(beyond, 10, 1e-6)
    with pytest.raises(ValueError, match="eps0 must be at most 100"):
        shuffled_rr_exact_delta(1.0, beyond, 10)
    with pytest.raises(ValueError, match="eps_i must be at most 100"):
        shuffled_personalized_rr_epsilon([beyond, 1.0, 1.0], 1e-6)
    with pytest.raises(ValueError, match="eps_i must be at most 100"):
        shuffled_personalized_rr_delta(1.0, [1.0, beyond], target=0)


def test_targets_below_the_smallest_delta_are_refused() -> None:
    with pytest.raises(ValueError, match="delta must be at least 1e-150"):
        shuffled_rr_exact_epsilon(1.0, 10, 1e-151)
    with pytest.raises(ValueError, match="delta must be at least 1e-150"):
        shuffled_personalized_rr_epsilon([1.0, 2.0], 1e-151)
    with pytest.raises(ValueError, match="n must be at most"):
        shuffled_rr_exact_epsilon(1.0, 10**10 + 1, 1e-6)


# --- the shared pieces ------------------------------------------------------------------------


def test_poisson_binomial_relative_error_holds_for_every_entry() -> None:
    """``poisson_binomial_pmf(..., with_rtol=True)``: every entry within its relative bound (plus
    the absolute allowance) of a 40-digit convolution, tiny probabilities included."""
    generator = np.random.default_rng(7)
    for size in (3, 20, 60):
        probs = np.concatenate([1 / (1 + np.exp(10 ** generator.uniform(-3, 2, size))), [0.5]])
        offset, pmf, dropped, rtol = poisson_binomial_pmf(probs, tail=1e-240, with_rtol=True)
        assert rtol < 1e-10
        with mp.workdps(DIGITS):
            law = [mp.mpf(1)]
            for p in probs:
                p_mp = mp.mpf(float(p))
                law = [(law[j] * (1 - p_mp) if j < len(law) else 0)
                       + (law[j - 1] * p_mp if j else 0) for j in range(len(law) + 1)]
            for j, value in enumerate(pmf):
                exact = law[offset + j]
                assert abs(value - exact) <= rtol * value + dropped, (size, j, value, exact)
