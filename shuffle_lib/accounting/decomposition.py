r"""The neutral-clone decomposition: why the stronger clone bound holds for every
:math:`\varepsilon_0`-LDP randomizer, and exact shuffled divergences to check it on small cases.

Model: every one of :math:`n` users runs the same :math:`\varepsilon_0`-LDP randomizer :math:`R` on
their own input (chosen in advance, not adaptively), one report each; the shuffler sends the analyst
the multiset of reports. Neighbouring datasets differ in one user's input, :math:`x^0` or
:math:`x^1`; :math:`R_0=R(x^0)`, :math:`R_1=R(x^1)`, :math:`p=e^{\varepsilon_0}`.

With :math:`T=\mathrm{TV}(R_0,R_1)\le (p-1)/(p+1)`, :math:`\alpha=T/(p-1)` and
:math:`\nu=1-(p+1)\alpha`, every such randomizer splits as

.. math::
    R_0 = p\alpha M_0 + \alpha M_1 + \nu N,\quad R_1 = \alpha M_0 + p\alpha M_1 + \nu N,\quad
    R(x) = \alpha M_0 + \alpha M_1 + \tfrac{\nu}{p} N + r\,L_x,

with :math:`\alpha M_0=(R_0-R_1)^+/(p-1)`, :math:`\alpha M_1=(R_1-R_0)^+/(p-1)`,
:math:`r=1-2\alpha-\nu/p`: the shuffled output is a post-processing of the counts of the types
:math:`M_0, M_1, N`, whose divergence :func:`neutral_clone_delta` increases in :math:`\alpha` up to
the stronger clone pair at :math:`\alpha=1/(p+1)` (the book proves both steps in the chapter
"Tighter, and many rounds"). Feldman, McMillan & Talwar (SODA 2023) stated that bound for every
randomizer and withdrew the proof in an erratum; Wang et al. (VLDB 2024) compute the same pair for a
generic randomizer from their variation-ratio parameters.
"""

from __future__ import annotations

import itertools
import math
from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike
from scipy.optimize import brentq, linprog
from scipy.special import gammaln
from scipy.stats import binom

from shuffle_lib._validation import RngLike, as_rng, check_epsilon, check_integer, check_real
from shuffle_lib.accounting.finite import check_channel

#: Most work :func:`shuffled_channel_delta` takes on: histograms x reports x outputs
#: (``ValueError`` beyond).
ENUMERATION_MAX = 200_000
#: Largest ``n`` of :func:`neutral_clone_delta` (its sums have about n^2 / 2 terms).
NEUTRAL_N_MAX = 5_000
#: Slack allowed when checking that a channel is eps0-LDP (rounding of its entries).
LDP_RTOL = 1e-9
#: Largest number of inputs of :func:`extremal_ldp_channel` (its linear program has
#: :math:`2^{\text{inputs}}-1` columns).
EXTREMAL_INPUTS_MAX = 12
#: Largest inputs x outputs of :func:`interior_ldp_channel`.
CHANNEL_ENTRIES_MAX = 10**7
#: Largest local level of the two channel generators (their entries stay far from overflow).
CHANNEL_EPS0_MAX = 20.0


class _NeutralCloneParts(NamedTuple):
    """What :func:`neutral_clone_decomposition` returns (built there only, from checked input):
    ``alpha`` and ``nu`` (weights), the distributions ``m0``, ``m1``, ``neutral`` over the outputs
    (all zeros where the weight is 0), and ``leftover``: one row per input, the part
    :math:`r L_x` of each row that is no clone."""

    alpha: float
    nu: float
    m0: np.ndarray
    m1: np.ndarray
    neutral: np.ndarray
    leftover: np.ndarray


def _channel_level(arr: np.ndarray) -> float:
    """Smallest eps0 for which the channel is eps0-LDP (inf if a column mixes 0 and positive)."""
    top, low = arr.max(axis=0), arr.min(axis=0)
    if np.any((low == 0) & (top > 0)):
        return math.inf
    used = top > 0
    return float(np.log(top[used] / low[used]).max()) if used.any() else 0.0


