r"""Local randomizers and the unbiased estimators that go with them.

Every randomizer accepts either one privacy level for everybody or one per user
(personalized LDP; Chen, Cao & Ge, GSPA), takes ``rng`` (Generator, int seed or None) and never
mutates its input. Channels (``krr_channel``) give the exact output distributions used in the tests
and in the book to certify each randomizer's epsilon with
:func:`shuffle_lib.accounting.channel_epsilon <shuffle_lib.accounting.finite.channel_epsilon>`.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike
from scipy.special import expit, log_expit, logsumexp

from shuffle_lib._numerics import scalar_or_array
from shuffle_lib._validation import (
    RngLike,
    as_rng,
    broadcast_per_user,
    check_array,
    check_categories,
    check_delta,
    check_epsilon,
    check_integer,
    check_positive,
)
from shuffle_lib.accounting.fdp import gdp_mu

CALIBRATIONS = ("classic", "analytic")
MAX_CHANNEL_K = 4_096  # krr_channel builds a k x k array of floats (128 MiB at the limit)
MAX_ESTIMATE_K = 10**7  # krr_frequency_estimate returns k frequencies (80 MB at the limit)
MAX_SAMPLER_K = 2**62  # k_randomized_response draws shifts in {1, ..., k-1} as int64


def randomized_response(bits: ArrayLike, eps: ArrayLike, rng: RngLike = None) -> np.ndarray:
    r"""Binary randomized response (Warner 1965): report the true bit with probability
    :math:`e^{\varepsilon}/(1+e^{\varepsilon})`, the flipped bit otherwise.

    It is :math:`\varepsilon`-LDP, exactly (the output ratio between the two inputs is
    :math:`e^{\pm\varepsilon}`). ``eps`` is a scalar or one value per user (GSPA,
    Algorithm 2, lines 2-6). The flip probability is ``expit(-eps)``, stable for large eps.

    >>> randomized_response([0, 1, 1], eps=50.0, rng=0).tolist()
    [0, 1, 1]
    """
    bits_arr = check_categories(bits, 2, name="bits")
    eps_arr = broadcast_per_user(check_epsilon(eps), bits_arr.shape, "eps")
    flip = as_rng(rng).random(bits_arr.shape) < expit(-eps_arr)
    return np.where(flip, 1 - bits_arr, bits_arr)


def krr_channel(k: int, eps: float) -> np.ndarray:
    r"""The :math:`k\times k` channel of k-ary randomized response: keep the value with
    probability :math:`e^\varepsilon/(e^\varepsilon+k-1)`, else report one of the other
    :math:`k-1` values uniformly. ``k = 2`` is binary randomized response. At most
    ``MAX_CHANNEL_K`` (4096) values: the channel is a dense ``k x k`` array.

    >>> krr_channel(2, 0.0).tolist()
    [[0.5, 0.5], [0.5, 0.5]]
    """
    check_integer(k, "k", 2, MAX_CHANNEL_K)
    eps_val = float(check_epsilon(eps))
    keep = expit(eps_val - np.log(k - 1))
    other = expit(np.log(k - 1) - eps_val) / (k - 1)  # not (1 - keep): no cancellation at large eps
    return np.where(np.eye(k, dtype=bool), keep, other)


def k_randomized_response(
    values: ArrayLike, k: int, eps: ArrayLike, rng: RngLike = None
) -> np.ndarray:
    r"""k-ary randomized response (generalized RR): keep each value in :math:`\{0,\dots,k-1\}`
    with probability :math:`e^\varepsilon/(e^\varepsilon+k-1)`, otherwise replace it by one of
    the other :math:`k-1` values chosen uniformly; :math:`\varepsilon`-LDP, exactly.

    ``eps`` is a scalar or one value per user; ``k`` is at most ``MAX_SAMPLER_K`` (:math:`2^{62}`,
    the values and the random shifts are int64).

    >>> k_randomized_response([0, 1, 2, 3], k=4, eps=50.0, rng=1).tolist()
    [0, 1, 2, 3]
    """
    check_integer(k, "k", 2, MAX_SAMPLER_K)
    values_arr = check_categories(values, k)
    eps_arr = broadcast_per_user(check_epsilon(eps), values_arr.shape, "eps")
    gen = as_rng(rng)
    keep = gen.random(values_arr.shape) < expit(eps_arr - np.log(float(k - 1)))
    shift = gen.integers(1, k, size=values_arr.shape)
    return np.where(keep, values_arr, (values_arr + shift) % k)


def laplace_mechanism(
    x: ArrayLike, eps: ArrayLike, sensitivity: ArrayLike = 1.0, rng: RngLike = None
) -> np.ndarray:
    r"""Laplace mechanism: :math:`x + \mathrm{Lap}(\Delta_1/\varepsilon)`, which is
    :math:`\varepsilon`-DP for a query of L1 sensitivity :math:`\Delta_1` (GSPA, Definition 4;
    Dwork & Roth 2014, Theorem 3.6). Applied to each user's value in :math:`[a, a+\Delta_1]` it is
    :math:`\varepsilon`-LDP. ``eps`` > 0, scalar or per entry.

    >>> laplace_mechanism([0.5], eps=1.0, rng=0).shape
    (1,)
    """
    x_arr = check_array(x, "x")
    eps_arr = broadcast_per_user(check_epsilon(eps, positive=True), x_arr.shape, "eps")
    with np.errstate(over="ignore"):
        scale = check_positive(sensitivity, "sensitivity") / eps_arr
    if not np.isfinite(scale).all():
        raise ValueError(f"sensitivity / eps overflows: the noise scale exceeds the largest float "
                         f"(sensitivity = {sensitivity!r}, smallest eps = {eps_arr.min()!r})")
    with np.errstate(over="ignore"):
        noise = as_rng(rng).laplace(0.0, 1.0, size=x_arr.shape) * scale
    return _noisy(x_arr, noise)


def _noisy(x_arr: np.ndarray, noise: np.ndarray) -> np.ndarray:
    """``x + noise``, or a ``ValueError`` if a released value overflows."""
    with np.errstate(over="ignore", invalid="ignore"):
        released = x_arr + noise
    if not np.isfinite(released).all():
        raise ValueError("x plus the noise overflows the float range: x or the noise scale is "
                         "too large")
    return released


def gaussian_sigma(
    eps: float, delta: float, sensitivity: float = 1.0, calibration: str = "classic"
) -> float:
    r"""Noise scale of the Gaussian mechanism for :math:`(\varepsilon,\delta)`-DP.

    - ``"classic"``: :math:`\sigma=\Delta_2\sqrt{2\ln(1.25/\delta)}/\varepsilon`, proved only for
      :math:`0<\varepsilon<1` (Dwork & Roth 2014, Theorem A.1); outside that range this raises.
    - ``"analytic"``: the smallest valid noise, :math:`\sigma=\Delta_2/\mu` with :math:`\mu`
      from :func:`shuffle_lib.accounting.gdp_mu <shuffle_lib.accounting.fdp.gdp_mu>` (Balle &
      Wang 2018; GSPA, Fact 3), valid for every :math:`\varepsilon>0`. Rounded up:
      :math:`\mu` is already a lower bound on the exact root, and :math:`\sigma` is raised until
      :math:`\Delta_2/\sigma\le\mu` in floating point, so the noise is never below the exact
      analytic one (relative excess about 1e-12).
      The supported ranges of ``gdp_mu`` apply (``delta`` >= 1e-300; else ``ValueError``).

    >>> round(gaussian_sigma(0.5, 1e-5), 4)
    9.6896
    """
    if not isinstance(calibration, str):
        raise TypeError(f"calibration must be a str, one of {CALIBRATIONS}, got "
                        f"{calibration!r:.80}")
    if calibration not in CALIBRATIONS:
        raise ValueError(f"calibration must be one of {CALIBRATIONS}, got {calibration!r}")
    eps_val = float(check_epsilon(eps, positive=True))
    delta_val = float(check_delta(delta, allow_zero=False))
    sens = float(check_positive(sensitivity, "sensitivity"))
    if calibration == "classic":
        if eps_val >= 1:
            raise ValueError(
                f"the classic Gaussian calibration is proved only for eps < 1, got eps={eps_val}; "
                "use calibration='analytic'"
            )
        with np.errstate(over="ignore"):
            sigma = float(sens * np.sqrt(2 * np.log(1.25 / delta_val)) / eps_val)
    else:
        mu = float(gdp_mu(eps_val, delta_val))
        with np.errstate(over="ignore"):
            sigma = sens / mu
        while np.isfinite(sigma) and sens / sigma > mu:  # rounded to nearest: step to safe side
            sigma = float(np.nextafter(sigma, np.inf))
    if not np.isfinite(sigma):
        raise ValueError(f"the noise scale overflows the float range: sensitivity = "
                         f"{sensitivity!r} is too large for eps = {eps!r}, delta = {delta!r}")
    return sigma


def gaussian_mechanism(
    x: ArrayLike,
    eps: ArrayLike,
    delta: ArrayLike,
    sensitivity: float = 1.0,
    calibration: str = "classic",
    rng: RngLike = None,
) -> np.ndarray:
    r"""Gaussian mechanism: :math:`x+N(0,\sigma^2)` with :math:`\sigma` from
    :func:`gaussian_sigma`, :math:`(\varepsilon,\delta)`-DP for L2 sensitivity :math:`\Delta_2`
    (GSPA, Definition 5). ``eps`` and ``delta`` are scalars or one value per entry.

    >>> gaussian_mechanism([0.0, 1.0], eps=0.5, delta=1e-5, rng=0).shape
    (2,)
    """
    x_arr = check_array(x, "x")
    eps_in = check_epsilon(eps, positive=True)
    delta_in = check_delta(delta, allow_zero=False)
    if eps_in.size == 1 and delta_in.size == 1:
        eps_val, delta_val = float(eps_in.item()), float(delta_in.item())
        sigma = gaussian_sigma(eps_val, delta_val, sensitivity, calibration)
    else:  # personalized budgets: calibrate once per distinct (eps, delta) pair
        eps_arr = broadcast_per_user(eps_in, x_arr.shape, "eps").ravel()
        delta_arr = broadcast_per_user(delta_in, x_arr.shape, "delta").ravel()
        pairs, inverse = np.unique(np.stack([eps_arr, delta_arr]), axis=1, return_inverse=True)
        sigmas = np.array([gaussian_sigma(e, d, sensitivity, calibration) for e, d in pairs.T])
        sigma = sigmas[inverse.ravel()].reshape(x_arr.shape)
    with np.errstate(over="ignore", invalid="ignore"):
        noise = as_rng(rng).standard_normal(x_arr.shape) * sigma
    return _noisy(x_arr, noise)


def rr_frequency_estimate(reports: ArrayLike, eps: ArrayLike) -> float:
    r"""Debiased fraction of ones from randomized-response reports (GSPA, Algorithm 2):
    :math:`z=(A-B)/(n-2B)` with :math:`A=\sum_i y_i`, :math:`B=\sum_i q_i`,
    :math:`q_i=1/(1+e^{\varepsilon_i})`.

    Since :math:`E[y_i]=q_i+x_i(1-2q_i)`, :math:`E[z]=\sum_i x_i(1-2q_i)/\sum_i(1-2q_i)`: with one
    common eps this is exactly the fraction of ones; with personalized eps it is a weighted
    fraction, unbiased for :math:`c` when the bits are drawn Bernoulli(:math:`c`) independently of
    the eps values (the setting of GSPA). The variance with one eps is in
    :func:`rr_estimate_std`. Computed without cancellation at small levels as
    :math:`z=\tfrac12+(n_1-n_0)/(2D)` with :math:`D=\sum_i(1-2q_i)=\sum_i\tanh(\varepsilon_i/2)`
    (:math:`n_1, n_0` the numbers of reported ones and zeros; the same :math:`z`, since
    :math:`A-B=(n_1-n_0)/2+D/2`). It needs some :math:`\varepsilon_i>0`; an estimate so large
    that it overflows (every level below about 1e-308) raises ``ValueError``.

    >>> rr_frequency_estimate([1, 1, 0, 1], eps=50.0)
    0.75
    """
    reports_arr = check_categories(reports, 2, name="reports")
    eps_arr = broadcast_per_user(check_epsilon(eps), reports_arr.shape, "eps")
    denominator = float(np.sum(np.tanh(eps_arr / 2)))  # sum of 1 - 2 q_i, no cancellation
    if denominator <= 0:
        raise ValueError(f"every eps is 0, got {eps!r}: randomized response reports carry no "
                         "information")
    # A - B = sum (y_i - 1/2) + sum (1/2 - q_i) = (ones - zeros) / 2 + denominator / 2
    surplus = 2 * int(np.count_nonzero(reports_arr)) - reports_arr.size
    with np.errstate(over="ignore"):
        estimate = 0.5 + surplus / (2 * denominator)
    if not np.isfinite(estimate):
        raise ValueError(f"eps is too small: the estimate overflows, got {eps!r}")
    return estimate


def rr_estimate_std(n: int, eps: ArrayLike) -> np.ndarray | float:
    r"""Standard deviation of :func:`rr_frequency_estimate` for ``n`` users with one eps:
    :math:`\sqrt{q(1-q)/n}/(1-2q)=e^{\varepsilon/2}/(\sqrt n\,(e^\varepsilon-1))`, the same for
    every dataset (each report has variance :math:`q(1-q)` whatever its input). Above
    :math:`\varepsilon=700`, where :math:`e^\varepsilon` overflows, numerator and denominator are
    divided by :math:`e^\varepsilon`: :math:`e^{-\varepsilon/2}/(\sqrt n\,(1-e^{-\varepsilon}))`.
    An ``eps`` so small that the result (about :math:`1/(\varepsilon\sqrt n)`) overflows, below
    about 1e-308, raises ``ValueError``.

    >>> round(rr_estimate_std(10_000, 1.0), 6)
    0.009595
    """
    check_integer(n, "n", 1)
    eps_arr = check_epsilon(eps, positive=True)
    signed = np.where(eps_arr > 700, -eps_arr, eps_arr)  # e^eps overflows beyond about 709.8
    with np.errstate(over="ignore", divide="ignore"):
        result = np.exp(signed / 2 - np.log(float(n)) / 2) / np.abs(np.expm1(signed))
    if not np.isfinite(result).all():
        raise ValueError(f"eps is too small: the standard deviation overflows, got {eps!r}")
    return scalar_or_array(result)


def krr_frequency_estimate(reports: ArrayLike, k: int, eps: float) -> np.ndarray:
    r"""Unbiased frequencies of the ``k`` values from k-RR reports:
    :math:`\hat f_v=(\hat c_v/n-q)/(p-q)` with :math:`p=e^\varepsilon/(e^\varepsilon+k-1)`,
    :math:`q=1/(e^\varepsilon+k-1)` and :math:`\hat c_v` the number of reports equal to ``v``
    (Wang et al. 2017, "direct encoding"). Estimates may fall outside [0, 1]; they sum to 1.
    ``reports`` is a 1-D array; ``k`` is at most ``MAX_ESTIMATE_K`` (1e7, one frequency each).
    The denominator is computed without cancellation,
    :math:`p-q=(1-e^{-\varepsilon})/(1+(k-1)e^{-\varepsilon})` (with ``expm1``), so a tiny eps
    gives the huge but finite estimates it should (about :math:`k/\varepsilon`); an eps so small
    that they overflow (below about 1e-308) raises ``ValueError``.

    >>> krr_frequency_estimate([0, 0, 1, 2], k=3, eps=50.0).tolist()
    [0.5, 0.25, 0.25]
    """
    check_integer(k, "k", 2, MAX_ESTIMATE_K)
    reports_arr = check_categories(reports, k, name="reports")
    if reports_arr.ndim != 1:
        raise ValueError(f"reports must be a 1-D array, got shape {reports_arr.shape}")
    eps_val = float(check_epsilon(eps, positive=True))
    other = expit(np.log(k - 1) - eps_val) / (k - 1)  # q = 1 / (e^eps + k - 1)
    gap = -np.expm1(-eps_val) / (1 + (k - 1) * np.exp(-eps_val))  # p - q
    observed = np.bincount(reports_arr, minlength=k) / reports_arr.size
    with np.errstate(over="ignore"):
        estimate = (observed - other) / gap
    if not np.isfinite(estimate).all():
        raise ValueError(f"eps is too small: the estimates overflow, got {eps!r}")
    return estimate


def laplace_mean_std(n: int, eps: ArrayLike, sensitivity: float = 1.0) -> np.ndarray | float:
    r"""Standard deviation added to a mean of ``n`` Laplace-privatized values:
    :math:`\sqrt2\,\Delta_1/(\varepsilon\sqrt n)` (a Laplace(b) variable has variance :math:`2b^2`).

    >>> round(laplace_mean_std(100, 1.0), 6)
    0.141421
    """
    users = check_integer(n, "n", 1)
    eps_arr = check_epsilon(eps, positive=True)
    sens = float(check_positive(sensitivity, "sensitivity"))
    with np.errstate(over="ignore", under="ignore"):
        result = np.sqrt(2.0 / users) * sens / eps_arr
        # where an intermediate product overflows but the answer does not: in logarithms
        logged = np.exp(0.5 * (np.log(2.0) - np.log(float(users))) + np.log(sens) - np.log(eps_arr))
    result = np.where(np.isfinite(result), result, logged)
    if not np.isfinite(result).all():
        raise ValueError(f"the standard deviation overflows the float range: sensitivity = "
                         f"{sensitivity!r} is too large for eps = {eps!r}")
    return scalar_or_array(result)


def personalized_rr_estimate_std(eps: ArrayLike) -> float:
    r"""Standard deviation of :func:`rr_frequency_estimate` for users running randomized response
    at their own levels :math:`\varepsilon_i` (GSPA, Algorithm 2), on any fixed dataset: each
    report has variance :math:`q_i(1-q_i)` whatever its input, :math:`q_i=1/(1+e^{\varepsilon_i})`,
    so :math:`\mathrm{sd}(z)=\sqrt{\sum_i q_i(1-q_i)}/\sum_i(1-2q_i)`. Computed in logarithms
    (:math:`\ln q_i(1-q_i)` by ``log_expit``, summed by log-sum-exp; :math:`1-2q_i=
    \tanh(\varepsilon_i/2)`), so a level above 745, where :math:`q_i` underflows but the answer
    (about :math:`e^{-\varepsilon/2}`) does not, keeps its value; a result beyond the float range
    (every level below about 1e-308) raises ``ValueError``.

    >>> bool(np.isclose(personalized_rr_estimate_std(np.full(100, 1.0)), rr_estimate_std(100, 1.0)))
    True
    """
    eps_arr = np.atleast_1d(check_epsilon(eps, positive=True))
    log_variance = logsumexp(log_expit(-eps_arr) + log_expit(eps_arr))  # ln sum q_i (1 - q_i)
    with np.errstate(divide="ignore", over="ignore"):
        result = float(np.exp(0.5 * log_variance - np.log(np.sum(np.tanh(eps_arr / 2)))))
    if not np.isfinite(result):
        raise ValueError(f"eps is too small: the standard deviation overflows, got {eps!r:.80}")
    return result


def personalized_laplace_mean_std(eps: ArrayLike, sensitivity: float = 1.0) -> float:
    r"""Standard deviation of the mean of :math:`n` values privatized with
    :math:`\mathrm{Lap}(\Delta/\varepsilon_i)` (GSPA, Algorithm 1):
    :math:`\sqrt{2\sum_i(\Delta/\varepsilon_i)^2}/n`, summed as
    :math:`s\sqrt{2\sum_i(b_i/s)^2}/n` with :math:`s=\max_i b_i`, :math:`b_i=\Delta/\varepsilon_i`,
    so that squares neither overflow (tiny levels) nor underflow (huge ones) where the answer is
    a float; a scale or an answer beyond the float range raises ``ValueError``.

    >>> spread = personalized_laplace_mean_std(np.full(100, 1.0))
    >>> bool(np.isclose(spread, laplace_mean_std(100, 1.0)))
    True
    """
    eps_arr = np.atleast_1d(check_epsilon(eps, positive=True))
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        scale = float(check_positive(sensitivity, "sensitivity")) / eps_arr
        largest = float(scale.max())
        if largest == 0:  # every scale below the float range: so is the answer
            return 0.0
        result = largest * (float(np.sqrt(2 * np.sum((scale / largest) ** 2))) / eps_arr.size)
    if not np.isfinite(result):
        raise ValueError(f"the standard deviation overflows the float range: sensitivity = "
                         f"{sensitivity!r} is too large for the smallest eps {eps_arr.min()!r}")
    return result
