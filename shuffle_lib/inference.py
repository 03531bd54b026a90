r"""Inferential privacy by exact enumeration: what a Bayesian adversary believes about one person
before and after a release (Meehan, Roy-Chowdhury, Chaudhuri & Jha 2022, Section 4.3 and
Appendices A.2, A.3, A.5, A.6).

Everything here enumerates, so it is for small instances (a few people, a few values), where it is
exact up to floating-point rounding and serves as the reference that the bounds of the paper are
checked against.

Conventions:

- A *dataset* is a sequence :math:`x\in\{0,\dots,k-1\}^n`; a *prior* is an array of shape
  ``(k,) * n`` whose entry ``prior[x]`` is the adversary's probability of ``x``.
- Datasets and report sequences are indexed in the lexicographic order of
  ``itertools.product(range(k), repeat=n)`` (see :func:`all_sequences`).
- A *release order* ``o`` publishes ``y[o]`` (as in :mod:`shuffle_lib.dsigma`); a law of release
  orders is a vector over all ``n!`` orders in the lexicographic order of
  ``itertools.permutations(range(n))`` (see :func:`all_orders`).
- A *channel* is a row-stochastic ``k x m`` matrix: ``channel[a, b]`` is the probability that a
  person holding ``a`` reports ``b``; people randomize independently.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
from numpy.typing import ArrayLike

from shuffle_lib._validation import (
    check_array,
    check_epsilon,
    check_instance,
    check_integer,
    check_real,
)
from shuffle_lib.dsigma import DSigmaMechanism

MAX_CELLS = 5_000_000
"""Largest number of (order, sequence) pairs that the enumerations here will build."""

_TOLERANCE = 1e-9
"""Tolerance on the sums of priors, channels and laws of release orders."""


# --------------------------------------------------------------------------- enumeration helpers


def _too_many(base: int, exponent: int) -> bool:
    """Whether ``base ** exponent`` exceeds ``MAX_CELLS``, without forming a huge power."""
    if base <= 1:
        return False
    return exponent * math.log(base) > math.log(MAX_CELLS) + 1 or base**exponent > MAX_CELLS


def all_sequences(n: int, k: int) -> np.ndarray:
    """Every sequence in :math:`\\{0,\\dots,k-1\\}^n`, one per row, in lexicographic order
    (at most ``MAX_CELLS`` sequences and ``MAX_CELLS`` values per sequence).

    >>> all_sequences(2, 2).tolist()
    [[0, 0], [0, 1], [1, 0], [1, 1]]
    """
    n_val = check_integer(n, "n", 1)
    k_val = check_integer(k, "k", 1)
    if n_val > MAX_CELLS or _too_many(k_val, n_val):
        raise ValueError(f"k^n = {k_val}^{n_val} sequences are too many to enumerate (limit "
                         f"MAX_CELLS = {MAX_CELLS}; k = {k_val}, n = {n_val})")
    if k_val == 1:
        return np.zeros((1, n_val), dtype=np.int64)
    index = np.arange(k_val**n_val, dtype=np.int64)  # row r is r written in base k
    out = np.empty((index.size, n_val), dtype=np.int64)
    for digit in range(n_val - 1, -1, -1):  # n <= 22 here: a loop over digits, not sequences
        index, out[:, digit] = np.divmod(index, k_val)
    return out


def all_orders(n: int) -> np.ndarray:
    """Every permutation of ``0..n-1``, one per row, in lexicographic order (``n <= 8``).

    >>> all_orders(3).tolist()
    [[0, 1, 2], [0, 2, 1], [1, 0, 2], [1, 2, 0], [2, 0, 1], [2, 1, 0]]
    """
    n_val = check_integer(n, "n", 1)
    if n_val > 8:
        raise ValueError(f"enumerating orders is for n <= 8, got n = {n_val}")
    return np.array(list(itertools.permutations(range(n_val))), dtype=np.int64)


def _sequence_index(sequences: np.ndarray, k: int) -> np.ndarray:
    """Row index of each sequence in :func:`all_sequences` (base-``k`` digits, first is most
    significant)."""
    n = sequences.shape[-1]
    weights = k ** np.arange(n - 1, -1, -1, dtype=np.int64)
    return sequences @ weights


def _check_prior(prior: ArrayLike) -> tuple[np.ndarray, int, int]:
    """Return the prior flattened in lexicographic order, with ``n`` and ``k``."""
    arr = check_array(prior, "prior")
    if arr.ndim < 1 or len(set(arr.shape)) != 1 or arr.shape[0] < 2:
        raise ValueError(f"prior must have shape (k,) * n with k >= 2, got shape {arr.shape}")
    if (arr < 0).any():
        raise ValueError("prior must hold finite non-negative probabilities")
    if abs(arr.sum() - 1.0) > _TOLERANCE:
        raise ValueError(f"prior must sum to 1, got {arr.sum()!r}")
    return arr.ravel(), arr.ndim, arr.shape[0]


def _check_stochastic(matrix: ArrayLike, name: str) -> np.ndarray:
    """A 2-D array with non-negative rows that sum to 1."""
    arr = check_array(matrix, name)
    if arr.ndim != 2:
        raise ValueError(f"{name} must be a non-empty 2-D array, got shape {arr.shape}")
    if (arr < 0).any():
        raise ValueError(f"{name} must hold finite non-negative probabilities")
    if np.abs(arr.sum(axis=1) - 1.0).max() > _TOLERANCE:
        raise ValueError(f"every row of {name} must sum to 1, got {arr.sum(axis=1)!r}")
    return arr


def _check_prior_and_likelihood(
    prior: ArrayLike, likelihood: ArrayLike
) -> tuple[np.ndarray, int, int, np.ndarray]:
    """A prior over the k^n datasets and a likelihood with one row per dataset."""
    flat, n, k = _check_prior(prior)
    lik = _check_stochastic(likelihood, "likelihood")
    if lik.shape[0] != flat.size:
        raise ValueError(f"likelihood needs {flat.size} rows (one per dataset), got {lik.shape[0]}")
    return flat, n, k, lik


def _check_order_probs(order_probs: ArrayLike, name: str = "order_probs"
                       ) -> tuple[np.ndarray, int]:
    """A law over the ``n!`` release orders; returns it with ``n``. More than ``8!`` entries are
    refused from the shape alone, before any copy."""
    if isinstance(order_probs, np.ndarray) and order_probs.size > math.factorial(8):
        raise ValueError(f"{name} must list n! probabilities (n <= 8), got {order_probs.shape}")
    probs = check_array(order_probs, name)
    n = next((m for m in range(1, 9) if math.factorial(m) == probs.size), None)
    if probs.ndim != 1 or n is None:
        raise ValueError(f"{name} must list n! probabilities (n <= 8), got {probs.shape}")
    if (probs < 0).any() or abs(probs.sum() - 1) > _TOLERANCE:
        raise ValueError(f"{name} must be finite, non-negative and sum to 1")
    return probs, n


def _check_person(person: int, n: int) -> int:
    i = check_integer(person, "person", 0)
    if i >= n:
        raise ValueError(f"person must lie in 0..{n - 1}, got {person}")
    return i


def _check_group(group: ArrayLike, n: int, person: int | None = None, name: str = "group"
                 ) -> np.ndarray:
    arr = check_array(group, name, integer=True)
    if arr.ndim > 1:
        raise ValueError(f"{name} must be a non-empty integer array, got shape {arr.shape}")
    members = np.unique(arr)
    if members[0] < 0 or members[-1] >= n:
        raise ValueError(f"{name} members must lie in 0..{n - 1}, got {group!r}")
    if person is not None and person not in members:
        raise ValueError(f"group {group!r} must contain person {person}")
    return members


def _log_ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    """log(num / den) elementwise, +-inf where exactly one side is 0, nan where both are."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.log(num) - np.log(den)


