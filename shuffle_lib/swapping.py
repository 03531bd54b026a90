r"""Data swapping as differential privacy (Bailie, Gong & Meng, 2023).

A swapping scheme has three kinds of variables: the *swap key* :math:`V_{\text{Match}}` (records
with equal key values form a stratum), the *swap variable* :math:`V_{\text{Swap}}` (exchanged
between records of a stratum, e.g. the county) and the held variables (everything else, e.g.
tenure, which stays with its record). The Permutation Algorithm of Bailie et al. selects each record
of a stratum with probability :math:`p` (redrawing the selection if exactly one record was picked)
and moves the swap variable of the selected records along a uniformly random derangement. It
preserves two tables, its invariants :math:`\mathbf c_{\text{Swap}}`: the counts of the held
variables (including the key) and the :math:`V_{\text{Match}}\times V_{\text{Swap}}` counts.
Bailie et al.'s theorem: conditional on those invariants, with the unordered-Hamming distance
between datasets as input divergence, the algorithm is pure :math:`\varepsilon`-DP with

.. math:: \varepsilon = \max\{\ln(b+1)-\ln o,\ \ln o\},\qquad o = p/(1-p),

where :math:`b` is the size of the largest stratum holding two different records
(:math:`\varepsilon=0` if there is none). For small files the exact budget is computed by
enumeration (:func:`exact_swapping_epsilon`); :func:`swapping_epsilon_lower_bound` and
:func:`swapping_bound_slack` say how close the theorem is to the worst case for a given :math:`b`.

Records are pandas DataFrames, one row per privacy unit (a household in the slides' examples).
"""

from __future__ import annotations

import functools
import itertools
import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike
from scipy.special import expit, xlog1py, xlogy

from shuffle_lib._jit import cached_njit
from shuffle_lib._validation import (
    RngLike,
    as_rng,
    check_array,
    check_instance,
    check_integer,
    check_probability,
    check_real,
)
from shuffle_lib.divergences import unordered_dataset
from shuffle_lib.permutations import _fill_uniform_derangement, log_derangements

Columns = str | Sequence[str]
UnorderedDataset = tuple[tuple, ...]

MAX_EXACT_STRATUM = 8  # exact enumeration visits m! permutations per stratum
MAX_EXACT_UNIVERSE = 2_000  # pairwise losses visit every pair of the universe
#: pairwise losses compare every pair of one stratum's members over all its outputs (cubic in its
#: universe): at most 720 = 6! members (six distinct records) in one stratum's universe
MAX_STRATUM_UNIVERSE = 720
#: ... and tabulate members x m! permutations of a stratum of m records: at most 720 x 6! entries
MAX_STRATUM_TABLE = 720 * 720


def _column_list(spec: Columns, name: str, records: pd.DataFrame) -> list[str]:
    """``spec`` (a column name or a list or tuple of names) as a list of columns of ``records``."""
    names = [spec] if isinstance(spec, str) else spec
    if not (isinstance(names, list | tuple) and all(isinstance(c, str) for c in names)):
        raise TypeError(f"{name} must be a column name or a list of column names, got {spec!r}")
    columns = list(names)
    if not columns:
        raise ValueError(f"{name} must name at least one column")
    unknown = [c for c in columns if c not in records.columns]
    if unknown:
        raise ValueError(f"{name}: unknown column(s) {unknown}; the records have "
                         f"{list(records.columns)}")
    if len(set(columns)) != len(columns):
        raise ValueError(f"{name} repeats a column: {columns}")
    return columns


def _check_records(records: pd.DataFrame, match_key: Columns, swap_var: Columns
                   ) -> tuple[list[str], list[str]]:
    """Validate the frame and the two column roles; return them as lists."""
    check_instance(records, "records", pd.DataFrame)
    if records.empty:
        raise ValueError("records is empty: there is nothing to swap")
    match = _column_list(match_key, "match_key", records)
    swap = _column_list(swap_var, "swap_var", records)
    shared = sorted(set(match) & set(swap))
    if shared:
        raise ValueError(f"swap_var and match_key share column(s) {shared}: records of a stratum "
                         "agree on the key, so swapping a key column would change nothing")
    _check_defined(records, match + swap)
    return match, swap


def _check_defined(records: pd.DataFrame, columns: list[str]) -> None:
    """``ValueError`` naming the first of ``columns`` that holds a missing value (NaN, None,
    NaT): a record without a key has no stratum, and one without a swap value has nothing to
    give. :func:`swap` and its helpers :func:`stratum_codes` and :func:`largest_stratum` refuse
    the same records."""
    for column in columns:
        if records[column].isna().any():
            raise ValueError(f"column {column!r} holds missing values (NaN): strata and swapped "
                             "values must be defined for every record; recode them first")


def _check_swap_rate(p: float) -> float:
    if np.ndim(p) != 0:
        raise ValueError(f"p must be a single swap rate, got {p!r}")
    return float(check_probability(p, "p"))


def stratum_codes(records: pd.DataFrame, match_key: Columns) -> np.ndarray:
    """Stratum number (0, 1, ...) of every record: records with equal ``match_key`` values share
    a stratum (Bailie, Gong & Meng 2023, the Permutation Algorithm's strata).

    >>> frame = pd.DataFrame({"size": [2, 3, 2], "county": ["A", "B", "C"]})
    >>> stratum_codes(frame, "size").tolist()
    [0, 1, 0]

    A missing key (NaN) is refused, as by :func:`swap`.
    """
    check_instance(records, "records", pd.DataFrame)
    if records.empty:
        raise ValueError("records must be a non-empty pandas DataFrame")
    match = _column_list(match_key, "match_key", records)
    _check_defined(records, match)
    codes = np.zeros(len(records), np.int64)
    for column in match:  # mixed-radix code of the key, renumbered densely after each column
        values, uniques = pd.factorize(records[column], use_na_sentinel=False)
        codes, _ = pd.factorize(codes * len(uniques) + values)
    return codes.astype(np.int64, copy=False)


