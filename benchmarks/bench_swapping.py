"""The Permutation Algorithm (Bailie, Gong & Meng 2023) against its floor, one uniform permutation
of the same number of records (goal: within 10x, i.e. a speed-up column above 0.1)."""

from __future__ import annotations

import numpy as np
import pandas as pd
from run import Benchmark

from shuffle_lib.datasets import massachusetts_1940_households
from shuffle_lib.swapping import swap

_MASSACHUSETTS = massachusetts_1940_households(rng=0)  # 1,144,424 households, 10 strata
_rng = np.random.default_rng(0)
_SMALL_STRATA = pd.DataFrame({"block": _rng.integers(0, 10**5, 10**6),  # 1e5 strata of ~10
                              "county": _rng.integers(0, 50, 10**6),
                              "tenure": _rng.integers(0, 2, 10**6)})
swap(_SMALL_STRATA.head(10), "block", "county", 0.5, rng=0)  # load the compiled kernel

BENCHMARKS = [
    Benchmark(
        name="swap 1,144,424 households (MA 1940, p=0.5) vs permutation",
        ours=lambda: swap(_MASSACHUSETTS, ["state", "size"], "county", 0.5, rng=1),
        ours_size=len(_MASSACHUSETTS),
        baseline=lambda: np.random.default_rng(1).permutation(len(_MASSACHUSETTS)),
        baseline_size=len(_MASSACHUSETTS),
    ),
    Benchmark(
        name="swap 1e6 records in 1e5 strata (p=0.5) vs permutation",
        ours=lambda: swap(_SMALL_STRATA, "block", "county", 0.5, rng=1),
        ours_size=10**6,
        baseline=lambda: np.random.default_rng(1).permutation(10**6),
        baseline_size=10**6,
    ),
]
