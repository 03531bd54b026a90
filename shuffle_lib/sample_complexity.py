r"""Sample complexities quoted by Canonne (2021), a blog post on Feldman, McMillan & Talwar 2021.

Every function returns the *order of growth* :math:`\Theta(\cdot)` of the number of users needed,
with all constants set to 1, as the post states them: the curves can be compared in shape and
slope, not read as exact sample sizes. ``k`` is the domain size, ``alpha`` the accuracy in total
variation distance, ``eps`` (and ``delta``) the privacy level.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike
from scipy.optimize import brentq

from shuffle_lib._numerics import scalar_or_array
from shuffle_lib._validation import check_delta, check_positive

TASKS = ("learning", "testing-private-coin", "testing-public-coin")


def _task(k: ArrayLike, alpha: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    k_arr = check_positive(k, "k")
    alpha_arr = check_positive(alpha, "alpha")
    if (alpha_arr > 1).any():
        raise ValueError(f"alpha must lie in (0, 1], got {alpha!r}")
    return k_arr, alpha_arr


def _common(k: ArrayLike, alpha: ArrayLike, eps: ArrayLike) -> tuple[np.ndarray, ...]:
    return (*_task(k, alpha), check_positive(eps, "eps"))


def learning_central(k: ArrayLike, alpha: ArrayLike, eps: ArrayLike) -> np.ndarray | float:
    r"""Central DP learning: :math:`k/\alpha^2 + k/(\alpha\varepsilon)`.

    Canonne 2021, after Diakonikolas, Hardt & Schmidt 2015.

    >>> round(learning_central(10, 0.1, 1.0))
    1100
    """
    k_arr, a, e = _common(k, alpha, eps)
    return scalar_or_array(k_arr / a**2 + k_arr / (a * e))


def learning_ldp(k: ArrayLike, alpha: ArrayLike, eps: ArrayLike) -> np.ndarray | float:
    r"""LDP learning, Canonne 2021, equation (4):
    :math:`\frac{k^2}{\alpha^2(e^\varepsilon-1)^2}+\frac{k^2}{\alpha^2e^\varepsilon}+\frac{k}{\alpha^2}`.

    >>> round(learning_ldp(10, 0.1, 1.0))
    8066
    """
    k_arr, a, e = _common(k, alpha, eps)
    return scalar_or_array(k_arr**2 / (a**2 * np.expm1(e) ** 2) + k_arr**2 / (a**2 * np.exp(e))
                            + k_arr / a**2)


def learning_shuffle(
    k: ArrayLike, alpha: ArrayLike, eps: ArrayLike, delta: ArrayLike
) -> np.ndarray | float:
    r"""Shuffle DP learning by shuffling an optimal LDP protocol (Canonne 2021):
    :math:`k/\alpha^2 + k\sqrt{\ln(1/\delta)}/(\alpha\varepsilon)`.

    >>> round(learning_shuffle(10, 0.1, 1.0, 1e-6))
    1372
    """
    k_arr, a, e = _common(k, alpha, eps)
    d = check_delta(delta, allow_zero=False)
    return scalar_or_array(k_arr / a**2 + k_arr * np.sqrt(np.log(1 / d)) / (a * e))


def uniformity_testing_nonprivate(k: ArrayLike, alpha: ArrayLike) -> np.ndarray | float:
    r"""Uniformity testing without privacy, :math:`\sqrt k/\alpha^2`.

    Canonne 2021, after Paninski 2008.

    >>> uniformity_testing_nonprivate(100, 0.5)
    40.0
    """
    k_arr, a = _task(k, alpha)
    return scalar_or_array(np.sqrt(k_arr) / a**2)


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

    >>> round(uniformity_testing_central(100, 0.5, 1.0), 3)
    73.696
    """
    k_arr, a, e = _common(k, alpha, eps)
    privacy = (np.sqrt(k_arr) / (a * np.sqrt(e)) + k_arr ** (1 / 3) / (a ** (4 / 3) * e ** (2 / 3))
               + 1 / (a * e))
    return scalar_or_array(privacy + uniformity_testing_nonprivate(k_arr, a))


