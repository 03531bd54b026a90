r"""Exact privacy of shuffled k-ary randomized response: a certified floor for every amplification
bound, and the exact answer for the protocols that use k-RR.

Model: each of :math:`n` users reports their value in :math:`\{1,\dots,k\}` by k-RR at level
:math:`\varepsilon_0` (their own value with probability :math:`p/(p+k-1)`,
:math:`p=e^{\varepsilon_0}`, else one of the other :math:`k-1` uniformly); the analyst sees the
multiset of reports. The target holds :math:`x^0` or :math:`x^1`; everyone else holds one value,
either :math:`x^0` (``others="same"``) or a third value :math:`x^2` (``others="third"``,
:math:`k\ge3`).

A report of the target falls in :math:`\{x^0,x^1\}` with probability :math:`w=(p+1)/(p+k-1)`
whatever its value in that pair, and then it is binary randomized response (flip probability
:math:`f=1/(p+1)`). Another user's report falls in the pair with probability :math:`w_o` and is
:math:`x^1` there with probability :math:`g`: :math:`w_o=w`, :math:`g=f` for ``"same"``, and
:math:`w_o=2/(p+k-1)`, :math:`g=1/2` for ``"third"``. The reports outside the pair are merged
into one symbol. Then :math:`(T,Y)`, the number of reports in the pair and the number equal to
:math:`x^1`, is computed from the multiset, and with :math:`S\sim\mathrm{Bin}(n-1,w_o)` (others
inside) and :math:`F_s\sim\mathrm{Bin}(s,g)` (their :math:`x^1` reports),

.. math::
    P_b(t,y) = w\,P[S=t-1]\bigl(\pi_b P[F_{t-1}=y-1] + (1-\pi_b) P[F_{t-1}=y]\bigr)
             + (1-w)\,P[S=t]\,P[F_t=y],

:math:`\pi_0=f`, :math:`\pi_1=1-f`. It is sufficient (the exact divergence) for ``"same"`` and
for ``"third"`` at :math:`k=3`; for ``"third"`` at :math:`k>3` it is a post-processing, so its
divergence is a floor. At :math:`k=2` it is shuffled binary randomized response. The
``"third"`` dataset is the worse one where shuffling amplifies (e.g. :math:`10^4` users at
:math:`\varepsilon_0=4`), ``"same"`` where it hardly does (100 users): at :math:`k=3` every other
report is a clone of one of the target's two informative values or the neutral value, the shape
of the neutral-clone reduction (:mod:`shuffle_lib.accounting.decomposition`).
"""

from __future__ import annotations

import math

import numpy as np
from scipy.optimize import brentq
from scipy.special import expit
from scipy.stats import binom

from shuffle_lib._numerics import EPS_TOL
from shuffle_lib._validation import check_delta, check_epsilon, check_integer
from shuffle_lib.accounting._binomial import binomial_bulk, binomial_pmf, binomial_sf, value_rtol

#: Largest number of users.
KRR_N_MAX = 10**8
#: Largest number of categories.
KRR_K_MAX = 10**6
#: Largest local level.
KRR_EPS0_MAX = 100.0
#: Smallest delta the epsilon search takes.
KRR_DELTA_MIN = 1e-150
#: Mass of the count of others inside the pair left out (only lowers the floor).
_MASS = 1e-180
_UNIT = float(np.finfo(float).eps)
#: Relative margin by which the flip probability is rounded up (``expit`` is within 4 units).
_FLIP_MARGIN = 8 * _UNIT


def _check(eps0: float, n: int, k: int, others: str) -> tuple[float, int, int]:
    eps0_val = float(check_epsilon(eps0, "eps0"))
    if eps0_val > KRR_EPS0_MAX:
        raise ValueError(f"eps0 must be at most {KRR_EPS0_MAX}, got {eps0!r}")
    n_val = check_integer(n, "n", 2, KRR_N_MAX)
    k_val = check_integer(k, "k", 2, KRR_K_MAX)
    if not isinstance(others, str) or others not in ("same", "third"):
        raise ValueError(f"others must be 'same' or 'third', got {others!r}")
    if others == "third" and k_val < 3:
        raise ValueError(f"others='third' needs k >= 3, got k={k!r}")
    return eps0_val, n_val, k_val


