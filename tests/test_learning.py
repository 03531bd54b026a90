"""Shuffled personalized SGD (GSPA, Algorithm 3): gradients, clipping, calibration, training."""

from __future__ import annotations

import numpy as np
import pytest

from shuffle_lib.accounting import gdp_delta
from shuffle_lib.learning import (
    accuracy,
    client_noise_scales,
    clip_rows,
    cross_entropy,
    digits_pca,
    per_record_gradients,
    predict,
    shuffled_personalized_sgd,
)


def test_per_record_gradients_match_finite_differences(rng: np.random.Generator) -> None:
    x = rng.standard_normal((5, 3))
    y = rng.integers(0, 4, 5)
    w = rng.standard_normal((4, 4))
    grads = per_record_gradients(w, x, y)
    for j in range(5):
        numeric = np.zeros_like(w)
        for idx in np.ndindex(w.shape):
            step = np.zeros_like(w)
            step[idx] = 1e-6
            numeric[idx] = (cross_entropy(w + step, x[j:j + 1], y[j:j + 1])
                            - cross_entropy(w - step, x[j:j + 1], y[j:j + 1])) / 2e-6
        np.testing.assert_allclose(grads[j], numeric, atol=1e-6)


def test_clipping_bounds_every_record_and_leaves_small_ones(rng: np.random.Generator) -> None:
    grads = rng.standard_normal((50, 4, 3)) * rng.uniform(0.1, 5, (50, 1, 1))
    clipped = clip_rows(grads, 2.0)
    norms = np.sqrt((clipped**2).sum(axis=(1, 2)))
    assert np.all(norms <= 2.0 + 1e-12)
    small = np.sqrt((grads**2).sum(axis=(1, 2))) <= 2.0
    np.testing.assert_array_equal(clipped[small], grads[small])


@pytest.mark.parametrize(("eps", "delta"), [(0.05, 1e-5), (0.5, 1e-5), (1.7, 1e-6)])
def test_noise_scale_gives_exactly_the_client_budget(eps: float, delta: float) -> None:
    clip, batch = 2.0, 14
    sigma = client_noise_scales([eps], delta, clip, batch)[0]
    # a Gaussian mechanism with sensitivity s and noise sigma is (s / sigma)-GDP
    assert gdp_delta(2 * clip / batch / sigma, eps) == pytest.approx(delta, rel=1e-6)


def test_training_learns_with_large_budgets_and_degrades_as_they_fall() -> None:
    train_x, test_x, train_y, test_y = digits_pca(10)
    results = {}
    for eps in (50.0, 1.0, 0.05):
        runs = [shuffled_personalized_sgd(train_x, train_y, np.full(100, eps), 1e-5,
                                          learning_rate=0.003, epochs=30, rng=seed)[-1]
                for seed in range(2)]
        results[eps] = np.mean([accuracy(w, test_x, test_y) for w in runs])
    assert results[50.0] >= 0.85  # essentially noiseless: close to plain softmax regression
    assert results[50.0] > results[1.0] > results[0.05]
    assert results[0.05] < 0.4


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: shuffled_personalized_sgd(np.ones((4, 2)), [0, 1, 0, 1], [1.0] * 5, 1e-5),
         "at most one client per record"),
        (lambda: shuffled_personalized_sgd(np.ones((4, 2)), [0, 1, 0], [1.0], 1e-5), "labels"),
        (lambda: shuffled_personalized_sgd(np.ones((4, 2)), [0, 1, 0, 1], [0.0], 1e-5), "eps"),
        (lambda: shuffled_personalized_sgd(np.ones((4, 2)), [0, 1, 0, 1], [1.0], 0.0), "delta"),
        (lambda: shuffled_personalized_sgd(np.ones((4, 2)), [0, 1, 0, 1], [1.0], 1e-5,
                                           clip=-1.0), "clip"),
        (lambda: shuffled_personalized_sgd([[np.nan, 1.0]], [0], [1.0], 1e-5),
         "features must not contain NaN"),
    ],
)
def test_bad_input_raises(call, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        call()


_X, _Y, _W = np.array([[1.0, 0.0], [0.0, 1.0]]), np.array([0, 1]), np.zeros((3, 2))


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (lambda: digits_pca(10**12), ValueError, "n_components must be at most 64"),
        (lambda: digits_pca(10, test_fraction=1e-300), ValueError, "test_fraction must lie in"),
        (lambda: digits_pca(10, seed=-1), ValueError, "seed"),
        (lambda: digits_pca(2.5), TypeError, "n_components"),
        (lambda: cross_entropy(_W, _X, [0, 2]), ValueError, "labels must be below"),
        (lambda: cross_entropy(_W, _X, [0, 0.5]), ValueError, "labels must contain whole"),
        (lambda: cross_entropy(np.zeros((2, 2)), _X, _Y), ValueError, r"weights must have d \+ 1"),
        (lambda: cross_entropy(np.full((3, 2), 1e200), _X * 1e200, _Y), ValueError, "overflows"),
        (lambda: per_record_gradients(_W, _X, [0, 2]), ValueError, "labels must be below"),
        (lambda: per_record_gradients(_W, "x", _Y), TypeError, "features"),
        (lambda: per_record_gradients(3.0, _X, _Y), ValueError, "weights must have 2"),
        (lambda: accuracy(np.array(["a"]), _X, _Y), TypeError, "weights"),
        (lambda: predict(_W, None), TypeError, "features"),
        (lambda: clip_rows(3.0, 1.0), ValueError, "gradients must have one row"),
        (lambda: clip_rows(np.array([[np.inf, 0.0]]), 1.0), ValueError, "gradients must be finite"),
        (lambda: client_noise_scales([[1.0, 2.0]], 1e-5, 1.0, 10), ValueError, "eps must be a "),
        (lambda: client_noise_scales([1.0, 2.0], [1e-5] * 3, 1.0, 10), ValueError, "delta"),
        (lambda: shuffled_personalized_sgd(_X, _Y, [1.0], 1e-5, epochs=10**12), ValueError,
         "epochs"),
        (lambda: shuffled_personalized_sgd(_X, [0, 2**61], [1.0], 1e-5), ValueError, "n_classes"),
    ],
)
def test_hostile_input_is_refused_by_our_checks(call, error, message: str) -> None:
    with pytest.raises(error, match=message):
        call()


