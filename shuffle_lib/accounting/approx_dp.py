r"""Composition and group privacy for central :math:`(\varepsilon,\delta)`-DP.

Classical results (Dwork & Roth 2014, Theorems 3.16 and 3.20; Dwork, Rothblum & Vadhan 2010),
used in the Foundations chapter to compare against the GDP and zCDP accountants.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
from numpy.typing import ArrayLike
from scipy.special import expit
from scipy.stats import binom

from shuffle_lib._numerics import EPS_TOL, bisect, scalar_or_array
from shuffle_lib._validation import check_delta, check_epsilon, check_integer, check_real

#: Largest number of compositions :func:`optimal_composition_delta` and
#: :func:`optimal_composition_epsilon` take: their cost grows like k (a binomial law on k + 1
#: points, about 0.1 s at the limit).
K_MAX = 10**6
#: Smallest positive delta :func:`optimal_composition_epsilon` takes: the outcomes whose
#: probability underflows (below 5e-324 each, at most k + 1 of them) are then negligible.
DELTA_MIN = 1e-300


def _finite_epsilon(total: float, name: str, value: object, k: int) -> float:
    if not np.isfinite(total):
        raise ValueError(f"{name}={value!r} with k={k} gives a composed epsilon beyond the float "
                         "range")
    return float(total)


def basic_composition(eps: ArrayLike, delta: ArrayLike) -> tuple[float, float]:
    r"""Basic composition: running :math:`(\varepsilon_t,\delta_t)`-DP mechanisms in sequence is
    :math:`(\sum_t\varepsilon_t, \sum_t\delta_t)`-DP (Dwork & Roth 2014, Theorem 3.16).

    ``delta`` holds one value per mechanism (the shape of ``eps``) or one shared by all.
    ``ValueError`` if the deltas sum to 1 or more, or the epsilons beyond the float range.

    >>> basic_composition([0.5, 0.25], [1e-6, 0.0])
    (0.75, 1e-06)
    """
    eps_arr = check_epsilon(eps)
    delta_arr = check_delta(delta)
    if delta_arr.ndim and delta_arr.shape != eps_arr.shape:
        raise ValueError(f"delta must be a scalar or have the shape of eps {eps_arr.shape}, "
                         f"got shape {delta_arr.shape}")
    total_delta = float(np.sum(np.broadcast_to(delta_arr, eps_arr.shape)))
    if total_delta >= 1:
        raise ValueError(f"the deltas sum to {total_delta} >= 1: no guarantee left")
    with np.errstate(over="ignore"):
        total_eps = float(np.sum(eps_arr))
    if not np.isfinite(total_eps):
        raise ValueError(f"the entries of eps sum beyond the float range: {eps!r}")
    return total_eps, total_delta


def advanced_composition(
    eps: float, delta: float, k: int, delta_slack: float
) -> tuple[float, float]:
    r"""Advanced composition of ``k`` :math:`(\varepsilon,\delta)`-DP mechanisms:
    :math:`\bigl(\sqrt{2k\ln(1/\delta')}\,\varepsilon + k\varepsilon(e^\varepsilon-1),\;
    k\delta+\delta'\bigr)`-DP (Dwork, Rothblum & Vadhan 2010; Dwork & Roth 2014, Theorem 3.20).

    ``delta_slack`` is :math:`\delta'` in (0, 1). ``ValueError`` when the composed epsilon
    exceeds the float range (``eps`` above about 700, or astronomically many mechanisms).

    >>> e, d = advanced_composition(0.1, 0.0, 100, 1e-5)
    >>> round(e, 4), d
    (5.8502, 1e-05)
    """
    eps_val = float(check_epsilon(eps))
    delta_val = float(check_delta(delta))
    k = check_integer(k, "k", 1)
    slack = float(check_delta(delta_slack, "delta_slack", allow_zero=False))
    total_delta = k * delta_val + slack
    if total_delta >= 1:
        raise ValueError(f"k * delta + delta_slack = {total_delta} >= 1: no guarantee left")
    log_inv = np.log(1 / slack) if slack > 1e-300 else -np.log(slack)  # 1 / slack overflows
    with np.errstate(over="ignore"):
        total_eps = np.sqrt(2 * k * log_inv) * eps_val + k * eps_val * np.expm1(eps_val)
    return _finite_epsilon(total_eps, "eps", eps, k), total_delta


def group_privacy(eps: float, delta: float, k: int) -> tuple[float, float]:
    r"""Group privacy: an :math:`(\varepsilon,\delta)`-DP mechanism protects groups of ``k``
    people (datasets at distance ``k``) at level
    :math:`(k\varepsilon,\; k e^{(k-1)\varepsilon}\delta)` (pure case: Dwork & Roth 2014,
    Theorem 2.2; the delta term by chaining neighbours, see Vadhan 2017).

    The delta term is computed in log space and capped at 1 (no guarantee). ``ValueError`` when
    :math:`k\varepsilon` exceeds the float range.

    >>> group_privacy(0.5, 0.0, 3)
    (1.5, 0.0)
    """
    eps_val = float(check_epsilon(eps))
    delta_val = float(check_delta(delta))
    k = check_integer(k, "k", 1)
    total_eps = _finite_epsilon(k * eps_val, "eps", eps, k)
    if delta_val == 0:
        return total_eps, 0.0
    log_delta = np.log(k) + (k - 1) * eps_val + np.log(delta_val)
    return total_eps, float(min(1.0, np.exp(min(log_delta, 0.0))))


def _times_rounded_up(k: int, eps0: float) -> float:
    """The product ``k * eps0`` rounded up to a double: never below the exact product (the
    nearest double can be half a unit below it: ``5 * 1e90`` rounds to 4.9999999999999995e90)."""
    product = k * eps0
    if np.isfinite(product) and Fraction(product) < Fraction(k) * Fraction(eps0):
        product = float(np.nextafter(product, np.inf))
    return product


def _composed_rr_loss(eps0: float, k: int) -> tuple[np.ndarray, np.ndarray]:
    # k-fold eps0-RR on input 0 vs input 1: the number x of reports equal to 0 is a sufficient
    # statistic, Bin(k, p) vs Bin(k, 1 - p) with p = e^eps0 / (1 + e^eps0), and its privacy loss
    # is ln(P(x) / Q(x)) = (2x - k) eps0. Outcomes whose probability under P underflows to 0
    # contribute nothing and are dropped. The positive losses are rounded up (one step above the
    # nearest double: the integer times eps0 is one rounding), so that delta, which grows with
    # each loss, is never computed below its exact value for want of the last bit of a loss.
    support = np.arange(k + 1)
    pmf = binom.pmf(support, k, float(expit(eps0)))
    kept = pmf > 0
    with np.errstate(over="ignore"):
        loss = (2 * support[kept] - k) * eps0
    loss = np.where((loss > 0) & np.isfinite(loss), np.nextafter(loss, np.inf), loss)
    return pmf[kept], loss


def _composed_rr_delta(pmf: np.ndarray, loss: np.ndarray, eps: float) -> float:
    # H(P || Q) = sum_x P(x) (1 - e^{eps - L(x)})_+, equal to H(Q || P) (swap x and k - x):
    # Q(x) = P(x) e^{-L(x)} is never formed, so nothing underflows
    gap = np.minimum(eps - loss, 0.0)
    return float(min(1.0, np.sum(pmf * -np.expm1(gap))))


def optimal_composition_delta(eps0: float, k: int, eps: ArrayLike) -> np.ndarray | float:
    r"""Exact :math:`\delta(\varepsilon)` of the worst ``k``-fold composition of
    :math:`\varepsilon_0`-DP mechanisms.

    Kairouz, Oh & Viswanath (2015) show that randomized response is the worst case,
    so this is the hockey-stick divergence between :math:`\mathrm{Bin}(k,p)` and
    :math:`\mathrm{Bin}(k,1-p)`, :math:`p=e^{\varepsilon_0}/(1+e^{\varepsilon_0})`, evaluated as
    :math:`\sum_x P(x)\,(1-e^{\varepsilon-L(x)})_+` with the privacy loss
    :math:`L(x)=(2x-k)\varepsilon_0`, so that no probability of the second law is formed (it
    underflows long before :math:`\delta` does). Exact up to floating point; vectorized over
    ``eps``. ``k`` at most :data:`K_MAX` (1e6; ``ValueError`` beyond).

    >>> round(optimal_composition_delta(1.0, 1, 0.0), 6)
    0.462117
    """
    eps0_val = float(check_epsilon(eps0, "eps0"))
    k = check_integer(k, "k", 1, K_MAX)
    eps_arr = check_epsilon(eps)
    pmf, loss = _composed_rr_loss(eps0_val, k)
    deltas = [_composed_rr_delta(pmf, loss, e) for e in eps_arr.ravel()]
    return scalar_or_array(np.reshape(deltas, eps_arr.shape))


def optimal_composition_epsilon(eps0: float, k: int, delta: float) -> float:
    r"""Smallest :math:`\varepsilon` such that every ``k``-fold composition of
    :math:`\varepsilon_0`-DP mechanisms is :math:`(\varepsilon,\delta)`-DP (Kairouz, Oh &
    Viswanath 2015): the inverse of :func:`optimal_composition_delta` by bisection on
    :math:`[0, k\varepsilon_0]`, rounded up (within 1e-12, relative above 1).

    At ``delta = 0`` the answer is :math:`k\varepsilon_0` (every outcome is possible under both
    inputs and the largest privacy loss is :math:`k\varepsilon_0`), rounded up to a double; the
    privacy losses are rounded up too, so that near a jump of the delta curve (large
    ``eps0``: ``optimal_composition_epsilon(1e90, 5, 1e-10)`` returned the nearest double
    4.9999999999999995e90, below the exact answer, 5 times the double 1e90 less about 1e-10) the
    answer is never below the exact one for want of the last bit. Never larger than
    basic composition :math:`k\varepsilon_0` (rounded up) or the advanced bound. ``k`` at most
    :data:`K_MAX` (1e6), :math:`k\varepsilon_0` within the float range and ``delta`` 0 or in
    [1e-300, 1) (:data:`DELTA_MIN`); ``ValueError`` otherwise.

    >>> round(optimal_composition_epsilon(0.5, 1, 0.0), 9)
    0.5
    """
    eps0_val = float(check_epsilon(eps0, "eps0"))
    k = check_integer(k, "k", 1, K_MAX)
    delta_val = check_real(delta, "delta", low=0.0, high=1.0, high_open=True)
    if 0 < delta_val < DELTA_MIN:
        raise ValueError(f"delta must be 0 or at least {DELTA_MIN:g}, got {delta!r}")
    # k eps0 rounded up: at delta = 0 it is the answer, and the nearest double can be below it
    cap = _finite_epsilon(_times_rounded_up(k, eps0_val), "eps0", eps0, k)
    if delta_val == 0:
        return cap
    pmf, loss = _composed_rr_loss(eps0_val, k)

    def holds(e: float) -> bool:
        return _composed_rr_delta(pmf, loss, e) <= delta_val

    if holds(0.0):
        return 0.0
    _, high = bisect(holds, 0.0, cap, EPS_TOL)  # round up; delta(cap) = 0 always holds
    return high
