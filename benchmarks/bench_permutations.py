"""Mallows samplers and Kendall's tau distance against their references and floors."""

from __future__ import annotations

import numpy as np
from run import Benchmark

from shuffle_lib.permutations import kendall_tau_distance, mallows_sample

# the seed's regime: alpha = 4, Kendall sensitivity w (w + 1) / 2 for widths 10 to 1000
THETAS = {w: 4.0 / (w * (w + 1) / 2) for w in (10, 1000)}
_RNG = np.random.default_rng(0)
_BIG = _RNG.permutation(10**6)
_OTHER = _RNG.permutation(10**6)

BENCHMARKS = [
    Benchmark(
        name=f"Mallows n=1e4 width {w}: fast vs repeated insertion",
        ours=lambda t=t: mallows_sample(10**4, t, rng=1),
        ours_size=1,
        baseline=lambda t=t: mallows_sample(10**4, t, rng=1, method="rim"),
        baseline_size=1,
        repeats=2,
    )
    for w, t in THETAS.items()
] + [
    Benchmark(
        name="Mallows n=1e6 width 10: fast vs rng.permutation (floor)",
        ours=lambda: mallows_sample(10**6, THETAS[10], rng=1),
        ours_size=1,
        baseline=lambda: np.random.default_rng(1).permutation(10**6),
        baseline_size=1,
    ),
    Benchmark(
        name="kendall_tau_distance n=1e6 vs np.sort (floor)",
        ours=lambda: kendall_tau_distance(_BIG, _OTHER),
        ours_size=1,
        baseline=lambda: np.sort(_BIG),
        baseline_size=1,
    ),
]
