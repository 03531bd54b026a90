"""The trusted shuffler of the shuffle model: a uniformly random permutation of the reports."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from shuffle_lib._validation import RngLike, as_rng, check_array


def shuffle(reports: ArrayLike, rng: RngLike = None) -> np.ndarray:
    r"""Return the reports in uniformly random order (a permutation drawn from all :math:`n!`).

    The analyst sees only the multiset of reports: any symmetric function of the input (counts,
    sums, histograms) is unchanged, and the position of a report says nothing about its sender
    (Bittau et al. 2017; Erlingsson et al. 2019; Cheu et al. 2019). Rows are permuted along the
    first axis; the input is not modified and keeps its dtype. Reports are finite numbers (or
    booleans); strings, NaN and infinities are refused.

    >>> sorted(shuffle([0.3, 0.1, 0.2], rng=0).tolist())
    [0.1, 0.2, 0.3]
    """
    is_bool_array = isinstance(reports, np.ndarray) and reports.dtype == bool
    if not is_bool_array:
        check_array(reports, "reports", allow_empty=True)
    arr = np.asarray(reports)
    if arr.ndim == 0 or arr.shape[0] == 0:
        raise ValueError(f"reports must be a non-empty array, got {reports!r}")
    return arr[as_rng(rng).permutation(arr.shape[0])]
