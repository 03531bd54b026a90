r"""Personalized shuffling (Chen, Cao & Ge, GSPA).

Users choose their own local levels :math:`(\varepsilon_i,\delta_i)`; the shuffled reports are
*approximately* :math:`\mu`-GDP (GSPA, Theorem 2). Which statement holds depends on the model:
in the **user-tied** model each person owns a randomizer (and its level) and the shuffler permutes
the reports; in the **position-tied** model of GSPA's Definition 6 (Feldman, McMillan & Talwar
2021's adaptive setting) the randomizers belong to positions and the data are shuffled before
they are applied. Next to GSPA's approximation:

- :func:`personalized_clone_delta`: the exact divergence of GSPA's Theorem 1 reduction;
- :func:`personalized_numerical_epsilon`: a rigorous bound from that reduction (certified, in the
  user-tied model, for shuffled binary randomized response with personalized levels whose reports
  travel without their levels, GSPA Algorithm 2);
- :func:`clone_reduction_epsilon`: the same reduction with any person-specific clone
  probabilities, which is what a user-tied model with different randomizers needs;
- :func:`personalized_laplace_epsilon`: a certified bound for personalized Laplace reports (GSPA
  Algorithm 1) in the user-tied model, through :func:`laplace_clone_probabilities`;
- :func:`level_tagged_rr_epsilon`: randomized response whose reports carry their level, where a
  person hides only among those who share it;
- :func:`shuffled_personalized_rr_epsilon`: the exact privacy of shuffled personalized randomized
  response on one chosen pair of datasets, a floor that no valid bound can go below;
- :func:`liu23_epsilon`: the closed-form baseline of Liu et al. (AAAI 2023) that GSPA compares
  with.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike
from scipy.special import expit, logsumexp
from scipy.stats import binom, norm

from shuffle_lib._numerics import certified_epsilon
from shuffle_lib._validation import (
    RngLike,
    as_rng,
    broadcast_per_user,
    check_bool,
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
    averaged_mixture_divergence,
    binomial_bulk,
    poisson_binomial_pmf,
    poisson_binomial_rtol,
)
from shuffle_lib.accounting.fdp import MU_RANGE, gdp_epsilon
from shuffle_lib.accounting.shuffle import (
    _LEVEL_RTOL,
    DELTA_MIN,
    EPS0_MAX,
    _convolved,
    _CountLaw,
    _floor_delta,
    _floor_epsilon,
    _gaussian_guess,
    _reversed,
    _TargetFloor,
    shuffled_rr_exact_epsilon,
)

#: Largest population the personalized accountants take (as levels with counts).
N_MAX = 10**10
#: Largest number of draws of :func:`sample_personalized_reduction`.
SAMPLE_MAX = 10**7
#: Largest number of draws times users of :func:`sample_personalized_reduction` (one uniform
#: number per user and draw, twice: about 4 s of CPU at the limit).
SAMPLE_WORK_MAX = 10**8
#: Largest side of the lattice grid of :func:`gspa_normal_approximation_error` (a million cells,
#: about 1.5 s of CPU).
GRID_SIDE_MAX = 1000
#: Smallest standard deviation of the Gaussian of :func:`gspa_normal_approximation_error`
#: (narrower ones fall between the quadrature nodes of a unit cell).
GRID_SD_MIN = 0.5


def _level_counts(counts: ArrayLike | None, levels: np.ndarray) -> np.ndarray:
    """How many people hold each entry of ``levels``: one each when ``counts`` is None."""
    if counts is None:
        return np.ones(levels.size, dtype=np.int64)
    sizes = np.asarray(counts)
    if (sizes.shape != levels.shape or not np.issubdtype(sizes.dtype, np.integer)
            or (sizes < 0).any()):
        raise ValueError(f"counts must be non-negative integers, one per level, got {counts!r}")
    if int(sizes.sum()) > N_MAX:
        raise ValueError(f"at most {N_MAX:.0e} users in all, got {int(sizes.sum())}")
    return sizes.astype(np.int64)


def _people_per_level(
    eps_i: ArrayLike, counts: ArrayLike | None, positive: bool
) -> tuple[np.ndarray, np.ndarray]:
    """The distinct levels (sorted) and how many people hold each."""
    levels = np.atleast_1d(check_epsilon(eps_i, "eps_i", positive=positive))
    if levels.ndim != 1:
        raise ValueError(f"eps_i must be 1-D, got shape {levels.shape}")
    sizes = _level_counts(counts, levels)
    distinct, where = np.unique(levels, return_inverse=True)
    return distinct, np.bincount(where, weights=sizes, minlength=distinct.size).astype(np.int64)


def _personal_levels(
    eps: ArrayLike, delta: ArrayLike, counts: ArrayLike | None = None,
    names: tuple[str, str] = ("eps", "delta"),
) -> tuple[np.ndarray, np.ndarray]:
    """Per-user levels (``names[0]``, 1-D, at least 2 users) and their deltas (``names[1]``, a
    scalar or one per level)."""
    eps_name, delta_name = names
    eps_arr = np.atleast_1d(check_epsilon(eps, eps_name))
    if eps_arr.ndim != 1:
        raise ValueError(
            f"{eps_name} must be a 1-D array of per-user levels, got shape {eps_arr.shape}"
        )
    users = int(_level_counts(counts, eps_arr).sum())
    if users < 2:
        raise ValueError(f"{eps_name} must hold the levels of at least 2 users, got {users}")
    delta_arr = broadcast_per_user(check_delta(delta, delta_name), eps_arr.shape, delta_name)
    return eps_arr, delta_arr


def _check_certified_delta(delta: float) -> float:
    """The target delta of a certified accountant: in [1e-150, 1) (:data:`DELTA_MIN` of the
    shuffle accountants; their truncation, 1e-12 delta, must not underflow)."""
    return check_real(delta, "delta", low=DELTA_MIN, high=1.0, high_open=True)


def _check_target(target: int, n: int) -> int:
    t = check_integer(target, "target", 0)
    if t >= n:
        raise ValueError(f"target must be a user index below {n}, got {target}")
    return t


def _reduction_epsilon(
    reduction: CloneCountReduction, level: float, delta: float, mean_clones: float
) -> float:
    """:func:`certified_epsilon` of a clone reduction, started from the Gaussian guess of a target
    at ``level`` among ``mean_clones`` expected clones (only a first point to try: the search
    certifies whatever it returns; a guess that cannot be formed is skipped)."""
    guess = _clone_guess(level, mean_clones, delta)
    return certified_epsilon(reduction.bound, level, delta, guess if 0 < guess < level else None)


def _clone_guess(level: float, mean_clones: float, delta: float) -> float:
    """The Gaussian guess of a target at ``level`` among ``mean_clones`` expected clones, or
    ``level`` when none can be formed: a first point for the search, and the order in which
    targets are tried (largest first)."""
    try:
        with np.errstate(all="ignore"):
            guess = float(_gaussian_guess(level, 2, max(mean_clones, 1.0), delta))
    except (ValueError, RuntimeError, FloatingPointError, OverflowError):
        return level
    return guess if np.isfinite(guess) else level


def _worst_reduction_epsilon(
    cases: list[tuple[float, np.ndarray, np.ndarray]], delta: float, worst: float = 0.0
) -> float:
    """The largest certified epsilon at ``delta`` (and ``worst``) over targets, each given as
    ``(level, clone probabilities, people holding each)``. Targets are tried in decreasing order
    of their Gaussian guess; a target whose level is not above the running maximum, or whose
    certified delta at the running maximum is already at most ``delta``, is skipped after at most
    one evaluation: the running maximum is then certified for it too, so the result is certified
    for every target (and equals the maximum of the individual certified values, up to the search
    tolerance)."""
    means = [float(np.dot(sizes.astype(float), probs)) for _, probs, sizes in cases]
    order = sorted(range(len(cases)),
                   key=lambda i: -_clone_guess(cases[i][0], means[i], delta))
    for i in order:
        level, probs, sizes = cases[i]
        if level <= worst:
            continue  # a target's epsilon never exceeds its level
        reduction = CloneCountReduction(probs, sizes, level, TRUNCATION * delta)
        if worst > 0 and reduction.bound(worst)[0] <= delta:
            continue  # worst is already certified for this target
        worst = max(worst, _reduction_epsilon(reduction, level, delta, means[i]))
    return worst


def _clone_probabilities(levels: np.ndarray, deltas: np.ndarray) -> np.ndarray:
    """2 (1 - delta_i) / (1 + e^{eps_i}): user i's chance of sending a clone (either kind)."""
    return 2 * (1 - deltas) * expit(-levels)


