r"""Many shuffled rounds: privacy-loss distributions (PLDs) of the shuffle accountants, composed
with Google's ``dp-accounting``.

Model: each round, every one of :math:`n` users sends one report from an
:math:`\varepsilon_0`-LDP randomizer with fresh randomness, and the shuffler releases that round's
multiset; the :math:`T` rounds may be chosen adaptively. A pair of distributions dominates a
mechanism when every neighbouring pair's hockey-stick divergence is at most the pair's at every
:math:`\varepsilon`; dominating pairs compose (the product of the pairs dominates the adaptive
composition: Zhu, Dong & Wang, AISTATS 2022), and a PLD with privacy losses rounded
**up** (the pessimistic estimate of Meiser & Mohammadi 2018, as ``dp-accounting`` implements it)
dominates its pair.

- Upper bound: the stronger clone pair (clone probability :math:`2/(e^{\varepsilon_0}+1)`),
  which dominates every :math:`\varepsilon_0`-LDP randomizer
  (:mod:`shuffle_lib.accounting.decomposition`), as a pessimistic PLD.
- Floor: shuffled binary randomized response on one dataset (every other user holds 0), as an
  optimistic PLD (losses rounded down, truncated mass dropped): :math:`T` rounds of it cannot be
  more private than its composed curve, and neither can any general bound.
- For comparison, Rényi accounting of the same pair (:func:`stronger_clone_rdp`,
  :func:`rdp_to_epsilon`): valid, but looser than the PLD.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from dp_accounting.pld import pld_pmf
from dp_accounting.pld.privacy_loss_distribution import PrivacyLossDistribution
from numpy.typing import ArrayLike
from scipy.special import expit, logsumexp

from shuffle_lib._numerics import bisect
from shuffle_lib._validation import (
    check_array,
    check_bool,
    check_delta,
    check_epsilon,
    check_instance,
    check_integer,
    check_real,
)
from shuffle_lib.accounting._binomial import binomial_bulk, binomial_pmf
from shuffle_lib.accounting.shuffle import clone_numerical_epsilon, clone_probability

#: Largest number of (clone count, first coordinate) cells enumerated for one PLD.
PLD_CELLS_MAX = 60_000_000
#: Largest number of rounds.
ROUNDS_MAX = 10_000
#: Widest default privacy-loss grid step (the default is 0.1% of one round's epsilon).
DISCRETIZATION = 1e-2
#: Rényi orders of :func:`stronger_clone_rdp` by default: 1 + 1e-3 to 1 + 1e3, geometric.
RDP_ORDERS = 1 + np.geomspace(1e-3, 1e3, 121)
#: Mass of each binomial law left out (added to the infinite loss for the upper bound).
_TAIL = 1e-16
#: The same for the Rényi divergences, and the window's half-width in units of sqrt(count):
#: Hoeffding's bound 2 exp(-2 * 8.4^2) is below 1e-60.
_DEEP_TAIL = 1e-60
_DEEP_SPREAD = 8.4
#: Relative error allowed for the cells' masses in a Rényi divergence (far above their roundoff).
_RDP_MASS_RTOL = 1e-10


def _check(eps0: float, n: int, discretization: float | None) -> tuple[float, int, float]:
    """Checked arguments; the default step is 1e-3 of one round's epsilon at delta = 1e-6 (the
    certified stronger clone bound), between 1e-6 and :data:`DISCRETIZATION`, so that rounding
    the losses up costs about 0.1% of a round's epsilon at most."""
    eps0_val = float(check_epsilon(eps0, "eps0", positive=True))
    if eps0_val > 30:
        raise ValueError(f"eps0 must be at most 30 for the PLD accountants, got {eps0!r}")
    n_val = check_integer(n, "n", 2, 10**9)
    if discretization is None:
        one_round = float(clone_numerical_epsilon(eps0_val, n_val, 1e-6, "stronger"))
        return eps0_val, n_val, min(max(1e-3 * one_round, 1e-6), DISCRETIZATION)
    step = check_real(discretization, "discretization", low=1e-7, high=0.1)
    return eps0_val, n_val, step


