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

from shuffle_lib._validation import RngLike, as_rng, check_array, check_integer, check_real

MAX_SIGMA2 = 1e28  # sigma = 1e14: every geometric proposal (below 45 t) is an exact int below 2^53
MAX_DRAWS = 10**6  # draws of discrete_gaussian per call (about half a second)
MAX_CELLS = 10_000  # cells of a table to post-process (a 100 x 100 table takes about a second)
MAX_TABLE_TOTAL = 10**8  # total count of a table (the solvers are reliable up to here)
MAX_NOISY = 1e16  # largest |entry| of a noisy table (draws at MAX_SIGMA2 stay below 5e15)
_RESCALED_OPTIONS = {"tol_gap_abs": 1e-12, "tol_gap_rel": 1e-12, "tol_feas": 1e-12}


def _counts(value: ArrayLike, name: str, ndim: int, max_size: int | None = None) -> np.ndarray:
    """``value`` as an int64 array of counts: integers (not floats, even whole ones) >= 0 with
    ``ndim`` axes and a total of at most ``MAX_TABLE_TOTAL``; with ``max_size``, an array of more
    entries is refused from its shape, before any copy or pass over the entries."""
    if max_size is not None and isinstance(value, np.ndarray) and value.size > max_size:
        raise ValueError(f"{name} has {value.size} entries, more than the documented limit of "
                         f"{max_size}")
    arr = check_array(value, name, ndim=ndim)
    if not np.issubdtype(np.asarray(value).dtype, np.integer) or (arr < 0).any():
        raise ValueError(f"{name} must be a {ndim}-D array of counts (integers >= 0), "
                         f"got {value!r}")
    if arr.sum() > MAX_TABLE_TOTAL:
        raise ValueError(f"{name} must total at most {MAX_TABLE_TOTAL} (the documented limit), "
                         f"got {arr.sum():.6g}")
    return np.asarray(value).astype(np.int64)


