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
  calibration of :func:`shuffle_lib.gaussian_sigma <shuffle_lib.randomizers.gaussian_sigma>` is
  used, valid for every :math:`\varepsilon`.
- GSPA draws the order of the clients once (line 3) and reuses it in every epoch. Then a
  client's updates sit at the same step of every epoch and can be linked across epochs, so the
  epochs are not independent shuffled releases and the :math:`\sqrt T\mu` composition of its
  Theorem 5 has nothing to compose. A fresh order is drawn for every epoch here.

So each noisy client update is :math:`(\varepsilon_i,\delta_i)`-DP for any one record of that
client. What the shuffled training as a whole guarantees is only GSPA's approximation
(Theorem 5, :math:`\sqrt T\mu` from
:func:`shuffle_lib.accounting.gspa_mu <shuffle_lib.accounting.personalized.gspa_mu>`): the clone
argument behind a rigorous accountant needs every user to run the same randomizer, which
personalized Gaussian noise does not.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike
from scipy.special import log_softmax, softmax

from shuffle_lib._validation import (
    RngLike,
    as_rng,
    broadcast_per_user,
    check_array,
    check_delta,
    check_epsilon,
    check_integer,
    check_positive,
    check_real,
)
from shuffle_lib.randomizers import gaussian_sigma

MAX_PATH_ENTRIES = 10**8
"""Largest weight path (``epochs * (d + 1) * k`` numbers, 800 MB) that
:func:`shuffled_personalized_sgd` stores; also the largest per-client gradient array."""

MAX_SGD_STEPS = 2 * 10**4
"""Most client updates (``epochs * len(eps)``) of :func:`shuffled_personalized_sgd`: each is a
few NumPy calls (tens of microseconds), so the limit is a few seconds of training (the book
trains 100 clients for 50 epochs, 5,000 updates)."""

MAX_SGD_NOISE = 2 * 10**7
"""Most noise entries :func:`shuffled_personalized_sgd` draws (``epochs * len(eps) * (d + 1) *
k``, one weight-sized Gaussian draw per client update; this also bounds the path it returns):
about a second."""

MAX_SGD_WORK = 5 * 10**8
"""Most gradient entries :func:`shuffled_personalized_sgd` computes in all
(``epochs * len(eps) * m * (d + 1) * k``, ``m`` records per client): a few seconds of training
(about 3 ms per million entries; the book needs about 7 million)."""


