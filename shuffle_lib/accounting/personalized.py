r"""Personalized shuffling (seed 001, Chen, Cao & Ge, GSPA).

Users choose their own local levels :math:`(\varepsilon_i,\delta_i)`; the shuffled reports are
*approximately* :math:`\mu`-GDP (seed 001, Theorem 2). The rigorous personalized clone accountant
that the book compares this approximation with is not implemented yet.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike
from scipy.special import logsumexp

from shuffle_lib._validation import check_delta, check_epsilon
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
