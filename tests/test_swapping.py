"""Data swapping (Bailie, Gong & Meng 2023): the Permutation Algorithm, its exact law, invariants
and budget."""

from __future__ import annotations

import itertools
import math
from collections import Counter

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats
from scipy.special import expit, logit

from shuffle_lib.datasets import massachusetts_1940_households, massachusetts_1940_tenure
from shuffle_lib.divergences import hamming_set_distance, unordered_dataset
from shuffle_lib.swapping import (
    MAX_EXACT_UNIVERSE,
    MAX_STRATUM_TABLE,
    MAX_STRATUM_UNIVERSE,
    _pair_extremes,
    _strata_rows,
    _stratum_tables,
    exact_swapping_epsilon,
    invariant_universe,
    largest_stratum,
    minimum_swapping_epsilon,
    pairwise_swapping_losses,
    stratum_codes,
    swap,
    swap_output_distribution,
    swap_rates_for_epsilon,
    swapping_bound_slack,
    swapping_epsilon,
    swapping_epsilon_lower_bound,
    swapping_invariants,
)

# Bailie, Gong & Meng (2023), "What if the 2020 Census used swapping?": b, eps at p = 5%,
# eps at p = 50%
CENSUS_2020 = [(13_680_081, 19.38, 16.43), (3_653_802, 18.06, 15.11), (3_445_076, 18.00, 15.05),
               (853_003, 16.60, 13.66), (21_535, 12.92, 9.98), (11_691, 12.31, 9.37)]
# Bailie, Gong & Meng (2023), Table 1: 1940 Massachusetts, b = 264,331
MASSACHUSETTS_1940 = {0.01: 17.08, 0.05: 15.43, 0.10: 14.68, 0.50: 12.48}


def _toy(sizes: list[int], counties: str = "ABCDEFGHIJ") -> pd.DataFrame:
    """Strata of the given sizes; distinct counties within a stratum, tenure alternating."""
    rows = [(s, counties[i], "own" if i % 2 == 0 else "rent")
            for s, m in enumerate(sizes) for i in range(m)]
    return pd.DataFrame(rows, columns=["size", "county", "tenure"])


def _strata(*specs: tuple[str, str]) -> pd.DataFrame:
    """One stratum per (held values, swap values) pair of space-separated strings; values may
    repeat inside a stratum."""
    rows = [(s, county, tenure) for s, (tenures, counties) in enumerate(specs)
            for tenure, county in zip(tenures.split(), counties.split(), strict=True)]
    return pd.DataFrame(rows, columns=["size", "county", "tenure"])


def _distinct(b: int) -> pd.DataFrame:
    """A stratum of b records with distinct held values and distinct swap values."""
    return _strata((" ".join(f"t{i}" for i in range(b)), " ".join("ABCDEFGH"[:b])))


# repeated held values, repeated counties, strata of 4 to 6 records, several strata at once
RICHER = [
    _strata(("own own rent rent", "A A B C")),
    _strata(("own own own rent rent", "A A B B C")),
    _strata(("own own own rent rent rent", "A A B B C C")),
    _strata(("own own rent rent free free", "A A A B B C")),
    _strata(("own rent rent own", "A A B C"), ("own rent free", "D E F"), ("own rent", "A B"),
            ("own own own", "A A A")),
    _strata(("own own rent rent rent", "A B B C C"), ("a b c d", "A B C D")),
    _strata(("own own own own rent rent", "A B B C C C"), ("own rent", "G H")),
]
RATE_GRID = [round(float(p), 2) for p in np.linspace(0.05, 0.95, 19)]


def _derangements(m: int) -> int:
    """!m by the recurrence !m = (m - 1)(!(m-1) + !(m-2)), exact integers."""
    before, current = 1, 0  # !0, !1
    if m == 0:
        return 1
    for i in range(2, m + 1):
        before, current = current, (i - 1) * (current + before)
    return current


