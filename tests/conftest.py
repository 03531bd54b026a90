"""Shared fixtures and helpers for the test suite."""

from __future__ import annotations

import numpy as np
import pytest


@pytest.fixture
def rng() -> np.random.Generator:
    """A fixed-seed generator so every Monte-Carlo test is reproducible."""
    return np.random.default_rng(20261121)

