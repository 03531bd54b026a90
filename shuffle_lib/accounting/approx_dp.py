r"""Composition and group privacy for central :math:`(\varepsilon,\delta)`-DP.

Classical results (Dwork & Roth 2014, Theorems 3.16 and 3.20; Dwork, Rothblum & Vadhan 2010),
used in the Foundations chapter to compare against the GDP and zCDP accountants.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike
from scipy.special import expit
from scipy.stats import binom

from shuffle_lib._validation import check_delta, check_epsilon, check_integer
from shuffle_lib.accounting.finite import epsilon_for_delta, hockey_stick_divergence


def basic_composition(eps: ArrayLike, delta: ArrayLike) -> tuple[float, float]:
    r"""Basic composition: running :math:`(\varepsilon_t,\delta_t)`-DP mechanisms in sequence is
    :math:`(\sum_t\varepsilon_t, \sum_t\delta_t)`-DP (Dwork & Roth 2014, Theorem 3.16).

    >>> basic_composition([0.5, 0.25], [1e-6, 0.0])
    (0.75, 1e-06)
    """
    eps_arr = check_epsilon(eps)
    delta_arr = np.broadcast_to(check_delta(delta), eps_arr.shape)
    total_delta = float(np.sum(delta_arr))
    if total_delta >= 1:
        raise ValueError(f"the deltas sum to {total_delta} >= 1: no guarantee left")
    return float(np.sum(eps_arr)), total_delta


def advanced_composition(
    eps: float, delta: float, k: int, delta_slack: float
) -> tuple[float, float]:
    r"""Advanced composition of ``k`` :math:`(\varepsilon,\delta)`-DP mechanisms:
    :math:`\bigl(\sqrt{2k\ln(1/\delta')}\,\varepsilon + k\varepsilon(e^\varepsilon-1),\;
    k\delta+\delta'\bigr)`-DP (Dwork, Rothblum & Vadhan 2010; Dwork & Roth 2014, Theorem 3.20).

    ``delta_slack`` is :math:`\delta'` in (0, 1).

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
    total_eps = np.sqrt(2 * k * np.log(1 / slack)) * eps_val + k * eps_val * np.expm1(eps_val)
    return float(total_eps), total_delta


def group_privacy(eps: float, delta: float, k: int) -> tuple[float, float]:
    r"""Group privacy: an :math:`(\varepsilon,\delta)`-DP mechanism protects groups of ``k``
    people (datasets at distance ``k``) at level
    :math:`(k\varepsilon,\; k e^{(k-1)\varepsilon}\delta)` (pure case: Dwork & Roth 2014,
    Theorem 2.2; the delta term by chaining neighbours, see Vadhan 2017).

    The delta term is computed in log space and capped at 1 (no guarantee).

    >>> group_privacy(0.5, 0.0, 3)
    (1.5, 0.0)
    """
    eps_val = float(check_epsilon(eps))
    delta_val = float(check_delta(delta))
    k = check_integer(k, "k", 1)
    if delta_val == 0:
        return k * eps_val, 0.0
    log_delta = np.log(k) + (k - 1) * eps_val + np.log(delta_val)
    return k * eps_val, float(min(1.0, np.exp(min(log_delta, 0.0))))


def _composed_rr_laws(eps: float, k: int) -> tuple[np.ndarray, np.ndarray]:
    # k-fold eps-RR on input 0 vs input 1: the number of reports equal to 0 is a sufficient
    # statistic, Bin(k, p) vs Bin(k, 1 - p) with p = e^eps / (1 + e^eps).
    keep = float(expit(eps))
    support = np.arange(k + 1)
    return binom.pmf(support, k, keep), binom.pmf(support, k, 1 - keep)


def optimal_composition_delta(eps0: float, k: int, eps: ArrayLike) -> np.ndarray | float:
    r"""Exact :math:`\delta(\varepsilon)` of the worst ``k``-fold composition of
    :math:`\varepsilon_0`-DP mechanisms.

    Kairouz, Oh & Viswanath (2015) show that randomized response is the worst case,
    so this is the hockey-stick divergence between :math:`\mathrm{Bin}(k,p)` and
    :math:`\mathrm{Bin}(k,1-p)`, :math:`p=e^{\varepsilon_0}/(1+e^{\varepsilon_0})`. Exact up to
    floating point; vectorized over ``eps``.

    >>> round(optimal_composition_delta(1.0, 1, 0.0), 6)
    0.462117
    """
    eps0_val = float(check_epsilon(eps0, "eps0"))
    k = check_integer(k, "k", 1)
    first, second = _composed_rr_laws(eps0_val, k)
    return hockey_stick_divergence(first, second, eps)


def optimal_composition_epsilon(eps0: float, k: int, delta: float) -> float:
    r"""Smallest :math:`\varepsilon` such that every ``k``-fold composition of
    :math:`\varepsilon_0`-DP mechanisms is :math:`(\varepsilon,\delta)`-DP (Kairouz, Oh &
    Viswanath 2015): the inverse of :func:`optimal_composition_delta`, rounded up.

    Never larger than basic composition :math:`k\varepsilon_0` or the advanced bound.

    >>> round(optimal_composition_epsilon(0.5, 1, 0.0), 9)
    0.5
    """
    eps0_val = float(check_epsilon(eps0, "eps0"))
    k = check_integer(k, "k", 1)
    first, second = _composed_rr_laws(eps0_val, k)
    return min(epsilon_for_delta(first, second, delta), k * eps0_val)