def _brute_force_losses(frame: pd.DataFrame, p: float) -> pd.DataFrame:
    """The definition, one dataset at a time: exact laws of every member of the universe, then
    every pair's worst log-ratio over the union of their supports."""
    universe = invariant_universe(frame, "size", "county")
    laws = [swap_output_distribution(pd.DataFrame(list(x), columns=frame.columns)
                                     .astype(frame.dtypes.to_dict()), "size", "county", p)
            for x in universe]
    rows = []
    for i, j in itertools.combinations(range(len(universe)), 2):
        gaps = []
        for z in set(laws[i]) | set(laws[j]):
            a, b = laws[i].get(z, 0.0), laws[j].get(z, 0.0)
            gaps.append(math.inf if min(a, b) == 0 else abs(math.log(a) - math.log(b)))
        rows.append((i, j, hamming_set_distance(universe[i], universe[j]), max(gaps)))
    return pd.DataFrame(rows, columns=["x", "x_prime", "distance", "loss"])


@pytest.mark.parametrize("frame", [_toy([4, 3]), _distinct(4), *RICHER[:5]])
def test_pairwise_losses_match_brute_force(frame: pd.DataFrame) -> None:
    for p in (0.0, 0.13, 0.5, 0.81, 1.0):
        fast = pairwise_swapping_losses(frame, "size", "county", p)
        slow = _brute_force_losses(frame, p)
        np.testing.assert_array_equal(fast[["x", "x_prime", "distance"]].to_numpy(),
                                      slow[["x", "x_prime", "distance"]].to_numpy())
        np.testing.assert_allclose(fast["loss"], slow["loss"], rtol=1e-12, atol=1e-13)


def test_pairwise_losses_refuse_huge_universes() -> None:
    with pytest.raises(ValueError, match="universe holds"):
        pairwise_swapping_losses(_distinct(7), "size", "county", 0.3)
    assert math.factorial(7) > MAX_EXACT_UNIVERSE >= math.factorial(6)


def test_pairwise_losses_refuse_a_stratum_universe_past_its_limit() -> None:
    # 7 records, swap values A A B B C D E: 7!/4 = 1260 members, within MAX_EXACT_UNIVERSE but
    # past the per-stratum limit (the work grows as the cube of one stratum's universe)
    frame = _strata((" ".join(f"t{i}" for i in range(7)), "A A B B C D E"))
    assert MAX_STRATUM_UNIVERSE < 1260 <= MAX_EXACT_UNIVERSE
    for function in (pairwise_swapping_losses, exact_swapping_epsilon):
        with pytest.raises(ValueError, match="per stratum"):
            function(frame, "size", "county", 0.3)
    # six distinct records: 6! = 720 members, accepted
    assert len(invariant_universe(_distinct(6), "size", "county")) == MAX_STRATUM_UNIVERSE


def test_pairwise_losses_refuse_a_stratum_table_past_its_limit() -> None:
    # eight records, distinct counties: with one renter 8 members (8 x 8! entries, accepted),
    # with two renters C(8, 2) = 28 members (28 x 8! entries, refused before any table)
    counties = " ".join("ABCDEFGH")
    assert 8 * math.factorial(8) <= MAX_STRATUM_TABLE < 28 * math.factorial(8)
    accepted = pairwise_swapping_losses(_strata(("o o o o o o o r", counties)), "size", "county",
                                        0.5)
    assert len(accepted) == 8 * 7 // 2 and np.isfinite(accepted["loss"]).all()
    with pytest.raises(ValueError, match="permutations is above the limit"):
        exact_swapping_epsilon(_strata(("o o o o o o r r", counties)), "size", "county", 0.5)


