r"""Personalized shuffling (seed 001, Chen, Cao & Ge, GSPA).

Users choose their own local levels :math:`(\varepsilon_i,\delta_i)`; the shuffled reports are
*approximately* :math:`\mu`-GDP (seed 001, Theorem 2). The rigorous personalized clone accountant
that the book compares this approximation with is built on :func:`personalized_clone_delta`.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike
from scipy.special import expit, logsumexp
from scipy.stats import binom

from shuffle_lib._validation import check_delta, check_epsilon, check_integer
from shuffle_lib.accounting.fdp import gdp_epsilon
from shuffle_lib.accounting.shuffle import _log_mixture_divergence


def _personal_levels(eps: ArrayLike, delta: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    eps_arr = np.atleast_1d(check_epsilon(eps))
    if eps_arr.ndim != 1:
        raise ValueError(f"eps must be a 1-D array of per-user levels, got shape {eps_arr.shape}")
    if eps_arr.size < 2:
        raise ValueError(f"need at least 2 users, got {eps_arr.size}")
    delta_arr = np.broadcast_to(check_delta(delta), eps_arr.shape)
    return eps_arr, delta_arr


def gspa_mu(eps: ArrayLike, delta: ArrayLike = 0.0) -> float:
    r"""GSPA's :math:`\mu` for per-user levels (seed 001, Theorem 2):

    .. math::
        \mu = \sqrt{\frac{2}{\sum_{i=1}^n \frac{1-\delta_i}{1+e^{\varepsilon_i}}
              - \max_i \frac{1-\delta_i}{1+e^{\varepsilon_i}}}} .

    This is the central-limit **approximation** of the theorem, which drops a Berry-Esseen term of
    order :math:`1/\sqrt n`: it is an estimate, not an upper bound, and it can fall below the exact
    privacy of shuffled randomized response (see the tests). ``eps`` holds one level per user
    (at least two users); ``delta`` is a scalar or one value per user in [0, 1).

    >>> round(gspa_mu([1.0] * 1000), 4)
    0.0863
    """
    eps_arr, delta_arr = _personal_levels(eps, delta)
    # log of (1 - delta_i) / (1 + e^{eps_i}); finite because delta_i < 1
    log_weight = np.log1p(-delta_arr) - np.logaddexp(0.0, eps_arr)
    others = np.delete(log_weight, np.argmax(log_weight))  # the sum minus its largest term
    return float(np.sqrt(2.0) * np.exp(-0.5 * logsumexp(others)))


def gspa_epsilon(eps: ArrayLike, delta_i: ArrayLike, delta: float) -> float:
    r"""Central :math:`\varepsilon` at target ``delta`` implied by GSPA's :math:`\mu`
    (:func:`gspa_mu`) through the GDP conversion of seed 001, Fact 3
    (:func:`shuffle_lib.accounting.gdp_epsilon`). Inherits the approximation of :func:`gspa_mu`.

    >>> round(gspa_epsilon([4.0] * 1000, 0.0, 1e-6), 2)
    1.45
    """
    return float(gdp_epsilon(gspa_mu(eps, delta_i), delta))


#: Tail mass dropped at each step of the Poisson-binomial computation (added back to delta).
_PB_TAIL = 1e-20


def _trim(offset: int, pmf: np.ndarray) -> tuple[int, np.ndarray, float]:
    """Drop the outer entries holding less than _PB_TAIL on each side; return the mass dropped."""
    left = int(np.searchsorted(np.cumsum(pmf), _PB_TAIL, side="right"))
    right = int(np.searchsorted(np.cumsum(pmf[::-1]), _PB_TAIL, side="right"))
    keep_to = pmf.size - right
    if left >= keep_to:
        return offset, pmf, 0.0
    dropped = float(pmf[:left].sum() + pmf[keep_to:].sum())
    return offset + left, pmf[left:keep_to], dropped


def poisson_binomial_pmf(probabilities: ArrayLike) -> tuple[int, np.ndarray, float]:
    r"""Law of a sum of independent Bernoulli(:math:`r_i`) variables, exactly up to tails.

    Users with equal :math:`r_i` are grouped into binomials; the groups are combined by a balanced
    tree of direct convolutions (no FFT, so small probabilities keep their relative accuracy), and
    after each step the outer tails holding less than 1e-20 are dropped. Returns ``(offset, pmf,
    dropped)``: ``pmf[j]`` is the probability of ``offset + j`` and ``dropped`` the total mass left
    out (add it to any divergence computed from ``pmf`` to keep an upper bound).

    >>> offset, pmf, dropped = poisson_binomial_pmf([0.5, 0.5])
    >>> offset, [round(float(x), 12) for x in pmf], dropped
    (0, [0.25, 0.5, 0.25], 0.0)
    """
    probs = np.asarray(probabilities, dtype=float)
    if probs.ndim != 1 or probs.size == 0:
        raise ValueError(f"probabilities must be a non-empty 1-D array, got shape {probs.shape}")
    if not np.all((probs >= 0) & (probs <= 1)):
        raise ValueError(f"probabilities must lie in [0, 1], got {probabilities!r}")
    values, counts = np.unique(probs, return_counts=True)
    parts, dropped = [], 0.0
    for r, m in zip(values, counts, strict=True):
        support = np.arange(int(m) + 1)
        offset, pmf, lost = _trim(0, binom.pmf(support, int(m), float(r)))
        parts.append((offset, pmf))
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


def personalized_clone_delta(
    eps: float, eps_i: ArrayLike, delta_i: ArrayLike, target: int
) -> float:
    r"""Exact :math:`\delta(\varepsilon)` of the reduction of seed 001, Theorem 1, for user
    ``target``, plus the mass of the tails left out (an upper bound for the reduction).

    Every other user :math:`i` adds :math:`\mathrm{MultiBern}(p_i,p_i,1-2p_i)` with
    :math:`p_i=(1-\delta_i)/(1+e^{\varepsilon_i})`, so the number :math:`C` of informative clones is
    Poisson-binomial(:math:`2p_i`) and its split is :math:`\mathrm{Bin}(C,1/2)`; the target adds
    (1, 0) or (0, 1) with probabilities :math:`e^{\varepsilon_t}/(1+e^{\varepsilon_t})` and
    :math:`1/(1+e^{\varepsilon_t})` (swapped under the neighbour), scaled by :math:`1-\delta_t`,
    and nothing with probability :math:`\delta_t`. For a fixed total :math:`s` both branches give
    the same binary-mixture form over :math:`\mathrm{Bin}(s-1,1/2)` with an effective keep
    probability :math:`k_s`, so the divergence is computed exactly, total by total.

    What this certifies: for binary randomized response with personalized levels the reduction
    holds exactly (a uniform bit, sent with probability :math:`2/(e^{\varepsilon_i}+1)`, is an even
    mixture of the target's two output laws), so the value bounds the shuffled protocol (seed 001,
    Algorithm 2). For general or user-specific randomizers (personalized Laplace or Gaussian) the
    clone decomposition is not established and nothing is certified.

    >>> round(personalized_clone_delta(0.5, [1.0] * 100, 0.0, target=0), 6) > 0
    True
    """
    eps_val = float(check_epsilon(eps))
    levels, deltas = _personal_levels(eps_i, delta_i)
    n = levels.size
    t = check_integer(target, "target", 0)
    if t >= n:
        raise ValueError(f"target must be a user index below {n}, got {target}")
    others = np.delete(np.arange(n), t)
    blanket = 2 * (1 - deltas[others]) * expit(-levels[others])
    offset, w, dropped = poisson_binomial_pmf(blanket)
    keep = float(expit(levels[t]))
    delta_t = float(deltas[t])
    # totals s = offset + j for j = 0 .. len(w): w(s) from the delta branch, w(s - 1) from the rest
    w_same = np.concatenate([w, [0.0]])       # w(s)
    w_below = np.concatenate([[0.0], w])      # w(s - 1)
    totals = offset + np.arange(w.size + 1)
    mass = delta_t * w_same + (1 - delta_t) * w_below
    usable = (totals >= 1) & (mass > 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        effective = (delta_t * w_same / 2 + (1 - delta_t) * w_below * keep) / mass
    if not usable.any():
        return min(1.0, dropped)
    log_terms = np.log(mass[usable]) + _log_mixture_divergence(
        totals[usable] - 1, effective[usable], eps_val
    )
    summed = float(np.exp(logsumexp(log_terms))) if np.isfinite(log_terms).any() else 0.0
    return min(1.0, summed + dropped)
