"""Binomial tails, Poisson-binomial laws and binary-mixture divergences, with error bounds.

Shared by the shuffle accountants (:mod:`shuffle_lib.accounting.shuffle` and
:mod:`shuffle_lib.accounting.personalized`): every reduction there ends in a count whose law is a
binomial or Poisson-binomial, split evenly, plus one user's randomized-response bit.

Numerical contract. Binomial tails and probabilities come from SciPy's Boost routines
(``scipy.stats.binom.sf`` / ``pmf``), never from the Cephes ``bdtrc`` family, whose continued
fraction stops early at large arguments (``bdtrc(5e7, 1e8, 0.5)`` returns 0.39 for a true 0.49996).
Each value is trusted to the relative error :func:`value_rtol` of its number of trials and its
distance from the mean (the tests measure the routines against 40-digit mpmath values at random
points up to a billion trials: the error grows with both, to about 1e-11 at a billion).
Every divergence comes with an absolute error bound built from that tolerance, so that callers can
certify an upper bound that survives their own floating-point error. A non-finite value is an
error (``FloatingPointError``), never silently a zero.
"""

from __future__ import annotations

import warnings

import numpy as np
from numpy.typing import ArrayLike
from scipy.signal import fftconvolve
from scipy.special import expit
from scipy.stats import binom


def value_rtol(size: ArrayLike, deviation: ArrayLike = 0.0) -> np.ndarray | float:
    """Relative error granted to a tail or probability of Bin(size, p) at a point ``deviation``
    away from the mean size * p, from SciPy's Boost routines, and to sums built from them:
    ``4e-16 (16 + sqrt(size) + 2 |deviation| + 16 deviation^2 / size)``. The error comes from the
    exponent of the probability, computed to an absolute error that grows with the size, the
    deviation and the exponent itself (about 2 deviation^2 / size); the tests measure it against
    mpmath at random points out to 37 standard deviations and find it below half of this."""
    size_arr = np.asarray(size, dtype=float)
    dev = np.abs(np.asarray(deviation, dtype=float))
    return 4e-16 * (16.0 + np.sqrt(size_arr) + 2 * dev + 16 * dev * dev / np.maximum(size_arr, 1))


#: Absolute error granted to values near underflow: Boost returns 0 for some tails as large as
#: 3e-255 (and subnormal numbers lose relative precision), so anything below this is not trusted.
UNDERFLOW = 1e-240
#: Count laws are truncated so that the mass left out is at most this fraction of the target delta
#: (the mass is added back to upper bounds, so truncation costs tightness, never validity).
TRUNCATION = 1e-12


def _finite(values: np.ndarray, what: str) -> np.ndarray:
    if not np.all(np.isfinite(values)):
        raise FloatingPointError(f"non-finite {what}: {values[~np.isfinite(values)][:5]}")
    return values


# The hot paths call the distribution's Boost kernels (``binom._sf``, ``_pmf``, ``_cdf``,
# ``_ppf``) directly: the public methods spend most of their time re-checking arguments that are
# valid by construction here (integer k, size >= 0, prob in [0, 1]); SciPy is pinned and the tests
# compare both routes.


def binomial_sf(k: ArrayLike, size: ArrayLike, prob: float) -> np.ndarray:
    """P(Bin(size, prob) > k) for integers k (any sign), vectorized (Boost; tails below about
    1e-250 may come back as 0, see :data:`UNDERFLOW`)."""
    k_arr = np.asarray(k)
    size_arr = np.broadcast_to(np.asarray(size), k_arr.shape)
    inside = np.clip(k_arr, 0, size_arr)
    tail = np.where(k_arr < 0, 1.0, binom._sf(inside, size_arr, prob))
    return _finite(np.where(k_arr >= size_arr, 0.0, tail), "binomial tail")


def binomial_pmf(k: ArrayLike, size: ArrayLike, prob: ArrayLike) -> np.ndarray:
    """P(Bin(size, prob) = k) for integers k (any sign), vectorized and broadcast over all three
    (Boost, relative accuracy; 0 outside the support)."""
    k_arr, size_arr, prob_arr = np.broadcast_arrays(np.asarray(k), np.asarray(size),
                                                    np.asarray(prob, dtype=float))
    inside = (k_arr >= 0) & (k_arr <= size_arr)
    pmf = np.where(inside, binom._pmf(np.clip(k_arr, 0, size_arr), size_arr, prob_arr), 0.0)
    return _finite(pmf, "binomial probability")


