"""TopDown in brief (Bailie, Gong & Meng 2023): the discrete Gaussian and post-processing to
invariants."""

from __future__ import annotations

import itertools
import math
from collections import Counter

import numpy as np
import pytest
from scipy import stats
from stat_checks import shifted_discrete_gaussians

from shuffle_lib.accounting.zcdp import (
    approx_dp_to_zcdp,
    gaussian_zcdp,
    zcdp_compose,
    zcdp_to_approx_dp,
)
from shuffle_lib.divergences import normalized_renyi_divergence
from shuffle_lib.topdown import (
    discrete_gaussian,
    discrete_gaussian_log_pmf,
    project_to_margins,
    topdown_two_way,
    zcdp_noise_variance,
)


@pytest.mark.parametrize("sigma2", [0.2, 2.5, 40.0])
def test_discrete_gaussian_matches_pmf(sigma2: float) -> None:
    draws = discrete_gaussian(sigma2, 40_000, rng=3)
    support = np.arange(draws.min(), draws.max() + 1)
    probs = np.exp(discrete_gaussian_log_pmf(support, sigma2))
    # pool the tails into cells with expected count >= 20
    expected = probs * draws.size
    keep = expected >= 20
    observed = np.array([np.sum(draws == v) for v in support])
    obs = np.append(observed[keep], observed[~keep].sum())
    exp = np.append(expected[keep], draws.size - expected[keep].sum())
    assert stats.chisquare(obs, exp).pvalue > 1e-4
    variance = float(np.sum(support**2 * probs))
    assert variance <= sigma2 + 1e-12  # the discrete Gaussian's variance is below sigma^2
    assert abs(draws.var() - variance) < 5 * variance * math.sqrt(2 / draws.size)


def test_pmf_normalized() -> None:
    for sigma2 in (1e-3, 0.7, 1e4):
        support = np.arange(-int(45 * math.sqrt(sigma2)) - 2, int(45 * math.sqrt(sigma2)) + 3)
        assert np.exp(discrete_gaussian_log_pmf(support, sigma2)).sum() == pytest.approx(1.0)


def test_noise_variance_gives_the_budget() -> None:
    for rho in (0.07, 2.56, 15.29):
        sigma2 = zcdp_noise_variance(rho)
        assert gaussian_zcdp(math.sqrt(sigma2), math.sqrt(2)) == pytest.approx(rho)
        # one record moves a count from cell a to cell b: the two noisy cells shift by (+1, -1);
        # Renyi divergences add over independent cells, so rho = 2 D_nor(one cell)^2
        one_cell = normalized_renyi_divergence(*shifted_discrete_gaussians(sigma2)) ** 2
        assert 2 * one_cell == pytest.approx(rho, rel=1e-6)


def test_projection_keeps_margins(rng: np.random.Generator) -> None:
    for _ in range(40):
        truth = rng.integers(0, 30, size=(int(rng.integers(2, 6)), int(rng.integers(2, 4))))
        noisy = truth + rng.normal(scale=5, size=truth.shape)
        out = project_to_margins(noisy, truth.sum(axis=1), truth.sum(axis=0))
        assert out.dtype == np.int64 and (out >= 0).all()
        np.testing.assert_array_equal(out.sum(axis=1), truth.sum(axis=1))
        np.testing.assert_array_equal(out.sum(axis=0), truth.sum(axis=0))
    truth = np.array([[3, 4], [5, 0]])
    np.testing.assert_array_equal(project_to_margins(truth, [7, 5], [8, 4]), truth)


def test_projection_of_2x2_is_the_integer_least_squares(rng: np.random.Generator) -> None:
    # a 2 x 2 table with fixed margins has one free cell; brute force over it
    for _ in range(60):
        truth = rng.integers(0, 12, size=(2, 2))
        rows, cols = truth.sum(axis=1), truth.sum(axis=0)
        noisy = truth + rng.normal(scale=4, size=(2, 2))
        candidates = []
        for a in range(max(0, rows[0] - cols[1]), min(rows[0], cols[0]) + 1):
            z = np.array([[a, rows[0] - a], [cols[0] - a, rows[1] - cols[0] + a]])
            candidates.append((float(np.sum((z - noisy) ** 2)), a))
        best = min(candidates)[0]
        out = project_to_margins(noisy, rows, cols)
        assert float(np.sum((out - noisy) ** 2)) == pytest.approx(best)