@cached_njit
def _swap_sources(codes: np.ndarray, n_strata: int, p: float, gen: np.random.Generator
                  ) -> np.ndarray:  # pragma: no cover - compiled
    """For every record, the record whose swap value it receives (itself if not selected)."""
    n = codes.size
    starts = np.zeros(n_strata + 1, np.int64)
    for c in codes:
        starts[c + 1] += 1
    for s in range(n_strata):
        starts[s + 1] += starts[s]
    order = np.empty(n, np.int64)  # counting sort of the records by stratum
    filled = starts[:-1].copy()
    for i in range(n):
        order[filled[codes[i]]] = i
        filled[codes[i]] += 1
    source = np.arange(n)
    chosen = np.empty(n, np.int64)
    perm = np.empty(n, np.int64)
    for s in range(n_strata):
        lo, hi = starts[s], starts[s + 1]
        if hi - lo < 2 or p == 0.0:
            continue
        k = 1
        while k == 1:  # line 11 of the algorithm: exactly one selected, select again
            k = 0
            for t in range(lo, hi):
                if gen.random() < p:
                    chosen[k] = order[t]
                    k += 1
        if k == 0:
            continue
        _fill_uniform_derangement(perm[:k], gen)
        for i in range(k):
            source[chosen[i]] = chosen[perm[i]]
    return source


def swap(records: pd.DataFrame, match_key: Columns, swap_var: Columns, p: float,
         rng: RngLike = None) -> pd.DataFrame:
    r"""The Permutation Algorithm (Bailie, Gong & Meng 2023, algorithm slide): within every stratum
    of at least two records (records agreeing on ``match_key``), select each record independently
    with probability ``p``, select again while exactly one record is selected, and give the selected
    records each other's ``swap_var`` values along a uniformly random derangement :math:`\sigma`:
    record :math:`i` receives the value of record :math:`\sigma(i)`.

    Returns a new DataFrame (same index, same column order and dtypes); ``records`` is not
    modified. Every column other than ``swap_var`` is unchanged, row by row, so no record is lost
    or duplicated. The budget is :func:`swapping_epsilon` with :func:`largest_stratum`. One pass,
    compiled: a counting sort by stratum, then per stratum Bernoulli selections and a
    Fisher-Yates derangement by rejection (about e tries), :math:`O(n)` expected time.

    >>> frame = pd.DataFrame({"size": [2, 2, 2], "county": ["A", "B", "C"]})
    >>> out = swap(frame, "size", "county", p=1.0, rng=0)
    >>> sorted(out.county) == ["A", "B", "C"] and bool((out.county != frame.county).all())
    True
    """
    rate = _check_swap_rate(p)
    gen = as_rng(rng)  # the scalars first: a bad one is refused before any pass over the records
    _, swap_columns = _check_records(records, match_key, swap_var)
    codes = stratum_codes(records, match_key)
    source = _swap_sources(codes, int(codes.max()) + 1, rate, gen)
    out = records.copy()
    for column in swap_columns:
        out[column] = records[column].array.take(source)
    return out


def largest_stratum(records: pd.DataFrame, match_key: Columns) -> int:
    r""":math:`b=\max\{0,\ n_j : \text{stratum } j \text{ holds at least two different records}\}`
    (Bailie, Gong & Meng 2023, theorem slide), where records are compared on all columns of
    ``records`` and :math:`n_j` counts the records of stratum :math:`j`. A stratum of identical
    records cannot be changed by swapping, so it does not enter the budget. A missing key (NaN)
    is refused, as by :func:`swap`.

    >>> frame = pd.DataFrame({"size": [1, 1, 1, 2, 2], "county": ["A", "A", "A", "A", "B"]})
    >>> largest_stratum(frame, "size")
    2
    """
    check_instance(records, "records", pd.DataFrame)
    if records.empty:
        raise ValueError("records must be a non-empty pandas DataFrame")
    match = _column_list(match_key, "match_key", records)
    _check_defined(records, match)
    grouped = records.groupby(match, dropna=False)
    distinct = records.drop_duplicates().groupby(match, dropna=False).size()
    sizes = grouped.size()
    varied = sizes[distinct.reindex(sizes.index) >= 2]
    return int(varied.max()) if varied.size else 0


def swapping_epsilon(b: ArrayLike, p: ArrayLike) -> np.ndarray | float:
    r"""The Permutation Algorithm's budget (Bailie, Gong & Meng 2023, theorem slide), with
    :math:`o=p/(1-p)`:

    .. math:: \varepsilon = \begin{cases} 0 & b = 0,\\
              \ln(b+1)-\ln o & 0 < p \le \sqrt{b+1}/(\sqrt{b+1}+1),\\
              \ln o & \text{above},\end{cases}

    that is :math:`\max\{\ln(b+1)-\ln o,\ \ln o\}` for every :math:`p\in(0,1)` (for
    :math:`p\le 1/2` the first term is the larger). At :math:`p\in\{0,1\}` with :math:`b>0` the
    formula gives :math:`+\infty`: a correct upper bound, but possibly a loose one. Some
    universes then have no finite budget (at :math:`p=1` a stratum of two records that differ in
    both the held and the swap value is always swapped, so each of its two pairings is sent to the
    other), while others have one: two records of a stratum that differ only in the held value
    (or only in the swap value) make a one-dataset universe, budget 0, and four records with
    distinct held values and swap values A, A, B, B have the exact budget :math:`\ln 2` at
    :math:`p=1` (:func:`exact_swapping_epsilon`). Computed as
    :math:`\ln o=\ln p-\operatorname{log1p}(-p)`, so :math:`b` up to :math:`10^8` and :math:`p`
    near 0 or 1 stay accurate. Broadcasts over ``b`` and ``p``.

    >>> round(swapping_epsilon(264_331, 0.01), 2), round(swapping_epsilon(13_680_081, 0.05), 2)
    (17.08, 19.38)
    """
    sizes = np.asarray(b)
    if sizes.size == 0 or not np.issubdtype(sizes.dtype, np.integer) or (sizes < 0).any():
        raise ValueError(f"b must hold integers >= 0 (largest stratum sizes), got {b!r}")
    rate = check_probability(p, "p")
    with np.errstate(divide="ignore"):
        log_odds = np.log(rate) - np.log1p(-rate)
    log_size = np.log1p(sizes.astype(float))
    eps = np.where(sizes == 0, 0.0, np.maximum(log_size - log_odds, log_odds))
    return float(eps) if eps.ndim == 0 else eps


