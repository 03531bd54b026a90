"""The shuffler: a uniformly random permutation that keeps the multiset of reports."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy import stats

from shuffle_lib import shuffle


def test_shuffle_keeps_the_multiset_and_the_input(rng: np.random.Generator) -> None:
    reports = rng.integers(0, 5, size=1000)
    before = reports.copy()
    out = shuffle(reports, rng=rng)
    np.testing.assert_array_equal(np.sort(out), np.sort(reports))
    np.testing.assert_array_equal(reports, before)


def test_shuffle_is_uniform_over_all_orders(rng: np.random.Generator) -> None:
    orders = list(itertools.permutations(range(3)))
    draws = 60_000
    counts = dict.fromkeys(orders, 0)
    for _ in range(draws):
        counts[tuple(shuffle(np.arange(3), rng=rng).tolist())] += 1
    observed = np.array([counts[o] for o in orders])
    assert stats.chisquare(observed).pvalue > 1e-4


def test_shuffle_permutes_rows_of_2d_reports(rng: np.random.Generator) -> None:
    table = np.column_stack([np.arange(50), np.arange(50) * 10])
    out = shuffle(table, rng=rng)
    np.testing.assert_array_equal(out[:, 1], out[:, 0] * 10)


@pytest.mark.parametrize("bad", [[], 3.0])
def test_shuffle_rejects_empty_or_scalar(bad) -> None:
    with pytest.raises(ValueError, match="non-empty"):
        shuffle(bad)


@pytest.mark.parametrize(
    ("bad", "error", "message"),
    [
        (np.array(["a", "b"]), TypeError, "reports"),
        ([1.0, np.nan], ValueError, "reports"),
        ([1.0, np.inf], ValueError, "reports"),
        (None, TypeError, "reports"),
    ],
)
def test_shuffle_refuses_non_numbers(bad, error: type, message: str) -> None:
    with pytest.raises(error, match=message):
        shuffle(bad)


def test_shuffle_keeps_dtype_and_takes_boolean_reports(rng: np.random.Generator) -> None:
    flags = rng.random(100) < 0.3
    out = shuffle(flags, rng=rng)
    assert out.dtype == bool and out.sum() == flags.sum()
    assert shuffle(np.arange(5), rng=rng).dtype == np.arange(5).dtype