def discrete_gaussian(sigma2: float, size: int | tuple[int, ...] = 1, rng: RngLike = None
                      ) -> np.ndarray:
    r"""Draws from the discrete Gaussian :math:`\mathcal N_{\mathbb Z}(0,\sigma^2)`,
    :math:`P(x)\propto e^{-x^2/(2\sigma^2)}` on the integers (Canonne, Kamath & Steinke 2020,
    Algorithm 3): propose :math:`Y` from the discrete Laplace law
    :math:`P(y)\propto e^{-|y|/t}` with :math:`t=\lfloor\sigma\rfloor+1` (a difference of two
    geometric variables) and accept with probability
    :math:`\exp(-(|Y|-\sigma^2/t)^2/(2\sigma^2))`; rejected draws are proposed again, in
    vectorized rounds. Exact up to floating-point rounding of the acceptance probability.

    Limits: ``sigma2`` at most ``MAX_SIGMA2`` (1e28, :math:`\sigma=10^{14}`), so that every
    proposal is an exact integer below :math:`2^{53}` (beyond, numpy's int64 geometric draws
    saturate and would return wrong samples); at most ``MAX_DRAWS`` (1e6) draws per call.

    >>> discrete_gaussian(4.0, size=5, rng=0).dtype
    dtype('int64')
    """
    variance = check_real(sigma2, "sigma2", low=0.0, high=MAX_SIGMA2, low_open=True)
    shape = (check_integer(size, "size", 0),) if np.ndim(size) == 0 else tuple(
        check_integer(s, "size", 0) for s in size)
    if math.prod(shape) > MAX_DRAWS:
        raise ValueError(f"size asks for {math.prod(shape)} draws, more than the documented "
                         f"limit MAX_DRAWS = {MAX_DRAWS}")
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
    beyond is below :math:`e^{-800}` of the total). For :math:`\sigma^2>10^8` the sum (then of
    more than 800,000 terms) is replaced by its Poisson-summation value
    :math:`\sqrt{2\pi}\,\sigma\,(1+2\sum_{k\ge1}e^{-2\pi^2\sigma^2k^2})`, whose correction is
    below :math:`e^{-10^9}`: :math:`\ln\sqrt{2\pi\sigma^2}` to double precision. ``x`` holds
    integers (an integer array); the result is ``-inf`` where :math:`P(x)` underflows.

    >>> round(float(np.exp(discrete_gaussian_log_pmf(0, 1e-4))), 12)
    1.0
    """
    variance = check_real(sigma2, "sigma2", low=0.0, low_open=True)
    values = check_array(x, "x", finite=False)
    if not np.issubdtype(np.asarray(x).dtype, np.integer):
        raise ValueError(f"x must hold integers, got {x!r}")
    if variance > 1e8:
        log_normalizer = 0.5 * math.log(2 * math.pi * variance)
    else:
        support = np.arange(-math.ceil(40 * math.sqrt(variance)) - 1,
                            math.ceil(40 * math.sqrt(variance)) + 2)
        log_normalizer = np.logaddexp.reduce(-(support ** 2) / (2 * variance))
    with np.errstate(over="ignore"):
        return -(values ** 2) / (2 * variance) - log_normalizer


def _check_margins(row_totals: ArrayLike, col_totals: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    sizes = [np.size(v) if isinstance(v, np.ndarray) else None for v in (row_totals, col_totals)]
    if None not in sizes and sizes[0] * sizes[1] > MAX_CELLS:  # from the shapes, before any copy
        raise ValueError(f"row_totals and col_totals make a {sizes[0]} x {sizes[1]} table, more "
                         f"than the documented limit of {MAX_CELLS} cells")
    rows = _counts(row_totals, "row_totals", 1, MAX_CELLS)
    cols = _counts(col_totals, "col_totals", 1, MAX_CELLS)
    if rows.sum() != cols.sum():
        raise ValueError(f"infeasible invariants: row_totals sum to {rows.sum()}, col_totals "
                         f"to {cols.sum()}")
    if rows.size * cols.size > MAX_CELLS:
        raise ValueError(f"row_totals and col_totals make a {rows.size} x {cols.size} table, more "
                         f"than the documented limit of {MAX_CELLS} cells")
    return rows, cols


def _least_squares(table: np.ndarray, rows: np.ndarray, cols: np.ndarray,
                   rescaled: bool) -> np.ndarray | None:
    r"""Step 1 of :func:`project_to_margins` with Clarabel, or ``None`` if the solver fails or
    its answer misses a margin by more than 1e-3 (a solve that is fine misses them by 1e-6 at
    most). The
    ``rescaled`` form solves the same problem written as
    :math:`\min \tfrac12\|w\|^2/c-\langle T/(Nc),w\rangle` over :math:`w=Z/N` (:math:`N` the total,
    :math:`c=\max(1,\max|T|/N)`; the two objectives differ by a constant and a positive factor):
    every number is then of order 1, which the solver needs when the noise dwarfs the counts or
    the counts are large; tight tolerances (1e-12) keep :math:`Z` accurate to about
    :math:`10^{-10}N`."""
    z = cp.Variable(table.shape, nonneg=True)
    if rescaled:
        total = max(1.0, float(rows.sum()))
        spread = max(1.0, float(np.abs(table).max()) / total)
        objective = (cp.sum_squares(z) / (2 * spread)
                     - cp.sum(cp.multiply(table / (total * spread), z)))
        margins, options = (rows / total, cols / total), _RESCALED_OPTIONS
    else:
        total, objective, margins, options = 1.0, cp.sum_squares(z - table), (rows, cols), {}
    problem = cp.Problem(cp.Minimize(objective),
                         [cp.sum(z, axis=1) == margins[0], cp.sum(z, axis=0) == margins[1]])
    try:
        problem.solve(solver=cp.CLARABEL, **options)
    except cp.error.SolverError:
        return None
    if problem.status not in (cp.OPTIMAL, cp.OPTIMAL_INACCURATE) or z.value is None:
        return None
    real = np.clip(z.value * total, 0.0, None)
    missed = max(np.abs(real.sum(axis=1) - rows).max(), np.abs(real.sum(axis=0) - cols).max())
    return real if missed <= 1e-3 else None


def project_to_margins(noisy: ArrayLike, row_totals: ArrayLike, col_totals: ArrayLike
                       ) -> np.ndarray:
    r"""TopDown's post-processing on one two-way table (Bailie, Gong & Meng 2023, TopDown slide,
    step 2): the non-negative integer table with the given margins closest to ``noisy``, in two
    solves as in Abowd et al. (2022):

    1. least squares :math:`\min\|Z-T\|_2^2` over real :math:`Z\ge0` with the margins (cvxpy;
       if Clarabel fails on this form or misses a margin by more than 1e-3, which happens when
       the noise or the counts are large, the same problem is solved again rescaled to numbers
       of order 1);
    2. rounding :math:`Z=\lfloor Z^\ast\rfloor+D`, :math:`D\in[0,1]`, with the margins, minimizing
       :math:`\sum|Z^\ast-Z|=\sum(1-2\{Z^\ast\})D+\text{const}` (HiGHS). The constraint matrix of a
       transportation problem is totally unimodular, so the optimal vertex is a 0/1 table.

    Limits: at most ``MAX_CELLS`` (10,000) cells, margins totalling at most ``MAX_TABLE_TOTAL``
    (1e8) and noisy entries within :math:`\pm` ``MAX_NOISY`` (1e16); inside them the solvers
    have not been seen to fail. Raises ``ValueError`` for infeasible or out-of-range input and
    ``RuntimeError`` if a solver fails all the same.

    >>> project_to_margins([[2.6, 0.2], [0.4, 1.9]], [3, 2], [3, 2]).tolist()
    [[3, 0], [0, 2]]
    """
    rows, cols = _check_margins(row_totals, col_totals)
    table = check_array(noisy, "noisy", ndim=2, low=-MAX_NOISY, high=MAX_NOISY)
    if table.shape != (rows.size, cols.size):
        raise ValueError(f"noisy must be a finite table of shape {(rows.size, cols.size)}, got "
                         f"shape {table.shape}")
    real = _least_squares(table, rows, cols, rescaled=False)
    if real is None:
        real = _least_squares(table, rows, cols, rescaled=True)
    if real is None:
        raise RuntimeError("least-squares step failed: the solver found no optimum")
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
    replacing one record moves one count from one cell of a table to another. A variance outside
    :math:`[e^{-700}, e^{700}]` (about 1e-304 to 1e304) raises ``ValueError``: it would leave the
    floating-point range.

    >>> zcdp_noise_variance(0.5, l2_sensitivity=1.0)
    1.0
    """
    budget = check_real(rho, "rho", low=0.0, low_open=True)
    delta2 = check_real(l2_sensitivity, "l2_sensitivity", low=0.0, low_open=True)
    if abs(2 * math.log(delta2) - math.log(2) - math.log(budget)) > 700:
        raise ValueError(f"rho = {rho!r} and l2_sensitivity = {l2_sensitivity!r} give a variance "
                         "outside [e^-700, e^700]")
    return delta2**2 / (2 * budget)


