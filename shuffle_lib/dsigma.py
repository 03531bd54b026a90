r"""d_sigma-privacy and the Mallows shuffling mechanism (Meehan, Roy-Chowdhury, Chaudhuri & Jha
2022, Section 4 and Appendix A). Permutation conventions: :mod:`shuffle_lib.permutations`.

A *group assignment* is a list of ``n`` integer arrays; group ``i`` lists the people whose reports
should be shuffled together with person ``i`` and contains ``i`` itself. The mechanism
(Algorithm 1) orders people by a breadth-first search over the groups (the reference ranking),
draws a ranking from the Mallows model around it, and releases the reports in the order that the
draw induces: ``z = y[order]`` with ``order = output_order(reference, sampled)``.

Arguments are validated at the top of every public function: a group assignment must be a list
(or tuple) of 1-D integer arrays, a subset a 1-D integer array, a graph an undirected
``networkx`` graph; float indices are refused, never truncated. Functions whose work grows with a
count document their limit and raise a ``ValueError`` beyond it.
"""

from __future__ import annotations

import functools
import itertools
import math
from dataclasses import dataclass, field

import networkx as nx
import numpy as np
from numpy.typing import ArrayLike
from scipy import sparse
from scipy.spatial import cKDTree

from shuffle_lib._jit import cached_njit
from shuffle_lib._validation import (
    RngLike,
    as_rng,
    check_array,
    check_instance,
    check_integer,
    check_points,
    check_real,
)
from shuffle_lib.permutations import (
    MAX_ITEMS,
    _check_distance,
    _integer_array,
    _mallows_hamming,
    _mallows_identity_lehmer,
    check_permutation,
    inverse,
    kendall_tau_distance,
    mallows_log_normalizer,
    rank_distance,
)

Groups = list[np.ndarray]
MAX_TRIALS = 10**5  # the documented limit on the trials of empirical_preservation
MAX_COORDINATE = 1e100  # the documented limit on public positions: squared distances stay finite
MAX_PRESERVATION_N = 150  # exact crossing counts: n! must stay far below the float range
MAX_MOVED = 4000  # hamming_class_count: exact sums over at most this many moved people
MAX_NEAREST = 4 * 10**6  # groups_nearest: members listed, n * k (2,000 x 2,000 at most)
MAX_GRAPH_NEAREST = 10**6  # groups_nearest_in_graph, graph_attack_sources: n * k members listed
MAX_GRAPH_REACH = 10**7  # graph_attack_sources: bound on the entries of one ball product
MAX_GRAPH_NODES = 10**4  # social_graph, spectral_positions: nodes of a generated graph


def _check_sequence(value: object, name: str) -> None:
    """``TypeError`` unless ``value`` is a list, a tuple or an array with at least one axis."""
    if not (isinstance(value, list | tuple) or (isinstance(value, np.ndarray) and value.ndim)):
        raise TypeError(f"{name} must be a list of integer arrays, got {type(value).__name__} "
                        f"{value!r:.80}")


def _count_at_most(value: object, name: str, limit: int, what: str) -> None:
    """``ValueError`` when the sequence or array ``value`` has more than ``limit`` entries along
    its first axis, read from its length or shape alone (no copy, no pass over the entries), so a
    documented size limit is enforced before any O(n) work."""
    length = len(value) if isinstance(value, list | tuple) else (
        value.shape[0] if isinstance(value, np.ndarray) and value.ndim else None)
    if length is not None and length > limit:
        raise ValueError(f"{what} is for n <= {limit}, got {length} entries in {name}")


def _group_array(group: ArrayLike, name: str) -> np.ndarray:
    """One group as an integer array (int arrays pass as they are: this runs once per person)."""
    arr = group if isinstance(group, np.ndarray) and group.dtype.kind in "iu" else (
        _integer_array(group, name, ndim=None))
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(f"{name} must be a non-empty 1-D integer array, got {group!r:.80}")
    return arr


def check_groups(groups: list[ArrayLike], n: int | None = None, name: str = "groups") -> Groups:
    """Validate a group assignment: a list (or tuple) of ``n`` non-empty 1-D integer arrays with
    indices in range, group ``i`` containing ``i``. Returns int64 arrays (repeated members dropped,
    order kept). The range and owner checks run on all groups at once. Errors name ``name``:
    ``TypeError`` for something that is not a list of integer arrays (float indices included),
    ``ValueError`` for the rest.

    >>> [g.tolist() for g in check_groups([[0, 1], [1, 0, 1], [2]])]
    [[0, 1], [1, 0], [2]]
    """
    _check_sequence(groups, name)
    count = len(groups) if n is None else check_integer(n, "n", 1)
    if count == 0 or len(groups) != count:
        raise ValueError(f"{name} must hold one group per person (n = {count}), "
                         f"got {len(groups)}")
    arrays = [_group_array(g, f"{name}[{i}]") for i, g in enumerate(groups)]
    sizes = np.array([a.size for a in arrays])
    members = np.concatenate(arrays).astype(np.int64)
    owners = np.repeat(np.arange(count), sizes)
    outside = (members < 0) | (members >= count)
    if outside.any():
        i = int(owners[np.argmax(outside)])
        raise ValueError(f"{name}[{i}] has an index outside 0..{count - 1}: {groups[i]!r:.80}")
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    has_owner = np.logical_or.reduceat(members == owners, starts)
    if not has_owner.all():
        i = int(np.argmin(has_owner))
        raise ValueError(f"{name}[{i}] must contain its owner {i}, got {groups[i]!r:.80}")
    if _has_repeats(members, np.concatenate([starts, [members.size]]), count):
        # some group repeats a member: keep first occurrences
        return [a[np.sort(np.unique(a, return_index=True)[1])].astype(np.int64) for a in arrays]
    return np.split(members, starts[1:])


@cached_njit
def _has_repeats(members: np.ndarray, bounds: np.ndarray,
                 n: int) -> bool:  # pragma: no cover - compiled
    """True if some group (members[bounds[g]:bounds[g + 1]]) lists a person twice; O(total)."""
    stamp = np.full(n, -1, dtype=np.int64)
    for g in range(bounds.size - 1):
        for k in range(bounds[g], bounds[g + 1]):
            if stamp[members[k]] == g:
                return True
            stamp[members[k]] = g
    return False


@cached_njit
def _transpose(members: np.ndarray, forward_ptr: np.ndarray,
               n: int) -> tuple[np.ndarray, np.ndarray]:  # pragma: no cover - compiled
    """Counting-sort transpose: row i lists the owners whose groups contain i, increasing."""
    counts = np.zeros(n + 1, dtype=np.int64)
    for k in range(members.size):
        counts[members[k] + 1] += 1
    reverse_ptr = np.cumsum(counts)
    fill = reverse_ptr[:-1].copy()
    reverse = np.empty(members.size, dtype=np.int64)
    for owner in range(n):
        for k in range(forward_ptr[owner], forward_ptr[owner + 1]):
            m = members[k]
            reverse[fill[m]] = owner
            fill[m] += 1
    return reverse_ptr, reverse


def groups_within_radius(points: ArrayLike, r: ArrayLike) -> Groups:
    r"""Group of person ``i``: everybody within Euclidean distance :math:`r_i` of their public
    position (Meehan et al. 2022, Section 4.2, :math:`G_i=\{j: d(t_i,t_j)\le r\}`). ``r`` is one
    radius or one per person. A KD-tree answers the queries; no distance matrix is formed.
    Coordinates must be finite with absolute value at most 1e100 (``MAX_COORDINATE``).

    >>> [g.tolist() for g in groups_within_radius([0.0, 0.5, 3.0], 1.0)]
    [[0, 1], [0, 1], [2]]
    """
    arr = check_points(points, "points", MAX_COORDINATE)
    n = arr.shape[0]
    radii = check_array(r, "r", finite=False)
    if radii.shape not in ((), (1,), (n,)) or not np.isfinite(radii).all() or (radii < 0).any():
        raise ValueError(f"radii r must be finite, >= 0 and one or one per person ({n}), got "
                         f"{r!r:.80}")
    radii = np.broadcast_to(radii, (n,))
    tree = cKDTree(arr)
    if np.all(radii == radii[0]):  # one radius: all close pairs at once, then split by owner
        pairs = tree.query_pairs(float(radii[0]), output_type="ndarray")
        owners = np.concatenate([pairs[:, 0], pairs[:, 1], np.arange(n)])
        members = np.concatenate([pairs[:, 1], pairs[:, 0], np.arange(n)])
        key = np.sort(owners.astype(np.int64) * n + members)  # by owner, then member
        starts = np.cumsum(np.bincount(owners, minlength=n))[:-1]
        return np.split(key % n, starts)
    found = tree.query_ball_point(arr, radii, return_sorted=True)
    return [np.asarray(g, dtype=np.int64) for g in found]


def _nearest_rows(arr: np.ndarray, k: int) -> np.ndarray:
    """``(n, k)`` array: row ``i`` lists the ``k`` people nearest to person ``i`` (``arr`` an
    ``(n, d)`` array of positions, ``1 <= k <= n``), closest first, the owner ``i`` included.

    People who share a position are one point of the KD-tree: the tree holds the distinct
    positions (in order of first appearance), each query asks for ``min(k, m)`` of them, and the
    people at those positions are listed in the order the tree returns the positions, people at
    one position by increasing index, until ``k`` are listed. A tree over repeated points cannot
    split them, so a query among ``c`` copies scans all of them: ``n`` people at one position
    cost :math:`O(n^2)` that way and :math:`O(nk)` this way. Without repeated positions this is
    the tree's own answer. When the owner is not among the ``k`` people listed for their
    position (``k`` or more others share it), the row is the owner followed by the first
    ``k - 1`` of them."""
    n = arr.shape[0]
    _, first, location = np.unique(arr, axis=0, return_index=True, return_inverse=True)
    location = location.reshape(-1)
    order_of_first = np.argsort(first, kind="stable")  # distinct positions by first appearance
    relabel = np.empty_like(order_of_first)
    relabel[order_of_first] = np.arange(order_of_first.size)
    location = relabel[location]  # ids 0..m-1 in order of first appearance
    distinct = arr[first[order_of_first]]
    m = distinct.shape[0]
    wanted = min(k, m)
    _, nearest = cKDTree(distinct).query(distinct, k=wanted)
    nearest = np.asarray(nearest, dtype=np.int64).reshape(m, wanted)
    counts = np.bincount(location, minlength=m)
    people = np.argsort(location, kind="stable")  # by position, then by index
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    # how many people each listed position contributes: all of them until k are listed
    available = np.minimum(counts[nearest], k)
    before = np.cumsum(available, axis=1) - available
    taken = np.clip(k - before, 0, available).reshape(-1)
    block = np.repeat(np.arange(taken.size), taken)
    offset = np.arange(block.size) - np.repeat(np.cumsum(taken) - taken, taken)
    listed = people[starts[nearest.reshape(-1)[block]] + offset].reshape(m, k)
    rows = listed[location]
    own = np.arange(n)
    missing = ~(rows == own[:, None]).any(axis=1)
    rows[missing] = np.column_stack([own[missing], rows[missing, :-1]])
    return rows