def neutral_clone_decomposition(
    channel: ArrayLike, eps0: float, pair: tuple[int, int] = (0, 1)
) -> tuple[float, float, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    r"""Split a finite :math:`\varepsilon_0`-LDP randomizer into clones of the two target rows,
    neutral clones and leftovers (module docstring): :math:`\alpha M_0=(R_0-R_1)^+/(p-1)`,
    :math:`\alpha M_1=(R_1-R_0)^+/(p-1)`, :math:`\nu N=R_0-p\alpha M_0-\alpha M_1`, and for each
    row :math:`r L_x = R(x)-\alpha M_0-\alpha M_1-\nu N/p\ge 0`.

    ``channel``: rows are inputs, columns outputs, each row a distribution; ``pair`` the target's
    two inputs (row indices). Returns the named tuple ``(alpha, nu, m0, m1, neutral, leftover)``:
    the weights, the three distributions over the outputs (zeros where their weight is 0) and,
    one row per input, the leftover part :math:`r L_x`. ``ValueError`` if the channel is not
    ``eps0``-LDP (within relative 1e-9), if ``eps0`` is 0 or above 700, or a row index is out
    of range. Source: this book's proof (chapter "Tighter, and many rounds"); the split of the
    two target rows is the one the variation-ratio reduction of Wang et al. (2024) uses.

    >>> parts = neutral_clone_decomposition([[0.75, 0.25], [0.25, 0.75]], math.log(3))
    >>> round(parts.alpha, 6), round(parts.nu, 6), parts.m0.tolist()
    (0.25, 0.0, [1.0, 0.0])
    """
    arr = check_channel(channel)
    eps0_val = float(check_epsilon(eps0, "eps0", positive=True))
    if eps0_val > 700:
        raise ValueError(f"eps0 must be at most 700 (e^eps0 stays finite), got {eps0!r}")
    first, second = (check_integer(i, "pair", 0, arr.shape[0] - 1) for i in pair)
    if first == second:
        raise ValueError(f"pair must name two different rows, got {pair!r}")
    level = _channel_level(arr)
    if level > eps0_val * (1 + LDP_RTOL):
        raise ValueError(f"channel is {level:.6g}-LDP, not eps0={eps0_val:.6g}-LDP")
    p, p_minus_1 = math.exp(eps0_val), math.expm1(eps0_val)
    r0, r1 = arr[first], arr[second]
    up0, up1 = np.maximum(r0 - r1, 0.0), np.maximum(r1 - r0, 0.0)
    alpha = min(float(up0.sum()) / p_minus_1, 1 / (p + 1))
    neutral_mass = np.maximum(np.minimum(r0, r1) - (up0 + up1) / p_minus_1, 0.0)
    nu = float(neutral_mass.sum())
    leftover = np.maximum(arr - (up0 + up1) / p_minus_1 - neutral_mass / p, 0.0)

    def normalized(mass: np.ndarray, weight: float) -> np.ndarray:
        return mass / mass.sum() if weight > 0 else np.zeros_like(mass)

    return _NeutralCloneParts(
        alpha, nu, normalized(up0, alpha), normalized(up1, alpha), normalized(neutral_mass, nu),
        leftover,
    )


def extremal_ldp_channel(eps0: float, inputs: int, rng: RngLike = None) -> np.ndarray:
    r"""A random **vertex** of the :math:`\varepsilon_0`-LDP randomizers on ``inputs`` inputs:
    the hardest cases for a claim about every such randomizer, as most of its likelihood ratios
    equal :math:`p=e^{\varepsilon_0}` exactly.

    A column (output) of an :math:`\varepsilon_0`-LDP channel is a vector of ``inputs``
    positive numbers within a factor :math:`p` of each other; these vectors form a cone generated
    by :math:`(p^{b_1},\dots,p^{b_k})`, :math:`b\in\{0,1\}^k` (the all-ones pattern is the
    all-zeros one scaled, so it is left out). The channel is
    :math:`\sum_b w_b\,(p^{b_1},\dots,p^{b_k})` with weights :math:`w\ge0` such that every row
    sums to 1; the weights are a vertex of that polytope, found by minimizing a random linear
    objective (HiGHS). Returns an ``inputs`` x outputs array (rows: inputs), one column per
    pattern of positive weight.

    ``eps0`` in (0, ``CHANNEL_EPS0_MAX``] (20), ``inputs`` in [2, ``EXTREMAL_INPUTS_MAX``] (12);
    ``rng`` a Generator, seed or None. Used by the book's chapter "Tighter, and many rounds" and
    by the tests of the neutral-clone decomposition.

    >>> channel = extremal_ldp_channel(1.0, 3, rng=0)
    >>> bool(np.allclose(channel.sum(axis=1), 1.0))
    True
    >>> bool(np.log(channel.max(axis=0) / channel.min(axis=0)).max() <= 1.0 + 1e-9)
    True
    """
    level = check_real(eps0, "eps0", low=0.0, low_open=True, high=CHANNEL_EPS0_MAX)
    rows = check_integer(inputs, "inputs", 2, EXTREMAL_INPUTS_MAX)
    generator = as_rng(rng)
    patterns = np.array([b for b in itertools.product((0, 1), repeat=rows)
                         if 0 < sum(b) < rows] + [(0,) * rows])
    columns = np.exp(level * patterns).T  # inputs x patterns
    # feasible (the all-zeros pattern alone) and bounded (every coefficient is at least 1)
    solution = linprog(generator.normal(size=len(patterns)), A_eq=columns, b_eq=np.ones(rows),
                       bounds=(0, None), method="highs")
    if solution.status != 0:  # pragma: no cover - HiGHS on a feasible, bounded program
        raise RuntimeError(f"the linear program failed: {solution.message}")
    channel = columns * solution.x
    return channel[:, channel.sum(axis=0) > 1e-15]


def interior_ldp_channel(eps0: float, inputs: int, outputs: int, rng: RngLike = None
                         ) -> np.ndarray:
    r"""A random :math:`\varepsilon_0`-LDP randomizer whose likelihood ratios all lie strictly
    inside the bound: entries :math:`c_y\,p^{\ell_{xy}}` with :math:`p=e^{\varepsilon_0}`,
    :math:`c_y` exponential and :math:`\ell_{xy}` uniform on :math:`[0,1/2)`, each row then
    divided by its sum. Within a column the raw entries differ by less than :math:`p^{1/2}`, and so
    do the row sums, so after division every ratio is below :math:`p`. Returns an ``inputs`` x
    ``outputs`` array (rows: inputs).

    ``eps0`` in (0, ``CHANNEL_EPS0_MAX``] (20), ``inputs`` at least 2, ``outputs`` at least 1,
    ``inputs * outputs`` at most ``CHANNEL_ENTRIES_MAX`` (1e7); ``rng`` a Generator, seed or
    None.

    >>> channel = interior_ldp_channel(2.0, 3, 5, rng=0)
    >>> channel.shape, bool(np.log(channel.max(axis=0) / channel.min(axis=0)).max() < 2.0)
    ((3, 5), True)
    """
    level = check_real(eps0, "eps0", low=0.0, low_open=True, high=CHANNEL_EPS0_MAX)
    rows = check_integer(inputs, "inputs", 2)
    columns = check_integer(outputs, "outputs", 1)
    if rows * columns > CHANNEL_ENTRIES_MAX:
        raise ValueError(f"inputs * outputs must be at most {CHANNEL_ENTRIES_MAX:g}, got "
                         f"{rows} * {columns}")
    generator = as_rng(rng)
    levels = generator.uniform(0.0, 0.5, size=(rows, columns))
    raw = generator.exponential(size=columns) * np.exp(level * levels)
    return raw / raw.sum(axis=1, keepdims=True)


def _histograms(outputs: int, size: int) -> np.ndarray:
    """All histograms of ``size`` reports over ``outputs`` values (one per row)."""
    combos = itertools.combinations_with_replacement(range(outputs), size)
    return np.array([np.bincount(np.array(c, dtype=int), minlength=outputs) for c in combos],
                    dtype=int).reshape(-1, outputs)


def _log_multiset_law(histograms: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """log P[histogram] when person i reports from ``rows[i]`` (independent), by dynamic
    programming over people on the histogram lattice."""
    outputs = rows.shape[1]
    size = int(histograms[0].sum())
    index = {tuple(h): i for i, h in enumerate(_histograms(outputs, 0))}
    law = np.array([1.0])
    for person in range(size):
        nxt = _histograms(outputs, person + 1)
        new_index = {tuple(h): i for i, h in enumerate(nxt)}
        new_law = np.zeros(len(nxt))
        for h, i in index.items():
            for j in range(outputs):
                target = list(h)
                target[j] += 1
                new_law[new_index[tuple(target)]] += law[i] * rows[person, j]
        law, index = new_law, new_index
    order = np.array([index[tuple(h)] for h in histograms])
    with np.errstate(divide="ignore"):
        return np.log(law[order])


def shuffled_channel_delta(
    channel: ArrayLike, target_inputs: tuple[int, int], others_inputs: ArrayLike, eps: float
) -> float:
    r"""Exact :math:`\delta(\varepsilon)=H_{e^\varepsilon}(S_0\|S_1)` of the shuffled output of a
    finite randomizer, by enumerating every histogram of the :math:`n` reports.

    :math:`S_b` is the law of the multiset of reports when the target holds
    ``target_inputs[b]`` and the others hold ``others_inputs`` (row indices of ``channel``). Small
    instances only: the number of histograms times the number of reports times the number of
    outputs is at most :data:`ENUMERATION_MAX` (``ValueError`` beyond, checked before any work;
    about two seconds at the limit). Used to test the amplification bounds by exhaustive
    enumeration.

    >>> rr = [[0.75, 0.25], [0.25, 0.75]]
    >>> round(shuffled_channel_delta(rr, (0, 1), [0], 0.0), 6)  # 0.5625 - 0.1875
    0.375
    """
    arr = check_channel(channel)
    eps_val = float(check_epsilon(eps))
    if not isinstance(target_inputs, tuple | list) or len(target_inputs) != 2:
        raise TypeError(f"target_inputs must be a pair of row indices, got {target_inputs!r:.80}")
    targets = [check_integer(i, "target_inputs", 0, arr.shape[0] - 1) for i in target_inputs]
    others = np.asarray(others_inputs)
    if others.ndim != 1 or not np.issubdtype(others.dtype, np.integer):
        raise TypeError(f"others_inputs must be a list of row indices, got {others_inputs!r:.80}")
    outputs, size = arr.shape[1], others.size + 1
    if size * outputs > ENUMERATION_MAX or (
            math.comb(size + outputs - 1, outputs - 1) * size * outputs > ENUMERATION_MAX):
        raise ValueError(f"others_inputs: enumerating the histograms of {size} reports over "
                         f"{outputs} outputs is more work than ENUMERATION_MAX = {ENUMERATION_MAX}")
    if others.size and (others.min() < 0 or others.max() >= arr.shape[0]):
        raise ValueError(f"others_inputs must be row indices below {arr.shape[0]}, got {others}")
    histograms = _histograms(outputs, size)
    log_laws = [_log_multiset_law(histograms, arr[np.concatenate([[t], others])]) for t in targets]
    with np.errstate(over="ignore"):
        gap = np.exp(log_laws[0]) - np.exp(eps_val + log_laws[1])
    return float(np.maximum(gap, 0.0).sum())


def _check_neutral_arguments(eps0: float, n: int, alpha: float) -> tuple[float, int, float]:
    eps0_val = float(check_epsilon(eps0, "eps0", positive=True))
    if eps0_val > 700:
        raise ValueError(f"eps0 must be at most 700 (e^eps0 stays finite), got {eps0!r}")
    n_val = check_integer(n, "n", 2, NEUTRAL_N_MAX)
    top = 1 / (math.exp(eps0_val) + 1)
    alpha_val = check_real(alpha, "alpha", low=0.0)
    if alpha_val > top * (1 + 1e-12):
        raise ValueError(f"alpha must be at most 1/(e^eps0 + 1) = {top:.6g} at eps0={eps0_val:g}, "
                         f"got {alpha!r}")
    return eps0_val, n_val, min(alpha_val, top)


def neutral_clone_delta(eps: float, eps0: float, n: int, alpha: float) -> float:
    r"""Divergence of the neutral-clone pair: :math:`n-1` others each of type :math:`M_0`,
    :math:`M_1`, :math:`N` with probabilities :math:`\alpha,\alpha,\nu/p` (else a leftover), the
    target :math:`(p\alpha,\alpha,\nu)` against :math:`(\alpha,p\alpha,\nu)`, with
    :math:`\nu=1-(p+1)\alpha`. By the likelihood identity
    :math:`\mathrm{Mult}_{n-1}(h-e_t)=\mathrm{Mult}_n(h)\,h_t/(n\pi_t)`,

    .. math::
        G(\alpha)=\tfrac1n\,\mathbb E_{h\sim\mathrm{Mult}_n(\pi)}
        \bigl[\bigl((p-e^\varepsilon)h_{M_0}+(1-pe^\varepsilon)h_{M_1}
        +p(1-e^\varepsilon)h_N\bigr)^+\bigr].

    At :math:`\alpha=1/(p+1)` it is the stronger clone pair (Feldman, McMillan & Talwar 2023) with
    clone probability :math:`2/(p+1)`. Exact up to rounding and the clone counts (and, given
    one, head counts) whose probability is below 1e-300 (at most :math:`2(n+1)10^{-300}` in
    all), not
    certified: a reference for :math:`2\le n\le` :data:`NEUTRAL_N_MAX`; ``alpha`` in
    :math:`[0, 1/(p+1)]`.

    >>> full = neutral_clone_delta(0.5, 2.0, 50, 1 / (math.exp(2.0) + 1))
    >>> half = neutral_clone_delta(0.5, 2.0, 50, 0.5 / (math.exp(2.0) + 1))
    >>> 0 < half < full < 1
    True
    """
    eps_val = float(check_epsilon(eps))
    eps0_val, n_val, alpha_val = _check_neutral_arguments(eps0, n, alpha)
    if eps_val >= eps0_val:  # every weight is <= 0 (and e^eps could overflow)
        return 0.0
    p, gamma = math.exp(eps0_val), math.exp(eps_val)
    if alpha_val == 0:
        return 0.0  # the target is neutral with probability nu = 1: nothing to tell apart
    nu = max(1 - (p + 1) * alpha_val, 0.0)
    clone, neutral_rate = 2 * alpha_val, nu / p
    # h_M0 + h_M1 = c ~ Bin(n, 2 alpha); h_M0 | c ~ Bin(c, 1/2); h_N | c ~ Bin(n - c, q_N)
    q_neutral = min(neutral_rate / (1 - clone), 1.0) if clone < 1 else 0.0
    weight_a, weight_b, weight_n = p - gamma, 1 - p * gamma, p * (1 - gamma)
    total = 0.0
    counts = np.arange(n_val + 1)
    clone_law = binom.pmf(counts, n_val, clone)
    # terms with a probability below 1e-300 (clone counts, and head counts given one) add at
    # most 2 (n + 1) 1e-300 in all: left out
    for c in counts[clone_law >= 1e-300]:
        heads = np.arange(c + 1)
        head_law = np.exp(gammaln(c + 1) - gammaln(heads + 1) - gammaln(c - heads + 1)
                          - c * math.log(2))
        bulk = head_law >= 1e-300
        heads, head_law = heads[bulk], head_law[bulk]
        base = weight_a * heads + weight_b * (c - heads)  # value before the neutral clones
        rest = n_val - c
        if weight_n == 0 or q_neutral == 0:
            inner = np.maximum(base, 0.0)
        else:
            # E[(base + w_N h)^+], h ~ Bin(rest, q), w_N < 0: the terms h <= base / |w_N|
            limit = np.floor(base / -weight_n)
            below = binom.cdf(limit, rest, q_neutral)
            below_shift = binom.cdf(limit - 1, rest - 1, q_neutral) if rest > 0 else (
                limit >= 0).astype(float)
            inner = np.where(base > 0, base * below + weight_n * rest * q_neutral * below_shift,
                             0.0)
        total += clone_law[c] * float(np.dot(head_law, np.maximum(inner, 0.0)))
    return float(total) / n_val


def neutral_clone_epsilon(eps0: float, n: int, delta: float, alpha: float) -> float:
    r"""The smallest :math:`\varepsilon` with :func:`neutral_clone_delta` :math:`\le\delta`: the
    neutral-clone bound for a randomizer whose target pair is at total variation at most
    :math:`\alpha(e^{\varepsilon_0}-1)` (e.g. :math:`\alpha=1/(e^{\varepsilon_0}+k-1)` for
    k-ary randomized response). A root search on :math:`\ln G` to 1e-9 relative, then steps
    up until :math:`G\le\delta` holds at the result; as :func:`neutral_clone_delta` is a
    reference (not certified), so is this. Same ranges, and ``delta`` in (0, 1).

    >>> top = neutral_clone_epsilon(2.0, 100, 1e-3, 1 / (math.exp(2.0) + 1))
    >>> low = neutral_clone_epsilon(2.0, 100, 1e-3, 1 / (math.exp(2.0) + 9))
    >>> 0 < low < top < 2.0
    True
    """
    eps0_val, n_val, alpha_val = _check_neutral_arguments(eps0, n, alpha)
    delta_val = float(check_real(delta, "delta", low=0.0, high=1.0, low_open=True,
                                 high_open=True))

    def excess(e: float) -> float:
        value = neutral_clone_delta(e, eps0_val, n_val, alpha_val)
        return (math.log(value) if value > 0 else -800.0) - math.log(delta_val)

    if excess(0.0) <= 0:
        return 0.0
    root = brentq(excess, 0.0, eps0_val, xtol=1e-12, rtol=1e-9)
    step = 1e-9 * max(root, 1e-300)
    while excess(root) > 0:
        root = min(root + step, eps0_val)
        step *= 2
    return root


def neutral_clone_probabilities(eps0: float, alpha: float) -> np.ndarray:
    r"""Type probabilities :math:`(\alpha,\alpha,\nu/p,r)` of each other user in the neutral-clone
    reduction (clone of :math:`M_0`, of :math:`M_1`, neutral clone, leftover), with
    :math:`\nu=1-(p+1)\alpha`, :math:`r=1-2\alpha-\nu/p`; ``alpha`` in :math:`[0,1/(p+1)]`.

    >>> neutral_clone_probabilities(math.log(3), 0.25).round(6).tolist()
    [0.25, 0.25, 0.0, 0.5]
    """
    eps0_val, _, alpha_val = _check_neutral_arguments(eps0, 2, alpha)
    p = math.exp(eps0_val)
    nu = max(1 - (p + 1) * alpha_val, 0.0)
    return np.array([alpha_val, alpha_val, nu / p, max(1 - 2 * alpha_val - nu / p, 0.0)])


def neutral_clone_enumerated(eps: float, eps0: float, n: int, alpha: float) -> float:
    """:func:`neutral_clone_delta` by brute force over all histograms of the four types (a
    second route for tests; ``n`` at most 60).

    >>> a = 0.5 / (math.exp(1.0) + 1)
    >>> abs(neutral_clone_enumerated(0.2, 1.0, 6, a) - neutral_clone_delta(0.2, 1.0, 6, a)) < 1e-12
    True
    """
    eps_val = float(check_epsilon(eps))
    eps0_val, n_val, alpha_val = _check_neutral_arguments(eps0, n, alpha)
    if n_val > 60:
        raise ValueError(f"n must be at most 60 for the enumeration, got {n!r}")
    if eps_val >= eps0_val:  # every weight is <= 0 (and e^eps could overflow)
        return 0.0
    p, gamma = math.exp(eps0_val), math.exp(eps_val)
    others = neutral_clone_probabilities(eps0_val, alpha_val)
    nu = 1 - (p + 1) * alpha_val
    targets = (np.array([p * alpha_val, alpha_val, nu, 0.0]),
               np.array([alpha_val, p * alpha_val, nu, 0.0]))
    histograms = _histograms(4, n_val)
    logs = [_log_multiset_law(histograms, np.vstack([t, np.tile(others, (n_val - 1, 1))]))
            for t in targets]
    return float(np.maximum(np.exp(logs[0]) - gamma * np.exp(logs[1]), 0.0).sum())


__all__ = [
    "CHANNEL_ENTRIES_MAX",
    "CHANNEL_EPS0_MAX",
    "ENUMERATION_MAX",
    "EXTREMAL_INPUTS_MAX",
    "NEUTRAL_N_MAX",
    "extremal_ldp_channel",
    "interior_ldp_channel",
    "neutral_clone_decomposition",
    "neutral_clone_delta",
    "neutral_clone_enumerated",
    "neutral_clone_epsilon",
    "neutral_clone_probabilities",
    "shuffled_channel_delta",
]
