"""cached_njit: numba's on-disk cache where it can be written, a silent plain njit where not.

The end-to-end check (a wheel installed read-only, run by a user without a writable home) is in
``test_wheel.py``; here the same situation is made in-process by refusing every cache folder.
"""

from __future__ import annotations

import warnings

import numba
import numpy as np
import pytest
from numba.core import caching

from shuffle_lib import _jit
from shuffle_lib._jit import cached_njit


def _sum_of_squares(values: np.ndarray) -> float:  # compiled by the tests below
    total = 0.0
    for value in values:
        total += value * value
    return total


def _refuse(self: object) -> None:
    raise PermissionError("read-only file system")


def test_cached_where_a_cache_folder_is_writable() -> None:
    compiled = cached_njit(_sum_of_squares)
    assert isinstance(compiled._cache, caching.FunctionCache)
    assert compiled(np.array([1.0, 2.0])) == 5.0


def test_no_writable_cache_folder_falls_back_silently(monkeypatch: pytest.MonkeyPatch) -> None:
    # every locator (the package's __pycache__, NUMBA_CACHE_DIR, the user's cache) is refused
    monkeypatch.setattr(caching._CacheLocator, "ensure_cache_path", _refuse)
    with pytest.raises(RuntimeError, match=_jit.NO_CACHE_LOCATOR):
        numba.njit(cache=True)(_sum_of_squares)  # what the decorator alone would do at import
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        compiled = cached_njit(_sum_of_squares)
        assert compiled(np.array([1.0, 2.0, 3.0])) == 14.0
    assert isinstance(compiled._cache, caching.NullCache)


def test_other_errors_are_not_hidden(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(**options: object) -> object:
        raise RuntimeError("something else")

    monkeypatch.setattr(_jit, "njit", broken)
    with pytest.raises(RuntimeError, match="something else"):
        cached_njit(_sum_of_squares)