def gspa_mu(eps: ArrayLike, delta: ArrayLike = 0.0) -> float:
    r"""GSPA's :math:`\mu` for per-user levels (GSPA, Theorem 2):

    .. math::
        \mu = \sqrt{\frac{2}{\sum_{i=1}^n \frac{1-\delta_i}{1+e^{\varepsilon_i}}
              - \max_i \frac{1-\delta_i}{1+e^{\varepsilon_i}}}} .

    This is the central-limit **approximation** of the theorem, which drops a Berry-Esseen term of
    order :math:`1/\sqrt n`: it is an estimate, not an upper bound, and it can fall below the exact
    privacy of shuffled randomized response (see the tests). ``eps`` holds one level per user
    (at least two users); ``delta`` is a scalar or one value per user in [0, 1). ``ValueError``
    when the levels are so large (every one above about 1400) that :math:`\mu` exceeds the float
    range.

    >>> round(gspa_mu([1.0] * 1000), 4)
    0.0863
    """
    return _gspa_mu(*_personal_levels(eps, delta))


def _gspa_mu(eps_arr: np.ndarray, delta_arr: np.ndarray) -> float:
    # log of (1 - delta_i) / (1 + e^{eps_i}); finite because delta_i < 1
    log_weight = np.log1p(-delta_arr) - np.logaddexp(0.0, eps_arr)
    others = np.delete(log_weight, np.argmax(log_weight))  # the sum minus its largest term
    with np.errstate(over="ignore"):
        mu = float(np.sqrt(2.0) * np.exp(-0.5 * logsumexp(others)))
    if not np.isfinite(mu):
        raise ValueError("the levels in eps are so large that mu exceeds the float range")
    return mu


def gspa_epsilon(eps: ArrayLike, delta_i: ArrayLike, delta: float) -> float:
    r"""Central :math:`\varepsilon` at target ``delta`` implied by GSPA's :math:`\mu`
    (:func:`gspa_mu`) through the GDP conversion of GSPA, Fact 3
    (:func:`shuffle_lib.accounting.gdp_epsilon <shuffle_lib.accounting.fdp.gdp_epsilon>`).
    Inherits the approximation of :func:`gspa_mu`.
    ``ValueError`` when that :math:`\mu` exceeds :math:`10^4`, the range of ``gdp_epsilon``
    (a few users at large levels).

    >>> round(gspa_epsilon([4.0] * 1000, 0.0, 1e-6), 2)
    1.45
    """
    mu = _gspa_mu(*_personal_levels(eps, delta_i, names=("eps", "delta_i")))
    if mu > MU_RANGE[1]:
        raise ValueError(f"eps and delta_i give mu = {mu:.4g}, above the supported "
                         f"{MU_RANGE[1]:g} of gdp_epsilon")
    return float(gdp_epsilon(mu, delta))


