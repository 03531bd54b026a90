r"""Hypothesis-testing privacy: trade-off functions, f-DP and Gaussian DP (GDP).

A trade-off function :math:`T(P,Q)(\alpha)` is the smallest type II error of a test between
:math:`P` and :math:`Q` whose type I error is at most :math:`\alpha`; a mechanism is f-DP when
every neighbouring pair has :math:`T \ge f`, and :math:`\mu`-GDP when
:math:`f = G_\mu = T(N(0,1), N(\mu,1))`. Facts 1, 3 and 4 of Chen, Cao & Ge (GSPA,
Appendix), which restate Dong, Roth & Su (2022).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
from numpy.typing import ArrayLike
from scipy.optimize import brentq
from scipy.special import erfcx, erfinv, log_ndtr, ndtri
from scipy.stats import norm

from shuffle_lib._numerics import scalar_or_array
from shuffle_lib._validation import (
    check_delta,
    check_epsilon,
    check_integer,
    check_positive,
    check_probability,
)
from shuffle_lib.accounting.finite import check_distribution_pair


def gdp_tradeoff(mu: ArrayLike, alpha: ArrayLike) -> np.ndarray | float:
    r"""Gaussian trade-off function :math:`G_\mu(\alpha)=\Phi(\Phi^{-1}(1-\alpha)-\mu)`.

    Chen et al. (GSPA), Fact 3. ``mu`` > 0 and ``alpha`` in [0, 1]; broadcasts.

    >>> round(gdp_tradeoff(1.0, 0.05), 6)
    0.740489
    """
    mu_arr = check_positive(mu, "mu")
    alpha_arr = check_probability(alpha, "alpha")
    return scalar_or_array(norm.cdf(norm.isf(alpha_arr) - mu_arr))


def approx_dp_tradeoff(eps: ArrayLike, delta: ArrayLike, alpha: ArrayLike) -> np.ndarray | float:
    r"""Trade-off function of :math:`(\varepsilon,\delta)`-DP,
    :math:`f_{\varepsilon,\delta}(\alpha)=\max\{0,\,1-\delta-e^\varepsilon\alpha,\,
    e^{-\varepsilon}(1-\delta-\alpha)\}`.

    Chen et al. (GSPA), Fact 1 (the paper prints the last term as
    :math:`e^{-\varepsilon}(1-\delta-\varepsilon)`, a typo for :math:`1-\delta-\alpha`;
    see Dong, Roth & Su 2022).

    >>> round(approx_dp_tradeoff(1.0, 0.0, 0.1), 6)
    0.728172
    """
    eps_arr = check_epsilon(eps)
    delta_arr = check_delta(delta)
    alpha_arr = check_probability(alpha, "alpha")
    with np.errstate(over="ignore"):
        first = 1.0 - delta_arr - np.exp(eps_arr) * alpha_arr
    second = np.exp(-eps_arr) * (1.0 - delta_arr - alpha_arr)
    return scalar_or_array(np.maximum(0.0, np.maximum(first, second)))


def tradeoff_from_distributions(p: ArrayLike, q: ArrayLike, alpha: ArrayLike) -> np.ndarray | float:
    r"""Exact trade-off function :math:`T(P,Q)(\alpha)` of two distributions on a finite set.

    By the Neyman-Pearson lemma the optimal tests reject the outcomes with the largest
    likelihood ratio :math:`Q(o)/P(o)` first (randomizing on the boundary), so the curve is the
    piecewise-linear interpolation of the points
    :math:`(\sum_{o\le m} P(o),\, 1-\sum_{o\le m} Q(o))` in decreasing ratio order.
    Chen et al. (GSPA), equation (5).

    >>> round(tradeoff_from_distributions([0.75, 0.25], [0.25, 0.75], 0.25), 12)
    0.25
    """
    p_arr, q_arr = check_distribution_pair(p, q)
    alpha_arr = check_probability(alpha, "alpha")
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(p_arr > 0, q_arr / np.where(p_arr > 0, p_arr, 1.0), np.inf)
    order = np.argsort(-ratio, kind="stable")
    type1 = np.concatenate([[0.0], np.cumsum(p_arr[order])])
    type2 = np.concatenate([[1.0], 1.0 - np.cumsum(q_arr[order])])
    # Outcomes with P = 0 are rejected for free: keep the lowest type II error at each type I error.
    keep = np.concatenate([type1[1:] > type1[:-1], [True]])
    curve = np.interp(alpha_arr, type1[keep], np.clip(type2[keep], 0.0, 1.0))
    return scalar_or_array(curve)


def tradeoff_chain(
    f: Callable[[np.ndarray], ArrayLike], g: Callable[[np.ndarray], ArrayLike], alpha: ArrayLike
) -> np.ndarray | float:
    r"""Chaining two trade-off bounds (GSPA, Fact 4): if :math:`T(P,Q)\ge f` and
    :math:`T(Q,R)\ge g` then :math:`T(P,R)(\alpha)\ge g(1-f(\alpha))`.

    Why: a test with type I error :math:`\alpha` under :math:`P` rejects with probability at most
    :math:`1-f(\alpha)` under :math:`Q`, and :math:`g` is non-increasing. GSPA's statement
    writes the first hypothesis as :math:`T(P,R)\ge f`, a typo for :math:`T(P,Q)\ge f` (its own
    proof of Theorem 2 uses it that way). ``f`` and ``g`` take an array of type I errors and must
    return an array of its shape of finite type II errors in [0, 1]: ``ValueError`` naming ``f``
    or ``g`` otherwise (``TypeError`` for strings, None or bools). The result is exact for
    Gaussian shifts:
    :math:`G_{\mu_2}(1-G_{\mu_1}(\alpha))=G_{\mu_1+\mu_2}(\alpha)`.

    >>> def f(a): return gdp_tradeoff(1.0, a)
    >>> def g(a): return gdp_tradeoff(0.5, a)
    >>> bool(np.isclose(tradeoff_chain(f, g, 0.1), gdp_tradeoff(1.5, 0.1)))
    True
    """
    for name, function in (("f", f), ("g", g)):
        if not callable(function):
            raise TypeError(f"{name} must be a callable trade-off function, got {function!r}")
    alpha_arr = check_probability(alpha, "alpha")
    first = _tradeoff_values(f, "f", alpha_arr, "alpha")
    second = _tradeoff_values(g, "g", 1.0 - first, "1 - f(alpha)")
    return scalar_or_array(second)


def _tradeoff_values(
    function: Callable[[np.ndarray], ArrayLike], name: str, points: np.ndarray, label: str
) -> np.ndarray:
    """``function(points)`` as a float array, checked as the values of a trade-off function: the
    shape of ``points`` (a scalar, a wrong length or a broadcastable shape is refused rather than
    silently broadcast), real numbers (not strings, None or bools), finite, and in [0, 1].
    ``ValueError`` (``TypeError`` for what is not a number) naming the argument ``name``."""
    raw = function(points)
    what = f"{name}({label})"
    if raw is None or isinstance(raw, str | bytes | bool | np.bool_):
        raise TypeError(f"{name} must return numbers, got {what} = {raw!r:.80}")
    try:
        values = np.asarray(raw)
    except ValueError as err:  # ragged nesting
        raise ValueError(f"{name} must return an array of the shape of its argument "
                         f"{points.shape}, got {what} = {raw!r:.80}") from err
    if values.dtype.kind not in "iuf":
        raise TypeError(f"{name} must return real numbers, got {what} of dtype {values.dtype}")
    if values.shape != points.shape:
        raise ValueError(f"{name} must return an array of the shape of its argument "
                         f"{points.shape}, got {what} of shape {values.shape}")
    values = values.astype(float)
    if not np.isfinite(values).all():
        raise ValueError(f"{name} must return finite values, got {what} = {raw!r:.80}")
    if ((values < 0) | (values > 1)).any():
        raise ValueError(f"{name} must return type II errors in [0, 1], got {what} = {raw!r:.80}")
    return values


#: Supported range of mu, and the smallest delta the inverse conversions accept. Outside them the
#: functions raise ValueError; inside, every result is finite and rounded to the safe side.
MU_RANGE = (1e-300, 1e4)
DELTA_MIN = 1e-300

_ULP = float(np.finfo(float).eps)
_TINY = 5e-324  # smallest positive double: the floor of an upper bound on a positive delta
_SQRT2 = math.sqrt(2.0)
_SQRT_HALF_PI = math.sqrt(math.pi / 2)
_LOG_SQRT_2PI = 0.5 * math.log(2 * math.pi)
_GL_NODES, _GL_WEIGHTS = np.polynomial.legendre.leggauss(16)
_CF_FROM = 2.5  # 1 - x R(x) directly below this point, by continued fraction above it
_CF_TERMS = 120  # enough for about one unit in the last place at x = 2.5 (fewer for larger x)


def _check_mu_range(mu: np.ndarray) -> np.ndarray:
    low, high = MU_RANGE
    if ((mu < low) | (mu > high)).any():
        raise ValueError(f"mu must lie in [{low:g}, {high:g}] (supported range), got {mu!r}")
    return mu


def _check_delta_floor(delta: np.ndarray) -> np.ndarray:
    if (delta < DELTA_MIN).any():
        raise ValueError(f"delta must be >= {DELTA_MIN:g} (supported range), got {delta!r}")
    return delta


def _one_minus_x_mills(x: np.ndarray) -> np.ndarray:
    r""":math:`g(x)=1-xR(x)>0`, with :math:`R(x)=\Phi(-x)/\varphi(x)` the Mills ratio.

    Directly from ``erfcx`` below 2.5 (at most a few ulps of cancellation there); above, from
    Laplace's continued fraction :math:`R(x)=1/(x+1/(x+2/(x+3/(x+\dots))))`: writing
    :math:`c=1/(x+2/(x+3/(x+\dots)))` gives :math:`g=c/(x+c)`, a quotient of positive terms,
    where the direct form would lose :math:`\log_{10}x^2` digits. Relative error below 20 ulps.
    """
    out = np.empty_like(x)
    near = x < _CF_FROM
    out[near] = 1.0 - x[near] * _SQRT_HALF_PI * erfcx(x[near] / _SQRT2)
    far = x[~near]
    if far.size:
        # the fraction converges faster for larger x; 10 + 700 / x^2 terms reach one ulp
        terms = int(min(_CF_TERMS, 10 + 700 / float(far.min()) ** 2))
        tail = np.zeros_like(far)
        for k in range(terms, 1, -1):
            tail = k / (far + tail)
        first = 1.0 / (far + tail)
        out[~near] = first / (far + first)
    return out


def _log_gdp_delta(mu: ArrayLike, eps: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    r""":math:`\ln\delta_\mu(\varepsilon)` and a bound on its absolute floating-point error.

    With :math:`m=\varepsilon/\mu`, :math:`a=m-\mu/2`, :math:`b=m+\mu/2` and the Mills ratio
    :math:`R`, the identity :math:`e^\varepsilon\varphi(b)=\varphi(a)` turns Dong, Roth & Su's
    :math:`\delta=\Phi(-a)-e^\varepsilon\Phi(-b)` into
    :math:`\delta=\varphi(a)\,[R(a)-R(b)]=\varphi(a)\int_a^b(1-xR(x))\,dx` (as :math:`R'=xR-1`).
    No exponential of :math:`\varepsilon` is formed, so nothing overflows. Four regimes:

    - ``a > 40``: :math:`\delta\le\Phi(-a)\le e^{-20a}`, which underflows; that bound is returned.
    - ``mu <= 1``: 16-point Gauss-Legendre on the integral, whose integrand is positive: no
      cancellation however small :math:`\mu` is (the difference form loses
      :math:`\log_{10}(b/\mu)` digits).
    - ``mu > 1``: :math:`\ln\Phi(-a)+\ln(1-R(b)/R(a))` with ``log_ndtr`` and ``erfcx``; here
      :math:`1-R(b)/R(a)` is not small.
    - ``a < -20`` (only for ``mu > 40``): :math:`\Phi(-a)\approx1` and
      :math:`e^\varepsilon\Phi(-b)/\Phi(-a)<e^{-200}`, so the log-space difference is exact
      to rounding.

    The error bound counts the rounding of :math:`a` and :math:`b` (at most one ulp of
    :math:`m+\mu/2`) times the sensitivity of each term, the few-ulp errors of ``erfcx``,
    ``log_ndtr`` and :math:`g`, and the amplification :math:`r/(1-r)` of a difference. Against
    50-digit mpmath on 3000 random points of the supported range it was never exceeded; the
    largest observed error was 0.27 of it.
    """
    mu_arr, eps_arr = np.broadcast_arrays(np.asarray(mu, dtype=float), np.asarray(eps, dtype=float))
    shape = mu_arr.shape
    mu_arr, eps_arr = mu_arr.ravel(), eps_arr.ravel()
    half = mu_arr / 2
    with np.errstate(over="ignore"):
        mid = eps_arr / mu_arr  # inf only in the underflow regime
    a = mid - half
    b = mid + half
    scale = mid + half  # the roundings of a and b are below ulp * scale
    log_delta = np.empty_like(a)
    bound = np.zeros_like(a)

    tail = a > 40
    left = ~tail & (a < -20)
    quad = ~tail & ~left & (mu_arr <= 1)
    direct = ~(tail | left | quad)

    with np.errstate(over="ignore"):
        log_delta[tail] = -20 * a[tail]

    if quad.any():
        aq, hq = a[quad], half[quad]
        nodes = mid[quad, None] + hq[:, None] * _GL_NODES
        integral = hq * (_one_minus_x_mills(nodes.ravel()).reshape(nodes.shape) @ _GL_WEIGHTS)
        value = -0.5 * aq * aq - _LOG_SQRT_2PI + np.log(integral)
        log_delta[quad] = value
        bound[quad] = _ULP * (2 * np.abs(aq) * scale[quad] + aq * aq + 40 + np.abs(value))

    if direct.any():
        ad, bd = a[direct], b[direct]
        log_first = log_ndtr(-ad)
        ratio = erfcx(bd / _SQRT2) / erfcx(ad / _SQRT2)
        value = log_first + np.log1p(-ratio)
        cond = ratio / (1 - ratio)
        sd = scale[direct]
        log_delta[direct] = value
        bound[direct] = _ULP * (4 * np.abs(log_first) + 8 + (np.maximum(ad, 0) + 1) * sd
                                + cond * (16 + 2 * (np.maximum(-ad, 0) + 2) * sd)
                                + np.abs(value))

    if left.any():
        log_first = log_ndtr(-a[left])
        log_second = eps_arr[left] + log_ndtr(-b[left])
        value = log_first + np.log1p(-np.exp(log_second - log_first))
        log_delta[left] = value
        bound[left] = _ULP * (8 + 4 * np.abs(log_first) + np.abs(value))

    return log_delta.reshape(shape), bound.reshape(shape)


def _gdp_delta_upper(mu: ArrayLike, eps: ArrayLike) -> np.ndarray:
    # exp(log delta + twice the error bound), then room for the rounding of exp and a floor at
    # the smallest positive double (the exact delta is positive): never below the exact delta
    log_delta, bound = _log_gdp_delta(mu, eps)
    return np.minimum(np.exp(log_delta + 2 * bound) * (1 + 4 * _ULP) + _TINY, 1.0)


def gdp_delta(mu: ArrayLike, eps: ArrayLike) -> np.ndarray | float:
    r""":math:`\delta(\varepsilon)` of :math:`\mu`-GDP:
    :math:`\Phi(-\varepsilon/\mu+\mu/2)-e^\varepsilon\Phi(-\varepsilon/\mu-\mu/2)`.

    A mechanism is :math:`\mu`-GDP iff it is :math:`(\varepsilon,\delta(\varepsilon))`-DP for every
    :math:`\varepsilon\ge 0` (Chen, Cao & Ge, GSPA, Fact 3; Dong, Roth & Su 2022, Corollary 2.13).
    Evaluated as :math:`\varphi(a)[R(a)-R(b)]` with the Mills ratio :math:`R` (see
    ``_log_gdp_delta``): no overflow of :math:`e^\varepsilon`, no cancellation as
    :math:`\mu\to0`, no underflow of :math:`\Phi` before :math:`\delta` itself underflows.

    Upper bound: the result is rounded up by a bound on its floating-point error, so it is never
    below the exact value. Relative excess over the exact value (50-digit mpmath, wherever
    :math:`\delta\ge10^{-300}`): below 1e-11 for ``mu`` <= 50 (worst seen 4.6e-12), below 1e-10
    for ``mu`` <= 1e3 and 1e-9 up to 1e4 (it grows like ``mu`` times the unit roundoff, from
    the rounding of :math:`\varepsilon/\mu-\mu/2`). A :math:`\delta` below the smallest double
    is reported as 5e-324. Supported range: ``mu`` in [1e-300, 1e4] (else ``ValueError``), any
    finite ``eps`` >= 0. Broadcasts.

    >>> round(gdp_delta(1.0, 1.0), 6)
    0.126937
    """
    mu_arr = _check_mu_range(check_positive(mu, "mu"))
    eps_arr = check_epsilon(eps)
    return scalar_or_array(_gdp_delta_upper(mu_arr, eps_arr))


def _step(x: float, unsafe: Callable[[float], bool], step: float, direction: float) -> float:
    # like nudge, but never crosses 0 when moving down
    while unsafe(x):
        x = max(x + direction * step, 0.0)
        step *= 2
    return x


def _gdp_epsilon_scalar(mu: float, delta: float) -> float:
    def delta_at(e: float) -> float:
        return float(_gdp_delta_upper(mu, e))

    if delta_at(0.0) <= delta:
        return 0.0
    log_target = math.log(delta)

    def excess(e: float) -> float:
        log_delta, bound = _log_gdp_delta(mu, e)
        return float(log_delta + 2 * bound) - log_target

    # At a = isf(delta) the first term alone is delta, so the answer lies below; the doubling
    # only covers the rounding margin.
    high = mu * mu / 2 + mu * float(norm.isf(delta))
    while excess(high) > 0:
        high *= 2
    if excess(0.0) <= 0:  # delta within rounding of delta(0)
        root = 0.0
    else:
        root = brentq(excess, 0.0, high, xtol=1e-300, rtol=4 * _ULP)
    # round up: never report an epsilon whose (upper) delta exceeds the target. The step is
    # relative to the root (a step of one ulp of mu overshot tiny roots: gdp_epsilon(1e-30,
    # gdp_delta(1e-30, 1e-40)) was 1.0000095e-40); ulp * mu only when the root is 0.
    step = 4 * _ULP * root if root > 0 else _ULP * mu
    return _step(root, lambda e: delta_at(e) > delta, step, +1)


def gdp_epsilon(mu: ArrayLike, delta: ArrayLike) -> np.ndarray | float:
    r"""Smallest :math:`\varepsilon` with :math:`\delta_\mu(\varepsilon)\le\delta` for a
    :math:`\mu`-GDP mechanism (inverse of :func:`gdp_delta`; Chen, Cao & Ge, GSPA, Fact 3;
    Dong, Roth & Su 2022, Corollary 2.13).

    Upper bound: a root search on the log of the rounded-up :func:`gdp_delta`, then stepped up
    until ``gdp_delta(mu, result) <= delta`` holds in floating point; since that ``gdp_delta``
    is never below the exact one, the result is never below the exact epsilon (relative excess
    below 1e-12 against mpmath where delta resolves epsilon, i.e. the relative slope
    :math:`\varepsilon|\delta'(\varepsilon)|/\delta` is not tiny; where delta is flat in
    epsilon to its own rounding, e.g. ``mu = 1e-30`` and ``eps = 1e-40``, the answer stays valid
    but can exceed the round trip by 1e-5 relative; for ``delta`` within 1e-13 of 1 it stays
    valid but is looser, the rounding margin being relative). Returns 0 when
    :math:`\delta \ge 2\Phi(\mu/2)-1`. Supported range: ``mu`` in [1e-300, 1e4] and ``delta``
    in [1e-300, 1); else ``ValueError``.

    >>> round(gdp_epsilon(1.0, 1e-5), 4)
    4.3772
    """
    mu_arr = _check_mu_range(check_positive(mu, "mu"))
    delta_arr = _check_delta_floor(check_delta(delta, allow_zero=False))
    result = np.vectorize(_gdp_epsilon_scalar, otypes=[float])(mu_arr, delta_arr)
    return scalar_or_array(result)


def _gdp_mu_scalar(eps: float, delta: float) -> float:
    def meets(m: float) -> bool:
        return float(_gdp_delta_upper(m, eps)) <= delta

    mu_max = MU_RANGE[1]
    if meets(mu_max):
        raise ValueError(
            f"eps={eps} is so large that mu-GDP with mu above {mu_max:g} (outside the supported "
            f"range) meets delta={delta}"
        )
    if eps == 0.0:  # delta_mu(0) = 2 Phi(mu/2) - 1 = erf(mu / (2 sqrt 2))
        guess = float(2 * _SQRT2 * erfinv(delta))
        return _step(guess, lambda m: not meets(m), 4 * _ULP * guess, -1)
    log_target = math.log(delta)

    def excess(log_mu: float) -> float:
        log_delta, bound = _log_gdp_delta(math.exp(log_mu), eps)
        return float(log_delta + 2 * bound) - log_target

    # There Phi(-eps/mu + mu/2) = delta >= delta_mu(eps): the positive root of
    # mu^2 - 2 z mu - 2 eps = 0, written without cancellation when z < 0.
    z = float(ndtri(delta))
    root_disc = math.sqrt(z * z + 2 * eps)
    if z >= 0:
        low = math.log(z + root_disc)
    elif 2 * eps / (root_disc - z) > 0:
        low = math.log(2 * eps / (root_disc - z))
    else:  # the quotient underflows (subnormal eps): its logarithm term by term
        low = math.log(2) + math.log(eps) - math.log(root_disc - z)
    # no lower than the smallest normal double: a subnormal mu has lost its precision, and
    # delta_mu(eps) <= delta_mu(0) < mu < delta holds there anyway
    low = max(low, math.log(np.finfo(float).tiny))
    while excess(low) > 0:  # only the rounding margin can push it over
        low -= 1.0
    high = low + 1.0
    while excess(high) < 0:
        high += 1.0
    log_mu = brentq(excess, low, high, xtol=1e-15, rtol=4 * _ULP)
    mu = math.exp(log_mu)
    # round down: the returned mu must meet the target with the (upper) delta
    return _step(mu, lambda m: not meets(m), 4 * _ULP * mu, -1)


def gdp_mu(eps: ArrayLike, delta: ArrayLike) -> np.ndarray | float:
    r"""Largest :math:`\mu` such that :math:`\mu`-GDP implies :math:`(\varepsilon,\delta)`-DP,
    i.e. the root of :math:`\delta_\mu(\varepsilon)=\delta` (Chen, Cao & Ge, GSPA, Fact 3;
    increasing in mu; Dong, Roth & Su 2022, Corollary 2.13).

    Lower bound on the admissible mu: a root search in :math:`\ln\mu`, then stepped down until
    ``gdp_delta(result, eps) <= delta`` holds in floating point (relative gap to the exact root
    below 1e-12 against mpmath; looser, still valid, for ``delta`` within 1e-13 of 1). It
    calibrates the Gaussian mechanism exactly (Balle & Wang 2018): noise
    :math:`\sigma=\Delta_2/\mu`. Supported range: ``delta`` in [1e-300, 1) and ``eps`` >= 0
    small enough that the answer is at most 1e4 (about ``eps`` <= 5e7); else ``ValueError``.

    >>> round(gdp_mu(gdp_epsilon(1.0, 1e-5), 1e-5), 8)
    1.0
    """
    eps_arr = check_epsilon(eps)
    delta_arr = _check_delta_floor(check_delta(delta, allow_zero=False))
    return scalar_or_array(np.vectorize(_gdp_mu_scalar, otypes=[float])(eps_arr, delta_arr))


def gdp_compose(mus: ArrayLike) -> float:
    r"""GDP composition: running :math:`\mu_1,\dots,\mu_T`-GDP mechanisms is
    :math:`\sqrt{\mu_1^2+\dots+\mu_T^2}`-GDP (GSPA, Fact 3; exact for Gaussian mechanisms).

    When the largest entry is above 1e150 or below 1e-150 the squares would overflow or
    underflow, so the sum is taken relative to that entry; ``ValueError`` if the result itself
    exceeds the float range.

    >>> gdp_compose([3.0, 4.0])
    5.0
    """
    mu_arr = check_positive(mus, "mus")
    top = float(mu_arr.max())
    if 1e-150 <= top <= 1e150:
        return float(np.sqrt(np.sum(mu_arr**2)))
    with np.errstate(under="ignore", over="ignore"):
        total = top * float(np.sqrt(np.sum((mu_arr / top) ** 2)))
    if not np.isfinite(total):
        raise ValueError(f"the composition of mus exceeds the float range, got {mus!r}")
    return total


def gdp_group(mu: ArrayLike, k: int) -> np.ndarray | float:
    r"""Group privacy: a :math:`\mu`-GDP mechanism is :math:`k\mu`-GDP for groups of ``k`` people
    (GSPA, Fact 3). ``ValueError`` if :math:`k\mu` exceeds the float range.

    >>> gdp_group(0.5, 3)
    1.5
    """
    with np.errstate(over="ignore"):
        group_mu = check_integer(k, "k", 1) * check_positive(mu, "mu")
    if not np.isfinite(group_mu).all():
        raise ValueError(f"k * mu exceeds the float range, got mu={mu!r} and k={k!r}")
    return scalar_or_array(group_mu)