# --------------------------------------------------------------------------- priors


def household_prior(sizes: ArrayLike, prevalence: float, agreement: float) -> np.ndarray:
    r"""A prior over binary datasets in which people come in households (the contagious-disease
    example of Meehan et al. 2022, Section 1): households, listed in order with the given
    ``sizes``, are independent; each has a hidden status :math:`S\sim\text{Bernoulli}(p)`, and
    each member's value equals :math:`S` with probability ``agreement`` (:math:`a`),
    independently. So

    .. math:: P[x]=\prod_{\text{households }h}\;\sum_{s\in\{0,1\}}p^s(1-p)^{1-s}
              \prod_{j\in h}a^{[x_j=s]}(1-a)^{[x_j\ne s]}.

    ``agreement = 1`` makes household members identical; ``agreement = 1/2`` makes everybody
    independent. Returns an array of shape ``(2,) * sum(sizes)``, so ``sum(sizes)`` is at most 22
    (``2**22 <= MAX_CELLS``).

    >>> household_prior([2], 0.5, 1.0).tolist()       # twins: (0, 0) or (1, 1)
    [[0.5, 0.0], [0.0, 0.5]]
    """
    counts = check_array(sizes, "sizes", ndim=1, integer=True)
    if (counts < 1).any():
        raise ValueError(f"sizes must be a non-empty list of positive integers, got {sizes!r}")
    p = check_real(prevalence, "prevalence", low=0, high=1)
    a = check_real(agreement, "agreement", low=0, high=1)
    n = int(counts.sum())
    if _too_many(2, n):
        raise ValueError(f"sizes add up to {n} people: 2^{n} datasets are too many to enumerate "
                         f"(limit MAX_CELLS = {MAX_CELLS})")
    # households are independent, so the table is the outer product of one table per household
    # (first person most significant, as in all_sequences): O(2^n) work, no 2^n x n array
    out = np.ones(1)
    for size in counts:
        ones = np.zeros(1, dtype=np.int64)
        for _ in range(int(size)):  # ones in each member pattern of this household, in order
            ones = (ones[:, None] + np.arange(2, dtype=np.int64)).reshape(-1)
        table = (p * a**ones * (1 - a) ** (size - ones)
                 + (1 - p) * (1 - a) ** ones * a ** (size - ones))
        out = np.multiply.outer(out, table).reshape(-1)
    return out.reshape((2,) * n)


