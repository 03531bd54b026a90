r"""The two divergences of a differential privacy definition (seed 003, Bailie, Gong & Meng:
a DP flavour is a triple :math:`(\mathcal D, d_{\mathcal X}, d_{\mathcal T})`).

- Input divergences :math:`d_{\mathcal X}` between datasets, here *unordered* datasets (multisets
  of records, one record per privacy unit): the Hamming distance
  :math:`d_{\text{HamS}}=\tfrac12|\mathbf X\ominus\mathbf X'|` (bounded neighbours: replace one
  record) and the symmetric-difference distance :math:`|\mathbf X\ominus\mathbf X'|` (unbounded
  neighbours: add or remove one record). Both are the shortest-path metrics of their neighbour
  graphs.
- Output divergences :math:`d_{\mathcal T}` between two distributions on a finite output space:
  MULT (pure DP), :math:`\text{MULT}^\delta` (approximate DP) and the normalized Rényi
  divergence :math:`D_{\text{nor}}` behind zero-concentrated DP.

A mechanism satisfies the triple with budget :math:`\varepsilon` when
:math:`d_{\mathcal T}(P_{\mathbf X},P_{\mathbf X'})\le
\varepsilon\,d_{\mathcal X}(\mathbf X,\mathbf X')` for all datasets of every universe
:math:`\mathcal D`.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable

import numpy as np
from numpy.typing import ArrayLike
from scipy.optimize import minimize_scalar
from scipy.special import logsumexp

from shuffle_lib._validation import check_delta


def unordered_dataset(rows: Iterable[Iterable]) -> tuple[tuple, ...]:
    """A dataset as a multiset of records: the sorted tuple of its rows (each row a tuple), so two
    datasets holding the same records in another order compare equal.

    >>> unordered_dataset([("b", 1), ("a", 2)])
    (('a', 2), ('b', 1))
    """
    return tuple(sorted(tuple(row) for row in rows))


def _symmetric_difference_size(x: Iterable[Iterable], y: Iterable[Iterable]) -> int:
    first, second = Counter(map(tuple, x)), Counter(map(tuple, y))
    return sum(((first - second) + (second - first)).values())


def symmetric_difference_distance(x: Iterable[Iterable], y: Iterable[Iterable]) -> int:
    r""":math:`d_{\text{SymDiff}}(\mathbf X,\mathbf X')=|\mathbf X\ominus\mathbf X'|`, the number
    of records to add or remove to turn one multiset into the other (seed 003: the metric
    extension of unbounded neighbours).

    >>> symmetric_difference_distance([(1,), (2,)], [(1,), (3,), (4,)])
    3
    """
    return _symmetric_difference_size(x, y)


def hamming_set_distance(x: Iterable[Iterable], y: Iterable[Iterable]) -> float:
    r""":math:`d_{\text{HamS}}(\mathbf X,\mathbf X')=\tfrac12|\mathbf X\ominus\mathbf X'|` when the
    datasets have the same size, :math:`+\infty` otherwise: the number of records to replace
    (seed 003: the metric extension of bounded neighbours on unordered datasets).

    >>> hamming_set_distance([(1,), (2,)], [(1,), (3,)]), hamming_set_distance([(1,)], [])
    (1.0, inf)
    """
    rows_x, rows_y = list(x), list(y)
    if len(rows_x) != len(rows_y):
        return math.inf
    return _symmetric_difference_size(rows_x, rows_y) / 2


def _check_distributions(p: ArrayLike, q: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    first, second = np.asarray(p, dtype=float), np.asarray(q, dtype=float)
    if first.ndim != 1 or first.shape != second.shape or first.size == 0:
        raise ValueError(f"p and q must be 1-D probability vectors of one length, got shapes "
                         f"{first.shape} and {second.shape}")
    for name, arr in (("p", first), ("q", second)):
        if not np.isfinite(arr).all() or (arr < 0).any() or abs(arr.sum() - 1) > 1e-9:
            raise ValueError(f"{name} must be a probability vector (entries >= 0, sum 1), "
                             f"got {arr!r}")
    return first, second


def _one_sided_mult(p: np.ndarray, q: np.ndarray, delta: float) -> float:
    """sup over events S of ln([P(S) - delta]^+ / Q(S)): the supremum is attained on a set
    {P > t Q}, i.e. on a prefix of the outcomes sorted by likelihood ratio."""
    with np.errstate(divide="ignore"):
        log_ratio = np.log(p) - np.log(q)
    order = np.argsort(-np.nan_to_num(log_ratio, nan=-np.inf), kind="stable")
    mass_p, mass_q = np.cumsum(p[order]), np.cumsum(q[order])
    excess = mass_p - delta
    if np.any((excess > 1e-15) & (mass_q <= 0)):
        return math.inf
    with np.errstate(divide="ignore", invalid="ignore"):
        values = np.where(excess > 0, np.log(np.maximum(excess, 1e-300)) - np.log(mass_q),
                          -np.inf)
    return float(np.max(values))


def mult_divergence(p: ArrayLike, q: ArrayLike, delta: float = 0.0) -> float:
    r"""The multiplicative divergence behind pure and approximate DP (seed 003, output
    divergences):

    .. math:: \text{MULT}^\delta(P,Q)=\sup_S\max\left\{\ln\frac{[P(S)-\delta]^+}{Q(S)},\
              \ln\frac{[Q(S)-\delta]^+}{P(S)},\ 0\right\},

    with :math:`\text{MULT}=\text{MULT}^0=\max_z|\ln P(z)/Q(z)|` on a finite space. Exact: for each
    direction the supremum is attained on an event :math:`\{P>tQ\}`, a prefix of the outcomes
    sorted by likelihood ratio. ``inf`` when an event of probability above :math:`\delta` under
    one law is impossible under the other. :math:`(\varepsilon,\delta)`-DP on a pair means
    :math:`\text{MULT}^\delta\le\varepsilon`.

    >>> round(mult_divergence([0.75, 0.25], [0.25, 0.75]), 4)  # randomized response, e^eps = 3
    1.0986
    """
    first, second = _check_distributions(p, q)
    level = float(check_delta(delta))
    return max(_one_sided_mult(first, second, level), _one_sided_mult(second, first, level), 0.0)


def renyi_divergence(p: ArrayLike, q: ArrayLike, alpha: float) -> float:
    r"""Rényi divergence of order :math:`\alpha>1`,
    :math:`D_\alpha(P\|Q)=\frac1{\alpha-1}\ln\sum_z P(z)^\alpha Q(z)^{1-\alpha}`, in log space
    (``inf`` if :math:`P` puts mass where :math:`Q` has none); :math:`\alpha=1` gives the
    Kullback-Leibler limit. Used by seed 003's :math:`D_{\text{nor}}` (zCDP, Bun & Steinke 2016).

    >>> round(renyi_divergence([0.5, 0.5], [0.5, 0.5], 2.0), 12)
    0.0
    """
    first, second = _check_distributions(p, q)
    if not np.isfinite(alpha) or alpha < 1:
        raise ValueError(f"alpha must be a finite number >= 1, got {alpha!r}")
    support = first > 0
    if np.any(second[support] == 0):
        return math.inf
    weights = first[support]
    log_ratio = np.log(weights) - np.log(second[support])
    if alpha == 1:
        return float(np.sum(weights * log_ratio))
    scaled = (alpha - 1) * log_ratio
    if scaled.max() < 30:  # near alpha = 1: ln(1 + sum p (e^{(a-1) r} - 1)) keeps every digit
        return float(np.log1p(np.sum(weights * np.expm1(scaled))) / (alpha - 1))
    return float(logsumexp(scaled, b=weights) / (alpha - 1))


def normalized_renyi_divergence(p: ArrayLike, q: ArrayLike, max_alpha: float = 1e4) -> float:
    r"""The zCDP output divergence (seed 003, after Bun & Steinke 2016):

    .. math:: D_{\text{nor}}(P,Q)=\sup_{\alpha>1}\frac1{\sqrt\alpha}
              \max\left[\sqrt{D_\alpha(P\|Q)},\ \sqrt{D_\alpha(Q\|P)}\right],

    so :math:`D_{\text{nor}}^2` is the smallest :math:`\rho` with
    :math:`D_\alpha\le\rho\alpha` for all :math:`\alpha`, and a mechanism is :math:`\rho`-zCDP
    exactly when :math:`D_{\text{nor}}\le\sqrt\rho` on neighbours. Numerical: the supremum over
    :math:`\alpha\in(1,` ``max_alpha`` :math:`]` (plus the :math:`\alpha\to1` limit) is taken on
    a log grid of 400 orders and refined by a bounded scalar search around the best one; it is a
    lower estimate, tight to about :math:`10^{-6}` relative on smooth cases (tested against the
    discrete Gaussian's closed form).

    >>> round(normalized_renyi_divergence([0.5, 0.5], [0.5, 0.5]), 12)
    0.0
    """
    first, second = _check_distributions(p, q)
    if not np.isfinite(max_alpha) or max_alpha <= 1:
        raise ValueError(f"max_alpha must be a finite number > 1, got {max_alpha!r}")

    def ratio(alpha: float) -> float:
        return max(renyi_divergence(first, second, alpha),
                   renyi_divergence(second, first, alpha)) / alpha

    grid = np.concatenate([[1.0], 1 + np.geomspace(1e-6, max_alpha - 1, 400)])
    values = np.array([ratio(a) for a in grid])
    if np.isinf(values).any():
        return math.inf
    best = int(np.argmax(values))
    low, high = grid[max(best - 1, 0)], grid[min(best + 1, grid.size - 1)]
    refined = minimize_scalar(lambda a: -ratio(a), bounds=(low, high), method="bounded",
                              options={"xatol": 1e-10 * high})
    return math.sqrt(max(values[best], -refined.fun, 0.0))
