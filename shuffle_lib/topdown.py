r"""TopDown in brief (the summary of Abowd et al. 2022 in Bailie, Gong & Meng 2023): noisy
measurements with discrete Gaussian noise, then post-processing to integer, non-negative tables that
match the invariants.

This is the two-step idea on a single two-way table whose row and column totals are invariant,
not the Census Bureau's production system (which works down a geographic hierarchy with many
queries and constraints).
"""

from __future__ import annotations

import math

import cvxpy as cp
import numpy as np
from numpy.typing import ArrayLike
from scipy.optimize import linprog

from shuffle_lib._validation import RngLike, as_rng, check_integer, check_positive


def _check_sigma2(sigma2: float) -> float:
    if np.ndim(sigma2) != 0:
        raise ValueError(f"sigma2 must be a single number, got {sigma2!r}")
    return float(check_positive(sigma2, "sigma2"))


def discrete_gaussian(sigma2: float, size: int | tuple[int, ...] = 1, rng: RngLike = None
                      ) -> np.ndarray:
    r"""Draws from the discrete Gaussian :math:`\mathcal N_{\mathbb Z}(0,\sigma^2)`,
    :math:`P(x)\propto e^{-x^2/(2\sigma^2)}` on the integers (Canonne, Kamath & Steinke 2020,
    Algorithm 3): propose :math:`Y` from the discrete Laplace law
    :math:`P(y)\propto e^{-|y|/t}` with :math:`t=\lfloor\sigma\rfloor+1` (a difference of two
    geometric variables) and accept with probability
    :math:`\exp(-(|Y|-\sigma^2/t)^2/(2\sigma^2))`; rejected draws are proposed again, in
    vectorized rounds. Exact up to floating-point rounding of the acceptance probability.

    >>> discrete_gaussian(4.0, size=5, rng=0).dtype
    dtype('int64')
    """
    variance = _check_sigma2(sigma2)
    shape = (check_integer(size, "size", 0),) if np.ndim(size) == 0 else tuple(
        check_integer(s, "size", 0) for s in size)
    gen = as_rng(rng)
    t = math.floor(math.sqrt(variance)) + 1
    success = -math.expm1(-1.0 / t)
    out = np.empty(math.prod(shape), np.int64)
    missing = np.arange(out.size)
    while missing.size:
        proposal = gen.geometric(success, missing.size) - gen.geometric(success, missing.size)
        accept = np.log(gen.random(missing.size)) < (
            -((np.abs(proposal) - variance / t) ** 2) / (2 * variance))
        out[missing[accept]] = proposal[accept]
        missing = missing[~accept]
    return out.reshape(shape)


def discrete_gaussian_log_pmf(x: ArrayLike, sigma2: float) -> np.ndarray:
    r""":math:`\ln P(x)` for :math:`\mathcal N_{\mathbb Z}(0,\sigma^2)`; the normalizer
    :math:`\sum_{|y|\le K}e^{-y^2/(2\sigma^2)}` with :math:`K=\lceil 40\sigma\rceil+1` (the tail
    beyond is below :math:`e^{-800}` of the total).

    >>> round(float(np.exp(discrete_gaussian_log_pmf(0, 1e-4))), 12)
    1.0
    """
    variance = _check_sigma2(sigma2)
    values = np.asarray(x)
    if not np.issubdtype(values.dtype, np.integer):
        raise ValueError(f"x must hold integers, got {x!r}")
    support = np.arange(-math.ceil(40 * math.sqrt(variance)) - 1,
                        math.ceil(40 * math.sqrt(variance)) + 2)
    log_normalizer = np.logaddexp.reduce(-(support ** 2) / (2 * variance))
    return -(values.astype(float) ** 2) / (2 * variance) - log_normalizer


