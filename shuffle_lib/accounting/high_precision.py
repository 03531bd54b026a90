"""High-precision references for the shuffle accountants: the clone pair and shuffled randomized
response computed from their definitions in 40-digit arithmetic (mpmath).

This module is the second route that checks the float accountants of
:mod:`shuffle_lib.accounting.shuffle`, so it shares no code with them: no SciPy, no Boost, nothing
from the rest of the library but the input checks. It is slow (pure Python, one count at a time)
and meant for tests and spot checks, not for sweeps. Every route takes ``eps0`` in [0, 1e300]
(:data:`EPS0_MAX`) and keeps 40 digits there: exponentials by ``mp.exp``, both randomized-response
probabilities formed directly, and the enumerations raise their working precision until their
own rounding-error bound is below 1e-42 of the result.

The clone pair of Feldman, McMillan & Talwar (2021): C ~ Bin(n - 1, q) clones, A ~ Bin(C, 1/2),
the target's bit Delta ~ Bern(k) with k = e^eps0 / (1 + e^eps0); P = (A + Delta, C - A + 1 - Delta)
and Q the same with 1 - Delta. The total C + 1 is seen under both, so
H_{e^eps}(P || Q) = sum_c P(C = c) H_c with H_c the divergence between B_c + Bern(k) and
B_c + Bern(1 - k), B_c ~ Bin(c, 1/2). Each H_c is the sum over the outcomes x where
P_c(x) > e^eps Q_c(x), i.e. over x >= t_c for the integer threshold t_c found in 40-digit
arithmetic.
"""

from __future__ import annotations

import mpmath as mp
import numpy as np

from shuffle_lib._validation import check_epsilon, check_integer

DIGITS = 40
VARIANTS = ("fmt21", "stronger")
#: Limits of these pure-Python routes, past which a call would run for minutes (``ValueError``):
#: the number of users of :func:`clone_delta`, the same as the float accountants'
N_MAX = 10**10
#: the number of counts :func:`clone_delta` sums (about 3 s of CPU per 50,000: about 6 s at the
#: limit),
COUNTS_MAX = 10**5
#: the number of trials of one binomial tail, summed term by term (about 7 sqrt(c) terms near the
#: centre: a few seconds at the limit), in :func:`binomial_upper_tail` and :func:`clone_delta`,
TAIL_TRIALS_MAX = 10**9
#: and the number of users of the routines quadratic in n (:func:`clone_pair_laws`,
#: :func:`clone_delta_by_enumeration`, :func:`shuffled_rr_delta`; a few seconds at the limit:
#: about 2 s, 3 s and 0.2 s of CPU).
QUADRATIC_N_MAX = 200
#: Largest local level ``eps0`` every route takes (``ValueError`` beyond). Exponentials are formed
#: with ``mp.exp``, which keeps its relative precision at any argument (``mp.e ** x`` rounds the
#: constant e first and loses log10(x) digits: all of them at x = 1e40), so the cap only keeps
#: the arguments finite doubles with room to spare.
EPS0_MAX = 1e300
#: Working precision the enumerations may raise themselves to (digits): they start at
#: ``DIGITS + 10`` plus the digits that cancel in :math:`P - e^\varepsilon Q` and add more until
#: their own rounding-error bound is below 1e-42 of the result. About 370 digits are needed at the
#: smallest positive eps0 (5e-324); the cap is a guard against a loop, never reached in range.
DPS_MAX = 5000


def _check_real(value: object, name: str, low: float, high: float, low_open: bool = False) -> None:
    """Raise unless ``value`` is a real number (int, float or mpmath mpf; not a bool) in the
    interval from ``low`` to ``high`` (closed, or open at ``low``); NaN fails every comparison."""
    if isinstance(value, bool) or not isinstance(value, int | float | np.integer | np.floating
                                                 | mp.mpf):
        raise TypeError(f"{name} must be a real number (int, float or mpmath mpf), got {value!r}")
    inside = (low < value if low_open else low <= value) and value <= high
    if not inside:
        left = "(" if low_open else "["
        raise ValueError(f"{name} must lie in {left}{low}, {high}], got {value!r}")