# --------------------------------------------------------------------------- likelihoods


def ldp_likelihood(channel: ArrayLike, n: int) -> np.ndarray:
    r"""The law of the report sequence given the dataset when each of ``n`` people passes their
    value through ``channel`` independently:
    :math:`P[y\mid x]=\prod_{j}Q(x_j, y_j)` (the local model of Meehan et al. 2022, Section 4.1).
    Returns a ``k^n x m^n`` matrix (rows: datasets, columns: report sequences), with at most
    ``MAX_CELLS`` entries and ``n <= 22``.

    >>> ldp_likelihood([[0.75, 0.25], [0.25, 0.75]], 1).tolist()
    [[0.75, 0.25], [0.25, 0.75]]
    """
    q = _check_stochastic(channel, "channel")
    n_val = check_integer(n, "n", 1, 22)  # a 2 x 1 channel already reaches MAX_CELLS at n = 23
    k, m = q.shape
    if _too_many(k * m, n_val):
        raise ValueError(f"a {k}^{n_val} x {m}^{n_val} likelihood (channel {k} x {m}, n = {n_val}) "
                         f"is too large to enumerate (limit MAX_CELLS = {MAX_CELLS})")
    out = np.ones((1, 1))
    for _ in range(n_val):
        out = np.kron(out, q)  # first person is the most significant digit, as in all_sequences
    return out


def release_order_probabilities(mechanism: DSigmaMechanism) -> np.ndarray:
    r"""The law of the release order of a d_sigma mechanism (Meehan et al. 2022, Algorithm 1) over
    the ``n!`` orders of :func:`all_orders`: :math:`P(o)=e^{-\theta d(o\sigma_0,\sigma_0)}/\psi`,
    read from :meth:`~shuffle_lib.dsigma.DSigmaMechanism.permutation_log_prob`.

    >>> mech = DSigmaMechanism([[0, 1], [1, 0]], alpha=math.log(3))
    >>> release_order_probabilities(mech).round(3).tolist()   # e^alpha = 3 : 1
    [0.75, 0.25]
    """
    check_instance(mechanism, "mechanism", DSigmaMechanism)
    orders = all_orders(mechanism.n)
    log_p = np.array([mechanism.permutation_log_prob(o) for o in orders])
    probs = np.exp(log_p)
    if abs(probs.sum() - 1.0) > _TOLERANCE:  # pragma: no cover - guards the library's normalizer
        raise ValueError(f"release-order probabilities sum to {probs.sum()!r}")
    return probs


