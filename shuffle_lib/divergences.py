r"""The two divergences of a differential privacy definition (Bailie, Gong & Meng 2023:
a DP flavour is a triple :math:`(\mathcal D, d_{\mathcal X}, d_{\mathcal T})`).

- Input divergences :math:`d_{\mathcal X}` between datasets, here *unordered* datasets (multisets
  of records, one record per privacy unit): the Hamming distance
  :math:`d_{\text{HamS}}=\tfrac12|\mathbf X\ominus\mathbf X'|` (bounded neighbours: replace one
  record) and the symmetric-difference distance :math:`|\mathbf X\ominus\mathbf X'|` (unbounded
  neighbours: add or remove one record). Both are the shortest-path metrics of their neighbour
  graphs.
- Output divergences :math:`d_{\mathcal T}` between two distributions on a finite output space:
  MULT (pure DP) and :math:`\text{MULT}^\delta` (approximate DP) are
  :func:`shuffle_lib.accounting.finite.epsilon_for_delta` (at :math:`\delta=0` and
  :math:`\delta`); the normalized Rényi divergence :math:`D_{\text{nor}}` behind
  zero-concentrated DP is :func:`normalized_renyi_divergence` here.

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

from shuffle_lib.accounting.finite import check_distribution_pair, renyi_divergence


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
    of records to add or remove to turn one multiset into the other (Bailie, Gong & Meng 2023: the
    metric extension of unbounded neighbours).

    >>> symmetric_difference_distance([(1,), (2,)], [(1,), (3,), (4,)])
    3
    """
    return _symmetric_difference_size(x, y)


def hamming_set_distance(x: Iterable[Iterable], y: Iterable[Iterable]) -> float:
    r""":math:`d_{\text{HamS}}(\mathbf X,\mathbf X')=\tfrac12|\mathbf X\ominus\mathbf X'|` when the
    datasets have the same size, :math:`+\infty` otherwise: the number of records to replace
    (Bailie, Gong & Meng 2023: the metric extension of bounded neighbours on unordered datasets).

    >>> hamming_set_distance([(1,), (2,)], [(1,), (3,)]), hamming_set_distance([(1,)], [])
    (1.0, inf)
    """
    rows_x, rows_y = list(x), list(y)
    if len(rows_x) != len(rows_y):
        return math.inf
    return _symmetric_difference_size(rows_x, rows_y) / 2


def normalized_renyi_divergence(p: ArrayLike, q: ArrayLike, max_alpha: float = 1e4) -> float:
    r"""The zCDP output divergence (Bailie, Gong & Meng 2023, after Bun & Steinke 2016):

    .. math:: D_{\text{nor}}(P,Q)=\sup_{\alpha>1}\frac1{\sqrt\alpha}
              \max\left[\sqrt{D_\alpha(P\|Q)},\ \sqrt{D_\alpha(Q\|P)}\right],

    so :math:`D_{\text{nor}}^2` is the smallest :math:`\rho` with
    :math:`D_\alpha\le\rho\alpha` for all :math:`\alpha`, and a mechanism is :math:`\rho`-zCDP
    exactly when :math:`D_{\text{nor}}\le\sqrt\rho` on neighbours. Numerical: the supremum over
    :math:`\alpha\in(1,` ``max_alpha`` :math:`]` is taken on a grid of 400 orders from
    :math:`1+10^{-6}` (geometric in :math:`\alpha-1`) and refined by a bounded scalar search
    around the best one; it is a lower estimate, tight to about :math:`10^{-6}` relative on smooth
    cases (tested against the discrete Gaussian's closed form). Rényi divergences from
    :func:`shuffle_lib.accounting.finite.renyi_divergence`.

    >>> round(normalized_renyi_divergence([0.5, 0.5], [0.5, 0.5]), 12)
    0.0
    """
    first, second = check_distribution_pair(p, q)
    if not np.isfinite(max_alpha) or max_alpha <= 1:
        raise ValueError(f"max_alpha must be a finite number > 1, got {max_alpha!r}")

    def ratio(alpha: float) -> float:
        return max(renyi_divergence(first, second, alpha),
                   renyi_divergence(second, first, alpha)) / alpha

    grid = 1 + np.geomspace(1e-6, max_alpha - 1, 400)
    values = np.array([ratio(a) for a in grid])
    if np.isinf(values).any():
        return math.inf
    best = int(np.argmax(values))
    low, high = grid[max(best - 1, 0)], grid[min(best + 1, grid.size - 1)]
    refined = minimize_scalar(lambda a: -ratio(a), bounds=(low, high), method="bounded",
                              options={"xatol": 1e-10 * high})
    return math.sqrt(max(values[best], -refined.fun, 0.0))