def test_projection_rounding_is_the_best_rounding(rng: np.random.Generator) -> None:
    # on 3 x 2 tables: among all integer tables with the margins, ours is within one of the
    # continuous least-squares table in every cell (the rounding step only moves fractions)
    for _ in range(30):
        truth = rng.integers(0, 8, size=(3, 2))
        rows, cols = truth.sum(axis=1), truth.sum(axis=0)
        noisy = truth + rng.normal(scale=3, size=(3, 2))
        out = project_to_margins(noisy, rows, cols)
        feasible = []
        for a, b in itertools.product(range(rows[0] + 1), range(rows[1] + 1)):
            c = cols[0] - a - b
            if 0 <= c <= rows[2]:
                feasible.append(np.array([[a, rows[0] - a], [b, rows[1] - b], [c, rows[2] - c]]))
        scores = [float(np.sum((z - noisy) ** 2)) for z in feasible]
        ours = float(np.sum((out - noisy) ** 2))
        # the two-step answer is never worse than the best integer table by more than the
        # rounding of three free cells allows
        assert ours <= min(scores) + 3 + 1e-9


def test_topdown_accuracy_improves_with_rho() -> None:
    truth = np.array([[7461, 3825], [1207, 534], [593, 432], [49656, 176553]])
    errors = []
    for rho in (1e-4, 1e-2, 1.0):
        releases = [topdown_two_way(truth, rho, rng=seed) for seed in range(10)]
        for release in releases:
            np.testing.assert_array_equal(release.sum(axis=1), truth.sum(axis=1))
            np.testing.assert_array_equal(release.sum(axis=0), truth.sum(axis=0))
        errors.append(np.mean([np.abs(r - truth).mean() for r in releases]))
    assert errors[0] > errors[1] > errors[2]


def test_dropping_an_invariant_gives_disjoint_laws() -> None:
    """The converse of Bailie, Gong & Meng's TopDown theorem on the toy: moving one household
    between rows keeps the column totals (the smaller set of invariants) but changes the row
    totals, and every release keeps its input's row totals, so no output is shared."""
    table = np.array([[3, 1], [2, 4]])
    moved = table + np.array([[-1, 0], [1, 0]])
    traded = table + np.array([[-1, 1], [1, -1]])  # same margins as table
    assert (moved.sum(axis=0) == table.sum(axis=0)).all()
    assert (moved.sum(axis=1) != table.sum(axis=1)).any()
    outputs = {}
    for name, truth in (("table", table), ("moved", moved), ("traded", traded)):
        releases = [topdown_two_way(truth, rho=0.5, rng=seed) for seed in range(60)]
        for release in releases:
            np.testing.assert_array_equal(release.sum(axis=1), truth.sum(axis=1))
            np.testing.assert_array_equal(release.sum(axis=0), truth.sum(axis=0))
        outputs[name] = Counter(release.tobytes() for release in releases)
    assert not set(outputs["table"]) & set(outputs["moved"])
    assert set(outputs["table"]) & set(outputs["traded"])  # same universe: shared outputs
    support = sorted(set(outputs["table"]) | set(outputs["moved"]))
    laws = [np.array([outputs[name][z] for z in support], float) / 60
            for name in ("table", "moved")]
    assert normalized_renyi_divergence(*laws) == math.inf