def _check_eps0(eps0: object) -> float:
    """``eps0`` as a float in [0, :data:`EPS0_MAX`]; ``ValueError`` naming the limit beyond."""
    value = float(check_epsilon(eps0, "eps0"))
    if value > EPS0_MAX:
        raise ValueError(f"eps0 must be at most {EPS0_MAX:g} (the supported range), got {eps0!r}")
    return value


def _keep_flip(eps0: float) -> tuple[mp.mpf, mp.mpf]:
    r"""Both randomized-response probabilities :math:`1/(1+e^{\mp\varepsilon_0})` directly,
    never one as 1 minus the other (at large eps0 the flip probability is below the working
    precision of 1), at the current working precision."""
    return 1 / (1 + mp.exp(-mp.mpf(eps0))), 1 / (1 + mp.exp(mp.mpf(eps0)))


def _start_digits(eps: float, eps0: float) -> int:
    r"""Working precision to start an enumeration with: 40 digits, ten spare, and the digits that
    cancel in :math:`P(o) - e^\varepsilon Q(o)` when eps0 is small or eps close to eps0 (their
    ratio differs from :math:`e^\varepsilon` by a factor :math:`e^{\varepsilon_0-\varepsilon}`
    or less)."""
    with mp.workdps(30):
        gap = mp.expm1(mp.mpf(eps0) - mp.mpf(eps))  # relative room between P and e^eps Q
        lost = max(0, int(mp.ceil(-mp.log10(gap)))) if gap < 1 else 0
    return DIGITS + 10 + lost


def _certified_hockey_stick(pairs_at: object, eps: float, eps0: float, n: int) -> mp.mpf:
    r"""Sum of :math:`(P(o) - e^arepsilon Q(o))_+` over the outcomes given by
    ``pairs_at(dps)`` (an iterable of (P(o), Q(o)) computed at ``dps`` digits from positive terms
    only, about 4n roundings each), raising the precision until the rounding-error bound
    :math:`8n\,10^{-	ext{dps}}\sum (P(o)+e^arepsilon Q(o))`, over the outcomes that are
    positive or within that error of 0, is below :math:`10^{-(	ext{DIGITS}+2)}` of the result.
    Returns the result rounded to :data:`DIGITS` digits. ``eps < eps0`` (the result is then
    positive: the outcome with the largest count has likelihood ratio :math:`e^{arepsilon_0}`).
    """
    dps = _start_digits(eps, eps0)
    while dps <= DPS_MAX:
        with mp.workdps(dps):
            scale_e = mp.exp(mp.mpf(eps))
            unit = 8 * n * mp.mpf(10) ** -dps
            total, weight = mp.mpf(0), mp.mpf(0)
            for first, second in pairs_at(dps):
                diff = first - scale_e * second
                size = first + scale_e * second
                if diff > -unit * size:
                    weight += size
                    if diff > 0:
                        total += diff
            if total > 0 and unit * weight <= total * mp.mpf(10) ** -(DIGITS + 2):
                with mp.workdps(DIGITS):
                    return +total
            needed = int(mp.ceil(mp.log10(unit * weight / total))) if total > 0 else dps
        dps += max(needed + DIGITS + 5, 20)
    raise RuntimeError(f"the enumeration did not reach {DIGITS} digits within {DPS_MAX} digits "
                       f"of working precision (eps={eps}, eps0={eps0}, n={n})")