def minimum_swapping_epsilon(b: int) -> tuple[float, float]:
    r"""The smallest budget a stratum size :math:`b\ge 1` allows and the swap rate attaining it
    (Bailie, Gong & Meng 2023, conversion slide): the two branches of :func:`swapping_epsilon` meet
    where :math:`o=\sqrt{b+1}`, so

    .. math:: \varepsilon_b = \tfrac12\ln(b+1),\qquad
              p^\ast = \frac{\sqrt{b+1}}{\sqrt{b+1}+1}.

    >>> eps, rate = minimum_swapping_epsilon(3)
    >>> round(eps, 4), round(rate, 4)
    (0.6931, 0.6667)
    """
    size = check_integer(b, "b", 1)
    eps = 0.5 * math.log1p(size)
    return eps, float(expit(eps))


def swap_rates_for_epsilon(b: int, eps: float) -> tuple[float, float]:
    r"""The two swap rates whose budget (:func:`swapping_epsilon`) equals ``eps`` for stratum
    size :math:`b\ge1` (Bailie, Gong & Meng 2023, conversion slide): solving each branch,

    .. math:: p_{\text{low}} = \operatorname{expit}(\ln(b+1)-\varepsilon),\qquad
              p_{\text{high}} = \operatorname{expit}(\varepsilon),

    defined for :math:`\varepsilon\ge\varepsilon_b=\tfrac12\ln(b+1)`; they coincide at
    :math:`\varepsilon_b`. A float near 1 stores :math:`1-p_{\text{high}}\approx e^{-\varepsilon}`
    with absolute error :math:`10^{-16}`, so feeding :math:`p_{\text{high}}` back loses digits
    above about :math:`\varepsilon=20` (relative error :math:`10^{-16}e^{\varepsilon}`), and
    beyond about 37 it rounds to 1. :math:`p_{\text{low}}\approx(b+1)e^{-\varepsilon}` stays a
    normal float, and keeps its budget, for :math:`\varepsilon\le\ln(b+1)+708`; beyond, it would
    underflow to 0 (a rate whose budget is infinite), so ``eps`` there raises ``ValueError``.

    >>> low, high = swap_rates_for_epsilon(264_331, 12.48)
    >>> round(low, 3), round(high, 6)
    (0.501, 0.999996)
    """
    size = check_integer(b, "b", 1)
    smallest, _ = minimum_swapping_epsilon(size)
    eps = check_real(eps, "eps")
    if eps < smallest - 1e-12:
        raise ValueError(f"eps = {eps!r} is not attainable with b = {size}: every swap rate gives "
                         f"at least ln(b+1)/2 = {smallest:.6g}")
    if math.log1p(size) - eps < -708.0:
        raise ValueError(f"eps = {eps!r} is above ln(b+1) + 708 = {math.log1p(size) + 708:.6g}: "
                         "the lower swap rate e^-eps (b+1) would underflow to 0, whose budget "
                         "is infinite")
    eps = max(eps, smallest)
    return float(expit(math.log1p(size) - eps)), float(expit(eps))


def swapping_invariants(records: pd.DataFrame, match_key: Columns, swap_var: Columns,
                        hold: Columns | None = None) -> dict[str, pd.Series]:
    r"""The two tables the Permutation Algorithm never changes (Bailie, Gong & Meng 2023, invariants
    :math:`\mathbf c_{\text{Swap}}`), as counts indexed by category (sorted):

    - ``"hold"``: :math:`\mathbf V_{\text{Hold}}`, the joint counts of ``match_key`` and the held
      variables ``hold`` (default: every column that is neither key nor swap variable);
    - ``"match_swap"``: :math:`\mathbf V_{\text{Match}}\times\mathbf V_{\text{Swap}}`.

    >>> frame = pd.DataFrame({"size": [2, 2], "county": ["A", "B"], "tenure": ["own", "rent"]})
    >>> swapping_invariants(frame, "size", "county")["hold"].tolist()
    [1, 1]
    """
    match, swap_columns = _check_records(records, match_key, swap_var)
    if hold is None:
        held = [c for c in records.columns if c not in match and c not in swap_columns]
    else:
        held = _column_list(hold, "hold", records)
        clash = sorted(set(held) & set(swap_columns))
        if clash:
            raise ValueError(f"hold and swap_var share column(s) {clash}")
        held = [c for c in held if c not in match]

    def counts(columns: list[str]) -> pd.Series:
        return records.value_counts(columns, sort=False, dropna=False).sort_index()

    return {"hold": counts(match + held), "match_swap": counts(match + swap_columns)}


def _strata_rows(records: pd.DataFrame, match_key: Columns, swap_var: Columns
                 ) -> tuple[list[list[tuple]], list[int]]:
    """Rows (tuples over all columns) grouped by stratum, and the positions of the swap
    columns inside a row tuple."""
    _, swap_columns = _check_records(records, match_key, swap_var)
    codes = stratum_codes(records, match_key)
    rows = list(records.itertuples(index=False, name=None))
    strata: list[list[tuple]] = [[] for _ in range(int(codes.max()) + 1)]
    for code, row in zip(codes.tolist(), rows, strict=True):
        strata[code].append(row)
    too_big = max(len(s) for s in strata)
    if too_big > MAX_EXACT_STRATUM:
        raise ValueError(f"a stratum holds {too_big} records; exact enumeration is limited to "
                         f"{MAX_EXACT_STRATUM} per stratum (it visits m! permutations)")
    return strata, [records.columns.get_loc(c) for c in swap_columns]


def _with_swap_values(rows: list[tuple], targets: Sequence[int], positions: list[int]
                      ) -> list[tuple]:
    """Row i takes the swap values of row targets[i]."""
    out = []
    for row, target in zip(rows, targets, strict=True):
        values = list(row)
        for pos in positions:
            values[pos] = rows[target][pos]
        out.append(tuple(values))
    return out


