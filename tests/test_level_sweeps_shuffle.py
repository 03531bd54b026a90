"""Every level of every bound in ``accounting.shuffle`` (issue 32, item 1): the local level eps0
swept over a log grid from 1e-300 to 1e300, not a few hostile values.

Above the cap EPS0_MAX of the numerical accountants the answer is a ``ValueError`` naming the
limit; the closed forms without a cap are evaluated in log space (or refuse where their value
itself overflows). Inside, every bound is finite, monotone where the quantity is (in eps0, n and
delta), never 0 where the exact value is positive, and never below the 40-digit routes of
``accounting.high_precision`` or a 60-digit evaluation of the closed form itself.
"""

from __future__ import annotations

import warnings

import mpmath as mp
import numpy as np
import pytest

from shuffle_lib.accounting.high_precision import clone_delta, clone_probability_mp
from shuffle_lib.accounting.shuffle import (
    EPS0_MAX,
    bbgn19_delta,
    bbgn19_epsilon,
    clone_numerical_epsilon,
    clone_probability,
    clone_reduction_delta,
    erlingsson19_epsilon,
    fmt21_closed_form_epsilon,
    fmt21_numerical_epsilon,
    fmt21_regime_approximation,
    fmt21_theorem_epsilon,
    local_epsilon_for_target,
    sample_clone_pair,
)

LEVELS = np.geomspace(1e-300, 1e300, 61)  # one level every ten decades
CAPPED = np.concatenate([LEVELS[LEVELS <= EPS0_MAX], [8.0, 50.0, EPS0_MAX]])  # up to the cap
ABOVE = np.concatenate([[np.nextafter(EPS0_MAX, np.inf), 100.5], LEVELS[LEVELS > EPS0_MAX]])
DELTAS = np.array([1e-150, 1e-12, 1e-2])
RANDOMIZERS = ("generic", ("krr", 2), ("krr", 50))


def _exact_delta(eps: float, eps0: float, n: int, variant: str, delta: float) -> mp.mpf:
    return clone_delta(eps, eps0, n, clone_probability_mp(eps0, variant), scale=delta)


@pytest.mark.parametrize("level", ABOVE)
def test_numerical_bounds_refuse_every_level_above_the_cap_naming_it(level: float) -> None:
    calls = (
        lambda: fmt21_numerical_epsilon(level, 1000, 1e-6),
        lambda: clone_numerical_epsilon(level, 1000, 1e-6, variant="stronger"),
        lambda: clone_numerical_epsilon(np.array([1.0, level]), 1000, 1e-6),  # one bad entry
        lambda: clone_reduction_delta(0.5, level, 1000, 0.5),
    )
    for call in calls:
        with pytest.raises(ValueError, match=r"eps0 must be at most 100"):
            call()
    with pytest.raises(ValueError, match=r"eps0_max must lie in \(0.0, 100.0\]"):
        local_epsilon_for_target(0.5, 1000, 1e-6, eps0_max=level)


