r"""Inference attacks and learnability on shuffled LDP data (Meehan et al. 2022, Section 5).

Reports are released in some order ``o`` (``z = y[o]``): the identity for plain LDP, a uniform
permutation for the shuffle model, or a draw of :class:`shuffle_lib.dsigma.DSigmaMechanism`.
The attacker reads position ``j`` of ``z`` as person ``j``'s report, which is what the order
invites them to do.

Limits (each raises ``ValueError`` beyond it): public positions ``t`` have coordinates of absolute
value at most ``1e150`` (squared distances must stay finite), ``n_categories`` is at most
``MAX_CATEGORIES`` (1000), and no call builds a table (neighbour lists, vote counts, class
probabilities) of more than ``MAX_TABLE_ENTRIES`` (``10**7``) entries, so that every call
answers within seconds (at ``10**8`` the neighbour lists, local distributions and vote counts
took 15 to 50 s of CPU; the paper-scale cells of the book build at most ``8 * 10**6``).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike
from scipy.spatial import cKDTree

from shuffle_lib._validation import (
    RngLike,
    as_rng,
    check_array,
    check_bool,
    check_epsilon,
    check_integer,
    check_points,
    check_real,
)
from shuffle_lib.dsigma import (
    MAX_NEAREST,
    _first_per_owner,
    _nearest_rows,
    groups_within_radius,
)
from shuffle_lib.permutations import check_permutation
from shuffle_lib.randomizers import k_randomized_response, krr_channel

MAX_CATEGORIES = 1000
"""Largest ``n_categories`` accepted (the k x k randomized-response channel is inverted)."""

MAX_TABLE_ENTRIES = 10**7
"""Largest table (neighbour lists, vote counts, class probabilities) a call builds: 80 MB, a few
seconds of work (issue 32: 10**8 took up to 50 s of CPU)."""

MAX_MODEL_CATEGORIES = 16
"""Largest ``n_categories`` of the calibrated model (:func:`predicted_distributions`): it fits
one set of trees per class, about 0.15 s of CPU each (1000 classes took minutes)."""

MAX_MODEL_ENTRIES = 5 * 10**5
"""Largest (training rows + query rows) x ``n_categories`` of the calibrated model: a few seconds
of CPU at the limit (the book's paper-scale cells use 40,000 rows x 8 categories)."""

_MAX_COORDINATE = 1e150
"""Largest absolute coordinate of a public position: squared distances must stay finite."""

_MIN_INVERTIBLE_EPS = 1e-9
"""Smallest ``eps`` whose randomized-response channel is inverted: below it, rounding errors in
the inverse swamp the prediction (and at about 1e-16 the channel is singular in floating point)."""


def _check_n_categories(n_categories: int, rows: int, minimum: int = 1,
                        rows_label: str = "people") -> int:
    """``n_categories`` as an int in [minimum, MAX_CATEGORIES], with a table of ``rows`` x
    ``n_categories`` entries within ``MAX_TABLE_ENTRIES``."""
    size = check_integer(n_categories, "n_categories", minimum, MAX_CATEGORIES)
    if rows * size > MAX_TABLE_ENTRIES:
        raise ValueError(f"{rows_label} x n_categories = {rows} x {size} entries exceed the "
                         f"documented limit of {MAX_TABLE_ENTRIES}")
    return size


def _check_model_size(train: int, query: int, n_categories: int) -> None:
    """Refuse a calibrated model past ``MAX_MODEL_CATEGORIES`` classes or ``MAX_MODEL_ENTRIES``
    (``train`` + ``query``) x ``n_categories`` entries, before any work."""
    if isinstance(n_categories, int | np.integer) and n_categories > MAX_MODEL_CATEGORIES:
        raise ValueError(f"n_categories = {n_categories} is above the calibrated model's "
                         f"documented limit of {MAX_MODEL_CATEGORIES} classes")
    if isinstance(n_categories, int | np.integer) and (train + query) * n_categories > \
            MAX_MODEL_ENTRIES:
        raise ValueError(f"the calibrated model would see ({train} + {query}) rows x "
                         f"{n_categories} categories, above the documented limit of "
                         f"{MAX_MODEL_ENTRIES}")


def _check_labels(values: ArrayLike, name: str, n_categories: int, n: int | None = None,
                  bound: str = "n_categories") -> np.ndarray:
    """Integer labels in ``0..n_categories-1`` (1-D, ``n`` of them when given; any leading axes
    when ``n`` is None)."""
    arr = check_array(values, name, ndim=1 if n is not None else None, integer=True, low=0)
    if arr.ndim < 1:
        raise ValueError(f"{name} must be an array of labels, got a scalar {values!r}")
    if arr.max() >= n_categories:
        raise ValueError(f"{name} must hold values in 0..{bound} - 1 = {n_categories - 1}, got "
                         f"{arr.max()}")
    if n is not None and arr.size != n:
        raise ValueError(f"{name} must hold one value per person ({n}), got {arr.size}")
    return arr


def _check_neighbours(neighbours: ArrayLike, positions: int) -> np.ndarray:
    """An ``(n, k)`` array of source positions in ``0..positions-1``, -1 for padding."""
    return check_array(neighbours, "neighbours", ndim=2, integer=True, low=-1, high=positions - 1)


def _neighbour_pairs(points: np.ndarray, r: float) -> tuple[np.ndarray, np.ndarray]:
    """(owner, member) for every member of every radius group (owners included), from
    :func:`shuffle_lib.dsigma.groups_within_radius`. The pairs are counted first, on the distinct
    positions weighted by how many people share each (no pair is listed), and more than
    ``MAX_TABLE_ENTRIES`` raise ``ValueError``: with heavy ties (many people at one position) the
    pairs grow as the square of the people."""
    distinct, counts = np.unique(points, axis=0, return_counts=True)
    tree = cKDTree(distinct)
    weights = counts.astype(float)
    pairs = float(tree.count_neighbors(tree, r, weights=(weights, weights)))
    if pairs > MAX_TABLE_ENTRIES:
        raise ValueError(f"the groups within r = {r!r} of the public positions hold about "
                         f"{pairs:.4g} (owner, member) pairs, above the documented limit of "
                         f"{MAX_TABLE_ENTRIES} (many people share a position or r is large)")
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
    distance matrix. Limits: ``|t| <= 1e150`` and ``n * k <= MAX_TABLE_ENTRIES``.

    >>> attack_neighbours([0.0, 1.0, 5.0], r=2.0, k=2).tolist()
    [[1, -1], [0, -1], [-1, -1]]
    >>> attack_neighbours([0.0] * 4, r=0.0, k=1, t_p=[0, 5, 0, 5], categorical=True).tolist()
    [[2], [3], [0], [1]]
    """
    points = check_points(t, "t", _MAX_COORDINATE, min_rows=2)
    n = points.shape[0]
    size = check_integer(k, "k", 1)
    if n * size > MAX_TABLE_ENTRIES:
        raise ValueError(f"the output has n x k = {n} x {size} entries, above the documented "
                         f"limit of {MAX_TABLE_ENTRIES}")
    radius = check_real(r, "r", low=0)
    by_category = check_bool(categorical, "categorical")
    side = None if t_p is None else check_array(t_p, "t_p")
    if side is not None and side.shape != (n,):
        raise ValueError(f"t_p must hold one finite value per person, got {side.shape}")
    gen = as_rng(rng)
    owners, others = _neighbour_pairs(points, radius)
    others_only = owners != others
    owners, others = owners[others_only], others[others_only]
    noise = gen.random(owners.size)
    if side is None:
        order = np.argsort(2 * owners + noise)  # by owner, then at random
    else:
        if by_category:  # by owner, equal status first, then at random: one sort of 2n classes
            order = np.argsort(2 * owners + (side[owners] != side[others]) + noise)
        else:  # by owner, then most similar first, ties at random
            order = np.lexsort((np.abs(side[owners] - side[others]) + 1e-9 * noise, owners))
    return _first_per_owner(owners[order], others[order], n, size)


def majority_vote(released: ArrayLike, neighbours: np.ndarray, n_categories: int) -> np.ndarray:
    """The most frequent value among each person's sources in the released sequence (ties go to
    the smallest value; a person without sources gets -1), the vote of Meehan et al. (2022,
    Section 5). ``released`` holds values in ``0..n_categories-1`` and may carry leading
    dimensions (several resamples); the vote is taken along the last one. ``neighbours`` is the
    ``(people, k)`` output of :func:`attack_neighbours`: positions in ``released``, -1 for none.
    Limit: leading size x people x ``n_categories`` at most ``MAX_TABLE_ENTRIES`` vote counts.

    With at most ``SPARSE_VOTE_CATEGORIES`` categories the counts are sparse matrix products
    (people x positions, one per category) rather than a gather of every source's report: the
    same counts, several times faster for Adult's 8,000 people (a gather of ten million reports
    does not fit in cache); with more categories one product per category would cost more than
    the gather.

    >>> majority_vote([0, 1, 1], [[1, 2], [0, 2], [-1, -1]], 2).tolist()
    [1, 0, -1]
    """
    z = check_array(released, "released", integer=True, low=0)
    if z.ndim < 1:
        raise ValueError(f"released must be an array of reports, got a scalar {released!r}")
    sources = _check_neighbours(neighbours, z.shape[-1])
    draws = int(np.prod(z.shape[:-1]))
    voters = draws * sources.shape[0]
    size = _check_n_categories(n_categories, voters, rows_label="released resamples x people")
    _check_labels(z, "released", size)
    valid = sources >= 0
    if size <= SPARSE_VOTE_CATEGORIES:
        counts = _sparse_vote_counts(z.reshape(draws, z.shape[-1]), sources, valid, size)
        guess = np.argmax(counts, axis=-1).reshape(*z.shape[:-1], sources.shape[0])
        return np.where(valid.any(axis=1), guess, -1)
    picked = z[..., np.where(valid, sources, 0)]  # (..., people, k): each source's report
    slot = np.arange(voters).reshape(picked.shape[:-1])[..., None] * size + picked
    counts = np.bincount(slot[np.broadcast_to(valid, picked.shape)], minlength=voters * size)
    guess = np.argmax(counts.reshape(*picked.shape[:-1], size), axis=-1)
    return np.where(valid.any(axis=1), guess, -1)


SPARSE_VOTE_CATEGORIES = 16
"""Up to this many categories :func:`majority_vote` counts votes by sparse matrix products."""


def _sparse_vote_counts(z: np.ndarray, sources: np.ndarray, valid: np.ndarray,
                        size: int) -> np.ndarray:
    """Vote counts ``(draws, people, size)`` for reports ``z`` of shape ``(draws, positions)``:
    for each category, the people x positions matrix of how often each position is a person's
    source, times the indicator of that category. Counts are whole numbers far below 2**53, so
    the floating-point products are exact."""
    from scipy.sparse import csr_array

    people = sources.shape[0]
    owners = np.broadcast_to(np.arange(people)[:, None], sources.shape)[valid]
    weights = csr_array((np.ones(owners.size), (owners, sources[valid])),
                        shape=(people, z.shape[1]))
    counts = np.empty((z.shape[0], people, size))
    for category in range(size):
        counts[:, :, category] = (weights @ (z == category).T.astype(float)).T
    return counts


def vulnerable(x: ArrayLike, neighbours: np.ndarray, order: ArrayLike, eps: float,
               n_categories: int, resamples: int = 50, threshold: float = 0.9,
               rng: RngLike = None) -> np.ndarray:
    r"""Who is vulnerable: a boolean per person, true when the majority-vote attack recovers their
    value in at least ``threshold`` of ``resamples`` fresh draws of the k-ary randomized-response
    reports, all released in the same ``order`` (Meehan et al. 2022, Section 5: 50 resamples,
    90%). :func:`vulnerability_rate` is its mean; the per-person answer lets a chapter split
    :math:`\rho` by the value people hold. A vote over reports in random order mostly names the
    most common value, so a rarer value is recovered mainly through the order; mainly, not only:
    the sources a person is given can happen to hold a local majority of it. Limit:
    ``resamples * n * n_categories <= MAX_TABLE_ENTRIES`` (the vote counts).

    >>> x = np.array([0] * 28 + [1] * 2)
    >>> sources = attack_neighbours(np.arange(30.0), r=30.0, k=29, rng=0)
    >>> int(vulnerable(x, sources, np.arange(30), eps=50.0, n_categories=2, rng=0).sum())
    28
    """
    o = check_permutation(order, "order")
    draws = check_integer(resamples, "resamples", 1)
    size = _check_n_categories(n_categories, draws * o.size, minimum=2,
                               rows_label="resamples x people")
    values = _check_labels(x, "x", size)
    sources = _check_neighbours(neighbours, o.size)
    if values.shape != o.shape or sources.shape[0] != o.size:
        raise ValueError("x, order and neighbours must describe the same people")
    level = check_real(threshold, "threshold", low=0, high=1, low_open=True)
    eps_value = check_epsilon(eps, positive=True)
    gen = as_rng(rng)
    reports = k_randomized_response(np.broadcast_to(values, (draws, o.size)), size, eps_value,
                                    rng=gen)
    guesses = majority_vote(reports[:, o], sources, size)
    return np.mean(guesses == values, axis=0) >= level


def vulnerability_rate(x: ArrayLike, neighbours: np.ndarray, order: ArrayLike, eps: float,
                       n_categories: int, resamples: int = 50, threshold: float = 0.9,
                       rng: RngLike = None) -> float:
    r""":math:`\rho`: the fraction of people whose value the majority-vote attack recovers in at
    least ``threshold`` of ``resamples`` fresh draws of the k-ary randomized-response reports, all
    released in the same ``order`` (Meehan et al. 2022, Section 5: 50 resamples, 90%); the mean of
    :func:`vulnerable` (same arguments, same limits).

    >>> x = np.zeros(30, dtype=int)
    >>> sources = attack_neighbours(np.arange(30.0), r=3.0, k=5)
    >>> vulnerability_rate(x, sources, np.arange(30), eps=50.0, n_categories=2, rng=0)
    1.0
    """
    return float(np.mean(vulnerable(x, neighbours, order, eps, n_categories, resamples,
                                    threshold, rng)))


_ONE_THREAD = None
"""The ThreadpoolController of :func:`_one_thread`, built at its first call."""


def _one_thread():
    """A context holding every OpenMP and BLAS thread pool loaded so far at one thread. The
    controller is built once, after scikit-learn and SciPy are loaded (scanning the loaded
    libraries costs about 2 ms a call)."""
    global _ONE_THREAD
    if _ONE_THREAD is None:
        from threadpoolctl import ThreadpoolController

        _ONE_THREAD = ThreadpoolController()
    return _ONE_THREAD.limit(limits=1)


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

    ``z`` holds one value in ``0..n_categories-1`` per person, each value that occurs at least
    twice (the Platt scaling is fitted by 2-fold cross-validation). Limits: ``eps >= 1e-9`` (below
    it the channel is numerically singular), ``n_categories <= MAX_MODEL_CATEGORIES`` (16: one set
    of trees per class) and ``(len(t) + len(at)) * n_categories <= MAX_MODEL_ENTRIES``
    (``5 * 10**5``), both checked before any work; ``at`` defaults to ``t``.

    The model is fitted on one thread, OpenMP and BLAS alike: with a few thousand people each
    split of the trees, and each step of the Platt scaling's L-BFGS-B, is too small for threads to
    pay. One thread gives the same probabilities; on two cores, holding BLAS at one thread as
    well as OpenMP cuts a fit's CPU time to between a third and three quarters (less still on a
    loaded machine, where waiting threads spin). The model is evaluated once per distinct point
    of ``at`` (Adult's ages repeat), which gives the same probabilities as every row.

    >>> t = np.repeat([0.0, 10.0], 50); z = np.repeat([0, 1], 50)
    >>> predicted_distributions(t, z, 2, eps=2.0, rng=0)[[0, -1]].round(3).tolist()
    [[1.0, 0.0], [0.0, 1.0]]
    """
    points = check_points(t, "t", _MAX_COORDINATE, min_rows=2)
    query = points if at is None else check_points(at, "at", _MAX_COORDINATE)
    if query.shape[1] != points.shape[1]:
        raise ValueError(f"at must have {points.shape[1]} columns like t, got {query.shape[1]}")
    _check_model_size(points.shape[0], query.shape[0], n_categories)
    size = _check_n_categories(n_categories, query.shape[0], minimum=1 if eps is None else 2,
                               rows_label="points")
    released = _check_labels(z, "z", size, points.shape[0])
    values, counts = np.unique(released, return_counts=True)
    if counts.min() < 2:
        raise ValueError(f"z must hold each of its values at least twice (2-fold calibration), "
                         f"value {values[counts.argmin()]} occurs once")
    eps_value = None if eps is None else check_real(eps, "eps", low=_MIN_INVERTIBLE_EPS)
    gen = as_rng(rng)
    distinct, where = np.unique(query, axis=0, return_inverse=True)
    probs = np.zeros((query.shape[0], size))
    model = _calibrated_model(gen)
    with _one_thread():
        model.fit(points, released)
        probs[:, model.classes_] = model.predict_proba(distinct)[where.reshape(-1)]
    if eps_value is not None:
        probs = np.clip(probs @ np.linalg.inv(krr_channel(size, eps_value)), 0, None)
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
    p = check_array(probs, "probs", ndim=2, low=0)
    size = check_integer(block, "block", 1)
    if p.shape[1] % size:
        raise ValueError(f"probs must be (n, k) with k a multiple of block = {size}, got shape "
                         f"{p.shape}")
    values = _check_labels(x, "x", p.shape[1], p.shape[0], bound="the number of columns of probs")
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
    is false, although ``0.1 + 0.2`` is that very number). Limits: ``|t| <= 1e150`` and
    ``n * n_categories <= MAX_TABLE_ENTRIES``.

    >>> local_distributions([0.0, 1.0, 5.0], [0, 1, 1], 1.0, 2).tolist()
    [[0.5, 0.5], [0.5, 0.5], [0.0, 1.0]]
    >>> local_distributions([0.1, 0.30000000000000004], [0, 1], 0.2, 2).tolist()
    [[1.0, 0.0], [0.0, 1.0]]
    """
    points = check_points(t, "t", _MAX_COORDINATE, min_rows=2)
    size = _check_n_categories(n_categories, points.shape[0])
    values = _check_labels(x, "x", size, points.shape[0])
    r = check_real(r, "r", low=0)
    if points.shape[1] == 1:
        position = points[:, 0]
        distinct, where = np.unique(position, return_inverse=True)
        cumulative = np.zeros((distinct.size + 1, size))
        np.add.at(cumulative, (where + 1, values), 1.0)
        cumulative = np.cumsum(cumulative, axis=0)
        low, high = _exact_window(distinct, position, r)
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
    2022, Section 5). 0 is perfect; 1 is no better than knowing nothing. The arguments and limits
    are those of the two functions (the model's, ``MAX_MODEL_CATEGORIES`` classes and
    ``2 * len(t) * n_categories <= MAX_MODEL_ENTRIES``, checked before any work).

    >>> t = np.repeat([0.0, 10.0], 100); x = np.repeat([0, 1], 100)
    >>> bool(learnability_error(t, x, x, 1.0, 2, rng=0) < 0.1)
    True
    """
    try:  # the model's size first; the arguments themselves are checked by the two functions
        rows = int(np.shape(t)[0])
    except (ValueError, IndexError, TypeError):
        rows = 0
    _check_model_size(rows, rows, n_categories)
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
    p = check_array(predicted, "predicted", ndim=2, low=0, high=1)
    q = check_array(truth, "truth", ndim=2, low=0, high=1)
    if p.shape != q.shape:
        raise ValueError(f"predicted and truth must be equal (n, k) arrays, got {p.shape}, "
                         f"{q.shape}")
    uniform_error = 0.5 * np.abs(q - 1 / q.shape[1]).sum(axis=1).mean()
    if uniform_error == 0:
        raise ValueError("the truth is uniform everywhere, so lambda is undefined")
    return float(0.5 * np.abs(q - p).sum(axis=1).mean() / uniform_error)