def _stratum_output_law(rows: list[tuple], positions: list[int], p: float
                        ) -> dict[UnorderedDataset, float]:
    r"""Exact law of one swapped stratum: every permutation :math:`\pi` of the stratum is the
    derangement of its moved set :math:`S`, drawn with probability
    :math:`p^{|S|}(1-p)^{m-|S|}/(1-mp(1-p)^{m-1})\cdot 1/!|S|`."""
    m = len(rows)
    if m < 2:
        return {unordered_dataset(rows): 1.0}
    normalizer = 1.0 - m * p * (1.0 - p) ** (m - 1)
    derangement_counts = np.rint(np.exp(log_derangements(np.arange(m + 1))))  # !1 = 0 unused
    law: Counter = Counter()
    for perm in itertools.permutations(range(m)):
        moved = sum(1 for i, j in enumerate(perm) if i != j)
        weight = p**moved * (1.0 - p) ** (m - moved) / normalizer / float(derangement_counts[moved])
        if weight > 0:
            law[unordered_dataset(_with_swap_values(rows, perm, positions))] += weight
    return dict(law)


def _combine(laws: list[dict[UnorderedDataset, float]]) -> dict[UnorderedDataset, float]:
    """Law of the union of independent strata (their outputs are disjoint sets of rows)."""
    total: dict[UnorderedDataset, float] = {(): 1.0}
    for law in laws:
        merged: Counter = Counter()
        for rows_a, prob_a in total.items():
            for rows_b, prob_b in law.items():
                merged[tuple(sorted(rows_a + rows_b))] += prob_a * prob_b
        total = dict(merged)
    return total


def swap_output_distribution(records: pd.DataFrame, match_key: Columns, swap_var: Columns,
                             p: float) -> dict[UnorderedDataset, float]:
    r"""Exact distribution of the swapped dataset :math:`T(\mathbf X)` for tiny inputs, by
    enumerating every selection and every derangement (Bailie, Gong & Meng 2023, the Permutation
    Algorithm).

    The output is an unordered dataset, i.e. the contingency table :math:`[n^{\mathbf Z}_{jkl}]`
    the algorithm returns; it is keyed here by the sorted tuple of its rows (each row a tuple over
    all columns, see :func:`shuffle_lib.divergences.unordered_dataset`). Strata are independent,
    so the law is the product of the strata's laws. At most ``MAX_EXACT_STRATUM`` records per
    stratum.

    >>> frame = pd.DataFrame({"size": [2, 2], "county": ["A", "B"], "tenure": ["own", "rent"]})
    >>> law = swap_output_distribution(frame, "size", "county", p=0.5)
    >>> sorted(round(v, 3) for v in law.values())
    [0.5, 0.5]
    """
    rate = _check_swap_rate(p)
    strata, positions = _strata_rows(records, match_key, swap_var)
    return _combine([_stratum_output_law(rows, positions, rate) for rows in strata])


def invariant_universe(records: pd.DataFrame, match_key: Columns, swap_var: Columns
                       ) -> list[UnorderedDataset]:
    r"""Every unordered dataset with the same invariants as ``records`` (Bailie, Gong & Meng 2023,
    :math:`\mathcal D_{\mathbf c_{\text{Swap}}}(\mathbf X)`): within each stratum the held values
    and the swap values are fixed as multisets, so the universe is every re-pairing of the two,
    stratum by stratum (exhaustive; tiny inputs only).

    >>> frame = pd.DataFrame({"size": [2, 2], "county": ["A", "B"], "tenure": ["own", "rent"]})
    >>> len(invariant_universe(frame, "size", "county"))
    2
    """
    strata, positions = _strata_rows(records, match_key, swap_var)
    per_stratum = []
    for rows in strata:
        pairings = {unordered_dataset(_with_swap_values(rows, perm, positions))
                    for perm in itertools.permutations(range(len(rows)))}
        per_stratum.append({pairing: 1.0 for pairing in pairings})
    return sorted(_combine(per_stratum))


@dataclass(frozen=True)
class _StratumTables:
    r"""One stratum's invariant universe and the exact swapping law on it, in array form.

    ``members`` is the universe of the stratum (sorted unordered datasets); ``target[u, t]`` is
    the index of the output member :math:`u` becomes under the ``t``-th permutation of the
    stratum's records, which moves ``moved[t]`` records; ``distance[u, v]`` is
    :math:`d_{\text{HamS}}` between two members."""

    members: tuple[UnorderedDataset, ...]
    moved: np.ndarray
    target: np.ndarray
    distance: np.ndarray

    def log_law(self, p: float) -> np.ndarray:
        r"""``[u, z]`` = :math:`\ln\Pr(T(u)=z)`: every permutation moving :math:`k` records has
        probability :math:`p^k(1-p)^{m-k}/(1-mp(1-p)^{m-1})\cdot 1/!k` (as in
        :func:`swap_output_distribution`). Summed in log space, one :math:`k` at a time, so a
        rate like :math:`p=10^{-300}` (where :math:`p^k` underflows) gives finite logarithms."""
        size, m = len(self.members), len(self.members[0])
        if m < 2:
            return np.zeros((1, 1))
        k = np.arange(m + 1)
        log_counts = log_derangements(k)
        log_counts[1] = 0.0  # no permutation moves exactly one record
        log_weight = (xlogy(k, p) + xlog1py(m - k, -p) - math.log1p(-m * p * (1.0 - p) ** (m - 1))
                      - log_counts)
        flat = np.arange(size)[:, None] * size + self.target
        log_law = np.full(size * size, -np.inf)
        for moved in np.unique(self.moved):
            number = np.bincount(flat[:, self.moved == moved].ravel(), minlength=size * size)
            with np.errstate(divide="ignore"):
                log_law = np.logaddexp(log_law, np.log(number) + log_weight[moved])
        return log_law.reshape(size, size)


@functools.lru_cache(maxsize=128)
def _stratum_members(rows: tuple[tuple, ...], positions: tuple[int, ...]
                     ) -> tuple[UnorderedDataset, ...]:
    """Every re-pairing of a stratum's held and swap values (sorted unordered datasets)."""
    return tuple(sorted({unordered_dataset(_with_swap_values(list(rows), perm, list(positions)))
                         for perm in itertools.permutations(range(len(rows)))}))