def _pair_extremes_reference(log_law: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The former numpy implementation of ``_pair_extremes`` (one row of members at a time),
    kept as the reference of the compiled kernel: results must be identical, bit for bit."""
    size = log_law.shape[0]
    largest, smallest = np.empty((size, size)), np.empty((size, size))
    for u in range(size):
        with np.errstate(invalid="ignore"):  # -inf - (-inf): both impossible, set to 0
            gap = np.where(log_law[u] == log_law, 0.0, log_law[u] - log_law)
        largest[u], smallest[u] = gap.max(axis=1), gap.min(axis=1)
    return largest, smallest


@pytest.mark.parametrize("frame", [_distinct(2), _distinct(5), *RICHER])
@pytest.mark.parametrize("p", [1e-300, 1e-6, 0.13, 0.5, 0.81, 1 - 1e-9, 1.0])
def test_pair_extremes_identical_to_the_former_implementation(frame: pd.DataFrame,
                                                              p: float) -> None:
    strata, positions = _strata_rows(frame, "size", "county")
    for rows in strata:
        log_law = _stratum_tables(tuple(rows), tuple(positions)).log_law(p)
        for fast, slow in zip(_pair_extremes(log_law), _pair_extremes_reference(log_law),
                              strict=True):
            np.testing.assert_array_equal(fast, slow)
            assert not np.signbit(fast[fast == 0.0]).any()  # +0.0, as the reference gives


def test_pair_extremes_identical_on_random_laws_with_impossible_outputs() -> None:
    rng = np.random.default_rng(7)
    for size, outputs in [(1, 1), (3, 5), (17, 9), (40, 40)]:
        log_law = np.log(rng.random((size, outputs)))
        log_law[rng.random((size, outputs)) < 0.3] = -np.inf
        log_law[:, 0] = log_law[0, 0]  # ties between members
        for fast, slow in zip(_pair_extremes(log_law), _pair_extremes_reference(log_law),
                              strict=True):
            np.testing.assert_array_equal(fast, slow)


@pytest.mark.parametrize("frame", RICHER + [_distinct(b) for b in range(2, 6)])
def test_theorem_on_richer_strata(frame: pd.DataFrame) -> None:
    b = largest_stratum(frame, "size")
    _, p_star = minimum_swapping_epsilon(b)
    for p in [*RATE_GRID, p_star]:
        assert exact_swapping_epsilon(frame, "size", "county", p) <= swapping_epsilon(b, p) + 1e-9


def test_high_rates_are_tight_with_a_distinct_stratum() -> None:
    # a stratum whose records are all different (held and swap values) gives |ln o| per unit
    for frame in [RICHER[4], RICHER[5], RICHER[6], *(_distinct(b) for b in range(2, 6))]:
        b = largest_stratum(frame, "size")
        _, p_star = minimum_swapping_epsilon(b)
        for p in [p_star, 0.8, 0.95]:
            assert exact_swapping_epsilon(frame, "size", "county", p) == pytest.approx(
                swapping_epsilon(b, p), rel=1e-9)


def test_transposition_pairs_by_brute_force() -> None:
    """sigma -> sigma o tau for a transposition tau: which moved counts (k, k') occur, and the
    resulting worst loss per unit, against the closed form."""
    for b in range(2, 7):
        derangement = [_derangements(k) for k in range(b + 1)]
        pairs = set()
        for sigma in itertools.permutations(range(b)):
            composed = (sigma[1], sigma[0], *sigma[2:])  # sigma o (0 1)
            k = sum(i != v for i, v in enumerate(sigma))
            pairs.add((k, sum(i != v for i, v in enumerate(composed))))
        up = {(k, k + 2) for k in [0, *range(2, b - 1)]} | {(k, k + 1) for k in range(2, b)}
        assert {(k, kk) for k, kk in pairs if k != kk} == up | {(kk, k) for k, kk in up}
        assert all(k >= 4 for k, kk in pairs if k == kk)
        for p in (0.01, 0.2, 0.5, 0.6, 0.9, 0.999):
            x = math.log(p / (1 - p))
            expected = max(abs((kk - k) * x - math.log(derangement[kk] / derangement[k])) / 2
                           for k, kk in pairs)
            assert swapping_epsilon_lower_bound(b, p) == pytest.approx(expected, rel=1e-12)


def test_lower_bound_endpoints_equal_the_full_maximum() -> None:
    # the library uses the ends of each range of k; compare with every k, exact integers
    counts = [_derangements(k) for k in range(302)]
    for b in (4, 7, 30, 120, 300):
        for p in (0.003, 0.3, 0.5, 0.7, 0.97):
            x = math.log(p / (1 - p))
            full = max([abs(2 * x - math.log(counts[k + 2] / counts[k])) / 2
                        for k in [0, *range(2, b - 1)]]
                       + [abs(x - math.log(counts[k + 1] / counts[k])) / 2 for k in range(2, b)])
            assert swapping_epsilon_lower_bound(b, p) == pytest.approx(full, rel=1e-12)


def test_lower_bound_is_the_worst_distance_two_pair() -> None:
    for b in range(2, 6):
        frame = _distinct(b)
        _, p_star = minimum_swapping_epsilon(b)
        for p in [*RATE_GRID, p_star]:
            losses = pairwise_swapping_losses(frame, "size", "county", p)
            closest = losses[losses["distance"] == 2]
            low = swapping_epsilon_lower_bound(b, p)
            assert low == pytest.approx(float((closest["loss"] / 2).max()), rel=1e-9, abs=1e-12)
            assert low <= float((losses["loss"] / losses["distance"]).max()) + 1e-12
            assert low <= swapping_epsilon(b, p) + 1e-12


def test_slack_is_the_largest_gap() -> None:
    log_odds = np.linspace(-12, 12, 24_001)
    rates = expit(log_odds)
    for b in (2, 3, 4, 5, 6, 9, 10, 50, 264_331):
        gap = swapping_epsilon(b, rates) - swapping_epsilon_lower_bound(b, rates)
        slack = swapping_bound_slack(b)
        assert gap.max() <= slack + 1e-9
        assert gap.max() == pytest.approx(slack, abs=1e-9)  # attained at low rates
        if b >= 4:  # the gap is exactly G(b) for every p <= 1/2
            np.testing.assert_allclose(gap[rates <= 0.5], slack, atol=1e-9)
        assert np.all(gap[rates >= minimum_swapping_epsilon(b)[1]] <= 1e-9)  # tight above p*
    for b in range(4, 200):  # closed form with exact integers
        expected = math.log(b + 1) - 0.5 * math.log(_derangements(b) / _derangements(b - 2))
        assert swapping_bound_slack(b) == pytest.approx(expected, rel=1e-9, abs=1e-15)
    for b in (10, 100, 10**4, 264_331, 10**8):  # G(b) = 3/(2b) - 1/(4b^2) + O(b^-3)
        assert abs(b * swapping_bound_slack(b) - 1.5) <= 0.3 / b


def test_published_budgets() -> None:
    for b, at_5, at_50 in CENSUS_2020:
        assert round(swapping_epsilon(b, 0.05), 2) == at_5
        assert round(swapping_epsilon(b, 0.50), 2) == at_50
    for p, eps in MASSACHUSETTS_1940.items():
        assert round(swapping_epsilon(264_331, p), 2) == eps


def test_budget_branches_and_edges() -> None:
    rates = np.linspace(0.001, 0.999, 999)
    for b in (1, 2, 10, 264_331, 10**8):
        eps = swapping_epsilon(b, rates)
        log_odds = np.log(rates / (1 - rates))
        threshold = math.sqrt(b + 1) / (math.sqrt(b + 1) + 1)
        piecewise = np.where(rates <= threshold, math.log(b + 1) - log_odds, log_odds)
        np.testing.assert_allclose(eps, piecewise, rtol=1e-12)
        assert swapping_epsilon(b, 0.0) == math.inf and swapping_epsilon(b, 1.0) == math.inf
    assert swapping_epsilon(0, 0.3) == 0.0 and swapping_epsilon(0, 1.0) == 0.0
    # larger strata cost more at the same swap rate (Bailie et al.'s counterintuitive remark)
    assert np.all(np.diff(swapping_epsilon(np.array([1, 10, 10**4, 10**8]), 0.3)) > 0)
    assert np.isfinite(swapping_epsilon(10**8, 1e-12))


def test_minimum_and_inverse_against_brute_force() -> None:
    log_odds = np.linspace(-20, 20, 2_000_001)  # grid step 2e-5 in ln o; eps is 1-Lipschitz
    rates = expit(log_odds)
    for b in (1, 5, 264_331, 13_680_081):
        eps_min, p_star = minimum_swapping_epsilon(b)
        grid = swapping_epsilon(b, rates)
        assert eps_min == pytest.approx(grid.min(), abs=2e-5)
        assert logit(p_star) == pytest.approx(log_odds[np.argmin(grid)], abs=2e-5)
        for eps in (eps_min, eps_min + 0.1, 12.48, 20.0):
            if eps < eps_min:
                continue
            low, high = swap_rates_for_epsilon(b, eps)
            assert low <= p_star <= high
            assert swapping_epsilon(b, low) == pytest.approx(eps, rel=1e-9)
            # 1 - p_high is stored with absolute error 1e-16: relative error 1e-16 e^eps
            assert swapping_epsilon(b, high) == pytest.approx(eps, rel=1e-7)


def test_largest_stratum_brute_force(rng: np.random.Generator) -> None:
    for _ in range(30):
        frame = pd.DataFrame({"key": rng.integers(0, 4, 12), "county": rng.integers(0, 2, 12),
                              "tenure": rng.integers(0, 2, 12)})
        expected = 0
        for _, part in frame.groupby("key"):
            rows = set(part.itertuples(index=False, name=None))
            if len(rows) >= 2:
                expected = max(expected, len(part))
        assert largest_stratum(frame, "key") == expected


def test_stratum_codes_match_groupby(rng: np.random.Generator) -> None:
    frame = pd.DataFrame({"a": rng.integers(0, 5, 500), "b": rng.choice(["x", "y", "z"], 500)})
    codes = stratum_codes(frame, ["a", "b"])
    reference = frame.groupby(["a", "b"]).ngroup().to_numpy()
    pairs = set(zip(codes.tolist(), reference.tolist(), strict=True))
    assert len(pairs) == len(set(codes.tolist())) == len(set(reference.tolist()))


def _check_swap_keeps_records(frame: pd.DataFrame, out: pd.DataFrame, key: list[str],
                              swap_var: str) -> None:
    rest = [c for c in frame.columns if c != swap_var]
    assert len(out) == len(frame) and list(out.columns) == list(frame.columns)
    pd.testing.assert_frame_equal(out[rest], frame[rest])  # untouched row by row
    assert (out.dtypes == frame.dtypes).all()
    before = swapping_invariants(frame, key, swap_var)
    after = swapping_invariants(out, key, swap_var)
    assert all(before[name].equals(after[name]) for name in before)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 3), st.integers(0, 4), st.integers(0, 1)),
                min_size=1, max_size=40),
       st.floats(0, 1), st.integers(0, 2**32 - 1))
def test_swap_keeps_records_and_invariants(rows: list, p: float, seed: int) -> None:
    frame = pd.DataFrame(rows, columns=["size", "county", "tenure"])
    original = frame.copy()
    out = swap(frame, "size", "county", p, rng=seed)
    pd.testing.assert_frame_equal(frame, original)  # input not mutated
    _check_swap_keeps_records(frame, out, ["size"], "county")


def test_swap_extreme_rates() -> None:
    frame = _toy([4, 3, 1])
    pd.testing.assert_frame_equal(swap(frame, "size", "county", 0.0, rng=0), frame)
    out = swap(frame, "size", "county", 1.0, rng=0)
    moved = out["county"] != frame["county"]
    assert moved[frame["size"] < 2].all() and not moved[frame["size"] == 2].any()


def test_swap_matches_exact_law() -> None:
    """5000 independent copies of a tiny dataset swapped in one call (each copy its own strata)
    against the enumerated law: chi-square."""
    tiny = _toy([3, 2])
    copies = 5_000
    frame = pd.concat([tiny.assign(copy=c) for c in range(copies)], ignore_index=True)
    for p in (0.3, 0.8):
        out = swap(frame, ["copy", "size"], "county", p, rng=7)
        law = swap_output_distribution(tiny, "size", "county", p)
        seen = Counter(unordered_dataset(part.drop(columns="copy").itertuples(index=False,
                                                                              name=None))
                       for _, part in out.groupby("copy"))
        assert set(seen) <= set(law)
        outcomes = sorted(law)
        observed = np.array([seen.get(z, 0) for z in outcomes])
        expected = np.array([law[z] for z in outcomes]) * copies
        assert stats.chisquare(observed, expected).pvalue > 1e-4


def test_exact_law_by_hand() -> None:
    pair = _toy([2])
    for p in (0.1, 0.5, 0.9):
        law = swap_output_distribution(pair, "size", "county", p)
        swapped = p**2 / (p**2 + (1 - p) ** 2)  # both selected, given not exactly one
        assert sorted(law.values()) == pytest.approx(sorted([swapped, 1 - swapped]))
    law = swap_output_distribution(_toy([4, 3]), "size", "county", 0.37)
    assert sum(law.values()) == pytest.approx(1.0)
    assert swap_output_distribution(_toy([4, 3]), "size", "county", 0.0) == {
        unordered_dataset(_toy([4, 3]).itertuples(index=False, name=None)): 1.0}


def test_universe_by_counting() -> None:
    # distinct swap and held values in a stratum of m records: m! re-pairings, all different
    distinct = _toy([3, 2]).assign(tenure=["a", "b", "c", "d", "e"])
    assert len(invariant_universe(distinct, "size", "county")) == 6 * 2
    # held values own, rent, own: 3!/2! = 3 pairings in the first stratum
    assert len(invariant_universe(_toy([3, 2]), "size", "county")) == 3 * 2
    repeated = pd.DataFrame({"size": [1, 1, 1], "county": ["A", "A", "B"],
                             "tenure": ["own", "rent", "rent"]})
    assert len(invariant_universe(repeated, "size", "county")) == 2  # B gets own or rent


@pytest.mark.parametrize("sizes", [[2], [3], [4], [3, 2], [5]])
def test_theorem_holds_by_exact_enumeration(sizes: list[int]) -> None:
    frame = _toy(sizes)
    b = largest_stratum(frame, "size")
    _, p_star = minimum_swapping_epsilon(b)
    for p in (0.02, 0.2, 0.5, p_star, 0.9, 0.99):
        exact = exact_swapping_epsilon(frame, "size", "county", p)
        assert 0 <= exact <= swapping_epsilon(b, p) + 1e-9


def test_bound_attained_on_the_high_rate_branch() -> None:
    # a two-record stratum at p > 1/2: keep-or-swap odds are exactly o, the theorem's ln o
    for p in (0.7, 0.9, 0.99):
        assert exact_swapping_epsilon(_toy([2]), "size", "county", p) == pytest.approx(
            math.log(p / (1 - p)), rel=1e-9)


def test_no_finite_budget_at_rates_zero_and_one() -> None:
    for p in (0.0, 1.0):
        losses = pairwise_swapping_losses(_toy([3]), "size", "county", p)
        assert np.isinf(losses["loss"]).all()
        assert exact_swapping_epsilon(_toy([3]), "size", "county", p) == math.inf


def test_identical_records_cost_nothing() -> None:
    same = pd.DataFrame({"size": [2, 2, 2], "county": ["A", "A", "A"], "tenure": ["own"] * 3})
    assert largest_stratum(same, "size") == 0
    assert swapping_epsilon(largest_stratum(same, "size"), 0.3) == 0.0
    assert exact_swapping_epsilon(same, "size", "county", 0.3) == 0.0


def test_distances_in_the_universe_are_whole_records() -> None:
    losses = pairwise_swapping_losses(_toy([4]), "size", "county", 0.3)
    # changing the pairing moves at least two records, so d_HamS >= 2 between universe members
    assert (losses["distance"] >= 2).all() and set(losses["distance"]) <= {2.0, 3.0, 4.0}
    assert len(losses) == math.comb(6, 2)  # 4!/(2! 2!) pairings: tenure own, rent, own, rent


def test_massachusetts_microdata_reproduces_bailie_gong_meng() -> None:
    homes = massachusetts_1940_households(rng=0)
    table = massachusetts_1940_tenure()
    counts = pd.crosstab(homes["county"], homes["tenure"])
    np.testing.assert_array_equal(counts["owned"].to_numpy(), table["owned"].to_numpy())
    np.testing.assert_array_equal(counts["rented"].to_numpy(), table["rented"].to_numpy())
    assert largest_stratum(homes, ["state", "size"]) == 264_331
    sizes = homes["size"].value_counts()
    assert sizes.idxmax() == 2 and sizes.sum() == 1_144_424
    swapped = table[["owned_swapped", "rented_swapped"]].to_numpy().sum(axis=1)
    np.testing.assert_array_equal(swapped, table[["owned", "rented"]].to_numpy().sum(axis=1))


def test_massachusetts_swap_keeps_invariants() -> None:
    homes = massachusetts_1940_households(rng=1)
    out = swap(homes, ["state", "size"], "county", 0.5, rng=2)
    _check_swap_keeps_records(homes, out, ["state", "size"], "county")
    changed = (out["county"] != homes["county"]).mean()
    # a record changes county when selected and sent to a household of another county:
    # P(selected) = 1/2 and county shares are spread, so well above 0.3 and below 0.5
    assert 0.3 < changed < 0.5


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: swap(_toy([2]), "size", "zip", 0.5), "unknown column"),
        (lambda: swap(_toy([2]), "nope", "county", 0.5), "unknown column"),
        (lambda: swap(_toy([2]), "size", "county", 1.5), "p must lie in"),
        (lambda: swap(_toy([2]), "size", "county", -0.1), "p must lie in"),
        (lambda: swap(_toy([2]), "size", "county", float("nan")), "NaN"),
        (lambda: swap(_toy([2]), "size", "county", [0.1, 0.2]), "single swap rate"),
        (lambda: swap(_toy([2]), ["size", "county"], "county", 0.5), "share"),
        (lambda: swap(_toy([2]).iloc[:0], "size", "county", 0.5), "empty"),
        (lambda: swap(_toy([2]).to_numpy(), "size", "county", 0.5), "DataFrame"),
        (lambda: swap(_toy([2]).assign(size=[1.0, np.nan]), "size", "county", 0.5), "missing"),
        (lambda: swap(_toy([2]).assign(county=[None, "B"]), "size", "county", 0.5), "missing"),
        (lambda: swap(_toy([2]), [], "county", 0.5), "at least one"),
        (lambda: swapping_epsilon(-1, 0.5), "b must"),
        (lambda: swapping_epsilon(2.5, 0.5), "b must"),
        (lambda: swapping_epsilon(3, 1.2), "p must"),
        (lambda: minimum_swapping_epsilon(0), "b must"),
        (lambda: swap_rates_for_epsilon(264_331, 5.0), "not attainable"),
        (lambda: swapping_invariants(_toy([2]), "size", "county", hold="county"), "share"),
        (lambda: swap_output_distribution(_toy([9]), "size", "county", 0.5), "exact enumeration"),
        (lambda: swapping_epsilon_lower_bound(1, 0.5), "b must"),
        (lambda: swapping_epsilon_lower_bound(4, 1.5), "p must"),
        (lambda: swapping_epsilon_lower_bound(4.0, 0.5), "b must"),
        (lambda: swapping_bound_slack(1), "b must"),
        (lambda: pairwise_swapping_losses(_toy([3]), "size", "county", -0.2), "p must"),
    ],
)
def test_bad_input_raises(call, message: str) -> None:
    # a value of the wrong type (an array for records, a float b) is a TypeError
    with pytest.raises((ValueError, TypeError), match=message):
        call()



def test_exact_budget_at_tiny_rates_is_finite() -> None:
    # p^2 underflowed at p = 1e-300, giving an infinite loss; a two-record stratum costs |ln o|
    for p in (1e-300, 1e-100, 1e-20):
        assert exact_swapping_epsilon(_toy([2]), "size", "county", p) == pytest.approx(
            abs(math.log(p) - math.log1p(-p)), rel=1e-12)
    losses = pairwise_swapping_losses(_toy([3]), "size", "county", 1e-300)
    assert np.isfinite(losses["loss"]).all()


def test_finite_budgets_at_rate_one_quoted_in_swapping_epsilon() -> None:
    # the theorem gives inf at p = 1 whenever b > 0; some universes have a finite exact budget
    assert swapping_epsilon(2, 1.0) == math.inf
    held_only = pd.DataFrame({"size": [2, 2], "county": ["A", "A"], "tenure": ["own", "rent"]})
    assert len(invariant_universe(held_only, "size", "county")) == 1
    assert exact_swapping_epsilon(held_only, "size", "county", 1.0) == 0.0
    both = _toy([2])  # differs in the held and the swap value: always swapped, no finite budget
    assert exact_swapping_epsilon(both, "size", "county", 1.0) == math.inf
    aabb = _strata(("t1 t2 t3 t4", "A A B B"))
    assert exact_swapping_epsilon(aabb, "size", "county", 1.0) == pytest.approx(math.log(2))


def test_huge_stratum_sizes_in_the_closed_forms() -> None:
    # log_derangements refused b = 10**30; 1/!k is exactly 0 in floating point there
    assert swapping_bound_slack(10**30) == pytest.approx(1.5e-30, rel=1e-9)  # G(b) ~ 3/(2b)
    low = swapping_epsilon_lower_bound(10**30, 0.3)
    theorem = math.log1p(10**30) - math.log(0.3 / 0.7)  # swapping_epsilon's first branch
    assert 0 < low <= theorem


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (lambda: swap(_toy([2]), None, "county", 0.5), TypeError, "match_key"),
        (lambda: swap(_toy([2]), "size", 3.5, 0.5), TypeError, "swap_var"),
        (lambda: swap(_toy([2]), "size", ["county", 1], 0.5), TypeError, "swap_var"),
        (lambda: stratum_codes(_toy([2]), None), TypeError, "match_key"),
        (lambda: largest_stratum([[1, 2]], "size"), TypeError, "records"),
        (lambda: swapping_invariants(_toy([2]), "size", "county", hold=2.0), TypeError, "hold"),
        (lambda: swap_rates_for_epsilon(3, None), TypeError, "eps"),
        (lambda: swap_rates_for_epsilon(3, "1.0"), TypeError, "eps"),
        (lambda: swap_rates_for_epsilon(3, float("nan")), ValueError, "eps"),
        (lambda: swap(_toy([2]), "size", "county", "0.5"), TypeError, "p"),
    ],
)
def test_hostile_inputs_are_refused_by_name(call, error: type, message: str) -> None:
    with pytest.raises(error, match=message):
        call()


@pytest.mark.parametrize("missing", [np.nan, None, pd.NA])
def test_a_missing_key_is_refused_by_swap_and_both_helpers(missing) -> None:
    frame = pd.DataFrame({"size": pd.array([2, missing, 2], dtype=object),
                          "county": ["A", "B", "C"], "tenure": ["own", "rent", "own"]})
    for call in (lambda: swap(frame, "size", "county", 0.5, rng=0),
                 lambda: stratum_codes(frame, "size"),
                 lambda: stratum_codes(frame, ["tenure", "size"]),
                 lambda: largest_stratum(frame, "size"),
                 lambda: largest_stratum(frame, ["tenure", "size"])):
        with pytest.raises(ValueError, match="column 'size' holds missing values"):
            call()
    # a missing value outside the key is a held value like any other, for all three
    held = frame.assign(size=[2, 2, 2], tenure=["own", missing, "own"])
    assert stratum_codes(held, "size").tolist() == [0, 0, 0]
    assert largest_stratum(held, "size") == 3
    assert swap(held, "size", "county", 1.0, rng=0)["tenure"].isna().sum() == 1


def test_scalar_arguments_of_swap_are_checked_before_the_records() -> None:
    broken = _toy([2]).assign(size=[1.0, np.nan])  # would be refused for its missing key
    with pytest.raises(TypeError, match="rng"):
        swap(broken, "size", "county", 0.5, rng="seed")
    with pytest.raises(ValueError, match="p must"):
        swap(broken, "size", "county", 1.5)
    with pytest.raises(ValueError, match="p must"):
        pairwise_swapping_losses(_toy([9]), "size", "county", 1.5)


@pytest.mark.parametrize("b", [1, 3, 264_331, 10**8])
def test_lower_swap_rate_keeps_its_budget_up_to_the_documented_limit(b: int) -> None:
    smallest, _ = minimum_swapping_epsilon(b)
    top = math.log1p(b) + 708
    for eps in np.geomspace(smallest, top, 60):  # a log grid up to the limit
        low, high = swap_rates_for_epsilon(b, float(eps))
        assert 0 < low <= high < 1 or (high == 1.0 and eps > 36)
        assert swapping_epsilon(b, low) == pytest.approx(eps, rel=1e-12)
    for eps in (top + 1, 1e5, 1e300):
        with pytest.raises(ValueError, match="underflow"):
            swap_rates_for_epsilon(b, eps)
