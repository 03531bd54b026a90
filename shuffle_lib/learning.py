r"""Shuffled SGD with personalized Gaussian noise (GSPA, Algorithm 3) for softmax regression.

The model is multinomial logistic regression: weights :math:`W` of shape ``(d + 1, k)`` (the last
row is the bias), class probabilities :math:`\mathrm{softmax}(xW)`, cross-entropy loss.

Three departures from the algorithm as printed, all needed for its guarantee to mean what it says:

- GSPA clips the *average* gradient of a client to norm :math:`C` and then calibrates the noise
  to sensitivity :math:`2C/m`. Clipping the average does not limit one record's influence to
  :math:`2C/m`; clipping every per-record gradient to :math:`C` before averaging does, so that is
  what :func:`shuffled_personalized_sgd` does.
- GSPA uses the classic calibration :math:`\sigma=\Delta\sqrt{2\ln(1.25/\delta)}/\varepsilon`,
  proved only for :math:`\varepsilon<1`, with budgets up to 2. Here the exact (analytic)
  calibration of :func:`shuffle_lib.gaussian_sigma` is used, valid for every
  :math:`\varepsilon`.
- GSPA draws the order of the clients once (line 3) and reuses it in every epoch. Then a
  client's updates sit at the same step of every epoch and can be linked across epochs, so the
  epochs are not independent shuffled releases and the :math:`\sqrt T\mu` composition of its
  Theorem 5 has nothing to compose. A fresh order is drawn for every epoch here.

So each noisy client update is :math:`(\varepsilon_i,\delta_i)`-DP for any one record of that
client. What the shuffled training as a whole guarantees is only GSPA's approximation
(Theorem 5, :math:`\sqrt T\mu` from :func:`shuffle_lib.accounting.gspa_mu`): the clone argument
behind a rigorous accountant needs every user to run the same randomizer, which personalized
Gaussian noise does not.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike
from scipy.special import log_softmax, softmax

from shuffle_lib._validation import (
    RngLike,
    as_rng,
    check_delta,
    check_epsilon,
    check_integer,
    check_positive,
)
from shuffle_lib.randomizers import gaussian_sigma


def digits_pca(n_components: int = 10, test_fraction: float = 0.25, seed: int = 0
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    r"""The 8x8 handwritten digits bundled with scikit-learn (1,797 images, 10 classes; used in
    place of MNIST, which is not available offline), split into a stratified training and test
    part, projected on the first ``n_components`` principal components of the training part and
    standardized (GSPA also puts a PCA layer first). Returns
    ``(train_x, test_x, train_y, test_y)``.

    >>> train_x, test_x, train_y, test_y = digits_pca(10)
    >>> train_x.shape[1], train_x.shape[0] + test_x.shape[0]
    (10, 1797)
    """
    from sklearn.datasets import load_digits
    from sklearn.decomposition import PCA
    from sklearn.model_selection import train_test_split
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    components = check_integer(n_components, "n_components", 1)
    x, y = load_digits(return_X_y=True)
    train_x, test_x, train_y, test_y = train_test_split(
        x, y, test_size=test_fraction, random_state=seed, stratify=y
    )
    pipeline = make_pipeline(PCA(components, random_state=seed), StandardScaler()).fit(train_x)
    return pipeline.transform(train_x), pipeline.transform(test_x), train_y, test_y


def _check_data(features: ArrayLike, labels: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    x = np.asarray(features, dtype=float)
    y = np.asarray(labels)
    if x.ndim != 2 or x.shape[0] == 0 or not np.isfinite(x).all():
        raise ValueError(f"features must be a non-empty 2-D array of finite numbers, got {x.shape}")
    if y.shape != (x.shape[0],) or not np.issubdtype(y.dtype, np.integer) or (y < 0).any():
        raise ValueError(f"labels must be {x.shape[0]} non-negative integers, got shape {y.shape}")
    return x, y


def _with_bias(x: np.ndarray) -> np.ndarray:
    return np.hstack([x, np.ones((x.shape[0], 1))])


def predict(weights: np.ndarray, features: ArrayLike) -> np.ndarray:
    r"""Most likely class :math:`\arg\max_c (xW)_c` for every row of ``features``.

    >>> predict(np.eye(3)[:, :2] * 5, [[1.0, 0.0], [0.0, 1.0]]).tolist()
    [0, 1]
    """
    x = np.asarray(features, dtype=float)
    return np.argmax(_with_bias(x) @ weights, axis=1)


def accuracy(weights: np.ndarray, features: ArrayLike, labels: ArrayLike) -> float:
    """Fraction of rows whose predicted class equals the label.

    >>> accuracy(np.eye(3)[:, :2] * 5, [[1.0, 0.0], [0.0, 1.0]], [0, 0])
    0.5
    """
    x, y = _check_data(features, labels)
    return float(np.mean(predict(weights, x) == y))


def cross_entropy(weights: np.ndarray, features: ArrayLike, labels: ArrayLike) -> float:
    r"""Mean cross-entropy :math:`-\frac1m\sum_j \log\mathrm{softmax}(x_jW)_{y_j}`."""
    x, y = _check_data(features, labels)
    log_probs = log_softmax(_with_bias(x) @ weights, axis=1)
    return float(-np.mean(log_probs[np.arange(y.size), y]))


def per_record_gradients(weights: np.ndarray, features: np.ndarray, labels: np.ndarray
                         ) -> np.ndarray:
    r"""Gradient of each record's cross-entropy, shape ``(m, d + 1, k)``:
    :math:`\tilde x_j(\mathrm{softmax}(\tilde x_jW)-e_{y_j})^\top` with :math:`\tilde x_j=(x_j,1)`.
    """
    xb = _with_bias(features)
    residual = softmax(xb @ weights, axis=1)
    residual[np.arange(labels.size), labels] -= 1.0
    return xb[:, :, None] * residual[:, None, :]


def clip_rows(gradients: np.ndarray, clip: float) -> np.ndarray:
    r"""Scale each record's gradient to Frobenius norm at most ``clip``:
    :math:`g/\max(1,\|g\|/C)`.

    >>> np.round(clip_rows(np.array([[[3.0, 4.0]]]), 1.0), 12).tolist()
    [[[0.6, 0.8]]]
    """
    norms = np.sqrt((gradients**2).sum(axis=tuple(range(1, gradients.ndim))))
    factor = 1.0 / np.maximum(1.0, norms / check_positive(clip, "clip"))
    return gradients * factor.reshape((-1,) + (1,) * (gradients.ndim - 1))


def client_noise_scales(
    eps: ArrayLike, delta: ArrayLike, clip: float, batch_size: int
) -> np.ndarray:
    r"""Gaussian noise scale of every client: the exact calibration
    (:func:`shuffle_lib.gaussian_sigma`, ``"analytic"``) for sensitivity :math:`2C/m` (replacing
    one of the :math:`m` per-record gradients, each of norm at most :math:`C`, moves their mean by
    at most :math:`2C/m`). GSPA, Algorithm 3, line 7, with the calibration corrected.

    >>> bool(client_noise_scales([0.5], 1e-5, 2.0, 10)[0] < gaussian_sigma(0.5, 1e-5, 0.4))
    True
    """
    eps_arr = np.atleast_1d(check_epsilon(eps, positive=True))
    delta_arr = np.broadcast_to(check_delta(delta, allow_zero=False), eps_arr.shape)
    sensitivity = 2 * check_positive(clip, "clip") / check_integer(batch_size, "batch_size", 1)
    return np.array([gaussian_sigma(e, d, float(sensitivity), "analytic")
                     for e, d in zip(eps_arr, delta_arr, strict=True)])


def shuffled_personalized_sgd(
    features: ArrayLike,
    labels: ArrayLike,
    eps: ArrayLike,
    delta: ArrayLike,
    *,
    clip: float = 2.0,
    learning_rate: float = 0.05,
    epochs: int = 50,
    n_classes: int | None = None,
    rng: RngLike = None,
) -> np.ndarray:
    r"""GSPA, Algorithm 3: shuffled SGD where client :math:`i` adds its own Gaussian noise.

    The records are split at random into ``len(eps)`` clients of equal size :math:`m` (left-over
    records are dropped). In every epoch a fresh random order :math:`\pi` of the clients is drawn
    and the clients take one step each in that order, without replacement:
    :math:`W\leftarrow W-\eta(\bar g_i+b_i)`, with :math:`\bar g_i` the mean of the client's
    per-record gradients clipped to norm :math:`C` and
    :math:`b_i\sim N(0,\sigma_i^2 I)`, :math:`\sigma_i` from :func:`client_noise_scales`.

    Returns the weights after every epoch, shape ``(epochs, d + 1, k)``, starting from zero.
    See the module docstring for what is (and is not) certified.

    >>> x = np.array([[0.0, 1.0], [1.0, 0.0]] * 20); y = np.array([0, 1] * 20)
    >>> path = shuffled_personalized_sgd(x, y, [50.0] * 4, 1e-5, epochs=30, learning_rate=0.5,
    ...                                  rng=0)
    >>> accuracy(path[-1], x, y)
    1.0
    """
    x, y = _check_data(features, labels)
    eps_arr = np.atleast_1d(check_epsilon(eps, positive=True))
    clients = eps_arr.size
    if eps_arr.ndim != 1 or clients > x.shape[0]:
        raise ValueError(f"need a 1-D eps with at most one client per record, got {eps_arr.shape}")
    steps = check_integer(epochs, "epochs", 1)
    rate = float(check_positive(learning_rate, "learning_rate"))
    k = int(y.max()) + 1 if n_classes is None else check_integer(n_classes, "n_classes", 2)
    if y.max() >= k:
        raise ValueError(f"labels must be below n_classes = {k}")
    gen = as_rng(rng)
    batch = x.shape[0] // clients
    members = gen.permutation(x.shape[0])[: batch * clients].reshape(clients, batch)
    sigmas = client_noise_scales(eps_arr, delta, clip, batch)
    weights = np.zeros((x.shape[1] + 1, k))
    path = np.empty((steps, *weights.shape))
    for epoch in range(steps):
        for client in gen.permutation(clients):  # a new shuffle every epoch
            rows = members[client]
            grads = clip_rows(per_record_gradients(weights, x[rows], y[rows]), clip)
            noise = gen.standard_normal(weights.shape) * sigmas[client]
            weights = weights - rate * (grads.mean(axis=0) + noise)
        path[epoch] = weights
    return path
