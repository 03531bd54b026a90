r"""Privacy amplification by shuffling: how private is the shuffled output of :math:`n`
:math:`\varepsilon_0`-LDP reports?

Upper bounds (every function returns an epsilon that is never below the true one):

- closed forms of Feldman, McMillan & Talwar (2021), as quoted in Canonne's blog post
  "Privacy Doona" (its equation 1), and the paper's Theorem 3.1;
- the numerical "clone" bound: the exact hockey-stick divergence of the two clone distributions
  of their reduction, and its stronger variant from the SODA 2023 follow-up (valid only for a
  restricted class of randomizers, which includes randomized response);
- older baselines: Erlingsson et al. (2019) and the privacy blanket of Balle et al. (2019).

Lower bound: the exact privacy curve of shuffled binary randomized response on chosen datasets,
a floor that no valid general bound can go below.

Conventions: ``eps0`` is the local level, ``n`` the number of users, ``delta`` the target.
Numerical bounds state their tolerance and round toward the safe side. Every function takes
``delta`` >= 1e-300 (the numerical ones >= 1e-150) and refuses what is outside its stated range
with ``ValueError`` (``TypeError`` for a wrong type, such as ``n`` given as a string).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike
from scipy.optimize import brentq
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
    CloneCountReduction,
    binomial_sum_pmf,
    hockey_stick_floor,
    target_count_laws,
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


def fmt21_closed_form_epsilon(
    eps0: ArrayLike, n: ArrayLike, delta: ArrayLike
) -> np.ndarray | float:
    r"""Feldman, McMillan & Talwar (2021), as quoted in Canonne's "Privacy Doona", equation (1):
    :math:`\varepsilon=\ln\Bigl(1+16\,\frac{e^{\varepsilon_0}-1}{e^{\varepsilon_0}+1}
    \sqrt{\frac{e^{\varepsilon_0}\ln(4/\delta)}{n}}\Bigr)`.

    Upper bound, valid for every :math:`\varepsilon_0`-LDP randomizer when
    :math:`\varepsilon_0\le\ln(n/(16\ln(2/\delta)))`; raises ``ValueError`` otherwise. It follows
    from :func:`fmt21_theorem_epsilon` under that condition.

    >>> round(fmt21_closed_form_epsilon(4.0, 100_000, 1e-6), 4)
    0.8776
    """
    eps0_arr, n_arr, delta_arr = _check_common(eps0, n, delta)
    _check_closed_form_regime(eps0_arr, n_arr, delta_arr)
    shrink = np.tanh(eps0_arr / 2)  # (e^eps0 - 1) / (e^eps0 + 1)
    root = np.sqrt(np.exp(eps0_arr) * np.log(4 / delta_arr) / n_arr)
    return scalar_or_array(np.log1p(16 * shrink * root))


def fmt21_theorem_epsilon(eps0: ArrayLike, n: ArrayLike, delta: ArrayLike) -> np.ndarray | float:
    r"""Feldman, McMillan & Talwar (2021), Theorem 3.1:
    :math:`\varepsilon=\ln\Bigl(1+\frac{e^{\varepsilon_0}-1}{e^{\varepsilon_0}+1}
    \Bigl(8\sqrt{\frac{e^{\varepsilon_0}\ln(4/\delta)}{n}}+\frac{8e^{\varepsilon_0}}{n}\Bigr)\Bigr)`.

    Upper bound for every :math:`\varepsilon_0`-LDP randomizer when
    :math:`\varepsilon_0\le\ln(n/(16\ln(2/\delta)))`; raises ``ValueError`` otherwise.

    >>> round(fmt21_theorem_epsilon(4.0, 100_000, 1e-6), 4)
    0.5346
    """
    eps0_arr, n_arr, delta_arr = _check_common(eps0, n, delta)
    _check_closed_form_regime(eps0_arr, n_arr, delta_arr)
    shrink = np.tanh(eps0_arr / 2)
    grow = np.exp(eps0_arr)
    bracket = 8 * np.sqrt(grow * np.log(4 / delta_arr) / n_arr) + 8 * grow / n_arr
    return scalar_or_array(np.log1p(shrink * bracket))


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
    16 of equation (1). Approximations, not bounds. ``delta`` at least 1e-300; ``ValueError``
    where :math:`e^{\varepsilon_0/2}` overflows (``eps0`` above about 1400).

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
            value = np.log1p(8 * np.exp(eps0_arr / 2) * root)
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
    :math:`\Delta\sim\mathrm{Bern}(e^{\varepsilon_0}/(e^{\varepsilon_0}+1))`, the two laws are
    :math:`P=(A+\Delta,\ C-A+1-\Delta)` and :math:`Q=(A+1-\Delta,\ C-A+\Delta)`
    (Feldman, McMillan & Talwar 2021). Returns :math:`H_{e^\varepsilon}(P\|Q)`
    (equal to :math:`H_{e^\varepsilon}(Q\|P)`: swapping the coordinates exchanges P and Q). Given
    :math:`C=c` the likelihood ratio increases in the first coordinate, so each :math:`c` costs one
    binomial tail and one probability (SciPy's Boost routines); the sum runs over the bulk of
    :math:`C` and adds the mass of the two tails left out (at most 1e-120 each), plus a bound on its
    own rounding error: an upper bound on the exact value, within 1e-6 relative (plus 1e-120) where
    the tests compare it with 40-digit values (the error bar grows when the two tail terms nearly
    cancel, i.e. for tiny divergences at huge n; typically it is near 1e-10).

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
    r"""Draw ``size`` samples of the first coordinate :math:`A+\Delta` under :math:`P` and
    :math:`A+1-\Delta` under :math:`Q` of the clone reduction (see :func:`clone_reduction_delta`):
    what an analyst sees in the reduced problem, for simulations and pictures. ``n`` at most
    :data:`N_MAX` (1e10) and ``size`` at most :data:`SAMPLE_MAX` (1e7); ``ValueError`` beyond.

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
    :math:`e^{-\varepsilon_0}` for every :math:`\varepsilon_0`-LDP randomizer (``"fmt21"``), or
    :math:`2/(e^{\varepsilon_0}+1)` for randomized response (``"stronger"``; see
    :func:`clone_numerical_epsilon` for its restricted validity).

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
    error bound* (rounding of every tail and probability, truncated mass of at most
    :math:`10^{-12}\delta` per tail of the clone count) is at most :math:`\delta`, so it is never
    below the exact value of the reduction; the root search stops within 1e-10 relative, and the
    tests find it within 1e-6 of 40-digit values (median 4e-12). Range: :math:`n\le 10^{10}`,
    :math:`\delta\ge 10^{-150}`, :math:`\varepsilon_0\le 100`; ``ValueError`` beyond. Vectorized
    over ``eps0``, ``n`` and ``delta`` (broadcast together).

    - ``variant="fmt21"``: clone probability :math:`q_c=e^{-\varepsilon_0}`, valid for every
      :math:`\varepsilon_0`-LDP randomizer (Feldman, McMillan & Talwar 2021).
    - ``variant="stronger"``: :math:`q_c=2/(e^{\varepsilon_0}+1)` (Feldman, McMillan & Talwar,
      SODA 2023). That paper's erratum restricts its general theorems to a class of randomizers
      that includes binary and k-ary randomized response; it is **not** a bound for every
      :math:`\varepsilon_0`-LDP randomizer.

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
    (``ValueError`` outside). Capped at :math:`\varepsilon_0`, which always holds.

    >>> round(erlingsson19_epsilon(0.5, 10_000, 1e-6), 3)
    0.223
    """
    eps0_arr, n_arr, delta_arr = _check_common(eps0, n, delta)
    if (eps0_arr > 0.5).any() or (n_arr < 1000).any() or (delta_arr > 0.01).any():
        raise ValueError(
            "Erlingsson et al. (2019) is proved for eps0 <= 1/2, n >= 1000, delta <= 1/100; "
            f"got eps0={eps0}, n={n}, delta={delta}"
        )
    value = 12 * eps0_arr * np.sqrt(np.log(1 / delta_arr) / n_arr)
    return scalar_or_array(np.minimum(value, eps0_arr))


def _blanket_parameters(eps: float, eps0: float, randomizer: str | tuple) -> tuple[float, float]:
    if randomizer == "generic":
        gamma = float(np.exp(-eps0))
        spread = (np.exp(eps) + 1) * (np.exp(eps0) - np.exp(-eps0))
        return gamma, float(spread)
    if isinstance(randomizer, tuple) and len(randomizer) == 2 and randomizer[0] == "krr":
        k = check_integer(randomizer[1], "k", 2)
        gamma = float(k / (np.exp(eps0) + k - 1))
        return gamma, float((1 - gamma) * k * (np.exp(eps) + 1))
    raise ValueError(f"randomizer must be 'generic' or ('krr', k), got {randomizer!r}")


def bbgn19_delta(eps: float, eps0: float, n: int, randomizer: str | tuple = "generic") -> float:
    r"""Privacy-blanket bound of Balle, Bell, Gascón & Nissim (2019), Hoeffding form:
    :math:`\delta(\varepsilon)=\frac{b^2}{4a\gamma n}\bigl(1-\gamma(1-e^{-2a^2/b^2})\bigr)^n`,
    :math:`a=e^\varepsilon-1`, with blanket probability :math:`\gamma` and range :math:`b` of the
    privacy amplification variable: generic randomizers :math:`\gamma=e^{-\varepsilon_0}`,
    :math:`b=(e^\varepsilon+1)(e^{\varepsilon_0}-e^{-\varepsilon_0})`; k-ary randomized response
    :math:`\gamma=k/(e^{\varepsilon_0}+k-1)`, :math:`b=(1-\gamma)k(e^\varepsilon+1)`. The constants
    follow the authors' published implementation of their bound. Upper bound, capped at 1.

    >>> bbgn19_delta(0.5, 0.5, 1000) == 0.0
    True
    """
    eps_val = float(check_epsilon(eps))
    eps0_val = float(check_epsilon(eps0, "eps0"))
    n_val = check_integer(n, "n", 2)
    if eps_val >= eps0_val:
        return 0.0
    if eps_val == 0:
        return 1.0
    gamma, spread = _blanket_parameters(eps_val, eps0_val, randomizer)
    a = np.expm1(eps_val)
    ratio = 2 * a * a / (spread * spread)
    log_delta = (
        2 * np.log(spread) - np.log(4 * a * gamma * n_val)
        + n_val * np.log1p(gamma * np.expm1(-ratio))
    )
    return float(min(1.0, np.exp(min(log_delta, 0.0))))


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
    _blanket_parameters(0.0, 1.0, randomizer)  # validate early
    eps0_arr, n_arr, delta_arr = _check_common(eps0, n, delta)

    def one(e0: float, users: int, d: float) -> float:
        return smallest_certified_eps(
            lambda e: bbgn19_delta(e, e0, int(users), randomizer), e0, d, monotone=False
        )

    return scalar_or_array(np.vectorize(one, otypes=[float])(eps0_arr, n_arr, delta_arr))


def _rr_count_laws(
    eps0: float, n: int, others_ones: int, delta: float
) -> tuple[tuple[np.ndarray, np.ndarray], np.ndarray]:
    """Laws of the number of ones in shuffled RR when the target holds 1 (first) or 0 (second),
    the other n - 1 users holding ``others_ones`` ones, and an absolute error bound per entry that
    covers rounding and the binomial tails left out (at most 1e-12 delta e^-eps0 each)."""
    keep, flip = float(expit(eps0)), float(expit(-eps0))
    mass = TRUNCATION * delta * flip
    _, others, error = binomial_sum_pmf(others_ones, keep, n - 1 - others_ones, flip, mass)
    laws = target_count_laws(others, keep, flip)
    padded = np.concatenate([[0.0], error, [0.0]])
    return laws, np.maximum(padded[:-1], padded[1:])


def _rr_compositions(n: int, others_ones: int | None) -> list[int]:
    if others_ones is not None:
        return [check_integer(others_ones, "others_ones", 0)]
    half = (n - 1) // 2
    if n <= 200:
        return list(range(half + 1))
    return sorted({round(float(x)) for x in np.linspace(0, half, 9)})


def shuffled_rr_exact_delta(
    eps: ArrayLike, eps0: float, n: int, others_ones: int | None = None, delta: float = 1e-100
) -> np.ndarray | float:
    r"""Exact :math:`\delta(\varepsilon)` of shuffled binary randomized response for neighbouring
    datasets whose other :math:`n-1` users hold ``others_ones`` ones.

    The number of ones is a sufficient statistic of the shuffled reports, so :math:`\delta` is
    the larger hockey-stick divergence between its two laws (target bit 1 or 0), computed with a
    per-entry error bound subtracted (rounding, the FFT used for large :math:`n`, and binomial
    tails below :math:`10^{-12}\delta e^{-\varepsilon_0}` left out; ``delta`` only sets that
    truncation and defaults to 1e-100). With
    ``others_ones=None`` the maximum is taken over all compositions when :math:`n\le 200` and over
    nine evenly spaced ones otherwise (the worst composition varies with :math:`\varepsilon`).
    Either way this is a **lower bound** on the worst-case :math:`\delta` of shuffled RR, so the
    matching epsilon is a floor for every valid upper bound. Vectorized over ``eps``.

    Range, as for the numerical accountants: :math:`n\le 10^{10}` (:data:`N_MAX`),
    :math:`\varepsilon_0\le 100`, ``delta`` :math:`\ge 10^{-150}`; ``ValueError`` beyond. The
    cost grows like :math:`\sqrt n` (the bulk of the count law): about a second at
    :math:`n=10^9` and several seconds at :math:`10^{10}` with ``others_ones=None`` (nine
    compositions).

    >>> round(shuffled_rr_exact_delta(0.0, 50.0, 2, others_ones=0), 6)
    1.0
    """
    eps_arr = check_epsilon(eps)
    eps0_val = float(check_epsilon(eps0, "eps0"))
    n_val = check_integer(n, "n", 2)
    delta_val = float(check_delta(delta, allow_zero=False))
    _check_numerical_range(np.asarray(eps0_val), np.asarray(n_val), np.asarray(delta_val))
    best = np.zeros(eps_arr.shape)
    for ones in _rr_compositions(n_val, others_ones):
        laws, error = _rr_count_laws(eps0_val, n_val, _check_composition(ones, n_val), delta_val)
        best = np.maximum(best, hockey_stick_floor(laws, error, eps_arr))
    return scalar_or_array(np.clip(best, 0.0, 1.0))


def _support_where(
    laws: tuple[np.ndarray, np.ndarray], error: np.ndarray
) -> tuple[tuple[np.ndarray, np.ndarray], np.ndarray]:
    """The entries where either law exceeds its error bound (the others add nothing to the floor),
    so that the many evaluations of a root search run on short arrays."""
    first, second = laws
    useful = (first > error) | (second > error)
    return (first[useful], second[useful]), error[useful]


def _check_composition(ones: int, n: int) -> int:
    if ones > n - 1:
        raise ValueError(f"others_ones must be at most n - 1 = {n - 1}, got {ones}")
    return ones


def shuffled_rr_exact_epsilon(
    eps0: float, n: int, delta: float, others_ones: int | None = None
) -> float:
    r"""Smallest :math:`\varepsilon` with :func:`shuffled_rr_exact_delta` :math:`\le\delta`,
    rounded **down** (it is a lower bound on the privacy loss of shuffled RR): a floor that no
    valid general amplification bound can go below. Same range and cost as
    :func:`shuffled_rr_exact_delta` (``ValueError`` beyond the range).

    >>> shuffled_rr_exact_epsilon(1.0, 10_000, 1e-6) < fmt21_numerical_epsilon(1.0, 10_000, 1e-6)
    True
    """
    eps0_val = float(check_epsilon(eps0, "eps0"))
    n_val = check_integer(n, "n", 2)
    delta_val = float(check_delta(delta, allow_zero=False))
    _check_numerical_range(np.asarray(eps0_val), np.asarray(n_val), np.asarray(delta_val))
    floor = 0.0
    for ones in _rr_compositions(n_val, others_ones):
        laws, error = _rr_count_laws(eps0_val, n_val, _check_composition(ones, n_val), delta_val)
        support = _support_where(laws, error)

        def delta_of(e: float, laws: tuple = support[0], error: np.ndarray = support[1]) -> float:
            return float(hockey_stick_floor(laws, error, np.asarray(e)))

        if delta_of(floor) <= delta_val:
            continue  # this composition cannot raise the floor
        # round down: this is a lower bound on the privacy loss
        floor, _ = bisect(lambda e, f=delta_of: f(e) <= delta_val, floor, eps0_val, EPS_TOL)
    return floor


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
