r"""Privacy amplification by shuffling: how private is the shuffled output of :math:`n`
:math:`\varepsilon_0`-LDP reports?

Upper bounds (every function returns an epsilon that is never below the true one):

- closed forms of Feldman, McMillan & Talwar (2021), as quoted in Canonne's blog post
  "Privacy Doona" (its equation 1), and the paper's Theorem 3.1;
- the numerical "clone" bound: the exact hockey-stick divergence of the two clone distributions
  of their reduction, and its stronger variant from the SODA 2023 follow-up (whose erratum
  withdrew the general proof; :mod:`shuffle_lib.accounting.decomposition` proves it for every
  randomizer);
- older baselines: Erlingsson et al. (2019) and the privacy blanket of Balle et al. (2019).

Lower bound: the exact privacy curve of shuffled binary randomized response on chosen datasets,
a floor that no valid general bound can go below.

Conventions: ``eps0`` is the local level, ``n`` the number of users, ``delta`` the target.
Numerical bounds state their tolerance and round toward the safe side. Every function takes
``delta`` >= 1e-300 (the numerical ones >= 1e-150) and refuses what is outside its stated range
with ``ValueError`` (``TypeError`` for a wrong type, such as ``n`` given as a string).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike
from scipy.optimize import brentq
from scipy.signal import fftconvolve
from scipy.special import expit, log_ndtr

from shuffle_lib._numerics import (
    EPS_TOL,
    bisect,
    certified_epsilon,
    scalar_or_array,
    smallest_certified_eps,
)
from shuffle_lib._validation import (
    RngLike,
    as_rng,
    check_array,
    check_delta,
    check_epsilon,
    check_integer,
    check_probability,
    check_real,
)
from shuffle_lib.accounting._binomial import (
    TRUNCATION,
    UNDERFLOW,
    CloneCountReduction,
    binomial_bulk,
    binomial_pmf,
    fft_error_bound,
    value_rtol,
)

VARIANTS = ("fmt21", "stronger")
#: Smallest delta any accountant here takes (ln(4 / delta) stays finite); the numerical ones
#: need more (:data:`DELTA_MIN`).
CLOSED_FORM_DELTA_MIN = 1e-300


def _check_common(eps0: ArrayLike, n: ArrayLike, delta: ArrayLike) -> tuple[np.ndarray, ...]:
    eps0_arr = check_epsilon(eps0, "eps0")
    n_float = check_array(n, "n", low=2)  # numbers only: no string, bool, NaN or infinity
    if not np.array_equal(n_float, np.round(n_float)):
        raise ValueError(f"n must be an integer number of users, got {n!r}")
    n_arr = check_array(n, "n", integer=True)  # exact int64 (values from 2^62 refused)
    delta_arr = check_delta(delta, allow_zero=False)
    if (delta_arr < CLOSED_FORM_DELTA_MIN).any():
        raise ValueError(f"delta must be at least {CLOSED_FORM_DELTA_MIN:g}, got {delta!r}")
    return eps0_arr, n_arr, delta_arr


def fmt21_validity_limit(n: ArrayLike, delta: ArrayLike) -> np.ndarray | float:
    r"""Largest :math:`\varepsilon_0` for which the closed forms hold:
    :math:`\ln\bigl(n / (16\ln(2/\delta))\bigr)` (Feldman, McMillan & Talwar 2021, Theorem 3.1).

    >>> round(fmt21_validity_limit(100_000, 1e-6), 4)
    6.0656
    """
    _, n_arr, delta_arr = _check_common(0.0, n, delta)
    return scalar_or_array(np.log(n_arr / (16 * np.log(2 / delta_arr))))


def _check_closed_form_regime(eps0: np.ndarray, n: np.ndarray, delta: np.ndarray) -> None:
    limit = np.log(n / (16 * np.log(2 / delta)))
    bad = eps0 > limit
    if np.any(bad):
        offending = np.broadcast_to(eps0, bad.shape)[bad]
        limits = np.broadcast_to(limit, bad.shape)[bad]
        raise ValueError(
            "the closed form needs eps0 <= ln(n / (16 ln(2/delta))); "
            f"got eps0={offending} with limit {limits}"
        )


def _round_up(value: np.ndarray, eps0: np.ndarray) -> np.ndarray:
    """A closed form's value rounded up past the few roundings of its evaluation (16 units of
    roundoff, plus 4 steps of the smallest double where it underflows); 0 only where
    ``eps0 = 0``, where the bound itself is 0."""
    up = value * (1 + 16 * np.finfo(float).eps) + 4 * np.nextafter(0.0, 1.0)
    return np.where(eps0 > 0, up, 0.0)


def fmt21_closed_form_epsilon(
    eps0: ArrayLike, n: ArrayLike, delta: ArrayLike
) -> np.ndarray | float:
    r"""Feldman, McMillan & Talwar (2021), as quoted in Canonne's "Privacy Doona", equation (1):
    :math:`\varepsilon=\ln\Bigl(1+16\,\frac{e^{\varepsilon_0}-1}{e^{\varepsilon_0}+1}
    \sqrt{\frac{e^{\varepsilon_0}\ln(4/\delta)}{n}}\Bigr)`.

    Upper bound, valid for every :math:`\varepsilon_0`-LDP randomizer when
    :math:`\varepsilon_0\le\ln(n/(16\ln(2/\delta)))`; raises ``ValueError`` otherwise. It follows
    from :func:`fmt21_theorem_epsilon` under that condition. Rounded up (positive for every
    positive ``eps0``, even where it underflows); nothing overflows, as the condition keeps
    ``eps0`` below about 40.

    >>> round(fmt21_closed_form_epsilon(4.0, 100_000, 1e-6), 4)
    0.8776
    """
    eps0_arr, n_arr, delta_arr = _check_common(eps0, n, delta)
    _check_closed_form_regime(eps0_arr, n_arr, delta_arr)
    shrink = np.tanh(eps0_arr / 2)  # (e^eps0 - 1) / (e^eps0 + 1)
    root = np.sqrt(np.exp(eps0_arr) * np.log(4 / delta_arr) / n_arr)
    return scalar_or_array(_round_up(np.log1p(16 * shrink * root), eps0_arr))


def fmt21_theorem_epsilon(eps0: ArrayLike, n: ArrayLike, delta: ArrayLike) -> np.ndarray | float:
    r"""Feldman, McMillan & Talwar (2021), Theorem 3.1:
    :math:`\varepsilon=\ln\Bigl(1+\frac{e^{\varepsilon_0}-1}{e^{\varepsilon_0}+1}
    \Bigl(8\sqrt{\frac{e^{\varepsilon_0}\ln(4/\delta)}{n}}+\frac{8e^{\varepsilon_0}}{n}\Bigr)\Bigr)`.

    Upper bound for every :math:`\varepsilon_0`-LDP randomizer when
    :math:`\varepsilon_0\le\ln(n/(16\ln(2/\delta)))`; raises ``ValueError`` otherwise.
    Rounded up (positive for every positive ``eps0``; the condition keeps ``eps0`` below 40).

    >>> round(fmt21_theorem_epsilon(4.0, 100_000, 1e-6), 4)
    0.5346
    """
    eps0_arr, n_arr, delta_arr = _check_common(eps0, n, delta)
    _check_closed_form_regime(eps0_arr, n_arr, delta_arr)
    shrink = np.tanh(eps0_arr / 2)
    grow = np.exp(eps0_arr)
    bracket = 8 * np.sqrt(grow * np.log(4 / delta_arr) / n_arr) + 8 * grow / n_arr
    return scalar_or_array(_round_up(np.log1p(shrink * bracket), eps0_arr))


REGIMES = ("small", "large-log", "large")


def fmt21_regime_approximation(
    eps0: ArrayLike, n: ArrayLike, delta: ArrayLike, regime: str
) -> np.ndarray | float:
    r"""Canonne's two-regime reading of the bound ("Privacy Doona", text after equation (1)):

    - ``"small"`` (:math:`\varepsilon_0\ll 1`): :math:`8\varepsilon_0\sqrt{\ln(4/\delta)/n}`,
      the first-order expansion of equation (1);
    - ``"large-log"`` (:math:`\varepsilon_0\gg 1`, equation (2)):
      :math:`\ln\bigl(1+8\sqrt{e^{\varepsilon_0}\ln(4/\delta)/n}\bigr)`;
    - ``"large"`` (equation (3)): :math:`8e^{\varepsilon_0/2}\sqrt{\ln(4/\delta)/n}`.

    Equations (2)-(3) carry the constant 8 of Theorem 3.1 (:func:`fmt21_theorem_epsilon`), not the
    16 of equation (1). Approximations, not bounds. ``delta`` at least 1e-300; ``"large-log"`` is
    evaluated in log space (finite for every finite ``eps0``); ``ValueError`` where the value of
    ``"large"`` (``eps0`` above about 1400) or ``"small"`` overflows.

    >>> round(fmt21_regime_approximation(0.1, 10_000, 1e-6, "small"), 4)
    0.0312
    """
    if regime not in REGIMES:
        raise ValueError(f"regime must be one of {REGIMES}, got {regime!r}")
    eps0_arr, n_arr, delta_arr = _check_common(eps0, n, delta)
    root = np.sqrt(np.log(4 / delta_arr) / n_arr)
    with np.errstate(over="ignore"):
        if regime == "small":
            value = 8 * eps0_arr * root
        elif regime == "large-log":
            value = np.logaddexp(0.0, np.log(8.0) + eps0_arr / 2 + np.log(root))
        else:
            value = 8 * np.exp(eps0_arr / 2) * root
    if not np.isfinite(value).all():
        raise ValueError(f"eps0 is so large that the approximation overflows, got {eps0!r}")
    return scalar_or_array(value)


#: Largest number of users the numerical accountants certify (tested to 1e10).
N_MAX = 10**10
#: Smallest target delta they certify (the underflow allowance, 1e-240 times e^eps, stays far below
#: it up to eps0 = EPS0_MAX).
DELTA_MIN = 1e-150
#: Largest local level they certify.
EPS0_MAX = 100.0
#: Largest number of draws of :func:`sample_clone_pair` (a few arrays of that length).
SAMPLE_MAX = 10**7


def _check_numerical_range(eps0: np.ndarray, n: np.ndarray, delta: np.ndarray) -> None:
    if (n > N_MAX).any():
        raise ValueError(f"n must be at most {N_MAX:.0e} for the numerical accountants, got {n}")
    if (delta < DELTA_MIN).any():
        raise ValueError(f"delta must be at least {DELTA_MIN} for the numerical accountants, "
                         f"got {delta}")
    if (eps0 > EPS0_MAX).any():
        raise ValueError(f"eps0 must be at most {EPS0_MAX} for the numerical accountants, "
                         f"got {eps0}")


def _clone_reduction(
    eps0: float, n: int, clone_probability: float, truncation: float
) -> CloneCountReduction:
    """The clone pair for fixed (eps0, n, q_c): n - 1 people, each a clone with probability q_c."""
    return CloneCountReduction(
        np.array([clone_probability]), np.array([n - 1]), eps0, truncation
    )


def _gaussian_guess(eps0: float, n: int, clone_probability: float, delta: float) -> float:
    """A first guess for the root search: given about (n - 1) q clones, the pair is a shift by
    tanh(eps0 / 2) under noise of standard deviation sqrt((n - 1) q) / 2, i.e. roughly mu-GDP with
    mu = 2 tanh(eps0 / 2) / sqrt((n - 1) q); its epsilon at delta (Dong, Roth & Su 2022,
    Corollary 2.13, in log space). Only a starting point: nothing is certified from it."""
    mu = 2 * np.tanh(eps0 / 2) / np.sqrt(max(1.0, (n - 1) * clone_probability))
    if mu == 0:  # eps0 = 0 (or subnormal): the reports carry no information, nothing to locate
        return eps0 / 2

    def excess(e: float) -> float:
        first, second = log_ndtr(mu / 2 - e / mu), e + log_ndtr(-mu / 2 - e / mu)
        return first + np.log1p(-min(np.exp(second - first), 1 - 1e-16)) - np.log(delta)

    if excess(0.0) <= 0 or excess(eps0) >= 0:
        return eps0 / 2
    # the floor keeps the tolerance positive for a subnormal eps0
    return float(brentq(excess, 0.0, eps0, xtol=max(1e-6 * eps0, np.finfo(float).tiny)))


def clone_reduction_delta(eps: float, eps0: float, n: int, clone_probability: float) -> float:
    r"""Certified upper bound on :math:`\delta(\varepsilon)` of the clone reduction.

    With :math:`C\sim\mathrm{Bin}(n-1,q_c)`, :math:`A\sim\mathrm{Bin}(C,1/2)`,
    :math:`B\sim\mathrm{Bern}(k_t)` with :math:`k_t=e^{\varepsilon_0}/(e^{\varepsilon_0}+1)` (the
    target's bit), the two laws are :math:`P=(A+B,\ C-A+1-B)` and :math:`Q=(A+1-B,\ C-A+B)`
    (Feldman, McMillan & Talwar 2021). Returns :math:`H_{e^\varepsilon}(P\|Q)`
    (equal to :math:`H_{e^\varepsilon}(Q\|P)`: swapping the coordinates exchanges P and Q). Given
    :math:`C=c` the likelihood ratio increases in the first coordinate, so each :math:`c` costs one
    binomial tail and one probability (SciPy's Boost routines); the sum runs over the bulk of
    :math:`C` and adds back the mass of the two tails left out (a fixed 1e-120 at most, in all;
    :func:`clone_numerical_epsilon` uses about 1e-12 delta instead), plus a bound on its own
    rounding error: an upper bound on the exact value, within 1e-6 relative (plus 1e-120) where
    the tests compare it with 40-digit values. The error bar is proportionate: each count's is
    relative to its own divergence, even where that is a small difference of two tail terms (small
    :math:`\varepsilon` at huge n), so it stays near 1e-8 of the value at n = 1e10 and
    delta = 1e-12 and below 2e-6 at delta = 1e-150.

    >>> clone_reduction_delta(1.0, 1.0, 1000, float(np.exp(-1.0)))
    0.0
    """
    eps_val = float(check_epsilon(eps))
    eps0_val = float(check_epsilon(eps0, "eps0"))
    n_val = check_integer(n, "n", 2)
    q = float(check_probability(clone_probability, "clone_probability"))
    _check_numerical_range(np.asarray(eps0_val), np.asarray(n_val), np.asarray(DELTA_MIN))
    return _clone_reduction(eps0_val, n_val, q, 1e-120).bound(eps_val)[0]


def sample_clone_pair(
    eps0: float, n: int, size: int, variant: str = "fmt21", rng: RngLike = None
) -> tuple[np.ndarray, np.ndarray]:
    r"""Draw ``size`` samples of the first coordinate :math:`A+B` under :math:`P` and
    :math:`A+1-B` under :math:`Q` of the clone reduction, with :math:`B\sim\mathrm{Bern}(k_t)` the
    target's bit and :math:`k_t=e^{\varepsilon_0}/(e^{\varepsilon_0}+1)` (the pair is defined in
    :func:`clone_reduction_delta`): what an analyst sees in the reduced problem, for simulations and
    pictures. ``n`` at most :data:`N_MAX` (1e10) and ``size`` at most :data:`SAMPLE_MAX` (1e7);
    ``ValueError`` beyond. Any finite ``eps0 >= 0`` (the draws need no exponential that could
    overflow: at huge levels nobody is a clone and the bit is always told).

    >>> first, second = sample_clone_pair(1.0, 100, 5, rng=0)
    >>> first.shape, second.shape
    ((5,), (5,))
    """
    eps0_val = float(check_epsilon(eps0, "eps0"))
    n_val = check_integer(n, "n", 2, N_MAX)
    draws = check_integer(size, "size", 1, SAMPLE_MAX)
    gen = as_rng(rng)
    q = clone_probability(eps0_val, variant)
    samples = []
    for _ in range(2):  # independent draws for P and for Q
        clones = gen.binomial(n_val - 1, q, size=draws)
        heads = gen.binomial(clones, 0.5)
        truthful = gen.random(draws) < expit(eps0_val)
        samples.append((heads, truthful))
    (heads_p, truth_p), (heads_q, truth_q) = samples
    return heads_p + truth_p, heads_q + 1 - truth_q


def clone_probability(eps0: float, variant: str = "fmt21") -> float:
    r"""Probability that another user's report is a clone of the target's:
    :math:`e^{-\varepsilon_0}` (``"fmt21"``), or :math:`2/(e^{\varepsilon_0}+1)` (``"stronger"``);
    both give bounds for every :math:`\varepsilon_0`-LDP randomizer (see
    :func:`clone_numerical_epsilon` for the second's proof). Any finite ``eps0 >= 0``; past
    about 745 the probability underflows to 0, the safe side (fewer clones, less blanket).

    >>> round(clone_probability(1.0, "stronger"), 6)
    0.537883
    """
    eps0 = float(check_epsilon(eps0, "eps0"))
    if variant == "fmt21":
        return float(np.exp(-eps0))
    if variant == "stronger":
        return float(2 * expit(-eps0))  # 2 / (e^eps0 + 1) without overflow
    raise ValueError(f"variant must be one of {VARIANTS}, got {variant!r}")


def clone_numerical_epsilon(
    eps0: ArrayLike, n: ArrayLike, delta: ArrayLike, variant: str = "fmt21"
) -> np.ndarray | float:
    r"""Numerical amplification bound from the clone reduction: the smallest :math:`\varepsilon`
    with :func:`clone_reduction_delta` :math:`\le\delta`, rounded up.

    Certified: the returned :math:`\varepsilon` is one where the computed divergence *plus its
    error bound* (rounding of every tail and probability, truncated mass of the clone count's two
    tails, about :math:`10^{-12}\delta` at most in all) is at most :math:`\delta`, so it is never
    below the exact value of the reduction; the root search stops within 1e-10 relative, and the
    tests find it within 1e-6 of 40-digit values (median 4e-12) at the corners of the range, where
    the divergence's error bar (relative to each count's value, see :func:`clone_reduction_delta`)
    moves epsilon by about 1e-9 at most. Range: :math:`n\le 10^{10}`,
    :math:`\delta\ge 10^{-150}`, :math:`\varepsilon_0\le 100`; ``ValueError`` beyond. Vectorized
    over ``eps0``, ``n`` and ``delta`` (broadcast together).

    - ``variant="fmt21"``: clone probability :math:`q_c=e^{-\varepsilon_0}`, valid for every
      :math:`\varepsilon_0`-LDP randomizer (Feldman, McMillan & Talwar 2021).
    - ``variant="stronger"``: :math:`q_c=2/(e^{\varepsilon_0}+1)` (Feldman, McMillan & Talwar,
      SODA 2023). That paper's erratum withdrew its proof for general randomizers and restricts
      its theorems to a class that includes binary and k-ary randomized response. The bound
      holds for **every** :math:`\varepsilon_0`-LDP randomizer (one randomizer for all users,
      chosen in advance) by another route: the neutral-clone decomposition and the monotonicity
      of its reduction, :mod:`shuffle_lib.accounting.decomposition`, whose tests check it by
      exhaustive enumeration (Wang et al., PVLDB 2024, compute the same pair for a generic
      randomizer).

    Returns :math:`\varepsilon_0` when no amplification can be certified (shuffling never hurts).

    >>> 0.1675 <= clone_numerical_epsilon(4.0, 100_000, 1e-6) <= 0.1728
    True
    """
    if variant not in VARIANTS:
        raise ValueError(f"variant must be one of {VARIANTS}, got {variant!r}")
    eps0_arr, n_arr, delta_arr = _check_common(eps0, n, delta)

    _check_numerical_range(eps0_arr, n_arr, delta_arr)

    def one(e0: float, users: int, d: float) -> float:
        q = clone_probability(e0, variant)
        reduction = _clone_reduction(e0, int(users), q, TRUNCATION * d)
        return certified_epsilon(reduction.bound, e0, d, _gaussian_guess(e0, int(users), q, d))

    return scalar_or_array(np.vectorize(one, otypes=[float])(eps0_arr, n_arr, delta_arr))


def fmt21_numerical_epsilon(eps0: ArrayLike, n: ArrayLike, delta: ArrayLike) -> np.ndarray | float:
    r"""The numerical bound of Feldman, McMillan & Talwar (2021) for any
    :math:`\varepsilon_0`-LDP randomizer: :func:`clone_numerical_epsilon` with
    ``variant="fmt21"`` (upper bound, rounded up).

    >>> round(fmt21_numerical_epsilon(1.0, 10_000, 1e-6), 3) < 0.2
    True
    """
    return clone_numerical_epsilon(eps0, n, delta, variant="fmt21")


def erlingsson19_epsilon(eps0: ArrayLike, n: ArrayLike, delta: ArrayLike) -> np.ndarray | float:
    r"""Erlingsson et al. (2019): :math:`\varepsilon = 12\,\varepsilon_0\sqrt{\ln(1/\delta)/n}`,
    proved for :math:`\varepsilon_0\le 1/2`, :math:`n\ge 1000`, :math:`\delta\le 1/100`
    (``ValueError`` outside). Capped at :math:`\varepsilon_0`, which always holds; rounded up.

    >>> round(erlingsson19_epsilon(0.5, 10_000, 1e-6), 3)
    0.223
    """
    eps0_arr, n_arr, delta_arr = _check_common(eps0, n, delta)
    if (eps0_arr > 0.5).any() or (n_arr < 1000).any() or (delta_arr > 0.01).any():
        raise ValueError(
            "Erlingsson et al. (2019) is proved for eps0 <= 1/2, n >= 1000, delta <= 1/100; "
            f"got eps0={eps0}, n={n}, delta={delta}"
        )
    value = _round_up(12 * eps0_arr * np.sqrt(np.log(1 / delta_arr) / n_arr), eps0_arr)
    return scalar_or_array(np.minimum(value, eps0_arr))


def _check_randomizer(randomizer: str | tuple) -> None:
    if randomizer == "generic":
        return
    if isinstance(randomizer, tuple) and len(randomizer) == 2 and randomizer[0] == "krr":
        check_integer(randomizer[1], "k", 2)
        return
    raise ValueError(f"randomizer must be 'generic' or ('krr', k), got {randomizer!r}")


def _blanket_parameters(
    eps: np.ndarray, eps0: float, randomizer: str | tuple
) -> tuple[float, float, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """For 0 < eps < eps0 (an array): ln gamma, gamma, ln b, a / b and ln(a / b) of
    :func:`bbgn19_delta` (a = e^eps - 1), each within a few units of roundoff and finite (no
    e^eps0 or e^eps is ever formed; a / b is taken directly, not from logarithms, as its error is
    multiplied by n); ln(a / b) is -inf where tanh(eps / 2) underflows. Last, the size of the
    logarithms they are made of, which scales their absolute rounding error."""
    half = np.tanh(eps / 2)  # a / (e^eps + 1)
    log_eps_term = np.logaddexp(eps, 0.0)  # ln(e^eps + 1)
    tail = float(np.exp(-eps0))
    with np.errstate(divide="ignore"):
        log_half = np.log(half)
    if randomizer == "generic":
        width = float(-np.expm1(-2 * eps0))  # (e^eps0 - e^-eps0) e^-eps0
        log_width = float(np.log(width))
        size = log_eps_term + 2 * eps0 + abs(log_width) + np.abs(log_half)
        return (-eps0, tail, log_eps_term + eps0 + log_width, half * tail / width,
                log_half - eps0 - log_width, size)
    k = int(randomizer[1])
    shared = 1 + (k - 1) * tail  # (e^eps0 + k - 1) e^-eps0
    rest = float(-np.expm1(-eps0)) / shared  # 1 - gamma
    log_gamma = float(np.log(k)) - eps0 - float(np.log1p((k - 1) * tail))
    log_rest = float(np.log(rest * k))
    size = log_eps_term + 2 * eps0 + abs(log_rest) + np.abs(log_half) + float(np.log(k))
    return (log_gamma, k * tail / shared, log_rest + log_eps_term, half / (rest * k),
            log_half - log_rest, size)


def bbgn19_delta(eps: float, eps0: float, n: int, randomizer: str | tuple = "generic") -> float:
    r"""Privacy-blanket bound of Balle, Bell, Gascón & Nissim (2019), Hoeffding form:
    :math:`\delta(\varepsilon)=\frac{b^2}{4a\gamma n}\bigl(1-\gamma(1-e^{-2a^2/b^2})\bigr)^n`,
    :math:`a=e^\varepsilon-1`, with blanket probability :math:`\gamma` and range :math:`b` of the
    privacy amplification variable: generic randomizers :math:`\gamma=e^{-\varepsilon_0}`,
    :math:`b=(e^\varepsilon+1)(e^{\varepsilon_0}-e^{-\varepsilon_0})`; k-ary randomized response
    :math:`\gamma=k/(e^{\varepsilon_0}+k-1)`, :math:`b=(1-\gamma)k(e^\varepsilon+1)`. The constants
    follow the authors' published implementation of their bound. Upper bound, capped at 1,
    evaluated in log space (any finite :math:`\varepsilon,\varepsilon_0\ge 0` and :math:`n\ge 2`)
    and rounded up (to the smallest double where it underflows); 0 for
    :math:`\varepsilon\ge\varepsilon_0`, 1 at :math:`\varepsilon=0`.

    >>> bbgn19_delta(0.5, 0.5, 1000) == 0.0
    True
    """
    eps_val = float(check_epsilon(eps))
    eps0_val = float(check_epsilon(eps0, "eps0"))
    n_val = check_integer(n, "n", 2)
    _check_randomizer(randomizer)  # on every branch, the early returns included
    return float(_blanket_delta(eps_val, eps0_val, n_val, randomizer))


def _blanket_delta(eps: ArrayLike, eps0: float, n: int, randomizer: str | tuple) -> np.ndarray:
    """:func:`bbgn19_delta` for arguments already checked, vectorized over ``eps`` (its epsilon
    search scans a grid with one call)."""
    eps_arr = np.asarray(eps, dtype=float)
    inside = (eps_arr > 0) & (eps_arr < eps0)
    # the formula on 0 < eps < eps0 only (a stand-in elsewhere, replaced below)
    at = np.where(inside, eps_arr, eps0 / 2)
    log_gamma, gamma, log_spread, a_over_b, log_a_over_b, size = _blanket_parameters(
        at, eps0, randomizer)
    ratio = 2 * a_over_b * a_over_b  # 2 a^2 / b^2
    # ln(b^2 / (4 a gamma n)) + n ln(1 - gamma (1 - e^(-2 a^2 / b^2)))
    terms = (log_spread, -log_a_over_b, -np.log(4.0), -log_gamma, -np.log(float(n)),
             n * np.log1p(gamma * np.expm1(-ratio)))
    log_delta = sum(terms)
    # round up: a few units of roundoff of every term and of what they are made of (eps0,
    # ln tanh(eps / 2)), the final exponential's own included
    log_delta = log_delta + 8 * np.finfo(float).eps * (sum(np.abs(t) for t in terms) + size + 4)
    # a bound below the smallest double rounds up to it, never down to 0 (it is positive)
    bound = np.minimum(1.0, np.maximum(np.exp(np.minimum(log_delta, 0.0)), np.nextafter(0.0, 1.0)))
    return np.where(inside, bound, np.where(eps_arr >= eps0, 0.0, 1.0))


def bbgn19_epsilon(
    eps0: ArrayLike, n: ArrayLike, delta: ArrayLike, randomizer: str | tuple = "generic"
) -> np.ndarray | float:
    r"""Smallest :math:`\varepsilon` with :func:`bbgn19_delta` :math:`\le\delta`, rounded up;
    :math:`\varepsilon_0` when nothing can be certified. The Hoeffding bound is not monotone in
    :math:`\varepsilon` (its range term grows with :math:`e^\varepsilon`), so a grid scan finds the
    first certified point before the root search. ``randomizer`` is ``"generic"`` or
    ``("krr", k)`` (Balle, Bell, Gascón & Nissim 2019). ``delta`` at least 1e-300.

    >>> round(bbgn19_epsilon(4.0, 100_000, 1e-6, randomizer=("krr", 2)), 3)
    0.137
    """
    _check_randomizer(randomizer)  # validate early
    eps0_arr, n_arr, delta_arr = _check_common(eps0, n, delta)

    def one(e0: float, users: int, d: float) -> float:
        def delta_of(e: ArrayLike) -> np.ndarray:
            return _blanket_delta(e, float(e0), int(users), randomizer)

        return smallest_certified_eps(lambda e: float(delta_of(e)), e0, d, monotone=False,
                                      on_grid=delta_of)

    return scalar_or_array(np.vectorize(one, otypes=[float])(eps0_arr, n_arr, delta_arr))


#: Floors keep every count of a binomial part until the mass beyond it is below this times
#: e^-eps0 (and at least :data:`UNDERFLOW`): fixed, so that the laws, hence the floors, do not
#: depend on delta; what is left out enters as an absolute allowance per entry, which costs at
#: most about 1e-170 in delta up to eps0 = 100 (far below :data:`DELTA_MIN`).
_FLOOR_MASS = 1e-180
#: A composition with ones and zeros among the others whose two parts take more multiply-adds
#: than this to convolve directly is convolved by FFT instead (an absolute error per entry, so
#: that composition helps the floor only where delta is well above 1e-15) ...
_FLOOR_DIRECT_WORK = 2 * 10**7
#: ... with each part truncated at this mass (far below that FFT error).
_FLOOR_FFT_MASS = 1e-30
#: Binomial probabilities of the floors are taken from Boost every this many counts, from the
#: ratio of consecutive probabilities in between.
_ANCHOR_EVERY = 64
#: Relative error of a keep or flip probability computed by ``expit``.
_LEVEL_RTOL = 4 * np.finfo(float).eps
#: One unit of roundoff (machine epsilon), as a Python float.
_UNIT = float(np.finfo(float).eps)


class _CountLaw(NamedTuple):
    """A pmf on ``offset, offset + 1, ...`` known to a relative error per entry (``rtol``, a
    scalar or an array) plus an absolute one (``absolute``, the same for every entry)."""

    offset: int
    pmf: np.ndarray
    rtol: np.ndarray | float
    absolute: float


def _binomial_part(size: int, flip: float, mass: float) -> _CountLaw:
    r"""Bin(``size``, ``flip``) on its bulk (:func:`binomial_bulk` with ``mass``), for the float
    ``flip`` as given (see :func:`_others_flip`). Every :data:`_ANCHOR_EVERY`-th probability comes
    from Boost, the ones in between from the ratio
    :math:`b(x+1)/b(x)=\frac{\text{size}-x}{x+1}\,\frac{f}{1-f}` (each step within 3 units of
    roundoff: the odds, the quotient and the product). Relative error per count: Boost's at its
    anchor (:func:`value_rtol`) plus 3 units per step from it; blocks whose anchor is below
    1e-290 (no relative accuracy) are taken from Boost directly. Absolute: the mass left out and
    :data:`UNDERFLOW`."""
    if size == 0:
        return _CountLaw(0, np.ones(1), 0.0, 0.0)
    low, high, lost = binomial_bulk(size, flip, mass)
    length = high - low + 1
    if length < 4 * _ANCHOR_EVERY:
        counts = np.arange(low, high + 1)
        rtol = np.asarray(value_rtol(size, np.abs(counts - size * flip)), dtype=float)
        return _CountLaw(low, binomial_pmf(counts, size, flip), rtol, lost + UNDERFLOW)
    unit = np.finfo(float).eps
    blocks = -(-length // _ANCHOR_EVERY)
    starts = low + _ANCHOR_EVERY * np.arange(blocks)
    anchors = binomial_pmf(starts, size, flip)
    # the ratio from x to x + 1 for every count x, by blocks (floats hold these integers exactly;
    # the last column and the padding past the end are unused)
    steps = np.arange(low, low + blocks * _ANCHOR_EVERY, dtype=float)
    ratios = size - steps
    steps += 1.0
    ratios /= steps
    ratios *= flip / (1 - flip)
    pmf = np.empty((blocks, _ANCHOR_EVERY))
    pmf[:, 0] = anchors
    np.cumprod(ratios.reshape(blocks, _ANCHOR_EVERY)[:, :-1], axis=1, out=pmf[:, 1:])
    pmf[:, 1:] *= anchors[:, None]
    rtol = (np.asarray(value_rtol(size, np.abs(starts - size * flip)), dtype=float)[:, None]
            + 3 * unit * np.arange(_ANCHOR_EVERY)[None, :])
    faint = anchors < 1e-290
    if faint.any():
        grid = starts[faint, None] + np.arange(_ANCHOR_EVERY)
        pmf[faint] = binomial_pmf(np.minimum(grid, size), size, flip)
        rtol[faint] = value_rtol(size, np.abs(grid - size * flip))
    return _CountLaw(low, pmf.ravel()[:length], rtol.ravel()[:length], lost + UNDERFLOW)


def _others_flip(level: float) -> float:
    r"""The flip probability used for the users other than the target: ``expit(-level)`` (within
    :data:`_LEVEL_RTOL`, relative) rounded **up**, at most 1/2. It is the exact flip probability of
    a level at most ``level``, and randomized response at a lower level is a post-processing of
    the higher one (each report flipped again, independently; shuffling commutes), so the laws it
    gives have divergences at most the true ones: a floor needs no error term for it. (An error
    term would be large: a relative change :math:`\eta` of :math:`f` moves a binomial probability
    by about :math:`2\eta|x-mf|`, up to 1e5 times :math:`\eta` in the bulk at n = 1e10.)"""
    return min(float(expit(-level)) * (1 + 2 * _LEVEL_RTOL), 0.5)


def _reversed(law: _CountLaw, size: int) -> _CountLaw:
    """The law of ``size`` minus a count of law ``law``."""
    rtol = law.rtol[::-1] if isinstance(law.rtol, np.ndarray) else law.rtol
    return _CountLaw(size - (law.offset + law.pmf.size - 1), law.pmf[::-1], rtol, law.absolute)


def _convolved(first: _CountLaw, second: _CountLaw) -> _CountLaw:
    """The law of the sum of two independent counts: direct sums (relative errors add, plus
    (shorter length + 2) units of roundoff) or, past :data:`_FLOOR_DIRECT_WORK`, an FFT (its
    error bound, :func:`fft_error_bound`, is absolute)."""
    unit = np.finfo(float).eps
    offset = first.offset + second.offset
    absolute = (first.absolute + second.absolute) * (1 + 1e-9)
    if first.pmf.size == 1 or second.pmf.size == 1:
        single, other = (first, second) if first.pmf.size == 1 else (second, first)
        exact = single.pmf[0] == 1.0  # the law of an empty group
        if exact and not np.max(single.rtol):  # adds nothing: the other law as it is
            return other._replace(offset=offset, absolute=absolute)
        rtol = other.rtol + float(np.max(single.rtol)) + (0.0 if exact else unit)
        return _CountLaw(offset, other.pmf * single.pmf[0], rtol, absolute)
    both = float(np.max(first.rtol)) + float(np.max(second.rtol))
    if first.pmf.size * second.pmf.size <= _FLOOR_DIRECT_WORK:
        pmf = np.convolve(first.pmf, second.pmf)
        rounding = (min(first.pmf.size, second.pmf.size) + 2) * unit
        return _CountLaw(offset, pmf, both * (1 + both) + rounding, absolute)
    pmf = fftconvolve(first.pmf, second.pmf)
    np.clip(pmf, 0.0, None, out=pmf)
    absolute += fft_error_bound(first.pmf, second.pmf)
    return _CountLaw(offset, pmf, both * (1 + both) + 1e-15, absolute)


def _rr_count_laws(eps0: float, n: int, others_ones: int) -> _CountLaw:
    r"""Law of the number of ones reported by the n - 1 users other than the target, when
    ``others_ones`` of them hold 1: :math:`m-\mathrm{Bin}(m,f)+\mathrm{Bin}(n-1-m,f)` with
    :math:`f` the flip probability (:func:`_others_flip`), with a relative error per entry and an
    absolute allowance (see :class:`_CountLaw`). Only flip probabilities enter, so nothing is lost
    when the keep probability rounds to 1."""
    flip = _others_flip(eps0)
    zeros = n - 1 - others_ones
    mass = max(_FLOOR_MASS * flip, UNDERFLOW)
    if others_ones and zeros:
        # the two bulks' lengths, about 2 sqrt(2 ln(1 / mass)) standard deviations (only the
        # choice between direct sums and the FFT depends on this estimate)
        reach = 2 * np.sqrt(2 * np.log(1 / mass) * flip * (1 - flip))
        lengths = [reach * np.sqrt(m) + 3 for m in (others_ones, zeros)]
        if lengths[0] * lengths[1] > _FLOOR_DIRECT_WORK:
            mass = _FLOOR_FFT_MASS
    ones = _reversed(_binomial_part(others_ones, flip, mass), others_ones)
    return _convolved(ones, _binomial_part(zeros, flip, mass))


class _RunningSums:
    """Running sums of each of a few equally long rows of non-negative values, read at any index,
    and a relative error bound for every one of them (``rtol``): sums within blocks of about
    sqrt(size) values, then over the blocks' totals, so the bound is (block length + number of
    blocks + 2) units of roundoff instead of size units. A running sum is completed (its block's
    running sum plus the total of the blocks before it) only where it is read."""

    def __init__(self, rows: Sequence[np.ndarray]) -> None:
        size = rows[0].size
        width = self.width = max(1, int(np.sqrt(size)))
        full, blocks = size // width, -(-size // width)  # every block but the last is full
        self.inner = np.empty((len(rows), size))  # running sums within each block
        for inner, row in zip(self.inner, rows, strict=True):
            np.cumsum(row[: full * width].reshape(full, width), axis=1,
                      out=inner[: full * width].reshape(full, width))
            np.cumsum(row[full * width:], out=inner[full * width:])
        self.before = np.zeros((len(rows), blocks))  # total of the blocks before each block
        np.cumsum(self.inner[:, width - 1: (blocks - 1) * width: width], axis=1,
                  out=self.before[:, 1:])
        self.rtol = 1.01 * (self.width + blocks + 2) * _UNIT
        self._read: dict[int, list[float]] = {}

    def at(self, index: int | np.ndarray) -> np.ndarray:
        """The running sums of every row up to entry ``index`` (included): one per row, or one row
        of them per row for an array of indices."""
        return self.inner[:, index] + self.before[:, index // self.width]

    def read(self, index: int) -> list[float]:
        """:meth:`at` one index, as Python floats, remembered (a root search reads the same few
        indices again and again)."""
        if index not in self._read:
            self._read[index] = self.at(index).tolist()
        return self._read[index]


class _TargetFloor:
    r"""A lower bound on :math:`\delta(\varepsilon)=\max(H_{e^\varepsilon}(P\|Q),
    H_{e^\varepsilon}(Q\|P))` for the number of ones when a target at level :math:`L` holds 1
    (:math:`P`) or 0 (:math:`Q`) and the others' count has law :math:`o` (a :class:`_CountLaw`),
    at any :math:`\varepsilon` in :math:`O(\log N)` after an :math:`O(N\log N)` set-up.

    With :math:`k=e^L/(1+e^L)`, :math:`f=1-k`, :math:`u_x=o(x-1)`, :math:`v_x=o(x)`:
    :math:`P(x)-e^\varepsilon Q(x)=g\,u_x-\ell\,v_x` with :math:`g=k-e^\varepsilon f=
    fe^\varepsilon\,\mathrm{expm1}(L-\varepsilon)` and :math:`\ell=e^\varepsilon k-f=
    f\,\mathrm{expm1}(L+\varepsilon)`, both positive for :math:`\varepsilon<L` (and
    :math:`\delta=0` from :math:`\varepsilon=L` on), and :math:`Q(x)-e^\varepsilon P(x)=g\,v_x-
    \ell\,u_x`. The sum over **any** set :math:`S` of :math:`g\,u_x-\ell\,v_x` is at most
    :math:`H_{e^\varepsilon}(P\|Q)`; the set used is :math:`\{x:\ln(u_x/v_x)>\ln(\ell/g)\}`, the
    best one, read from running sums in increasing order of :math:`\ln(u_x/v_x)` (and the other
    direction from the other end). Each probability's error is relative (:math:`r_x`, with an
    absolute allowance :math:`a` per entry), and it enters multiplied by the small coefficients:
    the bound is :math:`g(U(1-\gamma)-R_U(1+\gamma)-a|S|)-\ell(V(1+\gamma)+R_V(1+\gamma)+a|S|)`
    with :math:`U=\sum_S u_x`, :math:`R_U=\sum_S r_xu_x` (likewise :math:`V`, :math:`R_V`),
    :math:`\gamma` the running sums' bound (:class:`_RunningSums`) and 16 units of roundoff on
    :math:`g` and :math:`\ell`. At small levels the coefficients are about :math:`L/2`, so the
    floor moves by about :math:`rL` in :math:`\varepsilon`, not :math:`2r`."""

    def __init__(self, others: _CountLaw, level: float) -> None:
        self.level, self.flip = level, float(expit(-level))
        self.absolute = max(others.absolute, UNDERFLOW)
        pmf = others.pmf
        # o and its error r o, each with a zero at both ends: u_x = o(x - 1) and v_x = o(x) (and
        # r_x u_x, r_x v_x) are windows of these rows
        padded = np.zeros((2, pmf.size + 2))
        padded[0, 1:-1] = pmf
        np.multiply(np.broadcast_to(np.asarray(others.rtol, dtype=float), pmf.shape), pmf,
                    out=padded[1, 1:-1])
        # entries below the absolute allowance add nothing to the bound (any set is allowed)
        useful = np.flatnonzero(np.maximum(padded[0, :-1], padded[0, 1:]) > self.absolute)
        with np.errstate(divide="ignore"):
            if useful.size and useful[-1] - useful[0] + 1 == useful.size:  # one run: windows
                span = padded[:, useful[0]: useful[-1] + 2]
                logs = np.log(span[0])
                key = logs[:-1] - logs[1:]
                u, v, ru, rv = span[0, :-1], span[0, 1:], span[1, :-1], span[1, 1:]
            else:  # gaps: gathered
                u, v = padded[0, useful], padded[0, useful + 1]
                ru, rv = padded[1, useful], padded[1, useful + 1]
                key = np.log(u) - np.log(v)
        rows = [u, v, ru, rv]
        # increasing for log-concave laws: no sort needed then
        if key.size > 1 and not np.all(key[1:] >= key[:-1]):
            order = np.argsort(key, kind="stable")
            key, rows = key[order], [row[order] for row in rows]
        self.key = key
        # P against Q takes the entries with the largest keys: running sums from the top
        self.top = _RunningSums([row[::-1] for row in rows])
        # Q against P takes the smallest keys: running sums from the bottom
        self.bottom = _RunningSums(rows)

    def _bound(self, sums: _RunningSums, count: np.ndarray, g: np.ndarray, ell: np.ndarray,
               forward: bool) -> np.ndarray:
        unit = _UNIT
        gamma = sums.rtol
        u, v, ru, rv = sums.at(np.maximum(count - 1, 0))
        big, small = (u, v) if forward else (v, u)
        big_r, small_r = (ru, rv) if forward else (rv, ru)
        slack = self.absolute * count
        gain = g * (1 - 16 * unit) * (big * (1 - gamma) - big_r * (1 + gamma) - slack)
        loss = ell * (1 + 16 * unit) * (small * (1 + gamma) + small_r * (1 + gamma) + slack)
        return np.where(count > 0, gain - loss, 0.0)

    def value(self, eps: float) -> float:
        """The lower bound at one ``eps``: :meth:`values` with scalar arithmetic (the many
        evaluations of a root search)."""
        if not eps < self.level:
            return 0.0
        g = self.flip * math.exp(eps) * math.expm1(self.level - eps)
        ell = self.flip * math.expm1(self.level + eps)
        if not g > 0:
            return 0.0
        tau = math.log(ell) - math.log(g)
        above = self.key.size - int(self.key.searchsorted(tau, side="right"))
        below = int(self.key.searchsorted(-tau, side="left"))
        return max(self._scalar_bound(self.top, above, g, ell, True),
                   self._scalar_bound(self.bottom, below, g, ell, False), 0.0)

    def _scalar_bound(self, sums: _RunningSums, count: int, g: float, ell: float,
                      forward: bool) -> float:
        """:meth:`_bound` for one count, in Python floats (the same operations)."""
        if count == 0:
            return 0.0
        unit = _UNIT
        gamma = sums.rtol
        u, v, ru, rv = sums.read(count - 1)
        big, small = (u, v) if forward else (v, u)
        big_r, small_r = (ru, rv) if forward else (rv, ru)
        slack = self.absolute * count
        gain = g * (1 - 16 * unit) * (big * (1 - gamma) - big_r * (1 + gamma) - slack)
        loss = ell * (1 + 16 * unit) * (small * (1 + gamma) + small_r * (1 + gamma) + slack)
        return gain - loss

    def values(self, eps: np.ndarray) -> np.ndarray:
        """The lower bound at every entry of ``eps`` (a 1-D array)."""
        inside = eps < self.level
        e = np.where(inside, eps, 0.0)
        g = self.flip * np.exp(e) * np.expm1(self.level - e)
        ell = self.flip * np.expm1(self.level + e)
        inside &= g > 0
        with np.errstate(divide="ignore", invalid="ignore"):
            tau = np.where(inside, np.log(ell) - np.log(g), 0.0)
        above = self.key.size - np.searchsorted(self.key, tau, side="right")  # key > tau
        below = np.searchsorted(self.key, -tau, side="left")  # key < -tau
        forward = self._bound(self.top, above, g, ell, True)
        backward = self._bound(self.bottom, below, g, ell, False)
        return np.where(inside, np.maximum(np.maximum(forward, backward), 0.0), 0.0)


def _floor_delta(floors: list[_TargetFloor], eps: ArrayLike) -> np.ndarray:
    """The largest of the floors' lower bounds at every ``eps`` (clipped to [0, 1])."""
    flat = np.atleast_1d(np.asarray(eps, dtype=float)).ravel()
    best = np.zeros(flat.shape)
    for floor in floors:
        best = np.maximum(best, floor.values(flat))
    return np.clip(best, 0.0, 1.0).reshape(np.shape(eps))


