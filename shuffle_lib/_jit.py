"""Compiled loops: numba's machine-code cache where it can be written, no cache where it cannot.

``numba.njit(cache=True)`` keeps compiled code on disk: in the package's ``__pycache__`` when that
is writable, else in ``NUMBA_CACHE_DIR`` or the user's cache folder. When none of them can be
written (a read-only installation run by a user without a writable home), numba refuses to
decorate the function at all (``RuntimeError: cannot cache function ...: no locator available``),
so importing the module would fail. :func:`cached_njit` falls back to a plain ``njit`` there:
the function is compiled again in each process, and nothing is printed.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from numba import njit

#: numba's message when it finds no writable cache folder for a function.
NO_CACHE_LOCATOR = "no locator available"


def cached_njit(function: Callable[..., Any]) -> Callable[..., Any]:
    """``numba.njit(cache=True)(function)`` where numba can cache it on disk, else
    ``numba.njit(function)``: same compiled code, same results, only the on-disk cache differs."""
    try:
        return njit(cache=True)(function)
    except RuntimeError as error:
        if NO_CACHE_LOCATOR not in str(error):
            raise
        return njit(function)