def groups_nearest(points: ArrayLike, k: int) -> Groups:
    """Group of person ``i``: the ``k`` people closest to them, themselves included (the
    fixed-size groups of Meehan et al. 2022, Section 4.2), closest first. Ties: people at equal
    distance from ``i`` at different positions come in the KD-tree's order, people who share a
    position by increasing index, and the owner is always in their own group (if ``k`` or more
    others share their position, the group is the owner and the first ``k - 1`` of them). People
    who share a position are queried once, so heavy ties cost :math:`O(nk)` rather than the
    :math:`O(n^2)` of a KD-tree over repeated points. ``n * k`` (the members listed) is at most
    ``4 * 10**6`` (``MAX_NEAREST``; the KD-tree query costs about a microsecond per member),
    checked before any work.

    >>> [sorted(g.tolist()) for g in groups_nearest([0.0, 0.4, 3.0], 2)]
    [[0, 1], [0, 1], [1, 2]]
    >>> [g.tolist() for g in groups_nearest([5.0, 5.0, 5.0, 9.0], 2)]
    [[0, 1], [0, 1], [2, 0], [3, 0]]
    """
    size = check_integer(k, "k", 1)
    rows = points.shape[0] if isinstance(points, np.ndarray) and points.ndim else None
    if rows is not None and rows * size > MAX_NEAREST:
        raise ValueError(f"points and k list n * k = {rows} * {size} members, more than "
                         f"{MAX_NEAREST} (MAX_NEAREST)")
    arr = check_points(points, "points", MAX_COORDINATE)
    if size > arr.shape[0]:
        raise ValueError(f"k = {size} exceeds the number of people in points ({arr.shape[0]})")
    if arr.shape[0] * size > MAX_NEAREST:
        raise ValueError(f"points and k list n * k = {arr.shape[0]} * {size} members, more than "
                         f"{MAX_NEAREST} (MAX_NEAREST)")
    return list(_nearest_rows(arr, size))


def _graph_csr(graph: nx.Graph, name: str) -> sparse.csr_array:
    """The adjacency of an undirected graph on nodes ``0..n-1`` as a CSR array whose rows list
    each node's neighbours by increasing index (edge weights ignored)."""
    check_instance(graph, name, nx.Graph)
    n = graph.number_of_nodes()
    if graph.is_directed() or n == 0 or set(graph.nodes) != set(range(n)):
        raise ValueError(f"{name} must be undirected with nodes exactly 0..n-1")
    adjacency = nx.to_scipy_sparse_array(graph, nodelist=range(n), weight=None, format="csr",
                                         dtype=bool)
    adjacency.sort_indices()
    return adjacency


def groups_from_graph(graph: nx.Graph, r: ArrayLike) -> Groups:
    r"""Group of person ``i``: every node within path length :math:`r_i` of node ``i`` in an
    undirected graph whose nodes are ``0..n-1`` (Meehan et al. 2022, Section 4.2: friends within
    distance ``r`` in a social network). Edge weights are ignored. ``r`` is one non-negative
    integer or one per node. Computed with sparse matrix powers of the adjacency matrix, so the
    memory is that of the groups, not of an ``n x n`` table; the powers stop once the balls stop
    growing, so the work never depends on ``r`` beyond the graph's diameter.

    >>> [g.tolist() for g in groups_from_graph(nx.path_graph(4), 1)]
    [[0, 1], [0, 1, 2], [1, 2, 3], [2, 3]]
    """
    adjacency = _graph_csr(graph, "graph")
    n = adjacency.shape[0]
    if isinstance(r, int) and r > n:  # no path is longer than n - 1 edges
        r = n
    radii = _integer_array(r, "r", ndim=None)
    if radii.shape not in ((), (n,)) or (radii < 0).any():
        raise ValueError(f"path-length radii r must be non-negative integers, one or one per node "
                         f"({n}), got {r!r:.80}")
    radii = np.broadcast_to(radii, (n,))
    step = (adjacency + sparse.eye_array(n, dtype=bool, format="csr")).astype(bool)
    reach = sparse.eye_array(n, dtype=bool, format="csr")
    groups: list[np.ndarray | None] = [None] * n
    for hops in range(int(radii.max()) + 1):
        for i in np.flatnonzero(radii == hops):
            groups[i] = reach[[i]].indices.astype(np.int64)
        grown = (reach @ step).astype(bool)
        if grown.nnz == reach.nnz:  # every ball is its whole component: larger radii add nobody
            for i in np.flatnonzero(radii > hops):
                groups[i] = reach[[i]].indices.astype(np.int64)
            break
        reach = grown
    return [np.sort(g) for g in groups]


def groups_from_forest(forest: nx.Graph) -> Groups:
    r"""Two-member groups, one per edge of a forest whose nodes are ``0..n-1``: each tree is rooted
    at its smallest node, person ``v`` gets :math:`G_v=\{v,\mathrm{parent}(v)\}` and a root gets
    :math:`\{v\}`. Every edge is then exactly one group, so the largest width of any reference
    ranking is the *bandwidth* of the graph under that ordering,
    :math:`\max_{\{u,v\}\in E}|\sigma_0^{-1}(u)-\sigma_0^{-1}(v)|`, and minimizing the width is
    the bandwidth problem, NP-hard even on trees of maximum degree 3 (Garey, Graham, Johnson &
    Knuth 1978). This replaces the reduction of Meehan et al. (2022), Theorem A.3.

    >>> [g.tolist() for g in groups_from_forest(nx.path_graph(3))]
    [[0], [1, 0], [2, 1]]
    """
    check_instance(forest, "forest", nx.Graph)
    n = forest.number_of_nodes()
    if forest.is_directed() or n == 0 or set(forest.nodes) != set(range(n)):
        raise ValueError("forest must be undirected with nodes exactly 0..n-1")
    if not nx.is_forest(forest):
        raise ValueError("the graph must be a forest (no cycles); a cycle has more edges than "
                         "nodes can own")
    groups = [np.array([v], dtype=np.int64) for v in range(n)]
    for component in nx.connected_components(forest):
        root = min(component)
        for child, parent in nx.bfs_predecessors(forest, root):
            groups[child] = np.array([child, parent], dtype=np.int64)
    return groups


def _forward_and_reverse(groups: Groups) -> tuple[np.ndarray, ...]:
    """CSR arrays of the groups (row i lists G_i in its order) and of their transpose (row i lists
    the people whose groups contain i, by increasing index)."""
    n = len(groups)
    sizes = np.array([g.size for g in groups])
    members = np.concatenate(groups)
    forward_ptr = np.concatenate([[0], np.cumsum(sizes)])
    reverse_ptr, reverse = _transpose(members, forward_ptr, n)
    return forward_ptr, members, reverse_ptr, reverse


@cached_njit
def _enqueue(neighbours: np.ndarray, visited: np.ndarray, order: np.ndarray,
             tail: int) -> int:  # pragma: no cover - compiled
    """Append the unvisited ``neighbours`` to the queue ``order``; return the new tail."""
    for nxt in neighbours:
        if not visited[nxt]:
            visited[nxt] = True
            order[tail] = nxt
            tail += 1
    return tail


@cached_njit
def _bfs_all(forward_ptr: np.ndarray, forward: np.ndarray, reverse_ptr: np.ndarray,
             reverse: np.ndarray, roots: np.ndarray) -> np.ndarray:  # pragma: no cover - compiled
    """Breadth-first order covering every node; a node's neighbours are its group (in order),
    then the people whose groups list it. A new search starts from the next unvisited node of
    ``roots`` whenever one ends."""
    n = forward_ptr.size - 1
    visited = np.zeros(n, dtype=np.bool_)
    order = np.empty(n, dtype=np.int64)
    head = 0
    tail = 0
    for root in roots:
        if visited[root]:
            continue
        visited[root] = True
        order[tail] = root
        tail += 1
        while head < tail:
            node = order[head]
            head += 1
            tail = _enqueue(forward[forward_ptr[node]:forward_ptr[node + 1]], visited, order, tail)
            tail = _enqueue(reverse[reverse_ptr[node]:reverse_ptr[node + 1]], visited, order, tail)
    return order


def bfs_reference_permutation(groups: list[ArrayLike],
                              restart_order: ArrayLike | None = None) -> np.ndarray:
    """Algorithm 1, steps 2-4: join ``i`` to every member of ``G_i``, start at the person with the
    largest group and list people in breadth-first order. When a connected component is exhausted,
    the search restarts at the first unvisited person of ``restart_order``, so every component is
    covered. Meehan et al. start one search only; by default we restart at the unvisited person with
    the largest group (ties: smaller index). Pass a locality-preserving order of the public
    positions (:func:`z_order`) to keep components that are close in public space close in the
    ranking. The restart order picks each component's root and the order in which components
    follow each other; the second never changes a width, because every group lies inside one
    component, and any reference gives the guarantee with its own sensitivity. A node's
    neighbours are visited in the order its own group lists them, then the people whose groups
    list it, by increasing index.

    >>> bfs_reference_permutation([[0, 1], [1, 0, 2], [2, 1], [3]]).tolist()
    [1, 0, 2, 3]
    >>> bfs_reference_permutation([[0], [1, 2], [2, 1]], restart_order=[2, 0, 1]).tolist()
    [2, 1, 0]
    """
    checked = check_groups(groups)
    if restart_order is None:
        sizes = np.array([g.size for g in checked])
        roots = np.lexsort((np.arange(sizes.size), -sizes))  # largest group first, then index
    else:
        roots = check_permutation(restart_order, "restart_order")
        if roots.size != len(checked):
            raise ValueError(f"restart_order has {roots.size} entries for {len(checked)} groups")
    return _bfs_all(*_forward_and_reverse(checked), roots)