def test_clipping_a_gradient_whose_squared_norm_overflows() -> None:
    clipped = clip_rows(np.array([[3e300, 4e300], [3.0, 4.0]]), 1.0)
    np.testing.assert_allclose(clipped, [[0.6, 0.8], [0.6, 0.8]], rtol=1e-15)


def test_cross_entropy_of_uniform_weights_is_log_k() -> None:
    assert cross_entropy(np.zeros((3, 5)), _X, _Y) == pytest.approx(np.log(5), rel=1e-15)


def test_calibration_once_per_level_gives_the_per_client_result(rng: np.random.Generator
                                                                ) -> None:
    # one root search per distinct (eps, delta); the result is the per-client calibration
    from shuffle_lib.randomizers import gaussian_sigma

    levels = rng.choice([0.05, 0.5, 2.0, 40.0], size=200)
    deltas = rng.choice([1e-5, 1e-9], size=200)
    scales = client_noise_scales(levels, deltas, 2.0, 10)
    per_client = [gaussian_sigma(e, d, 0.4, "analytic") for e, d in zip(levels, deltas,
                                                                         strict=True)]
    assert np.array_equal(scales, per_client)
    equal = client_noise_scales(np.full(10**5, 0.5), 1e-5, 2.0, 10)
    assert equal.shape == (10**5,) and (equal == gaussian_sigma(0.5, 1e-5, 0.4, "analytic")).all()


@pytest.mark.parametrize("call", [accuracy, cross_entropy, per_record_gradients])
def test_functions_with_labels_refuse_none(call) -> None:
    # None used to mean "no labels" inside: accuracy returned 0.0, the others an AttributeError
    with pytest.raises(TypeError, match="labels"):
        call(np.zeros((3, 2)), [[1.0, 0.0]], None)


def test_clip_rows_clips_rows_whose_squares_underflow_or_overflow() -> None:
    import mpmath

    mpmath.mp.dps = 40
    rows = np.array([[3e-200, 4e-200], [3e200, 4e200], [3.0, 4.0], [0.0, 0.0]])
    for clip in (1e-250, 1e-190, 1.0, 1e250):
        clipped = clip_rows(rows, clip)
        for row, out in zip(rows, clipped, strict=True):
            norm = mpmath.sqrt(mpmath.fsum(mpmath.mpf(v) ** 2 for v in row))
            factor = min(mpmath.mpf(1), mpmath.mpf(clip) / norm) if norm else 1
            expected = [float(mpmath.mpf(v) * factor) for v in row]
            assert out == pytest.approx(expected, rel=1e-14, abs=0)
    assert np.isfinite(clipped).all()


