"""The rigorous personalized accountant with many distinct levels: growth from n = 1e4 to 1e5,
and the Poisson-binomial law against a user-by-user convolution."""

from __future__ import annotations

import numpy as np
from run import Benchmark
from scipy.special import expit

from shuffle_lib.accounting import personalized_numerical_epsilon, poisson_binomial_pmf


def _levels(n: int) -> np.ndarray:
    return np.random.default_rng(0).uniform(0.01, 2.0, n)  # every level distinct


def _user_by_user(probabilities: np.ndarray) -> np.ndarray:
    law = np.ones(1)
    for r in probabilities:
        law = np.convolve(law, [1 - r, r])
    return law


BENCHMARKS = [
    Benchmark(
        name="personalized_numerical U(0.01,2): n=1e5 vs 1e4, like n",
        ours=lambda: personalized_numerical_epsilon(_levels(10**5), 0.0, 1e-4),
        ours_size=10**5,
        baseline=lambda: personalized_numerical_epsilon(_levels(10**4), 0.0, 1e-4),
        baseline_size=10**4,
    ),
    Benchmark(
        name="poisson_binomial 1e5 vs user-by-user (1e4, like n^2)",
        ours=lambda: poisson_binomial_pmf(2 * expit(-_levels(10**5))),
        ours_size=10**5,
        baseline=lambda: _user_by_user(2 * expit(-_levels(10**4))),
        baseline_size=10**4,
        scaling_exponent=2.0,
        repeats=1,
    ),
]
