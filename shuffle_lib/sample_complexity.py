r"""Sample complexities quoted by Canonne (2021), a blog post on Feldman, McMillan & Talwar 2021.

Every function returns the *order of growth* :math:`\Theta(\cdot)` of the number of users needed,
with all constants set to 1, as the post states them: the curves can be compared in shape and
slope, not read as exact sample sizes. ``k`` is the domain size, ``alpha`` the accuracy in total
variation distance, ``eps`` (and ``delta``) the privacy level.

Ranges: ``k > 0`` is a real number (the rates are smooth in ``k`` and are plotted on real
grids), ``alpha`` in ``(0, 1]``, ``eps > 0``, all finite, and ``delta`` in ``(0, 1)``; each may
be an array (broadcast). Where the direct formula over- or underflows on the way, the rate is
summed from the logarithms of its terms; a rate above the largest float (about ``1.8e308``, e.g.
for ``alpha`` below about ``1e-154``) raises ``ValueError`` rather than returning ``inf``.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from numpy.typing import ArrayLike
from scipy.optimize import brentq
from scipy.special import logsumexp

from shuffle_lib._numerics import scalar_or_array
from shuffle_lib._validation import (
    check_array,
    check_bool,
    check_delta,
    check_positive,
    check_real,
)

TASKS = ("learning", "testing-private-coin", "testing-public-coin")

MAX_K_OVER_ALPHA = 1e140
"""Largest ``k / alpha`` of :func:`plugged_sample_complexity`: the LDP rate at the smallest local
level it tries (``1e-12``) must stay a float."""

_LOG_MAX_N = 709.0
"""A log sample size whose exponential is still a float (the largest is about 709.78)."""


def _task(k: ArrayLike, alpha: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    k_arr = check_positive(k, "k")
    alpha_arr = check_positive(alpha, "alpha")
    if (alpha_arr > 1).any():
        raise ValueError(f"alpha must lie in (0, 1], got {alpha!r}")
    return k_arr, alpha_arr


def _common(k: ArrayLike, alpha: ArrayLike, eps: ArrayLike) -> tuple[np.ndarray, ...]:
    return (*_task(k, alpha), check_positive(eps, "eps"))


def _log_inverse(delta: ArrayLike) -> np.ndarray:
    r""":math:`\ln(1/\delta)` for ``delta`` checked in (0, 1): ``np.log(1 / delta)``, or
    ``-np.log(delta)`` where ``1 / delta`` overflows (``delta`` below about ``5.6e-309``)."""
    d = check_delta(delta, allow_zero=False)
    with np.errstate(over="ignore", divide="ignore"):
        direct = np.log(1 / d)
    return np.where(np.isinf(direct), -np.log(d), direct)


def _log_expm1(e: np.ndarray) -> np.ndarray:
    """``log(exp(e) - 1)`` for ``e > 0`` without overflow (large ``e``) or cancellation."""
    with np.errstate(divide="ignore"):
        return np.where(e > 1, e + np.log1p(-np.exp(-e)), np.log(np.expm1(np.minimum(e, 1))))


def _rate(value: np.ndarray, log_terms: Callable[[], list[np.ndarray]], names: str
          ) -> np.ndarray | float:
    """``value`` (a sum of positive terms computed directly) where it is a finite float; where an
    intermediate over- or underflowed, the same sum from the logarithms of its terms,
    ``log_terms()``; a ``ValueError`` naming ``names`` if the sum exceeds the largest float."""
    bad = ~np.isfinite(value)
    if bad.any():
        with np.errstate(over="ignore"):
            summed = np.exp(logsumexp(np.stack(np.broadcast_arrays(*log_terms())), axis=0))
        value = np.where(bad, summed, value)
        if not np.isfinite(value).all():
            raise ValueError(f"the sample complexity exceeds the largest float (about 1.8e308) "
                             f"for these {names}")
    return scalar_or_array(value)


def learning_central(k: ArrayLike, alpha: ArrayLike, eps: ArrayLike) -> np.ndarray | float:
    r"""Central DP learning: :math:`k/\alpha^2 + k/(\alpha\varepsilon)`.

    Canonne 2021, after Diakonikolas, Hardt & Schmidt 2015.

    >>> round(learning_central(10.0, 0.1, 1.0))
    1100
    """
    k_arr, a, e = _common(k, alpha, eps)
    with np.errstate(over="ignore", under="ignore", divide="ignore"):
        value = k_arr / a**2 + k_arr / (a * e)
    lk, la, le = np.log(k_arr), np.log(a), np.log(e)
    return _rate(value, lambda: [lk - 2 * la, lk - la - le], "k, alpha, eps")


def learning_ldp(k: ArrayLike, alpha: ArrayLike, eps: ArrayLike) -> np.ndarray | float:
    r"""LDP learning, Canonne 2021, equation (4):
    :math:`\frac{k^2}{\alpha^2(e^\varepsilon-1)^2}+\frac{k^2}{\alpha^2e^\varepsilon}+\frac{k}{\alpha^2}`.

    >>> round(learning_ldp(10.0, 0.1, 1.0))
    8066
    """
    k_arr, a, e = _common(k, alpha, eps)
    with np.errstate(over="ignore", under="ignore", divide="ignore", invalid="ignore"):
        value = (k_arr**2 / (a**2 * np.expm1(e) ** 2) + k_arr**2 / (a**2 * np.exp(e))
                 + k_arr / a**2)
    lk, la = np.log(k_arr), np.log(a)
    return _rate(value, lambda: [2 * lk - 2 * la - 2 * _log_expm1(e), 2 * lk - 2 * la - e,
                                 lk - 2 * la], "k, alpha, eps")


def learning_shuffle(
    k: ArrayLike, alpha: ArrayLike, eps: ArrayLike, delta: ArrayLike
) -> np.ndarray | float:
    r"""Shuffle DP learning by shuffling an optimal LDP protocol (Canonne 2021):
    :math:`k/\alpha^2 + k\sqrt{\ln(1/\delta)}/(\alpha\varepsilon)`.

    >>> round(learning_shuffle(10.0, 0.1, 1.0, 1e-6))
    1372
    """
    k_arr, a, e = _common(k, alpha, eps)
    log_term = _log_inverse(delta)
    with np.errstate(over="ignore", under="ignore", divide="ignore"):
        value = k_arr / a**2 + k_arr * np.sqrt(log_term) / (a * e)
    lk, la, le, ll = np.log(k_arr), np.log(a), np.log(e), np.log(log_term)
    return _rate(value, lambda: [lk - 2 * la, lk + ll / 2 - la - le], "k, alpha, eps, delta")


def uniformity_testing_nonprivate(k: ArrayLike, alpha: ArrayLike) -> np.ndarray | float:
    r"""Uniformity testing without privacy, :math:`\sqrt k/\alpha^2`.

    Canonne 2021, after Paninski 2008.

    >>> uniformity_testing_nonprivate(100.0, 0.5)
    40.0
    """
    k_arr, a = _task(k, alpha)
    with np.errstate(over="ignore", under="ignore", divide="ignore"):
        value = np.sqrt(k_arr) / a**2
    return _rate(value, lambda: [np.log(k_arr) / 2 - 2 * np.log(a)], "k, alpha")


def uniformity_testing_central(
    k: ArrayLike, alpha: ArrayLike, eps: ArrayLike
) -> np.ndarray | float:
    r"""Uniformity testing under central (pure) :math:`\varepsilon`-DP.

    :math:`\frac{\sqrt k}{\alpha^2}+\frac{\sqrt k}{\alpha\sqrt\varepsilon}
    +\frac{k^{1/3}}{\alpha^{4/3}\varepsilon^{2/3}}+\frac{1}{\alpha\varepsilon}`, as quoted by
    Canonne 2021 from Acharya, Sun & Zhang 2018 and Aliakbarpour, Diakonikolas & Rubinfeld 2018.

    The first term is the non-private rate; each of the other three, the price of privacy,
    dominates in its own range of :math:`(k,\alpha,\varepsilon)`. A trusted curator, no
    :math:`\delta`; defined for :math:`k>0`, :math:`\alpha\in(0,1]`, :math:`\varepsilon>0`.
    Each privacy term is at most the larger of the two terms of the shuffled private-coin rate
    (:func:`uniformity_testing_shuffle`), so for :math:`\delta\le e^{-1}` this rate is at most
    3 times that one (and at most 2 times the shuffled public-coin rate).

    >>> round(uniformity_testing_central(100.0, 0.5, 1.0), 3)
    73.696
    """
    k_arr, a, e = _common(k, alpha, eps)
    with np.errstate(over="ignore", under="ignore", divide="ignore"):
        privacy = (np.sqrt(k_arr) / (a * np.sqrt(e))
                   + k_arr ** (1 / 3) / (a ** (4 / 3) * e ** (2 / 3)) + 1 / (a * e))
        value = privacy + np.sqrt(k_arr) / a**2
    lk, la, le = np.log(k_arr), np.log(a), np.log(e)
    return _rate(value, lambda: [lk / 2 - la - le / 2, lk / 3 - 4 * la / 3 - 2 * le / 3,
                                 -la - le, lk / 2 - 2 * la], "k, alpha, eps")


def uniformity_testing_ldp(
    k: ArrayLike, alpha: ArrayLike, eps: ArrayLike, public_coin: bool = False
) -> np.ndarray | float:
    r"""LDP uniformity testing, Canonne 2021, equation (6) (public coin),
    :math:`\frac{k}{\alpha^2(e^\varepsilon-1)^2}+\frac{k}{\alpha^2e^{\varepsilon/2}}
    +\frac{\sqrt k}{\alpha^2}`, and equation (7) (private coin),
    :math:`\frac{k^{3/2}}{\alpha^2(e^\varepsilon-1)^2}+\frac{k^{3/2}}{\alpha^2e^{\varepsilon}}
    +\frac{\sqrt k}{\alpha^2}`.

    >>> uniformity_testing_ldp(100.0, 0.5, 1.0, True) < uniformity_testing_ldp(100.0, 0.5, 1.0)
    True
    """
    k_arr, a, e = _common(k, alpha, eps)
    public = check_bool(public_coin, "public_coin")
    with np.errstate(over="ignore", under="ignore", divide="ignore", invalid="ignore"):
        if public:
            value = k_arr / (a**2 * np.expm1(e) ** 2) + k_arr / (a**2 * np.exp(e / 2))
        else:
            value = k_arr**1.5 / (a**2 * np.expm1(e) ** 2) + k_arr**1.5 / (a**2 * np.exp(e))
        value = value + np.sqrt(k_arr) / a**2
    lk, la = np.log(k_arr), np.log(a)
    power, decay = (1.0, e / 2) if public else (1.5, e)
    return _rate(value, lambda: [power * lk - 2 * la - 2 * _log_expm1(e),
                                 power * lk - 2 * la - decay, lk / 2 - 2 * la], "k, alpha, eps")


def uniformity_testing_shuffle(
    k: ArrayLike, alpha: ArrayLike, eps: ArrayLike, delta: ArrayLike, public_coin: bool = False
) -> np.ndarray | float:
    r"""Shuffle DP uniformity testing by shuffling an optimal LDP tester (Canonne 2021).

    Private coin
    :math:`k^{3/4}\sqrt{\ln(1/\delta)}/(\alpha\varepsilon)+\sqrt k/\alpha^2`; public coin
    :math:`k^{2/3}\ln^{1/3}(1/\delta)/(\alpha^{4/3}\varepsilon^{2/3})
    +\sqrt{k\ln(1/\delta)}/(\alpha\varepsilon)+\sqrt k/\alpha^2`.

    >>> public = uniformity_testing_shuffle(100.0, 0.5, 1.0, 1e-6, public_coin=True)
    >>> public < uniformity_testing_shuffle(100.0, 0.5, 1.0, 1e-6)
    True
    """
    k_arr, a, e = _common(k, alpha, eps)
    log_term = _log_inverse(delta)
    public = check_bool(public_coin, "public_coin")
    with np.errstate(over="ignore", under="ignore", divide="ignore"):
        if public:
            value = (k_arr ** (2 / 3) * log_term ** (1 / 3) / (a ** (4 / 3) * e ** (2 / 3))
                     + np.sqrt(k_arr * log_term) / (a * e))
        else:
            value = k_arr**0.75 * np.sqrt(log_term) / (a * e)
        value = value + np.sqrt(k_arr) / a**2
    lk, la, le, ll = np.log(k_arr), np.log(a), np.log(e), np.log(log_term)
    if public:
        terms = [2 * lk / 3 + ll / 3 - 4 * la / 3 - 2 * le / 3, (lk + ll) / 2 - la - le]
    else:
        terms = [3 * lk / 4 + ll / 2 - la - le]
    return _rate(value, lambda: [*terms, lk / 2 - 2 * la], "k, alpha, eps, delta")


def heuristic_local_epsilon(eps: ArrayLike, n: ArrayLike, delta: ArrayLike) -> np.ndarray | float:
    r"""Canonne 2021, equation (5): the local level to shuffle at for a central target, constants
    dropped. With :math:`r=\varepsilon^2 n/\ln(1/\delta)`:
    :math:`\varepsilon_0=\sqrt r=\varepsilon\sqrt{n/\ln(1/\delta)}` when :math:`r<1`, else
    :math:`\varepsilon_0=\ln r` (the post writes :math:`\varepsilon_L` for this local level).
    (The rigorous counterpart, with constants, is
    :func:`shuffle_lib.accounting.local_epsilon_for_target
    <shuffle_lib.accounting.shuffle.local_epsilon_for_target>`.) ``n`` is a whole number of users,
    at least 1 and below ``2**62``; where :math:`r` over- or underflows, the same formula is
    evaluated in log space, so every ``eps > 0`` gives a finite answer.

    >>> round(heuristic_local_epsilon(1.0, 10_000, 1e-6), 3)
    6.585
    """
    e = check_positive(eps, "eps")
    n_arr = check_array(n, "n", integer=True, low=1, high=2**62 - 1)
    return scalar_or_array(_local_epsilon(e, n_arr, _log_inverse(delta)))


def _local_epsilon(e: np.ndarray, n: ArrayLike, log_term: np.ndarray) -> np.ndarray:
    """:func:`heuristic_local_epsilon` on checked arguments, for a real ``n > 0``."""
    with np.errstate(over="ignore", under="ignore"):
        ratio = e**2 * n / log_term
    local = np.where(ratio < 1, np.sqrt(ratio), np.log(np.maximum(ratio, 1.0)))
    rounded = ~((ratio >= np.finfo(float).tiny) & (ratio < np.inf))  # over- or underflowed
    if rounded.any():
        log_ratio = 2 * np.log(e) + np.log(n) - np.log(log_term)
        local = np.where(rounded, np.where(log_ratio < 0, np.exp(log_ratio / 2), log_ratio),
                         local)
    return local


def plugged_sample_complexity(
    k: float, alpha: float, eps: float, delta: float, task: str = "learning"
) -> float:
    r"""Smallest :math:`n` with :math:`n \ge N_{\mathrm{LDP}}(k,\alpha,\varepsilon_0(n))`, where
    :math:`\varepsilon_0(n)` is :func:`heuristic_local_epsilon`: Canonne's (2021) derivation of the
    shuffle sample complexity (run the optimal LDP protocol at the amplified local level), solved
    numerically instead of by hand. ``task`` is one of ``TASKS``. Scalars only, with ``k >= 1``
    (so one user is never enough and the search starts at :math:`n = 1`); limit:
    ``k / alpha <= MAX_K_OVER_ALPHA`` (``1e140``), so that every rate on the way is a float (the
    answer is then below about ``1e305``).

    >>> n = plugged_sample_complexity(10.0, 0.1, 1.0, 1e-6)
    >>> bool(learning_central(10.0, 0.1, 1.0) < n < learning_ldp(10.0, 0.1, 1.0))
    True
    """
    k = check_real(k, "k", low=1)
    alpha = check_real(alpha, "alpha", low=0, high=1, low_open=True)
    e = np.asarray(check_real(eps, "eps", low=0, low_open=True))
    log_term = _log_inverse(check_real(delta, "delta", low=0, high=1, low_open=True,
                                       high_open=True))
    if not isinstance(task, str):
        raise TypeError(f"task must be a str, one of {TASKS}, got {task!r:.80}")
    if task not in TASKS:
        raise ValueError(f"task must be one of {TASKS}, got {task!r}")
    if k / alpha > MAX_K_OVER_ALPHA:
        raise ValueError(f"k / alpha = {k / alpha:g} exceeds the documented limit "
                         f"{MAX_K_OVER_ALPHA:g}")

    def ldp_rate(local: float) -> float:
        if task == "learning":
            return float(learning_ldp(k, alpha, local))
        return float(
            uniformity_testing_ldp(k, alpha, local, public_coin=task == "testing-public-coin")
        )

    def gap(log_n: float) -> float:
        n = np.exp(log_n)
        return log_n - np.log(ldp_rate(max(float(_local_epsilon(e, n, log_term)), 1e-12)))

    low, high = 0.0, 5.0
    while gap(high) < 0:
        if high == _LOG_MAX_N:  # not reached within the limit on k / alpha
            raise ValueError(f"the sample complexity at k = {k}, alpha = {alpha}, eps = {eps}, "
                             f"delta = {delta} exceeds the largest float")
        high = min(2 * high, _LOG_MAX_N)
    return float(np.exp(brentq(gap, low, high, xtol=1e-10)))
