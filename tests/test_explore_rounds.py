"""The rounds explorer (``plotting.explore_rounds``) and its table
(``accounting.rounds.rounds_table``): the table holds the accountants' own values, and the
explorer draws exactly the table's entries for the chosen point."""

from __future__ import annotations

import numpy as np
import pytest

from shuffle_lib.accounting.rounds import (
    RoundsTable,
    rounds_table,
    shuffled_rounds_epsilon,
    shuffled_rr_rounds_floor,
)
from shuffle_lib.plotting import explore_rounds


@pytest.fixture(scope="module")
def table() -> RoundsTable:
    return rounds_table([4.0, 1.0], [10_000, 1_000], [10, 1, 3])


def test_table_holds_the_accountants_values(table: RoundsTable) -> None:
    assert table.eps0.tolist() == [1.0, 4.0] and table.rounds.tolist() == [1, 3, 10]
    for i, level in enumerate(table.eps0):
        for j, size in enumerate(table.n):
            for t, count in enumerate(table.rounds):
                args = (float(level), int(size), 1e-6, int(count))
                assert table.upper[i, j, t] == shuffled_rounds_epsilon(*args)
                assert table.floor[i, j, t] == shuffled_rr_rounds_floor(*args)
    assert np.all(table.floor < table.upper) and np.all(np.diff(table.upper, axis=2) > 0)


def _line(ax, label: str):
    return next(line for line in ax.get_lines() if line.get_label().startswith(label))


def test_explorer_draws_the_tables_entries(table: RoundsTable) -> None:
    by_rounds, by_size = explore_rounds(table, eps0=4.0, n=10_000, rounds=3).axes
    assert np.array_equal(_line(by_rounds, "upper").get_ydata(), table.upper[1, 1])
    assert np.array_equal(_line(by_rounds, "floor").get_ydata(), table.floor[1, 1])
    assert np.array_equal(_line(by_rounds, "T ε₀").get_ydata(), 4.0 * table.rounds)
    assert np.array_equal(_line(by_rounds, "T = 3").get_ydata(),
                          [table.upper[1, 1, 1], table.floor[1, 1, 1]])
    assert np.array_equal(_line(by_size, "upper").get_ydata(), table.upper[1, :, 1])
    assert by_size.get_title() == (f"T = 3: ε between {table.floor[1, 1, 1]:.3g} and "
                                   f"{table.upper[1, 1, 1]:.3g}")


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (lambda t: explore_rounds(t, eps0=3.0), ValueError, "eps0"),
        (lambda t: explore_rounds(t, eps0=4.0, n=500), ValueError, "n"),
        (lambda t: explore_rounds(t, eps0=4.0, n=1000, rounds=2), ValueError, "rounds"),
        (lambda t: explore_rounds("table"), TypeError, "table"),
        (lambda t: rounds_table([1.0], [10**7], [1]), ValueError, "n_values"),
        (lambda t: rounds_table([0.0], [100], [1]), ValueError, "eps0_values"),
        (lambda t: rounds_table(np.arange(1, 11.0), np.arange(2, 7), [1]), ValueError, "pairs"),
        (lambda t: rounds_table([1.0], [100], [1], delta=1e-20), ValueError, "delta"),
    ],
)
def test_refuses_bad_arguments(table: RoundsTable, call, error: type, message: str) -> None:
    with pytest.raises(error, match=message):
        call(table)
