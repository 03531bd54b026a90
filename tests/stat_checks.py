"""Statistical tolerances for the seeded Monte-Carlo tests."""

from __future__ import annotations

import math

import numpy as np

from shuffle_lib.topdown import discrete_gaussian_log_pmf


def within_standard_errors(estimate: float, truth: float, std_error: float, k: float = 5.0) -> bool:
    """True when ``estimate`` lies within ``k`` standard errors of ``truth``.

    With k = 5 a correct implementation fails with probability below 1e-6 per check.
    """
    return abs(estimate - truth) <= k * std_error


def shifted_discrete_gaussians(sigma2: float) -> tuple[np.ndarray, np.ndarray]:
    """N_Z(0, s2) and N_Z(1, s2) as probability vectors on the integers |x| <= k, where both stay
    above 1e-304 (no underflow) and the tails beyond are below e^-490."""
    k = int(math.sqrt(1400 * sigma2)) - 1
    support = np.arange(-k, k + 1)
    p = np.exp(discrete_gaussian_log_pmf(support, sigma2))
    q = np.exp(discrete_gaussian_log_pmf(support - 1, sigma2))
    return p / p.sum(), q / q.sum()