def release_likelihood(order_probs: ArrayLike, m: int) -> np.ndarray:
    r"""The law of the released sequence given the report sequence, for reports in
    :math:`\{0,\dots,m-1\}^n` and a law of release orders independent of the reports:
    :math:`P[z\mid y]=\sum_o P(o)\,\mathbb 1[y[o]=z]`. Returns an ``m^n x m^n`` matrix.

    >>> release_likelihood([0.75, 0.25], 2).tolist()   # the order (1, 0) swaps two reports
    [[1.0, 0.0, 0.0, 0.0], [0.0, 0.75, 0.25, 0.0], [0.0, 0.25, 0.75, 0.0], [0.0, 0.0, 0.0, 1.0]]
    """
    probs, n = _check_order_probs(order_probs)
    m_val = check_integer(m, "m", 1)
    if _too_many(m_val, 2 * n):
        raise ValueError(f"a {m_val}^{n} x {m_val}^{n} release law (m = {m_val}, n = {n}) is too "
                         f"large to enumerate (limit MAX_CELLS = {MAX_CELLS})")
    ys = all_sequences(n, m_val)
    out = np.zeros((ys.shape[0], ys.shape[0]))
    rows = np.arange(ys.shape[0])
    for order, p in zip(all_orders(n), probs, strict=True):
        np.add.at(out, (rows, _sequence_index(ys[:, order], m_val)), p)
    return out


# --------------------------------------------------------------------------- posteriors and odds


def posterior_log_odds(prior: ArrayLike, likelihood: ArrayLike, person: int, a: int,
                       b: int) -> np.ndarray:
    r"""The adversary's log-odds :math:`\log P[x_i=a\mid w]/P[x_i=b\mid w]` after each observation
    :math:`w` (one entry per column of ``likelihood``, a ``k^n x (observations)`` matrix of
    :math:`P[w\mid x]`), by Bayes' rule. ``nan`` for observations of probability 0 under the prior;
    ``+inf`` or ``-inf`` for observations that rule out ``b`` or ``a``.

    >>> prior = np.full((2, 2), 0.25)                     # two independent fair bits
    >>> lik = ldp_likelihood([[0.75, 0.25], [0.25, 0.75]], 2)
    >>> posterior_log_odds(prior, lik, 0, 1, 0).round(4).tolist()   # +-log 3: only y_0 matters
    [-1.0986, -1.0986, 1.0986, 1.0986]
    """
    flat, n, k, lik = _check_prior_and_likelihood(prior, likelihood)
    i = _check_person(person, n)
    a = check_integer(a, "a", 0, k - 1)
    b = check_integer(b, "b", 0, k - 1)
    value = all_sequences(n, k)[:, i]
    joint_a = (flat * (value == a)) @ lik
    joint_b = (flat * (value == b)) @ lik
    out = _log_ratio(joint_a, joint_b)
    out[joint_a + joint_b == 0] = np.nan
    return out


def inferential_privacy_loss(prior: ArrayLike, likelihood: ArrayLike) -> float:
    r"""Local inferential privacy loss (Kifer & Machanavajjhala 2014, as stated in Meehan et al.
    2022, Definition A.1): the largest change, over people :math:`i`, values :math:`a,b` of
    positive prior probability and observations :math:`w` of positive probability, between the
    adversary's prior and posterior log-odds,

    .. math:: \max_{i,a,b,w}\;\log\frac{P[x_i=a\mid w]}{P[x_i=b\mid w]}
              -\log\frac{P[x_i=a]}{P[x_i=b]}
              =\max_{i,a,b,w}\log\frac{P[w\mid x_i=a]}{P[w\mid x_i=b]}.

    ``likelihood`` is the ``k^n x (observations)`` matrix :math:`P[w\mid x]`
    (:func:`ldp_likelihood` for the local model of Definition A.1). Independent people and
    randomized response at :math:`\varepsilon` give exactly :math:`\varepsilon`; correlated people
    give more (up to :math:`n\varepsilon`). ``inf`` (exactly) when an observation rules out one
    value and not another (a channel with zeros, such as no noise at all).

    >>> rr = [[0.75, 0.25], [0.25, 0.75]]                      # eps = log 3
    >>> round(inferential_privacy_loss(np.full((2, 2), 0.25), ldp_likelihood(rr, 2)), 4)
    1.0986
    >>> twins = np.array([[0.5, 0.0], [0.0, 0.5]])             # x_0 = x_1 always
    >>> round(inferential_privacy_loss(twins, ldp_likelihood(rr, 2)), 4)   # 2 log 3
    2.1972
    """
    flat, n, k, lik = _check_prior_and_likelihood(prior, likelihood)
    datasets = all_sequences(n, k)
    seen = flat @ lik > 0
    worst = 0.0
    for i in range(n):
        marginal = np.bincount(datasets[:, i], weights=flat, minlength=k)
        joint = np.stack([(flat * (datasets[:, i] == a)) @ lik for a in range(k)])
        for a, b in itertools.permutations(np.flatnonzero(marginal > 0), 2):
            keep = seen & (joint[a] + joint[b] > 0)  # observations that bear on a versus b
            prior_odds = math.log(marginal[a]) - math.log(marginal[b])
            shift = _log_ratio(joint[a, keep], joint[b, keep]) - prior_odds
            worst = max(worst, float(shift.max()) if shift.size else 0.0)
    return worst


