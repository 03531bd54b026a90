r"""Personalized shuffling (seed 001, Chen, Cao & Ge, GSPA).

Users choose their own local levels :math:`(\varepsilon_i,\delta_i)`; the shuffled reports are
*approximately* :math:`\mu`-GDP (seed 001, Theorem 2). The rigorous personalized clone accountant
that the book compares this approximation with is built on :func:`personalized_clone_delta`.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike
from scipy.special import expit, logsumexp

from shuffle_lib._validation import check_delta, check_epsilon, check_integer
from shuffle_lib.accounting._binomial import log_mixture_divergence, poisson_binomial_pmf
from shuffle_lib.accounting.fdp import gdp_epsilon


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
    log_terms = np.log(mass[usable]) + log_mixture_divergence(
        totals[usable] - 1, effective[usable], eps_val
    )
    summed = float(np.exp(logsumexp(log_terms))) if np.isfinite(log_terms).any() else 0.0
    return min(1.0, summed + dropped)
