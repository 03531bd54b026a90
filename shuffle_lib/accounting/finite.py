"""Exact privacy accounting for mechanisms with finitely many outputs.

A finite mechanism is a *channel*: a row-stochastic matrix ``C`` whose row ``x`` is the output
distribution on input (or dataset) ``x``. These functions compute its privacy parameters exactly,
which is how the book and the tests check every closed-form claim on small instances.
"""

from __future__ import annotations

from collections.abc import Iterable

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


def _pairs(n_rows: int, pairs: Iterable[tuple[int, int]] | None) -> list[tuple[int, int]]:
    if pairs is None:
        return [(i, j) for i in range(n_rows) for j in range(n_rows) if i != j]
    check_instance(pairs, "pairs", Iterable)
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
    if not out:
        raise ValueError("pairs must not be empty")
    return out


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
    eps_arr = check_epsilon(eps)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        scale = np.exp(eps_arr)[..., None]
        gap = p_arr - scale * q_arr
        if not np.isfinite(scale).all():  # inf * 0 would be NaN, and inf * Q drops terms
            loss = np.log(p_arr) - np.log(q_arr)
            log_form = p_arr * -np.expm1(np.minimum(eps_arr[..., None] - loss, 0.0))
            gap = np.where(np.isfinite(scale), gap, np.where(p_arr > 0, log_form, 0.0))
    result = np.clip(np.where(gap > 0, gap, 0.0).sum(axis=-1), 0.0, 1.0)
    return scalar_or_array(result)


def channel_epsilon(channel: ArrayLike, pairs: Iterable[tuple[int, int]] | None = None) -> float:
    r"""Exact pure-DP parameter of a finite channel: :math:`\max_{(x,x')}\max_o \ln C[x,o]/C[x',o]`.

    With ``pairs=None`` every ordered pair of rows counts (local DP: any two inputs are
    neighbours); otherwise only the given ordered pairs (central DP on a list of neighbouring
    datasets; pass both orders for a symmetric relation). Outputs impossible under both rows are
    ignored; an output possible under one row only gives ``inf``.

    >>> import numpy as np
    >>> bool(np.isclose(channel_epsilon([[0.75, 0.25], [0.25, 0.75]]), np.log(3)))
    True
    """
    arr = check_channel(channel)
    worst = 0.0
    with np.errstate(divide="ignore"):
        log_c = np.log(arr)
    for i, j in _pairs(arr.shape[0], pairs):
        support = (arr[i] > 0) | (arr[j] > 0)
        if np.any(support & (arr[j] == 0)):
            return float("inf")
        worst = max(worst, float(np.max(log_c[i, support] - log_c[j, support])))
    return worst


def channel_delta(
    channel: ArrayLike, eps: float, pairs: Iterable[tuple[int, int]] | None = None
) -> float:
    r"""Exact :math:`\delta(\varepsilon)` of a finite channel: the largest hockey-stick divergence
    :math:`H_{e^\varepsilon}(C[x]\|C[x'])` over the ordered pairs (all pairs if ``pairs=None``).

    >>> channel_delta([[1.0, 0.0], [0.5, 0.5]], eps=0.0)
    0.5
    """
    arr = check_channel(channel)
    eps_val = check_real(eps, "eps", low=0.0)
    return max(
        float(hockey_stick_divergence(arr[i], arr[j], eps_val))
        for i, j in _pairs(arr.shape[0], pairs)
    )


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