@pytest.mark.parametrize("variant", ["fmt21", "stronger"])
def test_numerical_bounds_at_every_level_are_monotone_and_never_below_the_exact_value(
    variant: str,
) -> None:
    populations = (2, 10_000, 1_000_000)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # quiet: no overflow or invalid value on the way
        eps = np.stack([clone_numerical_epsilon(CAPPED[:, None], n, DELTAS[None, :], variant)
                        for n in populations])
    assert np.isfinite(eps).all()
    assert ((eps >= 0) & (eps <= CAPPED[None, :, None])).all()
    # monotone up to the root search's tolerance (1e-10 relative) where the exact values tie
    slack = 1e-9 * eps
    assert (np.diff(eps, axis=1) >= -slack[:, 1:, :]).all()  # less local noise, more loss
    assert (np.diff(eps, axis=2) <= slack[:, :, 1:]).all()  # a larger delta, a smaller epsilon
    assert (np.diff(eps, axis=0) <= slack[1:]).all()  # more users, more clones
    assert (eps[:, -1, :] > 0).all()  # at eps0 = 100 hardly anyone is a clone
    # against the 40-digit route: the exact delta at the returned epsilon meets the target, so
    # a returned 0 is one where the exact epsilon is 0 too (every third level and the top ones;
    # at n = 10^6 the route costs seconds per level near eps0 = 1, so there the ends only)
    for index, n in enumerate(populations):
        top = [CAPPED.size - 3, CAPPED.size - 2, CAPPED.size - 1]
        levels = [*range(0, CAPPED.size - 3, 3), *top] if n < 10**6 else [0, CAPPED.size - 5, *top]
        for i in levels:
            for j, delta in enumerate(DELTAS):
                exact = _exact_delta(eps[index, i, j], CAPPED[i], n, variant, delta)
                assert exact <= delta, (variant, n, CAPPED[i], delta, eps[index, i, j])


def test_clone_reduction_delta_at_every_level() -> None:
    n = 100
    fractions = np.array([0.0, 1e-3, 0.5, 0.999])
    values = np.array([[clone_reduction_delta(f * e0, e0, n, clone_probability(e0))
                        for f in fractions] for e0 in CAPPED])
    assert np.isfinite(values).all() and ((values >= 0) & (values <= 1)).all()
    assert (np.diff(values, axis=1) <= 0).all()  # non-increasing in eps
    assert (np.diff(values[:, 0]) >= 0).all()  # at eps = 0: non-decreasing in eps0
    for e0 in CAPPED[::4]:  # more people, more clones: non-increasing in n at a fixed q, up to
        q = clone_probability(e0)  # the bound's slack: 1e-9 relative plus the documented 1e-120
        by_n = np.array([clone_reduction_delta(e0 / 2, e0, m, q) for m in (2, 100, 10**4)])
        assert (np.diff(by_n) <= 1e-9 * by_n[1:] + 1e-120).all(), (e0, by_n)
    for i, e0 in enumerate(CAPPED):
        for k, f in enumerate(fractions):
            exact = _exact_delta(f * e0, e0, n, "fmt21", max(values[i, k], 1e-300))
            # float q = e^-eps0 may differ from the exact one by an ulp: the bound lowers it
            assert values[i, k] >= exact, (e0, f, values[i, k], exact)
            assert values[i, k] > 0 or exact == 0


def _closed_form_mp(eps0: float, n: int, delta: float, theorem: bool) -> mp.mpf:
    with mp.workdps(60):
        e0, n_mp, d = mp.mpf(eps0), mp.mpf(n), mp.mpf(delta)
        shrink, grow = mp.tanh(e0 / 2), mp.exp(e0)
        root = mp.sqrt(grow * mp.log(4 / d) / n_mp)
        bracket = 8 * root + 8 * grow / n_mp if theorem else 16 * root
        return mp.log1p(shrink * bracket)


@pytest.mark.parametrize("theorem", [False, True])
def test_closed_forms_at_every_level_are_right_or_refuse(theorem: bool) -> None:
    function = fmt21_theorem_epsilon if theorem else fmt21_closed_form_epsilon
    populations = (10_000, 10**8, 4 * 10**18)
    values = np.full((len(populations), LEVELS.size, DELTAS.size), np.nan)
    for a, n in enumerate(populations):
        for j, delta in enumerate(DELTAS):
            limit = np.log(n / (16 * np.log(2 / delta)))
            for i, e0 in enumerate(LEVELS):
                if e0 > limit:
                    with pytest.raises(ValueError, match=r"eps0 <= ln\(n / \(16 ln\(2/delta\)\)\)"):
                        function(e0, n, delta)
                    continue
                value = function(e0, n, delta)
                exact = _closed_form_mp(e0, n, delta, theorem)
                assert exact <= value <= exact * (1 + 1e-13) + 1e-320, (n, delta, e0)
                values[a, i, j] = value
    valid = np.isfinite(values)
    assert valid.sum() > 150 and (values[valid] > 0).all()
    with np.errstate(invalid="ignore"):
        assert not (np.diff(values, axis=1) < 0).any()  # non-decreasing in eps0
        assert not (np.diff(values, axis=2) > 0).any()  # non-increasing in delta
        assert not (np.diff(values, axis=0) > 0).any()  # non-increasing in n
    # the theorem bounds the exact divergence of the clone pair (q = e^-eps0): 40-digit check
    for i in range(0, LEVELS.size, 3):
        for j, delta in enumerate(DELTAS):
            if valid[0, i, j]:
                exact = _exact_delta(values[0, i, j], LEVELS[i], 10_000, "fmt21", delta)
                assert exact <= delta, (LEVELS[i], delta)


