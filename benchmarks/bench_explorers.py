"""One update of each chapter explorer (``shuffle_lib.plotting.explore_*``): the call with a
changed slider value, drawn to an Agg canvas (what the notebook's inline backend does before
encoding the PNG) and closed. Goal: at most 0.1 s, so that moving a slider feels instant.

Each row cycles through slider values, so no repeat is served from a cache. What the chapters
precompute outside the update is precomputed here too: the people and the attacker's sources of
the d_sigma explorer, the MAPE table of the swap-rate explorer (stand-in values here: the
explorer only reads the table, its time does not depend on the numbers), and the table of
composed epsilons of the rounds explorer (stand-in values of the chapter's grid shape). The
first row is a reference, not an explorer: a one-line figure drawn the same way, the floor that
matplotlib alone sets on this machine.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from run import Benchmark

from shuffle_lib.accounting.rounds import RoundsTable
from shuffle_lib.attacks import attack_neighbours
from shuffle_lib.datasets import synthetic_clusters
from shuffle_lib.plotting import (
    explore_amplification,
    explore_dsigma_attack,
    explore_population_mix,
    explore_profile_chain,
    explore_rounds,
    explore_swap_rate,
    explore_tradeoff,
)

GOAL_SECONDS = 0.1

# as in book/dsigma/attacks.md: 500 synthetic people, sources computed once
_PEOPLE = synthetic_clusters(500, rng=1)
_SOURCES = attack_neighbours(_PEOPLE.t, 0.25, 25, rng=1)
# the rates of book/swapping/census.md with stand-in errors
_MAPE_RATES = [0.01, 0.05, 0.10, 0.20, 0.30, 0.50, 0.90, 0.99, 0.998]
_MAPE_VALUES = [0.6, 1.4, 2.1, 3.3, 4.3, 5.9, 8.9, 9.6, 9.7]
# the grid of book/clones/tighter.md with stand-in epsilons (the explorer only reads them)
_ROUNDS = np.array([1, 2, 5, 10, 20, 50, 100])
_STAND_IN = (np.array([1.0, 2.0, 4.0, 8.0])[:, None, None] * np.sqrt(_ROUNDS)[None, None, :]
             / np.sqrt([1e3, 1e4, 1e5])[None, :, None])
_TABLE = RoundsTable([1.0, 2.0, 4.0, 8.0], [10**3, 10**4, 10**5], _ROUNDS, 1e-6,
                     _STAND_IN, 0.7 * _STAND_IN)


def _reference_figure(value: float) -> Figure:
    fig, ax = plt.subplots(figsize=(4.8, 4.6), layout="constrained")
    plt.close(fig)
    ax.plot([0.0, 1.0], [1.0, value], label="line")
    ax.set_xlabel("x")
    ax.set_ylabel("y")
    ax.legend(frameon=False)
    return fig


def _update(explorer: Callable[..., Figure], settings: Iterable[dict]) -> Callable[[], None]:
    """One update per call: the next slider setting, drawn and closed."""
    cycle = itertools.cycle(list(settings))

    def once() -> None:
        fig = explorer(**next(cycle))
        FigureCanvasAgg(fig).draw()
        plt.close(fig)

    once()  # warm up (imports, compiled kernels, font cache); repeats then see new values
    return once


def _row(name: str, update: Callable[[], None]) -> Benchmark:
    return Benchmark(name=name, ours=update, ours_size=1, budget=GOAL_SECONDS, repeats=5)


BENCHMARKS = [
    _row("reference: a one-line figure, drawn (matplotlib alone)",
         _update(_reference_figure, ({"value": v} for v in (0.1, 0.2, 0.3, 0.4, 0.5, 0.6)))),
    _row("explorer I: trade-off curves, eps slider",
         _update(explore_tradeoff, ({"eps": e} for e in (0.5, 0.75, 1.25, 1.5, 2.0, 2.5)))),
    _row("explorer II: eps vs n (1e3-1e6), every bound, eps0 slider",
         _update(explore_amplification, ({"eps0": e} for e in (1.0, 2.0, 3.0, 5.0, 6.0, 7.0)))),
    _row("explorer II: rounds (table given), T slider",
         _update(explore_rounds, ({"table": _TABLE, "eps0": 4.0, "n": 10**5, "rounds": t}
                                  for t in (1, 2, 5, 20, 50, 100)))),
    _row("explorer III: population mixer (n 1e3-1e5), one share",
         _update(explore_population_mix,
                 ({"shares": (s, 0.3, 0.2)} for s in (0.1, 0.2, 0.4, 0.6, 0.8, 1.0)))),
    _row("explorer IV: d_sigma attack (500 people), radius slider",
         _update(explore_dsigma_attack,
                 ({"t": _PEOPLE.t, "x": _PEOPLE.x, "sources": _SOURCES, "radius": r}
                  for r in (0.02, 0.03, 0.04, 0.06, 0.08, 0.1)))),
    _row("explorer V: profile chain of 6, eps slider",
         _update(explore_profile_chain, ({"eps": e} for e in (0.1, 0.2, 0.3, 0.7, 1.0, 2.0)))),
    _row("explorer VI: swap rate (MAPE table given), rate slider",
         _update(explore_swap_rate,
                 ({"mape_rates": _MAPE_RATES, "mape_values": _MAPE_VALUES, "rate": p}
                  for p in (0.02, 0.04, 0.08, 0.15, 0.4, 0.7)))),
]
