r"""Zero-concentrated DP (zCDP) and its conversion to :math:`(\varepsilon,\delta)`-DP.

A mechanism is :math:`\rho`-zCDP when the Rényi divergence of order :math:`\alpha` between its
outputs on neighbouring datasets is at most :math:`\rho\alpha` for every :math:`\alpha>1`
(Bun & Steinke 2016). The US Census Bureau states its 2020 budgets in :math:`\rho` and converts
them with the Bun-Steinke formula (seed 003, "Comparisons with 2020 Census").
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike
from scipy.optimize import brentq, minimize_scalar

from shuffle_lib._numerics import nudge, scalar_or_array
from shuffle_lib._validation import check_delta, check_epsilon, check_positive

METHODS = ("bun-steinke", "cks")


def _check_method(method: str) -> str:
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    return method


def gaussian_zcdp(sigma: ArrayLike, sensitivity: ArrayLike = 1.0) -> np.ndarray | float:
    r"""The Gaussian mechanism with noise :math:`N(0,\sigma^2)` and L2 sensitivity
    :math:`\Delta` is :math:`\rho`-zCDP with :math:`\rho=\Delta^2/(2\sigma^2)`
    (Bun & Steinke 2016, Proposition 1.6; exact).

    >>> gaussian_zcdp(2.0)
    0.125
    """
    sigma_arr = check_positive(sigma, "sigma")
    sens_arr = check_positive(sensitivity, "sensitivity")
    return scalar_or_array(sens_arr**2 / (2 * sigma_arr**2))


def zcdp_compose(rhos: ArrayLike) -> float:
    r"""Composition of zCDP: running :math:`\rho_1,\dots,\rho_T`-zCDP mechanisms is
    :math:`(\sum_t\rho_t)`-zCDP (Bun & Steinke 2016).

    >>> zcdp_compose([0.5, 0.25])
    0.75
    """
    return float(np.sum(check_epsilon(rhos, "rhos")))


def _cks_epsilon_at(alpha: float, rho: float, log_delta: float) -> float:
    # delta = exp((alpha-1)(alpha rho - eps)) / alpha * (1 - 1/alpha)^(alpha-1), solved for eps.
    return alpha * rho + np.log1p(-1 / alpha) - (np.log(alpha) + log_delta) / (alpha - 1)


def _cks_epsilon(rho: float, delta: float) -> float:
    log_delta = np.log(delta)
    # Any alpha > 1 gives a valid bound; start from the Bun-Steinke optimum, then improve it.
    alpha_bs = 1 + np.sqrt(-log_delta / rho)
    best = _cks_epsilon_at(alpha_bs, rho, log_delta)
    centre = np.log(alpha_bs - 1)
    found = minimize_scalar(
        lambda t: _cks_epsilon_at(1 + np.exp(t), rho, log_delta),
        bounds=(centre - 10, centre + 10),
        method="bounded",
        options={"xatol": 1e-12},
    )
    return float(max(0.0, min(best, found.fun)))


def zcdp_to_approx_dp(
    rho: ArrayLike, delta: ArrayLike, method: str = "bun-steinke"
) -> np.ndarray | float:
    r"""Convert :math:`\rho`-zCDP to :math:`(\varepsilon,\delta)`-DP; returns :math:`\varepsilon`.

    - ``"bun-steinke"``: :math:`\varepsilon=\rho+2\sqrt{\rho\ln(1/\delta)}` (Bun & Steinke 2016,
      Proposition 1.3), the formula the Census Bureau uses (seed 003, 2020 Census table).
    - ``"cks"``: :math:`\varepsilon=\inf_{\alpha>1}\,\alpha\rho+\ln(1-1/\alpha)
      -\frac{\ln\alpha+\ln\delta}{\alpha-1}` (Canonne, Kamath & Steinke 2020, Section 2.3),
      never larger than Bun-Steinke. Every :math:`\alpha` gives a valid bound, so the numerical
      minimization can only err on the safe (larger) side.

    Upper bound for any :math:`\rho`-zCDP mechanism. ``rho`` >= 0, ``delta`` in (0, 1).

    >>> round(zcdp_to_approx_dp(7.70, 1e-10), 2)
    34.33
    """
    method = _check_method(method)
    rho_arr = check_epsilon(rho, "rho")
    delta_arr = check_delta(delta, allow_zero=False)
    if method == "bun-steinke":
        result = rho_arr + 2 * np.sqrt(rho_arr * np.log(1 / delta_arr))
    else:
        def one(r: float, d: float) -> float:
            return 0.0 if r == 0 else _cks_epsilon(r, d)

        result = np.vectorize(one, otypes=[float])(rho_arr, delta_arr)
    return scalar_or_array(result)


def _largest_rho_cks(eps: float, delta: float) -> float:
    if eps == 0:
        return 0.0
    low = _largest_rho_bs(eps, delta)  # Bun-Steinke is never tighter, so this rho qualifies
    high = 2 * low + eps

    def excess(r: float) -> float:
        return _cks_epsilon(r, delta) - eps

    while excess(high) <= 0:
        high *= 2
    rho = brentq(excess, low, high, xtol=1e-14, rtol=4 * np.finfo(float).eps)
    rho = nudge(rho, lambda r: excess(r) > 0, 1e-14, -1)  # round down: convert to at most eps
    return float(max(rho, low))


def _largest_rho_bs(eps: float, delta: float) -> float:
    log_inv = np.log(1 / delta)
    root = np.sqrt(log_inv + eps) - np.sqrt(log_inv)  # sqrt(rho) solves rho + 2 sqrt(rho L) = eps
    return float(root * root)


def approx_dp_to_zcdp(
    eps: ArrayLike, delta: ArrayLike, method: str = "bun-steinke"
) -> np.ndarray | float:
    r"""Largest :math:`\rho` whose conversion by ``method`` is at most :math:`\varepsilon` at
    :math:`\delta`: the inverse of :func:`zcdp_to_approx_dp`.

    Bun-Steinke has the closed form :math:`\sqrt\rho=\sqrt{\ln(1/\delta)+\varepsilon}
    -\sqrt{\ln(1/\delta)}`; CKS uses a monotone root search rounded down (tolerance 1e-14).
    Used to recover the unrounded :math:`\rho` behind a published :math:`\varepsilon`.

    >>> round(approx_dp_to_zcdp(zcdp_to_approx_dp(2.56, 1e-10), 1e-10), 9)
    2.56
    """
    method = _check_method(method)
    eps_arr = check_epsilon(eps)
    delta_arr = check_delta(delta, allow_zero=False)
    solver = _largest_rho_bs if method == "bun-steinke" else _largest_rho_cks
    return scalar_or_array(np.vectorize(solver, otypes=[float])(eps_arr, delta_arr))
