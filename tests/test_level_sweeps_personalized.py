"""Every level, not a few hostile values (issue 32): the personalized accountants swept over log
grids from 1e-300 to 1e300 (with the float boundaries 700, 709, 709.8, 710, 745, 746) in each
level argument, checked for monotonicity, against an independent 40-digit route of the clone
reduction written here from its definition (mpmath only: no SciPy, nothing from shuffle_lib), and
for zeros, NaNs and refusals that do not name their argument. Small populations keep the 40-digit
enumeration cheap."""

from __future__ import annotations

import mpmath as mp
import numpy as np
import pytest

from shuffle_lib.accounting.personalized import (
    clone_reduction_epsilon,
    gspa_epsilon,
    gspa_mu,
    gspa_normal_approximation_error,
    laplace_clone_probabilities,
    level_tagged_rr_epsilon,
    liu23_epsilon,
    personalized_clone_delta,
    personalized_laplace_epsilon,
    personalized_numerical_epsilon,
    sample_personalized_reduction,
    shuffled_personalized_rr_epsilon,
)

DIGITS = 40
#: Levels from 1e-300 to 1e300, with the places where e^level, e^-level or expit change regime.
LEVELS = sorted({*np.logspace(-300, 300, 13).tolist(), 1e-3, 0.1, 1.0, 3.0, 10.0, 30.0, 100.0,
                 700.0, 709.0, 709.8, 710.0, 745.0, 746.0, 1e3, 1e5})
#: Certified deltas, 1e-150 (the documented limit) up to 0.5.
DELTAS = [1e-150, 1e-100, 1e-40, 1e-12, 1e-6, 1e-3, 0.1, 0.5]
#: Tightness asked of a certified epsilon against the 40-digit value: relative and absolute.
RTOL, ATOL = 1e-7, 1e-9


def _mp_keep_flip(level: float) -> tuple[mp.mpf, mp.mpf]:
    """k = e^L / (1 + e^L) and 1 - k, each computed on its own (1 - k is not 1 minus k)."""
    big = mp.exp(mp.mpf(level))
    return 1 / (1 + 1 / big), 1 / (1 + big)


def _mp_clone_delta(eps: float, level: float, probs: list[float], exposed: float = 0.0) -> mp.mpf:
    """The clone reduction from its definition, in 40 digits: C ~ Poisson-binomial(probs), and
    given C = c the hockey-stick divergence of B_c + Bern(k) against B_c + Bern(1 - k),
    B_c ~ Bin(c, 1/2), summed outcome by outcome; the exposed part counts in full."""
    with mp.workdps(DIGITS):
        keep, flip = _mp_keep_flip(level)
        law = [mp.mpf(1)]
        for r in probs:
            r = mp.mpf(r)
            step = [mp.mpf(0)] * (len(law) + 1)
            for c, w in enumerate(law):
                step[c] += w * (1 - r)
                step[c + 1] += w * r
            law = step
        scale = mp.exp(mp.mpf(eps))
        total = mp.mpf(0)
        for c, w in enumerate(law):
            b = [mp.binomial(c, x) / mp.mpf(2) ** c for x in range(c + 1)]
            for x in range(c + 2):
                below = b[x - 1] if x >= 1 else 0
                here = b[x] if x <= c else 0
                gap = keep * below + flip * here - scale * (flip * below + keep * here)
                if gap > 0:
                    total += w * gap
        exposed_mp = mp.mpf(exposed)
        return exposed_mp + (1 - exposed_mp) * total


def _assert_certified(ours: float, delta_at, delta: float, what: str,
                      level: float = np.inf) -> None:
    """``ours`` is safe (the 40-digit delta there is at most the target, or ``ours`` is at least
    the target's own local level, which holds exactly) and tight (a little below it, the 40-digit
    delta exceeds the target), never NaN."""
    assert np.isfinite(ours) and ours >= 0, what
    if ours < level:  # at the level itself delta is exactly 0, 40 digits see rounding noise
        assert delta_at(ours) <= mp.mpf(delta) * (1 + mp.mpf(10) ** -30), f"unsafe: {what} {ours}"
    below = ours * (1 - RTOL) - ATOL
    if below > 0:
        assert delta_at(below) > delta, f"loose: {what} {ours}"


def _assert_monotone(values: list[float], increasing: bool, what: str) -> None:
    arr = np.asarray(values)
    steps = np.diff(arr) if increasing else -np.diff(arr)
    slack = 1e-9 * np.maximum(np.abs(arr[1:]), np.abs(arr[:-1])) + 1e-12
    assert (steps >= -slack).all(), f"{what} not monotone: {values}"