def _upper_tail(c: int, x: int) -> mp.mpf:
    """P(Bin(c, 1/2) >= x) by summing the probabilities upward until they no longer matter;
    below the centre, where they would grow for about c / 2 terms, as 1 - P(Bin >= c + 1 - x)
    (the mirror law; the result is then at least 1/2, so no digit is lost)."""
    if x <= 0:
        return mp.mpf(1)
    if x > c:
        return mp.mpf(0)
    if 2 * x < c:
        return 1 - _upper_tail(c, c + 1 - x)
    term = mp.binomial(c, x) / mp.mpf(2) ** c
    total = mp.mpf(0)
    y = x
    while y <= c:
        total += term
        if term < total * mp.mpf(10) ** -(DIGITS + 2):
            break
        term = term * (c - y) / (y + 1)
        y += 1
    return total


def _threshold(c: int, gain: mp.mpf, loss: mp.mpf) -> int:
    """Smallest x with gain * x > loss * (c + 1 - x): where P_c(x) - e^eps Q_c(x) turns positive.
    Located by the quotient, then checked by the products themselves (the quotient alone can
    round across an integer; x = c + 1 always qualifies)."""
    x = min(int(mp.floor(loss * (c + 1) / (gain + loss))) + 1, c + 1)
    while x > 1 and gain * (x - 1) > loss * (c + 2 - x):
        x -= 1
    while not gain * x > loss * (c + 1 - x):
        x += 1
    return x


def _check_count_budget(law: dict[int, mp.mpf], n_minus_1: int, q: mp.mpf) -> None:
    if len(law) > COUNTS_MAX:
        raise ValueError(
            f"n = {n_minus_1 + 1} and q = {float(q):.6g} need more than {COUNTS_MAX} clone counts "
            "above the cutoff (the supported limit): lower n, or raise relative_cutoff * scale"
        )


def _count_law(n_minus_1: int, q: mp.mpf, cutoff: mp.mpf) -> dict[int, mp.mpf]:
    """Bin(n - 1, q) from its mode outward, keeping the probabilities above ``cutoff``; at most
    :data:`COUNTS_MAX` of them (``ValueError`` beyond)."""
    if q == 0 or q == 1:
        return {0 if q == 0 else n_minus_1: mp.mpf(1)}
    mode = min(int(mp.floor((n_minus_1 + 1) * q)), n_minus_1)
    law = {mode: mp.binomial(n_minus_1, mode) * q**mode * (1 - q) ** (n_minus_1 - mode)}
    ratio = q / (1 - q)
    c, w = mode, law[mode]
    while c < n_minus_1 and w > cutoff:
        w = w * (n_minus_1 - c) / (c + 1) * ratio
        c += 1
        law[c] = w
        _check_count_budget(law, n_minus_1, q)
    c, w = mode, law[mode]
    while c > 0 and w > cutoff:
        w = w * c / (n_minus_1 - c + 1) / ratio
        c -= 1
        law[c] = w
        _check_count_budget(law, n_minus_1, q)
    return law


def clone_probability_mp(eps0: float, variant: str = "fmt21") -> mp.mpf:
    r"""The clone probability :math:`e^{-\varepsilon_0}` (``"fmt21"``) or
    :math:`2/(e^{\varepsilon_0}+1)` (``"stronger"``) in 40 digits (Feldman, McMillan & Talwar
    2021 and 2023), and so that :math:`1-q` keeps 40 digits too: at small :math:`\varepsilon_0`
    the working precision grows by :math:`\log_{10}(1/\varepsilon_0)` digits (40 digits would
    round :math:`e^{-10^{-70}}` to 1 and drop the rare non-clones).

    ``eps0`` in [0, :data:`EPS0_MAX`] (1e300; ``ValueError`` beyond).

    >>> float(clone_probability_mp(0.0, "stronger"))
    1.0
    >>> float(1 - clone_probability_mp(1e-70))
    1e-70
    """
    e0 = _check_eps0(eps0)
    with mp.workdps(DIGITS + (int(-np.log10(e0)) + 1 if 0 < e0 < 1 else 0)):
        if variant == "fmt21":
            return mp.exp(-mp.mpf(e0))
        if variant == "stronger":
            return 2 / (mp.exp(mp.mpf(e0)) + 1)
    raise ValueError(f"variant must be one of {VARIANTS}, got {variant!r}")