@functools.lru_cache(maxsize=128)
def _stratum_tables(rows: tuple[tuple, ...], positions: tuple[int, ...]) -> _StratumTables:
    """Build :class:`_StratumTables` with integer codes: a record is (held part, swap part), a
    member of the universe the sorted vector of its records' codes."""
    members = _stratum_members(rows, positions)
    m = len(rows)
    perms = np.array(list(itertools.permutations(range(m))), dtype=np.int64).reshape(-1, m)
    moved = (perms != np.arange(m)).sum(axis=1)
    held_code: dict[tuple, int] = {}
    swap_code: dict[tuple, int] = {}
    for row in rows:
        held_code.setdefault(tuple(v for c, v in enumerate(row) if c not in positions),
                             len(held_code))
        swap_code.setdefault(tuple(row[c] for c in positions), len(swap_code))
    n_swap = len(swap_code)
    base = len(held_code) * n_swap

    def codes(member: UnorderedDataset) -> np.ndarray:
        return np.sort([held_code[tuple(v for c, v in enumerate(row) if c not in positions)]
                        * n_swap + swap_code[tuple(row[c] for c in positions)] for row in member])

    member_codes = np.array([codes(member) for member in members], dtype=np.int64).reshape(-1, m)
    powers = base ** np.arange(m, dtype=np.int64)  # base <= m^2 <= 64, so base^m < 2^63
    keys = member_codes @ powers
    order = np.argsort(keys)
    target = np.empty((len(members), perms.shape[0]), dtype=np.int64)
    for u, code in enumerate(member_codes):
        held, swapped = code // n_swap, code % n_swap
        outputs = np.sort(held * n_swap + swapped[perms], axis=1) @ powers
        target[u] = order[np.searchsorted(keys, outputs, sorter=order)]
    counts = np.stack([np.bincount(code, minlength=base) for code in member_codes])
    shared = np.minimum(counts[:, None, :], counts[None, :, :]).sum(axis=2)
    for array in (moved, target, shared):
        array.flags.writeable = False
    distance = (m - shared).astype(float)
    distance.flags.writeable = False
    return _StratumTables(members, moved, target, distance)


@cached_njit
def _pair_extremes_kernel(log_law: np.ndarray, largest: np.ndarray, smallest: np.ndarray
                          ) -> None:  # pragma: no cover - compiled
    """Fill ``largest``/``smallest`` in one pass per unordered pair: the gap of :math:`(v, u)` is
    minus that of :math:`(u, v)` (0 stays 0), so its maximum is minus the other's minimum."""
    size, outputs = log_law.shape
    for u in range(size):
        largest[u, u] = 0.0
        smallest[u, u] = 0.0
        for v in range(u + 1, size):
            high, low = -np.inf, np.inf
            for z in range(outputs):
                a, b = log_law[u, z], log_law[v, z]
                gap = 0.0 if a == b else a - b
                high = max(high, gap)
                low = min(low, gap)
            largest[u, v], smallest[u, v] = high, low
            largest[v, u], smallest[v, u] = -low + 0.0, -high + 0.0


