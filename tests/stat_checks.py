"""Statistical tolerances for the seeded Monte-Carlo tests."""

from __future__ import annotations


def within_standard_errors(estimate: float, truth: float, std_error: float, k: float = 5.0) -> bool:
    """True when ``estimate`` lies within ``k`` standard errors of ``truth``.

    With k = 5 a correct implementation fails with probability below 1e-6 per check.
    """
    return abs(estimate - truth) <= k * std_error