def topdown_two_way(table: ArrayLike, rho: float, rng: RngLike = None,
                    l2_sensitivity: float = math.sqrt(2)) -> np.ndarray:
    r"""Two-step TopDown on one table of counts (Bailie, Gong & Meng 2023, TopDown slides): add
    independent :math:`\mathcal N_{\mathbb Z}(0,\sigma^2)` noise to every cell with :math:`\sigma^2`
    from :func:`zcdp_noise_variance` (:math:`\rho`-zCDP), then :func:`project_to_margins` onto the
    table's own row and column totals, which are the invariants (post-processing keeps zCDP within
    the universe of tables sharing them).

    The limits of :func:`discrete_gaussian` and :func:`project_to_margins` apply: ``rho`` and
    ``l2_sensitivity`` must give a variance of at most ``MAX_SIGMA2`` (1e28, so ``rho`` above
    about 1e-28 with the default sensitivity), the table at most ``MAX_CELLS`` cells and a total
    of at most ``MAX_TABLE_TOTAL``.

    >>> truth = np.array([[30, 10], [5, 55]])
    >>> release = topdown_two_way(truth, rho=1e6, rng=0)
    >>> release.tolist() == truth.tolist()
    True
    """
    counts = _counts(table, "table", 2, MAX_CELLS)
    if counts.size > MAX_CELLS:
        raise ValueError(f"table has {counts.size} cells, more than the documented limit of "
                         f"{MAX_CELLS}")
    variance = zcdp_noise_variance(rho, l2_sensitivity)
    if variance > MAX_SIGMA2:
        raise ValueError(f"rho = {rho!r} with l2_sensitivity = {l2_sensitivity!r} gives the noise "
                         f"variance {variance:.3g}, above the documented limit {MAX_SIGMA2:g}")
    noisy = counts + discrete_gaussian(variance, counts.shape, rng)
    return project_to_margins(noisy, counts.sum(axis=1), counts.sum(axis=0))