def _window(size: int, spread: float = 4.5) -> int:
    """Half-width of the bulk of Bin(size, 1/2): ``2 spread`` standard deviations (9 by default)
    and a margin."""
    return math.ceil(spread * math.sqrt(size) + 4)


def _binned(loss: np.ndarray, prob: np.ndarray, step: float, pessimistic: bool
            ) -> tuple[int, np.ndarray]:
    """Masses summed per grid point, losses rounded up (pessimistic) or down: (first index,
    sums)."""
    index = (np.ceil(loss / step) if pessimistic else np.floor(loss / step)).astype(np.int64)
    low = int(index.min()) if index.size else 0
    return low, np.bincount(index - low, weights=prob)


def _pmf(parts: list[tuple[int, np.ndarray]], step: float, infinity: float,
         pessimistic: bool) -> pld_pmf.PLDPmf:
    """One PMF from binned parts (see :func:`_binned`)."""
    low = min(first for first, _ in parts)
    high = max(first + sums.size for first, sums in parts)
    total = np.zeros(high - low)
    for first, sums in parts:
        total[first - low:first - low + sums.size] += sums
    kept = np.nonzero(total > 0)[0]
    table = {int(i + low): float(total[i]) for i in kept}
    return pld_pmf.create_pmf(table, step, infinity, pessimistic)