def test_regime_approximations_at_every_level() -> None:
    n, delta = 10**6, 1e-6
    root = np.sqrt(np.log(4 / delta) / n)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        small = np.array([fmt21_regime_approximation(e0, n, delta, "small") for e0 in LEVELS])
        log_form = np.array([fmt21_regime_approximation(e0, n, delta, "large-log")
                             for e0 in LEVELS])
    for values in (small, log_form):
        assert np.isfinite(values).all() and (values > 0).all() and (np.diff(values) >= 0).all()
    with mp.workdps(50):
        for e0, value in zip(LEVELS, log_form, strict=True):  # right in log space, even at 1e300
            exact = mp.log1p(8 * mp.exp(mp.mpf(e0) / 2) * mp.mpf(root))
            assert abs(value - exact) <= 1e-14 * exact
    for e0 in LEVELS:
        if e0 / 2 + np.log(8 * root) < 709:
            assert np.isfinite(fmt21_regime_approximation(e0, n, delta, "large"))
        else:
            with pytest.raises(ValueError, match="eps0 is so large"):
                fmt21_regime_approximation(e0, n, delta, "large")


def test_erlingsson_bound_at_every_level() -> None:
    n, delta = 10_000, 1e-6
    inside = LEVELS[LEVELS <= 0.5]
    values = np.array([erlingsson19_epsilon(e0, n, delta) for e0 in inside])
    assert (values > 0).all() and (values <= inside).all() and (np.diff(values) >= 0).all()
    with mp.workdps(50):
        for e0, value in zip(inside, values, strict=True):
            exact = 12 * mp.mpf(e0) * mp.sqrt(mp.log(1 / mp.mpf(delta)) / n)
            assert exact <= value <= exact * (1 + 1e-13)
    for e0 in LEVELS[LEVELS > 0.5]:
        with pytest.raises(ValueError, match=r"eps0 <= 1/2"):
            erlingsson19_epsilon(e0, n, delta)


def _blanket_mp(eps: float, eps0: float, n: int, randomizer: str | tuple) -> mp.mpf:
    """The blanket bound from its formula (Balle, Bell, Gascón & Nissim 2019) in 60 digits."""
    with mp.workdps(60):
        e, e0 = mp.mpf(eps), mp.mpf(eps0)
        if randomizer == "generic":
            gamma, spread = mp.exp(-e0), (mp.exp(e) + 1) * 2 * mp.sinh(e0)
        else:
            k = randomizer[1]
            gamma = k / (mp.exp(e0) + k - 1)
            spread = mp.expm1(e0) / (mp.exp(e0) + k - 1) * k * (mp.exp(e) + 1)  # 1 - gamma
        a = mp.expm1(e)
        ratio = 2 * a * a / (spread * spread)
        value = spread**2 / (4 * a * gamma * n) * (1 - gamma * (-mp.expm1(-ratio))) ** n
        return min(mp.mpf(1), value)


