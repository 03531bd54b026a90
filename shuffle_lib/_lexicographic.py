r"""Lexicographic linear programs with a unique answer.

A linear program often has a whole face of optimal solutions, and which vertex a solver returns
depends on the solver. :func:`lexicographic_projection` removes the choice: it minimizes a list of
linear objectives in turn, each among the optima of the ones before, and returns the point of the
final optimal face nearest to a target in Euclidean distance. A face is convex and the distance
strictly convex, so that point is unique; it depends only on the problem, not on the solver.

The linear stages are solved with HiGHS (``scipy.optimize.linprog``, a vertex accurate to about
1e-10); the projection with the interior-point solver Clarabel (through cvxpy) at tight tolerances.
Relabelled copies of random problems agree to about 1e-9 (the tests ask 1e-7). An interior-point
method approaches a *degenerate* bound (active, with a zero multiplier) only slowly, and there
differences up to about 1e-4 have been seen; callers should pin such coordinates with equalities
when they know them (as :func:`shuffle_lib.profile.smooth_categorical` does for values a profile
never produces). Because earlier stages are held within ``STAGE_SLACK`` rather than exactly, a
coordinate whose objective coefficients are tiny can move further (the relaxed rule is unique
too, but it is not the exact rule). The callers certify privacy exactly on whatever is returned.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
from scipy.optimize import linprog

STAGE_SLACK = 1e-9  # a later stage may let an earlier objective exceed its optimum by this much
_PROJECTION_OPTIONS = {"tol_gap_abs": 1e-13, "tol_gap_rel": 1e-13, "tol_feas": 1e-10,
                       "max_iter": 400}
_LP_OPTIONS = {"primal_feasibility_tolerance": 1e-10, "dual_feasibility_tolerance": 1e-10}


@dataclass(frozen=True)
class Polytope:
    """The set :math:`\\{x \\ge 0 : Gx \\le h,\\ Ex = f\\}` (upper bounds are rows of ``G``)."""

    G: np.ndarray
    h: np.ndarray
    E: np.ndarray
    f: np.ndarray


def _minimize(poly: Polytope, kind: str, data: np.ndarray, what: str) -> tuple[float, np.ndarray]:
    """One stage: the optimal value, and the rows that hold later stages at it."""
    n = poly.G.shape[1]
    if kind == "max":  # min max_{i in data} x_i, with an epigraph variable t
        picked = np.flatnonzero(data)
        cap = np.zeros((picked.size, n + 1))
        cap[np.arange(picked.size), picked] = 1
        cap[:, -1] = -1
        result = linprog(np.r_[np.zeros(n), 1.0],
                         A_ub=np.vstack([np.c_[poly.G, np.zeros(len(poly.G))], cap]),
                         b_ub=np.r_[poly.h, np.zeros(picked.size)],
                         A_eq=np.c_[poly.E, np.zeros(len(poly.E))] if len(poly.E) else None,
                         b_eq=poly.f if len(poly.E) else None,
                         bounds=[(0, None)] * n + [(None, None)],
                         method="highs", options=_LP_OPTIONS)
        rows = cap[:, :-1]
    elif kind == "linear":
        result = linprog(data, A_ub=poly.G, b_ub=poly.h, A_eq=poly.E if len(poly.E) else None,
                         b_eq=poly.f if len(poly.E) else None, bounds=(0, None),
                         method="highs", options=_LP_OPTIONS)
        rows = data[None, :]
    else:  # pragma: no cover - internal misuse
        raise ValueError(f"unknown stage kind {kind!r}")
    if result.status != 0:
        raise RuntimeError(f"{what}: the linear program failed ({result.message})")
    return float(result.fun), rows


def lexicographic_projection(poly: Polytope, stages: list[tuple[str, np.ndarray]],
                             target: np.ndarray, what: str) -> np.ndarray:
    """Over non-negative ``x`` in ``poly``: minimize each stage of ``stages`` in turn
    (``("max", mask)``: the largest coordinate in ``mask``; ``("linear", c)``: ``c @ x``), each
    among the optima of the earlier ones (held within ``STAGE_SLACK``), and return the point of
    the last optimal face nearest to ``target``. Raises ``RuntimeError`` when a solve fails.
    """
    import cvxpy as cp

    held = poly
    for kind, data in stages:
        value, rows = _minimize(held, kind, np.asarray(data, dtype=float), what)
        bound = value + STAGE_SLACK * max(1.0, abs(value))
        held = Polytope(np.vstack([held.G, rows]), np.r_[held.h, np.full(len(rows), bound)],
                        held.E, held.f)
    scale = np.abs(held.G).max(axis=1, initial=0.0)
    scale[scale == 0] = 1.0  # rows scaled to largest coefficient 1, for the solver's tolerances
    x = cp.Variable(held.G.shape[1], nonneg=True)
    constraints = [(held.G / scale[:, None]) @ x <= held.h / scale]
    if len(held.E):
        constraints.append(held.E @ x == held.f)
    problem = cp.Problem(cp.Minimize(cp.sum_squares(x - target)), constraints)
    try:
        with warnings.catch_warnings():  # OPTIMAL_INACCURATE is accepted: the caller certifies
            warnings.simplefilter("ignore", UserWarning)
            problem.solve(solver=cp.CLARABEL, **_PROJECTION_OPTIONS)
    except cp.error.SolverError as err:  # pragma: no cover - depends on the solver build
        raise RuntimeError(f"{what}: the projection failed ({err})") from err
    if problem.status not in (cp.OPTIMAL, cp.OPTIMAL_INACCURATE) or x.value is None:
        raise RuntimeError(f"{what}: projection solver status {problem.status!r}")
    return np.clip(np.asarray(x.value), 0.0, None)