def z_order(points: ArrayLike, bits: int = 20) -> np.ndarray:
    r"""People sorted along the Z-order (Morton) curve of their public positions: each coordinate
    is scaled to :math:`[0, 2^{b})` over the data's bounding box (one common scale, so the metric's
    proportions are kept), and the curve index interleaves the coordinates' bits, most significant
    first. Every aligned box of side :math:`2^{b-j}` is one contiguous run of the order, which is
    what makes it a good restart order for :func:`bfs_reference_permutation`. In one dimension it
    is a stable sort. Ties keep index order.

    >>> z_order([[0, 0], [1, 1], [0, 1], [1, 0]], bits=1).tolist()
    [0, 3, 2, 1]
    """
    arr = check_points(points, "points", MAX_COORDINATE)
    levels = check_integer(bits, "bits", 1)
    if levels * arr.shape[1] > 62:
        raise ValueError(f"bits * dimension must be <= 62 to fit the index, got {levels} * "
                         f"{arr.shape[1]}")
    shifted = arr - arr.min(axis=0)
    span = float(shifted.max())
    scale = (2**levels - 1) / span if span > 0 else 0.0
    cells = np.floor(shifted * scale).astype(np.int64)
    code = np.zeros(arr.shape[0], dtype=np.int64)
    for bit in range(levels - 1, -1, -1):  # a loop over bits and dimensions, vectorized over people
        for axis in range(arr.shape[1] - 1, -1, -1):
            code = (code << 1) | ((cells[:, axis] >> bit) & 1)
    return np.argsort(code, kind="stable")


def group_widths(reference: ArrayLike, groups: list[ArrayLike]) -> np.ndarray:
    r"""Width of every group in the reference ranking: the largest gap between the ranks of two
    members, :math:`\omega_i=\max_{j,k\in G_i}|\sigma_0^{-1}(j)-\sigma_0^{-1}(k)|` (Meehan et al.
    2022, Section 4.4).

    >>> sigma = np.array([1, 3, 7, 8, 6, 4, 5, 2, 9, 10]) - 1  # Meehan et al.'s example, 0-based
    >>> g1 = np.array([1, 7, 8, 2, 5, 6]) - 1
    >>> int(group_widths(sigma, [g1] + [[i] for i in range(1, 10)])[0])
    7
    """
    ref = check_permutation(reference, "reference")
    checked = check_groups(groups, ref.size)
    ranks = inverse(ref)
    flat = ranks[np.concatenate(checked)]
    starts = np.concatenate([[0], np.cumsum([g.size for g in checked])[:-1]])
    return np.maximum.reduceat(flat, starts) - np.minimum.reduceat(flat, starts)


def max_width(reference: ArrayLike, groups: list[ArrayLike]) -> int:
    """Largest group width, :math:`\\omega_G` (Meehan et al. 2022, Section 4.4).

    >>> max_width([2, 0, 1], [[0, 1], [1, 2], [2]])
    2
    """
    return int(group_widths(reference, groups).max())


def kendall_sensitivity(width: ArrayLike) -> np.ndarray | float:
    """Sensitivity of Kendall's tau for a reference of width ``w``: :math:`w(w+1)/2` (Meehan et al.
    2022, Property 4), in floating point so that huge widths cannot overflow. ``width`` is a
    non-negative whole number below :math:`2^{62}` or an array of them.

    >>> kendall_sensitivity(7)
    28.0
    """
    below_2_62 = np.nextafter(2.0**62, 0.0)  # the largest float below 2**62
    w = check_array(width, "width", integer=True, low=0, high=below_2_62,
                    allow_empty=True).astype(float)
    out = w * (w + 1) / 2
    return float(out) if out.ndim == 0 else out


def _sensitivity(width: int, groups: Groups, distance: str) -> float:
    """Kendall: Property 4 from the largest width; Hamming: the largest group of two or more
    people (one group's reports can change at most that many fixed points, and a derangement of
    it does)."""
    if distance == "kendall":
        return float(kendall_sensitivity(width))
    largest = max(g.size for g in groups)
    return float(largest) if largest >= 2 else 0.0


def _all_permutations(n: int) -> np.ndarray:
    return np.array(list(itertools.permutations(range(n))), dtype=np.int64)


def _inversions_of_rows(rows: np.ndarray) -> np.ndarray:
    """Number of pairs i < j with rows[:, i] > rows[:, j], for every row at once (small n)."""
    upper = np.triu(np.ones((rows.shape[1], rows.shape[1]), dtype=bool), 1)
    return ((rows[:, :, None] > rows[:, None, :]) & upper).sum(axis=(1, 2))


def _distances_of_orders(reference: np.ndarray, orders: np.ndarray, distance: str) -> np.ndarray:
    """d(order[reference], reference) for every release order (a row of ``orders``), all at once:
    Kendall's tau is the number of inversions of ``inverse(reference)[order[reference]]`` (as in
    :func:`~shuffle_lib.permutations.kendall_tau_distance`), Hamming the number of entries an
    order moves."""
    if distance == "hamming":
        return (orders != np.arange(orders.shape[1])).sum(axis=1)
    return _inversions_of_rows(inverse(reference)[orders[:, reference]])


def _log_weights_of_orders(reference: np.ndarray, orders: np.ndarray, distance: str) -> np.ndarray:
    """-d(order[reference], reference) for every release order (the unnormalized log-probability
    per unit theta)."""
    return -_distances_of_orders(reference, orders, distance).astype(float)


def sensitivity_brute_force(reference: ArrayLike, groups: list[ArrayLike],
                            distance: str = "kendall") -> float:
    r"""The sensitivity :math:`\Delta(\sigma_0:d,G)` by enumeration, for tiny ``n`` (at most 8):
    the largest change of :math:`d(o\sigma_0,\sigma_0)` between two release orders that differ by
    a rearrangement of one group's reports (Meehan et al. 2022, Section 4.4). Shows how tight
    Property 4 is.

    >>> sensitivity_brute_force([0, 1, 2], [[0, 1], [1, 0], [2]])
    1.0
    """
    _count_at_most(reference, "reference", 8, "brute force")
    _count_at_most(groups, "groups", 8, "brute force")
    ref = check_permutation(reference, "reference")
    if ref.size > 8:
        raise ValueError(f"brute force is for n <= 8, got n = {ref.size} entries in reference")
    checked = check_groups(groups, ref.size)
    _check_distance(distance)
    orders = _all_permutations(ref.size)
    values = _log_weights_of_orders(ref, orders, distance)
    return max(_worst_change(values, orders, checked), _worst_change(-values, orders, checked))


def output_order(reference: ArrayLike, sampled: ArrayLike) -> np.ndarray:
    """Algorithm 1, steps 8-9: the release order ``sampled[inverse(reference)]``: whoever held
    rank ``k`` in the reference now carries the report of ``sampled[k]``.

    >>> ref = np.array([5, 2, 3, 8, 4, 1, 6, 7]) - 1   # Meehan et al.'s Appendix A.10, 0-based
    >>> drawn = np.array([3, 2, 5, 4, 8, 1, 7, 6]) - 1
    >>> (output_order(ref, drawn) + 1).tolist()
    [1, 2, 5, 8, 3, 7, 6, 4]
    """
    ref = check_permutation(reference, "reference")
    drawn = check_permutation(sampled, "sampled")
    if drawn.size != ref.size:
        raise ValueError("reference and sampled ranking must have the same length")
    return drawn[inverse(ref)]