def bayes_guess_accuracy(prior: ArrayLike, likelihood: ArrayLike, person: int) -> float:
    r"""Probability that the adversary's best guess of person ``person``'s value is right, after
    one observation (one column of ``likelihood``, the ``k^n x (observations)`` matrix
    :math:`P[w\mid x]`): :math:`\sum_w\max_a P[x_i=a, w]`. With a single uninformative column it
    is the prior guess :math:`\max_a P[x_i=a]`. A plain summary of what the release gives away
    about one person on average, to set beside the worst-case loss of
    :func:`inferential_privacy_loss`.

    >>> prior = np.full((2, 2), 0.25)
    >>> bayes_guess_accuracy(prior, ldp_likelihood([[0.75, 0.25], [0.25, 0.75]], 2), 0)
    0.75
    """
    flat, n, k, lik = _check_prior_and_likelihood(prior, likelihood)
    i = _check_person(person, n)
    value = all_sequences(n, k)[:, i]
    joint = np.stack([(flat * (value == a)) @ lik for a in range(k)])
    return float(joint.max(axis=0).sum())


def _knowledge_ids(reports: np.ndarray, group: np.ndarray) -> np.ndarray:
    """Label of what the informed adversary of Theorem 4.1 knows about a report sequence: the
    reports outside the group, in order, and the multiset of reports inside it."""
    outside = np.setdiff1d(np.arange(reports.shape[1]), group)
    key = np.concatenate([reports[:, outside], np.sort(reports[:, group], axis=1)], axis=1)
    return np.unique(key, axis=0, return_inverse=True)[1].ravel()


def informed_log_odds_shift(prior: ArrayLike, channel: ArrayLike, order_probs: ArrayLike,
                            group: ArrayLike, person: int) -> float:
    r"""The left-hand side of Meehan et al. 2022, Theorem 4.1, by enumeration: the largest change,
    over values :math:`a\ne b`, what the adversary knows :math:`K` and released sequences
    :math:`z` (all of positive probability), of the adversary's log-odds on :math:`x_i`,

    .. math:: \log\frac{P[x_i=a\mid z,K]}{P[x_i=b\mid z,K]}
              -\log\frac{P[x_i=a\mid K]}{P[x_i=b\mid K]},

    where :math:`K` is the sequence of reports outside the group :math:`G_i` of person ``person``
    and the multiset of reports inside it. The data follow ``prior``; each person reports through
    ``channel``; the reports are released in an order drawn from ``order_probs`` (a law over
    :func:`all_orders`, independent of the data, e.g. :func:`release_order_probabilities`).
    Theorem 4.1 says the result is at most :math:`\alpha` for an :math:`(\alpha,G)`-d_sigma private
    release; its proof bounds it by :func:`arrangement_loss`. Returns ``inf`` if an observation
    rules out a value that :math:`K` alone allows.

    >>> pair = DSigmaMechanism([[0, 1], [1, 0]], alpha=1.0)   # one swap: loss exactly alpha
    >>> two_points = np.array([[0.0, 0.5], [0.5, 0.0]])      # x = (0, 1) or (1, 0)
    >>> round(informed_log_odds_shift(two_points, np.eye(2), release_order_probabilities(pair),
    ...                               [0, 1], 0), 12)        # no noise: attained
    1.0
    """
    flat, n, k = _check_prior(prior)
    q = _check_stochastic(channel, "channel")
    if q.shape[0] != k:
        raise ValueError(f"channel needs {k} rows (one per value), got {q.shape[0]}")
    probs, n_orders = _check_order_probs(order_probs)
    if n_orders != n:
        raise ValueError(f"order_probs is a law on {n_orders}! orders, the prior has n = {n}")
    i = _check_person(person, n)
    members = _check_group(group, n, i)
    m = q.shape[1]
    reports = all_sequences(n, m)
    knows = _knowledge_ids(reports, members)
    one_hot = np.zeros((knows.max() + 1, reports.shape[0]))
    one_hot[knows, np.arange(reports.shape[0])] = 1.0
    ldp = ldp_likelihood(q, n)
    release = release_likelihood(probs, m)
    value = all_sequences(n, k)[:, i]
    after, before = [], []
    for a in range(k):
        joint_y = (flat * (value == a)) @ ldp                # P[x_i = a, y]
        after.append(one_hot @ (joint_y[:, None] * release))  # P[x_i = a, K, z]
        before.append(one_hot @ joint_y)                      # P[x_i = a, K]
    worst = 0.0
    for a, b in itertools.permutations(range(k), 2):
        keep = ((after[a] + after[b]) > 0) & ((before[a] > 0) & (before[b] > 0))[:, None]
        with np.errstate(invalid="ignore"):  # entries outside `keep` are dropped below
            shift = _log_ratio(after[a], after[b]) - _log_ratio(before[a], before[b])[:, None]
        shift = shift[keep]
        if shift.size:
            worst = max(worst, float(np.max(shift)))
    return worst