def digits_pca(n_components: int = 10, test_fraction: float = 0.25, seed: int = 0
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    r"""The 8x8 handwritten digits bundled with scikit-learn (1,797 images, 10 classes; used in
    place of MNIST, which is not available offline), split into a stratified training and test
    part, projected on the first ``n_components`` principal components of the training part and
    standardized (GSPA also puts a PCA layer first). Returns
    ``(train_x, test_x, train_y, test_y)``. ``n_components`` lies in 1..64 (the pixels);
    ``test_fraction`` in [0.05, 0.95], so that both parts hold every class and at least 64 images;
    ``seed`` is an integer in [0, 2**32 - 1].

    >>> train_x, test_x, train_y, test_y = digits_pca(10)
    >>> train_x.shape[1], train_x.shape[0] + test_x.shape[0]
    (10, 1797)
    """
    from sklearn.datasets import load_digits
    from sklearn.decomposition import PCA
    from sklearn.model_selection import train_test_split
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    components = check_integer(n_components, "n_components", 1, 64)
    test_fraction = check_real(test_fraction, "test_fraction", low=0.05, high=0.95)
    seed = check_integer(seed, "seed", 0, 2**32 - 1)
    x, y = load_digits(return_X_y=True)
    train_x, test_x, train_y, test_y = train_test_split(
        x, y, test_size=test_fraction, random_state=seed, stratify=y
    )
    pipeline = make_pipeline(PCA(components, random_state=seed), StandardScaler()).fit(train_x)
    return pipeline.transform(train_x), pipeline.transform(test_x), train_y, test_y


def _check_data(features: ArrayLike, labels: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    x = check_array(features, "features", ndim=2)
    y = check_array(labels, "labels", integer=True, low=0)
    if y.shape != (x.shape[0],):
        raise ValueError(f"labels must be {x.shape[0]} non-negative integers, got shape {y.shape}")
    return x, y


_NO_LABELS = object()


def _check_model(weights: ArrayLike, features: ArrayLike, labels: object = _NO_LABELS
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """Weights ``(d + 1, k)`` matching ``(m, d)`` features, and labels below ``k`` when the
    caller takes labels (``None`` passed as labels is refused by :func:`_check_data`)."""
    if labels is _NO_LABELS:
        x, y = check_array(features, "features", ndim=2), None
    else:
        x, y = _check_data(features, labels)
    w = check_array(weights, "weights", ndim=2)
    if w.shape[0] != x.shape[1] + 1:
        raise ValueError(f"weights must have d + 1 = {x.shape[1] + 1} rows for {x.shape[1]} "
                         f"features, got shape {w.shape}")
    if y is not None and y.max() >= w.shape[1]:
        raise ValueError(f"labels must be below the number of classes (columns of weights) "
                         f"{w.shape[1]}, got {y.max()}")
    return w, x, y


def _with_bias(x: np.ndarray) -> np.ndarray:
    return np.hstack([x, np.ones((x.shape[0], 1))])


def _logits(weights: np.ndarray, features: np.ndarray) -> np.ndarray:
    """:math:`\tilde xW` for checked arguments, or a ``ValueError`` if it overflows."""
    with np.errstate(over="ignore", invalid="ignore"):
        logits = _with_bias(features) @ weights
    if not np.isfinite(logits).all():
        raise ValueError("features @ weights overflows: the weights or the features are too large")
    return logits


def predict(weights: np.ndarray, features: ArrayLike) -> np.ndarray:
    r"""Most likely class :math:`\arg\max_c (xW)_c` for every row of ``features``.

    >>> predict(np.eye(3)[:, :2] * 5, [[1.0, 0.0], [0.0, 1.0]]).tolist()
    [0, 1]
    """
    w, x, _ = _check_model(weights, features)
    return np.argmax(_logits(w, x), axis=1)


def accuracy(weights: np.ndarray, features: ArrayLike, labels: ArrayLike) -> float:
    """Fraction of rows whose predicted class equals the label.

    >>> accuracy(np.eye(3)[:, :2] * 5, [[1.0, 0.0], [0.0, 1.0]], [0, 0])
    0.5
    """
    w, x, y = _check_model(weights, features, labels)
    return float(np.mean(np.argmax(_logits(w, x), axis=1) == y))


def cross_entropy(weights: np.ndarray, features: ArrayLike, labels: ArrayLike) -> float:
    r"""Mean cross-entropy :math:`-\frac1m\sum_j \log\mathrm{softmax}(x_jW)_{y_j}` of softmax
    regression (GSPA, Section 5), with labels below ``k``, the number of columns of ``weights``.

    >>> round(cross_entropy(np.zeros((3, 2)), [[1.0, 0.0], [0.0, 1.0]], [0, 1]), 6)  # log 2
    0.693147
    """
    w, x, y = _check_model(weights, features, labels)
    log_probs = log_softmax(_logits(w, x), axis=1)
    return float(-np.mean(log_probs[np.arange(y.size), y]))


def _per_record_gradients(weights: np.ndarray, features: np.ndarray, labels: np.ndarray
                          ) -> np.ndarray:
    """:func:`per_record_gradients` on checked arguments."""
    xb = _with_bias(features)
    residual = softmax(xb @ weights, axis=1)
    residual[np.arange(labels.size), labels] -= 1.0
    return xb[:, :, None] * residual[:, None, :]


def per_record_gradients(weights: np.ndarray, features: np.ndarray, labels: np.ndarray
                         ) -> np.ndarray:
    r"""Gradient of each record's cross-entropy, shape ``(m, d + 1, k)``:
    :math:`\tilde x_j(\mathrm{softmax}(\tilde x_jW)-e_{y_j})^\top` with :math:`\tilde x_j=(x_j,1)`
    (softmax regression, GSPA, Algorithm 3, line 6). Limit: ``m * (d + 1) * k`` at most
    ``MAX_PATH_ENTRIES``.

    >>> per_record_gradients(np.zeros((2, 2)), [[1.0]], [0]).tolist()
    [[[-0.5, 0.5], [-0.5, 0.5]]]
    """
    w, x, y = _check_model(weights, features, labels)
    if w.size * x.shape[0] > MAX_PATH_ENTRIES:
        raise ValueError(f"m x (d + 1) x k = {x.shape[0]} x {w.size} gradient entries for "
                         f"features and weights exceed the documented limit {MAX_PATH_ENTRIES}")
    _logits(w, x)  # refuse an overflow before softmax turns it into NaN
    return _per_record_gradients(w, x, y)


def _clip_rows(gradients: np.ndarray, clip: float) -> np.ndarray:
    """:func:`clip_rows` on checked arguments. A row whose squared norm overflows, or is so small
    that its squares lose digits to underflow (norm below 1e-150), is rescaled by its largest
    entry first, so its norm stays exact; a row whose norm exceeds ``clip`` by more than 1e300 is
    divided by its norm before the multiplication by ``clip`` (other rows are computed as
    before)."""
    axes = tuple(range(1, gradients.ndim))
    with np.errstate(over="ignore", under="ignore"):
        norms = np.sqrt((gradients**2).sum(axis=axes))
    big = np.isinf(norms)
    small = norms < 1e-150
    if small.any():  # a zero row stays zero; a tiny non-zero one is rescaled
        big |= small & (np.abs(gradients) > 0).any(axis=axes)
    if big.any():
        top = np.abs(gradients[big]).max(axis=axes, keepdims=True)
        norms[big] = top.reshape(-1) * np.sqrt(((gradients[big] / top) ** 2).sum(axis=axes))
    shape = (-1,) + (1,) * (gradients.ndim - 1)
    with np.errstate(over="ignore"):
        ratio = norms / clip
    factor = 1.0 / np.maximum(1.0, ratio)
    clipped = gradients * factor.reshape(shape)
    far = ratio > 1e300  # 1 / ratio would lose digits or be 0: divide by the norm first
    if far.any():
        clipped[far] = gradients[far] / norms[far].reshape(shape) * clip
    return clipped


def _row_norms(rows: np.ndarray) -> np.ndarray:
    """Euclidean norm of each row of a 2-D array; a row whose squared norm overflows or is below
    1e-150 (and non-zero) is rescaled by its largest entry first, as in :func:`_clip_rows`. Call
    it under ``np.errstate(over="ignore", under="ignore")``."""
    norms = np.sqrt(np.einsum("ij,ij->i", rows, rows))
    if not 1e-150 <= norms.min() <= norms.max() < np.inf:  # one test on the hot path
        redo = np.isinf(norms) | ((norms < 1e-150) & (norms >= 0))
        part = rows[redo]
        top = np.abs(part).max(axis=1, keepdims=True)
        top[top == 0] = 1.0
        norms[redo] = top.reshape(-1) * np.sqrt(((part / top) ** 2).sum(axis=1))
    return norms


def _clipped_mean_gradient(weights: np.ndarray, xb: np.ndarray, labels: np.ndarray,
                           x_norms: np.ndarray, clip: float, picked: np.ndarray) -> np.ndarray:
    """Mean over the records of ``_clip_rows(_per_record_gradients(...), clip)`` without the
    ``m x (d + 1) x k`` array: record j's gradient is the outer product of ``xb[j]`` (norm
    ``x_norms[j]``) and its residual ``r_j`` (norm ``|r_j|``), so its norm is the product of the
    two and the clipped mean is ``xb.T @ (c * R) / m`` with ``c_j = 1 / max(1, norm_j / clip)``.
    Rows with ``norm_j / clip`` above 1e300 (or infinite) are scaled by ``clip / norm_j`` from
    their unit vectors instead. Call it under ``np.errstate`` ignoring over/under/invalid: an
    overflow gives NaN weights, which the caller refuses."""
    residual = xb @ weights  # the logits, turned in place into scipy's softmax, then residuals
    residual -= residual.max(axis=1, keepdims=True)
    np.exp(residual, out=residual)
    residual /= residual.sum(axis=1, keepdims=True)
    residual[picked, labels] -= 1.0
    r_norms = _row_norms(residual)
    ratio = x_norms * r_norms / clip
    factor = 1.0 / np.maximum(1.0, ratio)
    if not ratio.max() > 1e300:  # the usual case: one test (a NaN ratio also lands here)
        residual *= factor[:, None]
        return (xb.T @ residual) / labels.size
    far = ratio > 1e300
    total = (
        xb[~far].T @ (residual[~far] * factor[~far, None])
        + (xb[far] / x_norms[far, None]).T @ (residual[far] * (clip / r_norms[far])[:, None]))
    return total / labels.size


def clip_rows(gradients: np.ndarray, clip: float) -> np.ndarray:
    r"""Scale each record's gradient (a finite array, one record per row of the first axis) to
    Frobenius norm at most ``clip``: :math:`g/\max(1,\|g\|/C)` (per-record clipping, see the
    module docstring).

    >>> np.round(clip_rows(np.array([[[3.0, 4.0]]]), 1.0), 12).tolist()
    [[[0.6, 0.8]]]
    """
    rows = check_array(gradients, "gradients")
    if rows.ndim < 1:
        raise ValueError(f"gradients must have one row per record, got a scalar {gradients!r}")
    return _clip_rows(rows, float(check_positive(clip, "clip")))


def client_noise_scales(
    eps: ArrayLike, delta: ArrayLike, clip: float, batch_size: int
) -> np.ndarray:
    r"""Gaussian noise scale of every client: the exact calibration
    (:func:`shuffle_lib.gaussian_sigma <shuffle_lib.randomizers.gaussian_sigma>`, ``"analytic"``)
    for sensitivity :math:`2C/m` (replacing
    one of the :math:`m` per-record gradients, each of norm at most :math:`C`, moves their mean by
    at most :math:`2C/m`). GSPA, Algorithm 3, line 7, with the calibration corrected. Each
    distinct ``(eps, delta)`` pair is calibrated once (a root search of about a millisecond), so
    the cost grows with the number of distinct levels, not of clients.

    >>> bool(client_noise_scales([0.5], 1e-5, 2.0, 10)[0] < gaussian_sigma(0.5, 1e-5, 0.4))
    True
    """
    eps_arr = np.atleast_1d(check_epsilon(eps, positive=True))
    if eps_arr.ndim != 1:
        raise ValueError(f"eps must be a scalar or a 1-D array, one per client, got shape "
                         f"{eps_arr.shape}")
    delta_arr = broadcast_per_user(check_delta(delta, allow_zero=False), eps_arr.shape, "delta")
    sensitivity = float(2 * check_positive(clip, "clip")
                        / check_integer(batch_size, "batch_size", 1))
    if not 0 < sensitivity < np.inf:
        raise ValueError(f"2 * clip / batch_size must be a positive float, got clip = {clip!r}, "
                         f"batch_size = {batch_size!r}")
    # one calibration per distinct (eps, delta): each is a root search
    levels, inverse = np.unique(np.stack([eps_arr, delta_arr]), axis=1, return_inverse=True)
    sigmas = np.array([gaussian_sigma(float(e), float(d), sensitivity, "analytic")
                       for e, d in levels.T])
    return sigmas[inverse.reshape(-1)]


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
    See the module docstring for what is (and is not) certified. Limits: the path and each
    client's per-record gradients hold at most ``MAX_PATH_ENTRIES`` (``10**8``) numbers; at most
    ``MAX_SGD_STEPS`` (``2 * 10**4``) client updates ``epochs * len(eps)``, at most
    ``MAX_SGD_NOISE`` (``2 * 10**7``) noise entries ``epochs * len(eps) * (d + 1) * k``, and at most
    ``MAX_SGD_WORK`` (``5 * 10**8``) gradient entries ``epochs * len(eps) * m * (d + 1) * k`` in
    all (each a few seconds); a ``learning_rate`` so large that the weights overflow raises
    ``ValueError``. The mean of the clipped per-record gradients is computed without storing them:
    the gradient of record :math:`j` is the outer product :math:`\tilde x_j r_j^\top`, whose norm
    is :math:`\|\tilde x_j\|\,\|r_j\|`, so the mean is :math:`\tilde X^\top(c\odot R)/m` with
    :math:`c_j` the clipping factor of record :math:`j`.

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
    batch = x.shape[0] // clients
    size = (x.shape[1] + 1) * k
    if max(steps, batch) * size > MAX_PATH_ENTRIES:
        raise ValueError(f"max(epochs, records per client) x (d + 1) x n_classes = "
                         f"{max(steps, batch)} x {size} entries (labels and features set d and "
                         f"n_classes) exceed the documented limit of {MAX_PATH_ENTRIES}")
    if steps * clients > MAX_SGD_STEPS:
        raise ValueError(f"epochs x clients = {steps} x {clients} client updates exceed the "
                         f"documented limit MAX_SGD_STEPS = {MAX_SGD_STEPS}")
    if steps * clients * size > MAX_SGD_NOISE:
        raise ValueError(f"epochs x clients x (d + 1) x n_classes = {steps} x {clients} x {size} "
                         f"noise entries exceed the documented limit MAX_SGD_NOISE = "
                         f"{MAX_SGD_NOISE}")
    if steps * clients * batch * size > MAX_SGD_WORK:
        raise ValueError(f"epochs x clients x records per client x (d + 1) x n_classes = "
                         f"{steps} x {clients} x {batch} x {size} gradient entries exceed the "
                         f"documented limit MAX_SGD_WORK = {MAX_SGD_WORK}")
    gen = as_rng(rng)
    members = gen.permutation(x.shape[0])[: batch * clients].reshape(clients, batch)
    sigmas = client_noise_scales(eps_arr, delta, clip, batch)
    clip_value = float(check_positive(clip, "clip"))
    weights = np.zeros((x.shape[1] + 1, k))
    path = np.empty((steps, *weights.shape))
    # each client's records, with the bias column, and their norms: fixed for the whole training
    client_x = [_with_bias(x[rows]) for rows in members]
    client_y = [y[rows] for rows in members]
    picked = np.arange(batch)
    # one errstate for the whole loop (it costs microseconds per entry); an overflow ends in
    # non-finite weights, refused below
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        client_norms = [_row_norms(xb) for xb in client_x]
        for epoch in range(steps):
            order = gen.permutation(clients)  # a new shuffle every epoch
            # the same draws, in the same order, as one standard_normal(weights.shape) per client
            noises = gen.standard_normal((clients, *weights.shape))
            for noise, client in zip(noises, order, strict=True):
                mean = _clipped_mean_gradient(weights, client_x[client], client_y[client],
                                              client_norms[client], clip_value, picked)
                weights = weights - rate * (mean + noise * sigmas[client])
            path[epoch] = weights
    if not np.isfinite(path).all():
        raise ValueError(f"the weights overflowed: learning_rate = {rate} is too large for these "
                         f"features")
    return path