def _floor_epsilon(floors: list[_TargetFloor], delta: float, cap: float) -> float:
    """The largest, over the floors, of the largest eps found by bisection on [0, ``cap``] where
    the lower bound on delta(eps) is still above ``delta`` (0 if it is not even at 0), rounded
    down: a lower bound on the smallest eps with delta(eps) <= delta. Every bisection starts from
    the same bracket, so a smaller ``delta`` never gives a smaller result (the two searches take
    the same path until the first point where only the smaller delta fails, and stay above it).
    Tolerance: ``EPS_TOL`` (1e-12) relative to the result."""
    target = delta * (1 + 4 * np.finfo(float).eps)  # a value above it is certainly above delta
    best = 0.0
    for floor in floors:
        if floor.value(0.0) <= target:
            continue
        low, high = 0.0, cap  # the bound is above delta at low; at cap it is 0
        # to a relative tolerance, so that tiny epsilons keep their digits too
        while high - low > EPS_TOL * high:
            middle = (low + high) / 2
            if middle in (low, high):
                break
            if floor.value(middle) <= target:
                high = middle
            else:
                low = middle
        best = max(best, low)  # round down: a lower bound
    return best


def _rr_compositions(n: int, others_ones: int | None) -> list[int]:
    """The numbers of ones among the others that the floors try: the one given, else every
    composition up to (n - 1) / 2 when n <= 200 (m ones and n - 1 - m give the same pair of laws,
    reflected), and nine evenly spaced ones otherwise."""
    if others_ones is not None:
        return [check_integer(others_ones, "others_ones", 0)]
    half = (n - 1) // 2
    if n <= 200:
        return list(range(half + 1))
    return sorted({round(float(x)) for x in np.linspace(0, half, 9)})