def _check_margins(row_totals: ArrayLike, col_totals: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    rows, cols = np.asarray(row_totals), np.asarray(col_totals)
    for name, arr in (("row_totals", rows), ("col_totals", cols)):
        if arr.ndim != 1 or arr.size == 0 or not np.issubdtype(arr.dtype, np.integer) or (
                arr < 0).any():
            raise ValueError(f"{name} must be a 1-D array of integers >= 0, got {arr!r}")
    if rows.sum() != cols.sum():
        raise ValueError(f"infeasible invariants: row totals sum to {rows.sum()}, column totals "
                         f"to {cols.sum()}")
    return rows.astype(np.int64), cols.astype(np.int64)


def project_to_margins(noisy: ArrayLike, row_totals: ArrayLike, col_totals: ArrayLike
                       ) -> np.ndarray:
    r"""TopDown's post-processing on one two-way table (Bailie, Gong & Meng 2023, TopDown slide,
    step 2): the non-negative integer table with the given margins closest to ``noisy``, in two
    solves as in Abowd et al. (2022):

    1. least squares :math:`\min\|Z-T\|_2^2` over real :math:`Z\ge0` with the margins (cvxpy);
    2. rounding :math:`Z=\lfloor Z^\ast\rfloor+D`, :math:`D\in[0,1]`, with the margins, minimizing
       :math:`\sum|Z^\ast-Z|=\sum(1-2\{Z^\ast\})D+\text{const}` (HiGHS). The constraint matrix of a
       transportation problem is totally unimodular, so the optimal vertex is a 0/1 table.

    Raises ``ValueError`` for infeasible margins and ``RuntimeError`` if a solver fails.

    >>> project_to_margins([[2.6, 0.2], [0.4, 1.9]], [3, 2], [3, 2]).tolist()
    [[3, 0], [0, 2]]
    """
    table = np.asarray(noisy, dtype=float)
    rows, cols = _check_margins(row_totals, col_totals)
    if table.shape != (rows.size, cols.size) or not np.isfinite(table).all():
        raise ValueError(f"noisy must be a finite table of shape {(rows.size, cols.size)}, got "
                         f"shape {table.shape}")
    z = cp.Variable(table.shape, nonneg=True)
    problem = cp.Problem(cp.Minimize(cp.sum_squares(z - table)),
                         [cp.sum(z, axis=1) == rows, cp.sum(z, axis=0) == cols])
    problem.solve(solver=cp.CLARABEL)
    if problem.status not in (cp.OPTIMAL, cp.OPTIMAL_INACCURATE) or z.value is None:
        raise RuntimeError(f"least-squares step failed: solver status {problem.status}")
    real = np.clip(z.value, 0.0, None)
    base = np.floor(real + 1e-9)
    fraction = np.clip(real - base, 0.0, 1.0)
    n_rows, n_cols = table.shape
    row_matrix = np.kron(np.eye(n_rows), np.ones(n_cols))
    col_matrix = np.kron(np.ones(n_rows), np.eye(n_cols))
    result = linprog((1 - 2 * fraction).ravel(),
                     A_eq=np.vstack([row_matrix, col_matrix]),
                     b_eq=np.concatenate([rows - base.sum(axis=1), cols - base.sum(axis=0)]),
                     bounds=(0, 1), method="highs-ds")
    if result.status != 0:
        raise RuntimeError(f"rounding step failed: {result.message}")
    if not np.allclose(result.x, np.rint(result.x), atol=1e-7):
        raise RuntimeError("rounding step returned a fractional vertex")
    return (base + np.rint(result.x).reshape(table.shape)).astype(np.int64)


def zcdp_noise_variance(rho: float, l2_sensitivity: float = math.sqrt(2)) -> float:
    r"""The discrete Gaussian variance :math:`\sigma^2=\Delta_2^2/(2\rho)` that makes a query of
    :math:`\ell_2` sensitivity :math:`\Delta_2` :math:`\rho`-zCDP (Canonne, Kamath & Steinke
    2020: the Gaussian's Rényi bound :math:`D_\alpha\le\alpha\Delta_2^2/(2\sigma^2)` holds for
    the discrete Gaussian on integer-valued queries). The default :math:`\Delta_2=\sqrt2`:
    replacing one record moves one count from one cell of a table to another.

    >>> zcdp_noise_variance(0.5, l2_sensitivity=1.0)
    1.0
    """
    budget = float(check_positive(rho, "rho"))
    delta2 = float(check_positive(l2_sensitivity, "l2_sensitivity"))
    return delta2**2 / (2 * budget)


def topdown_two_way(table: ArrayLike, rho: float, rng: RngLike = None,
                    l2_sensitivity: float = math.sqrt(2)) -> np.ndarray:
    r"""Two-step TopDown on one table of counts (Bailie, Gong & Meng 2023, TopDown slides): add
    independent :math:`\mathcal N_{\mathbb Z}(0,\sigma^2)` noise to every cell with :math:`\sigma^2`
    from :func:`zcdp_noise_variance` (:math:`\rho`-zCDP), then :func:`project_to_margins` onto the
    table's own row and column totals, which are the invariants (post-processing keeps zCDP within
    the universe of tables sharing them).

    >>> truth = np.array([[30, 10], [5, 55]])
    >>> release = topdown_two_way(truth, rho=1e6, rng=0)
    >>> release.tolist() == truth.tolist()
    True
    """
    counts = np.asarray(table)
    if counts.ndim != 2 or not np.issubdtype(counts.dtype, np.integer) or (counts < 0).any():
        raise ValueError(f"table must be a 2-D array of counts (integers >= 0), got {table!r}")
    noisy = counts + discrete_gaussian(zcdp_noise_variance(rho, l2_sensitivity), counts.shape, rng)
    return project_to_margins(noisy, counts.sum(axis=1), counts.sum(axis=0))