def _sgd_storing_every_gradient(features: np.ndarray, labels: np.ndarray, eps: np.ndarray,
                                delta: float, clip: float, learning_rate: float, epochs: int,
                                n_classes: int, seed: int) -> np.ndarray:
    """shuffled_personalized_sgd as it was before issue 32: per-record gradients stored as an
    (m, d + 1, k) array, clipped with clip_rows and averaged, one noise draw per client."""
    gen = np.random.default_rng(seed)
    clients = eps.size
    batch = features.shape[0] // clients
    members = gen.permutation(features.shape[0])[: batch * clients].reshape(clients, batch)
    sigmas = client_noise_scales(eps, delta, clip, batch)
    weights = np.zeros((features.shape[1] + 1, n_classes))
    path = np.empty((epochs, *weights.shape))
    for epoch in range(epochs):
        for client in gen.permutation(clients):
            rows = members[client]
            grads = clip_rows(per_record_gradients(weights, features[rows], labels[rows]), clip)
            noise = gen.standard_normal(weights.shape) * sigmas[client]
            weights = weights - learning_rate * (grads.mean(axis=0) + noise)
        path[epoch] = weights
    return path


@pytest.mark.parametrize(
    ("scale", "clip", "rate", "clients"),
    [(1.0, 2.0, 0.05, 4), (1.0, 0.01, 0.5, 7), (30.0, 1.0, 0.1, 3), (1e-3, 1e3, 1.0, 1),
     (1e150, 1.0, 1e-3, 5), (1.0, 1e-200, 1e100, 2), (1e150, 1e-200, 1e48, 3)],
)
def test_sgd_matches_the_implementation_storing_every_gradient(
        scale: float, clip: float, rate: float, clients: int) -> None:
    """Same seed, same draws: the path equals the old implementation's up to rounding (the mean
    is now one matrix product, summed in another order), whether clipping binds or not."""
    gen = np.random.default_rng(11)
    x = gen.normal(size=(61, 5)) * scale
    y = gen.integers(0, 3, 61)
    eps = np.geomspace(0.1, 20.0, clients)
    new = shuffled_personalized_sgd(x, y, eps, 1e-5, clip=clip, learning_rate=rate, epochs=20,
                                    n_classes=3, rng=5)
    old = _sgd_storing_every_gradient(x, y, eps, 1e-5, clip, rate, 20, 3, 5)
    np.testing.assert_allclose(new, old, rtol=1e-9, atol=1e-12 * np.abs(old).max())


def test_sgd_on_the_books_data_gives_the_same_accuracies() -> None:
    """The book's setting (digits, 100 clients, clip 2, rate 0.003), fewer epochs: every epoch's
    test accuracy is the old implementation's."""
    train_x, test_x, train_y, test_y = digits_pca()
    eps = np.geomspace(0.05, 5.0, 100)
    new = shuffled_personalized_sgd(train_x, train_y, eps, 1e-5, clip=2.0, learning_rate=0.003,
                                    epochs=5, rng=2)
    old = _sgd_storing_every_gradient(train_x, train_y, eps, 1e-5, 2.0, 0.003, 5, 10, 2)
    assert [accuracy(w, test_x, test_y) for w in new] == [accuracy(w, test_x, test_y)
                                                           for w in old]
    np.testing.assert_allclose(new, old, rtol=1e-9, atol=1e-12)


def test_sgd_refuses_more_updates_or_work_than_documented() -> None:
    from shuffle_lib.learning import MAX_SGD_NOISE, MAX_SGD_STEPS, MAX_SGD_WORK

    x, y = np.zeros((40, 1)), np.arange(40) % 2
    with pytest.raises(ValueError, match="MAX_SGD_STEPS"):
        shuffled_personalized_sgd(x, y, [1.0] * 4, 1e-5, epochs=MAX_SGD_STEPS // 4 + 1)
    shuffled_personalized_sgd(x, y, [1.0] * 4, 1e-5, epochs=2)
    wide = np.zeros((1, 999))  # one record, (d + 1) k = 2,000 noise entries per update
    with pytest.raises(ValueError, match="MAX_SGD_NOISE"):
        shuffled_personalized_sgd(wide, [1], [1.0], 1e-5, n_classes=2,
                                  epochs=MAX_SGD_NOISE // 2000 + 1)
    many = np.zeros((2000, 49))  # one client of 2,000 records, (d + 1) k = 100 entries each
    epochs = MAX_SGD_WORK // (2000 * 100) + 1
    with pytest.raises(ValueError, match="MAX_SGD_WORK"):
        shuffled_personalized_sgd(many, np.arange(2000) % 2, [1.0], 1e-5, epochs=epochs)