def _check_floor_range(eps0: float, n: int, delta: float) -> None:
    _check_numerical_range(np.asarray(eps0), np.asarray(n), np.asarray(delta))


def shuffled_rr_exact_delta(
    eps: ArrayLike, eps0: float, n: int, others_ones: int | None = None, delta: float = 1e-100
) -> np.ndarray | float:
    r"""Exact :math:`\delta(\varepsilon)` of shuffled binary randomized response for neighbouring
    datasets whose other :math:`n-1` users hold ``others_ones`` ones, rounded **down**.

    The number of ones is a sufficient statistic of the shuffled reports, so :math:`\delta` is
    the larger hockey-stick divergence between its two laws (target bit 1 or 0):
    :math:`\max\bigl(H_{e^\varepsilon}(P\|Q),H_{e^\varepsilon}(Q\|P)\bigr)`,
    :math:`H_{e^\varepsilon}(P\|Q)=\sum_x(P(x)-e^\varepsilon Q(x))_+`, the others' count being
    :math:`m-\mathrm{Bin}(m,f)+\mathrm{Bin}(n-1-m,f)`, :math:`f=1/(1+e^{\varepsilon_0})`. Every
    probability carries a **relative** error bound (Boost's, the rounding of :math:`f`, of the
    convolution and of the sums; see ``_TargetFloor``), so tiny probabilities stay usable at
    every level; what is left out (binomial tails below :math:`10^{-180}e^{-\varepsilon_0}`,
    values near underflow) is an absolute allowance of about :math:`10^{-240}` per entry. A
    composition whose two parts are too long to convolve directly (:math:`2\cdot10^7`
    multiply-adds, so only for :math:`n` above about :math:`5\cdot 10^4` with ones and zeros among
    the others) is convolved by FFT, whose absolute error keeps it from raising the result where
    :math:`\delta` is below about :math:`10^{-15}` (the result stays a lower bound). With
    ``others_ones=None`` the maximum is taken over every composition when :math:`n\le 200`
    (:math:`m` and :math:`n-1-m` ones give the same value) and over nine evenly spaced ones
    otherwise (the worst composition varies with :math:`\varepsilon`). Either way this is a
    **lower bound** on the worst-case :math:`\delta` of shuffled RR, so the matching epsilon is a
    floor for every valid upper bound. Vectorized over ``eps``. ``delta`` is validated (at least
    :data:`DELTA_MIN`) but no longer changes the result: the laws are truncated at a fixed mass.

    Range, as for the numerical accountants: :math:`n\le 10^{10}` (:data:`N_MAX`),
    :math:`\varepsilon_0\le 100` (:data:`EPS0_MAX`), ``delta`` :math:`\ge 10^{-150}`;
    ``ValueError`` beyond. Within it, it agrees with a 40-digit convolution of the definition to
    a relative error of about :math:`10^{-11}` in each probability (the tests sweep eps0 from
    1e-300 to 100). The cost grows like :math:`\sqrt n` (the bulk of the count law): about a
    second at :math:`n=10^9` and several seconds at :math:`10^{10}` with ``others_ones=None``
    (nine compositions). Source: the definitions (randomized response, Warner 1965; the
    hockey-stick divergence of the count's two laws).

    >>> round(shuffled_rr_exact_delta(0.0, 50.0, 2, others_ones=0), 6)
    1.0
    >>> round(shuffled_rr_exact_delta(40.0, 50.0, 10), 5)  # count 1: 1 - e^-10 (1 + ...)
    0.99995
    """
    eps_arr = check_epsilon(eps)
    eps0_val = float(check_epsilon(eps0, "eps0"))
    n_val = check_integer(n, "n", 2)
    delta_val = float(check_delta(delta, allow_zero=False))
    _check_floor_range(eps0_val, n_val, delta_val)
    floors = [_TargetFloor(_rr_count_laws(eps0_val, n_val, _check_composition(ones, n_val)),
                           eps0_val) for ones in _rr_compositions(n_val, others_ones)]
    return scalar_or_array(_floor_delta(floors, eps_arr))