def clone_delta(eps: float, eps0: float, n: int, q: mp.mpf, relative_cutoff: float = 1e-30,
                scale: float = 1.0) -> mp.mpf:
    r"""Exact :math:`H_{e^\varepsilon}(P\|Q)` of the clone pair of Feldman, McMillan & Talwar
    (2021) with clone probability ``q`` (see :func:`clone_probability_mp`), in 40 digits.

    The sum runs over the counts whose probability exceeds ``relative_cutoff * scale``
    (``scale`` about the delta of interest), so what is left out is negligible (at most a few
    thousand times that). Tails of Bin(c, 1/2) follow a backward recurrence in c (adding a coin:
    :math:`P(B_c\ge y)=P(B_{c-1}\ge y)+b_{c-1}(y-1)/2`), anchored at the largest count by direct
    summation. Time grows like the number of counts kept: about 3 s of CPU per 50,000 (one
    comparison of products per count places the threshold, which moves by at most one).

    Limits (``ValueError`` beyond): ``n`` at most :data:`N_MAX` (1e10), at most
    :data:`COUNTS_MAX` (1e5) counts above the cutoff, and the largest of them at most
    :data:`TAIL_TRIALS_MAX` (1e9). ``eps0`` in [0, :data:`EPS0_MAX`] (1e300), ``eps`` >= 0 finite
    (the result is 0 from ``eps >= eps0`` on). ``q`` is a real number in [0, 1] (an mpmath
    ``mpf`` keeps its 40 digits), ``relative_cutoff`` and ``scale`` lie in (0, 1].

    >>> q = clone_probability_mp(1.0)
    >>> float(clone_delta(0.0, 1.0, 2, q)) == float(clone_delta_by_enumeration(0.0, 1.0, 2, q))
    True
    """
    eps = float(check_epsilon(eps))
    eps0 = _check_eps0(eps0)
    check_integer(n, "n", 2, N_MAX)
    _check_real(q, "q", 0, 1)
    _check_real(relative_cutoff, "relative_cutoff", 0, 1, low_open=True)
    _check_real(scale, "scale", 0, 1, low_open=True)
    with mp.workdps(DIGITS):
        if eps >= eps0:
            return mp.mpf(0)  # every likelihood ratio is at most e^eps0
        flip = 1 / (1 + mp.exp(mp.mpf(eps0)))
        # k - e^eps (1 - k) and e^eps k - (1 - k), written without cancellation
        gain = flip * mp.exp(mp.mpf(eps)) * mp.expm1(mp.mpf(eps0) - mp.mpf(eps))
        loss = flip * mp.expm1(mp.mpf(eps0) + mp.mpf(eps))
        law = _count_law(n - 1, q, mp.mpf(relative_cutoff) * mp.mpf(scale))
        counts = sorted(law, reverse=True)
        c = counts[0]
        if c > TAIL_TRIALS_MAX:
            raise ValueError(f"n = {n} and q = {float(q):.6g} give clone counts up to {c}, above "
                             f"the supported {TAIL_TRIALS_MAX:.0e} for the anchoring tail")
        x = _threshold(c, gain, loss) - 1  # track T = P(B_c >= t_c - 1) and p = b_c(t_c - 1)
        tail = _upper_tail(c, x)
        prob = mp.binomial(c, x) / mp.mpf(2) ** c
        total = mp.mpf(0)
        while True:
            h = gain * tail - loss * (tail - prob)  # g T(t - 1) - l T(t)
            if h > 0:
                total += law[c] * h
            if c == counts[-1]:
                return total
            # the threshold of c - 1 is that of c or one less (the products decide, as in
            # _threshold): t_(c-1) = x when x >= 1 and gain x > loss (c - x), else x + 1
            new_x = x - 1 if x >= 1 and gain * x > loss * (c - x) else x
            step = prob * x / c  # b_{c-1}(x - 1) / 2
            if new_x == x:
                tail, prob = tail - step, prob * 2 * (c - x) / c
            else:  # new_x == x - 1
                tail, prob = tail + step, 2 * step
            c, x = c - 1, new_x


