"""Shared fixtures and helpers for the test suite."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

CHROMIUM = Path(os.environ.get("CHROMIUM", "/usr/bin/chromium"))


@pytest.fixture
def rng() -> np.random.Generator:
    """A fixed-seed generator so every Monte-Carlo test is reproducible."""
    return np.random.default_rng(20261121)



@pytest.fixture(scope="session")
def chromium() -> Path:
    """The Chromium binary of the browser tests (the website, JupyterLab); skips, with the reason
    in the ``-rs`` summary, when it or Playwright is missing."""
    try:
        import playwright.async_api  # noqa: F401
    except ImportError as error:
        pytest.skip(f"browser test skipped: Playwright is not installed ({error}); "
                    "`make setup` installs it")
    if not CHROMIUM.is_file():
        pytest.skip(f"browser test skipped: no Chromium at {CHROMIUM} (Debian: "
                    "`apt-get install chromium`, which .ci/run does; or set CHROMIUM=/path)")
    return CHROMIUM
