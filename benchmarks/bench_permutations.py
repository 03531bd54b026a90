"""Mallows samplers, Kendall's tau distance and the d_sigma mechanism set-up, against their
references, floors and growth."""

from __future__ import annotations

import numpy as np
from run import Benchmark

from shuffle_lib.dsigma import (
    DSigmaMechanism,
    bfs_reference_permutation,
    group_widths,
    groups_within_radius,
)
from shuffle_lib.permutations import kendall_tau_distance, mallows_sample

# the regime of Meehan et al. (2022): alpha = 4, Kendall sensitivity w (w + 1) / 2 for widths
# 10 to 1000
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


def _setup(n: int) -> None:
    """Mechanism set-up: radius groups (about 50 neighbours each), BFS reference, widths."""
    points = np.random.default_rng(0).random((n, 2))
    radius = np.sqrt(50 / (np.pi * n))
    groups = groups_within_radius(points, radius)
    reference = bfs_reference_permutation(groups)
    group_widths(reference, groups)


BENCHMARKS.append(
    Benchmark(
        name="d_sigma set-up (radius groups, BFS, widths): 1e5 vs 1e4, like n",
        ours=lambda: _setup(10**5),
        ours_size=10**5,
        baseline=lambda: _setup(10**4),
        baseline_size=10**4,
        repeats=2,
    )
)

_LINE_MECHANISM = DSigmaMechanism(groups_within_radius(np.arange(10**4, dtype=float), 128),
                                  alpha=3.0, reference=np.arange(10**4))
BENCHMARKS.append(
    Benchmark(
        name="d_sigma draw n=1e4 w=256 vs bare Mallows draw (goal ~1)",
        ours=lambda: _LINE_MECHANISM.sample_permutation(rng=1),
        ours_size=1,
        baseline=lambda: mallows_sample(10**4, _LINE_MECHANISM.theta, rng=1),
        baseline_size=1,
        repeats=5,
    )
)