def personalized_clone_delta(
    eps: float, eps_i: ArrayLike, delta_i: ArrayLike, target: int
) -> float:
    r"""Exact :math:`\delta(\varepsilon)` of the reduction of GSPA, Theorem 1, for user
    ``target``, plus the mass of the tails left out (an upper bound for the reduction).

    Every other user :math:`i` adds :math:`\mathrm{MultiBern}(p_i,p_i,1-2p_i)` with
    :math:`p_i=(1-\delta_i)/(1+e^{\varepsilon_i})`, so the number :math:`C` of informative clones is
    Poisson-binomial(:math:`2p_i`) and its split is :math:`\mathrm{Bin}(C,1/2)`; the target adds
    (1, 0) or (0, 1) with probabilities :math:`e^{\varepsilon_t}/(1+e^{\varepsilon_t})` and
    :math:`1/(1+e^{\varepsilon_t})` (swapped under the neighbour), scaled by :math:`1-\delta_t`,
    and nothing with probability :math:`\delta_t`. For a fixed total :math:`s` both branches give
    the same binary-mixture form over :math:`\mathrm{Bin}(s-1,1/2)` with an effective keep
    probability :math:`k_s`, so the divergence is computed exactly, total by total.

    What this certifies: for binary randomized response with personalized levels the reduction
    holds exactly (a uniform bit, sent with probability :math:`2/(e^{\varepsilon_i}+1)`, is an even
    mixture of the target's two output laws), so the value bounds the shuffled protocol (GSPA,
    Algorithm 2). For general or user-specific randomizers (personalized Laplace or Gaussian) the
    clone decomposition is not established and nothing is certified.

    Range: any finite ``eps`` and levels. At :math:`\varepsilon\ge\varepsilon_t` the value is
    exactly 0 (every likelihood ratio is at most :math:`e^{\varepsilon_t}`); once
    :math:`e^\varepsilon` exceeds the largest total, only each total's top outcome counts and the
    divergence is computed in closed form in log space, so nothing overflows.

    >>> round(personalized_clone_delta(0.5, [1.0] * 100, 0.0, target=0), 6) > 0
    True
    """
    eps_val = float(check_epsilon(eps))
    levels, deltas = _personal_levels(eps_i, delta_i, names=("eps_i", "delta_i"))
    t = _check_target(target, levels.size)
    level_t = float(levels[t])
    if eps_val >= level_t:
        return 0.0  # every likelihood ratio of the pair is at most e^(eps_t): no divergence
    offset, w, dropped = poisson_binomial_pmf(np.delete(_clone_probabilities(levels, deltas), t))
    keep, flip = float(expit(level_t)), float(expit(-level_t))
    delta_t = float(deltas[t])
    # totals s = offset + j for j = 0 .. len(w): w(s) from the delta branch, w(s - 1) from the rest
    w_same = np.concatenate([w, [0.0]])       # w(s)
    w_below = np.concatenate([[0.0], w])      # w(s - 1)
    totals = offset + np.arange(w.size + 1)
    mass = delta_t * w_same + (1 - delta_t) * w_below
    usable = (totals >= 1) & (mass > 0)
    rtol = poisson_binomial_rtol(levels.size, levels.size)
    with np.errstate(divide="ignore", invalid="ignore"):
        effective = (delta_t * w_same / 2 + (1 - delta_t) * w_below * keep) / mass
        if eps_val >= _closed_form_from(totals[usable] - 1):
            # log of the effective flip probability, exact where 1 - keep underflows (level > 709)
            log_flip = np.logaddexp(
                np.log(delta_t * w_same / 2),
                np.log1p(-delta_t) + np.log(w_below) - np.logaddexp(0.0, level_t),
            ) - np.log(mass)
            summed, error = _top_outcome_divergence(
                mass[usable], totals[usable] - 1, effective[usable], log_flip[usable], eps_val,
                rtol,
            )
            return float(min(1.0, summed + error + dropped))
        effective_flip = (delta_t * w_same / 2 + (1 - delta_t) * w_below * flip) / mass
    summed, _, error = averaged_mixture_divergence(
        mass[usable], totals[usable] - 1, effective[usable], effective_flip[usable], eps_val, rtol,
    )
    return float(min(1.0, summed + error + dropped))


def _closed_form_from(counts: np.ndarray) -> float:
    """The epsilon from which :func:`_top_outcome_divergence` is exact for these clone counts:
    ln(1 + the largest count), rounded up."""
    top = int(counts.max()) if counts.size else 0
    return float(np.log1p(top)) * (1 + 4 * np.finfo(float).eps)


def _top_outcome_divergence(
    weights: np.ndarray, counts: np.ndarray, keep: np.ndarray, log_flip: np.ndarray, eps: float,
    weight_rtol: float,
) -> tuple[float, float]:
    r""":math:`\sum_c w_c H_c` and an absolute error bound when :math:`e^\varepsilon\ge c+1` for
    every count: every outcome of :math:`B_c+\mathrm{Bern}(k_c)` against
    :math:`B_c+\mathrm{Bern}(f_c)` but the top one has a likelihood ratio at most
    :math:`(k_c c+f_c)/(f_c c+k_c)<c` (``keep`` :math:`k_c\ge 1/2`, :math:`f_c=1-k_c` given by its
    logarithm), so :math:`H_c=2^{-c}k_c(1-e^{\varepsilon+\ln f_c-\ln k_c})_+`, in log space
    (nothing overflows at any :math:`\varepsilon`). Error: 8 units of roundoff of the exponent's
    flip term and of its value, carried through the exponential, 16 of the value,
    ``weight_rtol`` of the sum, :data:`UNDERFLOW` per count."""
    unit = np.finfo(float).eps
    with np.errstate(over="ignore"):
        exponent = eps + log_flip - np.log(keep)
        share = np.maximum(-np.expm1(exponent), 0.0)  # 1 - e^exponent, 0 once it is positive
        # absolute error of the exponent: its terms' rounding (eps is exact; a flip of exactly 0,
        # log -inf, carries none) and that of the two sums
        finite = np.isfinite(exponent)
        slack = 8 * unit * (np.abs(np.where(finite, log_flip, 0.0))
                            + np.abs(np.where(finite, exponent, 0.0)) + 1.0)
        top = np.ldexp(keep, -np.minimum(counts, 1100).astype(np.int32))  # k_c 2^-c, exact
        # (1 - e^x)_+ moves by at most e^min(x + slack, 0) - e^min(x - slack, 0)
        high, low = np.minimum(exponent + slack, 0.0), np.minimum(exponent - slack, 0.0)
        moved = np.exp(high) * -np.expm1(np.where(finite, low - high, -np.inf))
        error = top * (moved + 16 * unit * share)
    summed = float(np.dot(weights, top * share))
    bound = float(np.dot(weights, error)) + weight_rtol * summed + UNDERFLOW * counts.size
    return summed, bound


