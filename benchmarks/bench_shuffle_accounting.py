"""The numerical clone bound: growth with n, and cost against plain binomial pmf evaluations."""

from __future__ import annotations

import numpy as np
from run import Benchmark
from scipy.stats import binom

from shuffle_lib.accounting import fmt21_numerical_epsilon


def _pmf_sweeps(n: int, q: float, sweeps: int = 100) -> None:
    support = np.arange(10_000)
    for _ in range(sweeps):
        binom.pmf(support, n - 1, q)


BENCHMARKS = [
    Benchmark(
        name=f"fmt21_numerical eps0={eps0:g}: n=1e7 vs n=1e6 grown like sqrt(n)",
        ours=lambda eps0=eps0: fmt21_numerical_epsilon(eps0, 10**7, 1e-6),
        ours_size=10**7,
        baseline=lambda eps0=eps0: fmt21_numerical_epsilon(eps0, 10**6, 1e-6),
        baseline_size=10**6,
        scaling_exponent=0.5,
        repeats=2,
    )
    for eps0 in (1.0, 4.0)
] + [
    Benchmark(
        name="fmt21_numerical n=1e6 vs 100 binom.pmf sweeps of 1e4",
        ours=lambda: fmt21_numerical_epsilon(1.0, 10**6, 1e-6),
        ours_size=1,
        baseline=lambda: _pmf_sweeps(10**6, float(np.exp(-1.0))),
        baseline_size=1,
    ),
]
