"""Checks behind the GSPA items of issue 36 (chapters personalized/gspa*.md), each by a route
that shares no code with the function it checks."""

from __future__ import annotations

from itertools import permutations, product

import numpy as np
import pytest
from scipy.optimize import linprog
from scipy.special import expit
from scipy.stats import binom, multivariate_normal

from shuffle_lib.accounting import (
    gspa_mu,
    gspa_normal_approximation_error,
    hockey_stick_divergence,
    liu23_epsilon,
    personalized_clone_delta,
)


def _cell_masses(eps0: float, n: int, quarter: bool) -> tuple[np.ndarray, np.ndarray]:
    """Exact clone-count law and Gaussian cell masses from SciPy's bivariate normal CDF."""
    m, p = n - 1, 2 / (1 + np.exp(eps0))
    half = p / 2
    cov = m * np.array([[half * (1 - half), -half**2], [-half**2, half * (1 - half)]])
    k = np.arange(m + 1.0)
    law = multivariate_normal([m * half, m * half], cov)

    def G(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        aa, bb = np.meshgrid(a, b, indexing="ij")
        return law.cdf(np.stack([aa.ravel(), bb.ravel()], axis=-1)).reshape(aa.shape)

    lo = k if quarter else k - 0.5  # equation (14) as printed: [k, k + 1/2]
    hi = k + 0.5
    cells = G(hi, hi) - G(hi, lo) - G(lo, hi) + G(lo, lo)
    k0, k1 = np.meshgrid(k, k, indexing="ij")
    total = k0 + k1
    exact = np.where(total <= m, binom.pmf(total, m, p) * binom.pmf(k0, total, 0.5), 0.0)
    return exact, cells


@pytest.mark.parametrize(("eps0", "n"), [(1.0, 60), (0.5, 40), (2.0, 150)])
def test_unit_cells_reproduce_the_pointwise_gap(eps0: float, n: int) -> None:
    exact, cells = _cell_masses(eps0, n, quarter=False)
    pointwise, tv = gspa_normal_approximation_error(eps0, n)
    assert np.isclose(np.abs(exact - cells).max(), pointwise, rtol=1e-6)
    assert 0.5 * np.abs(exact - cells).sum() <= tv + 1e-9  # the library adds the mass outside


@pytest.mark.parametrize(("eps0", "n"), [(1.0, 60), (2.0, 150)])
def test_quarter_cells_hold_a_quarter_of_the_mass(eps0: float, n: int) -> None:
    exact, cells = _cell_masses(eps0, n, quarter=True)
    assert abs(cells.sum() - 0.25) < 0.01
    assert 0.7 < np.abs(exact - cells).max() / exact.max() < 0.8


def _liu23_direct(levels: np.ndarray, delta: float) -> float:
    """[Liu23] by its O(n^2) definition, target the largest level."""
    g = np.array([1.0 if e == 0 else -np.expm1(-e) / e for e in levels])
    n = levels.size
    echo = np.array([np.sum(g / g[i] * np.exp(-np.maximum(levels[i], levels))) / n
                     for i in range(n)])
    target = int(np.argmax(levels))
    total = echo.sum() - echo[target]
    top = levels[target]
    if total < 16 * np.log(4 / delta):
        return float(top)
    gain = (np.exp(top) - 1) / (np.exp(top) + 1) * (8 * np.sqrt(np.log(4 / delta) / total)
                                                     + 8 / total)
    return float(np.log1p(gain))


@pytest.mark.parametrize("small", [0.1, 1e-3, 1e-9, 1e-300, 0.0])
def test_liu23_near_zero_levels_match_the_definition(small: float) -> None:
    rng = np.random.default_rng(7)
    levels = np.where(rng.random(600) < 0.5, small, rng.uniform(0.2, 1.0, 600))
    assert np.isclose(liu23_epsilon(levels, 1e-3), _liu23_direct(levels, 1e-3), rtol=1e-10)


def test_liu23_continuous_and_falling_as_levels_vanish() -> None:
    values = [liu23_epsilon(np.r_[np.full(3000, 0.5), np.full(3000, s)], 1e-4)
              for s in (0.1, 1e-2, 1e-4, 1e-8, 0.0)]
    assert np.all(np.diff(values) <= 0) and abs(values[-2] - values[-1]) < 1e-7
    assert liu23_epsilon(np.zeros(6000), 1e-4) == 0.0


def _four_point_channel_exists(P: np.ndarray, Q: np.ndarray, eps: float, delta: float) -> bool:
    k = expit(eps)
    x0 = np.array([delta, (1 - delta) * k, (1 - delta) * (1 - k), 0.0])
    x1 = np.array([0.0, (1 - delta) * (1 - k), (1 - delta) * k, delta])
    size = P.size
    rows = [np.kron(np.eye(4)[a], np.ones(size)) for a in range(4)]
    rows += [np.kron(x, np.eye(size)[y]) for x in (x0, x1) for y in range(size)]
    result = linprog(np.zeros(4 * size), A_eq=np.array(rows),
                     b_eq=np.concatenate([np.ones(4), P, Q]), bounds=(0, None), method="highs")
    return result.status == 0


@pytest.mark.parametrize("eps", [0.3, 1.0, 2.5])
def test_four_point_reduction_with_positive_delta(eps: float) -> None:
    rng = np.random.default_rng(int(eps * 10))
    tested = 0
    while tested < 20:
        P, Q = rng.dirichlet(np.ones(6)), rng.dirichlet(np.ones(6))
        needed = max(hockey_stick_divergence(P, Q, eps), hockey_stick_divergence(Q, P, eps))
        if needed < 1e-3:
            continue
        tested += 1
        assert _four_point_channel_exists(P, Q, eps, needed)
        assert not _four_point_channel_exists(P, Q, eps, 0.9 * needed)


def _adaptive_law(data: tuple, levels: tuple) -> np.ndarray:
    """Shuffled adaptive process of Definition 6: RR on x XOR the last output, level halved
    unless the last output was 1; exact law of the output sequence."""
    n = len(data)
    law = np.zeros(2**n)
    for index, z in enumerate(product((0, 1), repeat=n)):
        for order in permutations(range(n)):
            prob = 1.0
            for j in range(n):
                last = z[j - 1] if j else 0
                used = levels[j] if last == 1 else levels[j] / 2
                one = expit(used) if data[order[j]] ^ last else expit(-used)
                prob *= one if z[j] else 1 - one
            law[index] += prob
    return law / len(list(permutations(range(n))))


@pytest.mark.parametrize("levels", [(1.0, 1.0, 1.0, 1.0), (0.3, 0.8, 1.5, 1.5)])
def test_adaptive_shuffled_process_within_the_clone_reduction(levels: tuple) -> None:
    top = max(levels)
    for others in product((0, 1), repeat=len(levels) - 1):
        P, Q = (_adaptive_law((b, *others), levels) for b in (0, 1))
        for eps in (0.0, 0.2, 0.6):
            exact = max(hockey_stick_divergence(P, Q, eps), hockey_stick_divergence(Q, P, eps))
            assert exact <= personalized_clone_delta(eps, [top] * len(levels), 0.0, 0) + 1e-12


def test_theorem2_mu_is_lemma3_reading_of_p() -> None:
    """Exact covariance of the clone counts (by convolution) against GSPA's two p_i."""
    levels = np.array([0.2, 0.7, 1.1, 1.9, 0.05])
    delta_i = 0.01
    others = np.delete(levels, np.argmin(levels))  # GSPA's worst target: the smallest level
    law = np.ones((1, 1))  # no clones yet
    for e in others:
        each = (1 - delta_i) / (1 + np.exp(e))  # probability of each kind of clone
        step = np.zeros((law.shape[0] + 1, law.shape[1] + 1))
        step[:-1, :-1] += (1 - 2 * each) * law
        step[1:, :-1] += each * law
        step[:-1, 1:] += each * law
        law = step
    i0, i1 = np.meshgrid(np.arange(law.shape[0]), np.arange(law.shape[1]), indexing="ij")
    m0, m1 = (law * i0).sum(), (law * i1).sum()
    cov = np.array([[(law * (i0 - m0) ** 2).sum(), (law * (i0 - m0) * (i1 - m1)).sum()],
                    [(law * (i0 - m0) * (i1 - m1)).sum(), (law * (i1 - m1) ** 2).sum()]])
    d = np.array([1.0, -1.0])
    mu_exact = np.sqrt(d @ np.linalg.solve(cov, d))
    p_lemma3 = 2 * (1 - delta_i) / (1 + np.exp(others))
    assert np.isclose(mu_exact, 2 / np.sqrt(p_lemma3.sum()), rtol=1e-10)
    assert np.isclose(gspa_mu(levels, delta_i), mu_exact, rtol=1e-10)
    assert not np.isclose(2 / np.sqrt((p_lemma3 / 2).sum()), mu_exact, rtol=0.1)


def _liu23_ratio_as_written(eps_i: float, eps_j: float) -> float:
    """The pair ratio of [Liu23] as the authors' code writes it, in float64."""
    a, b = np.float64(eps_i), np.float64(eps_j)
    return a / b * (1 - np.exp(-b)) / (1 - np.exp(-a))


def test_liu23_ratio_as_written_is_undefined_at_zero_and_fine_at_1e6() -> None:
    with np.errstate(divide="ignore", invalid="ignore"):
        for a, b in ((0.0, 0.0), (0.7, 0.0), (0.0, 0.7), (1e-17, 1e-17)):
            assert np.isnan(_liu23_ratio_as_written(a, b))
    for a, b in ((1e-6, 1e-6), (0.7, 1e-6), (1e-6, 0.7)):
        # the limit form, by a series: (1 - e^{-x}) / x = 1 - x/2 + x^2/6 - x^3/24 + ...
        g = [sum((-x) ** k / np.prod(np.arange(2, k + 2)) for k in range(25)) for x in (a, b)]
        assert np.isclose(_liu23_ratio_as_written(a, b), g[1] / g[0], rtol=1e-8)


def _clone_split_exists(law_a: np.ndarray, law_b: np.ndarray, law_c: np.ndarray,
                        eps: float) -> bool:
    """Laws Q0, Q1 with R(a) = k Q0 + (1-k) Q1, R(b) = (1-k) Q0 + k Q1 and
    R(c) >= (1-k)(Q0 + Q1) everywhere (clone weight 2/(1+e^eps)), k = e^eps/(1+e^eps)."""
    k, size = expit(eps), law_a.size
    eye = np.eye(size)
    a_eq = np.vstack([np.hstack([k * eye, (1 - k) * eye]), np.hstack([(1 - k) * eye, k * eye])])
    a_ub = np.hstack([(1 - k) * eye, (1 - k) * eye])
    result = linprog(np.zeros(2 * size), A_ub=a_ub, b_ub=law_c, A_eq=a_eq,
                     b_eq=np.concatenate([law_a, law_b]), bounds=(0, None), method="highs")
    return result.status == 0


def test_two_outputs_do_not_give_the_binary_clone_weight() -> None:
    # three inputs, two outputs, eps = 1: 1-LDP, but no split with weight 2/(1+e) for (a, b)
    law = {x: np.array([1 - p, p]) for x, p in (("a", 0.5), ("b", 0.5), ("c", 0.184))}
    assert max(np.max(law[u] / law[v]) for u in law for v in law) <= np.e
    assert not _clone_split_exists(law["a"], law["b"], law["c"], 1.0)
    assert _clone_split_exists(law["a"], law["b"], np.array([0.72, 0.28]), 1.0)
    assert abs(1 / (1 + np.e) - 0.269) < 5e-4  # the threshold the chapter quotes


def test_binary_data_give_the_clone_weight() -> None:
    # two inputs, any number of outputs: every eps-LDP randomizer splits with weight 2/(1+e^eps)
    rng = np.random.default_rng(36)
    for eps in (0.3, 1.0, 2.5):
        tested = 0
        while tested < 20:
            P, Q = rng.dirichlet(np.full(5, 20.0)), rng.dirichlet(np.full(5, 20.0))
            if max(np.max(P / Q), np.max(Q / P)) > np.exp(eps):
                continue
            tested += 1
            assert _clone_split_exists(P, Q, P, eps) and _clone_split_exists(P, Q, Q, eps)
