"""Populations of personal levels (Chen et al., GSPA, Table 2 and the preference groups)."""

from __future__ import annotations

import numpy as np
import pytest

from shuffle_lib.privacy_levels import PROFILES, draw_levels, preference_levels


@pytest.mark.parametrize("profile", list(PROFILES))
def test_profiles_have_the_stated_ranges(profile: str) -> None:
    levels = draw_levels(profile, 20_000, rng=0)
    assert levels.shape == (20_000,)
    bounds = {"Unif 1": (0.01, 1), "Unif 2": (0.01, 2), "Unif 3": (0.5, 1),
              "Constant": (0.5, 0.5), "Mixed constant": (0.01, 0.5)}[profile]
    assert bounds[0] <= levels.min() and levels.max() <= bounds[1]
    if profile.startswith("Unif"):  # uniform: mean within 4 standard errors of the midpoint
        half_width = (bounds[1] - bounds[0]) / 2
        assert abs(levels.mean() - sum(bounds) / 2) < 4 * half_width / np.sqrt(3 * 20_000)
    if profile == "Mixed constant":
        assert np.sum(levels == 0.5) == 10_000


def test_preference_groups_have_the_requested_sizes() -> None:
    levels = preference_levels(10_000, fractions=(0.2, 0.71, 0.09), levels=(0.3, 0.5, 1.0), rng=1)
    assert [int(np.sum(levels == v)) for v in (0.3, 0.5, 1.0)] == [2000, 7100, 900]


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: draw_levels("Unif 9", 10), "profile"),
        (lambda: draw_levels("Constant", 0), "n"),
        (lambda: preference_levels(10, fractions=(0.5, 0.6, 0.1)), "sum to 1"),
        (lambda: preference_levels(10, levels=(0.1, -0.5, 1.0)), "levels"),
        (lambda: preference_levels(10, fractions=(0.5, 0.5)), "three values"),
    ],
)
def test_bad_input_raises(call, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        call()


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (lambda: draw_levels("Constant", 10**12), ValueError, "n must be at most"),
        (lambda: preference_levels(10**30), ValueError, "n must be at most"),
        (lambda: draw_levels("Constant", 2.5), TypeError, "n"),
        (lambda: draw_levels(["Constant"], 3), TypeError, "profile"),
        (lambda: preference_levels(10, fractions=("0.5", "0.4", "0.1")), TypeError, "fractions"),
        (lambda: preference_levels(10, fractions=(np.nan, 0.5, 0.5)), ValueError, "fractions"),
    ],
)
def test_hostile_inputs_are_refused_by_name(call, error: type, message: str) -> None:
    with pytest.raises(error, match=message):
        call()