OTHERS = [0.3, 0.05, 0.9]  # clone probabilities of three other people


def test_clone_reduction_epsilon_over_the_target_level() -> None:
    for delta in (1e-6, 0.05):
        values = []
        for level in LEVELS:
            ours = clone_reduction_epsilon(level, OTHERS, delta)
            _assert_certified(ours, lambda e, lv=level: _mp_clone_delta(e, lv, OTHERS), delta,
                              f"target_eps0 = {level}, delta = {delta}", level)
            values.append(ours)
        _assert_monotone(values, True, f"clone_reduction_epsilon in target_eps0 (delta {delta})")


def test_the_calls_of_issue_32_are_safe() -> None:
    # one user at 710 among others: before, 0.0, 0.0 and 0.99999 (the user dropped)
    one = personalized_numerical_epsilon([710.0, 1.0], 0.0, 1e-6)
    assert 710.0 - 2e-6 <= one <= 710.0
    _assert_certified(one, lambda e: _mp_clone_delta(e, 710.0, []), 1e-6, "[710, 1]", 710.0)
    ninety_nine = clone_reduction_epsilon(710.0, np.full(99, 0.3), 1e-6)
    assert 0 < ninety_nine < 3  # E[2^-C] = 0.85^99 < delta: the blanket hides even a level of 710
    assert ninety_nine == pytest.approx(clone_reduction_epsilon(30.0, np.full(99, 0.3), 1e-6),
                                        rel=1e-6)
    laplace = personalized_laplace_epsilon([710.0] + [1.0] * 9, 1e-6)
    assert 710.0 - 2e-6 <= laplace <= 710.0


@pytest.mark.parametrize("level", [0.5, 5.0, 710.0, 1e300])
def test_clone_reduction_epsilon_over_the_clone_probabilities(level: float) -> None:
    grid = [0.0, 1e-300, 1e-100, 1e-30, 1e-10, 1e-3, 0.1, 0.5, 0.9, 1 - 1e-10, 1.0]
    values = []
    for r in grid:
        probs = [r, r, 0.2]
        ours = clone_reduction_epsilon(level, probs, 1e-4)
        _assert_certified(ours, lambda e, p=probs: _mp_clone_delta(e, level, p), 1e-4,
                          f"clone_probabilities {probs} at {level}", level)
        values.append(ours)
    _assert_monotone(values, False, f"clone_reduction_epsilon in the clone probabilities ({level})")


@pytest.mark.parametrize("level", [0.5, 709.8, 1e5])
def test_certified_accountants_over_delta(level: float) -> None:
    values, per_user, laplace = [], [], []
    for delta in DELTAS:
        ours = clone_reduction_epsilon(level, OTHERS, delta)
        _assert_certified(ours, lambda e: _mp_clone_delta(e, level, OTHERS), delta,
                          f"delta = {delta} at {level}", level)
        values.append(ours)
        per_user.append(personalized_numerical_epsilon([level, 1.0, 2.0], 0.0, delta))
        laplace.append(personalized_laplace_epsilon([level, 0.2, 0.3], delta))
    for what, series in (("clone_reduction_epsilon", values),
                         ("personalized_numerical_epsilon", per_user),
                         ("personalized_laplace_epsilon", laplace)):
        _assert_monotone(series, False, f"{what} in delta at {level}")
        assert all(np.isfinite(series)), what
    for bad in (1e-151, 0.0, 1.0, np.nan):
        with pytest.raises(ValueError, match="delta"):
            clone_reduction_epsilon(level, OTHERS, bad)
        with pytest.raises(ValueError, match="delta"):
            personalized_numerical_epsilon([level, 1.0], 0.0, bad)
        with pytest.raises(ValueError, match="delta"):
            personalized_laplace_epsilon([level, 1.0], bad)


def _rr_clone(level: float) -> float:
    """2 / (1 + e^level) in 40 digits, as a float rounded to nearest."""
    with mp.workdps(DIGITS):
        return float(2 * _mp_keep_flip(level)[1])