def arrangement_loss(order_probs: ArrayLike, m: int, group: ArrayLike) -> float:
    r"""The bound that the proof of Meehan et al. 2022, Theorem 4.1 (Appendix A.5) reaches: the
    largest log-ratio :math:`\log P[z\mid y]/P[z\mid y']` over released sequences :math:`z` and
    report sequences :math:`y,y'\in\{0,\dots,m-1\}^n` that agree outside ``group`` and hold the
    same multiset inside it (neighbouring sequences for that group). For a d_sigma mechanism and
    ``m >= n`` this is its exact loss for the group (at most :math:`\alpha`). ``inf`` (exactly)
    when a released sequence possible under one such ``y`` is impossible under another.

    >>> round(arrangement_loss([0.75, 0.25], 2, [0, 1]), 4)   # log 3
    1.0986
    """
    probs, n = _check_order_probs(order_probs)
    members = _check_group(group, n)
    release = release_likelihood(probs, m)
    knows = _knowledge_ids(all_sequences(n, m), members)
    worst = 0.0
    for label in np.unique(knows):
        block = release[knows == label]
        both = (block > 0).any(axis=0)
        if (block[:, both] == 0).any():
            return math.inf
        logs = np.log(block[:, both])
        worst = max(worst, float(np.max(logs.max(axis=0) - logs.min(axis=0))))
    return worst


# --------------------------------------------------------------------------- re-identification


MAX_REIDENTIFIED = 1000  # blind_reidentification_success: targets k (exact integer sums)
MAX_GROUP = 10**15  # blind_reidentification_success: group size r (the integers' length)


