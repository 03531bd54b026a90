"""High-precision references for the shuffle accountants, computed from the definitions with
mpmath and sharing no code with the library (no SciPy, no Boost, no library helper).

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

DIGITS = 40


def _upper_tail(c: int, x: int) -> mp.mpf:
    """P(Bin(c, 1/2) >= x) by summing the probabilities upward until they no longer matter."""
    if x <= 0:
        return mp.mpf(1)
    if x > c:
        return mp.mpf(0)
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
    """Smallest x with gain * x > loss * (c + 1 - x): where P_c(x) - e^eps Q_c(x) turns positive."""
    return int(mp.floor(loss * (c + 1) / (gain + loss))) + 1


def _count_law(n_minus_1: int, q: mp.mpf, cutoff: mp.mpf) -> dict[int, mp.mpf]:
    """Bin(n - 1, q) from its mode outward, keeping the probabilities above ``cutoff``."""
    if q == 0:
        return {0: mp.mpf(1)}
    mode = min(int(mp.floor((n_minus_1 + 1) * q)), n_minus_1)
    law = {mode: mp.binomial(n_minus_1, mode) * q**mode * (1 - q) ** (n_minus_1 - mode)}
    ratio = q / (1 - q)
    c, w = mode, law[mode]
    while c < n_minus_1 and w > cutoff:
        w = w * (n_minus_1 - c) / (c + 1) * ratio
        c += 1
        law[c] = w
    c, w = mode, law[mode]
    while c > 0 and w > cutoff:
        w = w * c / (n_minus_1 - c + 1) / ratio
        c -= 1
        law[c] = w
    return law


def clone_delta(eps: float, eps0: float, n: int, q: mp.mpf, relative_cutoff: float = 1e-30,
                scale: float = 1.0) -> mp.mpf:
    """H_{e^eps}(P || Q) of the clone pair with clone probability ``q`` (an mpf), summed over the
    counts whose probability exceeds ``relative_cutoff * scale`` (``scale`` ~ the delta of
    interest); the rest changes the result by less than that. Tails of Bin(c, 1/2) follow a
    backward recurrence in c (adding a fair coin: P(B_c >= y) = P(B_{c-1} >= y) + b_{c-1}(y-1)/2),
    anchored at the largest count by direct summation."""
    with mp.workdps(DIGITS):
        keep = mp.e ** mp.mpf(eps0) / (1 + mp.e ** mp.mpf(eps0))
        flip = 1 - keep
        scale_e = mp.e ** mp.mpf(eps)
        gain, loss = keep - scale_e * flip, scale_e * keep - flip
        if gain <= 0:
            return mp.mpf(0)
        law = _count_law(n - 1, q, mp.mpf(relative_cutoff) * mp.mpf(scale))
        counts = sorted(law, reverse=True)
        c = counts[0]
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
            new_x = _threshold(c - 1, gain, loss) - 1
            step = prob * x / c  # b_{c-1}(x - 1) / 2
            if new_x == x:
                tail, prob = tail - step, prob * 2 * (c - x) / c
            else:  # new_x == x - 1
                tail, prob = tail + step, 2 * step
            c, x = c - 1, new_x


def clone_delta_by_enumeration(eps: float, eps0: float, n: int, q: mp.mpf) -> mp.mpf:
    """The same divergence by listing every outcome (a, b) of the pair: a check of the reference
    itself on small n."""
    with mp.workdps(DIGITS):
        keep = mp.e ** mp.mpf(eps0) / (1 + mp.e ** mp.mpf(eps0))
        flip = 1 - keep
        first: dict[tuple[int, int], mp.mpf] = {}
        second: dict[tuple[int, int], mp.mpf] = {}
        for c in range(n):
            w = mp.binomial(n - 1, c) * q**c * (1 - q) ** (n - 1 - c)
            for a in range(c + 1):
                base = w * mp.binomial(c, a) / mp.mpf(2) ** c
                for bit, p_weight, q_weight in ((1, keep, flip), (0, flip, keep)):
                    outcome = (a + bit, c - a + 1 - bit)
                    first[outcome] = first.get(outcome, 0) + base * p_weight
                    second[outcome] = second.get(outcome, 0) + base * q_weight
        scale_e = mp.e ** mp.mpf(eps)
        return mp.fsum(max(first[o] - scale_e * second.get(o, 0), 0) for o in first)


def shuffled_rr_delta(eps: float, eps0: float, n: int, others_ones: int) -> mp.mpf:
    """Exact delta(eps) of shuffled binary randomized response (target 1 against 0, the others
    holding ``others_ones`` ones), by convolving the laws term by term (small n only)."""
    with mp.workdps(DIGITS):
        keep = mp.e ** mp.mpf(eps0) / (1 + mp.e ** mp.mpf(eps0))
        law = [mp.mpf(1)]
        for i in range(n - 1):
            p_one = keep if i < others_ones else 1 - keep
            law = [(law[j] if j < len(law) else 0) * (1 - p_one)
                   + (law[j - 1] * p_one if j >= 1 else 0) for j in range(len(law) + 1)]
        padded = [mp.mpf(0), *law, mp.mpf(0)]
        one = [keep * padded[j] + (1 - keep) * padded[j + 1] for j in range(len(law) + 1)]
        zero = [(1 - keep) * padded[j] + keep * padded[j + 1] for j in range(len(law) + 1)]
        scale_e = mp.e ** mp.mpf(eps)
        forward = mp.fsum(max(a - scale_e * b, 0) for a, b in zip(one, zero, strict=True))
        backward = mp.fsum(max(b - scale_e * a, 0) for a, b in zip(one, zero, strict=True))
        return max(forward, backward)


def binomial_upper_tail(c: int, x: int) -> mp.mpf:
    """P(Bin(c, 1/2) >= x) in 40 digits."""
    with mp.workdps(DIGITS):
        return _upper_tail(c, x)