@dataclass(frozen=True)
class DSigmaMechanism:
    r"""The d_sigma-private shuffling mechanism (Meehan et al. 2022, Algorithm 1, Theorem 4.3).

    ``groups`` is the group assignment, ``alpha`` the privacy parameter (finite, >= 0),
    ``distance`` the rank distance of the Mallows model (``"kendall"`` or ``"hamming"``),
    ``reference`` the reference ranking (by default the breadth-first ranking of
    :func:`bfs_reference_permutation`). The dispersion is :math:`\theta=\alpha/\Delta`; with
    sensitivity 0 (every group a single person) nothing needs shuffling, :math:`\theta` is
    infinite and the release keeps the original order.

    >>> mech = DSigmaMechanism([[0, 1], [1, 0], [2, 3], [3, 2]], alpha=1.0)
    >>> mech.width, mech.sensitivity, mech.theta
    (1, 1.0, 1.0)
    """

    groups: list[ArrayLike]
    alpha: float
    distance: str = "kendall"
    reference: ArrayLike | None = None
    _checked: Groups = field(init=False, repr=False, compare=False)
    _ranks: np.ndarray = field(init=False, repr=False, compare=False)
    _width: int = field(init=False, repr=False, compare=False)
    _delta: float = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        alpha = check_real(self.alpha, "alpha", low=0.0)
        _check_distance(self.distance)
        checked = check_groups(self.groups)
        ref = (bfs_reference_permutation(checked) if self.reference is None
               else check_permutation(self.reference, "reference"))
        if ref.size != len(checked):
            raise ValueError(f"reference has {ref.size} entries for {len(checked)} groups")
        object.__setattr__(self, "alpha", alpha)
        object.__setattr__(self, "reference", ref)
        object.__setattr__(self, "_checked", checked)
        object.__setattr__(self, "_ranks", inverse(ref))
        # computed once: every draw needs theta, and the widths cost a pass over all groups
        width = max_width(ref, checked)
        object.__setattr__(self, "_width", width)
        object.__setattr__(self, "_delta", _sensitivity(width, checked, self.distance))

    @classmethod
    def from_positions(cls, points: ArrayLike, r: float, alpha: float,
                       distance: str = "kendall") -> DSigmaMechanism:
        """The mechanism for groups of radius ``r`` around public ``points``
        (:func:`groups_within_radius`), with the breadth-first reference restarted along the
        Z-order of the points (:func:`z_order`), so neighbouring components sit next to each
        other in the ranking.

        >>> mech = DSigmaMechanism.from_positions([0.0, 5.0, 0.5, 5.2], r=1.0, alpha=2.0)
        >>> mech.reference.tolist(), mech.width
        ([0, 2, 1, 3], 1)
        """
        groups = groups_within_radius(points, r)
        reference = bfs_reference_permutation(groups, restart_order=z_order(points))
        return cls(groups, alpha, distance, reference)

    @property
    def n(self) -> int:
        return len(self._checked)

    @property
    def width(self) -> int:
        """Largest group width in the reference ranking."""
        return self._width

    @property
    def sensitivity(self) -> float:
        """:math:`\\Delta(\\sigma_0:d,G)`: Property 4 for Kendall, the largest group for Hamming."""
        return self._delta

    @property
    def theta(self) -> float:
        """Dispersion :math:`\\theta=\\alpha/\\Delta` (infinite when nothing needs shuffling)."""
        return math.inf if self.sensitivity == 0 else self.alpha / self.sensitivity

    def sample_permutation(self, rng: RngLike = None) -> np.ndarray:
        """One release order ``o``: the reports are released as ``y[o]``.

        >>> mech = DSigmaMechanism([[0, 1], [1, 0], [2]], alpha=1.0)
        >>> sorted(mech.sample_permutation(rng=0).tolist())
        [0, 1, 2]
        """
        gen = as_rng(rng)
        if math.isinf(self.theta):
            return np.arange(self.n)
        # mallows_sample(n, theta, reference, distance, rng=gen) and output_order(reference,
        # drawn) without validating again what __post_init__ checked: the same draws from gen
        if self.distance == "hamming":
            drawn = _mallows_hamming(self.reference, self.theta, gen)
        else:
            drawn = self.reference[_mallows_identity_lehmer(self.n, self.theta, gen)]
        return drawn[self._ranks]

    def shuffle(self, y: ArrayLike, rng: RngLike = None) -> tuple[np.ndarray, np.ndarray]:
        """Algorithm 1: returns ``(z, o)`` with ``z = y[o]``. The reports ``y`` (one per person,
        along the first axis) may be of any type; they are only moved.

        >>> mech = DSigmaMechanism([[0, 1], [1, 0], [2]], alpha=1.0)
        >>> z, o = mech.shuffle(["a", "b", "c"], rng=0)
        >>> z.tolist() == [["a", "b", "c"][i] for i in o]
        True
        """
        try:
            values = np.asarray(y)
        except ValueError as err:  # a ragged list
            raise ValueError(f"y must hold one report per person ({self.n})") from err
        if values.shape[:1] != (self.n,):
            raise ValueError(f"y must hold one report per person ({self.n}), got {values.shape}")
        order = self.sample_permutation(rng)
        return values[order], order

    def permutation_log_prob(self, order: ArrayLike) -> float:
        r"""log P[the mechanism releases ``y[order]``]: the Mallows log-probability of the ranking
        ``order[reference]``, the only draw that produces this release order. A mechanism that
        does not shuffle (infinite :math:`\theta`) gives ``-inf`` (log 0) to every order but the
        identity.

        >>> mech = DSigmaMechanism([[0, 1], [1, 0], [2]], alpha=1.0)
        >>> round(mech.permutation_log_prob([1, 0, 2]), 6)
        -1.720868
        """
        o = check_permutation(order, "order")
        if o.size != self.n:
            raise ValueError(f"order must have {self.n} entries, got {o.size}")
        if math.isinf(self.theta):
            return 0.0 if np.array_equal(o, np.arange(self.n)) else -math.inf
        d = rank_distance(o[self.reference], self.reference, self.distance)
        return -self.theta * d - mallows_log_normalizer(self.n, self.theta, self.distance)


def rescaled_alpha(mechanism: DSigmaMechanism, other_groups: list[ArrayLike]) -> float:
    r"""Theorem 4.4: the same mechanism is :math:`(\alpha',G')`-d_sigma private for any other group
    assignment, with :math:`\alpha'=\alpha\,\Delta(\sigma_0:d,G')/\Delta(\sigma_0:d,G)`
    (that is, :math:`\theta\,\Delta(\sigma_0:d,G')`).

    >>> mech = DSigmaMechanism([[0, 1], [1, 0], [2], [3]], alpha=1.0, reference=[0, 1, 2, 3])
    >>> rescaled_alpha(mech, [[0, 1, 2], [1], [2], [3]])
    3.0
    """
    check_instance(mechanism, "mechanism", DSigmaMechanism)
    other = check_groups(other_groups, mechanism.n, "other_groups")
    if math.isinf(mechanism.theta):
        raise ValueError("the mechanism does not shuffle (sensitivity 0): no alpha' is finite")
    width = max_width(mechanism.reference, other)
    return mechanism.theta * _sensitivity(width, other, mechanism.distance)


def reidentification_odds_bound(eps: float, alpha: float, group_size: int, k: int) -> float:
    r"""Theorem 4.2: an adversary who tries to single out the reports of ``k`` members of a group
    of size :math:`r` loses at least :math:`\lfloor (r-k)/k\rfloor\,e^{-(2k\varepsilon+\alpha)}`
    times as often as it wins, when :math:`k<r/2`, under two hypotheses: (a) every member of the
    group sends a report through one and the same :math:`\varepsilon`-LDP randomizer, run
    independently person by person; (b) the shuffler releases the reports in an order :math:`o`
    drawn independently of the reports with :math:`P[o]\le e^{\alpha}P[\rho o]` for every
    rearrangement :math:`\rho` of one group's members, as the Mallows mechanism does
    (:math:`\alpha`-d_sigma privacy of the output alone is not enough, nor are different
    randomizers). Returns that factor; the winning probability is then at most
    :math:`1/(1+\text{factor})`. Computed in log space, so any ``group_size`` is accepted (a
    Python integer beyond the float range too); a factor beyond the float range is returned as
    the largest float, still a lower bound.

    >>> round(reidentification_odds_bound(0.2, 0.0, 100, 5), 4)  # 19 e^{-2}
    2.5714
    """
    eps_val = check_real(eps, "eps", low=0.0)
    alpha_val = check_real(alpha, "alpha", low=0.0)
    r = check_integer(group_size, "group_size", 1)
    size = check_integer(k, "k", 1)
    if not 2 * size < r:  # in integers: r / 2 overflows a float for a huge r
        raise ValueError(f"the bound needs k < r / 2 with r = group_size, got k = {size}, "
                         f"group_size = {r}")
    blocks = (r - size) // size
    exponent = 2 * size * eps_val + alpha_val
    if blocks < 2**1000 and exponent < 700:  # both factors are floats: the product as written
        return float(blocks * math.exp(-exponent))
    log_factor = math.log(blocks) - exponent
    return math.exp(min(log_factor, math.log(np.finfo(float).max)))


def _worst_change(values: np.ndarray, orders: np.ndarray, groups: Groups) -> float:
    """max over release orders o, groups G and rearrangements rho of G's reports of
    values[o] - values[rho o] (orders lists every permutation). The orders ``rho o`` are exactly
    the orders that agree with ``o`` wherever ``o`` holds somebody outside G (an orbit), so the
    largest change over one group is the largest spread, max - min, of ``values`` over an orbit:
    one sort per group instead of one pass per rearrangement (``|G|!`` of them)."""
    worst = 0.0
    for group in {tuple(sorted(g.tolist())) for g in groups}:
        if len(group) < 2:
            continue
        n = orders.shape[1]
        key = np.where(np.isin(orders, group), n, orders)  # the entries rho cannot change
        code = key @ ((n + 1) ** np.arange(n, dtype=np.int64))  # n <= 8: fits int64
        order = np.argsort(code, kind="stable")
        starts = np.flatnonzero(np.r_[True, np.diff(code[order]) != 0])
        spread = (np.maximum.reduceat(values[order], starts)
                  - np.minimum.reduceat(values[order], starts))
        worst = max(worst, float(np.max(spread)))
    return worst


def kendall_tau_positions(a: ArrayLike, b: ArrayLike) -> int:
    r"""Definition A.2 of Meehan et al. (2022) read literally on one-line arrays: the number of
    **position** pairs :math:`i<j` whose entries are in opposite orders,
    :math:`|\{(i,j): i<j,\ (a_i-a_j)(b_i-b_j)<0\}|`. This is not the item distance of
    :func:`shuffle_lib.permutations.kendall_tau_distance` (pairs of items ranked in opposite
    orders); the two agree when ``b`` is the identity, as in the paper's example, and differ in
    general. Under this reading the d_sigma mechanism is not private
    (:func:`exhaustive_privacy_loss` with ``reading="positions"``).

    >>> kendall_tau_positions(np.arange(10), [0, 1, 2, 5, 4, 3, 6, 7, 8, 9])  # the paper's example
    3
    >>> kendall_tau_positions([0, 2, 1], [2, 0, 1]), kendall_tau_distance([0, 2, 1], [2, 0, 1])
    (3, 1)
    """
    arr_a, arr_b = check_permutation(a, "a"), check_permutation(b, "b")
    if arr_a.size != arr_b.size:
        raise ValueError(f"permutations must have the same length, got {arr_a.size} and "
                         f"{arr_b.size}")
    # order the positions by b; the pairs that a puts the other way round are inversions
    return kendall_tau_distance(arr_a[inverse(arr_b)], np.arange(arr_a.size))