def _clone_laws_at(eps0: float, n: int, q: object, dps: int) -> tuple[dict, dict]:
    """The two laws of the clone pair at ``dps`` digits, every probability a sum of products of
    positive numbers (no cancellation: the flip probability is never formed as 1 - keep)."""
    with mp.workdps(dps):
        keep, flip = _keep_flip(eps0)
        q_mp = mp.mpf(q)
        first: dict[tuple[int, int], mp.mpf] = {}
        second: dict[tuple[int, int], mp.mpf] = {}
        for c in range(n):
            w = mp.binomial(n - 1, c) * q_mp**c * (1 - q_mp) ** (n - 1 - c)
            for a in range(c + 1):
                base = w * mp.binomial(c, a) / mp.mpf(2) ** c
                for bit, p_weight, q_weight in ((1, keep, flip), (0, flip, keep)):
                    outcome = (a + bit, c - a + 1 - bit)
                    first[outcome] = first.get(outcome, 0) + base * p_weight
                    second[outcome] = second.get(outcome, 0) + base * q_weight
        return first, second


def clone_pair_laws(eps0: float, n: int, q: mp.mpf) -> tuple[dict, dict]:
    r"""The two laws P and Q of the clone pair, outcome by outcome: dictionaries from the pair
    (a, b) of counts to its probability (40 digits each, relative: the flip probability
    :math:`1/(1+e^{\varepsilon_0})` is formed directly, never as 1 - keep). Quadratic in n:
    ``n`` at most :data:`QUADRATIC_N_MAX` (200; ``ValueError`` beyond); ``eps0`` in
    [0, :data:`EPS0_MAX`]; ``q`` a real number in [0, 1]. Differences :math:`P(o)-e^\varepsilon
    Q(o)` of these 40-digit values cancel when eps0 is small: :func:`clone_delta_by_enumeration`
    recomputes the laws at the precision it needs.

    >>> first, second = clone_pair_laws(1.0, 2, clone_probability_mp(1.0))
    >>> round(float(sum(first.values())), 12), sorted(first) == sorted(second)
    (1.0, True)
    """
    eps0 = _check_eps0(eps0)
    check_integer(n, "n", 2, QUADRATIC_N_MAX)
    _check_real(q, "q", 0, 1)
    return _clone_laws_at(eps0, n, q, DIGITS)


def clone_delta_by_enumeration(eps: float, eps0: float, n: int, q: mp.mpf) -> mp.mpf:
    r"""The divergence of :func:`clone_delta` by listing every outcome of the pair (the laws of
    :func:`clone_pair_laws`): :math:`\sum_o (P(o)-e^\varepsilon Q(o))_+`, a check of the
    count-by-count sum itself, for small n (at most :data:`QUADRATIC_N_MAX`).

    40 correct digits at every ``eps0`` in [0, :data:`EPS0_MAX`]: the laws are recomputed at a
    working precision raised until a bound on the rounding error of the sum is below 1e-42 of
    the result (at small eps0, P and :math:`e^\varepsilon Q` agree to about
    :math:`\log_{10}(1/\varepsilon_0)` digits, all of which a fixed 40 digits lost below
    eps0 = 1e-40). 0 from ``eps >= eps0`` on (every likelihood ratio is at most
    :math:`e^{\varepsilon_0}`).

    >>> round(float(clone_delta_by_enumeration(0.0, 1.0, 3, clone_probability_mp(1.0))), 6)
    0.323384
    """
    eps = float(check_epsilon(eps))
    eps0 = _check_eps0(eps0)
    check_integer(n, "n", 2, QUADRATIC_N_MAX)
    _check_real(q, "q", 0, 1)
    if eps >= eps0:
        return mp.mpf(0)

    def pairs_at(dps: int) -> list[tuple[mp.mpf, mp.mpf]]:
        first, second = _clone_laws_at(eps0, n, q, dps)
        return [(first[o], second[o]) for o in first]

    return _certified_hockey_stick(pairs_at, eps, eps0, n)


