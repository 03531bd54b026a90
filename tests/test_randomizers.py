"""Randomizers: exact channels vs their epsilon, samplers vs channels, unbiased estimators."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats
from stat_checks import within_standard_errors

from shuffle_lib import (
    gaussian_mechanism,
    gaussian_sigma,
    k_randomized_response,
    krr_channel,
    krr_frequency_estimate,
    laplace_mean_std,
    laplace_mechanism,
    randomized_response,
    rr_estimate_std,
    rr_frequency_estimate,
)
from shuffle_lib.accounting import channel_epsilon, gdp_delta

EPSILONS = [0.0, 0.1, 1.0, 3.0, 10.0, 50.0]


@pytest.mark.parametrize("k", [2, 3, 5, 8])
@pytest.mark.parametrize("eps", EPSILONS)
def test_krr_channel_is_exactly_eps_ldp(k: int, eps: float) -> None:
    channel = krr_channel(k, eps)
    assert channel.shape == (k, k)
    np.testing.assert_allclose(channel.sum(axis=1), 1.0, atol=1e-12)
    # every ordered pair of inputs, every output: the worst log-ratio is eps, attained
    assert channel_epsilon(channel) == pytest.approx(eps, abs=1e-9)


@pytest.mark.parametrize("eps", [0.0, 0.7, 2.0])
def test_randomized_response_matches_its_channel(eps: float, rng: np.random.Generator) -> None:
    n = 200_000
    channel = krr_channel(2, eps)
    for bit in (0, 1):
        reports = randomized_response(np.full(n, bit), eps, rng=rng)
        share_ones = reports.mean()
        std_error = np.sqrt(channel[bit, 1] * channel[bit, 0] / n)
        assert within_standard_errors(share_ones, channel[bit, 1], std_error)


@pytest.mark.parametrize("k", [3, 6])
def test_krr_sampler_matches_its_channel(k: int, rng: np.random.Generator) -> None:
    n, eps = 120_000, 1.3
    channel = krr_channel(k, eps)
    for value in range(k):
        reports = k_randomized_response(np.full(n, value), k, eps, rng=rng)
        observed = np.bincount(reports, minlength=k)
        result = stats.chisquare(observed, n * channel[value])
        assert result.pvalue > 1e-4


def test_personalized_eps_is_applied_per_user(rng: np.random.Generator) -> None:
    n = 100_000
    eps = np.where(np.arange(n) % 2 == 0, 0.5, 3.0)
    reports = randomized_response(np.ones(n, dtype=int), eps, rng=rng)
    for level in (0.5, 3.0):
        mine = reports[eps == level]
        keep = krr_channel(2, level)[1, 1]
        assert within_standard_errors(mine.mean(), keep, np.sqrt(keep * (1 - keep) / mine.size))
    values = rng.integers(0, 4, size=n)
    krr_reports = k_randomized_response(values, 4, np.where(eps == 3.0, 50.0, 0.0), rng=rng)
    np.testing.assert_array_equal(krr_reports[eps == 3.0], values[eps == 3.0])


def test_randomizers_do_not_mutate_and_are_reproducible() -> None:
    bits = np.array([0, 1, 1, 0, 1])
    before = bits.copy()
    first = randomized_response(bits, 1.0, rng=7)
    second = randomized_response(bits, 1.0, rng=np.random.default_rng(7))
    np.testing.assert_array_equal(bits, before)
    np.testing.assert_array_equal(first, second)


def test_laplace_mechanism_has_the_calibrated_law(rng: np.random.Generator) -> None:
    eps, sensitivity = 0.8, 2.0
    noise = laplace_mechanism(np.zeros(50_000), eps, sensitivity, rng=rng)
    result = stats.kstest(noise, stats.laplace(scale=sensitivity / eps).cdf)
    assert result.pvalue > 1e-4


@pytest.mark.parametrize("eps", [0.05, 0.3, 0.9])
@pytest.mark.parametrize("delta", [1e-10, 1e-5, 1e-2])
def test_classic_gaussian_calibration_is_valid_and_analytic_is_tight(
    eps: float, delta: float
) -> None:
    classic = gaussian_sigma(eps, delta, calibration="classic")
    analytic = gaussian_sigma(eps, delta, calibration="analytic")
    # exact privacy of the Gaussian mechanism: mu-GDP with mu = sensitivity / sigma
    assert gdp_delta(1.0 / classic, eps) <= delta
    assert gdp_delta(1.0 / analytic, eps) <= delta
    assert gdp_delta(1.0 / analytic, eps) == pytest.approx(delta, rel=1e-6)
    assert analytic <= classic


def test_gaussian_mechanism_has_the_calibrated_law(rng: np.random.Generator) -> None:
    sigma = gaussian_sigma(0.5, 1e-5, sensitivity=3.0)
    noise = gaussian_mechanism(np.zeros(50_000), 0.5, 1e-5, sensitivity=3.0, rng=rng)
    assert stats.kstest(noise, stats.norm(scale=sigma).cdf).pvalue > 1e-4


def test_gaussian_mechanism_accepts_per_user_budgets(rng: np.random.Generator) -> None:
    eps = np.repeat([0.2, 2.0], 40_000)
    noise = gaussian_mechanism(np.zeros(eps.size), eps, 1e-6, calibration="analytic", rng=rng)
    for level in (0.2, 2.0):
        sigma = gaussian_sigma(level, 1e-6, calibration="analytic")
        assert stats.kstest(noise[eps == level], stats.norm(scale=sigma).cdf).pvalue > 1e-4


def test_classic_gaussian_refuses_eps_at_least_one() -> None:
    with pytest.raises(ValueError, match="eps < 1"):
        gaussian_sigma(1.0, 1e-5)
    assert gaussian_sigma(5.0, 1e-5, calibration="analytic") > 0


def test_rr_estimator_is_unbiased_with_the_stated_spread(rng: np.random.Generator) -> None:
    n, eps, reps = 2_000, 1.0, 2_000
    bits = (np.arange(n) < 0.3 * n).astype(int)
    estimates = np.array(
        [rr_frequency_estimate(randomized_response(bits, eps, rng=rng), eps) for _ in range(reps)]
    )
    std = rr_estimate_std(n, eps)
    assert within_standard_errors(estimates.mean(), 0.3, std / np.sqrt(reps))
    # sample std of `reps` normal-ish draws: relative standard error about 1 / sqrt(2 reps)
    assert abs(estimates.std(ddof=1) / std - 1) < 5 / np.sqrt(2 * reps)


def test_personalized_rr_estimator_is_unbiased_for_iid_bits(rng: np.random.Generator) -> None:
    n, reps, c = 3_000, 1_500, 0.7
    eps = rng.choice([0.5, 1.0, 2.0], size=n)
    estimates = []
    for _ in range(reps):
        bits = (rng.random(n) < c).astype(int)
        estimates.append(rr_frequency_estimate(randomized_response(bits, eps, rng=rng), eps))
    estimates = np.asarray(estimates)
    assert within_standard_errors(estimates.mean(), c, estimates.std(ddof=1) / np.sqrt(reps))


def test_krr_estimator_is_unbiased(rng: np.random.Generator) -> None:
    n, k, eps, reps = 3_000, 4, 1.5, 800
    values = np.repeat(np.arange(k), [1500, 900, 600, 0])
    truth = np.bincount(values, minlength=k) / n
    estimates = np.array(
        [krr_frequency_estimate(k_randomized_response(values, k, eps, rng=rng), k, eps)
         for _ in range(reps)]
    )
    np.testing.assert_allclose(estimates.sum(axis=1), 1.0, atol=1e-12)
    for v in range(k):
        column = estimates[:, v]
        assert within_standard_errors(column.mean(), truth[v], column.std(ddof=1) / np.sqrt(reps))


def test_laplace_mean_std_matches_simulation(rng: np.random.Generator) -> None:
    n, eps, reps = 500, 0.5, 4_000
    noisy = laplace_mechanism(np.full((reps, n), 0.4), eps, rng=rng)
    means = noisy.mean(axis=1)
    std = laplace_mean_std(n, eps)
    assert within_standard_errors(means.mean(), 0.4, std / np.sqrt(reps))
    assert abs(means.std(ddof=1) / std - 1) < 5 / np.sqrt(2 * reps)


def test_no_nan_at_extremes() -> None:
    bits = np.array([0, 1] * 50)
    assert np.isfinite(rr_frequency_estimate(randomized_response(bits, 50.0, rng=0), 50.0))
    krr = krr_frequency_estimate(k_randomized_response(bits, 2, 50.0, rng=0), 2, 50.0)
    assert np.isfinite(krr).all()
    assert np.isfinite(rr_estimate_std(10**8, np.array([1e-6, 50.0]))).all()
    assert np.isfinite(gaussian_sigma(50.0, 1e-12, calibration="analytic"))
    assert np.isfinite(krr_channel(100, 50.0)).all()


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: randomized_response([0, 1], -0.5), "eps must be >= 0, got -0.5"),
        (lambda: randomized_response([0, 1], float("nan")), "NaN"),
        (lambda: randomized_response([0, 1], float("inf")), "finite"),
        (lambda: randomized_response([0, 2], 1.0), "bits must lie in"),
        (lambda: randomized_response([], 1.0), "must not be empty"),
        (lambda: randomized_response([0, 1, 1], [1.0, 2.0]), "one value per user"),
        (lambda: randomized_response([0, 1], 1.0, rng=True), "rng"),
        (lambda: k_randomized_response([0, 1], 1, 1.0), "k must be an integer >= 2, got 1"),
        (lambda: k_randomized_response([0, 1.5], 3, 1.0), "integers"),
        (lambda: krr_channel(2.5, 1.0), "k must be an integer"),
        (lambda: laplace_mechanism([0.0], 0.0), "eps must be > 0"),
        (lambda: laplace_mechanism([0.0], 1.0, sensitivity=-1), "sensitivity"),
        (lambda: laplace_mechanism([np.inf], 1.0), "finite"),
        (lambda: gaussian_sigma(0.5, 1.0), r"delta must lie in \(0, 1\), got 1.0"),
        (lambda: gaussian_sigma(0.5, 0.0), "delta"),
        (lambda: gaussian_sigma(0.5, 1e-5, calibration="exact"), "calibration"),
        (lambda: rr_frequency_estimate([0, 1], 0.0), "no information"),
        (lambda: krr_frequency_estimate([0, 3], 3, 1.0), "reports must lie in"),
        (lambda: rr_estimate_std(0, 1.0), "n must be an integer >= 1"),
    ],
)
def test_bad_input_raises_value_error_naming_the_value(call, message: str) -> None:
    # a value of the wrong type (a bool seed) is a TypeError; both name the parameter
    with pytest.raises((ValueError, TypeError), match=message):
        call()


def test_classic_gaussian_formula_really_fails_beyond_its_range() -> None:
    # Why gaussian_sigma refuses eps >= 1 for the classic calibration: applied at eps = 10 the
    # formula sigma = sqrt(2 ln(1.25/delta)) / eps gives a mechanism whose exact delta is larger.
    eps, delta = 10.0, 1e-5
    sigma = np.sqrt(2 * np.log(1.25 / delta)) / eps
    assert gdp_delta(1.0 / sigma, eps) > 2 * delta


def test_personalized_standard_deviations_match_simulation() -> None:
    from shuffle_lib import (
        laplace_mechanism,
        personalized_laplace_mean_std,
        personalized_rr_estimate_std,
        randomized_response,
        rr_frequency_estimate,
    )

    gen = np.random.default_rng(11)
    levels = gen.uniform(0.1, 2.0, 2000)
    reps = 2000
    # frequency estimation on one fixed dataset with 70% ones, in random positions
    bits = gen.permutation(np.arange(2000) < 1400)
    estimates = [rr_frequency_estimate(randomized_response(bits, levels, rng=gen), levels)
                 for _ in range(reps)]
    predicted = personalized_rr_estimate_std(levels)
    # the sample sd of 2000 draws is within 10% of the truth with overwhelming probability
    assert np.std(estimates) == pytest.approx(predicted, rel=0.1)
    # unbiased for the level-weighted fraction of ones, which is 0.7 up to the random positions
    weights = 1 - 2 / (1 + np.exp(levels))
    target = np.sum(weights * bits) / np.sum(weights)
    assert abs(np.mean(estimates) - target) < 4 * predicted / np.sqrt(reps)
    values = gen.uniform(20, 80, 2000)
    means = laplace_mechanism(np.broadcast_to(values, (reps, 2000)), levels, 60.0, rng=gen).mean(1)
    assert np.std(means) == pytest.approx(personalized_laplace_mean_std(levels, 60.0), rel=0.1)


def test_rr_estimate_std_is_finite_and_right_at_extreme_eps() -> None:
    # e^eps overflows beyond about 709.8: the old form gave inf / inf = NaN at eps = 1e300
    assert rr_estimate_std(10, 1e300) == 0.0
    assert rr_estimate_std(4, 800.0) == pytest.approx(np.exp(-400.0) / 2, rel=1e-12)
    # continuous across the switch to the divided form at eps = 700
    below, above = rr_estimate_std(4, 700.0), rr_estimate_std(4, np.nextafter(700.0, 800.0))
    assert above == pytest.approx(below, rel=1e-12)
    assert rr_estimate_std(1, 1e-300) == pytest.approx(1e300, rel=1e-12)  # about 1 / eps
    with pytest.raises(ValueError, match="eps"):
        rr_estimate_std(1, 1e-320)  # the standard deviation overflows


def test_krr_frequency_estimate_at_tiny_eps_is_huge_but_finite() -> None:
    # p - q = (e^eps - 1) / (e^eps + k - 1) ~ eps / 3 with k = 3: (1/2 - 1/3) * 3 / eps, etc.
    estimate = krr_frequency_estimate([0, 1], 3, 1e-300)
    np.testing.assert_allclose(estimate, [5e299, 5e299, -1e300], rtol=1e-12)
    with pytest.raises(ValueError, match="eps"):
        krr_frequency_estimate([0, 1], 3, 1e-320)


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (lambda: krr_channel(10**12, 1.0), ValueError, "k must be at most"),
        (lambda: krr_frequency_estimate([[0, 1]], 3, 1.0), ValueError, "1-D"),
        (lambda: krr_frequency_estimate(0, 3, 1.0), ValueError, "1-D"),
        (lambda: krr_frequency_estimate([0, 1], 10**30, 1.0), ValueError, "k must be at most"),
        (lambda: k_randomized_response([0, 1], 10**30, 1.0), ValueError, "k must be at most"),
        (lambda: rr_estimate_std(10**30, "1.0"), TypeError, "eps"),
        (lambda: laplace_mechanism(["0.5"], 1.0), TypeError, "x must be"),
        (lambda: gaussian_mechanism([True], 0.5, 1e-5), TypeError, "x must be"),
        (lambda: rr_frequency_estimate([0, 2], 1.0), ValueError, "reports must lie in"),
        (lambda: rr_frequency_estimate([1, 1], 1e-310), ValueError, "eps"),  # 1e310 overflows
    ],
)
def test_hostile_inputs_are_refused_by_name(call, error: type, message: str) -> None:
    with pytest.raises(error, match=message):
        call()


def test_huge_user_counts_are_fine() -> None:
    assert rr_estimate_std(10**30, 1.0) == pytest.approx(rr_estimate_std(1, 1.0) * 1e-15)


def _mp_personalized_laplace_std(eps: list[float], sensitivity: float) -> float:
    import mpmath

    with mpmath.workdps(40):
        total = mpmath.fsum((mpmath.mpf(sensitivity) / mpmath.mpf(e)) ** 2 for e in eps)
        return float(mpmath.sqrt(2 * total) / len(eps))


def _mp_personalized_rr_std(eps: list[float]) -> float:
    import mpmath

    with mpmath.workdps(40):  # 1 - 2q = tanh(eps / 2), q (1 - q) = 1 / (4 cosh^2(eps / 2))
        variance = mpmath.fsum(1 / (4 * mpmath.cosh(mpmath.mpf(e) / 2) ** 2) for e in eps)
        return float(mpmath.sqrt(variance) / mpmath.fsum(mpmath.tanh(mpmath.mpf(e) / 2)
                                                         for e in eps))


def test_personalized_stds_match_40_digits_over_the_whole_range() -> None:
    # squares of 1/eps used to overflow (eps below 1e-154: inf) or underflow (above 1e154: 0),
    # and q (1 - q) to underflow above eps = 745 (sd 0 where it is e^{-eps/2})
    from shuffle_lib.randomizers import personalized_laplace_mean_std, personalized_rr_estimate_std

    for level in np.geomspace(1e-300, 1e300, 61):
        for eps in ([level], [level, 1.0], [level] * 3 + [2 * level]):
            for sensitivity in (1.0, 1e-8):
                assert personalized_laplace_mean_std(eps, sensitivity) == pytest.approx(
                    _mp_personalized_laplace_std(eps, sensitivity), rel=1e-13)
    for level in [*np.geomspace(1e-300, 1e3, 41), 745.5, 800.0, 1400.0]:
        for eps in ([level], [level, 2 * level], [level] * 4):
            assert personalized_rr_estimate_std(eps) == pytest.approx(
                _mp_personalized_rr_std(eps), rel=1e-12)
    with pytest.raises(ValueError, match="overflows"):
        personalized_rr_estimate_std([1e-320])
    with pytest.raises(ValueError, match="overflows"):
        personalized_laplace_mean_std([1e-300], 1e300)


def test_stds_and_estimates_stay_exact_where_an_intermediate_overflows() -> None:
    import mpmath

    # sqrt(2 / n) * sensitivity overflows before the division by eps > 1
    with mpmath.workdps(40):
        expected = float(mpmath.sqrt(2) * mpmath.mpf(1.5e308) / 10)
    assert laplace_mean_std(1, 10.0, 1.5e308) == pytest.approx(expected, rel=1e-13)
    # 1 - 2q cancelled at small eps (relative error 1e-4 at eps = 1e-12): tanh(eps / 2) instead
    assert rr_frequency_estimate([0, 1], 1e-300) == 0.5  # was refused: 1 - 2q rounded to 0
    for eps in np.geomspace(1e-300, 1e-3, 12):
        with mpmath.workdps(400):  # 1 - 2q is about eps / 2: 400 digits keep 40 of them
            q = 1 / (1 + mpmath.exp(mpmath.mpf(eps)))
            expected = float((3 - 4 * q) / (4 * (1 - 2 * q)))
        assert rr_frequency_estimate([1, 0, 1, 1], float(eps)) == pytest.approx(expected,
                                                                                 rel=1e-12)


@pytest.mark.parametrize(
    ("call", "error", "name"),
    [
        (lambda: gaussian_sigma(0.5, 1e-5, 1e308, "analytic"), ValueError, "sensitivity"),
        (lambda: gaussian_sigma(0.5, 1e-300, 1e307), ValueError, "sensitivity"),
        (lambda: gaussian_sigma(0.5, 1e-5, 1.0, None), TypeError, "calibration"),
        (lambda: gaussian_sigma(0.5, 1e-5, 1.0, np.array(["classic"])), TypeError, "calibration"),
        (lambda: laplace_mechanism([0.5], 1e-300, 1e300, rng=0), ValueError, "sensitivity"),
        (lambda: laplace_mechanism([1.7e308] * 50, 1.0, 1e308, rng=0), ValueError, "overflows"),
    ],
)
def test_noise_scales_beyond_the_float_range_are_refused(call, error: type, name: str) -> None:
    with pytest.raises(error, match=name):
        call()