def kendall_neighbour_changes(reference: ArrayLike, orders: ArrayLike,
                              relabel: ArrayLike) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    r"""The pairs whose Kendall status changes when one group's reports are rearranged: the key
    step of the sensitivity bound :math:`\Delta(\sigma_0:d_\tau,G)\le\omega_G(\omega_G+1)/2`
    (Meehan et al. 2022, Property 4, proved in the book by the window argument, not by the
    triangle inequality of the paper's proof).

    For a release order :math:`o` (``z = y[o]``) let
    :math:`\kappa_o(k)=\sigma_0^{-1}(o(\sigma_0(k)))` be the reference rank of the person whose
    report lands in the slot of reference rank :math:`k`. Then
    :math:`D(o)=d_\tau(o\sigma_0,\sigma_0)` is the number of slot pairs :math:`k<l` with
    :math:`\kappa_o(k)>\kappa_o(l)`. Rearranging reports by ``relabel`` (:math:`\rho`, the
    release order becomes :math:`\rho o`, ``relabel[o]``) replaces :math:`\kappa_o` by
    :math:`\tau\circ\kappa_o` with :math:`\tau=\sigma_0^{-1}\rho\sigma_0`. When ``relabel``
    only exchanges the members of one group, :math:`\tau` only moves ranks inside the group's
    window, so only pairs with both ranks in that window can change (the tests enumerate this).
    Works on whole tables of orders at once (memory ``len(orders) * n * n``, at most ``10**7``),
    so for small ``n``.

    ``orders`` is one release order or a 2-D array of them (one per row). Returns
    ``(before, after, changed)``: :math:`D(o)` and :math:`D(\rho o)` for every row, and a boolean
    array ``changed[m, u, v]`` (``u < v``) that is true when the slot pair holding the people of
    reference ranks ``u`` and ``v`` (under :math:`o`) is counted by exactly one of the two
    distances. ``before - after`` is the signed sum over the changed pairs.

    >>> before, after, changed = kendall_neighbour_changes(np.arange(6), [0, 2, 3, 4, 5, 1],
    ...                                                    [1, 0, 2, 3, 4, 5])
    >>> int(before[0]), int(after[0]), np.argwhere(changed[0]).tolist()
    (4, 5, [[0, 1]])
    """
    if isinstance(reference, np.ndarray) and reference.ndim == 1:
        given = orders.shape[0] if isinstance(orders, np.ndarray) and orders.ndim == 2 else 1
        if given * reference.size ** 2 > MAX_ITEMS:  # from the shapes, before any copy
            raise ValueError(f"len(orders) * n * n must be at most {MAX_ITEMS}, got {given} "
                             f"orders and a reference of n = {reference.size} entries")
    ref = check_permutation(reference, "reference")
    rho = check_permutation(relabel, "relabel")
    rows = np.atleast_2d(_integer_array(orders, "orders", ndim=None))
    if rows.shape[0] * ref.size**2 > MAX_ITEMS:
        raise ValueError(f"len(orders) * n * n must be at most {MAX_ITEMS}, got {rows.shape[0]} "
                         f"orders of {ref.size} entries")
    if rows.ndim != 2 or rows.shape[1] != ref.size or rho.size != ref.size:
        raise ValueError(f"orders and relabel must have {ref.size} entries per row, got "
                         f"{np.shape(orders)} and {rho.size}")
    for row in rows:
        check_permutation(row, "orders")
    ranks = inverse(ref)
    kappa = ranks[rows[:, ref]]
    kappa_after = ranks[rho[rows][:, ref]]
    upper = np.triu(np.ones((ref.size, ref.size), dtype=bool), 1)
    status = (kappa[:, :, None] > kappa[:, None, :]) & upper
    status_after = (kappa_after[:, :, None] > kappa_after[:, None, :]) & upper
    m, first, second = np.nonzero(status != status_after)
    u, v = kappa[m, first], kappa[m, second]
    changed = np.zeros((rows.shape[0], ref.size, ref.size), dtype=bool)
    changed[m, np.minimum(u, v), np.maximum(u, v)] = True
    return status.sum(axis=(1, 2)), status_after.sum(axis=(1, 2)), changed


def exhaustive_privacy_loss(mechanism: DSigmaMechanism,
                            groups: list[ArrayLike] | None = None,
                            reading: str = "items") -> float:
    r"""The exact d_sigma privacy loss of ``mechanism`` for tiny ``n`` (at most 8): the largest
    log-ratio :math:`\log P[A(\sigma(y))=z]/P[A(\sigma'(y))=z]` over all neighbouring input orders
    :math:`\sigma\sim_{G_i}\sigma'` of ``groups`` (default: the mechanism's own) and all outputs,
    for reports that are all distinct (the worst case). Two input orders that differ by a
    rearrangement :math:`\rho` of one group make release orders :math:`o` and :math:`\rho o`
    produce the same output, so the loss is :math:`\max_{o,i,\rho}\log P(o)-\log P(\rho o)`.
    Theorem 4.3 of Meehan et al. (2022) says it is at most :math:`\alpha`.

    ``reading="items"`` (default) uses the mechanism's own probabilities
    (:meth:`DSigmaMechanism.permutation_log_prob`: Kendall's tau counts pairs of items).
    ``reading="positions"`` replaces Kendall's tau by the literal reading of the paper's
    Definition A.2 (:func:`kendall_tau_positions`, pairs of positions), with the same
    normalizer; the release order then follows a Mallows model around the original order whatever
    the reference, and the guarantee fails. For Hamming distance the two readings coincide.

    >>> mech = DSigmaMechanism([[0, 1], [1, 0], [2, 3], [3, 2]], alpha=1.0)
    >>> exhaustive_privacy_loss(mech) <= 1.0 + 1e-12
    True
    >>> mech = DSigmaMechanism([[0, 3], [1], [2], [3, 0]], alpha=1.0)  # width 1 in the reference
    >>> round(exhaustive_privacy_loss(mech), 6), round(exhaustive_privacy_loss(mech, None,
    ...                                                                        "positions"), 6)
    (1.0, 5.0)
    """
    check_instance(mechanism, "mechanism", DSigmaMechanism)
    if mechanism.n > 8:
        raise ValueError(f"exhaustive check is for n <= 8, got a mechanism with n = {mechanism.n}")
    if not isinstance(reading, str) or reading not in ("items", "positions"):
        raise ValueError(f"reading must be 'items' or 'positions', got {reading!r:.80}")
    checked = mechanism._checked if groups is None else check_groups(groups, mechanism.n)
    orders = _all_permutations(mechanism.n)
    if reading == "positions" and mechanism.distance == "kendall" and not math.isinf(
            mechanism.theta):
        # kendall_tau_positions(o[ref], ref) is the number of inversions of o itself
        log_norm = mallows_log_normalizer(mechanism.n, mechanism.theta, "kendall")
        log_probs = -mechanism.theta * _inversions_of_rows(orders) - log_norm
    elif math.isinf(mechanism.theta):
        log_probs = np.where((orders == np.arange(mechanism.n)).all(axis=1), 0.0, -np.inf)
    else:  # permutation_log_prob of every order at once
        log_norm = mallows_log_normalizer(mechanism.n, mechanism.theta, mechanism.distance)
        log_probs = -mechanism.theta * _distances_of_orders(
            mechanism.reference, orders, mechanism.distance) - log_norm
    if np.isinf(log_probs).any():  # no shuffling: the release order is fixed
        return 0.0 if all(g.size == 1 for g in checked) else math.inf
    return _worst_change(log_probs, orders, checked)


def _check_subset(subset: ArrayLike, n: int, name: str = "subset") -> np.ndarray:
    """The distinct members of a subset of people, sorted: a non-empty 1-D integer array with
    entries in 0..n-1."""
    members = np.unique(_integer_array(subset, name))
    if members.size == 0 or members[0] < 0 or members[-1] >= n:
        raise ValueError(f"{name} must be non-empty indices in 0..{n - 1}, got {subset!r:.80}")
    return members


def _kept_fraction(order: np.ndarray, members: np.ndarray) -> float:
    return float(np.isin(order[members], members).mean())


def preservation(order: ArrayLike, subset: ArrayLike) -> float:
    r"""Fraction of the subset :math:`S` whose positions still carry reports from :math:`S` after
    the release order: :math:`|\{o(i): i\in S\}\cap S|/|S|` (Meehan et al. 2022, Definition A.4).

    >>> o = np.array([5, 3, 2, 6, 7, 9, 8, 1, 4, 10]) - 1   # Meehan et al.'s example, 0-based
    >>> preservation(o, np.array([1, 4, 5, 7, 8]) - 1)
    0.8
    """
    o = check_permutation(order, "order")
    return _kept_fraction(o, _check_subset(subset, o.size))


def empirical_preservation(mechanism: DSigmaMechanism, subset: ArrayLike, delta: float,
                           trials: int, rng: RngLike = None) -> float:
    r"""The largest :math:`\eta` such that at least a fraction :math:`1-\delta` of ``trials``
    release orders preserve at least :math:`\eta` of ``subset`` (the (eta, delta)-preservation of
    Meehan et al. 2022, Definition A.4, estimated as in their Appendix A.14.1). ``trials`` is at
    most ``10**5`` (``MAX_TRIALS``) and ``trials * n`` at most ``10**7``: the release orders are
    held in memory.

    >>> mech = DSigmaMechanism([[0, 1], [1, 0], [2, 3], [3, 2]], alpha=50.0)
    >>> empirical_preservation(mech, [0, 1], 0.01, 20, rng=0)
    1.0
    """
    check_instance(mechanism, "mechanism", DSigmaMechanism)
    count, d = _check_trials(mechanism, delta, trials)
    members = _check_subset(subset, mechanism.n)
    return _preservation_quantiles(mechanism, [members], d, count, rng)[0]


def empirical_preservation_of_subsets(mechanism: DSigmaMechanism, subsets: list[ArrayLike],
                                      delta: float, trials: int,
                                      rng: RngLike = None) -> list[float]:
    r""":func:`empirical_preservation` for several subsets, all scored on the same ``trials``
    release orders (drawn once, in the order :func:`empirical_preservation` draws them, so one
    subset gives exactly its estimate). Same limits on ``trials``.

    >>> mech = DSigmaMechanism([[0, 1], [1, 0], [2, 3], [3, 2]], alpha=50.0)
    >>> empirical_preservation_of_subsets(mech, [[0, 1], [2]], 0.01, 20, rng=0)
    [1.0, 1.0]
    """
    check_instance(mechanism, "mechanism", DSigmaMechanism)
    count, d = _check_trials(mechanism, delta, trials)
    _check_sequence(subsets, "subsets")
    members = [_check_subset(s, mechanism.n, f"subsets[{i}]") for i, s in enumerate(subsets)]
    return _preservation_quantiles(mechanism, members, d, count, rng)