def test_personalized_numerical_epsilon_over_each_level() -> None:
    others = [0.5, 2.0]
    values, seconds = [], []
    for level in LEVELS:
        eps_i = [level, *others]
        ours = personalized_numerical_epsilon(eps_i, 0.0, 1e-6)
        # a bound for every target: each target's own reduction is certified at ours
        for t, lv in enumerate(eps_i):
            probs = [_rr_clone(x) for j, x in enumerate(eps_i) if j != t]
            assert ours >= lv or _mp_clone_delta(ours, lv, probs) <= 1e-6 * (1 + 1e-30), t
        # and the exact value for an explicit target
        mine = personalized_numerical_epsilon(eps_i, 0.0, 1e-6, target=0)
        probs = [_rr_clone(x) for x in others]
        _assert_certified(mine, lambda e, lv=level, p=probs: _mp_clone_delta(e, lv, p), 1e-6,
                          f"personalized_numerical_epsilon target level {level}", level)
        assert mine <= ours * (1 + 1e-9) + 1e-12
        values.append(ours)
        seconds.append(personalized_numerical_epsilon([1.0, level, 0.5], 0.0, 1e-6))
        try:
            floor = shuffled_personalized_rr_epsilon(eps_i, 1e-6)
        except ValueError:
            continue  # outside the floor's documented range
        assert ours >= floor - 1e-12, (eps_i, ours, floor)
    _assert_monotone(values, True, "personalized_numerical_epsilon in the first level")
    _assert_monotone(seconds, True, "personalized_numerical_epsilon in the second level")


@pytest.mark.parametrize("delta_i", [1e-300, 1e-100, 1e-20, 1e-8, 5e-7])
def test_personalized_numerical_epsilon_over_delta_i(delta_i: float) -> None:
    for level in (1.0, 710.0, 1e300):
        ours = personalized_numerical_epsilon([level, 1.0, 2.0], delta_i, 1e-6, target=0)
        probs = [2 * (1 - delta_i) * _rr_clone(x) / 2 for x in (1.0, 2.0)]
        _assert_certified(ours, lambda e, lv=level, p=probs: _mp_clone_delta(e, lv, p, delta_i),
                          1e-6, f"delta_i = {delta_i} at {level}", level)
    with pytest.raises(ValueError, match="delta_i"):
        personalized_numerical_epsilon([1.0, 1.0], 1e-6, 1e-6)


def test_level_tagged_rr_upper_bound_over_each_level() -> None:
    singles, groups = [], []
    for level in LEVELS:
        top = 2 * level  # two people at two levels: each alone at their level
        for delta in (1e-6, 0.3):
            ours = level_tagged_rr_epsilon([level, top], delta)

            def single(e: float, lv: float = top) -> mp.mpf:
                with mp.workdps(DIGITS):
                    keep, flip = _mp_keep_flip(lv)
                    return max(mp.mpf(0), keep - mp.exp(mp.mpf(e)) * flip)

            _assert_certified(ours, single, delta, f"level-tagged single user at {top}", top)
            floor = level_tagged_rr_epsilon([level, top], delta, floor=True)
            assert floor <= ours
            assert floor == 0.0 or single(floor) >= delta * (1 - 1e-30), (top, floor)
            if delta == 1e-6:
                singles.append(ours)
        grouped = level_tagged_rr_epsilon([level], 1e-6, counts=[3])
        probs = [_rr_clone(level)] * 2
        _assert_certified(grouped, lambda e, lv=level, p=probs: _mp_clone_delta(e, lv, p), 1e-6,
                          f"level-tagged group of 3 at {level}", level)
        groups.append(grouped)
    _assert_monotone(singles, True, "level_tagged_rr_epsilon (one user) in the level")
    _assert_monotone(groups, True, "level_tagged_rr_epsilon (a group) in the level")


def _mp_laplace_clone(target: float, other: float) -> mp.mpf:
    with mp.workdps(DIGITS):
        if other > target:
            return mp.mpf(0)
        return mp.mpf(other) / mp.mpf(target) * mp.exp(-mp.mpf(other))


def test_laplace_clone_probabilities_over_both_levels() -> None:
    grid = [x for x in LEVELS if x > 0]
    for target in grid:
        ours = laplace_clone_probabilities(target, grid)
        assert np.all((ours >= 0) & (ours <= 1)) and not np.isnan(ours).any()
        for other, value in zip(grid, ours, strict=True):
            exact = _mp_laplace_clone(target, other)
            assert abs(mp.mpf(float(value)) - exact) <= 4e-16 * exact + mp.mpf(10) ** -307
    with pytest.raises(ValueError, match="target_eps"):
        laplace_clone_probabilities(0.0, [1.0])
    with pytest.raises(ValueError, match="eps_i"):
        laplace_clone_probabilities(1.0, [0.0])


