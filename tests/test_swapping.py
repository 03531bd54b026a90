"""Data swapping (Bailie, Gong & Meng 2023): the Permutation Algorithm, its exact law, invariants
and budget."""

from __future__ import annotations

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
from shuffle_lib.divergences import unordered_dataset
from shuffle_lib.swapping import (
    exact_swapping_epsilon,
    invariant_universe,
    largest_stratum,
    minimum_swapping_epsilon,
    pairwise_swapping_losses,
    stratum_codes,
    swap,
    swap_output_distribution,
    swap_rates_for_epsilon,
    swapping_epsilon,
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
    ],
)
def test_bad_input_raises(call, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        call()

