r"""Hypothesis-testing privacy: trade-off functions, f-DP and Gaussian DP (GDP).

A trade-off function :math:`T(P,Q)(\alpha)` is the smallest type II error of a test between
:math:`P` and :math:`Q` whose type I error is at most :math:`\alpha`; a mechanism is f-DP when
every neighbouring pair has :math:`T \ge f`, and :math:`\mu`-GDP when
:math:`f = G_\mu = T(N(0,1), N(\mu,1))`. Facts 1, 3 and 4 of seed 001 (Chen, Cao & Ge, GSPA,
Appendix), which restate Dong, Roth & Su (2022).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from numpy.typing import ArrayLike
from scipy.optimize import brentq
from scipy.special import erf, erfinv
from scipy.stats import norm

from shuffle_lib._numerics import nudge, scalar_or_array
from shuffle_lib._validation import (
    check_delta,
    check_epsilon,
    check_integer,
    check_positive,
    check_probability,
)
from shuffle_lib.accounting.finite import check_distribution_pair

_ROOT_XTOL = 1e-13


def gdp_tradeoff(mu: ArrayLike, alpha: ArrayLike) -> np.ndarray | float:
    r"""Gaussian trade-off function :math:`G_\mu(\alpha)=\Phi(\Phi^{-1}(1-\alpha)-\mu)`.

    Seed 001, Fact 3. ``mu`` > 0 and ``alpha`` in [0, 1]; broadcasts.

    >>> round(gdp_tradeoff(1.0, 0.05), 6)
    0.740489
    """
    mu_arr = check_positive(mu, "mu")
    alpha_arr = check_probability(alpha, "alpha")
    return scalar_or_array(norm.cdf(norm.isf(alpha_arr) - mu_arr))


def approx_dp_tradeoff(eps: ArrayLike, delta: ArrayLike, alpha: ArrayLike) -> np.ndarray | float:
    r"""Trade-off function of :math:`(\varepsilon,\delta)`-DP,
    :math:`f_{\varepsilon,\delta}(\alpha)=\max\{0,\,1-\delta-e^\varepsilon\alpha,\,
    e^{-\varepsilon}(1-\delta-\alpha)\}`.

    Seed 001, Fact 1 (the seed prints the last term as
    :math:`e^{-\varepsilon}(1-\delta-\varepsilon)`, a typo for :math:`1-\delta-\alpha`;
    see Dong, Roth & Su 2022).

    >>> round(approx_dp_tradeoff(1.0, 0.0, 0.1), 6)
    0.728172
    """
    eps_arr = check_epsilon(eps)
    delta_arr = check_delta(delta)
    alpha_arr = check_probability(alpha, "alpha")
    with np.errstate(over="ignore"):
        first = 1.0 - delta_arr - np.exp(eps_arr) * alpha_arr
    second = np.exp(-eps_arr) * (1.0 - delta_arr - alpha_arr)
    return scalar_or_array(np.maximum(0.0, np.maximum(first, second)))


def tradeoff_from_distributions(p: ArrayLike, q: ArrayLike, alpha: ArrayLike) -> np.ndarray | float:
    r"""Exact trade-off function :math:`T(P,Q)(\alpha)` of two distributions on a finite set.

    By the Neyman-Pearson lemma the optimal tests reject the outcomes with the largest
    likelihood ratio :math:`Q(o)/P(o)` first (randomizing on the boundary), so the curve is the
    piecewise-linear interpolation of the points
    :math:`(\sum_{o\le m} P(o),\, 1-\sum_{o\le m} Q(o))` in decreasing ratio order.
    Seed 001, equation (5).

    >>> round(tradeoff_from_distributions([0.75, 0.25], [0.25, 0.75], 0.25), 12)
    0.25
    """
    p_arr, q_arr = check_distribution_pair(p, q)
    alpha_arr = check_probability(alpha, "alpha")
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(p_arr > 0, q_arr / np.where(p_arr > 0, p_arr, 1.0), np.inf)
    order = np.argsort(-ratio, kind="stable")
    type1 = np.concatenate([[0.0], np.cumsum(p_arr[order])])
    type2 = np.concatenate([[1.0], 1.0 - np.cumsum(q_arr[order])])
    # Outcomes with P = 0 are rejected for free: keep the lowest type II error at each type I error.
    keep = np.concatenate([type1[1:] > type1[:-1], [True]])
    curve = np.interp(alpha_arr, type1[keep], np.clip(type2[keep], 0.0, 1.0))
    return scalar_or_array(curve)


def tradeoff_chain(
    f: Callable[[np.ndarray], ArrayLike], g: Callable[[np.ndarray], ArrayLike], alpha: ArrayLike
) -> np.ndarray | float:
    r"""Chaining two trade-off bounds (seed 001, Fact 4): if :math:`T(P,Q)\ge f` and
    :math:`T(Q,R)\ge g` then :math:`T(P,R)(\alpha)\ge g(1-f(\alpha))`.

    Why: a test with type I error :math:`\alpha` under :math:`P` rejects with probability at most
    :math:`1-f(\alpha)` under :math:`Q`, and :math:`g` is non-increasing. The seed's statement
    writes the first hypothesis as :math:`T(P,R)\ge f`, a typo for :math:`T(P,Q)\ge f` (its own
    proof of Theorem 2 uses it that way). ``f`` and ``g`` take an array of type I errors and return
    type II errors in [0, 1]; the result is exact for Gaussian shifts:
    :math:`G_{\mu_2}(1-G_{\mu_1}(\alpha))=G_{\mu_1+\mu_2}(\alpha)`.

    >>> def f(a): return gdp_tradeoff(1.0, a)
    >>> def g(a): return gdp_tradeoff(0.5, a)
    >>> bool(np.isclose(tradeoff_chain(f, g, 0.1), gdp_tradeoff(1.5, 0.1)))
    True
    """
    alpha_arr = check_probability(alpha, "alpha")
    first = check_probability(np.asarray(f(alpha_arr), dtype=float), "f(alpha)")
    second = check_probability(np.asarray(g(1.0 - first), dtype=float), "g(1 - f(alpha))")
    return scalar_or_array(second)


def _log_gdp_delta(mu: np.ndarray, eps: np.ndarray) -> np.ndarray:
    log_first = norm.logcdf(-eps / mu + mu / 2)
    log_second = eps + norm.logcdf(-eps / mu - mu / 2)
    gap = np.minimum(log_second - log_first, 0.0)
    with np.errstate(divide="ignore"):
        return log_first + np.log(-np.expm1(gap))


def gdp_delta(mu: ArrayLike, eps: ArrayLike) -> np.ndarray | float:
    r""":math:`\delta(\varepsilon)` of :math:`\mu`-GDP:
    :math:`\Phi(-\varepsilon/\mu+\mu/2)-e^\varepsilon\Phi(-\varepsilon/\mu-\mu/2)`.

    A mechanism is :math:`\mu`-GDP iff it is :math:`(\varepsilon,\delta(\varepsilon))`-DP for every
    :math:`\varepsilon\ge 0` (seed 001, Fact 3). Evaluated in log space, so it neither overflows
    nor goes negative for large :math:`\varepsilon`; relative accuracy about 1e-12 for
    ``mu`` >= 1e-4 (the two log terms cancel as ``mu`` -> 0; ``eps = 0`` uses the exact
    :math:`\operatorname{erf}(\mu/2\sqrt2)`). Broadcasts over ``mu`` > 0, ``eps`` >= 0.

    >>> round(gdp_delta(1.0, 1.0), 6)
    0.126937
    """
    mu_arr = check_positive(mu, "mu")
    eps_arr = check_epsilon(eps)
    general = np.exp(_log_gdp_delta(mu_arr, eps_arr))
    at_zero = erf(mu_arr / (2 * np.sqrt(2)))  # exact at eps = 0, where the logs cancel
    return scalar_or_array(np.clip(np.where(eps_arr == 0, at_zero, general), 0.0, 1.0))


def _gdp_epsilon_scalar(mu: float, delta: float) -> float:
    if delta >= gdp_delta(mu, 0.0):
        return 0.0
    log_target = np.log(delta)

    def excess(e: float) -> float:
        return float(_log_gdp_delta(np.asarray(mu), np.asarray(e))) - log_target

    high = mu * mu / 2 + mu * float(norm.isf(delta))  # Phi(-high/mu + mu/2) = delta
    while excess(high) > 0:
        high *= 2
    if excess(0.0) <= 0:  # the log formula and the exact erf at eps = 0 disagree in the last digits
        root = 0.0
    else:
        root = brentq(excess, 0.0, high, xtol=_ROOT_XTOL, rtol=4 * np.finfo(float).eps)
    # round up: never report an epsilon whose delta exceeds the target
    return float(nudge(root, lambda e: excess(e) > 0 or gdp_delta(mu, e) > delta,
                       max(_ROOT_XTOL, 1e-15 * root), +1))


def gdp_epsilon(mu: ArrayLike, delta: ArrayLike) -> np.ndarray | float:
    r"""Smallest :math:`\varepsilon` with :math:`\delta_\mu(\varepsilon)\le\delta` for a
    :math:`\mu`-GDP mechanism (inverse of :func:`gdp_delta`, seed 001, Fact 3).

    Upper bound: a monotone root search (tolerance 1e-13) rounded up so that
    ``gdp_delta(mu, result) <= delta``. Returns 0 when :math:`\delta \ge 2\Phi(\mu/2)-1`.
    ``delta`` must lie in (0, 1).

    >>> round(gdp_epsilon(1.0, 1e-5), 4)
    4.3772
    """
    mu_arr = check_positive(mu, "mu")
    delta_arr = check_delta(delta, allow_zero=False)
    result = np.vectorize(_gdp_epsilon_scalar, otypes=[float])(mu_arr, delta_arr)
    return scalar_or_array(result)


def _gdp_mu_scalar(eps: float, delta: float) -> float:
    if eps == 0.0:  # delta_mu(0) = 2 Phi(mu/2) - 1 = erf(mu / (2 sqrt 2))
        return float(2 * np.sqrt(2) * erfinv(delta))
    log_target = np.log(delta)

    def excess(log_mu: float) -> float:
        return float(_log_gdp_delta(np.exp(np.asarray(log_mu)), np.asarray(eps))) - log_target

    z = float(norm.ppf(delta))
    low = np.log(z + np.sqrt(z * z + 2 * eps))  # there Phi(-eps/mu + mu/2) = delta >= delta(mu)
    high = low + 1.0
    while excess(high) < 0:
        high += 1.0
    log_mu = brentq(excess, low, high, xtol=_ROOT_XTOL, rtol=4 * np.finfo(float).eps)
    # round down: the returned mu must meet the target
    log_mu = nudge(log_mu, lambda m: excess(m) > 0 or gdp_delta(np.exp(m), eps) > delta,
                   _ROOT_XTOL, -1)
    return float(np.exp(log_mu))


def gdp_mu(eps: ArrayLike, delta: ArrayLike) -> np.ndarray | float:
    r"""Largest :math:`\mu` such that :math:`\mu`-GDP implies :math:`(\varepsilon,\delta)`-DP,
    i.e. the root of :math:`\delta_\mu(\varepsilon)=\delta` (seed 001, Fact 3; increasing in mu).

    Lower bound on the admissible mu (rounded down, tolerance 1e-13 in log mu). It calibrates
    the Gaussian mechanism exactly (Balle & Wang 2018): noise :math:`\sigma=\Delta_2/\mu`.

    >>> round(gdp_mu(gdp_epsilon(1.0, 1e-5), 1e-5), 8)
    1.0
    """
    eps_arr = check_epsilon(eps)
    delta_arr = check_delta(delta, allow_zero=False)
    return scalar_or_array(np.vectorize(_gdp_mu_scalar, otypes=[float])(eps_arr, delta_arr))


def gdp_compose(mus: ArrayLike) -> float:
    r"""GDP composition: running :math:`\mu_1,\dots,\mu_T`-GDP mechanisms is
    :math:`\sqrt{\mu_1^2+\dots+\mu_T^2}`-GDP (seed 001, Fact 3; exact for Gaussian mechanisms).

    >>> gdp_compose([3.0, 4.0])
    5.0
    """
    mu_arr = check_positive(mus, "mus")
    return float(np.sqrt(np.sum(mu_arr**2)))


def gdp_group(mu: ArrayLike, k: int) -> np.ndarray | float:
    r"""Group privacy: a :math:`\mu`-GDP mechanism is :math:`k\mu`-GDP for groups of ``k`` people
    (seed 001, Fact 3).

    >>> gdp_group(0.5, 3)
    1.5
    """
    return scalar_or_array(check_integer(k, "k", 1) * check_positive(mu, "mu"))