@pytest.mark.parametrize("randomizer", RANDOMIZERS)
def test_blanket_delta_at_every_level_in_log_space(randomizer: str | tuple) -> None:
    fractions = (1e-3, 0.5, 0.999)
    for n in (2, 10_000, 10**10):
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # e^eps0 overflowed past eps0 = 709
            values = np.array([[bbgn19_delta(f * e0, e0, n, randomizer) for f in fractions]
                               for e0 in LEVELS])
        assert np.isfinite(values).all() and ((values > 0) & (values <= 1)).all()
        for i, e0 in enumerate(LEVELS[::2]):
            for k, f in enumerate(fractions):
                exact = _blanket_mp(f * e0, e0, n, randomizer)
                value = values[2 * i, k]
                assert exact <= value, (n, e0, f, value, exact)  # rounded up, 0 never
                if 1e-300 < exact < 1:
                    assert value <= exact * (1 + 1e-9), (n, e0, f, value, exact)
        # at a fixed eps, a larger local level never lowers the bound (0 until eps0 passes eps)
        for eps in (1e-200, 1e-3, 1.0, 1e100):
            row = [bbgn19_delta(eps, e0, n, randomizer) for e0 in LEVELS]
            assert (np.diff(row) >= 0).all(), (n, eps)


def test_blanket_epsilon_at_every_level() -> None:
    n, delta = 10_000, 1e-6
    for randomizer in RANDOMIZERS:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            values = np.array([bbgn19_epsilon(e0, n, delta, randomizer) for e0 in LEVELS[::2]])
        assert np.isfinite(values).all() and (values > 0).all()
        assert (values <= LEVELS[::2]).all() and (np.diff(values) >= 0).all()
        for e0, value in zip(LEVELS[::2], values, strict=True):
            assert value == e0 or bbgn19_delta(value, e0, n, randomizer) <= delta


def test_blanket_delta_validates_its_randomizer_on_every_branch() -> None:
    # eps >= eps0 and eps = 0 returned 0 and 1 before the randomizer was looked at
    for eps, eps0 in ((0.5, 0.5), (2.0, 1.0), (0.0, 1.0), (0.3, 1.0)):
        with pytest.raises(ValueError, match="randomizer must be"):
            bbgn19_delta(eps, eps0, 1000, randomizer="laplace")
        with pytest.raises(ValueError, match="k must be"):
            bbgn19_delta(eps, eps0, 1000, randomizer=("krr", 1))


@pytest.mark.parametrize("variant", ["fmt21", "stronger"])
def test_clone_probability_and_sampler_at_every_level(variant: str) -> None:
    q = np.array([clone_probability(e0, variant) for e0 in LEVELS])
    assert ((q >= 0) & (q <= 1)).all() and (np.diff(q) <= 0).all()
    for e0, value in zip(LEVELS, q, strict=True):
        exact = clone_probability_mp(e0, variant)
        if exact > 1e-300:
            assert abs(value - exact) <= 4e-16 * exact
        else:  # underflow rounds down: fewer clones, the safe side for every accountant
            assert value <= exact
    n = 50
    for e0 in LEVELS:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            first, second = sample_clone_pair(e0, n, 200, variant, rng=3)
        for sample in (first, second):
            assert sample.shape == (200,) and ((sample >= 0) & (sample <= n)).all()
    first, second = sample_clone_pair(1e300, n, 200, variant, rng=3)
    assert (first == 1).all() and (second == 0).all()  # no clone, the bit always told


def test_local_level_for_a_target_at_every_target_level() -> None:
    n, delta = 10_000, 1e-6
    targets = np.geomspace(1e-300, 1e300, 13)
    levels = np.array([local_epsilon_for_target(e, n, delta) for e in targets])
    assert ((levels > 0) & (levels <= 30.0)).all() and (np.diff(levels) >= 0).all()
    for target, level in zip(targets, levels, strict=True):
        assert level >= min(target, 30.0)  # shuffling never hurts
        assert fmt21_numerical_epsilon(level, n, delta) <= target