def _pair_extremes(log_law: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    r"""For every pair of members :math:`(u, v)`: the largest and smallest
    :math:`\ln\Pr(T(u)=z)-\ln\Pr(T(v)=z)` over outputs :math:`z` (0 where both are impossible).
    :math:`O(\text{size}^3)`, compiled: about 0.2 s at ``MAX_STRATUM_UNIVERSE`` members."""
    size = log_law.shape[0]
    largest, smallest = np.empty((size, size)), np.empty((size, size))
    _pair_extremes_kernel(np.ascontiguousarray(log_law, dtype=np.float64), largest, smallest)
    return largest, smallest


def _exact_stratum_tables(records: pd.DataFrame, match_key: Columns, swap_var: Columns, what: str
                          ) -> tuple[list[_StratumTables], list[int]]:
    """The per-stratum tables of an exact computation (``what`` names it in the errors) and the
    sizes of the strata's invariant universes, after checking every size limit before any table
    is built: the universe (MAX_EXACT_UNIVERSE, the pairs grow as its square), each stratum's
    universe (MAX_STRATUM_UNIVERSE) and each stratum's table (MAX_STRATUM_TABLE)."""
    strata, positions = _strata_rows(records, match_key, swap_var)
    keys = [(tuple(rows), tuple(positions)) for rows in strata]
    sizes = [len(_stratum_members(*key)) for key in keys]
    total = math.prod(sizes)
    if total > MAX_EXACT_UNIVERSE:
        raise ValueError(f"the invariant universe holds {total} datasets; {what} are limited to "
                         f"{MAX_EXACT_UNIVERSE} (the pairs grow as its square)")
    if max(sizes) > MAX_STRATUM_UNIVERSE:
        raise ValueError(f"a stratum's invariant universe holds {max(sizes)} datasets; {what} "
                         f"are limited to {MAX_STRATUM_UNIVERSE} per stratum (the work grows as "
                         "its cube)")
    for rows, size in zip(strata, sizes, strict=True):
        if size * math.factorial(len(rows)) > MAX_STRATUM_TABLE:
            raise ValueError(f"a stratum of {len(rows)} records has {size} datasets in its "
                             f"universe: its table of {size} x {len(rows)}! permutations is "
                             f"above the limit of {MAX_STRATUM_TABLE} entries per stratum")
    return [_stratum_tables(*key) for key in keys], sizes


def _universe_pair_losses(tables: list[_StratumTables],
                          extremes: list[tuple[np.ndarray, np.ndarray]],
                          left: np.ndarray, right: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Privacy loss and distance of pairs of datasets of the universe, each dataset given as one
    member per stratum (``left[s]``, ``right[s]``: the members of stratum ``s``): the strata swap
    independently, so the log-ratio's largest and smallest values, and the distance, add up over
    the strata; ``extremes`` holds each stratum's :func:`_pair_extremes`."""
    up, down, distance = np.zeros(left.shape[1]), np.zeros(left.shape[1]), np.zeros(left.shape[1])
    for s, (table, (largest, smallest)) in enumerate(zip(tables, extremes, strict=True)):
        up += largest[left[s], right[s]]
        down -= smallest[left[s], right[s]]
        distance += table.distance[left[s], right[s]]
    return np.maximum(up, down), distance


def pairwise_swapping_losses(records: pd.DataFrame, match_key: Columns, swap_var: Columns,
                             p: float) -> pd.DataFrame:
    r"""For every pair :math:`\mathbf X\ne\mathbf X'` of the invariant universe of ``records``:
    their distance :math:`d^u_{\text{HamS}}(\mathbf X,\mathbf X')` and the exact privacy loss

    .. math:: L = \max_{\mathbf Z}\left|\ln\frac{\Pr(T(\mathbf X)=\mathbf Z)}
              {\Pr(T(\mathbf X')=\mathbf Z)}\right|,

    (``inf`` if one output is possible from one dataset only). The theorem of Bailie, Gong & Meng
    (2023, theorem slide) states :math:`L\le d^u_{\text{HamS}}\,\varepsilon`;
    :func:`exact_swapping_epsilon` is the largest :math:`L/d`. Columns ``x``, ``x_prime``
    (indices into :func:`invariant_universe`, pairs in the order of
    ``itertools.combinations``), ``distance``, ``loss``.

    Exact and vectorized: strata are independent and hold disjoint records, so the law of
    :math:`T(\mathbf X)` is the product of the strata's laws and, writing
    :math:`g_s(z_s)` for stratum :math:`s`'s log-ratio,
    :math:`L=\max\{\sum_s\max_{z_s}g_s,\ -\sum_s\min_{z_s}g_s\}` and
    :math:`d=\sum_s d_s`. Each stratum's law is a matrix over its universe (every permutation of
    the stratum enumerated once, for all members), so only the strata are enumerated, not the
    whole universe. At most ``MAX_EXACT_UNIVERSE`` (2,000) datasets in the universe and at most
    ``MAX_STRATUM_UNIVERSE`` (720, the universe of six distinct records) in the universe of any one
    stratum, and for a stratum of :math:`m` records with :math:`u` members at most
    ``MAX_STRATUM_TABLE`` (:math:`720\cdot 6!`) entries :math:`u\cdot m!` in its table of
    permutations: the work on a stratum grows as :math:`u^3` (every pair of members compared over
    every output) plus :math:`u\cdot m!`, so these limits are checked before any table is built
    (a stratum of seven or eight records is accepted with at most 102 or 12 members).

    At :math:`p=1/2` in a stratum of three (one owner, two renters, three counties), a
    permutation moving :math:`k` records has weight :math:`1/!k`: the owner stays put with
    weight :math:`1+1` (identity, or the renters trade) and reaches a given other county with
    weight :math:`1+1/2` (one transposition, one 3-cycle), so every loss is :math:`\ln(4/3)`:

    >>> frame = pd.DataFrame({"size": [2, 2, 2], "county": ["A", "B", "C"],
    ...                       "tenure": ["own", "rent", "rent"]})
    >>> losses = pairwise_swapping_losses(frame, "size", "county", 0.5)
    >>> losses["distance"].tolist(), bool(np.allclose(losses["loss"], math.log(4 / 3)))
    ([2.0, 2.0, 2.0], True)
    """
    rate = _check_swap_rate(p)
    tables, sizes = _exact_stratum_tables(records, match_key, swap_var, "exact pairwise losses")
    total = math.prod(sizes)
    # product order of the universe -> sorted order of invariant_universe
    index = np.indices(sizes).reshape(len(sizes), -1)
    datasets = [tuple(sorted(itertools.chain.from_iterable(
        t.members[i] for t, i in zip(tables, combo, strict=True)))) for combo in index.T.tolist()]
    order = sorted(range(total), key=datasets.__getitem__)
    first, second = np.triu_indices(total, 1)
    a, b = np.asarray(order)[first], np.asarray(order)[second]
    loss, distance = _universe_pair_losses(
        tables, [_pair_extremes(table.log_law(rate)) for table in tables], index[:, a], index[:, b])
    return pd.DataFrame({"x": first.astype(np.int64), "x_prime": second.astype(np.int64),
                         "distance": distance, "loss": loss})


def exact_swapping_epsilon(records: pd.DataFrame, match_key: Columns, swap_var: Columns,
                           p: float) -> float:
    r"""The smallest :math:`\varepsilon` with
    :math:`\Pr(T(\mathbf X)=\mathbf Z)\le e^{\varepsilon d^u_{\text{HamS}}(\mathbf X,\mathbf X')}
    \Pr(T(\mathbf X')=\mathbf Z)` on the invariant universe of ``records``, by exhaustive
    enumeration (:func:`pairwise_swapping_losses`); 0 when the universe has one dataset, and
    ``inf`` when no finite budget exists (at :math:`p=0`, where :math:`T(\mathbf X)=\mathbf X`,
    as soon as the universe has two datasets). The theorem of Bailie et al. says it never exceeds
    :func:`swapping_epsilon` of :func:`largest_stratum`. Same limits as
    :func:`pairwise_swapping_losses`: ``MAX_EXACT_UNIVERSE`` datasets in the universe,
    ``MAX_STRATUM_UNIVERSE`` in one stratum's, ``MAX_STRATUM_TABLE`` entries in one stratum's
    table of permutations.

    >>> frame = pd.DataFrame({"size": [2, 2], "county": ["A", "B"], "tenure": ["own", "rent"]})
    >>> round(exact_swapping_epsilon(frame, "size", "county", 0.5), 4)
    0.0
    """
    losses = pairwise_swapping_losses(records, match_key, swap_var, p)
    if losses.empty:
        return 0.0
    return float((losses["loss"] / losses["distance"]).max())


def _inverse_derangements(k: int) -> float:
    """:math:`1/!k`, which underflows to exactly 0.0 from :math:`k=178` on (so from 200 on it is
    not computed, and ``k`` may be any integer, e.g. :math:`10^{30}`)."""
    return math.exp(-float(log_derangements(k))) if k < 200 else 0.0


def _log_derangement_step(k: int, step: int) -> float:
    r""":math:`\ln(!(k+\ell)/!k)` for :math:`\ell=` ``step`` in {1, 2}, without cancellation, from
    the recurrence :math:`!(i+1)=(i+1)\,!i+(-1)^{i+1}`:

    .. math:: \frac{!(k+1)}{!k}=(k+1)\Bigl(1+\frac{(-1)^{k+1}}{(k+1)\,!k}\Bigr),\qquad
              \frac{!(k+2)}{!k}=(k+1)(k+2)\Bigl(1-\frac{(-1)^{k}}{(k+2)\,!k}\Bigr)."""
    inverse = _inverse_derangements(k)
    sign = 1.0 if k % 2 == 0 else -1.0
    if step == 1:
        return math.log(k + 1) + math.log1p(-sign * inverse / (k + 1))
    return math.log(k + 1) + math.log(k + 2) + math.log1p(-sign * inverse / (k + 2))


def swapping_epsilon_lower_bound(b: int, p: ArrayLike) -> np.ndarray | float:
    r"""The exact worst privacy loss per unit of :math:`d^h_{\text{HamS}}` between two datasets
    at distance 2 whose stratum of ``b`` records has distinct held values and distinct swap values,
    for the Permutation Algorithm of Bailie, Gong & Meng (2023, algorithm slide), conditioning on
    its invariants (our analysis, not in the talk). Any universe holding such a stratum has an
    exact budget at least this large, and the talk's theorem (:func:`swapping_epsilon`, theorem
    slide) is an upper bound on it.

    In such a stratum every output is :math:`\pi(\mathbf X)` for exactly one permutation
    :math:`\pi`, of probability proportional to :math:`o^k/!k` (:math:`k` records moved,
    :math:`o=p/(1-p)`). Two datasets at distance 2 differ by a transposition :math:`\tau`,
    :math:`\mathbf X'=\tau(\mathbf X)`; as in :func:`swap` (record :math:`i` receives the swap value
    of record :math:`\sigma(i)`), :math:`\sigma(\tau(\mathbf X))=(\tau\circ\sigma)(\mathbf X)`, so
    the permutation :math:`\sigma` applied to :math:`\mathbf X'` gives the output of
    :math:`\tau\circ\sigma` applied to :math:`\mathbf X`, and :math:`\sigma\mapsto\tau\circ\sigma`
    takes :math:`k` to :math:`k'` with
    :math:`(k,k')\in\{(k,k+2): k\in\{0,2,3,\dots,b-2\}\}\cup\{(k,k+1): 2\le k\le b-1\}`, their
    reverses, or :math:`k'=k`. So, with :math:`x=\ln o`,

    .. math:: \varepsilon_{\text{low}}(b,p)=\tfrac12\max_{(k,k')}
              \Bigl|(k'-k)\,x-\ln\frac{!k'}{!k}\Bigr|.

    Both :math:`!(k+1)/!k` and :math:`!(k+2)/!k` increase with :math:`k\ge2` (and
    :math:`!2/!0=1<!4/!2`), so the maximum is at the ends of each range: the pairs
    :math:`(0,2)`, :math:`(b-2,b)`, :math:`(2,3)`, :math:`(b-1,b)`; :math:`O(1)` for any ``b``.
    ``inf`` at :math:`p\in\{0,1\}`. Broadcasts over ``p``.

    >>> round(swapping_epsilon_lower_bound(2, 0.2), 4), round(math.log(4), 4)
    (1.3863, 1.3863)
    >>> round(swapping_epsilon_lower_bound(4, 0.2), 4), round(math.log(3) + math.log(4), 4)
    (2.4849, 2.4849)
    """
    size = check_integer(b, "b", 2)
    rate = check_probability(p, "p")
    with np.errstate(divide="ignore"):
        x = np.log(rate) - np.log1p(-rate)
    candidates = [np.abs(x)]  # (0, 2): !2/!0 = 1
    if size >= 4:
        candidates.append(np.abs(2 * x - _log_derangement_step(size - 2, 2)) / 2)
    if size >= 3:
        candidates.append(np.abs(x - _log_derangement_step(2, 1)) / 2)
        candidates.append(np.abs(x - _log_derangement_step(size - 1, 1)) / 2)
    bound = np.max(candidates, axis=0)
    return float(bound) if bound.ndim == 0 else bound


def swapping_bound_slack(b: int) -> float:
    r"""An upper bound on how much the theorem's budget (:func:`swapping_epsilon`, Bailie, Gong &
    Meng 2023, theorem slide) can exceed the exact worst-case budget over universes whose largest
    stratum has ``b`` records (our analysis, not in the talk): the largest gap, over swap rates
    :math:`p\in(0,1)`, between it and :func:`swapping_epsilon_lower_bound`,

    .. math:: G(b)=\sup_p\bigl[\varepsilon(b,p)-\varepsilon_{\text{low}}(b,p)\bigr]
              =\ln(b+1)-\tfrac12\ln\frac{!b}{!(b-2)}\quad(b\ge4),

    with :math:`G(2)=\ln3` (:math:`!2/!0=1`) and :math:`G(3)=\ln4` (a stratum of three has no
    pair :math:`(1,3)`). For :math:`b\ge4` the gap equals :math:`G(b)` while
    :math:`\ln o\le\tfrac14\ln(!b/!(b-2))` (every :math:`p\le\tfrac12` included), is
    :math:`\ln(b+1)-2\ln o` above that, and vanishes from :math:`p^\ast` on. From
    :math:`!b/!(b-2)=b(b-1)(1-(-1)^b/(b\,!(b-2)))`,

    .. math:: G(b)=\tfrac12\ln\Bigl(1+\frac{3b+1}{b(b-1)}\Bigr)
              -\tfrac12\ln\Bigl(1-\frac{(-1)^b}{b\,!(b-2)}\Bigr)\sim\frac{3}{2b},

    computed in this form (no cancellation for large ``b``).

    >>> round(swapping_bound_slack(4), 4), round(math.log(5 / 3), 4)
    (0.5108, 0.5108)
    """
    size = check_integer(b, "b", 2)
    if size == 2:
        return math.log(3)
    if size == 3:
        return math.log(4)
    inverse = _inverse_derangements(size - 2)
    sign = 1.0 if size % 2 == 0 else -1.0
    return 0.5 * math.log1p((3 * size + 1) / (size * (size - 1))) - 0.5 * math.log1p(
        -sign * inverse / size)


def _stratum_rates(rates: ArrayLike, n_strata: int) -> np.ndarray:
    """``rates`` as one swap rate per stratum, each in the open interval (0, 1)."""
    checked = check_array(rates, "rates", ndim=1)
    if checked.size != n_strata:
        raise ValueError(f"rates must hold one swap rate per stratum ({n_strata} strata, numbered "
                         f"as by stratum_codes), got {checked.size}")
    if not ((checked > 0) & (checked < 1)).all():
        raise ValueError(f"rates must lie in the open interval (0, 1), got {rates!r:.80}")
    return checked


def stratified_swapping_epsilons(records: pd.DataFrame, match_key: Columns, rates: ArrayLike
                                 ) -> pd.DataFrame:
    r"""Budgets of the Permutation Algorithm run with a swap rate :math:`p_j` of its own in each
    stratum :math:`j` (a *variable swap rate*, listed as an extension on the closing slide of
    Bailie, Gong & Meng 2023; the per-stratum statement is our reading of their theorem's proof).
    With :math:`o_j=p_j/(1-p_j)` and :math:`b_j=n_j` if stratum :math:`j` holds two different
    records (compared on all columns), :math:`b_j=0` otherwise,

    .. math:: \varepsilon_j=\max\{\ln o_j,\ \ln(b_j+1)-\ln o_j\}\quad(b_j>0),\qquad
              \varepsilon_j=0\quad(b_j=0),

    and two datasets of one invariant universe that differ in :math:`m_j` records of stratum
    :math:`j` have a privacy loss at most :math:`\sum_j m_j\varepsilon_j`; the whole release is
    therefore pure DP given its invariants with budget :math:`\max_j\varepsilon_j`. Returns one
    row per stratum, numbered as by :func:`stratum_codes` (``rates[j]`` is the rate of stratum
    ``j``), with columns ``size`` (:math:`n_j`), ``b`` (:math:`b_j`), ``rate`` and ``epsilon``.
    Rates must lie in :math:`(0,1)`, where the theorem holds; :math:`O(n)` in the records.
    Records are compared on *all* columns, as by :func:`largest_stratum`: a column that tells
    every record apart, such as a household ID, makes :math:`b_j=n_j` for every stratum of two or
    more records, even one whose records agree on every released column. Since
    :math:`\varepsilon_j` grows with :math:`b_j`, the result is still a valid bound for the release
    without that column, but a looser one: pass only the released columns.

    >>> frame = pd.DataFrame({"size": [2, 2, 3, 3, 3], "county": ["A", "B", "A", "B", "C"]})
    >>> budgets = stratified_swapping_epsilons(frame, "size", [0.5, 0.2])
    >>> budgets["b"].tolist(), [round(e, 4) for e in budgets["epsilon"]]
    ([2, 3], [1.0986, 2.7726])
    """
    codes = stratum_codes(records, match_key)
    n_strata = int(codes.max()) + 1
    rate = _stratum_rates(rates, n_strata)
    sizes = np.bincount(codes, minlength=n_strata)
    distinct = np.bincount(stratum_codes(records.drop_duplicates(), match_key), minlength=n_strata)
    # stratum_codes numbers strata by first appearance, which drop_duplicates keeps
    b = np.where(distinct >= 2, sizes, 0).astype(np.int64)
    eps = np.asarray(swapping_epsilon(b, rate), dtype=float).reshape(-1)
    return pd.DataFrame({"size": sizes.astype(np.int64), "b": b, "rate": rate, "epsilon": eps},
                        index=pd.RangeIndex(n_strata, name="stratum"))


def exact_stratified_swapping_epsilon(records: pd.DataFrame, match_key: Columns,
                                      swap_var: Columns, rates: ArrayLike
                                      ) -> tuple[np.ndarray, float]:
    r"""Exact budgets of the Permutation Algorithm with a swap rate :math:`p_j` per stratum
    (Bailie, Gong & Meng 2023, variable swap rate on the closing slide), by enumeration: for each
    stratum :math:`j`, the largest loss per unit of :math:`d^u_{\text{HamS}}` between two datasets
    of the invariant universe that differ only in stratum :math:`j`,

    .. math:: \varepsilon^{\text{exact}}_j=\max_{\mathbf X\ne\mathbf X'\text{ differing in }j}
              \frac{\max_{\mathbf Z}|\ln\Pr(T(\mathbf X)=\mathbf Z)
              -\ln\Pr(T(\mathbf X')=\mathbf Z)|}{d^u_{\text{HamS}}(\mathbf X,\mathbf X')}

    (0 if the stratum's universe has one member), and the whole release's exact budget, the
    largest loss per unit of distance over *every* pair of the universe, computed pair by pair.
    :func:`stratified_swapping_epsilons` bounds each :math:`\varepsilon^{\text{exact}}_j` by its
    :math:`\varepsilon_j`. Strata are numbered as by :func:`stratum_codes`; rates lie in
    :math:`(0,1)`, where every budget is finite. Same limits as
    :func:`pairwise_swapping_losses` (``MAX_EXACT_UNIVERSE`` datasets, ``MAX_STRATUM_UNIVERSE``
    per stratum, ``MAX_STRATUM_TABLE`` entries per stratum's table), checked before any table.
    Records are compared on all columns, so a column such as a household ID counts as a held
    variable: every re-pairing then makes a different dataset, and the universe and its exact
    budgets are those of the file with IDs, not of the released table; drop such columns first.

    >>> frame = pd.DataFrame({"size": [2, 2, 3, 3, 3], "county": ["A", "B", "A", "B", "C"],
    ...                       "tenure": ["own", "rent", "own", "rent", "rent"]})
    >>> per_stratum, whole = exact_stratified_swapping_epsilon(frame, "size", "county", [0.2, 0.5])
    >>> per_stratum.round(4).tolist(), round(whole, 4)
    ([1.3863, 0.1438], 1.3863)
    """
    tables, sizes = _exact_stratum_tables(records, match_key, swap_var, "exact budgets")
    rate = _stratum_rates(rates, len(tables))
    total = math.prod(sizes)
    extremes = [_pair_extremes(table.log_law(float(p))) for table, p in zip(tables, rate,
                                                                            strict=True)]
    per_stratum = np.zeros(len(tables))
    for s, (table, (largest, smallest)) in enumerate(zip(tables, extremes, strict=True)):
        if sizes[s] > 1:
            apart = ~np.eye(sizes[s], dtype=bool)
            worst = np.maximum(largest, -smallest)[apart] / table.distance[apart]
            per_stratum[s] = float(worst.max()) + 0.0  # no -0.0
    if total == 1:
        return per_stratum, 0.0
    index = np.indices(sizes).reshape(len(sizes), -1)  # every dataset as one member per stratum
    first, second = np.triu_indices(total, 1)
    loss, distance = _universe_pair_losses(tables, extremes, index[:, first], index[:, second])
    return per_stratum, float((loss / distance).max())