def test_personalized_laplace_epsilon_over_each_level() -> None:
    others = [0.2, 0.3, 0.5]
    values = []
    for level in LEVELS:
        eps_i = [level, *others]
        ours = personalized_laplace_epsilon(eps_i, 1e-6)
        slack = []
        for t, lv in enumerate(eps_i):
            probs = [float(_mp_laplace_clone(lv, x)) * (1 - 1e-15)
                     for j, x in enumerate(eps_i) if j != t]
            assert ours >= lv or _mp_clone_delta(ours, lv, probs) <= 1e-6 * (1 + 1e-30), t
            below = ours * (1 - RTOL) - ATOL
            slack.append(below <= 0 or _mp_clone_delta(below, lv, probs) > 1e-6)
        assert any(slack), f"personalized_laplace_epsilon loose at {eps_i}: {ours}"
        values.append(ours)
    top = [v for level, v in zip(LEVELS, values, strict=True) if level >= max(others)]
    _assert_monotone(top, True, "personalized_laplace_epsilon in the largest level")


def test_personalized_laplace_evaluates_each_distinct_level_at_most_once(monkeypatch) -> None:
    import shuffle_lib.accounting.personalized as module

    calls: list[float] = []
    real = module.clone_reduction_epsilon

    def counting(target_eps0, *args, **kwargs):
        calls.append(target_eps0)
        return real(target_eps0, *args, **kwargs)

    monkeypatch.setattr(module, "clone_reduction_epsilon", counting)
    levels = np.repeat([0.1, 0.5, 1.0, 4.0], [300, 200, 100, 1])
    value = module.personalized_laplace_epsilon(levels, 1e-6)
    assert len(calls) == len(set(calls)) <= 4 and calls == sorted(calls, reverse=True)
    distinct, people = [0.1, 0.5, 1.0, 4.0], np.array([300, 200, 100, 1])
    assert value == max(real(t, laplace_clone_probabilities(t, distinct), 1e-6,
                                          counts=people - np.equal(distinct, t))
                        for t in distinct)


def test_personalized_clone_delta_over_eps_and_the_target_level() -> None:
    eps_grid = [0.0, *np.logspace(-300, 300, 13).tolist(), 0.5, 2.0, 700.0, 709.9, 800.0]
    eps_grid.sort()
    for level in (1e-300, 1e-3, 0.5, 5.0, 709.8, 710.0, 746.0, 1e5, 1e300):
        probs = [_rr_clone(x) for x in (1.0, 2.0)]
        values = []
        for eps in eps_grid:
            ours = personalized_clone_delta(eps, [level, 1.0, 2.0], 0.0, target=0)
            exact = _mp_clone_delta(eps, level, probs)
            # (at eps = level the exact 0 is seen by 40 digits as rounding noise of 1e-41)
            assert exact - mp.mpf(10) ** -35 <= ours <= exact + 1e-9, (level, eps, ours)
            values.append(ours)
        _assert_monotone(values, False, f"personalized_clone_delta in eps at {level}")


def _mp_gspa_mu(levels: list[float]) -> mp.mpf:
    with mp.workdps(DIGITS):
        weights = sorted(1 / (1 + mp.exp(mp.mpf(x))) for x in levels)
        return mp.sqrt(2 / sum(weights[:-1]))  # all but the largest, without cancellation


def test_gspa_mu_and_epsilon_over_each_level() -> None:
    mus, epsilons = [], []
    for level in LEVELS:
        levels = [level, level, 1.0]
        try:
            mu = gspa_mu(levels)
        except ValueError as error:
            assert "eps" in str(error)
            continue
        assert mu == pytest.approx(float(_mp_gspa_mu(levels)), rel=1e-12)
        mus.append(mu)
        try:
            epsilons.append(gspa_epsilon(levels, 0.0, 1e-6))
        except ValueError as error:
            assert "eps" in str(error) and "mu" in str(error)
    _assert_monotone(mus, True, "gspa_mu")
    _assert_monotone(epsilons, True, "gspa_epsilon")
    assert all(np.isfinite(mus)) and all(np.isfinite(epsilons))
    with pytest.raises(ValueError, match="eps"):
        gspa_mu([1e300, 1e300])


def _mp_liu23(levels: list[float], counts: list[int], delta: float) -> mp.mpf:
    """Liu et al.'s closed form from its quadratic definition, in 40 digits, for ``counts[i]``
    people at ``levels[i]`` (the target is one person at the largest level)."""
    with mp.workdps(DIGITS):
        eps = [mp.mpf(x) for x in levels]
        n = sum(counts)

        def g(x: mp.mpf) -> mp.mpf:
            return -mp.expm1(-x) / x if x > 0 else mp.mpf(1)

        pairs = list(zip(eps, counts, strict=True))
        echo = [sum(m * g(e_j) / g(e_i) * mp.exp(-max(e_i, e_j)) for e_j, m in pairs) / n
                for e_i in eps]
        top = max(range(len(eps)), key=lambda i: eps[i])
        total = sum(m * p for m, p in zip(counts, echo, strict=True)) - echo[top]
        log_term = mp.log(4 / mp.mpf(delta))
        if total < 16 * log_term:
            return eps[top]
        return mp.log1p(mp.tanh(eps[top] / 2) * (8 * mp.sqrt(log_term / total) + 8 / total))


