"""Every public function that documents a size limit, called AT that limit (issue 32, item 3).

One row per (function, limit): the largest size the function accepts, every other argument
typical (the docstring's example, a chapter's value), timed once against a budget: 5 s unless the
function's documentation promises something else (``promise`` then quotes it). The limits are the
library's own constants, imported here, never retyped; a limit stated only in words ("``n <= 8``")
is written as a number in the call and its row says so (``constants`` empty). Inputs are built on
the first call of a row and kept for its second, so rows with costly inputs run twice and the
runner's best of two times the call alone (``repeats=2``).

``tests/test_bench_limits_coverage.py`` keeps the table complete: a public function whose
docstring (or whose own code) names a size-limit constant needs a row here naming that constant;
a new constant needs a row or an entry in ``NOT_SIZE_LIMITS``.

``python benchmarks/bench_limits.py [substring ...]`` runs this module alone (the rows whose name
contains a substring), each row in a child process stopped after ``--timeout`` seconds (default
90), and prints each row's wall-clock time and CPU time as it finishes (on a loaded machine the
CPU time of a single-threaded call is the better guess of its time on an idle one);
``make bench`` runs the rows in-process with the other modules.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

import networkx as nx
import numpy as np
import pandas as pd
from run import Benchmark

from shuffle_lib import dsigma, inference, learning, permutations, plotting, randomizers, topdown
from shuffle_lib.accounting import (
    approx_dp,
    decomposition,
    finite,
    high_precision,
    krr,
    personalized,
    rounds,
    shuffle,
)
from shuffle_lib.accounting._binomial import binomial_bulk
from shuffle_lib.attacks import (
    MAX_CATEGORIES,
    MAX_MODEL_CATEGORIES,
    MAX_MODEL_ENTRIES,
    MAX_TABLE_ENTRIES,
    attack_neighbours,
    knn_reconstruction,
    learnability_error,
    local_distributions,
    majority_vote,
    predicted_distributions,
    vulnerability_rate,
    vulnerable,
)
from shuffle_lib.audit import MAX_AUDIT_TRIALS, audit
from shuffle_lib.datasets import (
    MAX_SYNTHETIC_PEOPLE,
    PublicPrivateData,
    synthetic_clusters,
    synthetic_households,
)
from shuffle_lib.privacy_levels import MAX_USERS, PROFILES, draw_levels, preference_levels
from shuffle_lib.sample_complexity import MAX_K_OVER_ALPHA, TASKS, plugged_sample_complexity
from shuffle_lib.swapping import (
    MAX_EXACT_STRATUM,
    MAX_EXACT_UNIVERSE,
    exact_stratified_swapping_epsilon,
    exact_swapping_epsilon,
    invariant_universe,
    pairwise_swapping_losses,
    swap_output_distribution,
)

DEFAULT_BUDGET = 5.0  # seconds: "answers within seconds" (issue 32, item 3)

#: Limit constants that bound a value, not a size (no work grows with them), or that are not a
#: limit of one function: the coverage test accepts a docstring naming them without a row.
NOT_SIZE_LIMITS = {
    "EPS0_MAX": "largest local level of the numerical accountants (a value)",
    "VALUE_MAX": "largest rho or eps of the zCDP conversions (a value)",
    "ALPHA_MAX": "largest Renyi order (a value)",
    "MAX_COORDINATE": "largest |position| of the d_sigma groups (a value)",
    "MAX_SIGMA2": "largest variance of discrete_gaussian (a value; its draws are O(1) each)",
    "MAX_NOISY": "largest |entry| of a noisy table (a value)",
    "EXPLORER_LEVEL_MAX": "largest eps, mu or eps0 of an explorer's slider (a value)",
    "POPULATION_LEVEL_MAX": "largest local level of explore_population_mix (a value)",
    "MARK_EVERY_POINT_MAX": "a plotting style threshold, not a limit",
    "ARRAY_MAX": "the shared ceiling on every array argument, above every per-function limit",
    "MAX_NOISE": "largest noise scale of synthetic_clusters (a value)",
    "CHANNEL_EPS0_MAX": "largest local level of the random LDP channels (a value)",
    "DPS_MAX": "largest working precision of the 40-digit enumerations (digits, not a size)",
    "KRR_K_MAX": "largest number of categories of shuffled k-RR (a value: no work grows with k)",
    "KRR_EPS0_MAX": "largest local level of shuffled k-RR (a value)",
}

#: (function, constant) pairs whose code reads a limit that no call of that function can reach,
#: with the reason (the coverage test then asks no row for them).
UNREACHED: dict[tuple[str, str], str] = {
    **{("shuffle_lib.attacks.predicted_distributions", name):
       "the calibrated model's limits (MAX_MODEL_CATEGORIES, MAX_MODEL_ENTRIES) are far smaller"
       for name in ("MAX_CATEGORIES", "MAX_TABLE_ENTRIES")},
    **{(f"shuffle_lib.accounting.decomposition.{name}", "NEUTRAL_N_MAX"):
       "checks alpha against eps0 only (n = 2), or has its own smaller limit (n <= 60)"
       for name in ("neutral_clone_probabilities", "neutral_clone_enumerated")},
    **{(f"shuffle_lib.accounting.personalized.{name}", "N_MAX"):
       "users listed one by one (no counts): ARRAY_MAX refuses a list long before N_MAX"
       for name in ("gspa_mu", "gspa_epsilon", "liu23_epsilon", "personalized_clone_delta",
                    "sample_personalized_reduction", "shuffled_personalized_rr_delta",
                    "shuffled_personalized_rr_epsilon", "laplace_clone_probabilities")},
}

_SLOT: dict[str, Any] = {}
_T = TypeVar("_T")


_GRAPH_K = 100  # dsigma.MAX_GRAPH_NEAREST // dsigma.MAX_GRAPH_NODES (asserted below)
assert _GRAPH_K * dsigma.MAX_GRAPH_NODES == dsigma.MAX_GRAPH_NEAREST


def _largest_social_graph():
    """The generated social graph of the d_sigma attack chapter at MAX_GRAPH_NODES people."""
    return dsigma.social_graph(dsigma.MAX_GRAPH_NODES, rng=0)[0]


def _inputs(key: str, build: Callable[[], _T]) -> _T:
    """The inputs of one row, built once and kept until another row builds its own (one slot,
    so the large inputs of a finished row are released)."""
    if key not in _SLOT:
        _SLOT.clear()
        _SLOT[key] = build()
    return _SLOT[key]


@dataclass(frozen=True)
class Limit:
    """One public function called at one of its documented size limits."""

    function: Callable[..., Any]
    constants: tuple[str, ...]  # limit constants the call reaches (names in the function's module)
    size: str  # the size at the limit, as the row shows it
    call: Callable[[], object]
    budget: float = DEFAULT_BUDGET
    promise: str = ""  # the documentation's own time promise, when it sets the budget
    repeats: int = 1  # 2 when the first call also builds the inputs

    @property
    def qualname(self) -> str:
        return f"{self.function.__module__}.{self.function.__qualname__}"

    def benchmark(self) -> Benchmark:
        return Benchmark(name=f"{self.function.__name__} at {self.size}", ours=self.call,
                         ours_size=1, budget=self.budget, repeats=self.repeats)


# --------------------------------------------------------------------------- shared inputs

N_MAX = shuffle.N_MAX
_SHARES = np.array([0.54, 0.37, 0.09])  # GSPA's conservative, moderate and liberal users
_LEVELS = np.array([0.1, 0.5, 1.0])


def _split(total: int, shares: np.ndarray = _SHARES) -> np.ndarray:
    """``total`` people split by ``shares`` (largest remainder to the first level)."""
    counts = np.floor(shares * total).astype(np.int64)
    counts[0] += total - int(counts.sum())
    return counts


_POPULATION = _split(personalized.N_MAX)


def _gspa_grid_n(eps0: float) -> int:
    """Largest n whose lattice for gspa_normal_approximation_error fits GRID_SIDE_MAX per axis
    (the function's own bulk rule, bisected)."""
    p_half = 1 / (1 + math.exp(eps0))
    low, high = 2, personalized.N_MAX
    while low < high:
        mid = (low + high + 1) // 2
        lo, hi, _ = binomial_bulk(mid - 1, p_half, 1e-18)
        if hi - lo + 1 <= personalized.GRID_SIDE_MAX:
            low = mid
        else:
            high = mid - 1
    return low


def _clone_delta_q() -> float:
    """A clone probability at which clone_delta keeps about 90% of COUNTS_MAX counts at n = N_MAX
    (the counts above 1e-30 of the mode span about 2 sqrt(2 ln 1e30) standard deviations)."""
    sd = 0.9 * high_precision.COUNTS_MAX / (2 * math.sqrt(2 * math.log(1e30)))
    return sd**2 / high_precision.N_MAX


def _uniform_points(n: int, dims: int = 2) -> np.ndarray:
    return np.random.default_rng(0).random((n, dims)) if dims > 1 else (
        np.random.default_rng(0).random(n))


def _labels(n: int, categories: int) -> np.ndarray:
    return np.random.default_rng(1).integers(0, categories, n)


def _sources(n: int, k: int) -> np.ndarray:
    return np.random.default_rng(2).integers(0, n, (n, k))


def _vulnerability_inputs(categories: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Labels, neighbour lists and an order for vulnerable / vulnerability_rate at
    MAX_TABLE_ENTRIES = 50 resamples x n x ``categories`` (built once per category count)."""
    n = _PER_TABLE // (50 * categories)
    return _inputs(f"vulnerable {categories}", lambda: (
        _labels(n, categories), _sources(n, 25), np.random.default_rng(6).permutation(n)))


def _swap_frame(strata: tuple[tuple[int, int], ...]) -> pd.DataFrame:
    """Households of ``MAX_EXACT_STRATUM`` records per stratum, each in its own county, with
    ``owners`` owners: the universe of a stratum holds C(records, owners) datasets."""
    rows = []
    for size, owners in strata:
        for j in range(MAX_EXACT_STRATUM):
            rows.append({"size": size, "county": f"c{size}_{j}",
                         "tenure": "own" if j < owners else "rent"})
    return pd.DataFrame(rows)


def _pairwise_frame() -> pd.DataFrame:
    """Strata for the pairwise losses, within their per-stratum table limit (members x m! <=
    MAX_STRATUM_TABLE): MAX_EXACT_STRATUM records with one owner (8 members) and two strata of
    six records with two owners (15 members each), distinct counties within a stratum."""
    rows = [{"size": size, "county": f"c{size}_{j}", "tenure": "own" if j < owners else "rent"}
            for size, (records, owners) in enumerate([(MAX_EXACT_STRATUM, 1), (6, 2), (6, 2)])
            for j in range(records)]
    return pd.DataFrame(rows)


# two strata at MAX_EXACT_STRATUM records whose universe is the largest product of
# C(MAX_EXACT_STRATUM, owners) within MAX_EXACT_UNIVERSE
_SWAP_STRATA = max(
    (((2, a), (3, b)) for a in range(MAX_EXACT_STRATUM + 1) for b in range(MAX_EXACT_STRATUM + 1)
     if math.comb(MAX_EXACT_STRATUM, a) * math.comb(MAX_EXACT_STRATUM, b) <= MAX_EXACT_UNIVERSE),
    key=lambda s: math.comb(MAX_EXACT_STRATUM, s[0][1]) * math.comb(MAX_EXACT_STRATUM, s[1][1]),
)


def _mechanism(n: int, width: int = 4, alpha: float = 2.0) -> dsigma.DSigmaMechanism:
    groups, hidden = dsigma.groups_with_known_width(n, width, rng=0)
    return dsigma.DSigmaMechanism(groups, alpha=alpha, reference=hidden)


def _order_probs(n: int) -> np.ndarray:
    """A law over the n! release orders: the d_sigma mechanism of width 1 on n people."""
    return inference.release_order_probabilities(_mechanism(n, width=1, alpha=1.0))


_RR = np.array([[0.75, 0.25], [0.25, 0.75]])
_CELLS_N_BINARY = int(math.log(inference.MAX_CELLS) // math.log(2))  # 2^n <= MAX_CELLS
_CELLS_N_RR = int(math.log(inference.MAX_CELLS) // math.log(4))  # (2 x 2)^n <= MAX_CELLS
_RELEASE_N = max(n for n in range(1, 9) if 3 ** (2 * n) <= inference.MAX_CELLS)  # at least m = 3
_MAX_RELEASE = (_RELEASE_N, max(m for m in range(3, 50)
                                if m ** (2 * _RELEASE_N) <= inference.MAX_CELLS))
_REIDENTIFICATION_N = max(n for n in range(1, 9)
                          if math.factorial(n) * 2**n <= inference.MAX_CELLS)

_FEATURES, _CLASSES = 20, 10  # the digits model of the learning chapter: 20 components, 10 digits
_GRADIENT_SIZE = (_FEATURES + 1) * _CLASSES


def _model_data(records: int) -> tuple[np.ndarray, np.ndarray]:
    gen = np.random.default_rng(3)
    return gen.normal(size=(records, _FEATURES)), gen.integers(0, _CLASSES, records)


def _flip(which: int, size: int, gen: np.random.Generator) -> np.ndarray:
    """Randomized response at ln 3, as in audit's example."""
    return (gen.random(size) < 0.75) == (which == 0)


def _hist_data() -> dict[str, np.ndarray]:
    return {"a": np.random.default_rng(4).normal(size=10**6)}


def _explorer_people() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    data = synthetic_clusters(plotting.ATTACK_PEOPLE_MAX, rng=0)
    return data.t, data.x, attack_neighbours(data.t, 0.25, 25, rng=0)


def _grid(top: int, points: int = plotting.EXPLORER_GRID_MAX) -> np.ndarray:
    return np.unique(np.geomspace(1_000, top, points).astype(np.int64))


_TABLE_SIDE = math.isqrt(topdown.MAX_CELLS)
_PANEL_SIDE = math.isqrt(plotting.MAX_PANELS)


def _count_table() -> np.ndarray:
    """A TABLE_SIDE x TABLE_SIDE table (MAX_CELLS cells) of MAX_TABLE_TOTAL counts."""
    cells = np.random.default_rng(5).multinomial(topdown.MAX_TABLE_TOTAL,
                                                 np.full(_TABLE_SIDE**2, _TABLE_SIDE**-2))
    return cells.reshape(_TABLE_SIDE, _TABLE_SIDE)


def _margin_table() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A noisy copy of :func:`_count_table` (sigma 10) and the table's margins."""
    table = _count_table()
    noisy = table + np.random.default_rng(6).normal(0, 10.0, table.shape)
    return noisy, table.sum(axis=1), table.sum(axis=0)


# --------------------------------------------------------------------------- the table

_PER_TABLE = MAX_TABLE_ENTRIES  # vote counts, sources or distributions of the attacks
_ATTACK_CATEGORIES = 8  # Adult's marital statuses, the d_sigma chapter's labels
_MODEL_PEOPLE = MAX_MODEL_ENTRIES // (2 * MAX_MODEL_CATEGORIES)  # fitted on t, queried at t
_LEARN_PEOPLE = MAX_MODEL_ENTRIES // (2 * _ATTACK_CATEGORIES)
_GD_RECORDS = learning.MAX_PATH_ENTRIES // _GRADIENT_SIZE
_PRESERVATION_N = permutations.MAX_ITEMS // dsigma.MAX_TRIALS
_KNOWN_WIDTH_N = 10**6  # documented in words: "n at most 10**6"
_KENDALL_N = 100
_SAMPLER_USERS = personalized.SAMPLE_WORK_MAX // personalized.SAMPLE_MAX + 1
_GRID_N = _gspa_grid_n(1.0)
# k-ary RR with k (k - 1) ordered pairs of rows times k outputs within MAX_PAIR_TERMS
_PAIR_K = max(k for k in range(2, 1000) if k * (k - 1) * k <= finite.MAX_PAIR_TERMS)

LIMITS: list[Limit] = [
    # ---------------------------------------------------------------- accounting.approx_dp
    Limit(approx_dp.optimal_composition_delta, ("K_MAX",), "k = K_MAX",
          lambda: approx_dp.optimal_composition_delta(0.01, approx_dp.K_MAX, 20.0)),
    Limit(approx_dp.optimal_composition_epsilon, ("K_MAX",), "k = K_MAX",
          lambda: approx_dp.optimal_composition_epsilon(0.01, approx_dp.K_MAX, 1e-6)),
    # ---------------------------------------------------------------- accounting.finite
    Limit(finite.channel_delta, ("MAX_PAIR_TERMS",),
          f"pairs x outputs <= MAX_PAIR_TERMS ({_PAIR_K}-ary RR)",
          lambda: finite.channel_delta(randomizers.krr_channel(_PAIR_K, 1.0), 0.5)),
    Limit(finite.channel_epsilon, ("MAX_PAIR_TERMS",),
          f"pairs x outputs <= MAX_PAIR_TERMS ({_PAIR_K}-ary RR, every pair listed)",
          lambda: finite.channel_epsilon(
              randomizers.krr_channel(_PAIR_K, 1.0),
              [(a, b) for a in range(_PAIR_K) for b in range(_PAIR_K) if a != b])),
    # ---------------------------------------------------------------- accounting.decomposition
    Limit(decomposition.neutral_clone_delta, ("NEUTRAL_N_MAX",), "n = NEUTRAL_N_MAX",
          lambda: decomposition.neutral_clone_delta(0.01, 1.0, decomposition.NEUTRAL_N_MAX, 0.2)),
    Limit(decomposition.neutral_clone_epsilon, ("NEUTRAL_N_MAX",), "n = NEUTRAL_N_MAX",
          lambda: decomposition.neutral_clone_epsilon(4.0, decomposition.NEUTRAL_N_MAX, 1e-6,
                                                      1 / (math.exp(4.0) + 9)), budget=10.0,
          promise="about a dozen evaluations of neutral_clone_delta"),
    Limit(decomposition.shuffled_channel_delta, ("ENUMERATION_MAX",),
          "histograms x reports x outputs <= ENUMERATION_MAX (binary RR)",
          lambda: decomposition.shuffled_channel_delta(
              randomizers.krr_channel(2, 1.0), (0, 1),
              [0] * (max(m for m in range(2, 2000)
                         if (m + 1) * (m + 1) * 2 <= decomposition.ENUMERATION_MAX) - 1), 0.1)),
    Limit(decomposition.extremal_ldp_channel, ("EXTREMAL_INPUTS_MAX",),
          "inputs = EXTREMAL_INPUTS_MAX (a linear program with 2^12 - 1 columns)",
          lambda: decomposition.extremal_ldp_channel(3.0, decomposition.EXTREMAL_INPUTS_MAX, 0)),
    Limit(decomposition.interior_ldp_channel, ("CHANNEL_ENTRIES_MAX",),
          "inputs * outputs = CHANNEL_ENTRIES_MAX",
          lambda: decomposition.interior_ldp_channel(
              3.0, 10, decomposition.CHANNEL_ENTRIES_MAX // 10, 0)),
    # ---------------------------------------------------------------- accounting.krr
    Limit(krr.shuffled_krr_exact_delta, ("KRR_N_MAX",), "n = KRR_N_MAX, k = 3",
          lambda: krr.shuffled_krr_exact_delta(1e-4, 0.5, krr.KRR_N_MAX, 3)),
    Limit(krr.shuffled_krr_exact_epsilon, ("KRR_N_MAX",), "n = KRR_N_MAX, k = 3", budget=15.0,
          promise="11 s at n = 10^8 (small k and eps0)",
          call=lambda: krr.shuffled_krr_exact_epsilon(0.5, krr.KRR_N_MAX, 3, 1e-6)),
    # ---------------------------------------------------------------- accounting.rounds
    Limit(rounds.stronger_clone_pld, ("PLD_CELLS_MAX",),
          "cells near PLD_CELLS_MAX (n = 1e6, eps0 = 0.5)",
          lambda: rounds.stronger_clone_pld(0.5, 10**6), budget=10.0,
          promise="about 5 s at n = 10^6, eps0 = 0.5"),
    Limit(rounds.shuffled_rounds_epsilon, ("ROUNDS_MAX",), "rounds = ROUNDS_MAX",
          lambda: rounds.shuffled_rounds_epsilon(2.0, 1000, 1e-6, rounds.ROUNDS_MAX)),
    Limit(rounds.shuffled_rr_rounds_floor, ("ROUNDS_MAX",), "rounds = ROUNDS_MAX",
          lambda: rounds.shuffled_rr_rounds_floor(2.0, 1000, 1e-6, rounds.ROUNDS_MAX)),
    Limit(rounds.stronger_clone_rdp, ("PLD_CELLS_MAX",),
          "cells near PLD_CELLS_MAX (n = 2.8e5, eps0 = 0.5), 121 orders",
          lambda: rounds.stronger_clone_rdp(0.5, 280_000), budget=30.0,
          promise="the PLD's cells, then one log-sum-exp per order"),
    Limit(rounds.shuffled_rounds_rdp_epsilon, ("ROUNDS_MAX",), "rounds = ROUNDS_MAX",
          lambda: rounds.shuffled_rounds_rdp_epsilon(2.0, 1000, 1e-6, rounds.ROUNDS_MAX)),
    Limit(rounds.composed_epsilon, ("ROUNDS_MAX",), "rounds = ROUNDS_MAX (n = 1000)",
          lambda: rounds.composed_epsilon(rounds.stronger_clone_pld(2.0, 1000), rounds.ROUNDS_MAX,
                                          1e-6)),
    Limit(rounds.rounds_local_epsilon, ("ROUNDS_MAX",), "rounds = ROUNDS_MAX",
          lambda: rounds.rounds_local_epsilon(1.0, 1000, 1e-6, rounds.ROUNDS_MAX), budget=60.0,
          promise="one PLD built and composed per bisection step"),
    Limit(rounds.rounds_table, ("TABLE_PAIRS_MAX", "TABLE_N_MAX", "TABLE_ROUNDS_MAX",
                                "ROUNDS_MAX"),
          "16 pairs (n up to TABLE_N_MAX), 12 rounds values up to ROUNDS_MAX",
          lambda: rounds.rounds_table(
              [1.0, 2.0, 4.0, 8.0], [10**3, 10**4, 10**5, rounds.TABLE_N_MAX],
              np.unique(np.geomspace(1, rounds.ROUNDS_MAX, rounds.TABLE_ROUNDS_MAX).astype(int))),
          budget=300.0, promise="5-8 s a pair with rounds up to 10^4"),
    # ---------------------------------------------------------------- accounting.shuffle
    Limit(shuffle.clone_reduction_delta, ("N_MAX",), "n = N_MAX",
          lambda: shuffle.clone_reduction_delta(1e-4, 1.0, N_MAX, math.exp(-1.0))),
    Limit(shuffle.clone_numerical_epsilon, ("N_MAX",), "n = N_MAX, fmt21",
          lambda: shuffle.clone_numerical_epsilon(1.0, N_MAX, 1e-6)),
    Limit(shuffle.clone_numerical_epsilon, ("N_MAX",), "n = N_MAX, stronger",
          lambda: shuffle.clone_numerical_epsilon(1.0, N_MAX, 1e-6, variant="stronger")),
    Limit(shuffle.fmt21_numerical_epsilon, ("N_MAX",), "n = N_MAX",
          lambda: shuffle.fmt21_numerical_epsilon(1.0, N_MAX, 1e-6)),
    Limit(shuffle.shuffled_rr_exact_delta, ("N_MAX",), "n = N_MAX",
          lambda: shuffle.shuffled_rr_exact_delta(1e-4, 1.0, N_MAX), budget=10.0,
          promise="several seconds at 10^10 with others_ones=None"),
    Limit(shuffle.shuffled_rr_exact_epsilon, ("N_MAX",), "n = N_MAX",
          lambda: shuffle.shuffled_rr_exact_epsilon(1.0, N_MAX, 1e-6), budget=10.0,
          promise="same cost as shuffled_rr_exact_delta: several seconds"),
    Limit(shuffle.local_epsilon_for_target, ("N_MAX",), "n = N_MAX",
          lambda: shuffle.local_epsilon_for_target(0.01, N_MAX, 1e-6)),
    Limit(shuffle.sample_clone_pair, ("N_MAX", "SAMPLE_MAX"), "n = N_MAX, size = SAMPLE_MAX",
          lambda: shuffle.sample_clone_pair(1.0, N_MAX, shuffle.SAMPLE_MAX, rng=0)),
    # ---------------------------------------------------------------- accounting.personalized
    Limit(personalized.personalized_numerical_epsilon, ("N_MAX",), "N_MAX users (counts)",
          lambda: personalized.personalized_numerical_epsilon(_LEVELS, 0.0, 1e-6,
                                                              counts=_POPULATION)),
    Limit(personalized.clone_reduction_epsilon, ("N_MAX",), "N_MAX people (counts)",
          lambda: personalized.clone_reduction_epsilon(
              1.0, 2 / (np.exp(_LEVELS) + 1), 1e-6, counts=_POPULATION)),
    Limit(personalized.personalized_laplace_epsilon, ("N_MAX",), "N_MAX people (counts)",
          lambda: personalized.personalized_laplace_epsilon(_LEVELS, 1e-6, counts=_POPULATION)),
    Limit(personalized.level_tagged_rr_epsilon, ("N_MAX",), "N_MAX people (counts)",
          lambda: personalized.level_tagged_rr_epsilon(_LEVELS, 1e-6, counts=_POPULATION)),
    Limit(personalized.level_tagged_rr_epsilon, ("N_MAX",), "N_MAX people (counts), floor",
          lambda: personalized.level_tagged_rr_epsilon(_LEVELS, 1e-6, counts=_POPULATION,
                                                       floor=True)),
    Limit(personalized.gspa_normal_approximation_error, ("N_MAX", "GRID_SIDE_MAX"),
          f"grid side = GRID_SIDE_MAX (n = {_GRID_N})",
          lambda: personalized.gspa_normal_approximation_error(1.0, _GRID_N), budget=2.0,
          promise="GRID_SIDE_MAX: a million cells, about 1.5 s of CPU"),
    Limit(personalized.sample_personalized_reduction, ("SAMPLE_MAX", "SAMPLE_WORK_MAX"),
          "size = SAMPLE_MAX, size x others = SAMPLE_WORK_MAX",
          lambda: personalized.sample_personalized_reduction(
              np.linspace(0.5, 2.0, _SAMPLER_USERS), 0.0, 0, size=personalized.SAMPLE_MAX,
              rng=0), budget=5.0, promise="SAMPLE_WORK_MAX: about 4 s of CPU at the limit"),
    # ---------------------------------------------------------------- accounting.high_precision
    Limit(high_precision.clone_delta, ("N_MAX", "COUNTS_MAX", "TAIL_TRIALS_MAX"),
          "n = N_MAX, 0.9 COUNTS_MAX counts",
          lambda: high_precision.clone_delta(
              1e-3, -math.log(_clone_delta_q()), high_precision.N_MAX,
              high_precision.clone_probability_mp(-math.log(_clone_delta_q()))),
          budget=6.0, promise="about 3 s of CPU per 50,000 counts"),
    Limit(high_precision.clone_pair_laws, ("QUADRATIC_N_MAX",), "n = QUADRATIC_N_MAX",
          lambda: high_precision.clone_pair_laws(1.0, high_precision.QUADRATIC_N_MAX,
                                                 high_precision.clone_probability_mp(1.0))),
    Limit(high_precision.clone_delta_by_enumeration, ("QUADRATIC_N_MAX",), "n = QUADRATIC_N_MAX",
          lambda: high_precision.clone_delta_by_enumeration(
              0.5, 1.0, high_precision.QUADRATIC_N_MAX, high_precision.clone_probability_mp(1.0))),
    Limit(high_precision.shuffled_rr_delta, ("QUADRATIC_N_MAX",), "n = QUADRATIC_N_MAX",
          lambda: high_precision.shuffled_rr_delta(0.5, 1.0, high_precision.QUADRATIC_N_MAX,
                                                   high_precision.QUADRATIC_N_MAX // 2)),
    Limit(high_precision.binomial_upper_tail, ("TAIL_TRIALS_MAX",), "c = TAIL_TRIALS_MAX",
          lambda: high_precision.binomial_upper_tail(high_precision.TAIL_TRIALS_MAX,
                                                     high_precision.TAIL_TRIALS_MAX // 2)),
    # ---------------------------------------------------------------- attacks
    # about 20 people within r of each: n x 20 close pairs, within MAX_TABLE_ENTRIES as well
    Limit(attack_neighbours, ("MAX_TABLE_ENTRIES",), "n x k = MAX_TABLE_ENTRIES (k = 25)",
          lambda: attack_neighbours(
              *_inputs("neighbours", lambda: (_uniform_points(_PER_TABLE // 25),)),
              r=math.sqrt(20 / (math.pi * (_PER_TABLE // 25))), k=25, rng=0), repeats=2),
    Limit(majority_vote, ("MAX_TABLE_ENTRIES",),
          "resamples x people x categories = MAX_TABLE_ENTRIES (8,000 people)",
          lambda: majority_vote(*_inputs("vote", lambda: (
              _labels(_PER_TABLE // (8_000 * _ATTACK_CATEGORIES) * 8_000, _ATTACK_CATEGORIES)
              .reshape(-1, 8_000), _sources(8_000, 25))), _ATTACK_CATEGORIES), repeats=2),
    Limit(majority_vote, ("MAX_CATEGORIES", "MAX_TABLE_ENTRIES"),
          "n_categories = MAX_CATEGORIES, MAX_TABLE_ENTRIES counts (8,000 people)",
          lambda: majority_vote(*_inputs("vote categories", lambda: (
              _labels(_PER_TABLE // (8_000 * MAX_CATEGORIES) * 8_000, MAX_CATEGORIES)
              .reshape(-1, 8_000), _sources(8_000, 25))), MAX_CATEGORIES), repeats=2),
    *(
        Limit(function, constants, f"{what} (50 resamples)",
              lambda function=function, k=k: function(
                  *_vulnerability_inputs(k), eps=2.5, n_categories=k, resamples=50, rng=0),
              repeats=2)
        for k, constants, what in (
            (_ATTACK_CATEGORIES, ("MAX_TABLE_ENTRIES",),
             "resamples x n x categories = MAX_TABLE_ENTRIES"),
            (MAX_CATEGORIES, ("MAX_CATEGORIES", "MAX_TABLE_ENTRIES"),
             "n_categories = MAX_CATEGORIES, MAX_TABLE_ENTRIES counts"),
        )
        for function in (vulnerable, vulnerability_rate)
    ),
    Limit(local_distributions, ("MAX_CATEGORIES", "MAX_TABLE_ENTRIES"),
          "n_categories = MAX_CATEGORIES, n x categories = MAX_TABLE_ENTRIES",
          lambda: local_distributions(
              *_inputs("local categories", lambda: (
                  _uniform_points(_PER_TABLE // MAX_CATEGORIES, 1),
                  _labels(_PER_TABLE // MAX_CATEGORIES, MAX_CATEGORIES))),
              25 / (_PER_TABLE // MAX_CATEGORIES), MAX_CATEGORIES), repeats=2),
    Limit(knn_reconstruction, ("MAX_NEAREST",), "n x n_neighbors = MAX_NEAREST (15 neighbours)",
          lambda: knn_reconstruction(
              *_inputs("knn", lambda: (_uniform_points(dsigma.MAX_NEAREST // 15),
                                       _labels(dsigma.MAX_NEAREST // 15, _ATTACK_CATEGORIES))),
              15), repeats=2),
    Limit(predicted_distributions, ("MAX_MODEL_CATEGORIES", "MAX_MODEL_ENTRIES"),
          "n_categories = MAX_MODEL_CATEGORIES, (n + n) x categories = MAX_MODEL_ENTRIES",
          lambda: predicted_distributions(
              *_inputs("calibrated classes", lambda: (
                  _uniform_points(_MODEL_PEOPLE, 1),
                  np.arange(_MODEL_PEOPLE) % MAX_MODEL_CATEGORIES)),
              MAX_MODEL_CATEGORIES, eps=2.5, rng=0), repeats=2),
    Limit(predicted_distributions, ("MAX_MODEL_ENTRIES",),
          "(8,000 + len(at)) x 8 categories = MAX_MODEL_ENTRIES",
          lambda: predicted_distributions(
              *_inputs("calibrated at", lambda: (
                  _uniform_points(8_000, 1), _labels(8_000, _ATTACK_CATEGORIES))),
              _ATTACK_CATEGORIES, eps=2.5, rng=0,
              at=_inputs("calibrated at points", lambda: _uniform_points(
                  MAX_MODEL_ENTRIES // _ATTACK_CATEGORIES - 8_000, 1))), repeats=2),
    Limit(local_distributions, ("MAX_TABLE_ENTRIES",), "n x categories = MAX_TABLE_ENTRIES",
          lambda: local_distributions(
              *_inputs("local", lambda: (
                  _uniform_points(_PER_TABLE // _ATTACK_CATEGORIES, 1),
                  _labels(_PER_TABLE // _ATTACK_CATEGORIES, _ATTACK_CATEGORIES))),
              1e-6, _ATTACK_CATEGORIES), repeats=2),
    Limit(learnability_error, ("MAX_MODEL_ENTRIES",), "(n + n) x 8 categories = MAX_MODEL_ENTRIES",
          lambda: learnability_error(
              *_inputs("learnability", lambda: (
                  _uniform_points(_LEARN_PEOPLE, 1), _labels(_LEARN_PEOPLE, _ATTACK_CATEGORIES),
                  _labels(_LEARN_PEOPLE, _ATTACK_CATEGORIES))),
              1e-6, _ATTACK_CATEGORIES, eps=2.5, rng=0), repeats=2),
    Limit(learnability_error, ("MAX_MODEL_CATEGORIES", "MAX_MODEL_ENTRIES"),
          "n_categories = MAX_MODEL_CATEGORIES, (n + n) x categories = MAX_MODEL_ENTRIES",
          lambda: learnability_error(
              *_inputs("learnability classes", lambda: (
                  _uniform_points(_MODEL_PEOPLE, 1),
                  np.arange(_MODEL_PEOPLE) % MAX_MODEL_CATEGORIES,
                  np.arange(_MODEL_PEOPLE) % MAX_MODEL_CATEGORIES)),
              1e-6, MAX_MODEL_CATEGORIES, eps=2.5, rng=0), repeats=2),
    # ---------------------------------------------------------------- audit, datasets
    Limit(audit, ("MAX_AUDIT_TRIALS",), "trials = MAX_AUDIT_TRIALS",
          lambda: audit(_flip, MAX_AUDIT_TRIALS, rng=0)),
    Limit(audit, ("MAX_AUDIT_TRIALS",), "trials = MAX_AUDIT_TRIALS, continuous scores",
          lambda: audit(lambda which, size, gen: gen.normal(which, 1.0, size), MAX_AUDIT_TRIALS,
                        rng=0)),
    Limit(synthetic_clusters, ("MAX_SYNTHETIC_PEOPLE",), "n = MAX_SYNTHETIC_PEOPLE",
          lambda: synthetic_clusters(MAX_SYNTHETIC_PEOPLE, rng=0)),
    Limit(PublicPrivateData, ("MAX_SYNTHETIC_PEOPLE",), "MAX_SYNTHETIC_PEOPLE people",
          lambda: PublicPrivateData(*_inputs("people", lambda: (
              _uniform_points(MAX_SYNTHETIC_PEOPLE), _labels(MAX_SYNTHETIC_PEOPLE, 8))), 8),
          repeats=2),
    Limit(synthetic_households, ("MAX_SYNTHETIC_PEOPLE",), "MAX_SYNTHETIC_PEOPLE people (size 5)",
          lambda: synthetic_households(MAX_SYNTHETIC_PEOPLE // 5, size=5, rng=0)),
    # ---------------------------------------------------------------- dsigma
    Limit(dsigma.empirical_preservation, ("MAX_TRIALS", "MAX_ITEMS"),
          "trials = MAX_TRIALS, trials x n = MAX_ITEMS",
          lambda: dsigma.empirical_preservation(
              _inputs("preservation", lambda: _mechanism(_PRESERVATION_N)),
              np.arange(10), 0.05, dsigma.MAX_TRIALS, rng=0), repeats=2),
    Limit(dsigma.empirical_preservation_of_subsets, ("MAX_TRIALS", "MAX_ITEMS"),
          "trials = MAX_TRIALS, trials x n = MAX_ITEMS, 10 subsets",
          lambda: dsigma.empirical_preservation_of_subsets(
              _inputs("preservation", lambda: _mechanism(_PRESERVATION_N)),
              [np.arange(10 * i, 10 * i + 10) for i in range(10)], 0.05, dsigma.MAX_TRIALS,
              rng=0), repeats=2),
    Limit(dsigma.hamming_crossing_counts, ("MAX_PRESERVATION_N",), "n = MAX_PRESERVATION_N",
          lambda: dsigma.hamming_crossing_counts(dsigma.MAX_PRESERVATION_N,
                                                 dsigma.MAX_PRESERVATION_N // 2),
          budget=0.1, promise="about 0.1 s there"),
    Limit(dsigma.hamming_preservation_delta, ("MAX_PRESERVATION_N",), "n = MAX_PRESERVATION_N",
          lambda: dsigma.hamming_preservation_delta(dsigma.MAX_PRESERVATION_N,
                                                    dsigma.MAX_PRESERVATION_N // 2, 0.5, 1.0),
          budget=0.1, promise="about 0.1 s there"),
    Limit(dsigma.hamming_class_count, ("MAX_MOVED",), "2a + b + d = MAX_MOVED",
          lambda: dsigma.hamming_class_count(
              10 * dsigma.MAX_MOVED, 5 * dsigma.MAX_MOVED, dsigma.MAX_MOVED // 4,
              dsigma.MAX_MOVED // 4, dsigma.MAX_MOVED // 4),
          budget=1.0, promise="well under a second"),
    Limit(dsigma.groups_with_known_width, ("MAX_ITEMS",),
          "n = 10**6 (in words), n x (width + 1) = MAX_ITEMS",
          lambda: dsigma.groups_with_known_width(
              _KNOWN_WIDTH_N, permutations.MAX_ITEMS // _KNOWN_WIDTH_N - 1, rng=0)),
    Limit(dsigma.groups_nearest, ("MAX_NEAREST",), "n x k = MAX_NEAREST (k = 25)",
          lambda: dsigma.groups_nearest(
              _inputs("nearest", lambda: _uniform_points(dsigma.MAX_NEAREST // 25)), 25),
          budget=4.0, promise="MAX_NEAREST: about a microsecond per member", repeats=2),
    Limit(dsigma.groups_nearest_in_graph, ("MAX_GRAPH_NEAREST",),
          "n x k = MAX_GRAPH_NEAREST (n = MAX_GRAPH_NODES)",
          lambda: dsigma.groups_nearest_in_graph(
              _inputs("graph", _largest_social_graph), _GRAPH_K), repeats=2),
    Limit(dsigma.graph_attack_sources, ("MAX_GRAPH_NEAREST",),
          "n x k = MAX_GRAPH_NEAREST (n = MAX_GRAPH_NODES, r = 2)",
          lambda: dsigma.graph_attack_sources(
              _inputs("graph", _largest_social_graph), 2, _GRAPH_K, rng=0), repeats=2),
    Limit(dsigma.graph_attack_sources, ("MAX_GRAPH_REACH",),
          "star of isqrt(MAX_GRAPH_REACH) - 3 leaves, r = 2: (L+1)^2 + 4L entries bounded",
          lambda: dsigma.graph_attack_sources(
              _inputs("star", lambda: nx.star_graph(math.isqrt(dsigma.MAX_GRAPH_REACH) - 3)),
              2, 1, rng=0), repeats=2),
    Limit(dsigma.social_graph, ("MAX_GRAPH_NODES",), "n = MAX_GRAPH_NODES",
          lambda: dsigma.social_graph(dsigma.MAX_GRAPH_NODES, rng=0)),
    Limit(dsigma.spectral_positions, ("MAX_GRAPH_NODES",), "n = MAX_GRAPH_NODES (16 columns)",
          lambda: dsigma.spectral_positions(_inputs("graph", _largest_social_graph), 16),
          repeats=2),
    Limit(dsigma.kendall_neighbour_changes, ("MAX_ITEMS",), "len(orders) x n^2 = MAX_ITEMS",
          lambda: dsigma.kendall_neighbour_changes(
              np.arange(_KENDALL_N),
              _inputs("kendall orders", lambda: np.array([
                  np.random.default_rng(i).permutation(_KENDALL_N)
                  for i in range(permutations.MAX_ITEMS // _KENDALL_N**2)])),
              np.r_[np.arange(1, 10), 0, np.arange(10, _KENDALL_N)]), repeats=2),
    Limit(dsigma.sensitivity_brute_force, (), "n = 8 (in words)",
          lambda: dsigma.sensitivity_brute_force(
              np.arange(8), [[i, (i + 1) % 8] for i in range(8)])),
    Limit(dsigma.exhaustive_privacy_loss, (), "n = 8 (in words)",
          lambda: dsigma.exhaustive_privacy_loss(_mechanism(8, width=2, alpha=1.0))),
    Limit(dsigma.optimal_width_brute_force, (), "n = 9 (in words)",
          lambda: dsigma.optimal_width_brute_force([[i, (i + 3) % 9] for i in range(9)])),
    # ---------------------------------------------------------------- inference
    Limit(inference.all_sequences, ("MAX_CELLS",), "2^n <= MAX_CELLS sequences",
          lambda: inference.all_sequences(_CELLS_N_BINARY, 2)),
    Limit(inference.all_orders, (), "n = 8 (in words)", lambda: inference.all_orders(8)),
    Limit(inference.household_prior, ("MAX_CELLS",), "2^(sum sizes) <= MAX_CELLS",
          lambda: inference.household_prior([2] * (_CELLS_N_BINARY // 2), 0.1, 0.9)),
    Limit(inference.ldp_likelihood, ("MAX_CELLS",), "(2x2)^n <= MAX_CELLS cells",
          lambda: inference.ldp_likelihood(_RR, _CELLS_N_RR)),
    Limit(inference.release_likelihood, ("MAX_CELLS",),
          f"m^2n <= MAX_CELLS cells (n = {_MAX_RELEASE[0]}, m = {_MAX_RELEASE[1]})",
          lambda: inference.release_likelihood(
              _inputs("release orders", lambda: _order_probs(_MAX_RELEASE[0])), _MAX_RELEASE[1]),
          repeats=2),
    Limit(inference.optimal_reidentification_success, ("MAX_CELLS",),
          f"n! x 2^n <= MAX_CELLS (n = {_REIDENTIFICATION_N})",
          lambda: inference.optimal_reidentification_success(
              _RR, np.arange(_REIDENTIFICATION_N) % 2,
              _inputs("reidentification orders", lambda: _order_probs(_REIDENTIFICATION_N)),
              [0, 1, 2]), repeats=2),
    Limit(inference.blind_reidentification_success, ("MAX_GROUP", "MAX_REIDENTIFIED"),
          "group_size = MAX_GROUP, k = MAX_REIDENTIFIED",
          lambda: inference.blind_reidentification_success(inference.MAX_GROUP,
                                                           inference.MAX_REIDENTIFIED),
          budget=1.0, promise="about a second there"),
    Limit(inference.assignment_likelihood, ("MAX_CELLS",), "(n!)^2 <= MAX_CELLS (n = 6)",
          lambda: inference.assignment_likelihood(
              _inputs("assignment orders", lambda: _order_probs(6))), repeats=2),
    # ---------------------------------------------------------------- learning
    Limit(learning.per_record_gradients, ("MAX_PATH_ENTRIES",),
          "m x (d+1) x k = MAX_PATH_ENTRIES (d = 20, k = 10)",
          lambda: learning.per_record_gradients(
              np.zeros((_FEATURES + 1, _CLASSES)),
              *_inputs("gradients", lambda: _model_data(_GD_RECORDS))), repeats=2),
    Limit(learning.shuffled_personalized_sgd, ("MAX_PATH_ENTRIES", "MAX_SGD_WORK"),
          "records per client x (d+1) x k = MAX_PATH_ENTRIES (4 clients), "
          "epochs x n x (d+1) x k = MAX_SGD_WORK (1 epoch)",
          lambda: learning.shuffled_personalized_sgd(
              *_inputs("sgd clients", lambda: _model_data(4 * _GD_RECORDS)),
              [1.0, 2.0, 4.0, 8.0], 1e-5, epochs=learning.MAX_SGD_WORK // (4 * _GD_RECORDS
                                                                        * _GRADIENT_SIZE),
              rng=0), repeats=2),
    Limit(learning.shuffled_personalized_sgd, ("MAX_SGD_STEPS", "MAX_SGD_NOISE"),
          "epochs x clients = MAX_SGD_STEPS (1 client of 1 record, d = 99, k = 10: noise = "
          "MAX_SGD_NOISE)",
          lambda: learning.shuffled_personalized_sgd(
              np.random.default_rng(3).normal(size=(1, 99)), [9], [1.0], 1e-5,
              epochs=learning.MAX_SGD_STEPS, n_classes=10, rng=0)),
    # ---------------------------------------------------------------- permutations
    Limit(permutations.hamming_moved_pmf, ("MAX_ITEMS",), "n = MAX_ITEMS",
          lambda: permutations.hamming_moved_pmf(permutations.MAX_ITEMS, 1.0)),
    *(
        Limit(permutations.mallows_log_normalizer, ("MAX_ITEMS",), f"n = MAX_ITEMS, {distance}",
              lambda distance=distance: permutations.mallows_log_normalizer(
                  permutations.MAX_ITEMS, 1.0, distance=distance))
        for distance in permutations.DISTANCES
    ),
    *(
        Limit(permutations.mallows_log_pmf, ("MAX_ITEMS",), f"n = MAX_ITEMS, {distance}",
              lambda distance=distance: permutations.mallows_log_pmf(
                  _inputs("one permutation", lambda: np.random.default_rng(7).permutation(
                      permutations.MAX_ITEMS)), 1.0, distance=distance), repeats=2)
        for distance in permutations.DISTANCES
    ),
    *(
        Limit(permutations.mallows_sample, ("MAX_ITEMS",), f"n = MAX_ITEMS, {distance}",
              lambda distance=distance: permutations.mallows_sample(
                  permutations.MAX_ITEMS, 1.0, distance=distance, rng=0))
        for distance in permutations.DISTANCES
    ),
    Limit(permutations.mallows_sample, ("MAX_ITEMS",), "n x size = MAX_ITEMS (n = 100)",
          lambda: permutations.mallows_sample(100, 1.0, size=permutations.MAX_ITEMS // 100,
                                              rng=0)),
    Limit(permutations.random_derangement, ("MAX_ITEMS",), "m = MAX_ITEMS",
          lambda: permutations.random_derangement(permutations.MAX_ITEMS, rng=0)),
    Limit(permutations.kendall_extremal_permutation, ("MAX_ITEMS",), "n = MAX_ITEMS",
          lambda: permutations.kendall_extremal_permutation(permutations.MAX_ITEMS,
                                                            permutations.MAX_ITEMS // 2)),
    # ---------------------------------------------------------------- plotting
    Limit(plotting.panel_grid, ("MAX_PANELS", "MAX_FIGURE_INCHES"),
          "MAX_PANELS panels, MAX_FIGURE_INCHES per side",
          lambda: plotting.panel_grid(
              _PANEL_SIDE, plotting.MAX_PANELS // _PANEL_SIDE,
              size=(plotting.MAX_FIGURE_INCHES / _PANEL_SIDE,) * 2)),
    Limit(plotting.plot_histograms, ("MAX_BINS",), "bins = MAX_BINS",
          lambda: plotting.plot_histograms(_inputs("hist", _hist_data), xlabel="x",
                                           bins=plotting.MAX_BINS), repeats=2),
    Limit(plotting.plot_histograms, ("BAR_BINS_MAX",), "bins = BAR_BINS_MAX (the most bars)",
          lambda: plotting.plot_histograms(_inputs("hist", _hist_data), xlabel="x",
                                           bins=plotting.BAR_BINS_MAX), repeats=2),
    Limit(plotting.plot_histograms, ("MAX_BINS",), "discrete, MAX_BINS integers",
          lambda: plotting.plot_histograms(
              {"a": np.arange(plotting.MAX_BINS)}, xlabel="x", discrete=True)),
    Limit(plotting.explore_amplification, ("EXPLORER_GRID_MAX", "AMPLIFICATION_N_MAX"),
          "EXPLORER_GRID_MAX sizes up to AMPLIFICATION_N_MAX",
          lambda: plotting.explore_amplification(4.0, 1e-6, _grid(plotting.AMPLIFICATION_N_MAX))),
    Limit(plotting.explore_population_mix,
          ("EXPLORER_GRID_MAX", "POPULATION_N_MAX", "POPULATION_LEVELS_MAX"),
          "POPULATION_LEVELS_MAX levels, EXPLORER_GRID_MAX sizes up to POPULATION_N_MAX",
          lambda: plotting.explore_population_mix(
              np.ones(plotting.POPULATION_LEVELS_MAX),
              np.linspace(0.1, 1.0, plotting.POPULATION_LEVELS_MAX), 1e-4,
              _grid(plotting.POPULATION_N_MAX))),
    Limit(plotting.explore_dsigma_attack, ("ATTACK_PEOPLE_MAX", "ATTACK_RESAMPLES_MAX"),
          "ATTACK_PEOPLE_MAX people, ATTACK_RESAMPLES_MAX resamples",
          lambda: plotting.explore_dsigma_attack(
              *_inputs("explorer people", _explorer_people),
              resamples=plotting.ATTACK_RESAMPLES_MAX), repeats=2),
    Limit(plotting.explore_profile_chain, ("CHAIN_PROFILES_MAX",), "k = CHAIN_PROFILES_MAX",
          lambda: plotting.explore_profile_chain(0.5, plotting.CHAIN_PROFILES_MAX)),
    Limit(plotting.explore_swap_rate, ("SWAP_STRATUM_MAX",), "stratum_size = SWAP_STRATUM_MAX",
          lambda: plotting.explore_swap_rate([0.01, 0.1, 0.5], [1.0, 5.0, 10.0], 0.1,
                                             plotting.SWAP_STRATUM_MAX)),
    # ---------------------------------------------------------------- privacy_levels
    *(
        Limit(draw_levels, ("MAX_USERS",), f"n = MAX_USERS, {profile}",
              lambda profile=profile: draw_levels(profile, MAX_USERS, rng=0))
        for profile in PROFILES
    ),
    Limit(preference_levels, ("MAX_USERS",), "n = MAX_USERS",
          lambda: preference_levels(MAX_USERS, rng=0)),
    # ---------------------------------------------------------------- randomizers
    Limit(randomizers.krr_channel, ("MAX_CHANNEL_K",), "k = MAX_CHANNEL_K",
          lambda: randomizers.krr_channel(randomizers.MAX_CHANNEL_K, 1.0)),
    Limit(randomizers.k_randomized_response, ("MAX_SAMPLER_K",), "k = MAX_SAMPLER_K (1e6 users)",
          lambda: randomizers.k_randomized_response(
              _inputs("krr values", lambda: np.random.default_rng(8).integers(
                  0, randomizers.MAX_SAMPLER_K, 10**6)), randomizers.MAX_SAMPLER_K, 1.0, rng=0),
          repeats=2),
    Limit(randomizers.krr_frequency_estimate, ("MAX_ESTIMATE_K",),
          "k = MAX_ESTIMATE_K (1e6 reports)",
          lambda: randomizers.krr_frequency_estimate(
              _inputs("krr reports", lambda: np.random.default_rng(9).integers(
                  0, randomizers.MAX_ESTIMATE_K, 10**6)), randomizers.MAX_ESTIMATE_K, 1.0),
          repeats=2),
    # ---------------------------------------------------------------- sample_complexity
    *(
        Limit(plugged_sample_complexity, ("MAX_K_OVER_ALPHA",),
              f"k / alpha = MAX_K_OVER_ALPHA, {task}",
              lambda task=task: plugged_sample_complexity(
                  MAX_K_OVER_ALPHA * 0.5, 0.5, 1.0, 1e-6, task=task))
        for task in TASKS
    ),
    # ---------------------------------------------------------------- swapping
    Limit(swap_output_distribution, ("MAX_EXACT_STRATUM",), "strata of MAX_EXACT_STRATUM records",
          lambda: swap_output_distribution(_swap_frame(_SWAP_STRATA), "size", "county", 0.5)),
    Limit(invariant_universe, ("MAX_EXACT_STRATUM",), "strata of MAX_EXACT_STRATUM records",
          lambda: invariant_universe(_swap_frame(_SWAP_STRATA), "size", "county")),
    Limit(pairwise_swapping_losses, ("MAX_EXACT_STRATUM", "MAX_EXACT_UNIVERSE"),
          "universe 8 x 15 x 15 = 1800 <= MAX_EXACT_UNIVERSE, a stratum of MAX_EXACT_STRATUM",
          lambda: pairwise_swapping_losses(_pairwise_frame(), "size", "county", 0.5)),
    Limit(exact_swapping_epsilon, ("MAX_EXACT_STRATUM", "MAX_EXACT_UNIVERSE"),
          "universe 8 x 15 x 15 = 1800 <= MAX_EXACT_UNIVERSE, a stratum of MAX_EXACT_STRATUM",
          lambda: exact_swapping_epsilon(_pairwise_frame(), "size", "county", 0.5)),
    # one stratum of six distinct records: 720 = MAX_STRATUM_UNIVERSE members, 720 x 6! =
    # MAX_STRATUM_TABLE permutation entries (both per-stratum limits at once)
    *(
        Limit(function, ("MAX_STRATUM_UNIVERSE", "MAX_STRATUM_TABLE"),
              "one stratum: MAX_STRATUM_UNIVERSE members, MAX_STRATUM_TABLE entries",
              lambda function=function: function(pd.DataFrame(
                  {"size": 1, "county": list("ABCDEF"), "tenure": list("abcdef")}),
                  "size", "county", 0.5))
        for function in (pairwise_swapping_losses, exact_swapping_epsilon)
    ),
    # the same two frames with a swap rate per stratum (rates of the chapter's plans)
    Limit(exact_stratified_swapping_epsilon, ("MAX_EXACT_STRATUM", "MAX_EXACT_UNIVERSE"),
          "universe 8 x 15 x 15 = 1800 <= MAX_EXACT_UNIVERSE, a stratum of MAX_EXACT_STRATUM",
          lambda: exact_stratified_swapping_epsilon(_pairwise_frame(), "size", "county",
                                                    [0.9, 0.5, 0.3])),
    Limit(exact_stratified_swapping_epsilon, ("MAX_STRATUM_UNIVERSE", "MAX_STRATUM_TABLE"),
          "one stratum: MAX_STRATUM_UNIVERSE members, MAX_STRATUM_TABLE entries",
          lambda: exact_stratified_swapping_epsilon(pd.DataFrame(
              {"size": 1, "county": list("ABCDEF"), "tenure": list("abcdef")}),
              "size", "county", [0.5])),
    # ---------------------------------------------------------------- topdown
    Limit(topdown.discrete_gaussian, ("MAX_DRAWS",), "size = MAX_DRAWS",
          lambda: topdown.discrete_gaussian(1e4, size=topdown.MAX_DRAWS, rng=0), budget=0.5,
          promise="MAX_DRAWS: about half a second"),
    Limit(topdown.project_to_margins, ("MAX_CELLS", "MAX_TABLE_TOTAL"),
          "MAX_CELLS cells, total MAX_TABLE_TOTAL",
          lambda: topdown.project_to_margins(*_inputs("margins", _margin_table)), budget=1.0,
          promise="MAX_CELLS: a 100 x 100 table takes about a second", repeats=2),
    Limit(topdown.topdown_two_way, ("MAX_CELLS", "MAX_TABLE_TOTAL", "MAX_DRAWS"),
          "MAX_CELLS cells, total MAX_TABLE_TOTAL",
          lambda: topdown.topdown_two_way(
              _inputs("topdown table", _count_table), rho=1.0, rng=0), repeats=2),
]

BENCHMARKS = [limit.benchmark() for limit in LIMITS]


# --------------------------------------------------------------------------- running alone


def _child(limit: Limit, connection: Any) -> None:
    """Time ``limit.call`` as the runner does (best of ``repeats`` wall-clock times), with the
    CPU time of that call (all threads): on a loaded machine the CPU time of a single-threaded
    call is close to its wall-clock time on an idle one."""
    import time

    try:
        best: tuple[float, float] | None = None
        for _ in range(limit.repeats):
            wall, cpu = time.perf_counter(), time.process_time()
            limit.call()
            wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
            if best is None or wall < best[0]:
                best = (wall, cpu)
        connection.send(("ok", best))
    except BaseException as error:  # reported to the parent, row by row
        connection.send(("raised", f"{type(error).__name__}: {error}"[:300]))


def _cpu_seconds(pid: int) -> float:
    """CPU time (user + system) used so far by process ``pid`` (Linux)."""
    import os

    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def main(argv: list[str]) -> int:
    """Run the rows whose name contains one of the substrings in ``argv`` (all rows without), in
    the order of the substrings, each in a child process."""
    import multiprocessing

    timeout = 90.0
    if "--timeout" in argv:
        at = argv.index("--timeout")
        timeout = float(argv[at + 1])
        argv = argv[:at] + argv[at + 2:]
    chosen = [i for pattern in (argv or [""]) for i, row in enumerate(BENCHMARKS)
              if pattern in row.name]
    context = multiprocessing.get_context("fork")
    for i in dict.fromkeys(chosen):
        limit, row = LIMITS[i], BENCHMARKS[i]
        parent, child = context.Pipe(duplex=False)
        process = context.Process(target=_child, args=(limit, child))
        process.start()
        child.close()
        if parent.poll(timeout):
            status, value = parent.recv()
        else:
            status = "timeout"
            value = (f"more than {timeout:g} s (stopped; inputs and {limit.repeats} call(s) had "
                     f"used {_cpu_seconds(process.pid):.1f} s of CPU)")
        process.kill()
        process.join()
        if status == "ok":
            wall, cpu = value
            print(f"{row.name:<78} {wall:>9.3f} s ({cpu:.3f} s CPU)  {row.verdict(wall, None)}",
                  flush=True)
        else:
            print(f"{row.name:<78} {status.upper():>11}  {value}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
