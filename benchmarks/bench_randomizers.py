"""Vectorized randomized response against a per-user Python loop (the obvious reference)."""

from __future__ import annotations

import numpy as np
from run import Benchmark

import shuffle_lib as sl

N_OURS = 10_000_000
N_LOOP = 100_000
EPS = 1.0

_rng = np.random.default_rng(0)
_bits_ours = _rng.integers(0, 2, size=N_OURS)
_bits_loop = _bits_ours[:N_LOOP].tolist()


def _loop_randomized_response(bits: list[int], eps: float, rng: np.random.Generator) -> list[int]:
    keep = np.exp(eps) / (1 + np.exp(eps))
    return [b if rng.random() < keep else 1 - b for b in bits]


def _loop_k_randomized_response(
    values: list[int], k: int, eps: float, rng: np.random.Generator
) -> list[int]:
    keep = np.exp(eps) / (np.exp(eps) + k - 1)
    return [v if rng.random() < keep else (v + int(rng.integers(1, k))) % k for v in values]


_values_ours = _bits_ours * 15
_values_loop = _values_ours[:N_LOOP].tolist()

BENCHMARKS = [
    Benchmark(
        name="randomized_response, 1e7 users vs Python loop",
        ours=lambda: sl.randomized_response(_bits_ours, EPS, rng=1),
        ours_size=N_OURS,
        baseline=lambda: _loop_randomized_response(_bits_loop, EPS, np.random.default_rng(1)),
        baseline_size=N_LOOP,
    ),
    Benchmark(
        name="k_randomized_response (k=16), 1e7 users vs loop",
        ours=lambda: sl.k_randomized_response(_values_ours, 16, EPS, rng=1),
        ours_size=N_OURS,
        baseline=lambda: _loop_k_randomized_response(
            _values_loop, 16, EPS, np.random.default_rng(1)
        ),
        baseline_size=N_LOOP,
    ),
]
