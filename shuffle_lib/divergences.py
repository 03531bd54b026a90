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

from shuffle_lib._validation import check_array, check_real
from shuffle_lib.accounting.finite import ALPHA_MAX, check_distribution_pair, renyi_divergence


def _records(rows: object, name: str) -> list[tuple]:
    """``rows`` as a list of records (tuples of hashable fields); ``TypeError`` when ``rows`` or
    one of its rows is not an iterable (a string is not taken for a sequence of characters)."""
    if isinstance(rows, str | bytes) or not isinstance(rows, Iterable):
        raise TypeError(f"{name} must be an iterable of rows, got {rows!r:.80}")
    records = []
    for row in rows:
        if isinstance(row, str | bytes) or not isinstance(row, Iterable):
            raise TypeError(f"{name} must hold rows that are sequences of fields, got row "
                            f"{row!r:.80}")
        record = tuple(row)
        try:
            hash(record)
        except TypeError as err:
            raise TypeError(f"{name} must hold rows of hashable fields, got row {row!r:.80}"
                            ) from err
        records.append(record)
    return records


def unordered_dataset(rows: Iterable[Iterable]) -> tuple[tuple, ...]:
    """A dataset as a multiset of records: the sorted tuple of its rows (each row a sequence of
    hashable fields, made a tuple; the records must be comparable with each other), so two
    datasets holding the same records in another order compare equal (Bailie, Gong & Meng 2023:
    unordered datasets).

    >>> unordered_dataset([("b", 1), ("a", 2)])
    (('a', 2), ('b', 1))
    """
    records = _records(rows, "rows")
    try:
        return tuple(sorted(records))
    except TypeError as err:
        raise TypeError(f"rows must hold records that can be ordered, got {records!r:.80}") from err


def _symmetric_difference_size(x: list[tuple], y: list[tuple]) -> int:
    first, second = Counter(x), Counter(y)
    return sum(((first - second) + (second - first)).values())


def symmetric_difference_distance(x: Iterable[Iterable], y: Iterable[Iterable]) -> int:
    r""":math:`d_{\text{SymDiff}}(\mathbf X,\mathbf X')=|\mathbf X\ominus\mathbf X'|`, the number
    of records to add or remove to turn one multiset into the other (Bailie, Gong & Meng 2023: the
    metric extension of unbounded neighbours). ``x`` and ``y`` are iterables of rows, each a
    sequence of hashable fields.

    >>> symmetric_difference_distance([(1,), (2,)], [(1,), (3,), (4,)])
    3
    """
    return _symmetric_difference_size(_records(x, "x"), _records(y, "y"))


def hamming_set_distance(x: Iterable[Iterable], y: Iterable[Iterable]) -> float:
    r""":math:`d_{\text{HamS}}(\mathbf X,\mathbf X')=\tfrac12|\mathbf X\ominus\mathbf X'|` when the
    datasets have the same size, :math:`+\infty` otherwise: the number of records to replace
    (Bailie, Gong & Meng 2023: the metric extension of bounded neighbours on unordered datasets).
    The infinity is exact, not an overflow: no replacements turn one size into another.

    >>> hamming_set_distance([(1,), (2,)], [(1,), (3,)]), hamming_set_distance([(1,)], [])
    (1.0, inf)
    """
    rows_x, rows_y = _records(x, "x"), _records(y, "y")
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
    :math:`\alpha\in(1,` ``max_alpha`` :math:`]` (``max_alpha`` at most 1e300, the largest
    order :func:`shuffle_lib.accounting.finite.renyi_divergence` takes) is taken on a grid of 400
    orders from :math:`1+\min(10^{-6},` ``max_alpha`` :math:`-1)` (geometric in
    :math:`\alpha-1`) and refined by a bounded scalar search around the best one; it is a lower
    estimate, tight to about :math:`10^{-6}` relative on smooth
    cases (tested against the discrete Gaussian's closed form). Rényi divergences from
    :func:`shuffle_lib.accounting.finite.renyi_divergence`. Returns ``inf`` (exactly) when one
    law puts mass where the other has none.

    >>> round(normalized_renyi_divergence([0.5, 0.5], [0.5, 0.5]), 12)
    0.0
    """
    first, second = check_distribution_pair(check_array(p, "p", ndim=1),
                                            check_array(q, "q", ndim=1))
    max_alpha = check_real(max_alpha, "max_alpha", low=1, low_open=True, high=ALPHA_MAX)

    def ratio(alpha: float) -> float:
        return max(renyi_divergence(first, second, alpha),
                   renyi_divergence(second, first, alpha)) / alpha

    grid = 1 + np.geomspace(min(1e-6, max_alpha - 1), max_alpha - 1, 400)  # never past max_alpha
    values = np.array([ratio(a) for a in grid])
    if np.isinf(values).any():
        return math.inf
    best = int(np.argmax(values))
    low, high = grid[max(best - 1, 0)], grid[min(best + 1, grid.size - 1)]
    refined = minimize_scalar(lambda a: -ratio(a), bounds=(low, high), method="bounded",
                              options={"xatol": 1e-10 * high})
    return math.sqrt(max(values[best], -refined.fun, 0.0))