def blind_reidentification_success(group_size: int, k: int) -> float:
    r"""Success of the re-identification adversary of Meehan et al. 2022, Theorem 4.2 when it has
    nothing to go on: the reports of a group of :math:`r` people are uniformly shuffled among the
    group's positions and carry no information (:math:`\varepsilon=\alpha=0`), and it names
    :math:`k` of those positions; it wins if more than :math:`k/2` of them hold reports of the
    :math:`k` targets. Hypergeometric tail:

    .. math:: \sum_{j>k/2}\binom kj\binom{r-k}{k-j}\Big/\binom rk .

    Exact integer sums: ``k`` at most 1000 (``MAX_REIDENTIFIED``) and ``group_size`` at most
    ``10**15`` (``MAX_GROUP``), where a call takes about a second; both are checked first.

    >>> blind_reidentification_success(100, 1)
    0.01
    """
    r = check_integer(group_size, "group_size", 1, MAX_GROUP)
    size = check_integer(k, "k", 1, MAX_REIDENTIFIED)
    if size > r:
        raise ValueError(f"k must be at most the group size {r}, got {size}")
    wins = sum(math.comb(size, j) * math.comb(r - size, size - j)
               for j in range(size // 2 + 1, size + 1))
    return wins / math.comb(r, size)


def reidentification_alpha_threshold(eps: float, group_size: int, k: int,
                                     level: float = 0.5) -> float:
    r"""The largest :math:`\alpha` at which Meehan et al. 2022, Theorem 4.2 still caps the
    re-identification adversary's success at ``level``. The theorem gives
    :math:`P[\text{win}]\le 1/(1+F)` with :math:`F=m\,e^{-(2k\varepsilon+\alpha)}`,
    :math:`m=\lfloor (r-k)/k\rfloor`, so the cap is at most ``level`` exactly when

    .. math:: \alpha\le \log m-2k\varepsilon-\log(1/\text{level}-1).

    A negative result means that no :math:`\alpha\ge 0` makes the bound that small: the values
    alone (through :math:`2k\varepsilon`) already leave room for a better-than-``level`` attack,
    as far as this bound can tell. Above the threshold the bound says nothing about whether the
    attack succeeds; it is only a ceiling.

    >>> round(reidentification_alpha_threshold(0.2, 100, 5), 4)     # log 19 - 2
    0.9444
    >>> reidentification_alpha_threshold(1.0, 100, 5) < 0           # never below 1/2
    True
    """
    eps_val = float(check_epsilon(eps))
    r = check_integer(group_size, "group_size", 1)
    size = check_integer(k, "k", 1)
    if not 2 * size < r:  # in integers: r / 2 overflows a float for a huge r
        raise ValueError(f"Theorem 4.2 needs k < r / 2 (r = group_size), got k = {size}, "
                         f"group_size = {r}")
    lev = check_real(level, "level", low=0, high=1, low_open=True, high_open=True)
    blocks = (r - size) // size
    threshold = math.log(blocks) - 2 * size * eps_val - math.log(1 / lev - 1)
    if not math.isfinite(threshold):
        raise ValueError(f"the threshold at eps = {eps_val}, k = {size} is below the largest "
                         f"negative float")
    return threshold


def optimal_reidentification_success(channel: ArrayLike, x: ArrayLike, order_probs: ArrayLike,
                                     targets: ArrayLike) -> float | np.ndarray:
    r"""Success probability of the best re-identification adversary of Meehan et al. 2022,
    Theorem 4.2, by enumeration. The data ``x`` are fixed and known to the adversary; each person
    reports through ``channel``; the reports are released as :math:`z=y[o]` with :math:`o` drawn
    from ``order_probs``. Seeing :math:`z`, the adversary names :math:`k=|I|` positions :math:`H`
    and wins if more than :math:`k/2` of the reports there came from the targets :math:`I`. The
    best adversary picks, for each :math:`z`, the :math:`H` maximizing
    :math:`P[z,\text{win with }H]`, so the result is

    .. math:: \sum_z\max_H\sum_{y,o:\,y[o]=z}P[y\mid x]\,P(o)\,
              \mathbb 1\big[|\{o(h):h\in H\}\cap I|>k/2\big].

    Theorem 4.2 bounds it by :math:`1/(1+F)` with :math:`F` from
    :func:`shuffle_lib.dsigma.reidentification_odds_bound`. ``x`` may be one dataset (returns a
    float) or several, one per row (returns an array).

    >>> identity_only = np.eye(1, 6).ravel()           # release order always the identity
    >>> optimal_reidentification_success(np.full((2, 2), 0.5), [0, 1, 0], identity_only, [1])
    1.0
    """
    q = _check_stochastic(channel, "channel")
    probs, n = _check_order_probs(order_probs)
    data = check_array(x, "x", integer=True)
    single = data.ndim == 1
    data = np.atleast_2d(data)
    if data.ndim != 2 or data.shape[1] != n:
        raise ValueError(f"x must hold datasets of {n} integer values, got {x!r}")
    if data.min() < 0 or data.max() >= q.shape[0]:
        raise ValueError(f"x must lie in 0..{q.shape[0] - 1}, got {x!r}")
    chosen = _check_group(targets, n, name="targets")
    size = chosen.size
    m = q.shape[1]
    reports = all_sequences(n, m)
    if probs.size * reports.shape[0] > MAX_CELLS:
        raise ValueError("too many (order, report sequence) pairs to enumerate")
    p_y = np.prod(q[data[:, None, :], reports[None, :, :]], axis=2)   # P[y | x], per (x, y)
    orders = all_orders(n)
    rows = np.arange(reports.shape[0])
    released = [_sequence_index(reports[:, o], m) for o in orders]   # index of y[o]
    is_target = np.isin(orders, chosen)                               # o[h] in I, per (o, h)
    best = np.zeros((data.shape[0], reports.shape[0]))
    for subset in itertools.combinations(range(n), size):
        win = is_target[:, list(subset)].sum(axis=1) > size / 2
        winning = np.zeros((reports.shape[0], reports.shape[0]))    # P(o) 1[win], from y to z
        for order_index in np.flatnonzero(win & (probs > 0)):
            np.add.at(winning, (rows, released[order_index]), probs[order_index])
        best = np.maximum(best, p_y @ winning)
    success = best.sum(axis=1)
    return float(success[0]) if single else success


# --------------------------------------------------------------------------- de Finetti (A.3)


def assignment_likelihood(order_probs: ArrayLike) -> np.ndarray:
    r"""The setting of Meehan et al. 2022, Appendix A.3: the adversary knows the ``n`` distinct
    values and is unsure which person holds which; the true assignment is a permutation
    :math:`\sigma` (person ``j`` holds value ``sigma[j]``, rows in the order of
    :func:`all_orders`) and the release is :math:`\sigma[o]` with :math:`o` drawn from
    ``order_probs``. Returns the ``n! x n!`` matrix :math:`P[\text{release}\mid\sigma]`, so
    ``n <= 6`` (``(n!)**2 <= MAX_CELLS``).

    >>> assignment_likelihood([0.75, 0.25]).tolist()
    [[0.75, 0.25], [0.25, 0.75]]
    """
    probs, n = _check_order_probs(order_probs)
    if math.factorial(n) ** 2 > MAX_CELLS:
        raise ValueError(f"order_probs is a law on {n}! orders: the {n}! x {n}! matrix is too "
                         f"large to enumerate (limit MAX_CELLS = {MAX_CELLS})")
    orders = all_orders(n)
    m = len(orders)
    weights = n ** np.arange(n - 1, -1, -1, dtype=np.int64)  # base-n codes grow in lex order
    released = orders[np.arange(m)[:, None, None], orders[None, :, :]]  # sigma[o], every pair
    column = np.searchsorted(orders @ weights, released @ weights)
    out = np.zeros((m, m))
    # for each sigma, o -> sigma[o] is one-to-one: every release gets exactly one order's mass
    out[np.arange(m)[:, None], column] = probs[None, :]
    return out


def assignment_belief_levels(prior: ArrayLike, likelihood: ArrayLike) -> tuple[float, float]:
    r"""How far a release moves beliefs about who holds what (Meehan et al. 2022, Appendix A.3).
    For the events :math:`\Sigma_{i,j}=\{\sigma:\sigma(i)=j\}` ("person ``i`` holds value ``j``"),
    returns the pair

    - the smallest :math:`\alpha` with :math:`e^{-\alpha}\le P[\Sigma_{i,j}\mid w]/P[\Sigma_{i,j}]
      \le e^{\alpha}` for all :math:`i,j` and observations :math:`w` (their Eq. 7, probabilities),
    - the smallest :math:`\alpha` with the same two-sided bound on the posterior-to-prior **odds**
      ratio of :math:`\Sigma_{i,j}` (their Eq. 8).

    ``prior`` is a law over the ``n!`` assignments of :func:`all_orders`; ``likelihood`` is the
    ``n! x (observations)`` matrix :math:`P[w\mid\sigma]` (e.g. :func:`assignment_likelihood`).
    Events of prior probability 0 or 1 are skipped (nothing can move them); both levels are ``inf``
    (exactly) when an observation rules an event out. The first value never
    exceeds the second and the second never exceeds twice the first; Lemma 1 of the appendix calls
    the two conditions equivalent, which holds only in that weaker sense.

    >>> levels = assignment_belief_levels([0.5, 0.5], [[0.8, 0.2], [0.2, 0.8]])
    >>> [round(v, 4) for v in levels]      # log 2.5 and log 4
    [0.9163, 1.3863]
    """
    probs, n = _check_order_probs(prior, "prior")
    lik = _check_stochastic(likelihood, "likelihood")
    if lik.shape[0] != probs.size:
        raise ValueError(f"likelihood needs {probs.size} rows (one per assignment)")
    orders = all_orders(n)
    evidence = probs @ lik
    seen = evidence > 0
    level_prob, level_odds = 0.0, 0.0
    for i, j in itertools.product(range(n), repeat=2):
        inside = orders[:, i] == j
        p_in = float(probs[inside].sum())
        if not _TOLERANCE < p_in < 1 - _TOLERANCE:
            continue
        post_in = (probs * inside) @ lik[:, seen] / evidence[seen]
        post_in = np.clip(post_in, 0.0, 1.0)
        prob_shift = np.abs(_log_ratio(post_in, np.full_like(post_in, p_in)))
        odds_shift = np.abs(_log_ratio(post_in, 1 - post_in) - math.log(p_in / (1 - p_in)))
        level_prob = max(level_prob, float(prob_shift.max()))
        level_odds = max(level_odds, float(odds_shift.max()))
    return level_prob, level_odds
