"""Exact privacy accounting for mechanisms with finitely many outputs.

A finite mechanism is a *channel*: a row-stochastic matrix ``C`` whose row ``x`` is the output
distribution on input (or dataset) ``x``. These functions compute its privacy parameters exactly,
which is how the book and the tests check every closed-form claim on small instances.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sized

import numpy as np
from numpy.typing import ArrayLike
from scipy.special import logsumexp

from shuffle_lib._numerics import bisect, scalar_or_array
from shuffle_lib._validation import check_array, check_epsilon, check_instance, check_real

#: Largest Rényi order accepted: (alpha - 1) times a log-likelihood ratio of doubles (at most
#: about 1490 in size) then stays far below the float range.
ALPHA_MAX = 1e300
#: Smallest bisection tolerance accepted: bisection cannot narrow a bracket below the spacing of
#: doubles, so a smaller tolerance would never be met.
TOL_MIN = float(np.finfo(float).eps)
#: Largest number of (ordered pair of rows, output) terms that a pairwise maximum without a linear
#: form (:func:`channel_delta`, :func:`shuffle_lib.audit.worst_pair` at ``delta > 0``) examines:
#: 1,000 rows of 10 outputs, or 3,162 rows of one, over all ordered pairs. Checked before any work.
MAX_PAIR_TERMS = 10**7
#: Entries of a pairs-by-outputs block evaluated at once (2 MiB of doubles per temporary).
_BLOCK = 2**18


def _check_distribution(p: ArrayLike, name: str) -> np.ndarray:
    arr = check_array(p, name, ndim=1)
    if (arr < 0).any() or abs(arr.sum() - 1.0) > 1e-9:
        raise ValueError(f"{name} must be non-negative and sum to 1, got {p!r}")
    return arr


def check_distribution_pair(p: ArrayLike, q: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    """Return ``p`` and ``q`` as probability vectors of the same length, or raise (``TypeError``
    for non-numbers, ``ValueError`` for a wrong shape, NaN, infinities, negative entries or sums
    other than 1 within 1e-9).

    >>> check_distribution_pair([0.75, 0.25], [0.5, 0.5])
    (array([0.75, 0.25]), array([0.5, 0.5]))
    """
    p_arr = _check_distribution(p, "p")
    q_arr = _check_distribution(q, "q")
    if p_arr.shape != q_arr.shape:
        raise ValueError(f"p and q must have the same length, got {p_arr.size} and {q_arr.size}")
    return p_arr, q_arr


def check_channel(channel: ArrayLike) -> np.ndarray:
    """Return ``channel`` as a float matrix after checking that every row is a distribution
    (``TypeError`` for non-numbers, ``ValueError`` for a wrong shape, NaN, infinities, negative
    entries or row sums other than 1 within 1e-9).

    >>> check_channel([[0.75, 0.25], [0.25, 0.75]])
    array([[0.75, 0.25],
           [0.25, 0.75]])
    """
    arr = check_array(channel, "channel", ndim=2)
    if (arr < 0).any():
        raise ValueError(f"channel entries must be non-negative, got minimum {arr.min()!r}")
    sums = arr.sum(axis=1)
    if np.abs(sums - 1.0).max() > 1e-9:
        raise ValueError(f"channel rows must sum to 1, got row sums {sums}")
    return arr


def _check_pair_terms(terms: int, outputs: int, what: str) -> None:
    if terms * outputs > MAX_PAIR_TERMS:
        raise ValueError(f"{what}: {terms} ordered pairs of rows x {outputs} outputs = "
                         f"{terms * outputs} terms exceed the documented limit {MAX_PAIR_TERMS} "
                         f"(MAX_PAIR_TERMS)")


def _pairs(n_rows: int, pairs: Iterable[tuple[int, int]] | None, outputs: int | None = None
           ) -> np.ndarray:
    """The ordered pairs as an ``(m, 2)`` int array: every ordered pair of different rows in
    lexicographic order when ``pairs`` is None, else the given ones, checked. With ``outputs``,
    more than :data:`MAX_PAIR_TERMS` pair-output terms raise ``ValueError`` before any work."""
    if pairs is None:
        if outputs is not None:
            _check_pair_terms(n_rows * (n_rows - 1), outputs, "channel (every pair of rows)")
        first, second = np.divmod(np.arange(n_rows * n_rows), n_rows)
        keep = first != second
        return np.stack([first[keep], second[keep]], axis=1)
    check_instance(pairs, "pairs", Iterable)
    if outputs is not None and isinstance(pairs, Sized):
        _check_pair_terms(len(pairs), outputs, "pairs")
    out = []
    for pair in pairs:
        indices = tuple(pair) if isinstance(pair, tuple | list) else ()
        if len(indices) != 2 or any(isinstance(v, bool) or not isinstance(v, int | np.integer)
                                    for v in indices):
            raise TypeError(f"pairs must hold pairs of integer row indices, got {pair!r}")
        i, j = indices
        if not (0 <= i < n_rows and 0 <= j < n_rows) or i == j:
            raise ValueError(f"pair ({i}, {j}) must hold two different rows in [0, {n_rows})")
        out.append((int(i), int(j)))
        if outputs is not None and len(out) * outputs > MAX_PAIR_TERMS:
            _check_pair_terms(len(out), outputs, "pairs")
    if not out:
        raise ValueError("pairs must not be empty")
    return np.array(out, dtype=np.int64).reshape(-1, 2)


def _chunks(count: int, outputs: int) -> Iterator[slice]:
    """Slices of ``range(count)`` pairs, each about :data:`_BLOCK` pair-output terms."""
    step = max(1, _BLOCK // max(outputs, 1))
    for start in range(0, count, step):
        yield slice(start, min(start + step, count))


def _hockey(p: np.ndarray, q: np.ndarray, eps_arr: np.ndarray) -> np.ndarray:
    """:func:`hockey_stick_divergence` on checked arrays: ``p`` and ``q`` of shape ``(..., m)``,
    broadcast against ``eps_arr[..., None]``; the sum runs over the last axis."""
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        scale = np.exp(eps_arr)[..., None]
        gap = p - scale * q
        if not np.isfinite(scale).all():  # inf * 0 would be NaN, and inf * Q drops terms
            loss = np.log(p) - np.log(q)
            log_form = p * -np.expm1(np.minimum(eps_arr[..., None] - loss, 0.0))
            gap = np.where(np.isfinite(scale), gap, np.where(p > 0, log_form, 0.0))
    return np.clip(np.where(gap > 0, gap, 0.0).sum(axis=-1), 0.0, 1.0)


def _pair_hockey(arr: np.ndarray, index: np.ndarray, eps: float) -> np.ndarray:
    """``max(H(C[i] || C[j]), H(C[j] || C[i]))`` at ``eps`` for every pair ``(i, j)`` of
    ``index``, vectorized in blocks."""
    out = np.empty(index.shape[0])
    eps_arr = np.asarray(float(eps))
    for part in _chunks(index.shape[0], arr.shape[1]):
        p, q = arr[index[part, 0]], arr[index[part, 1]]
        out[part] = np.maximum(_hockey(p, q, eps_arr), _hockey(q, p, eps_arr))
    return out


def _pure_pair_losses(arr: np.ndarray, log_c: np.ndarray, index: np.ndarray) -> np.ndarray:
    r"""For every pair ``(i, j)`` of ``index``: :math:`\max_o \ln C[i,o]/C[j,o]` over the outputs
    possible under one of the rows (``inf`` if some output is possible under ``i`` only;
    ``-inf`` if none is possible under either, which no distribution allows)."""
    out = np.empty(index.shape[0])
    for part in _chunks(index.shape[0], arr.shape[1]):
        i, j = index[part, 0], index[part, 1]
        support = (arr[i] > 0) | (arr[j] > 0)
        with np.errstate(invalid="ignore"):
            diff = np.where(support, log_c[i] - log_c[j], -np.inf)
        out[part] = np.where(((arr[i] > 0) & (arr[j] == 0)).any(axis=1), np.inf, diff.max(axis=1))
    return out


def _column_extremes(arr: np.ndarray, log_c: np.ndarray) -> np.ndarray:
    r"""Per output: :math:`\ln\max_x C[x,o]-\ln\min_x C[x,o]`, ``inf`` where some row gives
    the output probability 0 and another does not, ``-inf`` where no row can give it. Linear in
    the table."""
    used = arr.max(axis=0) > 0
    with np.errstate(invalid="ignore"):
        spread = log_c.max(axis=0) - log_c.min(axis=0)  # min is -inf where some row gives 0
    return np.where(used, spread, -np.inf)


def hockey_stick_divergence(p: ArrayLike, q: ArrayLike, eps: ArrayLike) -> np.ndarray | float:
    r"""Hockey-stick divergence
    :math:`H_{e^\varepsilon}(P\|Q)=\sum_o \max(0, P(o)-e^\varepsilon Q(o))`.

    This is the smallest :math:`\delta` with :math:`P(S) \le e^\varepsilon Q(S) + \delta` for every
    event ``S`` (the maximizing event is :math:`\{o: P(o) > e^\varepsilon Q(o)\}`), so a mechanism
    is :math:`(\varepsilon,\delta)`-DP iff this is :math:`\le\delta` for every ordered neighbouring
    pair. Vectorized over ``eps``. Exact up to floating-point summation. Where
    :math:`e^\varepsilon` overflows, each term is taken as :math:`P(o)(1-e^{\varepsilon-L(o)})_+`
    with the privacy loss :math:`L(o)=\ln(P(o)/Q(o))` (infinite where :math:`Q(o)=0`).

    >>> float(hockey_stick_divergence([0.75, 0.25], [0.25, 0.75], 0.0))
    0.5
    """
    p_arr, q_arr = check_distribution_pair(p, q)
    return scalar_or_array(_hockey(p_arr, q_arr, check_epsilon(eps)))


def channel_epsilon(channel: ArrayLike, pairs: Iterable[tuple[int, int]] | None = None) -> float:
    r"""Exact pure-DP parameter of a finite channel: :math:`\max_{(x,x')}\max_o \ln C[x,o]/C[x',o]`.

    With ``pairs=None`` every ordered pair of rows counts (local DP: any two inputs are
    neighbours), and the maximum is taken output by output in linear time,
    :math:`\max_o \ln\bigl(\max_x C[x,o]/\min_x C[x,o]\bigr)` (the same number as the pairwise
    definition, bit for bit); otherwise only the given ordered pairs (central DP on a list of
    neighbouring datasets; pass both orders for a symmetric relation), vectorized over the pairs.
    Outputs impossible under both rows are ignored; an output possible under one row only gives
    ``inf``. A channel with one row is 0-DP.

    >>> import numpy as np
    >>> bool(np.isclose(channel_epsilon([[0.75, 0.25], [0.25, 0.75]]), np.log(3)))
    True
    """
    arr = check_channel(channel)
    with np.errstate(divide="ignore"):
        log_c = np.log(arr)
    if pairs is None:
        return max(0.0, float(_column_extremes(arr, log_c).max()))
    return max(0.0, float(_pure_pair_losses(arr, log_c, _pairs(arr.shape[0], pairs)).max()))


def channel_delta(
    channel: ArrayLike, eps: float, pairs: Iterable[tuple[int, int]] | None = None
) -> float:
    r"""Exact :math:`\delta(\varepsilon)` of a finite channel: the largest hockey-stick divergence
    :math:`H_{e^\varepsilon}(C[x]\|C[x'])` over the ordered pairs (all pairs if ``pairs=None``;
    a channel with one row gives 0). The divergence has no linear form, so this examines every
    pair, vectorized: at most :data:`MAX_PAIR_TERMS` (``10**7``) ordered pairs times outputs
    (``ValueError`` beyond, raised before any work).

    >>> channel_delta([[1.0, 0.0], [0.5, 0.5]], eps=0.0)
    0.5
    """
    shape = getattr(channel, "shape", None)  # refuse a huge array before checking its entries
    if pairs is None and isinstance(shape, tuple) and len(shape) == 2:
        _check_pair_terms(shape[0] * (shape[0] - 1), shape[1], "channel (every pair of rows)")
    arr = check_channel(channel)
    eps_val = check_real(eps, "eps", low=0.0)
    index = _pairs(arr.shape[0], pairs, outputs=arr.shape[1])
    if index.shape[0] == 0:  # one row: nothing to tell apart
        return 0.0
    out = np.empty(index.shape[0])
    eps_arr = np.asarray(eps_val)
    for part in _chunks(index.shape[0], arr.shape[1]):
        out[part] = _hockey(arr[index[part, 0]], arr[index[part, 1]], eps_arr)
    return float(out.max())


def _worst_pair(arr: np.ndarray, index: np.ndarray | None, delta: float, tol: float
                ) -> tuple[float, int]:
    r"""The largest :func:`epsilon_for_delta` over unordered pairs of rows of ``arr`` (a checked
    channel), and the position of a pair attaining it: the first in order among the pairs
    within ``tol`` of the largest (rounded up, like :func:`epsilon_for_delta`). ``index`` holds
    the pairs (``None``: every pair ``i < j`` in lexicographic order, position ``i * n + j``
    flattened then counted among those pairs).

    At ``delta = 0`` the exact value is :math:`\max_o|\ln C[i,o]-\ln C[j,o]|`, found in linear
    time for every pair at once as the largest log-ratio of a column's extremes; the value
    returned is then :func:`epsilon_for_delta` on the pair found. At ``delta > 0`` a bisection on
    :math:`\varepsilon` for the largest hockey-stick divergence over the pairs (both orders),
    dropping each pair once its divergence is within ``delta`` at a level below the answer: the
    smallest :math:`\varepsilon` where every pair is within ``delta`` is the largest of their
    own. Returns ``(value, position)`` with the position into ``index`` (or, for ``None``, the
    pair itself encoded as ``i * n + j``)."""
    n_rows = arr.shape[0]
    with np.errstate(divide="ignore"):
        log_c = np.log(arr)
    if delta == 0:
        if index is None:  # linear: the worst column, and its first rows at the max and min
            spread = _column_extremes(arr, log_c)
            worst = float(spread.max())
            if worst <= 0:
                return 0.0, 1  # every pair at 0: the first pair (0, 1)
            columns = np.flatnonzero(spread == worst)
            if np.isinf(worst):  # rows where the output is possible, against rows where not
                possible = arr[:, columns] > 0
                high, low = possible.argmax(axis=0), (~possible).argmax(axis=0)
            else:
                high, low = log_c[:, columns].argmax(axis=0), log_c[:, columns].argmin(axis=0)
            first, second = np.minimum(high, low), np.maximum(high, low)
            pick = int(np.lexsort((second, first))[0])
            i, j = int(first[pick]), int(second[pick])
            return epsilon_for_delta(arr[i], arr[j], 0.0, tol), i * n_rows + j
        both = np.maximum(_pure_pair_losses(arr, log_c, index),
                          _pure_pair_losses(arr, log_c, index[:, ::-1]))
        pick = int(np.argmax(both))
        i, j = index[pick]
        return epsilon_for_delta(arr[i], arr[j], 0.0, tol), pick
    if index is None:
        first, second = np.divmod(np.arange(n_rows * n_rows), n_rows)
        keep = first < second
        index = np.stack([first[keep], second[keep]], axis=1)
        encode = index[:, 0] * n_rows + index[:, 1]
    else:
        encode = np.arange(index.shape[0])
    alive = np.flatnonzero(_pair_hockey(arr, index, 0.0) > delta)
    if alive.size == 0:
        return 0.0, int(encode[0])
    # the divergence tends to the mass one row puts where the other has none
    limit = np.empty(index.shape[0])
    for part in _chunks(index.shape[0], arr.shape[1]):
        p, q = arr[index[part, 0]], arr[index[part, 1]]
        limit[part] = np.maximum((p * (q == 0)).sum(axis=1), (q * (p == 0)).sum(axis=1))
    infinite = np.flatnonzero(limit > delta)
    if infinite.size:
        return float("inf"), int(encode[infinite[0]])
    low, high = 0.0, 1.0
    while True:  # the first level where every pair still alive is within delta
        values = _pair_hockey(arr, index[alive], high)
        if values.max() <= delta:
            break
        alive, low = alive[values > delta], high
        high *= 2
        if high > 1e6:
            return float("inf"), int(encode[alive[0]])
    while high - low > tol * max(1.0, high):
        mid = (low + high) / 2
        values = _pair_hockey(arr, index[alive], mid)
        if values.max() <= delta:
            high = mid
        else:  # pairs within delta at mid < answer cannot attain it
            alive, low = alive[values > delta], mid
    return high, int(encode[alive[0]])


def epsilon_for_delta(p: ArrayLike, q: ArrayLike, delta: float, tol: float = 1e-12) -> float:
    r"""Smallest :math:`\varepsilon \ge 0` with :math:`H_{e^\varepsilon}(P\|Q) \le \delta` and
    :math:`H_{e^\varepsilon}(Q\|P) \le \delta`: the exact privacy of the pair at level delta.

    Both divergences decrease in eps, so a bisection on eps finds the answer; the result is
    rounded up (an upper bound within ``tol`` of the exact value, relative above 1). ``tol`` must
    be at least 2.2e-16 (:data:`TOL_MIN`, the spacing of doubles near 1: a bisection cannot get
    closer, so a smaller tolerance, 0 included, is refused with ``ValueError``). Returns ``inf``
    when the divergences never reach delta (some outcome is possible under one law only and
    carries more than delta of mass, or the answer exceeds 1e6).

    >>> round(epsilon_for_delta([0.75, 0.25], [0.25, 0.75], 0.0), 9)
    1.098612289
    """
    p_arr, q_arr = check_distribution_pair(p, q)
    delta_val = check_real(delta, "delta", low=0.0, high=1.0, high_open=True)
    tol_val = check_real(tol, "tol", low=TOL_MIN)

    def worst(eps: float) -> float:
        return max(
            float(hockey_stick_divergence(p_arr, q_arr, eps)),
            float(hockey_stick_divergence(q_arr, p_arr, eps)),
        )

    if worst(0.0) <= delta_val:
        return 0.0
    # As eps -> inf the divergence tends to the mass where the other law is zero.
    limit = max(p_arr[q_arr == 0].sum(), q_arr[p_arr == 0].sum())
    if limit > delta_val:
        return float("inf")
    high = 1.0
    while worst(high) > delta_val:
        high *= 2
        if high > 1e6:
            return float("inf")
    _, high = bisect(lambda e: worst(e) <= delta_val, 0.0, high, tol_val)  # round up
    return high


def renyi_divergence(p: ArrayLike, q: ArrayLike, alpha: float) -> float:
    r"""Rényi divergence of order :math:`\alpha > 1` between finite distributions,
    :math:`D_\alpha(P\|Q) = \frac{1}{\alpha-1}\ln\sum_o P(o)^\alpha Q(o)^{1-\alpha}`
    (computed with log-sum-exp, or with ``log1p``/``expm1`` near :math:`\alpha=1` where the sum
    is close to 1; ``inf`` if P charges an outcome that Q does not). ``alpha`` must lie in
    (1, 1e300] (:data:`ALPHA_MAX`; ``ValueError`` outside).

    >>> round(renyi_divergence([0.5, 0.5], [0.5, 0.5], 2.0), 12)
    0.0
    """
    p_arr, q_arr = check_distribution_pair(p, q)
    alpha_val = check_real(alpha, "alpha")
    if not 1 < alpha_val <= ALPHA_MAX:
        raise ValueError(f"alpha must be finite and > 1 (at most {ALPHA_MAX:g}), got {alpha!r}")
    support = p_arr > 0
    if np.any(q_arr[support] == 0):
        return float("inf")
    weights = p_arr[support]
    scaled = (alpha_val - 1) * (np.log(weights) - np.log(q_arr[support]))
    if scaled.max() < 30:  # near alpha = 1: ln(1 + sum P (e^{(a-1) ln(P/Q)} - 1)) keeps every digit
        return float(np.log1p(np.sum(weights * np.expm1(scaled))) / (alpha_val - 1))
    return float(logsumexp(scaled, b=weights) / (alpha_val - 1))