def _check_composition(ones: int, n: int) -> int:
    if ones > n - 1:
        raise ValueError(f"others_ones must be at most n - 1 = {n - 1}, got {ones}")
    return ones


def shuffled_rr_exact_epsilon(
    eps0: float, n: int, delta: float, others_ones: int | None = None
) -> float:
    r"""Smallest :math:`\varepsilon` with :func:`shuffled_rr_exact_delta` :math:`\le\delta`,
    rounded **down** (it is a lower bound on the privacy loss of shuffled RR): a floor that no
    valid general amplification bound can go below. Bisection on :math:`[0,\varepsilon_0]` to
    :math:`10^{-12}\varepsilon` (relative), from the same bracket for every ``delta``, so the result
    never increases as ``delta`` grows; it never decreases as ``eps0`` grows, nor (for a fixed
    composition, or every one when :math:`n\le 200`) as ``n`` falls, up to the tolerance. Same
    range, accuracy and cost as :func:`shuffled_rr_exact_delta` (``ValueError`` beyond the range).

    >>> shuffled_rr_exact_epsilon(1.0, 10_000, 1e-6) < fmt21_numerical_epsilon(1.0, 10_000, 1e-6)
    True
    """
    eps0_val = float(check_epsilon(eps0, "eps0"))
    n_val = check_integer(n, "n", 2)
    delta_val = float(check_delta(delta, allow_zero=False))
    _check_floor_range(eps0_val, n_val, delta_val)
    floors = [_TargetFloor(_rr_count_laws(eps0_val, n_val, _check_composition(ones, n_val)),
                           eps0_val) for ones in _rr_compositions(n_val, others_ones)]
    return _floor_epsilon(floors, delta_val, eps0_val)