def shuffled_rr_delta(eps: float, eps0: float, n: int, others_ones: int) -> mp.mpf:
    r"""Exact delta(eps) of shuffled binary randomized response (target 1 against 0, the others
    holding ``others_ones`` ones), by convolving the laws user by user (quadratic in n: ``n`` at
    most :data:`QUADRATIC_N_MAX`, 200; ``ValueError`` beyond): the larger of the two hockey-stick
    divergences :math:`\sum_j (P_1(j)-e^\varepsilon P_0(j))_+` and the reverse over the count
    j of ones.

    40 correct digits at every ``eps0`` in [0, :data:`EPS0_MAX`] (1e300): the convolution is
    recomputed at a working precision raised until a bound on the rounding error of each sum is
    below 1e-42 of it (at small eps0 the two laws agree to about :math:`\log_{10}(1/
    \varepsilon_0)` digits, all of which a fixed 40 digits lost below eps0 = 1e-40). 0 from
    ``eps >= eps0`` on.

    >>> float(shuffled_rr_delta(0.0, 1.0, 2, 0)) > 0
    True
    """
    eps = float(check_epsilon(eps))
    eps0 = _check_eps0(eps0)
    check_integer(n, "n", 2, QUADRATIC_N_MAX)
    if not 0 <= check_integer(others_ones, "others_ones", 0) <= n - 1:
        raise ValueError(f"others_ones must be at most n - 1 = {n - 1}, got {others_ones}")
    if eps >= eps0:
        return mp.mpf(0)

    def laws_at(dps: int) -> tuple[list[mp.mpf], list[mp.mpf]]:
        with mp.workdps(dps):
            # both probabilities directly, never as 1 - the other: at large eps0 the flip
            # probability e^-eps0 is below 40 digits of 1, and 1 - keep would lose all of it
            keep, flip = _keep_flip(eps0)
            law = [mp.mpf(1)]
            for i in range(n - 1):
                p_one, p_zero = (keep, flip) if i < others_ones else (flip, keep)
                law = [(law[j] if j < len(law) else 0) * p_zero
                       + (law[j - 1] * p_one if j >= 1 else 0) for j in range(len(law) + 1)]
            padded = [mp.mpf(0), *law, mp.mpf(0)]
            one = [keep * padded[j] + flip * padded[j + 1] for j in range(len(law) + 1)]
            zero = [flip * padded[j] + keep * padded[j + 1] for j in range(len(law) + 1)]
            return one, zero

    def forward(dps: int) -> list[tuple[mp.mpf, mp.mpf]]:
        return list(zip(*laws_at(dps), strict=True))

    def backward(dps: int) -> list[tuple[mp.mpf, mp.mpf]]:
        one, zero = laws_at(dps)
        return list(zip(zero, one, strict=True))

    return max(_certified_hockey_stick(forward, eps, eps0, n),
               _certified_hockey_stick(backward, eps, eps0, n))


def binomial_upper_tail(c: int, x: int) -> mp.mpf:
    """P(Bin(c, 1/2) >= x) in 40 digits, by direct summation (about 7 sqrt(c) terms near the
    centre). ``c`` at most :data:`TAIL_TRIALS_MAX` (1e9; ``ValueError`` beyond), ``x`` >= 0.

    >>> float(binomial_upper_tail(2, 1))
    0.75
    """
    check_integer(c, "c", 0, TAIL_TRIALS_MAX)
    check_integer(x, "x", 0)
    with mp.workdps(DIGITS):
        return _upper_tail(c, x)