def _check_trials(mechanism: DSigmaMechanism, delta: float, trials: int) -> tuple[int, float]:
    """``trials`` (at most ``MAX_TRIALS`` and ``MAX_ITEMS // n``) and ``delta`` in [0, 1),
    checked before the subsets are read."""
    count = check_integer(trials, "trials", 1, min(MAX_TRIALS, MAX_ITEMS // mechanism.n))
    return count, check_real(delta, "delta", low=0.0, high=1.0, high_open=True)


def _preservation_quantiles(mechanism: DSigmaMechanism, members: list[np.ndarray],
                            d: float, count: int, rng: RngLike) -> list[float]:
    """The estimate of :func:`empirical_preservation` for each checked subset (checked
    ``d`` and ``count``): the kept fractions of all release orders at once, as a table."""
    gen = as_rng(rng)
    orders = np.stack([mechanism.sample_permutation(gen) for _ in range(count)])
    needed = math.ceil((1 - d) * count)  # trials that must reach eta
    estimates = []
    for m in members:
        inside = np.zeros(mechanism.n, dtype=bool)
        inside[m] = True
        kept = inside[orders[:, m]].mean(axis=1)  # _kept_fraction of every order
        estimates.append(float(np.sort(kept)[count - needed]))
    return estimates


def hamming_crossing_counts(n: int, subset_size: int) -> np.ndarray:
    r"""``counts[h, a]``: number of permutations of ``n`` items with ``h`` points that move and
    exactly ``a`` members of a subset of size ``subset_size`` sent outside it (exact integers,
    as floats). Derived directly: choose the ``a`` leaving members and the ``a`` entering outsiders,
    where they land, and count the bijections inside and outside the subset by their fixed points
    (inclusion-exclusion). It is the count :math:`c_h` behind Meehan et al. (2022), Theorem A.4,
    whose printed formula lost symbols in extraction; the tests check it against enumeration and
    against :func:`hamming_class_count`. Results are cached (a fresh copy is returned).

    The count factorizes: for :math:`a` crossings, :math:`\binom\ell a\binom{n-\ell}a(a!)^2`
    times the convolution, over the fixed points :math:`f_1` inside and :math:`f_2` outside
    (:math:`h=n-f_1-f_2`), of one polynomial per side, each a sum over the overlap :math:`t` of
    leaving and re-entered slots of :math:`\binom at\binom{s-a}{a-t}` times the bijections with
    :math:`f` fixed points among :math:`c=s-2a+t` common elements. Exact integers throughout, in
    :math:`O(n^3)` operations; ``n`` at most 150 (``MAX_PRESERVATION_N``: about 0.1 s there).

    >>> hamming_crossing_counts(3, 1).tolist()  # h = 0, 2, 3: 1, 3 and 2 of the 6 permutations
    [[1.0, 0.0], [0.0, 0.0], [1.0, 2.0], [0.0, 2.0]]
    """
    size = check_integer(n, "n", 1, MAX_PRESERVATION_N)
    ell = check_integer(subset_size, "subset_size", 1)
    if ell > size:
        raise ValueError(f"subset_size {ell} exceeds n = {size}")
    return _crossing_counts(size, ell).copy()


def _fixed_point_table(size: int) -> list[list[int]]:
    """``avoid[m][c]``: bijections between two m-sets sharing c elements that fix none of them,
    sum over j of (-1)^j C(c, j) (m - j)!, by ``avoid[m][c] = avoid[m][c-1] - avoid[m-1][c-1]``
    (those that fix one more common element are removed), for c <= m <= size."""
    avoid = [[math.factorial(m)] for m in range(size + 1)]
    for m in range(1, size + 1):
        for c in range(1, m + 1):
            avoid[m].append(avoid[m][c - 1] - avoid[m - 1][c - 1])
    return avoid


def _side_polynomial(s: int, a: int, avoid: list[list[int]]) -> np.ndarray:
    """Ways to arrange one side of s people, a of whom leave and a of whose slots are re-entered,
    by the number f of the side's fixed points (object array of exact integers)."""
    poly = [0] * (s - a + 1)
    for t in range(max(0, 2 * a - s), a + 1):  # overlap of leaving and re-entered slots
        ways = math.comb(a, t) * math.comb(s - a, a - t)
        c = s - 2 * a + t
        for f in range(c + 1):
            poly[f] += ways * math.comb(c, f) * avoid[s - a - f][c - f]
    return np.array(poly, dtype=object)


@functools.lru_cache(maxsize=32)
def _crossing_counts(size: int, ell: int) -> np.ndarray:
    """The table of :func:`hamming_crossing_counts` (validated arguments), computed once."""
    rest = size - ell
    avoid = _fixed_point_table(size)
    counts = np.zeros((size + 1, ell + 1))
    for a in range(min(ell, rest) + 1):
        base = math.comb(ell, a) * math.comb(rest, a) * math.factorial(a) ** 2
        by_fixed = np.convolve(_side_polynomial(ell, a, avoid),
                               _side_polynomial(rest, a, avoid)) * base  # index f1 + f2
        counts[size - np.arange(by_fixed.size), a] = by_fixed.astype(float)
    counts.flags.writeable = False  # shared by every caller of the cache
    return counts


def hamming_preservation_delta(n: int, subset_size: int, eta: float, theta: float) -> float:
    r"""Exact :math:`\delta` of (eta, delta)-preservation for the Hamming mechanism (Meehan et al.
    2022, Theorem A.4): the probability that fewer than :math:`\eta|S|` of the subset's positions
    keep reports from the subset, :math:`\delta=\frac1\psi\sum_h e^{-\theta h}c_h`, with :math:`c_h`
    from :func:`hamming_crossing_counts` (any subset of that size and any reference give the same
    value). Exact integer counts, so ``n`` at most 150 (``MAX_PRESERVATION_N``; about 0.1 s there,
    then cached).

    >>> round(hamming_preservation_delta(8, 4, 1.0, 0.0), 6)  # uniform: 1 - P(subset kept whole)
    0.985714
    """
    size = check_integer(n, "n", 1, MAX_PRESERVATION_N)
    value = check_real(eta, "eta", low=0.0, high=1.0)
    dispersion = check_real(theta, "theta", low=0.0)
    counts = hamming_crossing_counts(size, subset_size)
    h = np.arange(size + 1)
    log_norm = mallows_log_normalizer(size, dispersion, "hamming")
    weights = np.exp(-dispersion * h - log_norm)
    failing = np.arange(subset_size + 1) > (1 - value) * subset_size + 1e-12
    return float(np.clip(weights @ counts[:, failing].sum(axis=1), 0.0, 1.0))


def optimal_width_brute_force(groups: list[ArrayLike]) -> tuple[int, np.ndarray]:
    """The smallest possible largest width over all reference rankings, by enumeration; ``n`` at
    most 9. The problem is NP-hard in general: with the two-member groups of
    :func:`groups_from_forest` it is graph bandwidth (Garey, Graham, Johnson & Knuth 1978); the
    job-shop argument of Meehan et al. (2022), Theorem A.3, does not prove it. Returns the width
    and one optimal ranking (the first in lexicographic order).

    >>> optimal_width_brute_force([[0, 3], [1, 2], [2, 1], [3, 0]])[0]
    1
    """
    _count_at_most(groups, "groups", 9, "brute force")
    checked = check_groups(groups)
    n = len(checked)
    if n > 9:
        raise ValueError(f"brute force is for n <= 9, got n = {n}")
    best, best_ranking = n, np.arange(n)
    every = itertools.permutations(range(n))
    while chunk := list(itertools.islice(every, 40_320)):
        rankings = np.array(chunk, dtype=np.int64)
        ranks = np.empty_like(rankings)
        np.put_along_axis(ranks, rankings, np.arange(n)[None, :].repeat(len(chunk), 0), axis=1)
        widths = np.zeros(len(chunk), dtype=np.int64)
        for g in checked:
            pos = ranks[:, g]
            widths = np.maximum(widths, pos.max(axis=1) - pos.min(axis=1))
        i = int(np.argmin(widths))
        if widths[i] < best:
            best, best_ranking = int(widths[i]), rankings[i]
    return best, best_ranking


def random_reference_width(groups: list[ArrayLike], rng: RngLike = None) -> int:
    """Largest width of a uniformly random reference ranking: the naive baseline of Meehan et al.
    (2022), Appendix A.16.

    >>> random_reference_width([[0, 1], [1, 0], [2]], rng=0) in (1, 2)
    True
    """
    checked = check_groups(groups)
    return max_width(as_rng(rng).permutation(len(checked)), checked)


def groups_with_known_width(n: int, width: int, placement: str = "centred",
                            rng: RngLike = None) -> tuple[Groups, np.ndarray]:
    r"""Test instances whose optimal reference is known, built as in Meehan et al. (2022),
    Appendix A.16 (Figure 9): draw a hidden ranking :math:`\sigma^*` uniformly at random, and give
    each person a group of :math:`\omega+1` people that are consecutive in :math:`\sigma^*` and
    include them. With ``placement="centred"`` the run is centred on the person (moved inwards at
    the two ends); with ``"random"`` it is a uniformly chosen run of that length containing the
    person. Members are listed in random order, so the group lists leak nothing about
    :math:`\sigma^*`.

    The optimal largest width is exactly ``width``: :math:`\sigma^*` achieves it, and a group of
    :math:`\omega+1` distinct people spans at least :math:`\omega+1` ranks in any ranking. (The
    paper states the optimum as :math:`\min(n,w)` for groups of size :math:`w`, counting the ranks
    a group spans; this library counts the gap, :math:`w-1`.) Returns ``(groups, hidden)``.
    Limits: ``n`` at most ``10**6`` and ``n * (width + 1)`` (the members listed) at most ``10**7``.

    >>> groups, hidden = groups_with_known_width(6, 2, rng=0)
    >>> max_width(hidden, groups), sorted(len(g) for g in groups)
    (2, [3, 3, 3, 3, 3, 3])
    """
    size = check_integer(n, "n", 1, 10**6)
    w = check_integer(width, "width", 0)
    if w >= size:
        raise ValueError(f"width must be at most n - 1 = {size - 1}, got {w}")
    if size * (w + 1) > MAX_ITEMS:
        raise ValueError(f"n * (width + 1) must be at most {MAX_ITEMS}, got n = {size}, "
                         f"width = {w}")
    if not isinstance(placement, str) or placement not in ("centred", "random"):
        raise ValueError(f"placement must be 'centred' or 'random', got {placement!r:.80}")
    gen = as_rng(rng)
    hidden = gen.permutation(size)
    rank = np.arange(size)
    if placement == "centred":
        start = np.clip(rank - w // 2, 0, size - 1 - w)
    else:
        low, high = np.maximum(rank - w, 0), np.minimum(rank, size - 1 - w)
        start = low + np.floor(gen.random(size) * (high - low + 1)).astype(np.int64)
    runs = gen.permuted(hidden[start[:, None] + np.arange(w + 1)[None, :]], axis=1)
    owner_rank = np.empty_like(hidden)
    owner_rank[hidden] = np.arange(size)  # person hidden[k] owns run k
    return list(runs.astype(np.int64)[owner_rank]), hidden


def hamming_decomposition(reference: ArrayLike, sampled: ArrayLike,
                          subset: ArrayLike) -> tuple[np.ndarray, ...]:
    r"""The four sets of the proof of Meehan et al. (2022), Theorem A.4, for a reference ranking
    :math:`\sigma_0`, a sampled ranking :math:`\sigma` and a subset :math:`S` of people. Let
    :math:`P` be the ranks that :math:`S` holds in :math:`\sigma_0`.

    - :math:`A`: people outside :math:`S` whom :math:`\sigma` puts at ranks in :math:`P`;
    - :math:`B`: members of :math:`S` at ranks in :math:`P`, but not at their own;
    - :math:`C`: members of :math:`S` that :math:`\sigma` puts outside :math:`P`
      (:math:`|C|=|A|`);
    - :math:`D`: people outside :math:`S\cup A` that moved.

    They partition the people who moved, so :math:`d_H(\sigma,\sigma_0)=|A|+|B|+|C|+|D|`, and
    the release keeps a fraction :math:`1-|A|/|S|` of :math:`S`. Returns ``(A, B, C, D)`` sorted.

    >>> ref = np.array([1, 2, 3, 5, 4, 7, 8, 10, 9, 6]) - 1  # the paper's example, 0-based
    >>> drawn = np.array([1, 3, 2, 7, 8, 5, 4, 6, 10, 9]) - 1
    >>> [(x + 1).tolist() for x in hamming_decomposition(ref, drawn, np.array([2, 4, 5, 8]) - 1)]
    [[3, 7], [4, 8], [2, 5], [6, 9, 10]]
    """
    ref = check_permutation(reference, "reference")
    drawn = check_permutation(sampled, "sampled")
    if drawn.size != ref.size:
        raise ValueError("reference and sampled ranking must have the same length")
    members = _check_subset(subset, ref.size)
    in_subset = np.zeros(ref.size, dtype=bool)
    in_subset[members] = True
    held = drawn[inverse(ref)[members]]  # who now holds the ranks of S
    entered = np.sort(held[~in_subset[held]])
    shuffled = np.sort(held[in_subset[held] & (held != members)])
    left = np.setdiff1d(members, held)
    moved = drawn != ref  # ranks whose holder changed; ref[moved] lists the people who moved
    others = ref[moved]
    rest = np.sort(others[~in_subset[others] & ~np.isin(others, entered)])
    return entered, shuffled, left, rest


def _avoiding_arrangements(p: int, m: int) -> int:
    """f(p, m) of Meehan et al. (2022), Theorem A.4: arrangements of p + m objects in their p + m
    places in which none of the first p is in its own place (inclusion-exclusion)."""
    return sum((-1) ** q * math.comb(p, q) * math.factorial(p + m - q) for q in range(p + 1))


def hamming_class_count(n: int, subset_size: int, a: int, b: int, d: int) -> int:
    r"""Number of permutations of ``n`` people with :math:`|A|=|C|=a`, :math:`|B|=b` and
    :math:`|D|=d` for a subset of size :math:`\ell` (the four sets of
    :func:`hamming_decomposition`), as counted in the proof of Meehan et al. (2022), Theorem A.4
    (its printed formula lost symbols in extraction; this is our reading of it):

    .. math:: \binom{\ell}{a}\binom{\ell-a}{b}\binom{n-\ell}{a}\binom{n-\ell-a}{d}\,
              f(b,a)\,f(d,a),\qquad f(p,m)=\sum_{q=0}^{p}(-1)^q\binom pq(p+m-q)!

    (choose who leaves, who shuffles inside, who enters, who moves outside; then place them with
    no shuffled person in their own place). Summed over :math:`b+d=h-2a`, it is an independent
    route to :func:`hamming_crossing_counts`. Exact integers; at most 4000 people move
    (:math:`2a+b+d`, ``MAX_MOVED``), which keeps a call well under a second; ``n`` is not limited.

    >>> hamming_class_count(10, 4, 2, 2, 3)  # the class of the paper's example
    322560
    """
    size = check_integer(n, "n", 1)
    ell = check_integer(subset_size, "subset_size", 1)
    if ell > size:
        raise ValueError(f"subset_size {ell} exceeds n = {size}")
    a_, b_, d_ = (check_integer(v, name, 0, MAX_MOVED) for v, name in ((a, "a"), (b, "b"),
                                                                        (d, "d")))
    if 2 * a_ + b_ + d_ > MAX_MOVED:
        raise ValueError(f"at most {MAX_MOVED} people may move (2 a + b + d), got a = {a_}, "
                         f"b = {b_}, d = {d_}")
    if a_ + b_ > ell or a_ + d_ > size - ell:
        return 0
    return (math.comb(ell, a_) * math.comb(ell - a_, b_) * math.comb(size - ell, a_)
            * math.comb(size - ell - a_, d_) * _avoiding_arrangements(b_, a_)
            * _avoiding_arrangements(d_, a_))


def _check_graph_listing(graph: nx.Graph, k: int, what: str) -> tuple[int, int]:
    """The number of people and ``k`` after checking them, before any work: ``n * k`` listed
    ``what`` at most ``MAX_GRAPH_NEAREST``."""
    size = check_integer(k, "k", 1)
    check_instance(graph, "graph", nx.Graph)
    n = graph.number_of_nodes()
    if n * size > MAX_GRAPH_NEAREST:
        raise ValueError(f"graph and k list n * k = {n} * {size} {what}, more than "
                         f"{MAX_GRAPH_NEAREST} (MAX_GRAPH_NEAREST)")
    return n, size


def groups_nearest_in_graph(graph: nx.Graph, k: int) -> Groups:
    r"""Fixed-size groups on a social graph: group of person ``i`` is the ``k`` people closest to
    node ``i`` in path length, ``i`` included (Meehan et al. 2022, Section 4.2: a group "of a
    specific size", e.g. 50 people, instead of a radius). Formally :math:`G_i` is the first
    ``k`` nodes of the breadth-first search from ``i`` that visits each node's neighbours by
    increasing index, so every member is at most as far from ``i`` as every non-member, and ties
    at the boundary distance go to the earlier-discovered nodes. A component of fewer than ``k``
    nodes gives its owners the whole component. Members are listed in discovery order (the owner
    first). Edge weights are ignored. The search stops once ``k`` people are found and reads at
    most the first ``k`` neighbours of each node it expands (at most as many as have been found
    can be old), so the work is ``O(n * k**2)`` even on hubs: ``n * k`` is at most
    ``10**6`` (``MAX_GRAPH_NEAREST``), checked before any work.

    >>> [g.tolist() for g in groups_nearest_in_graph(nx.star_graph(3), 2)]
    [[0, 1], [1, 0], [2, 0], [3, 0]]
    >>> [g.tolist() for g in groups_nearest_in_graph(nx.path_graph(4), 3)]
    [[0, 1, 2], [1, 0, 2], [2, 1, 3], [3, 2, 1]]
    """
    n, size = _check_graph_listing(graph, k, "members")
    adjacency = _graph_csr(graph, "graph")
    ptr, neighbours = adjacency.indptr, adjacency.indices.astype(np.int64)
    stamp = np.full(n, -1, dtype=np.int64)  # stamp[v] == s: v already found from source s
    groups: Groups = []
    for source in range(n):
        stamp[source] = source
        found = [np.array([source], dtype=np.int64)]
        count, queue, head = 1, [source], 0
        while count < size and head < len(queue):
            u = queue[head]
            head += 1
            # at most `count` of u's neighbours are found already, so its first `size` ones
            # hold the first size - count new ones: a hub costs O(k), not O(degree)
            around = neighbours[ptr[u]:min(ptr[u + 1], ptr[u] + size)]
            new = around[stamp[around] != source][: size - count]
            stamp[new] = source
            found.append(new)
            queue.extend(new.tolist())
            count += new.size
        groups.append(np.concatenate(found))
    return groups


def graph_attack_sources(graph: nx.Graph, r: int, k: int = 25, rng: RngLike = None
                         ) -> np.ndarray:
    r"""The majority-vote attacker's sources on a social graph: for every person, ``k`` *other*
    people drawn uniformly at random without replacement among those within path length ``r``
    (Meehan et al. 2022, Section 5, Twitch: no privileged information, so the 25 sources are
    random neighbours). Returns an ``(n, k)`` index array padded with -1 where fewer than ``k``
    people are that close, the input of :func:`shuffle_lib.attacks.vulnerable`. The balls are
    those of :func:`groups_from_graph` (sparse powers of the adjacency matrix; their memory is the
    sum of the ball sizes). ``n * k`` is at most ``10**6`` (``MAX_GRAPH_NEAREST``),
    checked before any work; before each product that grows the balls by one hop, the entries
    it can produce, :math:`\sum_i\sum_{j\in B_i}(\deg j+1)`, must be at most ``10**7``
    (``MAX_GRAPH_REACH``; hubs within ``r - 1`` hops of many people break it, e.g. a star of
    ``10**4`` leaves at ``r = 2``).

    >>> graph_attack_sources(nx.path_graph(3), 1, k=2, rng=0)[[0, 2]].tolist()
    [[1, -1], [1, -1]]
    """
    n, size = _check_graph_listing(graph, k, "sources")
    hops = check_integer(r, "r", 0)
    adjacency = _graph_csr(graph, "graph")
    gen = as_rng(rng)
    identity = sparse.eye_array(n, dtype=bool, format="csr")
    step = (adjacency + identity).astype(bool)
    weight = np.diff(step.indptr).astype(np.float64)  # deg j + 1: entries row j adds to a product
    reach = identity
    for _ in range(min(hops, n)):  # the balls of radius r, as in groups_from_graph
        bound = float((reach @ weight).sum())
        if bound > MAX_GRAPH_REACH:
            raise ValueError(f"graph and r: the balls of radius r need a product of up to "
                             f"{bound:.3g} entries, more than {MAX_GRAPH_REACH} "
                             f"(MAX_GRAPH_REACH); lower r")
        grown = (reach @ step).astype(bool)
        if grown.nnz == reach.nnz:
            break
        reach = grown
    reach = sparse.csr_array(reach)
    reach.sort_indices()
    owners = np.repeat(np.arange(n), np.diff(reach.indptr))
    others = reach.indices.astype(np.int64)
    keep = owners != others
    owners, others = owners[keep], others[keep]
    order = np.argsort(2 * owners + gen.random(owners.size))  # by owner, then at random
    return _first_per_owner(owners[order], others[order], n, size)


def _first_per_owner(owners: np.ndarray, others: np.ndarray, n: int, size: int) -> np.ndarray:
    """An ``n`` x ``size`` table whose row i lists the first ``size`` of ``others`` paired with
    owner i, in the given order (``owners`` sorted), padded with -1."""
    starts = np.searchsorted(owners, np.arange(n))
    rank = np.arange(owners.size) - starts[owners]
    keep = rank < size
    out = np.full((n, size), -1, dtype=np.int64)
    out[owners[keep], rank[keep]] = others[keep]
    return out


def privacy_loss_from_table(likelihood: ArrayLike, groups: list[ArrayLike]) -> float:
    r"""The d_sigma privacy loss of any mechanism, read off Definition 4.3 of Meehan et al. (2022)
    from its table of output probabilities. Row ``k`` of ``likelihood`` is the law of the output
    when one fixed report sequence :math:`y` enters in the ``k``-th input order :math:`\sigma_k`
    (every permutation of ``0..n-1`` in lexicographic order, as
    :func:`shuffle_lib.inference.all_orders` lists them; ``n = len(groups)``):
    ``likelihood[k, w]`` is :math:`P[A(\sigma_k(y))=w]`. Returns

    .. math:: \max_i\ \max_{\sigma\approx_{G_i}\sigma'}\ \max_w\
              \log\frac{P[A(\sigma(y))=w]}{P[A(\sigma'(y))=w]},

    the smallest :math:`\alpha` for which the definition holds at this :math:`y`, over the
    outputs ``w`` possible under at least one of the two orders: ``inf`` (exactly) when an output
    is possible under one input order and impossible under a neighbour, 0 when every group is a
    single person. Sets of outputs need no separate check, since a ratio of two sums of
    non-negative terms is at most the largest ratio of matching terms. Neighbours
    :math:`\sigma\approx_{G_i}\sigma'` agree at every position outside :math:`G_i`
    (Definition 4.2), so for each group the input orders fall into classes of :math:`|G_i|!`
    mutual neighbours, and the loss is the largest spread of :math:`\log P` within a class, down
    one column.

    The outputs can be anything: the releases of a shuffler (for one that publishes ``y[o]`` with
    distinct reports, the table is :func:`shuffle_lib.inference.assignment_likelihood` of its
    law of orders), a post-processed release (the table times a stochastic matrix), a mixture of
    mechanisms (a mixture of tables) or the outputs of two independent runs (row-wise outer
    products). Rows must sum to 1 (within 1e-9). ``n <= 8`` and at most ``10**7`` cells
    (``n!`` rows times the outputs), both checked from the shapes before any copy; the work is a
    few passes over the table.

    >>> round(privacy_loss_from_table([[0.75, 0.25], [0.25, 0.75]], [[0, 1], [1, 0]]), 4)  # log 3
    1.0986
    """
    _check_sequence(groups, "groups")
    _count_at_most(groups, "groups", 8, "privacy_loss_from_table")
    n = len(groups)
    rows = math.factorial(n) if n else 0
    if isinstance(likelihood, np.ndarray) and likelihood.size > 10**7:
        raise ValueError(f"likelihood has {likelihood.size} cells, more than the limit 10**7")
    checked = check_groups(groups)
    table = check_array(likelihood, "likelihood", ndim=2, low=0.0)
    if table.size > 10**7:
        raise ValueError(f"likelihood has {table.size} cells, more than the limit 10**7")
    if table.shape[0] != rows:
        raise ValueError(f"likelihood needs one row per input order: {n}! = {rows} rows for "
                         f"{n} groups, got shape {table.shape}")
    if np.abs(table.sum(axis=1) - 1.0).max() > 1e-9:
        raise ValueError("every row of likelihood must be a probability law (sum to 1)")
    orders = _all_permutations(n)
    with np.errstate(divide="ignore"):
        logs = np.log(table)
    worst = 0.0
    for group in {tuple(sorted(g.tolist())) for g in checked}:
        if len(group) < 2:
            continue
        # the positions outside the group identify a class of mutual neighbours
        key = np.where(np.isin(np.arange(n), group), n, orders)
        code = key @ ((n + 1) ** np.arange(n, dtype=np.int64))  # n <= 8: fits int64
        by_class = np.argsort(code, kind="stable")
        starts = np.flatnonzero(np.r_[True, np.diff(code[by_class]) != 0])
        high = np.maximum.reduceat(logs[by_class], starts, axis=0)
        low = np.minimum.reduceat(logs[by_class], starts, axis=0)
        possible = high > -np.inf
        if (low[possible] == -np.inf).any():
            return math.inf
        if possible.any():
            worst = max(worst, float(np.max(high[possible] - low[possible])))
    return worst


def social_graph(n: int, m: int = 3, p: float = 0.5, rounds: int = 4, rng: RngLike = None
                 ) -> tuple[nx.Graph, np.ndarray]:
    r"""A stand-in for a friendship network with a sensitive bit that friends tend to share: the
    power-law cluster graph of Holme & Kim (2002) (``networkx.powerlaw_cluster_graph``: each new
    node links to ``m`` existing ones by preferential attachment and closes a triangle after each
    link with probability ``p``, so degrees have a power-law tail and friends of friends are often
    friends), and a value :math:`x_i\in\{0,1\}` obtained by smoothing a standard Gaussian field
    ``rounds`` times over the graph, :math:`u\leftarrow (u + Au)/(1+\deg)` (each node takes the
    mean over itself and its friends), and cutting it at its median. Used as a substitute for the
    Twitch graph of Meehan et al. (2022, Section 5), which is not shipped. networkx numbers the
    nodes by arrival (node 0 is among the oldest and best connected), which would make index
    order meaningful (ties broken by index would favour the oldest friend); the nodes are
    therefore relabelled by a uniformly random permutation drawn from ``rng``, so an index says
    nothing about a person.
    ``2 <= m + 1 <= n <= 10**4`` (``MAX_GRAPH_NODES``; about a second), ``0 <= p <= 1``,
    ``0 <= rounds <= 10**4``; ``rounds = 0`` gives values unrelated to the graph. Returns
    ``(graph, x)``.

    >>> graph, x = social_graph(50, rng=0)
    >>> graph.number_of_edges(), int(x.sum())
    (141, 25)
    """
    size = check_integer(n, "n", 2, MAX_GRAPH_NODES)
    links = check_integer(m, "m", 1, size - 1)
    closing = check_real(p, "p", low=0.0, high=1.0)
    steps = check_integer(rounds, "rounds", 0, 10**4)
    gen = as_rng(rng)
    grown = nx.powerlaw_cluster_graph(size, links, closing, seed=int(gen.integers(2**31)))
    label = gen.permutation(size)  # arrival time -> random index
    graph = nx.Graph()
    graph.add_nodes_from(range(size))
    graph.add_edges_from((int(label[u]), int(label[v])) for u, v in grown.edges)
    adjacency = nx.to_scipy_sparse_array(graph, nodelist=range(size), weight=None,
                                         format="csr", dtype=float)
    degree = np.asarray(adjacency.sum(axis=1)).ravel()
    field_ = gen.standard_normal(size)
    for _ in range(steps):
        field_ = (field_ + adjacency @ field_) / (1.0 + degree)
    return graph, (field_ > np.median(field_)).astype(np.int64)


def spectral_positions(graph: nx.Graph, dims: int = 16) -> np.ndarray:
    r"""Public coordinates for the people of a graph: the ``dims`` eigenvectors of the normalized
    adjacency :math:`D^{-1/2}AD^{-1/2}` with the largest eigenvalues after the first (the first
    only encodes the degrees), one row per node: people whose friends overlap get nearby rows.
    Used in place of Meehan et al.'s (2022, Section 5) public attribute for Twitch, a person's
    row of the adjacency matrix, when a model must predict from position. Every node needs a
    friend; ``1 <= dims <= n - 2`` and ``n <= 10**4`` (``MAX_GRAPH_NODES``; seconds). Computed
    with ``scipy.sparse.linalg.eigsh`` from a fixed start vector (the signs of the columns are
    arbitrary).

    >>> spectral_positions(nx.cycle_graph(8), 2).shape
    (8, 2)
    """
    from scipy.sparse.linalg import eigsh

    check_instance(graph, "graph", nx.Graph)
    n = graph.number_of_nodes()
    if n > MAX_GRAPH_NODES:
        raise ValueError(f"graph has {n} nodes, more than {MAX_GRAPH_NODES} (MAX_GRAPH_NODES)")
    adjacency = _graph_csr(graph, "graph").astype(float)
    if n < 3:
        raise ValueError(f"graph must have at least 3 nodes, got {n}")
    size = check_integer(dims, "dims", 1, n - 2)
    degree = np.asarray(adjacency.sum(axis=1)).ravel()
    if (degree == 0).any():
        raise ValueError(f"every node of graph needs a friend; node {int(np.argmin(degree))} "
                         f"has none")
    scale = sparse.diags_array(1.0 / np.sqrt(degree))
    normalized = scale @ adjacency @ scale
    start = np.linspace(1.0, 2.0, n)
    values, vectors = eigsh(normalized, k=size + 1, which="LA", v0=start)
    order = np.argsort(values)[::-1]
    return vectors[:, order[1:]]