def _quantile(mass: float, size: int, prob: float) -> int:
    """Smallest k with P(Bin(size, prob) <= k) >= ``mass``: SciPy's quantile, or a bisection on
    the lower tail where Boost gives up (it warns and returns a guess when the tail at 0 is far
    below ``mass``, e.g. Bin(154, 0.9975) at 1e-240)."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        try:
            guess = float(binom._ppf(mass, size, prob))
        except RuntimeWarning:
            guess = np.nan
    if np.isfinite(guess):
        return int(guess)
    below, above = -1, size  # P(X <= -1) = 0 < mass <= P(X <= size) = 1
    while above - below > 1:
        middle = (below + above) // 2
        if binom._cdf(middle, size, prob) >= mass:
            above = middle
        else:
            below = middle
    return above

def binomial_bulk(size: int, prob: float, mass: float) -> tuple[int, int, float]:
    """Range [low, high] holding all but about ``2 * mass`` of Bin(size, prob), and the mass left
    out, rounded up by :func:`value_rtol`. Both ends come from quantile functions (the upper one
    through the mirror law Bin(size, 1 - prob)); when 1 - prob has lost too much precision for that
    (it rounds to 1 for tiny prob), the upper end comes from a bisection on the upper tail. The
    mass left out is then computed from the tails themselves, not taken from the quantiles."""
    if prob == 0 or size == 0:
        return 0, 0, 0.0
    if prob == 1:
        return size, size, 0.0
    mass = max(mass, UNDERFLOW)
    low = max(_quantile(mass, size, prob), 0)
    high = min(size - _quantile(mass, size, 1 - prob), size)
    if binomial_sf(high, size, prob) > 2 * mass:
        below, above = int(np.floor(size * prob)), size  # sf(above) = 0 <= mass
        while above - below > 1:
            middle = (below + above) // 2
            if binomial_sf(middle, size, prob) <= mass:
                above = middle
            else:
                below = middle
        high = above
    left = float(binom._cdf(low - 1, size, prob)) if low > 0 else 0.0
    left_out = float(_finite(np.asarray(left + binomial_sf(high, size, prob)), "tail mass"))
    spread = max(abs(low - size * prob), abs(high - size * prob))
    return low, high, left_out * (1 + float(value_rtol(size, spread)))


#: Every this many consecutive counts, the deep tail is taken from Boost; in between, from the
#: recurrence of :func:`_deep_tails`.
_ANCHOR_EVERY = 64


def _deep_tails(
    c: np.ndarray, t: np.ndarray, b0: np.ndarray, rtol: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    r""":math:`D_c=P(B_c\ge t_c+1)` for every count, and an absolute error bound on it; ``rtol``
    holds the :func:`value_rtol` of each count at its threshold.

    When the counts are consecutive and the thresholds rise by 0 or 1 per count (always so for
    one keep probability), the tails follow from one another: adding a fair coin gives
    :math:`P(B_{c+1}\ge x)=P(B_c\ge x)+\tfrac12 b_c(x-1)`, hence, walking down from :math:`c+1`
    to :math:`c`, :math:`D_c=D_{c+1}+\tfrac12 b_c(t_c+1)` if the threshold drops and
    :math:`D_c=D_{c+1}-\tfrac12 b_c(t_c)` if it stays. Walking down is the stable direction on
    the whole (errors are not amplified over a block, though single steps can shrink the tail).
    Every :data:`_ANCHOR_EVERY` counts the chain restarts from a Boost tail. The bound is the
    anchor's relative error plus that of every increment, both carried along the block, plus the
    rounding of the running sums (:math:`2u\sum|\text{partial sums}|`). Otherwise every tail is a
    Boost call, with its own relative error.
    """
    steps = np.diff(t)
    chained = c.size > 1 and np.all(np.diff(c) == 1) and np.all((steps == 0) | (steps == 1))
    if not chained:
        deep = binomial_sf(t, c, 0.5)
        return deep, rtol * deep
    # reversed: position j holds count c_top - j; increment from position j - 1 to j
    c_r, t_r, b0_r = c[::-1], t[::-1], b0[::-1]
    b_next = b0_r * (c_r - t_r) / (t_r + 1)  # b_c(t_c + 1)
    increment = np.empty(c.size)
    increment[1:] = np.where(steps[::-1] == 1, 0.5 * b_next[1:], -0.5 * b0_r[1:])
    anchors = np.arange(0, c.size, _ANCHOR_EVERY)
    increment[anchors] = binomial_sf(t_r[anchors], c_r[anchors], 0.5)
    pad = (-c.size) % _ANCHOR_EVERY
    blocks = np.concatenate([increment, np.zeros(pad)]).reshape(-1, _ANCHOR_EVERY)
    sums = np.cumsum(blocks, axis=1)
    spread = np.cumsum(np.abs(sums), axis=1) * np.finfo(float).eps
    rtol_r = rtol[::-1]
    padded_rtol = np.concatenate([rtol_r, np.full(pad, rtol_r[-1])]).reshape(-1, _ANCHOR_EVERY)
    moved = np.abs(blocks) * padded_rtol
    extra = spread + np.cumsum(moved, axis=1)  # the anchor's own error carried along the block
    deep = np.clip(sums.ravel()[: c.size], 0.0, None)
    return deep[::-1].copy(), extra.ravel()[: c.size][::-1].copy()


def mixture_divergence(
    counts: np.ndarray, keep: ArrayLike, flip: ArrayLike, eps: float, level: float | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    r"""For every :math:`c` in ``counts``, :math:`H_c=H_{e^\varepsilon}(P_c\|Q_c)` with
    :math:`P_c=B_c+\mathrm{Bern}(k)`, :math:`Q_c=B_c+\mathrm{Bern}(1-k)`,
    :math:`B_c\sim\mathrm{Bin}(c,1/2)`; also :math:`dH_c/d\varepsilon` and an absolute error bound.

    ``keep`` :math:`=k\ge 1/2` and ``flip`` :math:`=1-k` are scalars or one per count, passed
    separately so that :math:`1-k` keeps its relative precision when :math:`k` rounds to 1. When
    they come from a local level :math:`\varepsilon_0`
    (:math:`k=e^{\varepsilon_0}/(1+e^{\varepsilon_0})`), pass it as ``level``: the two
    coefficients below are then computed without cancellation.

    With :math:`g=k-e^\varepsilon(1-k)`, :math:`\ell=e^\varepsilon k-(1-k)` and :math:`b` the pmf
    of :math:`B_c`, :math:`P_c(x)-e^\varepsilon Q_c(x)=g\,b(x-1)-\ell\,b(x)`, positive exactly for
    :math:`x\ge t=\lfloor(c+1)\ell/(g+\ell)\rfloor+1`, so
    :math:`H_c=g\,T(t-1)-\ell\,T(t)` with :math:`T(x)=P(B_c\ge x)`. The float threshold can be off
    by one, so the events :math:`\{x\ge t-1\}, \{x\ge t\}, \{x\ge t+1\}` are all evaluated and the
    best kept. Only the deepest tail :math:`T(t+1)` is a tail (see :func:`_deep_tails`); the
    three shallower ones add probabilities to it (no cancellation). By the envelope theorem
    :math:`dH_c/d\varepsilon=-e^\varepsilon Q_c(E)` on the optimal event :math:`E`.

    Error bound, proportionate to each count's own value (:func:`_divergence_terms`): a candidate
    is :math:`(g-\ell)\,T(t+1)` plus a local part made of at most three probabilities, all
    multiples of :math:`b(t-1)`. As :math:`g-\ell=1-e^\varepsilon` exactly, the deep tail's bound
    counts :math:`e^\varepsilon-1` times (not :math:`g+\ell` times, which at small
    :math:`\varepsilon` and huge :math:`c`, where the value is a small difference of the two tail
    terms, made the bar thousands of times the value's actual error), and the local part carries
    :func:`value_rtol` of its own value, plus its rounding; the kept candidate is the one whose
    value plus error is largest, and that sum bounds :math:`H_c` from above because the true
    optimum is one of the candidates. The bound is two-sided: the value minus it is below
    :math:`H_c`. The coefficients themselves carry an
    error (from rounding :math:`k`, :math:`1-k` and :math:`e^\varepsilon`):
    :math:`g=(1-k)e^\varepsilon\,\mathrm{expm1}(\varepsilon_0-\varepsilon)` and
    :math:`\ell=(1-k)\,\mathrm{expm1}(\varepsilon_0+\varepsilon)` are within 8 units of
    roundoff (relative) when ``level`` is given, :math:`k-e^\varepsilon(1-k)` within
    :math:`4u(k+e^\varepsilon(1-k))` (absolute) otherwise; each candidate's bound adds these
    errors times the probabilities of its local part (that of :math:`g-\ell` times the deep
    tail), and a count whose :math:`g` is not certainly positive contributes
    0 with error :math:`|g|` plus that error. :data:`UNDERFLOW` is added. Counts with
    :math:`g\le 0` for sure contribute 0 (every likelihood ratio is then at most
    :math:`e^\varepsilon`). If the coefficients are too uncertain to place the threshold within
    one count (tiny :math:`\varepsilon_0` at huge :math:`c`), ``ValueError``.
    """
    counts = np.asarray(counts, dtype=np.int64)
    scale = np.exp(eps)
    rounding = 2 * np.finfo(float).eps  # 4 units of roundoff
    if level is not None:  # no cancellation: relative errors only
        f = float(flip)
        k: ArrayLike = float(keep)
        # g = (e^level - e^eps) / (1 + e^level), ell = (e^(level + eps) - 1) / (1 + e^level),
        # written with k = expit(level) so that nothing overflows or underflows at any level
        # (1 - k underflows to 0 past level 709; only e^eps must be finite)
        g = k * -np.expm1(eps - level)
        ell = k * scale * -np.expm1(-(level + eps))
        dg, dl = 2 * rounding * abs(g), 2 * rounding * ell
    else:
        k = np.asarray(keep, dtype=float)
        f = np.asarray(flip, dtype=float)
        g, ell = k - scale * f, scale * k - f
        dg, dl = rounding * (k + scale * f), rounding * (scale * k + f)
    shape = counts.shape
    if all(np.ndim(x) == 0 for x in (g, ell, dg, dl, k, f)):  # one keep probability: no masks
        if g > dg:
            return _divergence_terms(counts, k, f, scale, g, ell, dg, dl, eps)
        doubt = max(g, 0.0) + dg if g > -dg else 0.0  # H_c <= max(g, 0) + dg for sure
        return np.zeros(shape), np.zeros(shape), np.full(shape, doubt)
    g, ell, dg, dl, k, f = (np.broadcast_to(x, shape) for x in (g, ell, dg, dl, k, f))
    value, slope, error = np.zeros(shape), np.zeros(shape), np.zeros(shape)
    uncertain = (g <= dg) & (g > -dg)  # H_c <= max(g, 0) + dg for sure, nothing better
    error[uncertain] = np.maximum(g[uncertain], 0.0) + dg[uncertain]
    active = g > dg
    if active.any():
        parts = _divergence_terms(
            counts[active], k[active], f[active], scale, g[active], ell[active],
            dg[active], dl[active], eps,
        )
        for full, part in zip((value, slope, error), parts, strict=True):
            full[active] = part
    return value, slope, error


def _gap(
    eps: float, g: ArrayLike, ell: ArrayLike, dg: ArrayLike, dl: ArrayLike
) -> tuple[ArrayLike, ArrayLike]:
    r""":math:`g-\ell` and an absolute error bound. Since :math:`k+(1-k)=1`, it is exactly
    :math:`1-e^\varepsilon`, computed as ``-expm1(eps)`` (within 4 units of roundoff, relative)
    whenever that agrees with the coefficients given within their error bars; otherwise (or if it
    overflows) as their float difference, within ``dg + dl`` plus its own rounding."""
    half_ulp = np.finfo(float).eps / 2
    with np.errstate(over="ignore"):
        exact = -np.expm1(eps)
    exact_error = 4 * half_ulp * abs(exact)
    diff = g - ell
    diff_error = dg + dl + half_ulp * np.abs(diff)
    if np.isfinite(exact) and np.all(np.abs(diff - exact) <= diff_error + exact_error):
        return exact, exact_error
    return diff, diff_error


def _divergence_terms(
    c: np.ndarray, k: ArrayLike, f: ArrayLike, scale: float, g: ArrayLike, ell: ArrayLike,
    dg: ArrayLike, dl: ArrayLike, eps: float,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    r"""The body of :func:`mixture_divergence` for counts where the gain is certainly positive.

    Each candidate :math:`g\,T(j-1)-\ell\,T(j)` is evaluated as
    :math:`(g-\ell)\,T(t+1)+\bigl(g\,S_{j-1}-\ell\,S_j\bigr)` with :math:`S_j=T(j)-T(t+1)` a sum
    of at most three probabilities, all multiples of :math:`b(t-1)`. The deep tail enters with the
    small coefficient :math:`g-\ell=1-e^\varepsilon` (:func:`_gap`), and the local part's
    relative error is that of the one probability it is built from, so every error term is
    proportionate to the value: at large counts and small :math:`\varepsilon` the value is a
    small difference of the two tail terms, which no longer multiplies their error bars."""
    share = ell / (g + ell)  # in [1/2, 1)
    # how far the threshold (c + 1) share can move under the coefficients' errors, written with
    # ratios so that nothing underflows when g and ell are tiny
    rel_g, rel_l = dg / (g + ell), dl / (g + ell)
    drift = (rel_g * share + rel_l * (1 - share)) / (1 - rel_g - rel_l)
    if np.max((c.max() + 1) * drift) > 0.5:
        raise ValueError("the likelihood-ratio threshold cannot be placed within one count: the "
                         "local levels (eps0, eps_i) are too small, their keep probability too "
                         "close to 1/2, for this many users n")
    t = np.minimum(np.floor(share * (c + 1)).astype(np.int64) + 1, c + 1)
    half_ulp = np.finfo(float).eps / 2
    ratio_0 = (c - t + 1) / t  # b(t) / b(t - 1); t >= 1
    ratio_2 = (t - 1) / (c - t + 2)  # b(t - 2) / b(t - 1); c - t + 2 >= 1
    b1 = binomial_pmf(t - 1, c, 0.5)  # b(t - 1)
    b0, b2 = b1 * ratio_0, b1 * ratio_2  # b(t), b(t - 2)
    rtol = value_rtol(c, t - c / 2)
    if np.max(rtol) >= 0.5:
        raise FloatingPointError(f"binomial values too inexact for {c.max()} trials")
    deep, deep_error = _deep_tails(c, t, b0, rtol)  # T(t + 1) and its absolute error bound
    gap, gap_error = _gap(eps, g, ell, dg, dl)
    tilted = gap * deep
    # shared by the three candidates: the deep tail's error, the gap's, the rounding of the
    # product and of the final sum, and values near underflow (a probability b(x) of the local
    # parts below UNDERFLOW, times at most 2c + 3 for the ratios that multiply b(t - 1))
    shared = ((np.abs(gap) + gap_error) * deep_error + gap_error * deep
              + 2 * half_ulp * np.abs(tilted) + (g + ell) * UNDERFLOW * (2 * c + 4))
    # the local part g S_a - l S_b = b(t - 1) (g R_a - l R_b): relative error rtol from b(t - 1),
    # plus the coefficients' errors and 8 roundings (ratios, sums, products) on each of its terms;
    # the factor turns bounds relative to the true values into bounds relative to the computed
    # ones; 2u more of the local part for the final sum
    inflate = (1 + rtol) / (1 - rtol) ** 2 * (1 + 16 * half_ulp)
    per_local = inflate * rtol + 2 * half_ulp
    per_a = inflate * (dg + 8 * half_ulp * g)
    per_b = inflate * (dl + 8 * half_ulp * ell)
    # the three events {x >= t - 1}, {x >= t}, {x >= t + 1}: value and value plus error bound;
    # each value plus its bound (plus ``shared``) is above its true value and the true optimum is
    # one of them, so the largest such sum bounds H_c from above
    b01 = b0 + b1
    value = upper = chosen_a = chosen_b = None
    for sum_a, sum_b in ((b01 + b2, b01), (b01, b0), (b0, 0.0)):
        local = g * sum_a - ell * sum_b
        candidate = tilted + local
        candidate_upper = candidate + (per_local * np.abs(local) + per_a * sum_a + per_b * sum_b)
        if value is None:
            value, upper, chosen_a, chosen_b = candidate, candidate_upper, sum_a, sum_b
            continue
        better = candidate_upper > upper
        value = np.where(better, candidate, value)
        upper = np.where(better, candidate_upper, upper)
        chosen_a, chosen_b = np.where(better, sum_a, chosen_a), np.where(better, sum_b, chosen_b)
    q_event = f * (deep + chosen_a) + k * (deep + chosen_b)  # Q of the kept event
    positive = np.maximum(value, 0.0)
    error = np.maximum(upper, 0.0) - positive + shared
    slope = np.where(positive > 0, -scale * q_event, 0.0)
    return positive, slope, error


def averaged_mixture_divergence(
    weights: np.ndarray, counts: np.ndarray, keep: ArrayLike, flip: ArrayLike, eps: float,
    weight_rtol: float, level: float | None = None,
) -> tuple[float, float, float]:
    r""":math:`\sum_c w_c H_c` for the pairs of :func:`mixture_divergence`, its derivative in
    :math:`\varepsilon`, and an absolute error bound (the per-count bounds, plus ``weight_rtol``
    of the sum for the weights' own relative error and the summation)."""
    value, slope, error = mixture_divergence(counts, keep, flip, eps, level)
    total = float(np.dot(weights, value))
    bound = float(np.dot(weights, error)) + weight_rtol * total
    return total, float(np.dot(weights, slope)), bound


#: Convolutions above this many multiply-adds use the FFT (with its error bound) instead of sums.
_DIRECT_WORK = 4_000_000
#: Constant of the FFT convolution error bound ``c u log2(L) max(|x|_2 |y|_1, |x|_1 |y|_2)`` per
#: entry (u the unit roundoff; the tests compare against direct sums and find it conservative).
_FFT_CONSTANT = 16.0


def fft_error_bound(first: np.ndarray, second: np.ndarray) -> float:
    """Absolute rounding error bound per entry of an FFT convolution of ``first`` and ``second``:
    ``16 u log2(L) max(|x|_2 |y|_1, |x|_1 |y|_2)`` (L the length, u = 2^-53; the tests find it far
    above the error seen)."""
    length = first.size + second.size - 1
    norms = max(np.linalg.norm(first) * np.abs(second).sum(),
                np.abs(first).sum() * np.linalg.norm(second))
    return float(_FFT_CONSTANT * np.finfo(float).eps / 2 * np.log2(length) * norms)


#: Default tail mass dropped at each step of the Poisson-binomial computation.
_PB_TAIL = 1e-20
#: Groups up to this size are tabulated over their whole support.
_SMALL_GROUP = 4096
#: Groups this small are convolved in batches (padded to one length, all pairs at once).
_BATCH_GROUP = 15
#: The batched tree stops once its arrays are this long; the per-pair tree takes over.
_BATCH_LENGTH = 256


def _trim(offset: int, pmf: np.ndarray, tail: float) -> tuple[int, np.ndarray, float]:
    """Drop the outer entries holding less than ``tail`` on each side; return the mass dropped."""
    left = int(np.searchsorted(np.cumsum(pmf), tail, side="right"))
    right = int(np.searchsorted(np.cumsum(pmf[::-1]), tail, side="right"))
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
    probabilities: ArrayLike, counts: ArrayLike | None = None, tail: float = _PB_TAIL, *,
    with_rtol: bool = False,
) -> tuple[int, np.ndarray, float] | tuple[int, np.ndarray, float, float]:
    r"""Law of a sum of independent Bernoulli(:math:`r_i`) variables, exactly up to tails.

    ``counts`` (optional, same length, non-negative integers) says how many users share each
    probability, so that large homogeneous groups need no per-user array.

    Users with equal :math:`r_i` are grouped into binomials (only the bulk of each, see
    ``binomial_bulk``). Small groups (many distinct :math:`r_i`) are first combined in
    vectorized batches, level by level; then all parts are combined by a balanced tree of direct
    convolutions (so small probabilities keep their relative accuracy; merges of more than 4e6
    multiply-adds use the FFT, whose error bound times the length is added to ``dropped``, so the
    returned mass still bounds what any divergence computed from ``pmf`` can miss), and after each
    step the outer tails holding less than ``tail`` (default 1e-20) are dropped. Cost for
    :math:`n` distinct values:
    :math:`O(n \cdot 256)` for the batched levels plus :math:`O(\sigma^2)` for the last merges,
    :math:`\sigma` the standard deviation. Returns ``(offset, pmf, dropped)``: ``pmf[j]`` is the
    probability of ``offset + j`` and ``dropped`` the total mass left out (add it to any divergence
    computed from ``pmf`` to keep an upper bound).

    ``with_rtol=True`` (for floors, which need every entry to keep its relative accuracy, however
    small) adds a fourth value, a relative error bound that holds for every entry of ``pmf``, for
    the float probabilities given: the Boost error of each binomial part at its farthest kept
    count (``value_rtol``), summed over the groups a batched row combines, plus 1022 units of
    roundoff for the batched levels (each entry sums at most as many products as its row is long,
    and the lengths of the levels sum to at most 1022); then, per merge, both parts' bounds plus
    (shorter length + 2) units for direct sums, or 1e-15 for an FFT (whose absolute error goes
    into ``dropped``). ``dropped`` then also counts ``UNDERFLOW`` (1e-240) per binomial part and per
    merge (values near underflow have no relative accuracy): an absolute allowance per entry.

    >>> offset, pmf, dropped = poisson_binomial_pmf([0.5, 0.5])
    >>> offset, [round(float(x), 12) for x in pmf], dropped
    (0, [0.25, 0.5, 0.25], 0.0)
    """
    probs = np.asarray(probabilities, dtype=float)
    if probs.ndim != 1 or probs.size == 0:
        raise ValueError(f"probabilities must be a non-empty 1-D array, got shape {probs.shape}")
    if not 0 < tail < 1:
        raise ValueError(f"tail must lie in (0, 1), got {tail!r}")
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
    rtols = [0.0]  # relative error bound of each part (only reported with ``with_rtol``)
    unit = np.finfo(float).eps
    tiny = sizes <= _BATCH_GROUP
    if tiny.any():  # whole supports, zero-padded to one length, combined in batches
        support = np.arange(int(sizes[tiny].max()) + 1)
        rows = binomial_pmf(support[None, :], sizes[tiny, None], values[tiny, None])  # 0 above m
        batched = _batched_tree(rows)
        # each batched level doubles the groups of a row: 2^levels = (length - 1) / (m + 1 - 1)
        per_row = min(int(tiny.sum()), (batched[0].size - 1) // (support.size - 1))
        boost = float(np.max(value_rtol(sizes[tiny], sizes[tiny])))
        parts.extend((0, row) for row in batched)
        rtols.extend([per_row * boost + 1022 * unit] * len(batched))
        dropped += UNDERFLOW * int(tiny.sum()) if with_rtol else 0.0
    for r, m in zip(values[~tiny], sizes[~tiny], strict=True):
        # small groups: the whole support (cheap); large ones: only their bulk, not all m + 1 values
        small = m <= _SMALL_GROUP
        low, high, lost = (0, int(m), 0.0) if small else binomial_bulk(int(m), float(r), tail)
        parts.append((low, binomial_pmf(np.arange(low, high + 1), int(m), float(r))))
        rtols.append(float(value_rtol(int(m), max(abs(low - m * r), abs(high - m * r)))))
        dropped += lost + (UNDERFLOW if with_rtol else 0.0)
    while len(parts) > 1:
        merged, merged_rtols = [], []
        for i in range(0, len(parts) - 1, 2):
            (o1, p1), (o2, p2) = parts[i], parts[i + 1]
            both = rtols[i] + rtols[i + 1] + rtols[i] * rtols[i + 1]
            if p1.size * p2.size <= _DIRECT_WORK:
                product = np.convolve(p1, p2)
                both += (min(p1.size, p2.size) + 2) * unit
            else:  # large merges by FFT; its error, summed over the entries, counts as dropped
                product = np.clip(fftconvolve(p1, p2), 0.0, None)
                dropped += fft_error_bound(p1, p2) * product.size
                both += 1e-15
            offset, pmf, lost = _trim(o1 + o2, product, tail)
            merged.append((offset, pmf))
            merged_rtols.append(both)
            dropped += lost + (UNDERFLOW if with_rtol else 0.0)
        if len(parts) % 2:
            merged.append(parts[-1])
            merged_rtols.append(rtols[-1])
        parts, rtols = merged, merged_rtols
    offset, pmf = parts[0]
    if with_rtol:
        return offset, np.clip(pmf, 0.0, None), dropped, float(rtols[0])
    return offset, np.clip(pmf, 0.0, None), dropped


def poisson_binomial_rtol(n: int, parts: int, spread: float | None = None) -> float:
    """Relative error granted to a Poisson-binomial law of n users in ``parts`` groups computed by
    :func:`poisson_binomial_pmf`: its binomial parts' (Boost) error, each part summed within
    ``spread`` of its mean (default 32 standard deviations, the bulk kept for any mass above
    1e-220), plus, when there are several parts, the rounding of the direct convolutions: each
    sums at most 2000 non-negative products (larger merges go through the FFT, whose error is
    counted as dropped mass), over at most log2(parts) + 10 levels."""
    binomial = 2 * float(value_rtol(n, 32 * np.sqrt(n) if spread is None else spread))
    merges = 0.0 if parts == 1 else 2000 * np.finfo(float).eps * (np.log2(parts) + 10)
    return binomial + merges


class CloneCountReduction:
    r"""The clone reduction for one target who reports one bit by randomized response at ``level``
    among people who each send a clone with their own probability (``clone_probs``, with
    ``sizes`` people sharing each), the part of the target's report that is not
    :math:`\varepsilon`-LDP (probability ``exposed``) counted as fully exposed:

    .. math::
        \delta(\varepsilon) = \delta_t + (1-\delta_t)\Big(\sum_c P(C=c)\,
            H_{e^\varepsilon}\big(B_c+\mathrm{Bern}(k)\,\big\|\,B_c+\mathrm{Bern}(1-k)\big)
            + \text{tails}\Big),

    :math:`C` Poisson-binomial (the other users' clones), :math:`B_c\sim\mathrm{Bin}(c,1/2)`,
    :math:`k=e^{\varepsilon_t}/(1+e^{\varepsilon_t})`. The number of informative reports
    :math:`C+1` is visible and has the same law under both datasets, so the divergence is exactly
    this average over :math:`c`. ``bound(eps)`` returns a certified upper bound on it (every
    error of :func:`averaged_mixture_divergence`, the truncated mass, which is at most
    ``truncation`` in all) and its derivative. Clone probabilities are lowered by 8 machine
    epsilons first: fewer clones can only increase the divergence (an extra clone is a fair coin
    added to both hypotheses), so the floats never grant more blanket than the reduction does.
    Shared by the amplification accountants (equal probabilities, Feldman, McMillan & Talwar
    2021) and the personalized ones (Chen, Cao & Ge, GSPA, Theorem 1).

    Every finite ``level`` is valid. Once :math:`e^\varepsilon\ge c_{\max}+1` (the largest count
    kept), every outcome but the top one of each count has likelihood ratio below
    :math:`e^\varepsilon`, so :math:`H_c=2^{-c}(k-e^\varepsilon(1-k))_+` and ``bound`` uses the
    closed form :math:`k(1-e^{\varepsilon-\varepsilon_t})\,\mathbb E[2^{-C}]` (16 units of
    roundoff, ``weight_rtol`` and the summation of :math:`\mathbb E[2^{-C}]`, plus
    :data:`UNDERFLOW`): no :math:`e^\varepsilon` is formed, so levels past 709 (where it
    overflows) and up to the float limit are handled exactly.
    """

    def __init__(
        self, clone_probs: np.ndarray, sizes: np.ndarray, level: float, truncation: float,
        exposed: float = 0.0,
    ) -> None:
        # each merge or group drops at most 2 tails: the total stays below ``truncation``
        tail = truncation / (2 * clone_probs.size + 2)
        # a clone probability rounded up would grant more blanket than the reduction does
        safe_probs = clone_probs * (1 - 8 * np.finfo(float).eps)
        offset, self.weights, dropped = poisson_binomial_pmf(safe_probs, sizes, tail=tail)
        self.counts = offset + np.arange(self.weights.size)
        users = int(sizes.sum())
        spread = None  # one group: its bulk is the support, so its reach is known
        if np.count_nonzero(sizes) == 1:
            mean = float(np.dot(sizes, safe_probs))
            spread = max(abs(self.counts[0] - mean), abs(self.counts[-1] - mean))
        self.weight_rtol = poisson_binomial_rtol(users + 1, np.count_nonzero(sizes), spread)
        self.dropped = dropped * (1 + self.weight_rtol)
        self.level = level
        self.keep, self.flip = float(expit(level)), float(expit(-level))
        self.exposed = exposed
        # From e^eps >= c + 1 on, only the top outcome x = c + 1 of each count has a likelihood
        # ratio above e^eps (every other ratio is at most (k c + 1 - k) / ((1 - k) c + k) < c),
        # so H_c = 2^-c (k - e^eps (1 - k))_+ and the average is g(eps) E[2^-C]: a closed form
        # that holds at every level and every eps (nothing overflows; see :meth:`bound`).
        top = int(self.counts[-1]) if self.counts.size else 0
        self.closed_from = float(np.log1p(top)) * (1 + 4 * np.finfo(float).eps)
        # w_c 2^-c, exact scaling (0, or a subnormal, past 2^-1074: UNDERFLOW covers those)
        halves = np.ldexp(self.weights, -np.minimum(self.counts, 1100).astype(np.int32))
        self.top_mass = float(halves.sum())
        self.top_error = ((self.weight_rtol + halves.size * np.finfo(float).eps)
                          * self.top_mass + UNDERFLOW)

    def bound(self, eps: float) -> tuple[float, float]:
        """A certified upper bound on delta(eps) and its derivative in eps."""
        if eps >= self.level:
            return self.exposed, 0.0  # every other likelihood ratio is at most e^level
        if eps >= self.closed_from:
            # g = k (1 - e^(eps - level)) within 8 units of roundoff (relative), any level
            g = self.keep * -np.expm1(eps - self.level)
            summed = g * self.top_mass
            error = g * self.top_error + 16 * np.finfo(float).eps * summed
            slope = -self.keep * float(np.exp(eps - self.level)) * self.top_mass
        else:
            summed, slope, error = averaged_mixture_divergence(
                self.weights, self.counts, self.keep, self.flip, eps, self.weight_rtol,
                self.level,
            )
        upper = self.exposed + (1 - self.exposed) * (summed + error + self.dropped)
        return min(1.0, float(upper)), (1 - self.exposed) * float(slope)