def uniformity_testing_ldp(
    k: ArrayLike, alpha: ArrayLike, eps: ArrayLike, public_coin: bool = False
) -> np.ndarray | float:
    r"""LDP uniformity testing, Canonne 2021, equation (6) (public coin),
    :math:`\frac{k}{\alpha^2(e^\varepsilon-1)^2}+\frac{k}{\alpha^2e^{\varepsilon/2}}
    +\frac{\sqrt k}{\alpha^2}`, and equation (7) (private coin),
    :math:`\frac{k^{3/2}}{\alpha^2(e^\varepsilon-1)^2}+\frac{k^{3/2}}{\alpha^2e^{\varepsilon}}
    +\frac{\sqrt k}{\alpha^2}`.

    >>> uniformity_testing_ldp(100, 0.5, 1.0, True) < uniformity_testing_ldp(100, 0.5, 1.0)
    True
    """
    k_arr, a, e = _common(k, alpha, eps)
    if public_coin:
        value = k_arr / (a**2 * np.expm1(e) ** 2) + k_arr / (a**2 * np.exp(e / 2))
    else:
        value = k_arr**1.5 / (a**2 * np.expm1(e) ** 2) + k_arr**1.5 / (a**2 * np.exp(e))
    return scalar_or_array(value + uniformity_testing_nonprivate(k_arr, a))


def uniformity_testing_shuffle(
    k: ArrayLike, alpha: ArrayLike, eps: ArrayLike, delta: ArrayLike, public_coin: bool = False
) -> np.ndarray | float:
    r"""Shuffle DP uniformity testing by shuffling an optimal LDP tester (Canonne 2021).

    Private coin
    :math:`k^{3/4}\sqrt{\ln(1/\delta)}/(\alpha\varepsilon)+\sqrt k/\alpha^2`; public coin
    :math:`k^{2/3}\ln^{1/3}(1/\delta)/(\alpha^{4/3}\varepsilon^{2/3})
    +\sqrt{k\ln(1/\delta)}/(\alpha\varepsilon)+\sqrt k/\alpha^2`.

    >>> public = uniformity_testing_shuffle(100, 0.5, 1.0, 1e-6, public_coin=True)
    >>> public < uniformity_testing_shuffle(100, 0.5, 1.0, 1e-6)
    True
    """
    k_arr, a, e = _common(k, alpha, eps)
    log_term = np.log(1 / check_delta(delta, allow_zero=False))
    if public_coin:
        value = (k_arr ** (2 / 3) * log_term ** (1 / 3) / (a ** (4 / 3) * e ** (2 / 3))
                 + np.sqrt(k_arr * log_term) / (a * e))
    else:
        value = k_arr**0.75 * np.sqrt(log_term) / (a * e)
    return scalar_or_array(value + uniformity_testing_nonprivate(k_arr, a))


def heuristic_local_epsilon(eps: ArrayLike, n: ArrayLike, delta: ArrayLike) -> np.ndarray | float:
    r"""Canonne 2021, equation (5): the local level to shuffle at for a central target, constants
    dropped. With :math:`r=\varepsilon^2 n/\ln(1/\delta)`:
    :math:`\varepsilon_0=\sqrt r=\varepsilon\sqrt{n/\ln(1/\delta)}` when :math:`r<1`, else
    :math:`\varepsilon_0=\ln r` (the post writes :math:`\varepsilon_L` for this local level).
    (The rigorous counterpart, with constants, is
    :func:`shuffle_lib.accounting.local_epsilon_for_target`.)

    >>> round(heuristic_local_epsilon(1.0, 10_000, 1e-6), 3)
    6.585
    """
    e = check_positive(eps, "eps")
    n_arr = check_positive(n, "n")
    ratio = e**2 * n_arr / np.log(1 / check_delta(delta, allow_zero=False))
    local = np.where(ratio < 1, np.sqrt(ratio), np.log(np.maximum(ratio, 1.0)))
    return scalar_or_array(local)


def plugged_sample_complexity(
    k: float, alpha: float, eps: float, delta: float, task: str = "learning"
) -> float:
    r"""Smallest :math:`n` with :math:`n \ge N_{\mathrm{LDP}}(k,\alpha,\varepsilon_0(n))`, where
    :math:`\varepsilon_0(n)` is :func:`heuristic_local_epsilon`: Canonne's (2021) derivation of the
    shuffle sample complexity (run the optimal LDP protocol at the amplified local level), solved
    numerically instead of by hand. ``task`` is one of ``TASKS``.

    >>> n = plugged_sample_complexity(10, 0.1, 1.0, 1e-6)
    >>> bool(learning_central(10, 0.1, 1.0) < n < learning_ldp(10, 0.1, 1.0))
    True
    """
    if task not in TASKS:
        raise ValueError(f"task must be one of {TASKS}, got {task!r}")

    def ldp_rate(local: float) -> float:
        if task == "learning":
            return float(learning_ldp(k, alpha, local))
        return float(
            uniformity_testing_ldp(k, alpha, local, public_coin=task == "testing-public-coin")
        )

    def gap(log_n: float) -> float:
        n = np.exp(log_n)
        return log_n - np.log(ldp_rate(max(float(heuristic_local_epsilon(eps, n, delta)), 1e-12)))

    low, high = 0.0, 5.0
    while gap(high) < 0:
        high *= 2
    return float(np.exp(brentq(gap, low, high, xtol=1e-10)))