def test_2020_allocation_composes_and_converts() -> None:
    # Bailie, Gong & Meng (2023), TopDown theorem slide, from US Census Bureau (2023)
    pl_household, pl_person, dhc_household, dhc_person = 0.07, 2.56, 7.70, 4.96
    assert round(zcdp_compose([pl_household, pl_person]), 2) == 2.63
    total = zcdp_compose([pl_household, pl_person, dhc_household, dhc_person])
    assert round(total, 2) == 15.29
    # the printed rho is rounded: 15.29 converts to 52.82, the printed 52.83 needs a rho in
    # [15.285, 15.295) that also converts into [52.825, 52.835)
    assert round(zcdp_to_approx_dp(total, 1e-10), 2) == 52.82
    low = max(15.285, approx_dp_to_zcdp(52.825, 1e-10))
    high = min(15.295, approx_dp_to_zcdp(52.835, 1e-10))
    assert low < high
    assert round(zcdp_to_approx_dp((low + high) / 2, 1e-10), 2) == 52.83


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: discrete_gaussian(-1.0), "sigma2"),
        (lambda: discrete_gaussian(float("nan")), "sigma2"),
        (lambda: discrete_gaussian_log_pmf([0.5], 1.0), "integers"),
        (lambda: project_to_margins([[1.0, 2.0]], [3], [1, 1]), "infeasible"),
        (lambda: project_to_margins([[1.0, 2.0]], [3], [1, 2, 0]), "shape"),
        (lambda: project_to_margins([[1.0, 2.0]], [-3], [-1, -2]), "integers >= 0"),
        (lambda: topdown_two_way([[1, 2]], rho=0.0), "rho"),
        (lambda: topdown_two_way([[1.5, 2]], rho=1.0), "counts"),
        (lambda: zcdp_noise_variance(-1.0), "rho"),
    ],
)
def test_bad_input_raises(call, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        call()


def test_variances_whose_draws_would_saturate_are_refused() -> None:
    # at sigma2 = 1e300 numpy's int64 geometric draws saturate and the difference is 0: the old
    # sampler returned zeros, so topdown_two_way released the exact table
    with pytest.raises(ValueError, match="sigma2"):
        discrete_gaussian(1e300, 3, rng=0)
    with pytest.raises(ValueError, match="rho"):
        topdown_two_way(np.array([[30, 10], [5, 55]]), 1e-300, rng=0)
    draws = discrete_gaussian(1e28, 2_000, rng=0)  # the limit: sigma = 1e14, real noise
    assert 0.9e14 < draws.std() < 1.1e14


def test_topdown_at_tiny_rho_returns_a_table_with_the_margins() -> None:
    # the noise dwarfs the counts: the least-squares step used to fail ("infeasible")
    truth = np.array([[30, 10], [5, 55]])
    for rho in (1e-12, 1e-20, 1.01e-28):
        release = topdown_two_way(truth, rho, rng=0)
        assert (release >= 0).all()
        assert release.sum(axis=1).tolist() == [40, 60]
        assert release.sum(axis=0).tolist() == [35, 65]


def test_projection_of_large_counts_is_close_to_them() -> None:
    # ten million people per cell: the solver used to report "infeasible" on this table
    gen = np.random.default_rng(1)
    truth = gen.integers(0, 10**7, size=(3, 4))
    noisy = truth + gen.normal(0, 1, truth.shape)
    release = project_to_margins(noisy, truth.sum(axis=1), truth.sum(axis=0))
    assert np.abs(release - truth).max() <= 3


def test_log_pmf_normalizer_at_large_variance() -> None:
    # Poisson summation above 1e8 agrees with the direct sum just below
    below = discrete_gaussian_log_pmf(np.array([0, 10_000]), 1e8)
    above = discrete_gaussian_log_pmf(np.array([0, 10_000]), float(np.nextafter(1e8, 2e8)))
    np.testing.assert_allclose(above, below, rtol=1e-12)
    assert np.isfinite(discrete_gaussian_log_pmf(0, 1e300))


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (lambda: discrete_gaussian(1.0, 10**12), ValueError, "size"),
        (lambda: discrete_gaussian(1.0, (10**6, 10**6)), ValueError, "size"),
        (lambda: discrete_gaussian("1.0"), TypeError, "sigma2"),
        (lambda: discrete_gaussian_log_pmf(0, 0.0), ValueError, "sigma2"),
        (lambda: zcdp_noise_variance(0.5, 1e300), ValueError, "l2_sensitivity"),
        (lambda: zcdp_noise_variance(True), TypeError, "rho"),
        (lambda: project_to_margins([[1.0, 2.0]], [2**62], [2**62]), ValueError, "row_totals"),
        (lambda: project_to_margins([["a", "b"]], [3], [1, 2]), TypeError, "noisy"),
        (lambda: project_to_margins([[1e300, 2.0]], [3], [1, 2]), ValueError, "noisy"),
        (lambda: project_to_margins(np.ones((200, 200)), [200] * 200, [200] * 200), ValueError,
         "cells"),
        (lambda: project_to_margins([[1.0, 2.0]], [3.0], [1, 2]), ValueError, "counts"),
        (lambda: topdown_two_way([[2**62, 2**62]], 1.0), ValueError, "table"),
        (lambda: topdown_two_way([[1, 2]], 1.0, l2_sensitivity="2"), TypeError,
         "l2_sensitivity"),
    ],
)
def test_hostile_inputs_are_refused_by_name(call, error: type, message: str) -> None:
    with pytest.raises(error, match=message):
        call()


def test_table_sizes_are_checked_before_the_entries() -> None:
    # entries of the wrong type (a TypeError once read) in an array past the size limit: the
    # size, known from the shape, is what is reported
    words = np.full((101, 100), "x", dtype=object)
    with pytest.raises(ValueError, match="table has 10100 entries"):
        topdown_two_way(words, 1.0)
    with pytest.raises(ValueError, match="cells"):
        project_to_margins(words, np.full(101, "x", dtype=object),
                           np.full(100, "x", dtype=object))
    with pytest.raises(ValueError, match="cells"):
        project_to_margins(np.ones((2, 2)), np.broadcast_to(1, (10**9,)),
                           np.broadcast_to(1, (10**9,)))