def _value_rtol(size: np.ndarray | int, deviation: np.ndarray) -> np.ndarray:
    """Relative error of a binomial probability or tail for the float parameter as given: Boost's
    (:func:`value_rtol`) plus a margin of 8 units of roundoff."""
    return value_rtol(size, deviation) + 8 * _UNIT


class _KrrCurve:
    """The floor's pieces for one (eps0, n, k): the bulk of S and the binomials of F.

    The flip probability is rounded up and the probability of a report in the pair rounded down
    (by more than their rounding errors), so the laws are exactly those of a mechanism that is a
    post-processing of k-RR applied to every report (each report in the pair flipped again with
    a small probability, or moved out of the pair to a uniform other value); the shuffler commutes
    with it, so its divergence is at most the true one and a floor needs no error term for the
    parameters (as for the binary floor)."""

    def __init__(self, eps0: float, n: int, k: int, others: str = "same",
                 mass: float = _MASS) -> None:
        self.flip = min(float(expit(-eps0)) * (1 + _FLIP_MARGIN), 0.5)  # 1 / (p + 1), up
        self.keep = 1 - self.flip  # within a unit of roundoff (it is at least 1/2)
        # (p + 1) / (p + k - 1) = expit(logit), rounded down past the logit's rounding error
        logit = math.log1p(math.exp(-eps0)) + eps0 - (math.log(k - 2) if k > 2 else 0.0)
        margin = 16 * _UNIT * (abs(logit) + 2)
        if k == 2:
            self.inside, self.outside = 1.0, 0.0
        elif logit <= 0:
            self.inside = float(expit(logit)) * (1 - margin)
            self.outside = 1 - self.inside
        else:
            self.outside = float(expit(-logit)) * (1 + margin)
            self.inside = 1 - self.outside
        if others == "same":
            self.share, others_inside = self.flip, self.inside
        else:
            # w_o = 2 f w, rounded up from the rounded-down w (so w_o / w >= 2 f exactly), and
            # the target's flip raised to w_o / (2 w): the three are then the laws after a
            # per-report post-processing of the merged k-RR (a report moved out of the pair or
            # into it, uniformly, and an extra flip; checked at 40 digits by
            # test_third_value_parameters_are_a_post_processing), up to the rounding of 1 - w
            # that the error bars cover, so the floor needs no error term for them
            if self.inside >= 0.5:  # 1 - outside may round up: lower it, keep the sum exact
                self.inside *= 1 - 4 * _UNIT
                self.outside = 1 - self.inside
            others_inside = min(2 * self.flip * self.inside * (1 + 4 * _UNIT), 1.0)
            self.flip = min(others_inside / (2 * self.inside) * (1 + 4 * _UNIT), 0.5)
            self.keep = 1 - self.flip
            self.share = 0.5
        self.others_inside = others_inside
        others_outside = self.outside if others == "same" else 1 - others_inside
        # P[S = t] / P[S = t - 1] = ((n - t) / t) odds: the likelihood ratio's constant per t
        self.odds_factor = (0.0 if self.outside == 0.0 else
                            self.outside * others_inside / (self.inside * others_outside))
        self.n = n
        others_count = n - 1
        # the bulk of S (others inside the pair), from its smaller parameter (1 - w_o is exact
        # when it is used, w_o >= 1/2)
        if others_outside == 0.0:
            counts = np.array([others_count])
            s_pmf, s_rtol = np.ones(1), np.zeros(1)
        elif others_inside <= 0.5:
            low, high, _ = binomial_bulk(others_count, others_inside, mass)
            counts = np.arange(low, high + 1)
            s_pmf = binomial_pmf(counts, others_count, others_inside)
            s_rtol = _value_rtol(others_count, counts - others_count * others_inside)
        else:
            low, high, _ = binomial_bulk(others_count, others_outside, mass)
            outs = np.arange(low, high + 1)
            counts = others_count - outs
            s_pmf = binomial_pmf(outs, others_count, others_outside)
            s_rtol = _value_rtol(others_count, outs - others_count * others_outside)
        self.s_counts, self.s_pmf, self.s_rtol = counts, s_pmf, s_rtol
        # t = s + 1 (target inside) and t = s (target outside) for every kept s
        self.t = np.union1d(counts, counts + 1)
        # P[S = t - 1] and P[S = t] (0 outside the kept bulk), looked up without a Python loop
        order = np.argsort(counts)
        kept = counts[order]

        def at(values: np.ndarray, keys: np.ndarray) -> np.ndarray:
            pos = np.minimum(np.searchsorted(kept, keys), kept.size - 1)
            return np.where(kept[pos] == keys, values[order][pos], 0.0)

        self.s_before, self.r_before = at(s_pmf, self.t - 1), at(s_rtol, self.t - 1)
        self.s_at, self.r_at = at(s_pmf, self.t), at(s_rtol, self.t)

    def _threshold(self, log_gamma: float, upper: bool) -> np.ndarray:
        """Per t, the first y with P1(t, y) >= e^eps P0(t, y) (``upper``; t + 1: none), or the
        last y with P0(t, y) >= e^eps P1(t, y) (-1: none). The likelihood ratio is linear in y:
        multiplying both laws by (t - y) / (w P[S = t - 1] P[F_{t-1} = y]) (y < t; another
        positive factor gives the same linear forms at y = t) gives, with
        r = (1 - g) / g and K = (n - t) odds_factor (1 - g),

            P1 / P0 = (y ((1 - f) r - f) + f t + K) / (y (f r - (1 - f)) + (1 - f) t + K),

        and the coefficient of y in P1 - e^eps P0 is positive (f <= g <= 1 - f): both sets are
        thresholds. (Rounding can only move a threshold by one near a tie; any set gives a
        floor.)"""
        f, g, t = self.flip, self.share, self.t.astype(float)
        spare = self.odds_factor * (1 - g) * (self.n - t)
        ratio = (1 - g) / g
        level = math.exp(log_gamma if upper else -log_gamma)
        slope = ((1 - f) * ratio - f) - level * (f * ratio - (1 - f))  # 0 only at f = g = 1/2
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            point = (level * ((1 - f) * t + spare) - (f * t + spare)) / slope
        if upper:
            return np.clip(np.ceil(np.nan_to_num(point, nan=np.inf, posinf=np.inf)), 0,
                           t + 1).astype(np.int64)
        return np.clip(np.floor(np.nan_to_num(point, nan=-np.inf, neginf=-np.inf)), -1,
                       t).astype(np.int64)

    def _tail_and_point(self, cut: np.ndarray, size: np.ndarray, upper: bool
                        ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """For F ~ Bin(size, g): P[F >= cut] and P[F = cut - 1] (``upper``), or P[F <= cut - 1]
        and P[F = cut]; and one relative error bound for both (Boost's, plus a margin)."""
        f = self.share
        size = np.maximum(size, 0)  # t - 1 = -1 only where P[S = t - 1] = 0
        point = binomial_pmf(cut - 1 if upper else cut, size, f)
        if upper:
            tail = binomial_sf(cut - 1, size, f)
        else:
            below = cut - 1
            tail = np.where(below >= 0, binom._cdf(np.clip(below, 0, None), size, f), 0.0)
            tail = np.where(below >= size, 1.0, tail)
        return tail, point, _value_rtol(size, cut - size * f)

    def delta(self, eps: float) -> float:
        """A certified lower bound on max(H(P1||P0), H(P0||P1)) at ``eps``."""
        log_gamma = eps
        gamma = math.exp(min(eps, 700.0))
        best = 0.0
        f, keep = self.flip, self.keep
        for upper in (True, False):
            cut = self._threshold(log_gamma, upper)
            t = self.t
            # a, b: the others inside (t - 1 of them) put y - 1, resp. y, reports x^1 in the set;
            # c: t others inside. With F_t = F_{t-1} + Bern(g), all three come from one tail and
            # one probability of F_{t-1}: upper set {y >= cut}, lower set {y <= cut}
            tail, point, rtol = self._tail_and_point(cut, t - 1, upper)
            if upper:
                b, a, c = tail, tail + point, tail + self.share * point
            else:
                a, b, c = tail, tail + point, tail + (1 - self.share) * point
            # nobody else inside (t = 0): F_0 = 0, so the set holds y = 0 or nothing
            c = np.where(t == 0, ((cut <= 0) if upper else (cut >= 0)).astype(float), c)
            ra = rb = rc = rtol + 2 * _UNIT  # sums of two non-negative terms
            # mass of the chosen set when the target holds x^1 (reports x^1 with probability
            # 1 - f) and x^0 (with probability f); both weights as computed, never 1 - (1 - f)
            favoured = keep * a + f * b
            other = f * a + keep * b
            inside_num, inside_den = (favoured, other) if upper else (other, favoured)
            # plus the roundings of keep, inside and outside and of the products
            r_inside = np.maximum(ra, rb) + 8 * _UNIT + self.r_before
            r_out = rc + 8 * _UNIT + self.r_at
            num = (self.inside * self.s_before * inside_num * (1 - r_inside)
                   + self.outside * self.s_at * c * (1 - r_out))
            den = (self.inside * self.s_before * inside_den * (1 + r_inside)
                   + self.outside * self.s_at * c * (1 + r_out))
            gain = np.maximum(num * (1 - 4 * _UNIT) - gamma * den * (1 + 4 * _UNIT), 0.0)
            best = max(best, math.fsum(gain.tolist()) * (1 - 4 * _UNIT))
        return min(best, 1.0)


def shuffled_krr_exact_delta(eps: float, eps0: float, n: int, k: int, others: str = "same"
                             ) -> float:
    r"""Exact :math:`\delta(\varepsilon)` of shuffled k-ary randomized response (module docstring:
    the target holds :math:`x^0` or :math:`x^1`, everyone else :math:`x^0` for ``others="same"``
    or a third value for ``"third"``), rounded **down**: a certified floor. Both directions are
    taken, :math:`\max(H_{e^\varepsilon}(P_1\|P_0), H_{e^\varepsilon}(P_0\|P_1))`. For
    ``"third"`` at :math:`k>3` the values outside the pair are merged (a further floor).

    For each count :math:`t` in the pair the likelihood ratio is linear in :math:`y`, so the best
    set is :math:`y` above (or below) a threshold in closed form; its masses come from one
    binomial tail and one probability (Boost) with relative error bounds, the flip probability
    rounded up and :math:`w` rounded down (a post-processing of k-RR, so no error term is needed
    for them). Any set gives a lower bound; this one gives the exact value up to those error
    bars, as the tests find against a 40-digit sum of the definition. Cost: one pass over the
    bulk of :math:`S` (about :math:`60\sqrt{nw(1-w)}` counts): about 0.05 s at :math:`n=10^6`
    and 2 s at :math:`10^8` for small :math:`k`. Range: :math:`n\le 10^8`,
    :math:`2\le k\le 10^6`, :math:`\varepsilon_0\le 100`; ``ValueError`` beyond. At ``k=2`` it
    equals :func:`~shuffle_lib.accounting.shuffle.shuffled_rr_exact_delta` with
    ``others_ones=0``. Source: the definitions (k-RR: Kairouz, Bonawitz & Ramage 2016; the
    hockey-stick divergence of the sufficient statistic's two laws).

    >>> from shuffle_lib.accounting.decomposition import shuffled_channel_delta
    >>> from shuffle_lib.randomizers import krr_channel
    >>> by_enumeration = shuffled_channel_delta(krr_channel(3, 1.0), (0, 1), [0], 0.0)
    >>> abs(shuffled_krr_exact_delta(0.0, 1.0, 2, 3) - by_enumeration) < 1e-12
    True
    >>> third = shuffled_channel_delta(krr_channel(3, 1.0), (0, 1), [2, 2], 0.0)
    >>> abs(shuffled_krr_exact_delta(0.0, 1.0, 3, 3, others="third") - third) < 1e-12
    True
    """
    eps_val = float(check_epsilon(eps))
    eps0_val, n_val, k_val = _check(eps0, n, k, others)
    if eps_val >= eps0_val:
        return 0.0
    return _KrrCurve(eps0_val, n_val, k_val, others).delta(eps_val)


def shuffled_krr_exact_epsilon(eps0: float, n: int, k: int, delta: float, others: str = "same"
                               ) -> float:
    r"""Smallest :math:`\varepsilon` with :func:`shuffled_krr_exact_delta` :math:`\le\delta`,
    rounded **down** (a lower bound on the privacy loss of shuffled k-RR, hence a floor for every
    valid amplification bound for k-RR and for every :math:`\varepsilon_0`-LDP randomizer).
    A root search to :math:`10^{-12}\varepsilon` (relative), first on a coarser floor (the
    counts within about six standard deviations) to bracket the root, then on the full one,
    and a step down until the floor is certainly above ``delta``. Same range as
    :func:`shuffled_krr_exact_delta` (and its ``others``), and ``delta`` at least 1e-150.
    About 20 evaluations: up to
    about a second at :math:`n=10^6` and 11 s at :math:`n=10^8` (small :math:`k` and
    :math:`\varepsilon_0`, the widest bulk); large :math:`k` is far faster.

    >>> 0 < shuffled_krr_exact_epsilon(2.0, 10_000, 10, 1e-6) < 2.0
    True
    >>> shuffled_krr_exact_epsilon(4.0, 2000, 3, 1e-6, "third") > shuffled_krr_exact_epsilon(
    ...     4.0, 2000, 3, 1e-6)
    True
    """
    eps0_val, n_val, k_val = _check(eps0, n, k, others)
    delta_val = float(check_delta(delta, allow_zero=False))
    if delta_val < KRR_DELTA_MIN:
        raise ValueError(f"delta must be at least {KRR_DELTA_MIN}, got {delta!r}")
    if eps0_val == 0:
        return 0.0
    target = delta_val * (1 + 4 * _UNIT)
    # Any subset of the counts S gives a floor: a coarse curve (S within about 6 standard
    # deviations) locates the root cheaply, then the full one (mass 1e-12 delta left out, which
    # moves the floor by far less than its tolerance) refines it inside a narrow bracket.
    coarse = _KrrCurve(eps0_val, n_val, k_val, others, 1e-9)
    curve = _KrrCurve(eps0_val, n_val, k_val, others, max(delta_val * 1e-12, _MASS))
    memo: dict[tuple[int, float], float] = {}

    def excess(which: _KrrCurve, e: float) -> float:
        key = (id(which), e)  # the root searches revisit their brackets' ends
        if key not in memo:
            value = which.delta(e)
            memo[key] = (math.log(value) if value > 0 else -800.0) - math.log(target)
        return memo[key]

    if excess(curve, 0.0) <= 0:
        return 0.0
    low, high = 0.0, eps0_val
    if excess(coarse, 0.0) > 0:  # the coarse floor crosses delta too: use it to bracket
        guess = brentq(lambda e: excess(coarse, e), 0.0, eps0_val, rtol=1e-6)
        width = 1e-3 * guess
        low = max(guess - width, 0.0)
        while low > 0 and excess(curve, low) <= 0:
            width *= 8
            low = max(guess - width, 0.0)
        high = min(guess + width, eps0_val)
        while high < eps0_val and excess(curve, high) > 0:
            width *= 8
            high = min(guess + width, eps0_val)
    root = brentq(lambda e: excess(curve, e), low, high, xtol=EPS_TOL * eps0_val * 1e-3,
                  rtol=EPS_TOL)
    # round down: step below the root until the floor is certainly above delta there
    step = EPS_TOL * max(root, 1e-300)
    while root > 0 and excess(curve, root) <= 0:
        root = max(root - step, 0.0)
        step *= 2
    return root


__all__ = ["KRR_K_MAX", "KRR_N_MAX", "shuffled_krr_exact_delta", "shuffled_krr_exact_epsilon"]
