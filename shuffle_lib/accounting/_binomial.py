"""Binomial tails, Poisson-binomial laws and binary-mixture divergences.

Shared by the shuffle accountants (:mod:`shuffle_lib.accounting.shuffle` and
:mod:`shuffle_lib.accounting.personalized`): every reduction there ends in a count whose law is a
binomial or Poisson-binomial, split evenly, plus one user's randomized-response bit.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike
from scipy.special import bdtrc, logsumexp
from scipy.stats import binom

#: Mass of each binomial tail that is not summed; callers add it to delta (upper bounds) or
#: drop it (lower bounds).
TAIL_MASS = 1e-18


def log_binomial_sf(k: np.ndarray, size: np.ndarray, prob: float) -> np.ndarray:
    """log P(Bin(size, prob) > k), vectorized; -inf where the tail underflows (below 1e-308)."""
    k = np.asarray(k)
    tail = bdtrc(np.clip(k, -1, size), size, prob)
    tail = np.where(k >= size, 0.0, tail)
    with np.errstate(divide="ignore"):
        return np.log(tail)


def binomial_bulk(size: int, prob: float) -> tuple[int, int, float]:
    """Range [low, high] holding all but at most 2 * TAIL_MASS of Bin(size, prob), and the exact
    mass left out. Both tails come from lower-tail functions (the upper one through the mirror
    law Bin(size, 1 - prob)): ``isf`` and ``sf`` lose all precision below about 1e-16."""
    if prob == 0 or size == 0:
        return 0, 0, 0.0
    if prob == 1:
        return size, size, 0.0
    low = max(int(binom.ppf(TAIL_MASS, size, prob)), 0)
    high = min(size - int(binom.ppf(TAIL_MASS, size, 1 - prob)), size)
    left_out = binom.cdf(low - 1, size, prob) + binom.cdf(size - high - 1, size, 1 - prob)
    return low, high, float(left_out)


def log_mixture_divergence(counts: np.ndarray, keep: ArrayLike, eps: float) -> np.ndarray:
    """log H_{e^eps}(P_c || Q_c) for P_c = B_c + Bern(keep), Q_c = B_c + Bern(1 - keep),
    B_c ~ Bin(c, 1/2), for every c in ``counts``; ``keep`` (>= 1/2) is a scalar or one per c.

    The ratio P_c/Q_c increases with the outcome, so the optimal event is {X >= t} and
    H_c = sf(t-2) (keep - e^eps (1-keep)) - sf(t-1) (e^eps keep - (1-keep)), sf the tail of B_c.
    Checking t - 1, t, t + 1 guards against rounding in t; counts whose largest ratio
    keep / (1 - keep) is at most e^eps contribute nothing (-inf).
    """
    keep_arr = np.broadcast_to(np.asarray(keep, dtype=float), counts.shape)
    scale = np.exp(eps)
    gain = keep_arr - scale * (1 - keep_arr)
    loss = scale * keep_arr - (1 - keep_arr)
    active = gain > 0
    safe_gain = np.where(active, gain, 1.0)
    ratio = loss / safe_gain
    threshold = np.floor(ratio * (counts + 1) / (1 + ratio)).astype(np.int64) + 1
    tails = {j: log_binomial_sf(threshold + j, counts, 0.5) for j in range(-3, 1)}
    best = np.full(counts.shape, -np.inf)
    with np.errstate(divide="ignore", invalid="ignore"):
        log_gain, log_loss = np.log(safe_gain), np.log(loss)
        for shift in (-1, 0, 1):
            log_a = log_gain + tails[shift - 2]
            log_b = log_loss + tails[shift - 1]
            value = np.where(log_b < log_a, log_a + np.log1p(-np.exp(log_b - log_a)), -np.inf)
            best = np.maximum(best, value)
    return np.where(active, best, -np.inf)


def averaged_mixture_divergence(
    log_weights: np.ndarray, counts: np.ndarray, keep: ArrayLike, eps: float
) -> float:
    """sum_c w_c H_{e^eps}(P_c || Q_c) for the pairs of :func:`log_mixture_divergence`, with
    weights given as logs, summed in log space; 0 when every term vanishes."""
    terms = log_weights + log_mixture_divergence(counts, keep, eps)
    return float(np.exp(logsumexp(terms))) if np.isfinite(terms).any() else 0.0


def target_count_laws(others: np.ndarray, keep: float) -> tuple[np.ndarray, np.ndarray]:
    """Laws of the number of ones in shuffled randomized response when the target (who reports
    its bit with probability ``keep``) holds 1 (first) or 0 (second); ``others`` is the pmf of the
    other users' ones, starting wherever the caller's offset says (the laws share it)."""
    padded = np.concatenate([[0.0], others, [0.0]])
    below, same = padded[:-1], padded[1:]  # o(k - 1), o(k) on the support of the total count
    return keep * below + (1 - keep) * same, (1 - keep) * below + keep * same


def two_sided_hockey_stick(laws: tuple[np.ndarray, np.ndarray], eps: np.ndarray) -> np.ndarray:
    """Larger of the two hockey-stick divergences between two pmfs, vectorized in eps."""
    first, second = laws
    scale = np.exp(np.minimum(eps, 700.0))[..., None]
    forward = np.clip(first - scale * second, 0.0, None).sum(axis=-1)
    backward = np.clip(second - scale * first, 0.0, None).sum(axis=-1)
    return np.maximum(forward, backward)


#: Tail mass dropped at each step of the Poisson-binomial computation (added back to delta).
_PB_TAIL = 1e-20
#: Groups up to this size are tabulated over their whole support.
_SMALL_GROUP = 4096
#: Groups this small are convolved in batches (padded to one length, all pairs at once).
_BATCH_GROUP = 15
#: The batched tree stops once its arrays are this long; the per-pair tree takes over.
_BATCH_LENGTH = 256


def _trim(offset: int, pmf: np.ndarray) -> tuple[int, np.ndarray, float]:
    """Drop the outer entries holding less than _PB_TAIL on each side; return the mass dropped."""
    left = int(np.searchsorted(np.cumsum(pmf), _PB_TAIL, side="right"))
    right = int(np.searchsorted(np.cumsum(pmf[::-1]), _PB_TAIL, side="right"))
    keep_to = pmf.size - right
    if left >= keep_to:
        return offset, pmf, 0.0
    dropped = float(pmf[:left].sum() + pmf[keep_to:].sum())
    return offset + left, pmf[left:keep_to], dropped


def _batched_tree(rows: np.ndarray) -> list[np.ndarray]:
    """Convolve the rows of ``rows`` (pmfs starting at 0, zero-padded to one length) pairwise,
    level by level, all pairs of a level in one vectorized pass, until one row is left or the rows
    reach _BATCH_LENGTH. Direct sums of non-negative terms: no cancellation, unlike an FFT."""
    while rows.shape[0] > 1 and rows.shape[1] <= _BATCH_LENGTH:
        if rows.shape[0] % 2:
            unit = np.zeros((1, rows.shape[1]))
            unit[0, 0] = 1.0
            rows = np.vstack([rows, unit])
        left, right = rows[0::2], rows[1::2]
        width = rows.shape[1]
        merged = np.zeros((left.shape[0], 2 * width - 1))
        for i in range(width):
            merged[:, i : i + width] += left[:, i : i + 1] * right
        rows = merged
    return list(rows)


def poisson_binomial_pmf(
    probabilities: ArrayLike, counts: ArrayLike | None = None
) -> tuple[int, np.ndarray, float]:
    r"""Law of a sum of independent Bernoulli(:math:`r_i`) variables, exactly up to tails.

    ``counts`` (optional, same length, non-negative integers) says how many users share each
    probability, so that large homogeneous groups need no per-user array.

    Users with equal :math:`r_i` are grouped into binomials (only the bulk of each, see
    :func:`binomial_bulk`). Small groups (many distinct :math:`r_i`) are first combined in
    vectorized batches, level by level; then all parts are combined by a balanced tree of direct
    convolutions (no FFT, so small probabilities keep their relative accuracy), and after each step
    the outer tails holding less than 1e-20 are dropped. Cost for :math:`n` distinct values:
    :math:`O(n \cdot 256)` for the batched levels plus :math:`O(\sigma^2)` for the last merges,
    :math:`\sigma` the standard deviation. Returns ``(offset, pmf, dropped)``: ``pmf[j]`` is the
    probability of ``offset + j`` and ``dropped`` the total mass left out (add it to any divergence
    computed from ``pmf`` to keep an upper bound).

    >>> offset, pmf, dropped = poisson_binomial_pmf([0.5, 0.5])
    >>> offset, [round(float(x), 12) for x in pmf], dropped
    (0, [0.25, 0.5, 0.25], 0.0)
    """
    probs = np.asarray(probabilities, dtype=float)
    if probs.ndim != 1 or probs.size == 0:
        raise ValueError(f"probabilities must be a non-empty 1-D array, got shape {probs.shape}")
    if not np.all((probs >= 0) & (probs <= 1)):
        raise ValueError(f"probabilities must lie in [0, 1], got {probabilities!r}")
    weights = np.ones(probs.size, dtype=np.int64) if counts is None else np.asarray(counts)
    valid = weights.shape == probs.shape and np.issubdtype(weights.dtype, np.integer)
    if not valid or (weights < 0).any():
        raise ValueError(f"counts must be non-negative integers, one per value, got {counts}")
    values, groups = np.unique(probs, return_inverse=True)
    sizes = np.bincount(groups, weights=weights, minlength=values.size).astype(np.int64)
    values, sizes = values[sizes > 0], sizes[sizes > 0]
    parts, dropped = [(0, np.ones(1))], 0.0
    tiny = sizes <= _BATCH_GROUP
    if tiny.any():  # whole supports, zero-padded to one length, combined in batches
        support = np.arange(int(sizes[tiny].max()) + 1)
        rows = binom.pmf(support[None, :], sizes[tiny, None], values[tiny, None])  # 0 above m
        parts.extend((0, row) for row in _batched_tree(rows))
    for r, m in zip(values[~tiny], sizes[~tiny], strict=True):
        # small groups: the whole support (cheap); large ones: only their bulk, not all m + 1 values
        small = m <= _SMALL_GROUP
        low, high, lost = (0, int(m), 0.0) if small else binomial_bulk(int(m), float(r))
        parts.append((low, binom.pmf(np.arange(low, high + 1), int(m), float(r))))
        dropped += lost
    while len(parts) > 1:
        merged = []
        for i in range(0, len(parts) - 1, 2):
            (o1, p1), (o2, p2) = parts[i], parts[i + 1]
            offset, pmf, lost = _trim(o1 + o2, np.convolve(p1, p2))
            merged.append((offset, pmf))
            dropped += lost
        if len(parts) % 2:
            merged.append(parts[-1])
        parts = merged
    offset, pmf = parts[0]
    return offset, np.clip(pmf, 0.0, None), dropped
