r"""Permutations, rank distances and the Mallows model (Meehan, Roy-Chowdhury, Chaudhuri & Jha
2022, Section 3.2 and Appendix A.2).

Conventions, used everywhere in the library:

- A permutation of :math:`\{0,\dots,n-1\}` is a 0-based integer array in one-line notation.
- Applying ``sigma`` to a sequence ``y`` gives ``y[sigma]``: position ``j`` receives
  ``y[sigma[j]]``. Composition ``compose(a, b)`` is ``a[b]``, so that
  ``y[a][b] == y[compose(a, b)]``.
- A *ranking* is a permutation read as a list of items in order: ``ranking[k]`` is the item ranked
  ``k``-th (the reference permutation of the d_sigma mechanism is such a list: its ``k``-th entry
  is the ``k``-th node of a breadth-first search).

Kendall's tau distance compares two rankings by the number of pairs of **items** that they put in
opposite orders. In terms of Definition A.2 of Meehan et al. (2022), which counts discordant pairs
of entries, this is Definition A.2 applied to the rank vectors ``inverse(a)`` and ``inverse(b)``.
The two readings agree on the paper's example (one of the two permutations is the identity) but not
in general, and the d_sigma mechanism needs the item reading: with the other one, the Mallows model
around a reference ranking would not depend on the reference at all once the mechanism maps it back
(the book's d_sigma chapter shows this failing its privacy check). Hamming distance is the same in
both readings.

Sizes: a function that builds arrays of ``n`` items (samplers, normalizers, derangements) accepts
at most ``MAX_ITEMS`` (``10**7``) items, so that no call needs more than a few hundred MB of
memory (a draw of that size takes a few seconds); larger values raise a ``ValueError``.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike
from scipy.special import gammaln, logsumexp

from shuffle_lib._jit import cached_njit
from shuffle_lib._validation import RngLike, as_rng, check_array, check_integer, check_real

DISTANCES = ("kendall", "hamming")
SAMPLERS = ("auto", "lehmer", "rim")
MAX_ITEMS = 10**7  # the documented limit on the number of items of the array-building functions


def _integer_array(value: ArrayLike, name: str, ndim: int | None = 1) -> np.ndarray:
    """``value`` as an int64 array with ``ndim`` axes (any number when ``None``); empty is allowed.
    ``TypeError`` for strings, bools, None and other objects; ``ValueError`` for floats, even
    whole-valued ones (an index is never rounded or truncated), for integers beyond int64 and for
    another number of axes."""
    return check_array(value, name, ndim=ndim, integer=True, whole_floats=False, allow_empty=True)


def _holds_each_index_once(arr: np.ndarray) -> bool:
    """True if the 1-D int64 array ``arr`` holds each of 0..n-1 exactly once."""
    if arr.size and (arr.min() < 0 or arr.max() >= arr.size):
        return False
    return bool(np.all(np.bincount(arr, minlength=arr.size) == 1))


def is_permutation(a: ArrayLike) -> bool:
    """True if ``a`` is a 1-D integer array holding each of 0..n-1 exactly once. Input that is not
    an array of integers (strings, bools, None, floats, integers beyond int64) is refused with a
    ``TypeError`` or ``ValueError``, not answered ``False``.

    >>> is_permutation([2, 0, 1]), is_permutation([1, 1, 0]), is_permutation([1, 2])
    (True, False, False)
    """
    arr = _integer_array(a, "a", ndim=None)
    return arr.ndim == 1 and _holds_each_index_once(arr)


def check_permutation(a: ArrayLike, name: str = "sigma") -> np.ndarray:
    """``a`` as an int64 array, or a ``ValueError`` (``TypeError`` for input that is not an array
    of integers) naming ``name`` and what is wrong.

    >>> check_permutation([2, 0, 1]).tolist()
    [2, 0, 1]
    """
    arr = _integer_array(a, name)
    if arr.size == 0:
        raise ValueError(f"{name} must be a non-empty 1-D array, got shape {arr.shape}")
    if not _holds_each_index_once(arr):
        raise ValueError(f"{name} is not a permutation of 0..{arr.size - 1}: {a!r:.200}")
    return arr


def _same_length(a: np.ndarray, b: np.ndarray) -> None:
    if a.size != b.size:
        raise ValueError(f"permutations must have the same length, got {a.size} and {b.size}")


def inverse(a: ArrayLike) -> np.ndarray:
    """The inverse permutation: ``inverse(a)[a[j]] == j``.

    >>> inverse([2, 0, 1]).tolist()
    [1, 2, 0]
    """
    arr = check_permutation(a, "a")
    out = np.empty_like(arr)
    out[arr] = np.arange(arr.size)
    return out


def compose(a: ArrayLike, b: ArrayLike) -> np.ndarray:
    """``a[b]``: applying ``a`` and then ``b`` to a sequence, ``y[a][b] == y[compose(a, b)]``.

    >>> compose([2, 0, 1], [1, 2, 0]).tolist()
    [0, 1, 2]
    """
    arr_a, arr_b = check_permutation(a, "a"), check_permutation(b, "b")
    _same_length(arr_a, arr_b)
    return arr_a[arr_b]


def hamming_distance(a: ArrayLike, b: ArrayLike) -> int:
    """Number of positions where ``a`` and ``b`` differ (Meehan et al. 2022, Definition A.3).

    >>> hamming_distance(np.arange(10), [0, 1, 2, 5, 4, 3, 6, 7, 8, 9])
    2
    """
    arr_a, arr_b = check_permutation(a, "a"), check_permutation(b, "b")
    _same_length(arr_a, arr_b)
    return int(np.count_nonzero(arr_a != arr_b))


@cached_njit
def _inversions(values: np.ndarray) -> int:  # pragma: no cover - compiled
    """Number of pairs i < j with values[i] > values[j], by a Fenwick tree, O(n log n)."""
    n = values.size
    tree = np.zeros(n + 1, dtype=np.int64)
    count = 0
    for i in range(n - 1, -1, -1):
        k = values[i]  # count entries already seen (to the right) that are smaller
        while k > 0:
            count += tree[k]
            k -= k & -k
        k = values[i] + 1
        while k <= n:
            tree[k] += 1
            k += k & -k
    return count


def kendall_tau_distance(a: ArrayLike, b: ArrayLike) -> int:
    r"""Number of pairs of items that rankings ``a`` and ``b`` put in opposite orders (Meehan et al.
    2022, Definition A.2, applied to rank vectors; see the module docstring). Computed as the number
    of inversions of ``inverse(b)[a]`` with a Fenwick tree in :math:`O(n\log n)`.

    >>> kendall_tau_distance(np.arange(10), [0, 1, 2, 5, 4, 3, 6, 7, 8, 9])
    3
    """
    arr_a, arr_b = check_permutation(a, "a"), check_permutation(b, "b")
    _same_length(arr_a, arr_b)
    return int(_inversions(inverse(arr_b)[arr_a]))


def _check_distance(distance: str, name: str = "distance") -> str:
    if not isinstance(distance, str) or distance not in DISTANCES:
        raise ValueError(f"{name} must be one of {DISTANCES}, got {distance!r:.80}")
    return distance


def _check_theta(theta: float) -> float:
    return check_real(theta, "theta", low=0.0)


def _check_items(n: int) -> int:
    return check_integer(n, "n", 1, MAX_ITEMS)


def rank_distance(a: ArrayLike, b: ArrayLike, kind: str = "kendall") -> int:
    """Kendall (``"kendall"``) or Hamming (``"hamming"``) distance between two rankings.

    >>> rank_distance([1, 0, 2], [0, 1, 2], "hamming")
    2
    """
    if _check_distance(kind, "kind") == "kendall":
        return kendall_tau_distance(a, b)
    return hamming_distance(a, b)


def log_derangements(m: ArrayLike) -> np.ndarray:
    r"""Natural log of the number of derangements :math:`!m` (permutations of :math:`m` items with
    no fixed point): :math:`!m = m!\sum_{i=0}^m (-1)^i/i!`. ``-inf`` for :math:`m = 1` (the log
    of zero: one item has no derangement); finite for every other integer :math:`m\ge 0` up to
    the int64 range. ``m`` is an integer or an array of integers of any shape.

    >>> np.exp(log_derangements([0, 1, 2, 3, 4])).round().tolist()
    [1.0, 0.0, 1.0, 2.0, 9.0]
    """
    arr = _integer_array(m, "m", ndim=None)
    if (arr < 0).any():
        raise ValueError(f"m must hold non-negative integers, got {m!r:.80}")
    return _log_derangements_given(arr, gammaln(arr + 1.0))


def _log_derangements_given(arr: np.ndarray, log_factorial: np.ndarray) -> np.ndarray:
    """:func:`log_derangements` of checked ``arr`` given ``log_factorial = gammaln(arr + 1.0)``
    (so a caller that already holds it does not compute it again)."""
    # the alternating sum has converged to e^{-1} to double precision beyond m = 20
    i = np.arange(21)
    partial_sums = np.cumsum((-1.0) ** i / np.exp(gammaln(i + 1.0)))
    with np.errstate(divide="ignore"):
        fraction = np.where(arr <= 20, partial_sums[np.minimum(arr, 20)], np.exp(-1.0))
        return np.where(arr == 1, -np.inf, log_factorial + np.log(fraction))


def _hamming_log_weights(n: int, theta: float) -> np.ndarray:
    r"""log of (number of permutations at Hamming distance h) e^{-theta h}, h = 0..n. One
    ``gammaln`` pass: :math:`\ln h!` serves the binomial (reversed, it is :math:`\ln (n-h)!`)
    and the derangements, the same floats as three separate passes."""
    h = np.arange(n + 1)
    log_factorial = gammaln(h + 1.0)
    log_choose = gammaln(n + 1.0) - log_factorial - log_factorial[::-1]
    return log_choose + _log_derangements_given(h, log_factorial) - theta * h


def hamming_moved_pmf(n: int, theta: float) -> np.ndarray:
    r"""Law of the Hamming distance :math:`h` (the number of items moved) of a Mallows-Hamming
    draw from its reference, :math:`h = 0, \dots, n`:

    .. math:: P(h) = \binom nh\,!h\,e^{-\theta h} / \psi(\theta, d_H),

    since exactly :math:`\binom nh\,!h` permutations move :math:`h` given items (Meehan et al.
    2022, Definition 3.2, with the Hamming distance). Computed in log space; ``n`` at most
    ``MAX_ITEMS`` (``10**7``).

    >>> hamming_moved_pmf(3, 0.0).round(4).tolist()  # of the 6 permutations of 3 items
    [0.1667, 0.0, 0.5, 0.3333]
    """
    size = _check_items(n)
    log_weights = _hamming_log_weights(size, _check_theta(theta))
    return np.exp(log_weights - logsumexp(log_weights))


def mallows_log_normalizer(n: int, theta: float, distance: str = "kendall") -> float:
    r""":math:`\log\psi(\theta,d)`, :math:`\psi=\sum_{\sigma}e^{-\theta d(\sigma,\sigma_0)}`
    (Meehan et al. 2022, Definition 3.2), in closed form and in log space.

    - Kendall: :math:`\psi=\prod_{j=1}^{n}\frac{1-e^{-j\theta}}{1-e^{-\theta}}` (the inversion
      counts of the positions are independent), :math:`n!` at :math:`\theta=0`.
    - Hamming: :math:`\psi=\sum_{h=0}^{n}\binom nh\,!h\,e^{-\theta h}`.

    ``n`` at most ``MAX_ITEMS`` (``10**7``).

    >>> round(float(np.exp(mallows_log_normalizer(3, 0.0))), 6)
    6.0
    """
    size = _check_items(n)
    value = _check_theta(theta)
    if _check_distance(distance) == "hamming":
        return float(logsumexp(_hamming_log_weights(size, value)))
    if value == 0:
        return float(gammaln(size + 1.0))
    j = np.arange(1, size + 1)
    return float(np.sum(np.log(-np.expm1(-j * value))) - size * np.log(-np.expm1(-value)))


def mallows_log_pmf(
    sigma: ArrayLike, theta: float, reference: ArrayLike | None = None, distance: str = "kendall"
) -> float:
    r""":math:`\log P_{\theta,d}(\sigma:\sigma_0)=-\theta\,d(\sigma,\sigma_0)-\log\psi(\theta,d)`
    (Meehan et al. 2022, Definition 3.2); ``reference`` defaults to the identity.

    >>> bool(np.isclose(mallows_log_pmf([1, 0, 2], 0.0), -np.log(6)))
    True
    """
    arr = check_permutation(sigma)
    ref = np.arange(arr.size) if reference is None else check_permutation(reference, "reference")
    value = _check_theta(theta)
    return float(-value * rank_distance(arr, ref, distance)
                 - mallows_log_normalizer(arr.size, value, distance))


def _truncated_geometric(sizes: np.ndarray, theta: float, gen: np.random.Generator) -> np.ndarray:
    """One draw on {0, ..., m - 1} with P(k) proportional to e^{-theta k} for each m in sizes.

    An untruncated geometric draw is kept when it is below m; the others are replaced by an exact
    truncated draw (inversion of the distribution function). The result has exactly the truncated
    law: P(k) = P(G = k) + P(G >= m) P(T = k) = P(T = k)."""
    if theta == 0:
        return np.minimum((gen.random(sizes.shape) * sizes).astype(np.int64), sizes - 1)
    draws = gen.geometric(-np.expm1(-theta), size=sizes.shape) - 1
    redo = draws >= sizes
    if redo.any():
        m = sizes[redo]
        u = gen.random(m.shape)
        # P(T >= k) = (e^{-theta k} - e^{-theta m}) / (1 - e^{-theta m}); invert at 1 - u
        exact = np.floor(-np.log1p(-u * -np.expm1(-theta * m)) / theta).astype(np.int64)
        draws[redo] = np.minimum(exact, m - 1)
    return draws


@cached_njit
def _decode_lehmer(code: np.ndarray) -> np.ndarray:  # pragma: no cover - compiled
    """Permutation whose entry i is the code[i]-th smallest value not used by entries < i:
    a Fenwick tree over the unused values, binary lifting for the selection, O(n log n)."""
    n = code.size
    tree = np.zeros(n + 1, dtype=np.int32)  # counts fit in 32 bits; half the memory traffic
    for i in range(1, n + 1):  # every value 0..n-1 unused: tree of all ones
        tree[i] += 1
        parent = i + (i & -i)
        if parent <= n:
            tree[parent] += tree[i]
    top = 1
    while top * 2 <= n:
        top *= 2
    out = np.empty(n, dtype=np.int64)
    for i in range(n):
        remaining = code[i] + 1  # find the smallest prefix holding code[i] + 1 unused values
        position = 0
        step = top
        while step > 0:
            nxt = position + step
            if nxt <= n and tree[nxt] < remaining:
                position = nxt
                remaining -= tree[nxt]
            step //= 2
        out[i] = position  # value `position` (0-based) is selected
        k = position + 1
        while k <= n:
            tree[k] -= 1
            k += k & -k
    return out


def _mallows_identity_lehmer(n: int, theta: float, gen: np.random.Generator) -> np.ndarray:
    """Mallows(theta) around the identity for Kendall: independent truncated-geometric Lehmer
    code entries (entry i counts smaller values to its right, 0..n-1-i), then decoding."""
    code = _truncated_geometric(np.arange(n, 0, -1), theta, gen)
    return _decode_lehmer(code)


def _mallows_rim(reference: np.ndarray, theta: float, gen: np.random.Generator) -> np.ndarray:
    """Repeated insertion model (Doignon et al. 2004), the sampler of Meehan et al. (2022): the i-th
    item of the reference is inserted at position j of the current list with probability
    proportional to e^{-theta (i - j)}. Kept as the reference implementation; O(n^2)."""
    ranking: list[int] = []
    for i, item in enumerate(reference.tolist()):
        weights = np.exp(-theta * (i - np.arange(i + 1)))
        position = int(np.searchsorted(np.cumsum(weights), gen.random() * weights.sum(),
                                       side="right"))
        ranking.insert(min(position, i), item)
    return np.array(ranking, dtype=np.int64)


def _mallows_hamming(reference: np.ndarray, theta: float, gen: np.random.Generator) -> np.ndarray:
    """Exact Hamming-Mallows draw: the distance h from its law, a uniform set of h positions,
    and a uniform derangement of the items there."""
    n = reference.size
    log_weights = _hamming_log_weights(n, theta)
    probabilities = np.exp(log_weights - logsumexp(log_weights))
    h = int(gen.choice(n + 1, p=probabilities / probabilities.sum()))
    out = reference.copy()
    if h:
        positions = gen.choice(n, size=h, replace=False)
        out[positions] = reference[positions][random_derangement(h, gen)]
    return out


def mallows_sample(
    n: int,
    theta: float,
    reference: ArrayLike | None = None,
    distance: str = "kendall",
    size: int | None = None,
    rng: RngLike = None,
    method: str = "auto",
) -> np.ndarray:
    r"""Draw from the Mallows model :math:`P(\sigma)\propto e^{-\theta d(\sigma,\sigma_0)}`
    (Meehan et al. 2022, Definition 3.2) over rankings of ``n`` items; ``reference`` defaults to the
    identity. Returns one ranking (``size=None``) or an array of shape ``(size, n)``.

    Kendall: ``method="lehmer"`` (the default) draws the inversion counts of each rank as
    independent truncated geometric variables and decodes them in :math:`O(n\log n)`; it returns
    ``reference[pi]`` with ``pi`` Mallows around the identity (the Kendall distance between
    rankings is unchanged when both are relabelled by the reference). ``method="rim"`` is the
    repeated insertion model Meehan et al. use, :math:`O(n^2)`, kept as a reference. Hamming: an
    exact sampler (distance, positions, uniform derangement). ``n`` (times ``size`` when given,
    the number of entries returned) is at most ``MAX_ITEMS`` (``10**7``).

    >>> mallows_sample(5, 50.0, reference=[4, 3, 2, 1, 0], rng=0).tolist()
    [4, 3, 2, 1, 0]
    """
    count = _check_items(n)
    value = _check_theta(theta)
    if isinstance(reference, np.ndarray) and reference.ndim == 1 and reference.size != count:
        raise ValueError(f"reference has {reference.size} items, expected n = {count}")  # shape
    ref = np.arange(count) if reference is None else check_permutation(reference, "reference")
    if ref.size != count:
        raise ValueError(f"reference has {ref.size} items, expected n = {count}")
    if not isinstance(method, str) or method not in SAMPLERS:
        raise ValueError(f"method must be one of {SAMPLERS}, got {method!r:.80}")
    if _check_distance(distance) == "hamming" and method != "auto":
        raise ValueError("the Hamming model has one sampler: use method='auto'")
    draws = None if size is None else check_integer(size, "size", 1, MAX_ITEMS // count)
    gen = as_rng(rng)

    def one() -> np.ndarray:
        if distance == "hamming":
            return _mallows_hamming(ref, value, gen)
        if method == "rim":
            return _mallows_rim(ref, value, gen)
        return ref[_mallows_identity_lehmer(count, value, gen)]

    if draws is None:
        return one()
    return np.stack([one() for _ in range(draws)])


@cached_njit
def _fill_uniform_derangement(perm: np.ndarray, gen: np.random.Generator
                             ) -> None:  # pragma: no cover - compiled
    """Fill ``perm`` (length k != 1) with a uniformly random derangement of 0..k-1, by rejection:
    a Fisher-Yates shuffle from the back fixes entry i for good at step i, so the draw restarts
    as soon as an entry lands on its own place. Conditioning a uniform permutation on having no
    fixed point leaves it uniform over the derangements; about e restarts, O(k) expected."""
    k = perm.size
    if k == 1:
        raise ValueError("a single item has no derangement (k = 1)")
    done = k == 0
    while not done:
        for i in range(k):
            perm[i] = i
        done = True
        for i in range(k - 1, -1, -1):
            j = gen.integers(0, i + 1) if i > 0 else 0
            perm[i], perm[j] = perm[j], perm[i]
            if perm[i] == i:
                done = False
                break


def random_derangement(m: int, rng: RngLike = None) -> np.ndarray:
    """A uniformly random derangement of 0..m-1 (no entry stays in place), by rejection from
    uniform permutations (``_fill_uniform_derangement``): exactly uniform, about e draws on
    average. ``m = 0`` gives an empty array; ``m = 1`` has no derangement and raises; ``m`` is at
    most ``MAX_ITEMS`` (``10**7``).

    >>> d = random_derangement(6, rng=0)
    >>> bool(is_permutation(d) and np.all(d != np.arange(6)))
    True
    """
    size = check_integer(m, "m", 0, MAX_ITEMS)
    if size == 1:
        raise ValueError("a single item has no derangement (m = 1)")
    perm = np.empty(size, np.int64)
    _fill_uniform_derangement(perm, as_rng(rng))
    return perm


def max_kendall_given_hamming(n: int, h: int) -> int:
    r"""The largest Kendall distance between two rankings of ``n`` items that differ in exactly
    ``h`` positions (rank distances of Meehan et al. 2022, Definitions A.2 and A.3):

    .. math:: \max d_\tau = \begin{cases} h(2n-h-1)/2 & h \text{ even},\\
              (h-1)(2n-h)/2 - 1 & h \text{ odd}, h\ge 3.\end{cases}

    For even :math:`h` this is :math:`\binom h2+h(n-h)`: every pair that involves a moved item is
    inverted. For odd :math:`h` it is one less than the value at :math:`h-1`, so the maximum is not
    monotone in :math:`h`. ``h = 1`` is impossible. Proof in the book's d_sigma definition
    chapter; checked by enumeration in the tests. Not a result of the paper, whose example
    (:math:`n=10`, :math:`d_\tau=3`, :math:`d_H=2`) is far from this maximum (17).

    >>> [max_kendall_given_hamming(10, h) for h in (0, 2, 3, 4, 5)]
    [0, 17, 16, 30, 29]
    """
    n_val = check_integer(n, "n", 1)
    h_val = check_integer(h, "h", 0)
    if h_val > n_val or h_val == 1:
        raise ValueError(f"h must be 0 or lie in 2..n = {n_val}: rankings of {n_val} items cannot "
                         f"differ in exactly {h_val} positions")
    if h_val % 2 == 0:
        return h_val * (2 * n_val - h_val - 1) // 2
    return (h_val - 1) * (2 * n_val - h_val) // 2 - 1


def kendall_extremal_permutation(n: int, h: int) -> np.ndarray:
    r"""A permutation at Hamming distance ``h`` from the identity whose Kendall distance to it is
    :func:`max_kendall_given_hamming`: move the first :math:`\lceil h/2\rceil` and the last
    :math:`\lfloor h/2\rfloor` positions and reverse them among themselves; for odd :math:`h` the
    reversal would fix the middle moved position, so swap the images of the two middle moved
    positions (this costs one inversion). ``n`` at most ``MAX_ITEMS`` (``10**7``).

    >>> kendall_extremal_permutation(6, 3).tolist()
    [5, 0, 2, 3, 4, 1]
    """
    n, h = _check_items(n), check_integer(h, "h", 0)
    max_kendall_given_hamming(n, h)  # validates h against n
    left = (h + 1) // 2
    moved = np.concatenate([np.arange(left), np.arange(n - (h - left), n)]).astype(np.int64)
    images = moved[::-1].copy()
    if h % 2 == 1:
        mid = left - 1  # the middle moved position, which the reversal would fix
        images[mid], images[mid + 1] = images[mid + 1], images[mid]
    out = np.arange(n, dtype=np.int64)
    out[moved] = images
    return out
