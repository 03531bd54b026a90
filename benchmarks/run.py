"""Benchmark runner: one table row per benchmark (name, ours, baseline, ratio).

Each benchmark module in this folder defines ``BENCHMARKS``: a list of ``Benchmark`` entries.
Times are the best of a few repeats (wall clock, ``time.perf_counter``); when the baseline runs on
a smaller input, its time is scaled to the size of ours (linearly unless the benchmark gives another
exponent), and the row says so. A benchmark may state a goal: a smallest speed-up (``goal``, e.g.
0.4 for "at most 2.5 times the baseline") or a largest time of ours (``budget``, seconds); the last
column then says whether this run met it. A row with a budget may have no baseline (the baseline
and speed-up columns then show "-"): it times one operation against a fixed goal.
Run with ``make bench``.
"""

from __future__ import annotations

import importlib
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Benchmark:
    """A hot path (``ours``) against a reference implementation (``baseline``), or against a time
    budget alone (no ``baseline``)."""

    name: str
    ours: Callable[[], object]
    ours_size: int
    baseline: Callable[[], object] | None = None
    baseline_size: int | None = None
    repeats: int = 3
    scaling_exponent: float = 1.0
    goal: float | None = None
    budget: float | None = None

    def __post_init__(self) -> None:
        if self.baseline is None and (self.goal is not None or self.budget is None):
            raise ValueError(f"{self.name}: a row without a baseline needs a budget and no goal")

    def verdict(self, ours: float, baseline: float | None) -> str:
        """'met' / 'MISSED' against the goal or budget (empty when the row states none)."""
        checks = []
        if self.goal is not None and baseline is not None:
            checks.append((baseline / ours >= self.goal, f">= {self.goal:g}x"))
        if self.budget is not None:
            checks.append((ours <= self.budget, f"<= {self.budget:g} s"))
        return " ".join(f"{'met' if ok else 'MISSED'} ({what})" for ok, what in checks)


def best_time(function: Callable[[], object], repeats: int) -> float:
    """Best wall-clock time of ``repeats`` calls, in seconds."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return min(times)


def run(benchmark: Benchmark) -> tuple[float, float | None]:
    """Our time and the baseline time scaled to our input size (None without a baseline)."""
    ours = best_time(benchmark.ours, benchmark.repeats)
    if benchmark.baseline is None or benchmark.baseline_size is None:
        return ours, None
    baseline = best_time(benchmark.baseline, benchmark.repeats)
    growth = (benchmark.ours_size / benchmark.baseline_size) ** benchmark.scaling_exponent
    return ours, baseline * growth


def main() -> int:
    here = Path(__file__).resolve().parent
    sys.path.insert(0, str(here))
    modules = sorted(p.stem for p in here.glob("bench_*.py"))
    header = (f"{'benchmark':<58} {'ours (s)':>10} {'baseline (s)':>13} {'speed-up':>9}  "
              f"{'goal':<20}")
    print(header)
    print("-" * len(header))
    for module_name in modules:
        for benchmark in importlib.import_module(module_name).BENCHMARKS:
            ours, baseline = run(benchmark)
            if baseline is None:
                print(f"{benchmark.name:<58} {ours:>10.3f} {'-':>12}  {'-':>9}  "
                      f"{benchmark.verdict(ours, baseline)}")
                continue
            scaled = "" if benchmark.ours_size == benchmark.baseline_size else " *"
            print(f"{benchmark.name:<58} {ours:>10.3f} {baseline:>12.3f}{scaled or ' '} "
                  f"{baseline / ours:>8.2f}x  {benchmark.verdict(ours, baseline)}")
    print("* baseline measured on a smaller input and scaled to the benchmark's size")
    importlib.import_module("notebook_times").print_table()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