def test_liu23_over_each_level() -> None:
    values = []
    for level in LEVELS:
        ours = liu23_epsilon([level] + [0.01] * 2000, 1e-6)  # a blanket large enough to amplify
        assert np.isfinite(ours) and ours > 0, (level, ours)
        values.append(ours)
        small = [level, 1e-3, 0.2]
        people = [1, 150, 20]
        ours = liu23_epsilon(np.repeat(small, people), 0.5)
        assert ours == pytest.approx(float(_mp_liu23(small, people, 0.5)), rel=1e-12)
    above = [v for level, v in zip(LEVELS, values, strict=True) if level >= 0.01]
    _assert_monotone(above, True, "liu23_epsilon in the largest level")
    in_delta = [liu23_epsilon([3.0] + [0.01] * 2000, d) for d in [*DELTAS, 0.9]]
    _assert_monotone(in_delta, False, "liu23_epsilon in delta")


def test_normal_approximation_error_over_eps0_and_delta0() -> None:
    for eps0 in LEVELS:
        for delta0 in (0.0, 1e-300, 1e-10, 0.5):
            try:
                point, tv = gspa_normal_approximation_error(eps0, 200, delta0)
            except ValueError as error:
                assert "eps0" in str(error) and "delta0" in str(error)
                continue
            assert 0 <= point <= tv <= 1 and np.isfinite(tv), (eps0, delta0)


def test_sampled_reduction_over_each_level() -> None:
    for level in LEVELS:
        for delta_i in (0.0, 1e-300, 0.5):
            first, second = sample_personalized_reduction([level, 1.0, level], delta_i, 0,
                                                          size=200, rng=1)
            for sample in (first, second):
                assert sample.shape == (200, 2) and (sample >= 0).all()
                assert (sample.sum(axis=1) <= 3).all()
            if level >= 40 and delta_i == 0.0:  # the target's own symbol is never flipped
                assert (first[:, 0] >= 1).all() and (second[:, 1] >= 1).all()


@pytest.mark.parametrize(
    ("call", "name"),
    [
        (lambda: personalized_numerical_epsilon([np.inf, 1.0], 0.0, 1e-6), "eps_i"),
        (lambda: clone_reduction_epsilon(np.inf, [0.5], 1e-6), "target_eps0"),
        (lambda: clone_reduction_epsilon(1.0, [1.0 + 1e-15, 0.5], 1e-6), "clone_probabilities"),
        (lambda: personalized_laplace_epsilon([np.inf, 1.0], 1e-6), "eps_i"),
        (lambda: level_tagged_rr_epsilon([np.nan, 1.0], 1e-6), "eps_i"),
        (lambda: personalized_clone_delta(np.inf, [1.0, 1.0], 0.0, 0), "eps"),
        (lambda: gspa_mu([1.0, -1e-300]), "eps"),
        (lambda: liu23_epsilon([1.0, np.inf], 1e-6), "eps_i"),
    ],
)
def test_refusals_name_the_argument(call, name: str) -> None:
    with pytest.raises(ValueError, match=name):
        call()


@pytest.mark.parametrize("level", [1e-300, 1e-3, 1.0, 10.0, 709.8, 746.0, 1e300])
def test_certified_accountants_over_the_population(level: float) -> None:
    sizes = [2, 3, 10, 100, 10**4, 10**6]
    values, grouped = [], []
    for n in sizes:
        values.append(personalized_numerical_epsilon([level], 0.0, 1e-9, counts=[n]))
        grouped.append(level_tagged_rr_epsilon([level, 2.0], 1e-9, counts=[n, 1]))
        assert np.isfinite(values[-1]) and 0 <= values[-1] <= level
    _assert_monotone(values, False, f"personalized_numerical_epsilon in n at {level}")
    _assert_monotone(grouped, False, f"level_tagged_rr_epsilon in n at {level}")
    # two people: the 40-digit value of the reduction
    _assert_certified(values[0], lambda e: _mp_clone_delta(e, level, [_rr_clone(level)]), 1e-9,
                      f"two people at {level}", level)
