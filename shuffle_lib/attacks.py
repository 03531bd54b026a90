r"""Inference attacks and learnability on shuffled LDP data (Meehan et al. 2022, Section 5).

Reports are released in some order ``o`` (``z = y[o]``): the identity for plain LDP, a uniform
permutation for the shuffle model, or a draw of :class:`shuffle_lib.dsigma.DSigmaMechanism`.
The attacker reads position ``j`` of ``z`` as person ``j``'s report, which is what the order
invites them to do.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from shuffle_lib._validation import RngLike, as_rng, check_epsilon, check_integer
from shuffle_lib.dsigma import groups_within_radius
from shuffle_lib.permutations import check_permutation
from shuffle_lib.randomizers import k_randomized_response, krr_channel


def _as_2d(t: ArrayLike) -> np.ndarray:
    arr = np.asarray(t, dtype=float)
    arr = arr[:, None] if arr.ndim == 1 else arr
    if arr.ndim != 2 or arr.shape[0] < 2 or not np.isfinite(arr).all():
        raise ValueError(f"t must be an (n, d) array of finite values with n >= 2, got {arr.shape}")
    return arr


def _neighbour_pairs(points: np.ndarray, r: float) -> tuple[np.ndarray, np.ndarray]:
    """(owner, member) for every member of every radius group (owners included), from
    :func:`shuffle_lib.dsigma.groups_within_radius`."""
    groups = groups_within_radius(points, r)
    owners = np.repeat(np.arange(len(groups)), [g.size for g in groups])
    return owners, np.concatenate(groups)


def attack_neighbours(t: ArrayLike, r: float, k: int = 25, t_p: ArrayLike | None = None,
                      rng: RngLike = None, categorical: bool = False) -> np.ndarray:
    r"""For every person, the ``k`` *other* people within distance ``r`` of their public ``t``
    who are most similar in the privileged ``t_p`` (random ones when ``t_p`` is None): the
    attacker's sources (Meehan et al. 2022, Section 5). Similarity is
    :math:`|t^P_i - t^P_j|` for an ordered ``t_p`` and equality for a ``categorical`` one (category
    codes, such as Adult's marital status: people with the same status first, then the others);
    ties are broken at random with ``rng``. Returns an ``(n, k)`` index array padded with -1 where
    fewer than ``k`` people are close enough. Vectorized over people (padded candidate lists), no
    distance matrix.

    >>> attack_neighbours([0.0, 1.0, 5.0], r=2.0, k=2).tolist()
    [[1, -1], [0, -1], [-1, -1]]
    >>> attack_neighbours([0.0] * 4, r=0.0, k=1, t_p=[0, 5, 0, 5], categorical=True).tolist()
    [[2], [3], [0], [1]]
    """
    points = _as_2d(t)
    n = points.shape[0]
    size = check_integer(k, "k", 1)
    if not np.isfinite(r) or r < 0:
        raise ValueError(f"r must be a finite number >= 0, got {r!r}")
    owners, others = _neighbour_pairs(points, r)
    others_only = owners != others
    owners, others = owners[others_only], others[others_only]
    noise = as_rng(rng).random(owners.size)
    if t_p is None:
        order = np.argsort(2 * owners + noise)  # by owner, then at random
    else:
        side = np.asarray(t_p, dtype=float)
        if side.shape != (n,) or not np.isfinite(side).all():
            raise ValueError(f"t_p must hold one finite value per person, got {side.shape}")
        if categorical:  # by owner, equal status first, then at random: one sort of 2n classes
            order = np.argsort(2 * owners + (side[owners] != side[others]) + noise)
        else:  # by owner, then most similar first, ties at random
            order = np.lexsort((np.abs(side[owners] - side[others]) + 1e-9 * noise, owners))
    owners, others = owners[order], others[order]
    starts = np.searchsorted(owners, np.arange(n))
    rank = np.arange(owners.size) - starts[owners]
    keep = rank < size
    out = np.full((n, size), -1, dtype=np.int64)
    out[owners[keep], rank[keep]] = others[keep]
    return out


def majority_vote(released: ArrayLike, neighbours: np.ndarray, n_categories: int) -> np.ndarray:
    """The most frequent value among each person's sources in the released sequence (ties go to
    the smallest value; a person without sources gets -1). ``released`` may carry leading
    dimensions (several resamples); the vote is taken along the last one."""
    z = np.asarray(released)
    counts = np.zeros((*z.shape[:-1], neighbours.shape[0], n_categories), dtype=np.int32)
    valid = neighbours >= 0
    for c in range(n_categories):  # a loop over categories, vectorized over people and sources
        counts[..., c] = np.sum((z[..., np.where(valid, neighbours, 0)] == c) & valid, axis=-1)
    guess = np.argmax(counts, axis=-1)
    return np.where(valid.any(axis=1), guess, -1)


def vulnerable(x: ArrayLike, neighbours: np.ndarray, order: ArrayLike, eps: float,
               n_categories: int, resamples: int = 50, threshold: float = 0.9,
               rng: RngLike = None) -> np.ndarray:
    r"""Who is vulnerable: a boolean per person, true when the majority-vote attack recovers their
    value in at least ``threshold`` of ``resamples`` fresh draws of the k-ary randomized-response
    reports, all released in the same ``order`` (Meehan et al. 2022, Section 5: 50 resamples,
    90%). :func:`vulnerability_rate` is its mean; the per-person answer lets a chapter split
    :math:`\rho` by the value people hold. A vote over reports in random order mostly names the
    most common value, so a rarer value is recovered mainly through the order; mainly, not only:
    the sources a person is given can happen to hold a local majority of it.

    >>> x = np.array([0] * 28 + [1] * 2)
    >>> sources = attack_neighbours(np.arange(30.0), r=30.0, k=29, rng=0)
    >>> int(vulnerable(x, sources, np.arange(30), eps=50.0, n_categories=2, rng=0).sum())
    28
    """
    values = np.asarray(x)
    o = check_permutation(order, "order")
    if values.shape != o.shape or neighbours.shape[0] != o.size:
        raise ValueError("x, order and neighbours must describe the same people")
    if not 0 < threshold <= 1:
        raise ValueError(f"threshold must be in (0, 1], got {threshold!r}")
    draws = check_integer(resamples, "resamples", 1)
    gen = as_rng(rng)
    reports = k_randomized_response(np.broadcast_to(values, (draws, o.size)), n_categories,
                                    check_epsilon(eps, positive=True), rng=gen)
    guesses = majority_vote(reports[:, o], neighbours, n_categories)
    return np.mean(guesses == values, axis=0) >= threshold


def vulnerability_rate(x: ArrayLike, neighbours: np.ndarray, order: ArrayLike, eps: float,
                       n_categories: int, resamples: int = 50, threshold: float = 0.9,
                       rng: RngLike = None) -> float:
    r""":math:`\rho`: the fraction of people whose value the majority-vote attack recovers in at
    least ``threshold`` of ``resamples`` fresh draws of the k-ary randomized-response reports, all
    released in the same ``order`` (Meehan et al. 2022, Section 5: 50 resamples, 90%); the mean of
    :func:`vulnerable`.

    >>> x = np.zeros(30, dtype=int)
    >>> sources = attack_neighbours(np.arange(30.0), r=3.0, k=5)
    >>> vulnerability_rate(x, sources, np.arange(30), eps=50.0, n_categories=2, rng=0)
    1.0
    """
    return float(np.mean(vulnerable(x, neighbours, order, eps, n_categories, resamples,
                                    threshold, rng)))


def _calibrated_model(rng: np.random.Generator):
    from sklearn.calibration import CalibratedClassifierCV
    from sklearn.ensemble import HistGradientBoostingClassifier

    booster = HistGradientBoostingClassifier(max_iter=30, learning_rate=0.2,
                                             random_state=int(rng.integers(2**31)))
    return CalibratedClassifierCV(booster, method="sigmoid", cv=2)  # Platt scaling


def predicted_distributions(t: ArrayLike, z: ArrayLike, n_categories: int,
                            eps: float | None = None, rng: RngLike = None,
                            at: ArrayLike | None = None) -> np.ndarray:
    r"""A gradient-boosted classifier calibrated with Platt scaling, trained to predict the
    released value at position ``j`` from ``t_j``; its class probabilities at every ``t_i``, or
    at the points ``at`` (Meehan et al. 2022, Section 5, Cal). With ``eps`` given, the k-ary
    randomized-response channel is inverted (and the result clipped and renormalized), so the
    prediction is for the true values rather than the noisy ones.

    The trees are grown on one thread: with a few thousand people each split is too small for
    OpenMP threads to pay, and one thread gives the same probabilities in a half to two thirds of
    the time (less still on a loaded machine, where waiting threads spin)."""
    from threadpoolctl import threadpool_limits

    points = _as_2d(t)
    query = points if at is None else _as_2d(at)
    if query.shape[1] != points.shape[1]:
        raise ValueError(f"at must have {points.shape[1]} columns like t, got {query.shape[1]}")
    released = np.asarray(z)
    probs = np.zeros((query.shape[0], n_categories))
    with threadpool_limits(limits=1, user_api="openmp"):
        model = _calibrated_model(as_rng(rng)).fit(points, released)
        probs[:, model.classes_] = model.predict_proba(query)
    if eps is not None:
        probs = np.clip(probs @ np.linalg.inv(krr_channel(n_categories, float(eps))), 0, None)
        probs /= probs.sum(axis=1, keepdims=True)
    return probs


def granularity_accuracy(probs: ArrayLike, x: ArrayLike, block: int) -> float:
    """Accuracy of the most likely coarse class when labels are merged in consecutive blocks of
    ``block`` (label ``c`` becomes ``c // block``): the probabilities of each block are added
    first. For the synthetic set, blocks 1, 2 and 4 are the 8-, 4- and 2-way tasks of
    Figure 5 of Meehan et al. (2022).

    >>> granularity_accuracy([[0.3, 0.3, 0.4, 0.0]], [0], 2)
    1.0
    """
    p = np.asarray(probs, dtype=float)
    values = np.asarray(x)
    size = check_integer(block, "block", 1)
    if p.ndim != 2 or p.shape[1] % size or values.shape != (p.shape[0],):
        raise ValueError(f"probs must be (n, k) with k a multiple of block = {size}, and x (n,)")
    merged = p.reshape(p.shape[0], -1, size).sum(axis=2)
    return float(np.mean(merged.argmax(axis=1) == values // size))


def local_distributions(t: ArrayLike, x: ArrayLike, r: float, n_categories: int) -> np.ndarray:
    r"""Empirical distribution of the true values among everybody within ``r`` of each ``t_i``,
    themselves included (the ground truth :math:`E(t_i)` of Meehan et al. 2022, Section 5). In one
    dimension the counts come from cumulative sums over the sorted distinct positions, so a large
    population with many ties (Adult's ages) needs no list of close pairs; otherwise from the
    radius groups. The window is exactly the people with ``abs(t_j - t_i) <= r`` evaluated in
    floating point: the binary search on :math:`t_i \pm r` only proposes its ends, which are then
    moved until that test holds inside and fails just outside (``0.30000000000000004 - 0.1 <= 0.2``
    is false, although ``0.1 + 0.2`` is that very number).

    >>> local_distributions([0.0, 1.0, 5.0], [0, 1, 1], 1.0, 2).tolist()
    [[0.5, 0.5], [0.5, 0.5], [0.0, 1.0]]
    >>> local_distributions([0.1, 0.30000000000000004], [0, 1], 0.2, 2).tolist()
    [[1.0, 0.0], [0.0, 1.0]]
    """
    values = np.asarray(x)
    points = _as_2d(t)
    size = check_integer(n_categories, "n_categories", 1)
    if values.shape != (points.shape[0],) or values.min() < 0 or values.max() >= size:
        raise ValueError(f"x must hold one value in 0..{size - 1} per person, got {values.shape}")
    if not np.isfinite(r) or r < 0:
        raise ValueError(f"r must be a finite number >= 0, got {r!r}")
    if points.shape[1] == 1:
        position = points[:, 0]
        distinct, where = np.unique(position, return_inverse=True)
        cumulative = np.zeros((distinct.size + 1, size))
        np.add.at(cumulative, (where + 1, values), 1.0)
        cumulative = np.cumsum(cumulative, axis=0)
        low, high = _exact_window(distinct, position, float(r))
        counts = cumulative[high] - cumulative[low]
    else:
        owners, members = _neighbour_pairs(points, r)
        counts = np.zeros((values.size, size))
        np.add.at(counts, (owners, values[members]), 1.0)
    return counts / counts.sum(axis=1, keepdims=True)


def _exact_window(distinct: np.ndarray, position: np.ndarray, r: float
                  ) -> tuple[np.ndarray, np.ndarray]:
    """For each position, the slice ``low:high`` of the sorted ``distinct`` values with
    ``abs(value - position) <= r`` in floating point. The test is monotone along the sorted values
    on each side of the position (rounding is monotone), so the slice is contiguous and holds the
    position itself; a binary search on ``position -+ r`` lands within a few values of its ends,
    and the ends are moved one value at a time until the test decides them."""
    last = distinct.size - 1

    def close(index: np.ndarray) -> np.ndarray:
        return np.abs(distinct[np.clip(index, 0, last)] - position) <= r

    low = np.searchsorted(distinct, position - r, side="left")
    high = np.searchsorted(distinct, position + r, side="right")
    while True:
        grow_low = (low > 0) & close(low - 1)
        low = low - grow_low
        shrink_low = ~grow_low & ~close(low)  # never past the position itself, which is close
        low = low + shrink_low
        grow_high = (high <= last) & close(high)
        high = high + grow_high
        shrink_high = ~grow_high & ~close(high - 1)
        high = high - shrink_high
        if not (grow_low.any() or shrink_low.any() or grow_high.any() or shrink_high.any()):
            return low, high


def learnability_error(t: ArrayLike, z: ArrayLike, x: ArrayLike, r: float, n_categories: int,
                       eps: float | None = None, rng: RngLike = None) -> float:
    r""":math:`\lambda(r)`: the mean total-variation distance between the calibrated model's
    prediction (:func:`predicted_distributions`) and the local truth within ``r``
    (:func:`local_distributions`), divided by the same error of the uniform guess (Meehan et al.
    2022, Section 5). 0 is perfect; 1 is no better than knowing nothing.

    >>> t = np.repeat([0.0, 10.0], 100); x = np.repeat([0, 1], 100)
    >>> bool(learnability_error(t, x, x, 1.0, 2, rng=0) < 0.1)
    True
    """
    truth = local_distributions(t, x, r, n_categories)
    return relative_tv_error(predicted_distributions(t, z, n_categories, eps, rng), truth)


def relative_tv_error(predicted: ArrayLike, truth: ArrayLike) -> float:
    r"""Mean total variation between rows of ``predicted`` and ``truth``, divided by the mean
    total variation between ``truth`` and the uniform distribution: the normalization of
    :math:`\lambda` (Meehan et al. 2022, Section 5), for predictions made once and scored at several
    radii.

    >>> relative_tv_error([[0.5, 0.5]], [[1.0, 0.0]])
    1.0
    """
    p, q = np.asarray(predicted, dtype=float), np.asarray(truth, dtype=float)
    if p.shape != q.shape or p.ndim != 2:
        raise ValueError(f"predicted and truth must be equal (n, k) arrays, got {p.shape}, "
                         f"{q.shape}")
    uniform_error = 0.5 * np.abs(q - 1 / q.shape[1]).sum(axis=1).mean()
    if uniform_error == 0:
        raise ValueError("the truth is uniform everywhere, so lambda is undefined")
    return float(0.5 * np.abs(q - p).sum(axis=1).mean() / uniform_error)


def knn_reconstruction(t: ArrayLike, z: ArrayLike, n_neighbors: int = 15) -> np.ndarray:
    """The classifier attack of Meehan et al.'s Figure 1 (there a Gaussian process; here k-nearest
    neighbours): predict each person's value from the released values at the positions nearest to
    them in public space."""
    from sklearn.neighbors import KNeighborsClassifier

    points = _as_2d(t)
    model = KNeighborsClassifier(n_neighbors=check_integer(n_neighbors, "n_neighbors", 1))
    return model.fit(points, np.asarray(z)).predict(points)