def local_epsilon_for_target(
    eps: float, n: int, delta: float, variant: str = "fmt21", eps0_max: float = 30.0
) -> float:
    r"""Largest :math:`\varepsilon_0` whose shuffled release is certified
    :math:`(\varepsilon,\delta)`-DP by :func:`clone_numerical_epsilon` (monotone search, rounded
    down): how much local noise can be removed for a central target when reports are shuffled.
    ``eps0_max`` (the largest level tried) lies in (0, 100]; the range of
    :func:`clone_numerical_epsilon` applies (``ValueError`` outside).

    >>> e0 = local_epsilon_for_target(0.5, 10_000, 1e-6)
    >>> bool(fmt21_numerical_epsilon(e0, 10_000, 1e-6) <= 0.5)
    True
    """
    eps_val = float(check_epsilon(eps, positive=True))
    n_val = check_integer(n, "n", 2)
    delta_val = float(check_delta(delta, allow_zero=False))
    eps0_max = check_real(eps0_max, "eps0_max", low=0.0, low_open=True, high=EPS0_MAX)

    def certified(e0: float) -> float:
        return float(clone_numerical_epsilon(e0, n_val, delta_val, variant))

    low, high = eps_val, eps0_max  # eps0 = eps is always enough: shuffling never hurts
    if certified(high) <= eps_val:
        return high
    # round down: the returned level must stay certified
    low, _ = bisect(lambda e0: certified(e0) > eps_val, low, high, 1e-9)
    return low