def sample_personalized_reduction(
    eps_i: ArrayLike, delta_i: ArrayLike, target: int, size: int, rng: RngLike = None
) -> tuple[np.ndarray, np.ndarray]:
    r"""Draw ``size`` samples of the pair :math:`(\rho_0,\rho_1)` of GSPA, Theorem 1
    (equations 12-13) for user ``target``: each row holds the numbers of "0" and "1" symbols
    (clones of the target's two output laws). Every other user draws symbol 0 or 1 with
    probability :math:`(1-\delta_i)/(1+e^{\varepsilon_i})` each, independently (simulated user by
    user, not from the Poisson-binomial of :func:`personalized_clone_delta`, so the two can check
    each other); the target adds (1, 0) or (0, 1) as GSPA states, swapped under
    :math:`\rho_1`, and nothing with probability :math:`\delta_t`. ``size`` at most
    :data:`SAMPLE_MAX` (1e7), and ``size`` times the number of other users at most
    :data:`SAMPLE_WORK_MAX` (1e8); ``ValueError`` beyond.

    >>> first, second = sample_personalized_reduction([1.0, 0.5, 2.0], 0.0, 0, size=4, rng=0)
    >>> first.shape, second.shape
    ((4, 2), (4, 2))
    """
    levels, deltas = _personal_levels(eps_i, delta_i, names=("eps_i", "delta_i"))
    t = _check_target(target, levels.size)
    draws = check_integer(size, "size", 1, SAMPLE_MAX)
    if draws * (levels.size - 1) > SAMPLE_WORK_MAX:
        raise ValueError(f"size = {draws} draws of {levels.size - 1} other users exceed the "
                         f"supported {SAMPLE_WORK_MAX:.0e} random numbers")
    gen = as_rng(rng)
    half = np.delete(_clone_probabilities(levels, deltas), t) / 2
    keep, delta_t = float(expit(levels[t])), float(deltas[t])
    twice = 2 * half
    chunk = max(1, 2_000_000 // half.size)  # bounded memory, vectorized within a chunk
    samples = []
    for _ in range(2):  # independent draws for rho_0 and rho_1
        counts = np.empty((draws, 2), dtype=np.int64)
        for start in range(0, draws, chunk):
            u = gen.random((min(chunk, draws - start), half.size))
            zeros = (u < half).sum(axis=1)
            counts[start : start + u.shape[0], 0] = zeros
            # symbol 1 on [half, 2 half): the draws below 2 half that are not symbol 0
            counts[start : start + u.shape[0], 1] = (u < twice).sum(axis=1) - zeros
        samples.append(counts)
    for counts, first_symbol in zip(samples, (0, 1), strict=True):
        v = gen.random(draws)
        informative = v >= delta_t
        own = np.where(v < delta_t + (1 - delta_t) * keep, first_symbol, 1 - first_symbol)
        counts[informative & (own == 0), 0] += 1
        counts[informative & (own == 1), 1] += 1
    return samples[0], samples[1]


def personalized_numerical_epsilon(
    eps_i: ArrayLike, delta_i: ArrayLike, delta: float, target: int | None = None,
    counts: ArrayLike | None = None,
) -> float:
    r"""Rigorous central :math:`\varepsilon` at ``delta`` from the clone reduction of GSPA,
    Theorem 1, with no asymptotic term: the smallest :math:`\varepsilon` whose divergence, with
    its error bound added, is at most ``delta``, rounded up (certified as
    :func:`~shuffle_lib.accounting.shuffle.clone_numerical_epsilon` is). Goes beyond the paper,
    which only uses the Gaussian approximation of this reduction (:func:`gspa_mu`).

    With ``target`` an index, the exact value for that user: their own level
    :math:`\varepsilon_t` against the clones of the other :math:`n-1` users. With
    ``target=None`` one evaluation bounds **every** target: the largest level
    :math:`\max_i\varepsilon_i` (and largest :math:`\delta_i`) against the clones of all users
    but the one most likely to send a clone. This is valid because the divergence given
    :math:`C=c` clones

    - does not increase with :math:`c`: the law for :math:`c+1` is the law for :math:`c` plus an
      independent fair coin, a post-processing applied to both hypotheses;
    - does not decrease with :math:`\varepsilon_t`: the pair for a smaller level is obtained from
      the pair for a larger one by flipping the target's bit at random (post-processing again);

    and the blanket used is stochastically below every target's blanket (it swaps that target's
    clone probability for the largest one). So the result is at least the exact maximum over
    targets, and equal to it when all levels are equal.

    Treatment of :math:`\delta_i`: with probability :math:`\delta_t` the target's report falls in
    the part of Lemma 4's decomposition where the two inputs are told apart for sure; GSPA's
    pair (12)-(13) makes that branch indistinguishable instead (see
    :func:`personalized_clone_delta`). Here it is counted as exposed, so the bound adds
    :math:`\delta_t` and ``delta`` must exceed every :math:`\delta_i`.

    What is certified: shuffled binary randomized response with personalized levels in the
    user-tied model, reports forwarded without their levels
    (:math:`\delta_i=0`; GSPA, Algorithm 2), where every other user's report contains exact
    clones (a uniform bit is an even mixture of the target's two output laws). For other or
    user-specific randomizers (personalized Laplace or Gaussian, Algorithms 1 and 3) the clone
    decomposition of GSPA, Lemma 1 is not established, and neither is this bound.

    Range: ``delta`` in [1e-150, 1), at most :math:`10^{10}` users; ``ValueError`` outside.
    Cost: one clone-count law and a root search started from a Gaussian guess (about 4 s of CPU
    at :math:`10^{10}` users in three levels).
    Every finite level is taken as it is (no cap: the coefficients are computed from
    :math:`k=e^{\varepsilon_t}/(1+e^{\varepsilon_t})` in log space, and once
    :math:`e^\varepsilon` exceeds the largest clone count plus one the divergence has the closed
    form :math:`(k-e^\varepsilon(1-k))\,\mathbb E[2^{-C}]`), so a user at a level past 709
    (where :math:`e^{\varepsilon_t}` overflows) is never dropped: alone, such a user makes the
    bound about their level; hidden among enough clones, the bound stays small.

    >>> eps_i = np.linspace(0.5, 1.0, 2000)
    >>> bound = personalized_numerical_epsilon(eps_i, 0.0, 1e-6)
    >>> bool(personalized_numerical_epsilon(eps_i, 0.0, 1e-6, target=1999) <= bound < 1.0)
    True

    Populations too large to list user by user: ``counts`` (optional, one non-negative integer per
    entry of ``eps_i``) says how many users hold each level, up to :math:`10^{10}` users in all;
    ``target`` then indexes the levels (a user holding that level).

    >>> pop = personalized_numerical_epsilon([0.5, 1.0], 0.0, 1e-10, counts=[6 * 10**8, 4 * 10**8])
    >>> bool(0 < pop < 0.01)
    True
    """
    levels, deltas = _personal_levels(eps_i, delta_i, counts, names=("eps_i", "delta_i"))
    delta_val = _check_certified_delta(delta)
    clones = _clone_probabilities(levels, deltas)
    sizes = _level_counts(counts, levels)
    present = sizes > 0
    if target is None:
        left_out = int(np.flatnonzero(present)[np.argmax(clones[present])])
        level, exposed = levels[present].max(), deltas[present].max()
    else:
        left_out = _check_target(target, levels.size)
        if not present[left_out]:
            raise ValueError(f"target level {target} has no users (its count is 0)")
        level, exposed = levels[left_out], deltas[left_out]
    if exposed >= delta_val:
        raise ValueError(
            f"delta = {delta_val} must exceed every delta_i (largest {exposed}): the part of a "
            "report that is not eps-LDP is exposed by the reduction"
        )
    others = sizes.copy()
    others[left_out] -= 1  # the target (or the user whose clones are left out) is not a blanket
    reduction = CloneCountReduction(
        clones, others, float(level), TRUNCATION * delta_val, float(exposed)
    )
    # the target's own report is (eps_t, delta_t)-LDP: its level always holds after shuffling
    return _reduction_epsilon(reduction, float(level), delta_val,
                              float(np.dot(others.astype(float), clones)))


def clone_reduction_epsilon(
    target_eps0: float, clone_probabilities: ArrayLike, delta: float,
    counts: ArrayLike | None = None,
) -> float:
    r"""Certified :math:`\varepsilon` at ``delta`` of the general clone reduction: the target
    reports one bit by binary randomized response at level ``target_eps0``, and every other
    person :math:`j`, independently, sends a clone (a fair bit, an even mixture of the target's
    two output laws) with their own probability :math:`r_j` (``clone_probabilities``), otherwise
    something that does not depend on the target.

    The clone count is Poisson-binomial(:math:`r_j`) and, given :math:`C=c`, the pair is
    :math:`B_c+\mathrm{Bern}(k)` against :math:`B_c+\mathrm{Bern}(1-k)` (the reduction of
    Feldman, McMillan & Talwar 2021, Lemma 3.3, with person-specific clone probabilities), so
    the divergence is evaluated exactly as in
    :func:`~shuffle_lib.accounting.shuffle.clone_numerical_epsilon`, with the same error bar and
    certification (never below the exact value of this reduction). With every :math:`r_j=
    e^{-\varepsilon_0}` it is :func:`~shuffle_lib.accounting.shuffle.fmt21_numerical_epsilon`.

    What it certifies depends on the model: when the other people's reports really contain those
    clones whatever the target's data, for instance everybody else running :math:`k`-ary
    randomized response at level :math:`\varepsilon_j` on values outside the target's two
    (:math:`r_j=2/(e^{\varepsilon_j}+k-1)`), the reduction is exact and so is this epsilon for
    that pair of datasets. ``counts`` (optional) says how many people share each probability.
    ``delta`` in [1e-150, 1) (``ValueError`` outside); ``target_eps0`` any finite level and the
    probabilities anywhere in [0, 1], subnormal ones included (computed in log space, no cap).

    >>> r = np.full(9_999, 2 / (np.exp(0.01) + 99))  # 100-ary RR at 0.01 on other values
    >>> round(clone_reduction_epsilon(1.0, r, 1e-6), 3)
    0.254
    """
    level = float(check_epsilon(target_eps0, "target_eps0"))
    probs = np.atleast_1d(check_probability(clone_probabilities, "clone_probabilities"))
    if probs.ndim != 1:
        raise ValueError(f"clone_probabilities must be 1-D, got shape {probs.shape}")
    delta_val = _check_certified_delta(delta)
    sizes = _level_counts(counts, probs)
    reduction = CloneCountReduction(probs, sizes, level, TRUNCATION * delta_val)
    return _reduction_epsilon(reduction, level, delta_val,
                              float(np.dot(sizes.astype(float), probs)))


def laplace_clone_probabilities(target_eps: float, eps_i: ArrayLike) -> np.ndarray:
    r"""For personalized Laplace reports :math:`y_j=x_j+\mathrm{Lap}(\Delta/\varepsilon_j)`,
    values in an interval of length :math:`\Delta` (Chen, Cao & Ge, GSPA Algorithm 1), a
    probability :math:`r_j` with which person :math:`j`'s report is a clone of a target's report
    at level :math:`\varepsilon_t` (``target_eps``), whatever the data:

    .. math::
        r_j = \frac{\varepsilon_j}{\varepsilon_t}\,e^{-\varepsilon_j}
        \quad\text{if } \varepsilon_j\le\varepsilon_t, \qquad r_j = 0 \text{ otherwise.}

    Why: with :math:`b=\Delta/\varepsilon`, the density ratio of person :math:`j`'s report to the
    target's on input :math:`x^0` is
    :math:`(b_t/b_j)\exp(|y-x^0|/b_t-|y-x_j|/b_j)`; since :math:`|y-x_j|\le|y-x^0|+\Delta` and
    :math:`b_t\le b_j`, the exponent is at least :math:`-\Delta/b_j=-\varepsilon_j`. The same holds
    for :math:`x^1`, so :math:`j`'s law dominates :math:`r_j` times the even mixture of the target's
    two laws, which is what the clone reduction needs (:func:`clone_reduction_epsilon`). A less
    noisy person (:math:`\varepsilon_j>\varepsilon_t`) has lighter tails than the target, the
    ratio tends to 0 far out, and no clone weight is possible. The bound is not tight (it is
    smaller than the exact infimum for well-separated inputs), which only makes the resulting
    epsilon larger. Not in GSPA, whose Lemma 1 asserts the clone weight
    :math:`2/(1+e^{\varepsilon_j})` for every randomizer.

    >>> laplace_clone_probabilities(1.0, [1.0, 0.5, 2.0]).round(4).tolist()
    [0.3679, 0.3033, 0.0]
    """
    level = float(check_epsilon(target_eps, "target_eps", positive=True))
    levels = np.atleast_1d(check_epsilon(eps_i, "eps_i", positive=True))
    if levels.ndim != 1:
        raise ValueError(f"eps_i must be 1-D, got shape {levels.shape}")
    with np.errstate(over="ignore", invalid="ignore"):  # only in entries set to 0 below
        return np.where(levels <= level, levels / level * np.exp(-levels), 0.0)


def personalized_laplace_epsilon(
    eps_i: ArrayLike, delta: float, counts: ArrayLike | None = None
) -> float:
    r"""Certified central :math:`\varepsilon` at ``delta`` for shuffled personalized Laplace
    reports (GSPA Algorithm 1) in the **user-tied** model: person :math:`j` owns the randomizer
    :math:`x_j+\mathrm{Lap}(\Delta/\varepsilon_j)`, the shuffler forwards the reports without
    their levels, and the analyst may know everything else (every level, every other datum).

    For each distinct level :math:`\varepsilon_t` as the target's, the other people's clone
    probabilities are :func:`laplace_clone_probabilities` and the reduction is evaluated by
    :func:`clone_reduction_epsilon` (target: binary randomized response at :math:`\varepsilon_t`,
    which every pure :math:`\varepsilon_t`-LDP pair is a post-processing of); the result is the
    largest over targets. It never exceeds the largest level. ``counts`` (optional) gives the
    number of people holding each entry of ``eps_i``. Cost: one clone-count law per distinct
    level, targets tried in decreasing order of a Gaussian guess of their epsilon; a target whose
    certified delta at the running maximum is already at most ``delta`` costs one evaluation, not
    a root search (about 5-6 s of CPU for three levels at :math:`10^{10}` people, 2.4 s at
    :math:`10^9`; the cost grows with the number of distinct levels).
    Every level is taken as it is, up to the float limit (computed in log space).
    ``delta`` in [1e-150, 1) (``ValueError`` outside).

    >>> levels = np.repeat([0.1, 0.5, 1.0], [5_400, 3_700, 900])
    >>> value = personalized_laplace_epsilon(levels, 1e-6)
    >>> bool(0.0 < value < 1.0)
    True
    """
    distinct, people = _people_per_level(eps_i, counts, positive=True)
    if int(people.sum()) < 2:
        raise ValueError(f"eps_i (with counts) must hold at least 2 people, got "
                         f"{int(people.sum())}")
    delta_val = _check_certified_delta(delta)
    cases = []
    for index in np.flatnonzero(people > 0):
        others = people.copy()
        others[index] -= 1  # the target is not part of its own blanket
        level = float(distinct[index])
        cases.append((level, laplace_clone_probabilities(level, distinct), others))
    return _worst_reduction_epsilon(cases, delta_val)


def _single_rr_epsilon(level: float, delta: float, upper: bool) -> float:
    """Epsilon at delta of one binary randomized-response report at ``level``, rounded up
    (``upper``) or down: delta(eps) = (e^level - e^eps) / (1 + e^level), solved in log space as
    eps = level + log1p(-delta (1 + e^-level)), with an absolute margin of 8 units of roundoff
    of each term (and of the log1p's condition number)."""
    x = delta * (1.0 + np.exp(-level))  # e^eps = e^level (1 - x)
    if x >= 1.0:
        return 0.0
    log_term = float(np.log1p(-x))
    exact = level + log_term
    unit = np.finfo(float).eps
    margin = 8 * unit * (level + abs(log_term) + x / (1.0 - x) + 1.0)
    return max(0.0, exact + margin) if upper else max(0.0, exact - margin)


def level_tagged_rr_epsilon(
    eps_i: ArrayLike, delta: float, counts: ArrayLike | None = None, floor: bool = False
) -> float:
    r"""Shuffled personalized binary randomized response (GSPA Algorithm 2) when every report
    **travels with its sender's level**, levels belonging to people (a variant of the user-tied
    model, whose reports travel without levels).

    The analyst then sees, for every distinct level, how many reports at that level are ones; the
    reports at other levels do not depend on the target's bit. So the target hides only among the
    :math:`n_\ell` people who share its level :math:`\ell`, and the central epsilon is the largest,
    over levels, of shuffled randomized response among :math:`n_\ell` people at level :math:`\ell`;
    a level held by one person gives no amplification at all (exactly the epsilon of a single
    report, about :math:`\ell`). GSPA (its Figure 1) shuffles levels and outputs separately,
    which avoids this; the estimator needs only the sum of the levels' terms.

    ``floor=False`` (default): a certified upper bound, per level the clone reduction
    (:func:`personalized_numerical_epsilon` with one level), rounded up; a level held by one person
    gets the exact :math:`\ln(e^{\ell}(1-\delta)-\delta)` in log space, with a margin of a few
    units of roundoff toward the safe side (any finite level). ``floor=True``: a lower
    bound, per level the exact privacy of shuffled randomized response on the worst of the
    compositions :func:`~shuffle_lib.accounting.shuffle.shuffled_rr_exact_epsilon` tries, rounded
    down. ``counts`` (optional) gives the number of people holding each entry of ``eps_i``.
    Cost, per level held by two people or more: the upper bound builds one clone-count law and
    runs one root search (levels in decreasing order of a Gaussian guess; a level already
    certified at the running maximum costs one evaluation), about 2 s of CPU for three levels at
    :math:`10^{10}` people; the floor runs
    :func:`~shuffle_lib.accounting.shuffle.shuffled_rr_exact_epsilon` per level, about 6 s there.

    >>> levels = np.repeat([0.1, 0.5, 1.0], [5_400, 3_700, 900])
    >>> tagged = level_tagged_rr_epsilon(levels, 1e-6, floor=True)
    >>> bool(tagged > personalized_numerical_epsilon(levels, 0.0, 1e-6))
    True
    """
    distinct, people = _people_per_level(eps_i, counts, positive=False)
    delta_val = float(check_delta(delta, allow_zero=False))
    floor = check_bool(floor, "floor")
    worst = 0.0
    for level, group in zip(distinct, people, strict=True):
        if group == 1:  # a single report: no amplification
            value = _single_rr_epsilon(float(level), delta_val, upper=not floor)
            worst = max(worst, min(value, float(level)))
    if not floor:
        if (people > 1).any():
            delta_val = _check_certified_delta(delta_val)
        # per level, the clone reduction of personalized_numerical_epsilon with one level
        cases = [(float(level), _clone_probabilities(np.array([level]), np.zeros(1)),
                  np.array([int(group) - 1])) for level, group in zip(distinct, people,
                                                                      strict=True) if group > 1]
        return _worst_reduction_epsilon(cases, delta_val, worst)
    for level, group in zip(distinct, people, strict=True):
        if group > 1 and float(level) > worst:  # a group's epsilon never exceeds its level
            value = shuffled_rr_exact_epsilon(float(level), int(group), delta_val)
            worst = max(worst, min(value, float(level)))
    return worst


def _others_bits(others_bits: ArrayLike | None, n: int) -> np.ndarray:
    if others_bits is None:
        return np.zeros(n, dtype=bool)
    bits = np.asarray(others_bits)
    if bits.shape != (n,) or not np.isin(bits, (0, 1)).all():
        raise ValueError(f"others_bits must hold n = {n} values in {{0, 1}}, got {others_bits!r}")
    return bits.astype(bool)


def _personalized_rr_laws(
    levels: np.ndarray, target: int, others_bits: ArrayLike | None
) -> tuple[tuple[np.ndarray, np.ndarray], np.ndarray, float]:
    r"""The two laws of the number of ones (target holding 1, then 0), a relative error bound per
    entry and an absolute allowance (see :func:`~shuffle_lib.accounting.shuffle._target_laws`).

    Only flip probabilities :math:`f_i=1/(1+e^{\varepsilon_i})\le 1/2` enter, so none is lost when
    a keep probability rounds to 1: the others' count is :math:`A+m_1-B`, :math:`A` and :math:`B`
    Poisson-binomial with the flip probabilities of the others holding 0 and 1 (:math:`m_1` of
    them), each from :func:`poisson_binomial_pmf` with its relative error (``with_rtol``) and
    tails below :data:`UNDERFLOW` dropped. The others' flip probabilities are rounded up
    (:func:`~shuffle_lib.accounting.shuffle._others_flip`: slightly lower levels, which can only
    lower the divergence), so their rounding needs no error term."""
    bits = np.delete(_others_bits(others_bits, levels.size), target)
    flips = np.minimum(expit(-np.delete(levels, target)) * (1 + 2 * _LEVEL_RTOL), 0.5)
    parts = []
    for group in (flips[bits], flips[~bits]):
        if group.size == 0:
            parts.append(_CountLaw(0, np.ones(1), 0.0, 0.0))
            continue
        offset, pmf, dropped, rtol = poisson_binomial_pmf(group, tail=UNDERFLOW, with_rtol=True)
        parts.append(_CountLaw(offset, pmf, rtol, dropped))
    ones, zeros = parts
    return _TargetFloor(_convolved(_reversed(ones, int(bits.sum())), zeros), float(levels[target]))


def _floor_levels(eps_i: ArrayLike) -> np.ndarray:
    """Per-user levels of the shuffled personalized RR floors: 1-D, at least 2 users, each at
    most :data:`~shuffle_lib.accounting.shuffle.EPS0_MAX` (``ValueError`` naming the limit)."""
    levels, _ = _personal_levels(eps_i, 0.0, names=("eps_i", "delta_i"))
    if levels.max() > EPS0_MAX:
        raise ValueError(f"eps_i must be at most {EPS0_MAX} for the shuffled RR floors, got a "
                         f"level of {levels.max()!r}")
    return levels


def shuffled_personalized_rr_delta(
    eps: ArrayLike, eps_i: ArrayLike, target: int, others_bits: ArrayLike | None = None
) -> np.ndarray | float:
    r"""Exact :math:`\delta(\varepsilon)` of shuffled binary randomized response with personalized
    levels (GSPA, Algorithm 2) for one pair of neighbouring datasets: user ``target`` holds 1
    or 0, the others hold ``others_bits`` (default: all 0; the target's entry is ignored),
    rounded **down**.

    The shuffled reports are summarized without loss by their number of ones, whose law is
    Poisson-binomial; :math:`\delta=\max\bigl(H_{e^\varepsilon}(P\|Q),H_{e^\varepsilon}(Q\|P)
    \bigr)` with :math:`H_{e^\varepsilon}(P\|Q)=\sum_x(P(x)-e^\varepsilon Q(x))_+`. Every
    probability carries a **relative** error bound, so tiny
    probabilities stay usable at every level (a user at level 30 among users at level 1 is seen
    exactly); the allowance for what is left out is about :math:`10^{-240}` per entry. A **lower
    bound** on the worst case over datasets, so its epsilon is a floor for every valid bound.
    Vectorized over ``eps``. Range: levels ``eps_i`` at most 100
    (:data:`~shuffle_lib.accounting.shuffle.EPS0_MAX`; ``ValueError`` beyond); within it, it
    agrees with a 40-digit convolution to a relative error of about :math:`10^{-11}` in each
    probability. Cost: that of
    :func:`~shuffle_lib.accounting.poisson_binomial_pmf` with tails of :math:`10^{-240}`
    (about a second for :math:`10^5` distinct levels).

    >>> round(shuffled_personalized_rr_delta(0.0, [50.0, 50.0], target=0), 6)
    1.0
    """
    eps_arr = check_epsilon(eps)
    levels = _floor_levels(eps_i)
    t = _check_target(target, levels.size)
    result = _floor_delta([_personalized_rr_laws(levels, t, others_bits)], eps_arr)
    return float(result) if result.ndim == 0 else result


def shuffled_personalized_rr_epsilon(
    eps_i: ArrayLike, delta: float, target: int | None = None, others_bits: ArrayLike | None = None
) -> float:
    r"""Smallest :math:`\varepsilon` with :func:`shuffled_personalized_rr_delta`
    :math:`\le\delta`, rounded **down**: the exact privacy of shuffled personalized randomized
    response on that pair of datasets, a floor for every valid bound. ``target=None`` picks the
    user with the largest level. Bisection on :math:`[0,\varepsilon_t]` to
    :math:`10^{-12}\varepsilon` (relative) from the same bracket for every ``delta``, so the result
    never increases as ``delta`` grows. Range: levels at most 100, ``delta`` in
    :math:`[10^{-150}, 1]` (:data:`~shuffle_lib.accounting.shuffle.DELTA_MIN`; ``ValueError``
    beyond).

    >>> eps_i = np.linspace(0.5, 1.0, 2000)
    >>> floor = shuffled_personalized_rr_epsilon(eps_i, 1e-6)
    >>> bool(floor <= personalized_numerical_epsilon(eps_i, 0.0, 1e-6))
    True
    >>> round(shuffled_personalized_rr_epsilon([30.0] + [1.0] * 9, 1e-6), 4)  # count 0: ratio e^30
    30.0
    """
    levels = _floor_levels(eps_i)
    delta_val = float(check_delta(delta, allow_zero=False))
    if delta_val < DELTA_MIN:
        raise ValueError(f"delta must be at least {DELTA_MIN} for the shuffled RR floors, got "
                         f"{delta!r}")
    t = int(np.argmax(levels)) if target is None else _check_target(target, levels.size)
    floor = _personalized_rr_laws(levels, t, others_bits)
    return _floor_epsilon([floor], delta_val, float(levels[t]))


def liu23_epsilon(eps_i: ArrayLike, delta: float) -> float:
    r"""Closed-form baseline of Liu, Zhao, Xiong, Liu & Chen, *Echo of Neighbors* (AAAI 2023),
    the personalized bound that GSPA compares with ([Liu23]).

    With :math:`\varepsilon_1=\max_i\varepsilon_i` the target and
    :math:`g(\varepsilon)=(1-e^{-\varepsilon})/\varepsilon`, each other user :math:`i` "echoes"
    the target with probability
    :math:`p_i=\frac1n\sum_{j=1}^n \frac{g(\varepsilon_j)}{g(\varepsilon_i)}
    e^{-\max(\varepsilon_i,\varepsilon_j)}`; with :math:`S=\sum_{i\ne 1}p_i`,

    .. math::
        \varepsilon = \ln\Big(1+\frac{e^{\varepsilon_1}-1}{e^{\varepsilon_1}+1}
        \Big(8\sqrt{\frac{\ln(4/\delta)}{S}}+\frac{8}{S}\Big)\Big)
        \quad\text{when } S\ge 16\ln(4/\delta),

    and :math:`\varepsilon_1` otherwise. Source: the authors' public implementation (repository
    yixuanLL/EoN, the function marked as the AAAI version); the paper's text was not available
    offline. For equal levels :math:`p_i=e^{-\varepsilon_0}` and this is the closed form of
    Feldman, McMillan & Talwar (2021, Theorem 3.1) with :math:`n-1` in place of :math:`n`.
    Computed in :math:`O(n\log n)` by sorting the levels.

    >>> from shuffle_lib.accounting import fmt21_theorem_epsilon
    >>> ours = liu23_epsilon(np.full(10_001, 0.5), 1e-6)
    >>> bool(np.isclose(ours, fmt21_theorem_epsilon(0.5, 10_000, 1e-6), rtol=1e-12))
    True
    """
    levels, _ = _personal_levels(eps_i, 0.0, names=("eps_i", "delta_i"))
    delta_val = float(check_delta(delta, allow_zero=False))
    n = levels.size
    order = np.sort(levels)
    # g(eps) = (1 - e^{-eps}) / eps, equal to 1 at eps = 0
    with np.errstate(invalid="ignore", divide="ignore"):
        g = np.where(order > 0, -np.expm1(-order) / order, 1.0)
    # user i: e^{-eps_i} times the sum of g_j over eps_j <= eps_i, plus g_j e^{-eps_j} over the rest
    below = np.cumsum(g)
    above = np.concatenate([np.cumsum((g * np.exp(-order))[::-1])[::-1][1:], [0.0]])
    last_equal = np.searchsorted(order, order, side="right") - 1  # ties count as "below"
    echo = (np.exp(-order) * below[last_equal] + above[last_equal]) / (g * n)
    total = float(echo.sum() - echo[-1])  # every user but the target (the largest level)
    top = float(order[-1])
    log_term = np.log(4 / delta_val)
    if total < 16 * log_term:
        return top
    gain = np.tanh(top / 2) * (8 * np.sqrt(log_term / total) + 8 / total)  # tanh = (e-1)/(e+1)
    return float(np.log1p(gain))


def gspa_normal_approximation_error(
    eps0: float, n: int, delta0: float = 0.0
) -> tuple[float, float]:
    r"""How far the clone counts of GSPA are from the Gaussian that Theorem 2 replaces them
    with (its Lemma 2 and equation 14), for equal levels :math:`(\varepsilon_0,\delta_0)`.

    The :math:`m=n-1` other users give :math:`(\xi_0,\xi_1)\sim\sum^m
    \mathrm{MultiBern}(p/2,p/2,1-p)` with :math:`p=2(1-\delta_0)/(1+e^{\varepsilon_0})`: exactly,
    :math:`P(\xi_0=k_0,\xi_1=k_1)=\mathrm{Bin}(k_0+k_1;m,p)\,\mathrm{Bin}(k_0;k_0+k_1,1/2)`. The
    Gaussian with the same mean and covariance is discretized by giving each lattice point the
    mass :math:`h(k_0,k_1)` of its unit cell :math:`[k_0\pm\frac12]\times[k_1\pm\frac12]` (the
    GSPA prints a quarter cell, whose masses cannot sum to one), computed by 8-point
    Gauss-Legendre quadrature over :math:`k_1` of the conditional normal law of :math:`\xi_0`.

    Returns ``(pointwise, total_variation)``: GSPA's quantity
    :math:`\sup_{k}\lvert P(k)-h(k)\rvert` of equation (14), and the total-variation distance
    :math:`\tfrac12\sum_k\lvert P(k)-h(k)\rvert` (plus half the mass left outside the grid) that the
    proof of Theorem 2 actually subtracts, twice, from the trade-off function.

    Range (``ValueError`` outside): the Gaussian's standard deviation
    :math:`\sqrt{m\frac p2(1-\frac p2)}` at least 1/2 (:data:`GRID_SD_MIN`; the 8-point rule
    is then within 1e-12 of a 96-point one, while a narrower Gaussian falls between its nodes),
    ``n`` at most :data:`N_MAX` (1e10), and at most :data:`GRID_SIDE_MAX` (1000) lattice points
    per axis, i.e. about :math:`n\le 16{,}000` at :math:`\varepsilon_0=1`.

    >>> point, tv = gspa_normal_approximation_error(1.0, 1000)
    >>> bool(0 < point < tv < 0.1)
    True
    """
    eps_val = float(check_epsilon(eps0, "eps0"))
    m = check_integer(n, "n", 2, N_MAX) - 1
    p = float(2 * (1 - check_delta(delta0, "delta0")) * expit(-eps_val))
    half = p / 2
    if m * half * (1 - half) < GRID_SD_MIN**2:
        raise ValueError(f"eps0 = {eps0!r}, n = {n!r} and delta0 = {delta0!r} give a Gaussian of "
                         f"standard deviation below {GRID_SD_MIN}: too narrow for the quadrature")
    low, high, _ = binomial_bulk(m, half, 1e-18)  # bulk of each coordinate's Bin(m, p/2) marginal
    if high - low + 1 > GRID_SIDE_MAX:
        raise ValueError(f"n = {n!r} with eps0 = {eps0!r} needs a grid of {high - low + 1} "
                         f"points per axis, above the supported {GRID_SIDE_MAX}")
    k = np.arange(low, high + 1)
    k0, k1 = np.meshgrid(k, k, indexing="ij")
    total = k0 + k1
    with np.errstate(invalid="ignore"):
        exact = np.where(total <= m, binom.pmf(total, m, p) * binom.pmf(k0, total, 0.5), 0.0)
    mean, var, cov = m * half, m * half * (1 - half), -m * half * half
    sd = np.sqrt(var)
    slope, cond_sd = cov / var, np.sqrt(var - cov * cov / var)
    nodes, weights = np.polynomial.legendre.leggauss(8)
    cells = np.zeros(exact.shape)
    for node, weight in zip(nodes, weights, strict=True):
        t = k1 + node / 2  # quadrature point inside [k1 - 1/2, k1 + 1/2]
        centre = mean + slope * (t - mean)
        with np.errstate(divide="ignore"):  # cond_sd = 0 at p = 1: the band is an indicator
            band = (norm.cdf((k0 + 0.5 - centre) / cond_sd)
                    - norm.cdf((k0 - 0.5 - centre) / cond_sd))
        cells += weight / 2 * norm.pdf(t, mean, sd) * band
    gap = np.abs(exact - cells)
    outside = max(0.0, 1.0 - cells.sum()) + max(0.0, 1.0 - exact.sum())
    return float(gap.max()), float(0.5 * (gap.sum() + outside))