def knn_reconstruction(t: ArrayLike, z: ArrayLike, n_neighbors: int = 15) -> np.ndarray:
    """The classifier attack of Meehan et al.'s Figure 1 (there a Gaussian process; here k-nearest
    neighbours): predict each person's value from the released values ``z`` (one integer label
    per position) at the ``n_neighbors`` positions nearest to them in public space, themselves
    included, by majority (a tie goes to the smallest value). The neighbours are those of
    :func:`shuffle_lib.dsigma.groups_nearest` (people who share a public position are queried
    once, so a population with heavy ties, such as integer ages, costs :math:`O(nk)`, not the
    :math:`O(n^2)` of a KD-tree over repeated points); without ties this is scikit-learn's
    ``KNeighborsClassifier``. Limits: ``n_neighbors`` at most the number of people,
    ``n * n_neighbors`` at most ``MAX_NEAREST`` (``4 * 10**6``, as for
    :func:`~shuffle_lib.dsigma.groups_nearest`) and ``|t| <= 1e150``.

    >>> knn_reconstruction([0.0, 0.1, 0.2, 5.0, 5.1, 5.2], [0, 0, 1, 1, 1, 0], 3).tolist()
    [0, 0, 0, 1, 1, 1]
    """
    size = check_integer(n_neighbors, "n_neighbors", 1)
    if isinstance(t, np.ndarray) and t.ndim and len(t) * size > MAX_NEAREST:
        raise ValueError(f"n x n_neighbors = {len(t)} x {size} neighbours exceed the "
                         f"documented limit of {MAX_NEAREST}")  # from the shape alone
    points = check_points(t, "t", _MAX_COORDINATE, min_rows=2)
    released = check_array(z, "z", ndim=1, integer=True)
    if released.size != points.shape[0]:
        raise ValueError(f"z must hold one value per position ({points.shape[0]}), got "
                         f"{released.size}")
    size = check_integer(size, "n_neighbors", 1, points.shape[0])
    if points.shape[0] * size > MAX_NEAREST:
        raise ValueError(f"n x n_neighbors = {points.shape[0]} x {size} neighbours exceed the "
                         f"documented limit of {MAX_NEAREST}")
    voted = np.sort(released[_nearest_rows(points, size)], axis=1)  # (n, k) neighbours' values
    starts = np.ones(voted.shape, dtype=bool)  # where a run of equal values begins in a row
    starts[:, 1:] = voted[:, 1:] != voted[:, :-1]
    run = np.cumsum(starts.reshape(-1)) - 1
    length = np.where(starts, np.bincount(run)[run].reshape(voted.shape), 0)
    # the first longest run of a sorted row: the most frequent value, ties to the smallest
    return voted[np.arange(voted.shape[0]), np.argmax(length, axis=1)]