def _clone_parts(eps0_val: float, n_val: int, step: float, deep: bool = False
                 ) -> tuple[list[tuple[int, np.ndarray]], float]:
    """The stronger clone pair's cells, losses rounded up to the grid and binned (see
    :func:`stronger_clone_pld`): the binned parts, and the mass left out (every true loss of
    the pair is at most eps0). ``deep`` (for Rényi divergences, where the left-out mass is
    weighted by up to e^((order - 1) eps0)): both binomials kept to a tail of about 1e-60, the
    mass left out bounded without cancellation (the clone count's tails, plus Hoeffding's
    2 exp(-2 h^2 / c) outside each window of half-width h)."""
    q = clone_probability(eps0_val, "stronger")
    low, high, lost = binomial_bulk(n_val - 1, q, _DEEP_TAIL if deep else _TAIL)
    half = _window(high, _DEEP_SPREAD if deep else 4.5)
    if (high - low + 1) * (2 * half + 3) > PLD_CELLS_MAX:
        raise ValueError(f"n={n_val} at eps0={eps0_val:g} needs about "
                         f"{(high - low + 1) * (2 * half + 3):.2e} cells, more than "
                         f"PLD_CELLS_MAX = {PLD_CELLS_MAX}")
    keep = float(expit(eps0_val))
    flip = float(expit(-eps0_val))
    parts = []
    dropped = lost
    counts = np.arange(low, high + 1)
    weights = binomial_pmf(counts, n_val - 1, q)
    rows = max(1, 2_000_000 // (2 * half + 3))
    for start in range(0, counts.size, rows):
        c = counts[start:start + rows, None].astype(float)
        w = weights[start:start + rows, None]
        centre = np.floor(c / 2)
        # Bin(c, 1/2) at x = centre - half - 1 .. centre + half + 1: Boost at the centre, then
        # the ratios b(x + 1) / b(x) = (c - x) / (x + 1) outwards (3 units of roundoff a step;
        # a ratio <= 0 past the support gives 0 there)
        grid = centre + np.arange(-half - 1, half + 2)[None, :]
        pmf = np.empty(grid.shape)
        mid = half + 1
        pmf[:, mid] = binomial_pmf(centre[:, 0].astype(np.int64), c[:, 0].astype(np.int64), 0.5)
        rising = np.maximum((c - grid[:, mid:-1]) / (grid[:, mid:-1] + 1), 0.0)
        pmf[:, mid + 1:] = pmf[:, mid:mid + 1] * np.cumprod(rising, axis=1)
        falling = np.maximum(grid[:, mid:0:-1] / (c - grid[:, mid:0:-1] + 1), 0.0)
        pmf[:, mid - 1::-1] = pmf[:, mid:mid + 1] * np.cumprod(falling, axis=1)
        x = grid[:, 1:]  # the first coordinate A + B
        before, at = pmf[:, :-1], pmf[:, 1:]  # b(x - 1), b(x)
        inside = (x >= 0) & (x <= c + 1)
        mass = np.where(inside, w * (keep * before + flip * at), 0.0)
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = x / (c - x + 1)  # b(x - 1) / b(x)
            loss = np.where(x >= c + 1, eps0_val,
                            np.log(keep * ratio + flip) - np.log(flip * ratio + keep))
        loss = np.clip(loss, -eps0_val, eps0_val)
        used = mass > 0
        parts.append(_binned(loss[used], mass[used], step, True))
        if deep:  # outside the window A + B misses centre +- (half + 1) only if A is past half
            outside = 2 * np.exp(-2 * (half - 1) ** 2 / np.maximum(c[:, 0], 1))
            dropped += float(np.sum(w[:, 0] * outside))
        else:
            dropped += float(w.sum() - mass.sum())
    if deep:
        return parts, min(dropped, 1.0)
    return parts, min(max(dropped, 0.0) + 1e-15, 1.0)  # the window's and tails' mass, rounding




def stronger_clone_pld(eps0: float, n: int, discretization: float | None = None
                       ) -> PrivacyLossDistribution:
    r"""Pessimistic PLD of the stronger clone pair for :math:`n` users: with
    :math:`C\sim\mathrm{Bin}(n-1,q_c)`, :math:`q_c=2/(e^{\varepsilon_0}+1)`,
    :math:`A\sim\mathrm{Bin}(C,1/2)`, :math:`B\sim\mathrm{Bern}(k)`, :math:`k=e^{\varepsilon_0}/
    (e^{\varepsilon_0}+1)`, the pair :math:`P=(C, A+B)`, :math:`Q=(C, A+1-B)` (symmetric), whose
    privacy loss at :math:`(c,x)` is :math:`\ln\frac{kr+1-k}{(1-k)r+k}`,
    :math:`r=x/(c-x+1)`. Every cell of the bulk of :math:`C` and of :math:`A` (nine standard
    deviations) is enumerated (Boost at the centre of each count, ratios outwards), its loss
    rounded up to the grid; the mass left out (about 2e-16 per law, plus rounding) goes to the
    infinite loss. It dominates one shuffled round of any
    :math:`\varepsilon_0`-LDP randomizer (Feldman, McMillan & Talwar 2023; the proof for every
    randomizer is :mod:`shuffle_lib.accounting.decomposition`'s). ``eps0`` in (0, 30],
    ``n`` up to 1e9 while the cells number at most :data:`PLD_CELLS_MAX` (``ValueError``
    beyond, before any work), ``discretization`` in [1e-7, 0.1] or ``None`` (0.1% of one round's
    epsilon at delta = 1e-6, between 1e-6 and :data:`DISCRETIZATION`).

    >>> pld = stronger_clone_pld(2.0, 1000)
    >>> 0 < pld.get_epsilon_for_delta(1e-6) < 2.0
    True
    """
    eps0_val, n_val, step = _check(eps0, n, discretization)
    parts, infinity = _clone_parts(eps0_val, n_val, step)
    return PrivacyLossDistribution(_pmf(parts, step, infinity, True))


def shuffled_rr_pld(eps0: float, n: int, discretization: float | None = None
                    ) -> PrivacyLossDistribution:
    r"""Optimistic PLD of one round of shuffled binary randomized response when every other user
    holds 0: the number of ones is :math:`\mathrm{Bern}\cdot+\mathrm{Bin}(n-1,f)`,
    :math:`f=1/(e^{\varepsilon_0}+1)`, the target holding 1 or 0 (both directions kept: the
    pair is not symmetric). Losses are rounded **down** and the mass left out is dropped, so
    composing it gives a lower bound (a floor) on the privacy loss of :math:`T` rounds of shuffled
    RR on this dataset (Meiser & Mohammadi 2018; ``dp-accounting``'s optimistic estimate).
    Same ranges as :func:`stronger_clone_pld`.

    >>> floor = shuffled_rr_pld(2.0, 1000).get_epsilon_for_delta(1e-6)
    >>> floor < stronger_clone_pld(2.0, 1000).get_epsilon_for_delta(1e-6)
    True
    """
    eps0_val, n_val, step = _check(eps0, n, discretization)
    flip = float(expit(-eps0_val))
    keep = float(expit(eps0_val))
    low, high, _ = binomial_bulk(n_val - 1, flip, _TAIL)
    y = np.arange(low, high + 2)  # the count of ones, the target's included
    with np.errstate(divide="ignore"):
        prev = np.log(binomial_pmf(y - 1, n_val - 1, flip))
        here = np.log(binomial_pmf(y, n_val - 1, flip))
        one = np.logaddexp(math.log(keep) + prev, math.log(flip) + here)  # target holds 1
        zero = np.logaddexp(math.log(flip) + prev, math.log(keep) + here)  # target holds 0
    used = np.isfinite(one) & np.isfinite(zero)
    remove = _pmf([_binned(np.clip(one - zero, -eps0_val, eps0_val)[used], np.exp(one[used]),
                           step, False)], step, 0.0, False)
    add = _pmf([_binned(np.clip(zero - one, -eps0_val, eps0_val)[used], np.exp(zero[used]),
                        step, False)], step, 0.0, False)
    return PrivacyLossDistribution(remove, add)


def _epsilon(pld: PrivacyLossDistribution, delta: float, upper: bool = True) -> float:
    """``pld``'s epsilon at ``delta``. dp-accounting's direct search can return infinity where
    delta lies below the mass of the largest finite loss (seen for the floor at n = 1e3,
    eps0 = 8, 100 rounds); then the epsilon is found by bisection on its delta, which is
    non-increasing in epsilon, ending on the safe side: the upper end for an ``upper`` bound,
    the lower end for a floor. Its overflow warning on the way is noise."""
    with np.errstate(over="ignore", divide="ignore"):
        value = float(pld.get_epsilon_for_delta(delta))
        if math.isfinite(value) or pld.get_delta_for_epsilon(math.inf) > delta:
            return value
        low, high = 0.0, 1.0
        while pld.get_delta_for_epsilon(high) > delta:
            low, high = high, 2 * high
        while high - low > 1e-9 * high:
            middle = (low + high) / 2
            low, high = (middle, high) if pld.get_delta_for_epsilon(middle) > delta else (low,
                                                                                      middle)
    return high if upper else low


def _rounds_delta(delta: float) -> float:
    """``delta`` checked for the composed accountants: in [1e-15, 0.5)."""
    delta_val = float(check_delta(delta, allow_zero=False))
    if not 1e-15 <= delta_val < 0.5:
        raise ValueError(f"delta must lie in [1e-15, 0.5), got {delta!r}")
    return delta_val


def composed_epsilon(pld: PrivacyLossDistribution, rounds: int, delta: float,
                     upper: bool = True) -> float:
    r"""Epsilon at ``delta`` of ``rounds`` self-compositions of ``pld`` (dp-accounting's FFT),
    on the safe side: the upper end of the search for a pessimistic PLD (``upper``, an upper
    bound) and the lower end for an optimistic one (a floor). Where dp-accounting's direct
    search returns infinity though delta lies above the infinite loss's mass, the epsilon comes
    from a bisection on delta. ``rounds`` from 1 to :data:`ROUNDS_MAX`, ``delta`` in
    [1e-15, 0.5).

    >>> pld = stronger_clone_pld(2.0, 1000)
    >>> composed_epsilon(pld, 10, 1e-6) == shuffled_rounds_epsilon(2.0, 1000, 1e-6, 10)
    True
    """
    check_instance(pld, "pld", PrivacyLossDistribution)
    count = check_integer(rounds, "rounds", 1, ROUNDS_MAX)
    delta_val = _rounds_delta(delta)
    return _epsilon(pld.self_compose(count) if count > 1 else pld, delta_val,
                    upper=check_bool(upper, "upper"))


def _composed_epsilon(build: Callable[..., PrivacyLossDistribution], eps0: float, n: int,
                      delta: float, rounds: int, discretization: float | None) -> float:
    """Epsilon at ``delta`` of ``rounds`` self-compositions of the PLD that ``build`` returns
    (arguments checked before it is built)."""
    _rounds_delta(delta)
    check_integer(rounds, "rounds", 1, ROUNDS_MAX)
    return composed_epsilon(build(eps0, n, discretization), rounds, delta,
                            upper=build is stronger_clone_pld)


def shuffled_rounds_epsilon(eps0: float, n: int, delta: float, rounds: int,
                            discretization: float | None = None) -> float:
    r"""Upper bound on the :math:`\varepsilon` of ``rounds`` shuffled rounds of any
    :math:`\varepsilon_0`-LDP randomizer at ``delta``: :func:`stronger_clone_pld` composed
    ``rounds`` times by ``dp-accounting`` (pessimistic throughout, its FFT's truncated mass counted
    as infinite loss). ``rounds`` at most :data:`ROUNDS_MAX`; ``delta`` in [1e-15, 0.5).

    >>> one = shuffled_rounds_epsilon(2.0, 1000, 1e-6, 1)
    >>> one < shuffled_rounds_epsilon(2.0, 1000, 1e-6, 10) < 10 * one
    True
    """
    return _composed_epsilon(stronger_clone_pld, eps0, n, delta, rounds, discretization)


def shuffled_rr_rounds_floor(eps0: float, n: int, delta: float, rounds: int,
                             discretization: float | None = None) -> float:
    r"""Lower bound (a floor) on the :math:`\varepsilon` of ``rounds`` rounds of shuffled binary
    randomized response at ``delta`` (every other user holding 0): :func:`shuffled_rr_pld`
    composed ``rounds`` times, optimistic throughout. Same ranges as
    :func:`shuffled_rounds_epsilon`.

    >>> shuffled_rr_rounds_floor(2.0, 1000, 1e-6, 10) < shuffled_rounds_epsilon(2.0, 1000, 1e-6, 10)
    True
    """
    return _composed_epsilon(shuffled_rr_pld, eps0, n, delta, rounds, discretization)


def stronger_clone_rdp(eps0: float, n: int, orders: np.ndarray | None = None,
                       discretization: float | None = None) -> np.ndarray:
    r"""Upper bounds on the Rényi divergences :math:`D_\alpha(P\|Q)` of the stronger clone pair
    (:func:`stronger_clone_pld`; the pair is symmetric, so also :math:`D_\alpha(Q\|P)`), one per
    order :math:`\alpha>1`:

    .. math::
        D_\alpha(P\|Q) = \frac{1}{\alpha-1}\ln E_P\bigl[e^{(\alpha-1)L}\bigr],

    :math:`L` the privacy loss, computed from the pair's cells as the PLD is, losses rounded
    **up** to the grid, but with both binomials kept to a tail of about :math:`10^{-60}` (the mass
    left out is weighted by up to :math:`e^{(\alpha-1)\varepsilon_0}`, so it is counted at the
    largest loss :math:`\varepsilon_0` and must be tiny), and a relative error of
    :math:`10^{-10}` allowed for the masses (log-sum-exp). A dominating pair bounds every
    f-divergence, so one shuffled round of any :math:`\varepsilon_0`-LDP randomizer is
    :math:`(\alpha, D_\alpha)`-RDP and :math:`T` rounds are :math:`(\alpha, T D_\alpha)`-RDP
    (Mironov 2017, Proposition 1).
    ``orders`` > 1 (default :data:`RDP_ORDERS`, at most 10,000 of them, each at most 1e6);
    other ranges as :func:`stronger_clone_pld`, where the deeper tails need about 3.5 times its
    cells (``n = 1e6`` at ``eps0 = 1`` is beyond :data:`PLD_CELLS_MAX`).

    >>> rdp = stronger_clone_rdp(2.0, 1000, np.array([2.0, 8.0]))
    >>> bool(0 < rdp[0] < rdp[1] < 2.0)
    True
    """
    eps0_val, n_val, step = _check(eps0, n, discretization)
    alphas = _check_orders(orders)
    parts, infinity = _clone_parts(eps0_val, n_val, step, deep=True)
    with np.errstate(divide="ignore"):
        logs = [np.log(infinity) + (alphas - 1) * eps0_val]
    for first, sums in parts:
        kept = np.nonzero(sums > 0)[0]
        loss = (first + kept) * step
        # one log-sum-exp per order over this part's grid points
        exponent = np.log(sums[kept])[None, :] + (alphas - 1)[:, None] * loss[None, :]
        logs.append(logsumexp(exponent, axis=1))
    return (logsumexp(np.vstack(logs), axis=0) + math.log1p(_RDP_MASS_RTOL)) / (alphas - 1)


def _check_orders(orders: np.ndarray | None) -> np.ndarray:
    if orders is None:
        return RDP_ORDERS
    alphas = check_array(orders, "orders", ndim=1, low=1.0, high=1e6)
    if alphas.size > 10_000 or np.any(alphas == 1):
        raise ValueError(f"orders must hold at most 10,000 orders above 1, got {alphas.size} "
                         f"with minimum {alphas.min()!r}")
    return alphas


def rdp_to_epsilon(orders: np.ndarray, rdp: np.ndarray, delta: float) -> float:
    r"""The smallest :math:`\varepsilon` over the orders of the conversion of Canonne, Kamath &
    Steinke (2020, Proposition 12): an :math:`(\alpha,\tau)`-RDP mechanism is
    :math:`(\varepsilon,\delta)`-DP with

    .. math::
        \varepsilon = \tau + \ln\frac{\alpha-1}{\alpha} - \frac{\ln\alpha+\ln\delta}{\alpha-1},

    floored at 0. ``orders`` > 1 and ``rdp`` >= 0 of the same length, ``delta`` in (0, 1).

    >>> eps = rdp_to_epsilon(np.array([2.0]), np.array([0.5]), 1e-6)
    >>> bool(abs(eps - (0.5 - 2 * math.log(2) - math.log(1e-6))) < 1e-12)
    True
    """
    alphas = _check_orders(orders)
    taus = check_array(rdp, "rdp", ndim=1, low=0.0)
    if taus.shape != alphas.shape:
        raise ValueError(f"rdp must hold one value per order: {taus.size} values, "
                         f"{alphas.size} orders")
    delta_val = float(check_delta(delta, allow_zero=False))
    if delta_val >= 1:
        raise ValueError(f"delta must lie in (0, 1), got {delta!r}")
    eps = taus + np.log1p(-1 / alphas) - (np.log(alphas) + math.log(delta_val)) / (alphas - 1)
    return float(max(np.min(eps), 0.0))


def shuffled_rounds_rdp_epsilon(eps0: float, n: int, delta: float, rounds: int,
                                orders: np.ndarray | None = None) -> float:
    r"""Rényi accounting of ``rounds`` shuffled rounds of any :math:`\varepsilon_0`-LDP
    randomizer: :math:`T` times :func:`stronger_clone_rdp`, converted by
    :func:`rdp_to_epsilon` at ``delta``. An upper bound, looser than
    :func:`shuffled_rounds_epsilon` (the conversion loses what the PLD keeps); shown for
    comparison. Ranges as :func:`shuffled_rounds_epsilon`.

    >>> pld = shuffled_rounds_epsilon(2.0, 1000, 1e-6, 10)
    >>> pld < shuffled_rounds_rdp_epsilon(2.0, 1000, 1e-6, 10)
    True
    """
    delta_val = _rounds_delta(delta)
    count = check_integer(rounds, "rounds", 1, ROUNDS_MAX)
    alphas = _check_orders(orders)
    return rdp_to_epsilon(alphas, count * stronger_clone_rdp(eps0, n, alphas), delta_val)


def rounds_local_epsilon(eps: float, n: int, delta: float, rounds: int,
                         eps0_max: float = 30.0) -> float:
    r"""Largest local level :math:`\varepsilon_0` (to :math:`10^{-3}\max(1,\varepsilon_0)`,
    rounded down) at which ``rounds`` shuffled rounds of any :math:`\varepsilon_0`-LDP randomizer
    are certified :math:`(\varepsilon,\delta)`-DP by :func:`shuffled_rounds_epsilon`, and never
    below :math:`\varepsilon/T` (each round is then :math:`\varepsilon/T`-DP even unshuffled,
    so basic composition certifies it): the per-round level of a repeated collection under one
    total budget. The search bisects from :math:`\varepsilon/T` up to ``eps0_max`` (at most 30);
    every level above :math:`\varepsilon/T` it returns has been certified by the PLD. Each step
    builds and composes one PLD (about 0.1-1 s below :math:`n=10^6`). ``eps`` > 0; other ranges as
    :func:`shuffled_rounds_epsilon`.

    >>> e0 = rounds_local_epsilon(1.0, 10_000, 1e-6, 10)
    >>> bool(0.1 < e0 and shuffled_rounds_epsilon(e0, 10_000, 1e-6, 10) <= 1.0)
    True
    """
    eps_val = float(check_epsilon(eps, positive=True))
    count = check_integer(rounds, "rounds", 1, ROUNDS_MAX)
    top = check_real(eps0_max, "eps0_max", low=0.0, low_open=True, high=30.0)

    def too_large(e0: float) -> bool:
        return shuffled_rounds_epsilon(e0, n, delta, count) > eps_val

    if not too_large(top):
        return top
    low = min(eps_val / count, top)  # certified by basic composition of pure rounds
    low, _ = bisect(too_large, low, top, 1e-3)
    return low


#: Largest number of (eps0, n) pairs of one :func:`rounds_table` (each builds two PLDs).
TABLE_PAIRS_MAX = 16
#: Largest number of rounds values of one :func:`rounds_table`.
TABLE_ROUNDS_MAX = 12
#: Largest n of one :func:`rounds_table` (about 8 s a pair at 1e6, eps0 = 1, 12 rounds values).
TABLE_N_MAX = 10**6


@dataclass(frozen=True)
class RoundsTable:
    """Composed epsilons on a grid: ``upper[i, j, t]`` and ``floor[i, j, t]`` at ``eps0[i]``,
    ``n[j]``, ``rounds[t]`` and ``delta``. Built by :func:`rounds_table`; every field is
    checked on construction (``TypeError``/``ValueError`` naming it): increasing 1-D grids
    (``eps0`` in (0, 30], integer ``n`` >= 2 and ``rounds`` >= 1), ``delta`` in (0, 1), and
    ``upper`` and ``floor`` finite, non-negative, of shape ``(eps0, n, rounds)``.

    >>> table = RoundsTable([1.0], [100], [1], 1e-6, [[[0.5]]], [[[0.4]]])
    >>> table.upper.shape
    (1, 1, 1)
    """

    eps0: np.ndarray
    n: np.ndarray
    rounds: np.ndarray
    delta: float
    upper: np.ndarray
    floor: np.ndarray

    def __post_init__(self) -> None:
        grids = {"eps0": check_array(self.eps0, "eps0", ndim=1, low=0.0, high=30.0),
                 "n": check_array(self.n, "n", ndim=1, integer=True, low=2),
                 "rounds": check_array(self.rounds, "rounds", ndim=1, integer=True, low=1)}
        for name, grid in grids.items():
            if np.any(np.diff(grid) <= 0) or (name == "eps0" and grid[0] == 0):
                raise ValueError(f"{name} must be increasing (and eps0 positive), got "
                                 f"{grid.tolist()!r:.80}")
            object.__setattr__(self, name, grid)
        delta_val = float(check_delta(self.delta, allow_zero=False))
        if delta_val >= 1:
            raise ValueError(f"delta must lie in (0, 1), got {self.delta!r}")
        object.__setattr__(self, "delta", delta_val)
        shape = tuple(grid.size for grid in grids.values())
        for name in ("upper", "floor"):
            values = check_array(getattr(self, name), name, ndim=3, low=0.0)
            if values.shape != shape:
                raise ValueError(f"{name} must have shape {shape}, got {values.shape}")
            object.__setattr__(self, name, values)


def rounds_table(eps0_values: ArrayLike, n_values: ArrayLike, rounds_values: ArrayLike,
                 delta: float = 1e-6) -> RoundsTable:
    r"""The upper bound (:func:`shuffled_rounds_epsilon`) and the shuffled-RR floor
    (:func:`shuffled_rr_rounds_floor`) of :math:`T` rounds for every combination of the given
    local levels, population sizes and numbers of rounds, each PLD built once per
    :math:`(\varepsilon_0, n)` and composed once per :math:`T` (default grid steps): the data
    of an explorer, computed before it draws. At most :data:`TABLE_PAIRS_MAX` pairs,
    :data:`TABLE_ROUNDS_MAX` rounds values and :math:`n\le` :data:`TABLE_N_MAX`
    (``ValueError`` before any work); other ranges as :func:`shuffled_rounds_epsilon`.

    >>> table = rounds_table([2.0], [1000], [1, 10])
    >>> bool(table.floor[0, 0, 1] < table.upper[0, 0, 1])
    True
    """
    levels = np.unique(check_array(eps0_values, "eps0_values", ndim=1, low=0.0, high=30.0))
    sizes = np.unique(check_array(n_values, "n_values", ndim=1, integer=True, low=2,
                                  high=TABLE_N_MAX))
    counts = np.unique(check_array(rounds_values, "rounds_values", ndim=1, integer=True, low=1,
                                   high=ROUNDS_MAX))
    if levels.size * sizes.size > TABLE_PAIRS_MAX or counts.size > TABLE_ROUNDS_MAX:
        raise ValueError(f"rounds_table takes at most {TABLE_PAIRS_MAX} (eps0, n) pairs and "
                         f"{TABLE_ROUNDS_MAX} rounds values, got {levels.size * sizes.size} and "
                         f"{counts.size}")
    if np.any(levels == 0):
        raise ValueError("eps0_values must be positive")
    delta_val = _rounds_delta(delta)
    shape = (levels.size, sizes.size, counts.size)
    upper, floor = np.empty(shape), np.empty(shape)
    for i, level in enumerate(levels):
        for j, size in enumerate(sizes):
            for out, build in ((upper, stronger_clone_pld), (floor, shuffled_rr_pld)):
                pld = build(float(level), int(size))
                out[i, j] = [composed_epsilon(pld, int(t), delta_val,
                                              upper=build is stronger_clone_pld)
                             for t in counts]
    return RoundsTable(levels, sizes, counts, delta_val, upper, floor)


__all__ = [
    "DISCRETIZATION",
    "PLD_CELLS_MAX",
    "RDP_ORDERS",
    "ROUNDS_MAX",
    "TABLE_N_MAX",
    "TABLE_PAIRS_MAX",
    "TABLE_ROUNDS_MAX",
    "RoundsTable",
    "composed_epsilon",
    "rdp_to_epsilon",
    "rounds_local_epsilon",
    "rounds_table",
    "shuffled_rounds_epsilon",
    "shuffled_rounds_rdp_epsilon",
    "shuffled_rr_pld",
    "shuffled_rr_rounds_floor",
    "stronger_clone_pld",
    "stronger_clone_rdp",
]
