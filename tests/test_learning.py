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
        (lambda: shuffled_personalized_sgd([[np.nan, 1.0]], [0], [1.0], 1e-5), "finite"),
    ],
)
def test_bad_input_raises(call, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        call()
