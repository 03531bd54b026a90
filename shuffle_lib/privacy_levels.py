r"""Populations of personal privacy levels used by Chen, Cao & Ge (GSPA).

- Table 2 of GSPA (and "Unif 3" of its SGD experiment): :data:`PROFILES`, drawn with
  :func:`draw_levels`.
- The conservative / moderate / liberal users of its mean and frequency experiments (fractions
  0.54 / 0.37 / 0.09 after Acquisti & Grossklags 2005): :func:`preference_levels`.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from shuffle_lib._validation import (
    RngLike,
    as_rng,
    check_array,
    check_epsilon,
    check_instance,
    check_integer,
)

MAX_USERS = 10**7  # the largest population drawn at once (80 MB of levels)

#: GSPA, Table 2, plus "Unif 3" = U(0.5, 1) from its SGD experiment: name -> description.
PROFILES = {
    "Unif 1": "U(0.01, 1)",
    "Unif 2": "U(0.01, 2)",
    "Unif 3": "U(0.5, 1)",
    "Constant": "0.5 for everybody",
    "Mixed constant": "half at 0.5, half at 0.01",
}


def draw_levels(profile: str, n: int, rng: RngLike = None) -> np.ndarray:
    r"""``n`` personal levels :math:`\varepsilon_i` from one of the :data:`PROFILES`
    (GSPA, Table 2). The mixed profile gives exactly :math:`\lfloor n/2\rfloor` users 0.5, in
    random positions. At most ``MAX_USERS`` (1e7) users.

    >>> draw_levels("Constant", 3).tolist()
    [0.5, 0.5, 0.5]
    """
    check_instance(profile, "profile", str)
    size = check_integer(n, "n", 1, MAX_USERS)
    gen = as_rng(rng)
    ranges = {"Unif 1": (0.01, 1.0), "Unif 2": (0.01, 2.0), "Unif 3": (0.5, 1.0)}
    if profile in ranges:
        return gen.uniform(*ranges[profile], size)
    if profile == "Constant":
        return np.full(size, 0.5)
    if profile == "Mixed constant":
        return gen.permutation(np.where(np.arange(size) < size // 2, 0.5, 0.01))
    raise ValueError(f"profile must be one of {list(PROFILES)}, got {profile!r}")


def preference_levels(
    n: int,
    fractions: ArrayLike = (0.54, 0.37, 0.09),
    levels: ArrayLike = (0.1, 0.5, 1.0),
    rng: RngLike = None,
) -> np.ndarray:
    r"""Levels of ``n`` users split at random into conservative, moderate and liberal groups
    (GSPA, mean and frequency experiments: fractions
    :math:`f_{\mathrm{con}}, f_{\mathrm{mod}}, f_{\mathrm{lib}}` = 0.54 / 0.37 / 0.09 and levels
    :math:`\varepsilon_{\mathrm{con}}, \varepsilon_{\mathrm{mod}}, \varepsilon_{\mathrm{lib}}` =
    0.1 / 0.5 / 1 by default). Group sizes are the rounded fractions (the liberal group takes
    the remainder). At most ``MAX_USERS`` (1e7) users.

    >>> np.bincount(np.searchsorted([0.1, 0.5, 1.0], preference_levels(100, rng=0))).tolist()
    [54, 37, 9]
    """
    size = check_integer(n, "n", 1, MAX_USERS)
    shares = check_array(fractions, "fractions")
    values = check_epsilon(levels, "levels", positive=True)
    if shares.shape != (3,) or values.shape != (3,):
        raise ValueError("fractions and levels must each hold three values (C, M, L)")
    if (shares < 0).any() or not np.isclose(shares.sum(), 1.0):
        raise ValueError(f"fractions must be non-negative and sum to 1, got {fractions!r}")
    counts = np.round(shares[:2] * size).astype(int)
    counts = np.append(counts, size - counts.sum())
    if counts[-1] < 0:
        raise ValueError(f"fractions {fractions!r} leave no room for the liberal group")
    return as_rng(rng).permutation(np.repeat(values, counts))
