"""Our stronger clone bound against the public code of Wang et al. (PVLDB 2024,
``wangsw/PrivacyAmplification``), where a checkout of it is on this machine: set
``SHUFFLE_RESEARCH_CODE`` to its folder. It is not a package and is not vendored (read and run,
never copied), so without the variable this module has no rows.

Both sides compute the same number: with its generic parameters (beta = (p - 1)/(p + 1),
q = p) their variation-ratio upper bound is the stronger clone pair's epsilon, up to the slack
their code adds to delta on purpose (tol * n, 1% of delta at n = 1e6) and their bisection step
(24 steps here, finer than their default 12). Each row checks the agreement once before it is
timed, and runs each side once: their call takes seconds to a minute.
"""

from __future__ import annotations

import importlib
import math
import os
import sys

from run import Benchmark

from shuffle_lib.accounting import clone_numerical_epsilon

DELTA = 1e-6
STEPS = 24  # their bisection steps over [0, eps0]
AGREEMENT = 2e-3  # relative: their delta slack and bisection step, at n <= 1e6


def _rows(folder: str) -> list[Benchmark]:
    sys.path.insert(0, folder)
    try:
        theirs = importlib.import_module("unifiedamplification")
    finally:
        sys.path.remove(folder)
    rows = []
    for n, eps0 in ((10**5, 4.0), (10**6, 4.0)):
        p = math.exp(eps0)

        def ours(n: int = n, eps0: float = eps0) -> float:
            return float(clone_numerical_epsilon(eps0, n, DELTA, "stronger"))

        def baseline(n: int = n, p: float = p) -> float:
            return float(theirs.amplificationUB(p, (p - 1) / (p + 1), p, p, n, DELTA, STEPS))

        mine, other = ours(), baseline()
        if abs(other - mine) > AGREEMENT * mine:
            raise RuntimeError(f"n={n}, eps0={eps0}: ours {mine} and theirs {other} disagree")
        rows.append(Benchmark(
            name=f"stronger clone n={n:.0e} eps0={eps0:g} vs Wang et al.'s code (same epsilon)",
            ours=ours, ours_size=1, baseline=baseline, baseline_size=1, repeats=1))
    return rows


_FOLDER = os.environ.get("SHUFFLE_RESEARCH_CODE")
BENCHMARKS = _rows(_FOLDER) if _FOLDER else []
