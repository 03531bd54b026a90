"""The shared validation checks an array's size before any copy or pass over its entries
(issue 32): a broadcast view that costs no memory but has 1e12 entries is refused with a
``ValueError`` naming the argument and the limit, never a ``MemoryError``."""

from __future__ import annotations

import numpy as np
import pytest

from shuffle_lib import _validation, attacks, datasets, learning, permutations, privacy_levels
from shuffle_lib._validation import (
    ARRAY_MAX,
    check_array,
    check_categories,
    check_delta,
    check_epsilon,
    check_points,
    check_positive,
    check_probability,
)

HUGE = 10**12

CHECKS = {
    "check_epsilon": lambda v: check_epsilon(v, "eps_i"),
    "check_delta": lambda v: check_delta(v, "eps_i"),
    "check_positive": lambda v: check_positive(v, "eps_i"),
    "check_probability": lambda v: check_probability(v, "eps_i"),
    "check_array": lambda v: check_array(v, "eps_i"),
    "check_array integer": lambda v: check_array(v, "eps_i", integer=True),
    "check_categories": lambda v: check_categories(v, 3, "eps_i"),
    "check_points": lambda v: check_points(v, "eps_i", 1e100),
}


@pytest.mark.parametrize("check", list(CHECKS))
@pytest.mark.parametrize("view", [
    np.broadcast_to(1.0, (HUGE,)),
    np.broadcast_to(1, (HUGE // 2, 2)),
    np.broadcast_to(np.array(1, dtype=object), (HUGE,)),
    np.broadcast_to(True, (HUGE,)),
], ids=["float", "int 2-D", "object", "bool"])
def test_huge_views_are_refused_before_any_copy(check: str, view: np.ndarray) -> None:
    with pytest.raises(ValueError, match=r"eps_i has .* more than the limit ARRAY_MAX") as info:
        CHECKS[check](view)
    assert not isinstance(info.value, MemoryError)


def test_a_list_holding_a_huge_view_is_refused_before_numpy_copies_it() -> None:
    with pytest.raises(ValueError, match=r"eps_i has .* entries, more than the limit ARRAY_MAX"):
        check_epsilon([np.broadcast_to(1.0, (HUGE,))], "eps_i")


@pytest.mark.parametrize("check", list(CHECKS))
def test_the_limit_is_inclusive(check: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_validation, "ARRAY_MAX", 12)
    fill = 0 if check == "check_delta" else 1
    at_limit = np.broadcast_to(fill, (12,)) if check != "check_points" else np.ones((6, 2))
    CHECKS[check](at_limit)
    with pytest.raises(ValueError, match="more than the limit ARRAY_MAX = 12 "):
        CHECKS[check](np.broadcast_to(1, (13,)))


def test_the_limit_is_above_every_documented_array_limit() -> None:
    documented = [attacks.MAX_TABLE_ENTRIES, learning.MAX_PATH_ENTRIES,
                  datasets.MAX_SYNTHETIC_PEOPLE, permutations.MAX_ITEMS, privacy_levels.MAX_USERS]
    assert ARRAY_MAX > max(documented)
    assert ARRAY_MAX * 8 * 3 < 24 * 2**30  # three float64 copies fit far inside 24 GiB


@pytest.mark.parametrize("value, message", [
    ([], "eps must not be empty"),
    ([1.0, np.nan], "eps must not contain NaN"),
    ([1.0, -1.0], "eps must be >= 0"),
    ("1.0", "eps must be a number or an array of numbers"),
])
def test_existing_messages_are_kept(value: object, message: str) -> None:
    with pytest.raises((ValueError, TypeError), match=message):
        check_epsilon(value)
