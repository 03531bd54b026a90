r"""Profile-based privacy (Geumlek & Chaudhuri, ISIT 2019).

A *profile* is a data-generating distribution over ``d`` categories; a :class:`ProfileGraph`
lists ``k`` profiles and the edges between the pairs that must stay indistinguishable. A
mechanism here is one row-stochastic ``d x d`` channel per profile (``matrices[i]`` is used by
people whose data come from profile ``i``); it is :math:`(G,\varepsilon)`-profile-private when for
every edge :math:`(i,j)` and output :math:`y`,
:math:`(P_iA^i)_y \le e^{\varepsilon}(P_jA^j)_y` (Definition 2). For bits (``d = 2``, category 1 is
the bit 1) the channels are flips: a bit is negated with probability ``flips[i]``.

Every solver's answer is *certified*: :func:`profile_privacy_loss` is evaluated exactly on the
returned channels, and if the solver's tolerance left a violation, the channels are mixed with
the uninformative channel by the smallest weight that removes it (mixing with a constant output
distribution moves every likelihood ratio towards 1).

Large budgets: the linear programs are solved at :math:`\min(\varepsilon,` ``LP_EPS_CAP``
:math:`)` with ``LP_EPS_CAP = 20`` (beyond, the coefficient :math:`e^\varepsilon` makes the LP
solvers fail), and the closed forms evaluated at :math:`\min(\varepsilon,` ``EXP_EPS_CAP``
:math:`)` with ``EXP_EPS_CAP = 700`` (beyond, :math:`e^\varepsilon` overflows). A mechanism
private at the cap is private at every larger :math:`\varepsilon`, and the cap only matters where
one output probability must stay within :math:`e^{-\text{cap}}` (about 2e-9, resp. 1e-304) of
zero: flips and off-diagonal entries then differ from the exact optimum by about that much,
the size of the solvers' own tolerance (resp. below any float accuracy).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components

from shuffle_lib._lexicographic import Polytope, lexicographic_projection
from shuffle_lib._validation import (
    RngLike,
    as_rng,
    check_array,
    check_instance,
    check_real,
)

_SIMPLEX_TOL = 1e-9
LP_EPS_CAP = 20.0  # the linear programs are solved at min(eps, LP_EPS_CAP)
EXP_EPS_CAP = 700.0  # the closed forms are evaluated at min(eps, EXP_EPS_CAP): e^eps stays finite


def _check_eps(eps: float) -> float:
    """A budget: a real number > 0 (huge values are allowed; see the module's note on caps)."""
    return check_real(eps, "eps", low=0.0, low_open=True)


def _bernoulli(value: float, name: str) -> float:
    number = check_real(value, name)
    if not 0 <= number <= 1:
        raise ValueError(f"{name} must be a Bernoulli parameter in [0, 1], got {value!r}")
    return number


def _indices(value: ArrayLike, name: str, size: int, what: str) -> np.ndarray:
    """``value`` as an int64 array of indices in 0..size-1 (possibly empty); an entry that is not
    an integer (a float, even 1.0, a bool, a string) is refused, never truncated."""
    arr = check_array(value, name, integer=True, allow_empty=True)
    if arr.size and not np.issubdtype(np.asarray(value).dtype, np.integer):
        raise TypeError(f"{name} must hold integers, got {value!r}")
    if ((arr < 0) | (arr >= size)).any():
        raise ValueError(f"{name} must hold {what} in 0..{size - 1}, got {value!r}")
    return arr


@dataclass(frozen=True)
class ProfileGraph:
    """Profiles (a ``(k, d)`` array of categorical distributions, or a 1-D array of Bernoulli
    parameters :math:`p_i = P[x = 1]`) and the edges between sensitive pairs (Geumlek &
    Chaudhuri 2019, Definition 2). An empty edge list is allowed: nothing is sensitive, and every
    mechanism returns the identity channel. Edges are pairs of integer profile numbers (a float
    such as 1.0 is refused, not truncated).

    >>> g = ProfileGraph([0.2, 0.5, 0.9], [(0, 1), (1, 2)])
    >>> g.profiles.round(12).tolist(), g.edges.tolist()
    ([[0.8, 0.2], [0.5, 0.5], [0.1, 0.9]], [[0, 1], [1, 2]])
    """

    profiles: ArrayLike
    edges: ArrayLike

    def __post_init__(self) -> None:
        rows = check_array(self.profiles, "profiles")
        if rows.ndim == 1:
            rows = np.column_stack([1 - rows, rows])
        if rows.ndim != 2 or rows.shape[1] < 2:
            raise ValueError(f"profiles must be a (k, d) array with d >= 2 or k Bernoulli "
                             f"parameters, got shape {np.shape(self.profiles)}")
        if (rows < -_SIMPLEX_TOL).any():
            raise ValueError("profiles must hold non-negative probabilities")
        if not np.allclose(rows.sum(axis=1), 1.0, atol=_SIMPLEX_TOL, rtol=0):
            raise ValueError(f"profiles: every profile must sum to 1, got sums {rows.sum(axis=1)}")
        pairs = _indices(self.edges, "edges", rows.shape[0], "endpoints (profile numbers)")
        if pairs.size == 0:
            pairs = pairs.reshape(0, 2)
        if pairs.ndim != 2 or pairs.shape[1] != 2:
            raise ValueError(f"edges must be a list of pairs (shape (m, 2)), got shape "
                             f"{pairs.shape}")
        if (pairs[:, 0] == pairs[:, 1]).any():
            raise ValueError("self-loops are not allowed: a profile is always like itself")
        object.__setattr__(self, "profiles", np.clip(rows, 0.0, 1.0))
        object.__setattr__(self, "edges", np.unique(np.sort(pairs, axis=1), axis=0))

    @property
    def k(self) -> int:
        """Number of profiles."""
        return self.profiles.shape[0]

    @property
    def d(self) -> int:
        """Number of categories."""
        return self.profiles.shape[1]

    def components(self) -> np.ndarray:
        """Connected-component label of every profile (isolated profiles get their own).

        >>> ProfileGraph([0.2, 0.5, 0.9], [(0, 1)]).components().tolist()
        [0, 0, 1]
        """
        adjacency = coo_matrix((np.ones(len(self.edges)), tuple(self.edges.T)),
                               shape=(self.k, self.k))
        return connected_components(adjacency, directed=False)[1]


def _as_bernoulli(graph: ProfileGraph) -> np.ndarray:
    check_instance(graph, "graph", ProfileGraph)
    if graph.d != 2:
        raise ValueError(f"a one-bit mechanism needs Bernoulli profiles (d = 2), got d = {graph.d}")
    return graph.profiles[:, 1]


def flip_channels(flips: ArrayLike) -> np.ndarray:
    """The ``(k, 2, 2)`` channels of bit flips: keep with probability ``1 - f``, negate with
    probability ``f``.

    >>> flip_channels([0.25]).tolist()
    [[[0.75, 0.25], [0.25, 0.75]]]
    """
    f = np.atleast_1d(check_array(flips, "flips", low=0.0, high=1.0))
    if f.ndim != 1:
        raise ValueError(f"flips must be one flip probability per profile (1-D), got shape "
                         f"{f.shape}")
    return np.stack([np.column_stack([1 - f, f]), np.column_stack([f, 1 - f])], axis=1)


def _stochastic(matrices: ArrayLike, name: str) -> np.ndarray:
    """A ``(k, d, m)`` stack of channels whose rows are probability distributions."""
    mats = check_array(matrices, name, ndim=3)
    if (mats < -_SIMPLEX_TOL).any() or not np.allclose(mats.sum(axis=2), 1.0, atol=1e-7, rtol=0):
        raise ValueError(f"{name}: every channel row must be a probability distribution")
    return np.clip(mats, 0.0, None)


def _check_channels(graph: ProfileGraph, matrices: ArrayLike, name: str = "matrices"
                    ) -> np.ndarray:
    check_instance(graph, "graph", ProfileGraph)
    mats = _stochastic(matrices, name)
    if mats.shape[:2] != (graph.k, graph.d):
        raise ValueError(f"{name}: need one {graph.d} x m channel per profile ({graph.k} of "
                         f"them), got shape {mats.shape}")
    return mats


def output_laws(graph: ProfileGraph, matrices: ArrayLike) -> np.ndarray:
    """Output distribution of every profile, :math:`P_iA^i`, shape ``(k, m)``.

    >>> output_laws(ProfileGraph([0.2], []), flip_channels([0.5])).tolist()
    [[0.5, 0.5]]
    """
    mats = _check_channels(graph, matrices)
    return np.einsum("kd,kde->ke", graph.profiles, mats)


def expected_accuracy(graph: ProfileGraph, matrices: ArrayLike, prior: ArrayLike) -> float:
    r"""Probability of reporting the true value, :math:`\sum_i \pi_i \sum_x P_i(x) A^i_{xx}`,
    for profiles drawn from ``prior`` (square channels; the objective ``"expected_accuracy"`` of
    :func:`smooth_categorical`).

    >>> round(expected_accuracy(ProfileGraph([0.2], []), flip_channels([0.1]), [1.0]), 12)
    0.9
    """
    mats = _check_channels(graph, matrices)
    weights = _check_prior(graph, prior)
    if mats.shape[2] != graph.d:
        raise ValueError("expected accuracy needs square channels (outputs = categories)")
    kept = np.einsum("kd,kd->k", graph.profiles, np.diagonal(mats, axis1=1, axis2=2))
    return float(weights @ kept)


def _check_prior(graph: ProfileGraph, prior: ArrayLike) -> np.ndarray:
    weights = check_array(prior, "prior")
    if weights.shape != (graph.k,) or (weights < 0).any() or not np.isclose(weights.sum(), 1):
        raise ValueError(f"prior must be a distribution over the {graph.k} profiles")
    return weights


def independent_releases(graph: ProfileGraph, first: ArrayLike, second: ArrayLike
                         ) -> tuple[ProfileGraph, np.ndarray]:
    r"""Two independent samples from the same profile, privatized by ``first`` and ``second``, as
    one release: the product profiles :math:`P_i \otimes P_i` on pairs of values and the product
    channel on pairs of outputs (Observation 4 of Geumlek & Chaudhuri 2019 bounds its loss by the
    sum).

    >>> pair, channel = independent_releases(ProfileGraph([0.5], []), flip_channels([0.0]),
    ...                                      flip_channels([0.0]))
    >>> pair.d, channel.shape
    (4, (1, 4, 4))
    """
    a, b = _check_channels(graph, first, "first"), _check_channels(graph, second, "second")
    k, d = graph.k, graph.d
    pairs = ProfileGraph(np.einsum("ka,kb->kab", graph.profiles, graph.profiles).reshape(k, d * d),
                         graph.edges)
    channel = np.einsum("kac,kbe->kabce", a, b).reshape(k, d * d, -1)
    return pairs, channel


def parallel_releases(graph: ProfileGraph, first: ArrayLike, second: ArrayLike,
                      prior: ArrayLike) -> tuple[ProfileGraph, np.ndarray]:
    r"""Two independent profile selections released together, seen from the first: person 1's
    profile :math:`i` is the secret; person 2's profile :math:`J` is drawn from ``prior``
    independently, person 2's value from :math:`P_J`, and the two values are privatized by
    ``first`` (with profile :math:`i`) and ``second`` (with profile :math:`J`). Returns the
    profiles of the joint input :math:`(x_1, (J, x_2))` given :math:`i`, namely
    :math:`P_i \otimes (\pi_J P_J(x_2))`, and the channel
    :math:`A_1^i(x_1,\cdot)\otimes A_2^J(x_2,\cdot)` on pairs of outputs. Observation 5 of Geumlek &
    Chaudhuri 2019 (parallel composition): its level is the first mechanism's alone, because the
    second report's law, :math:`\sum_j \pi_j P_jA_2^j`, is the same whatever :math:`i` is. Call it
    with the roles exchanged for person 2's secret.

    >>> joint, channel = parallel_releases(ProfileGraph([0.5], []), flip_channels([0.0]),
    ...                                    flip_channels([0.0]), [1.0])
    >>> joint.d, channel.shape
    (4, (1, 4, 4))
    """
    a, b = _check_channels(graph, first, "first"), _check_channels(graph, second, "second")
    weights = _check_prior(graph, prior)
    k, d = graph.k, graph.d
    second_input = (weights[:, None] * graph.profiles).ravel()  # the pair (J, x2)
    joint = ProfileGraph(np.einsum("ka,s->kas", graph.profiles, second_input).reshape(k, -1),
                         graph.edges)
    second_channel = b.reshape(k * d, -1)  # row (j, x2) is A_2^j(x2, .)
    channel = np.einsum("kac,se->kasce", a, second_channel).reshape(k, d * k * d, -1)
    return joint, channel


def same_sample_releases(first: ArrayLike, second: ArrayLike) -> np.ndarray:
    """One sample privatized twice, by ``first`` and then ``second`` independently: a single
    channel whose outputs are pairs (Geumlek & Chaudhuri 2019, Observation 13: no composition
    result).

    >>> same_sample_releases(flip_channels([0.0]), flip_channels([0.0])).shape
    (1, 2, 4)
    """
    a, b = _stochastic(first, "first"), _stochastic(second, "second")
    if a.shape[:2] != b.shape[:2]:
        raise ValueError(f"first and second must share profiles and inputs, got {a.shape}, "
                         f"{b.shape}")
    return np.einsum("kam,kab->kamb", a, b).reshape(a.shape[0], a.shape[1], -1)


def profile_privacy_loss(graph: ProfileGraph, matrices: ArrayLike) -> float:
    r"""The exact privacy level of per-profile channels (``(k, d, m)``: ``m`` outputs, so a joint
    release of several reports is one channel with the product output space): the largest
    :math:`|\log (P_iA^i)_y - \log (P_jA^j)_y|` over edges :math:`(i,j)` and outputs :math:`y`
    (Geumlek & Chaudhuri 2019, Definition 2); 0 without edges, infinite when one side can emit an
    output the other never does. This is the certificate every mechanism is checked against.

    >>> g = ProfileGraph([0.0, 1.0], [(0, 1)])
    >>> round(profile_privacy_loss(g, flip_channels([0.25, 0.25])), 6) == round(math.log(3), 6)
    True
    """
    mats = _check_channels(graph, matrices)
    if len(graph.edges) == 0:
        return 0.0
    laws = output_laws(graph, mats)
    a, b = laws[graph.edges[:, 0]], laws[graph.edges[:, 1]]
    both_zero = (a == 0) & (b == 0)
    with np.errstate(divide="ignore"):
        gap = np.abs(np.log(np.where(both_zero, 1.0, a)) - np.log(np.where(both_zero, 1.0, b)))
    return float(gap.max())


def _certify(graph: ProfileGraph, mats: np.ndarray, eps: float) -> np.ndarray:
    """Mix the channels with the uniform-output channel by the smallest weight ``tau`` that makes
    every edge ratio at most ``e^eps`` (a no-op when the solver's answer already is private).
    With ``c = tau / m`` (``m`` outputs) added to both sides,
    ``(1 - tau) a + c <= e^eps ((1 - tau) b + c)`` holds for
    ``tau >= (a - e^eps b) / (a - e^eps b + (e^eps - 1) / m)``."""
    mats = np.clip(mats, 0.0, None)
    mats /= mats.sum(axis=2, keepdims=True)
    if len(graph.edges) == 0 or profile_privacy_loss(graph, mats) <= eps:
        return mats
    laws = output_laws(graph, mats)
    a = np.concatenate([laws[graph.edges[:, 0]], laws[graph.edges[:, 1]]])
    b = np.concatenate([laws[graph.edges[:, 1]], laws[graph.edges[:, 0]]])
    excess = np.clip(a - math.exp(eps) * b, 0.0, None)
    outputs = mats.shape[2]
    tau = float(np.max(excess / (excess + math.expm1(eps) / outputs))) * (1 + 1e-9) + 1e-15
    mixed = (1 - tau) * mats + tau / outputs
    if profile_privacy_loss(graph, mixed) > eps + 1e-12:
        raise RuntimeError("could not certify the solver's channels at the requested eps")
    return mixed


def _single_edge_flip(p_i: float, p_j: float, eps: float) -> float:
    """Smallest flip in [0, 1/2] meeting both output constraints of one edge, from the two
    equality points (each log-ratio is monotone in the flip; Geumlek & Chaudhuri 2019, proof of
    Theorem 6); evaluated at ``min(eps, EXP_EPS_CAP)``."""
    low, high = sorted((p_i, p_j))
    e = math.exp(min(eps, EXP_EPS_CAP))
    needed = 0.0
    if high > e * low:  # output 1: low + f (1 - 2 low) >= e^-eps (high + f (1 - 2 high))
        needed = max(needed, (high - e * low) / (2 * (high - e * low) + e - 1))
    if 1 - low > e * (1 - high):  # output 0, the same with the roles of 0 and 1 exchanged
        needed = max(needed, (low - e * high + e - 1) / (2 * (low - e * high) + e - 1))
    return min(needed, 0.5)


def two_profile_flip_bound(p_i: float, p_j: float, eps: float) -> float:
    r"""Observation 10 of Geumlek & Chaudhuri 2019 (closed form): for Bernoulli profiles with
    :math:`p_i \le p_j`, the flip probability (with :math:`E = e^\varepsilon`)

    .. math:: \max\Bigl\{0,\ \frac{p_j - E p_i}{2(p_j - E p_i) + E - 1},
              \ \frac{p_i - E p_j + E - 1}{2(p_i - E p_j) + E - 1}\Bigr\}

    meets both constraints of problem (4); each fraction is where one log-ratio equals
    :math:`\varepsilon`, and a fraction counts only when its constraint fails at flip 0 (the
    paper's condition on :math:`p_i, p_j` is garbled in the text; this is what its proof uses).
    Randomized response, :math:`1/(1+e^\varepsilon)`, is the case :math:`p_i = 0, p_j = 1`.
    Evaluated at :math:`\min(\varepsilon, 700)`: the flip then meets the constraints at every
    larger budget and is at most :math:`1/(e^{700}-1)\approx10^{-304}`.

    >>> round(two_profile_flip_bound(0.0, 1.0, math.log(3)), 12)
    0.25
    """
    low, high = _bernoulli(p_i, "p_i"), _bernoulli(p_j, "p_j")
    return _single_edge_flip(low, high, _check_eps(eps))


def _bit_polytope(p: np.ndarray, edges: np.ndarray, e: float) -> Polytope:
    """Problem (5) in the flips: for both orientations ``(a, b)`` of every edge,
    ``q_a <= e q_b`` and ``1 - q_a <= e (1 - q_b)`` with ``q = p + alpha (1 - 2p)``, and
    ``alpha <= 1/2`` (``alpha >= 0`` is implied by the polytope). A row that every flip in
    ``[0, 1/2]`` satisfies binds nothing; when its right-hand side is large (above 1e3, so only
    for ``e`` above about 1e3) it is dropped, because such numbers upset the projection's
    solver."""
    k = p.size
    slope = 1 - 2 * p
    oriented = np.concatenate([edges, edges[:, ::-1]])
    a, b = oriented[:, 0], oriented[:, 1]
    rows = np.zeros((len(oriented), k))
    np.add.at(rows, (np.arange(len(oriented)), a), slope[a])
    np.add.at(rows, (np.arange(len(oriented)), b), -e * slope[b])
    G = np.vstack([rows, -rows, np.eye(k)])
    h = np.r_[e * p[b] - p[a], (e - 1) - e * p[b] + p[a], np.full(k, 0.5)]
    binding = (np.clip(G, 0.0, None).sum(axis=1) / 2 > h) | (h <= 1e3)
    return Polytope(G[binding], h[binding], np.zeros((0, k)), np.zeros(0))


def _channel_polytope(profiles: np.ndarray, edges: np.ndarray, e: float) -> Polytope:
    """Problem (6) on the stacked entries ``A[i, x, y]``: for both orientations ``(a, b)`` of every
    edge and every output ``y``, ``(P_a A^a)_y <= e (P_b A^b)_y``; rows sum to 1 (entries are
    non-negative in every polytope)."""
    k, d = profiles.shape
    oriented = np.concatenate([edges, edges[:, ::-1]])
    rows = np.zeros((len(oriented), d, k, d, d))
    for r, (a, b) in enumerate(oriented):
        for y in range(d):
            rows[r, y, a, :, y] += profiles[a]
            rows[r, y, b, :, y] -= e * profiles[b]
    size = k * d * d
    sums = np.kron(np.eye(k * d), np.ones(d))
    # a value a profile never produces enters no law: its row is pinned to the identity row, the
    # choice every stage of smooth_categorical would make (no off-diagonal mass, nearest to I)
    unused = np.flatnonzero(profiles.ravel() == 0)
    pinned = np.zeros((unused.size * d, size))
    pinned[np.arange(unused.size * d), (unused[:, None] * d + np.arange(d)).ravel()] = 1
    identity_rows = np.eye(d)[unused % d].ravel()
    return Polytope(rows.reshape(-1, size), np.zeros(len(oriented) * d),
                    np.vstack([sums, pinned]), np.r_[np.ones(k * d), identity_rows])


def two_profile_flip(p_i: float, p_j: float, eps: float) -> float:
    r"""Algorithm 1 of Geumlek & Chaudhuri 2019: the smallest flip probability :math:`\alpha` that
    makes a bit from :math:`\mathrm{Bern}(p_i)` and one from :math:`\mathrm{Bern}(p_j)`
    indistinguishable, solving the linearly constrained problem (4) with an LP solver (the
    constraints of :func:`smooth_one_bit`'s problem (5) with both flips equal). The answer is
    certified (at :math:`\min(\varepsilon,` ``LP_EPS_CAP`` :math:`)`, see the module's note).

    >>> round(two_profile_flip(0.3, 0.4, 1.0), 6)
    0.0
    """
    graph = ProfileGraph([_bernoulli(p_i, "p_i"), _bernoulli(p_j, "p_j")], [(0, 1)])
    eps_val = min(_check_eps(eps), LP_EPS_CAP)
    per_profile = _bit_polytope(_as_bernoulli(graph), graph.edges, math.exp(eps_val))
    # one shared flip: the two flip columns of problem (5) add up to the one of problem (4)
    shared = Polytope(per_profile.G.sum(axis=1, keepdims=True), per_profile.h,
                      np.zeros((0, 1)), np.zeros(0))
    flip = lexicographic_projection(shared, [("linear", np.ones(1))], np.zeros(1),
                                    "two-profile flip")
    value = float(np.clip(flip[0], 0.0, 0.5))
    return float(_certify(graph, flip_channels([value, value]), eps_val)[0, 0, 1])


def one_bit_cluster(graph: ProfileGraph, eps: float) -> np.ndarray:
    """Algorithm 2 of Geumlek & Chaudhuri 2019 (One Bit Cluster): every profile flips with the
    largest single-edge flip (Algorithm 1) over the edges of its connected component; isolated
    profiles do not flip. Private because each log-ratio only shrinks as the flip grows towards 1/2
    (Theorem 6). Returns one flip probability per profile, certified at
    ``min(eps, EXP_EPS_CAP)`` (see the module's note).

    >>> one_bit_cluster(ProfileGraph([0.0, 1.0, 0.5], [(0, 1)]), math.log(3)).round(6).tolist()
    [0.25, 0.25, 0.0]
    """
    eps_val = min(_check_eps(eps), EXP_EPS_CAP)
    p = _as_bernoulli(graph)
    labels = graph.components()
    flips = np.zeros(graph.k)
    for i, j in graph.edges:  # a loop over edges: each needs its own small solve
        need = _single_edge_flip(float(p[i]), float(p[j]), eps_val)
        flips[labels == labels[i]] = np.maximum(flips[labels == labels[i]], need)
    certified = _certify(graph, flip_channels(flips), eps_val)
    return certified[:, 0, 1]


def smooth_one_bit(graph: ProfileGraph, eps: float) -> np.ndarray:
    r"""Algorithm 3 of Geumlek & Chaudhuri 2019 (Smooth One Bit): one flip probability per profile,
    minimizing the largest one subject to the edge constraints of problem (5), which are linear in
    the flips: with :math:`q_i = p_i + \alpha_i(1 - 2p_i)` the probability of output 1,
    :math:`q_i \le e^\varepsilon q_j` and :math:`1 - q_i \le e^\varepsilon(1 - q_j)` for both
    orientations of every edge, and :math:`0 \le \alpha_i \le 1/2`.

    Problem (5) usually has many optimal flip vectors (only the largest flip is pinned down), so
    the answer is made unique in three stages: (1) the paper's objective
    :math:`t^\ast = \min \max_i \alpha_i`; (2) among flips with
    :math:`\max_i\alpha_i\le t^\ast`, the smallest total flip :math:`\sum_i \alpha_i` (the
    expected share of corrupted reports when every profile is equally likely); (3) among those,
    the smallest :math:`\sum_i \alpha_i^2`, which is strictly convex and so has a single
    minimizer. Every stage is symmetric in the profiles, so relabelling them permutes the answer
    the same way. Stages (1)-(2) are LPs (HiGHS), stage (3) a Euclidean projection (Clarabel;
    see ``shuffle_lib._lexicographic`` for its accuracy); earlier stages are held within
    ``STAGE_SLACK`` (1e-9) of their optima, which can move the flip of a profile with :math:`p`
    within about 1e-6 of 1/2 by up to about 1e-3 (its report probabilities by about 1e-9). Raises
    ``RuntimeError`` if a solve fails. The answer is certified (at
    :math:`\min(\varepsilon,` ``LP_EPS_CAP`` :math:`)`, see the module's note).

    >>> smooth_one_bit(ProfileGraph([0.0, 1.0], [(0, 1)]), math.log(3)).round(6).tolist()
    [0.25, 0.25]
    """
    eps_val = min(_check_eps(eps), LP_EPS_CAP)
    p = _as_bernoulli(graph)
    if len(graph.edges) == 0:
        return np.zeros(graph.k)
    polytope = _bit_polytope(p, graph.edges, math.exp(eps_val))
    flips = lexicographic_projection(polytope, [("max", np.ones(graph.k)),
                                                ("linear", np.ones(graph.k))],
                                     np.zeros(graph.k), "Smooth One Bit")
    certified = _certify(graph, flip_channels(np.clip(flips, 0.0, 0.5)), eps_val)
    return certified[:, 0, 1]


def smooth_categorical(graph: ProfileGraph, eps: float, objective: str = "max_offdiag",
                       prior: ArrayLike | None = None) -> np.ndarray:
    r"""Algorithm 4 of Geumlek & Chaudhuri 2019 (Smooth Categorical): one row-stochastic ``d x d``
    channel per profile, subject to :math:`P_iA^i \le e^\varepsilon P_jA^j` elementwise for both
    orientations of every edge (problem (6)). Objectives: ``"max_offdiag"`` (the paper's choice)
    minimizes the largest off-diagonal entry, the worst chance of corrupting any value;
    ``"expected_accuracy"`` maximizes :math:`\sum_i \pi_i \sum_x P_i(x) A^i_{xx}`, the chance of
    reporting the true value under a prior :math:`\pi` on profiles (uniform by default), the
    refinement the paper suggests.

    Problem (6) has many optimal solutions (a row :math:`x` with :math:`P_i(x) = 0` does not even
    enter a constraint), so the answer is made unique in three stages: (1) the chosen objective;
    (2) among its optima, the other objective (expected accuracy after the largest off-diagonal
    entry, and the reverse); (3) among those, the channels closest to the identity,
    :math:`\min \sum_i \lVert A^i - I\rVert_F^2`, which is strictly convex and so has a single
    minimizer. Every stage is symmetric under relabelling the profiles (with the prior) and,
    simultaneously in every profile, the categories, so the answer follows any relabelling.
    Stages (1)-(2) are LPs (HiGHS), stage (3) a Euclidean projection (Clarabel; see
    ``shuffle_lib._lexicographic`` for its accuracy). The answer is certified (at
    :math:`\min(\varepsilon,` ``LP_EPS_CAP`` :math:`)`, see the module's note). Raises
    ``RuntimeError`` if a solve fails.

    >>> mats = smooth_categorical(ProfileGraph([0.0, 1.0], [(0, 1)]), math.log(3))
    >>> mats[0, 0].round(6).tolist(), mats[1, 1].round(6).tolist()  # the rows in use
    ([0.75, 0.25], [0.25, 0.75])
    """
    check_instance(graph, "graph", ProfileGraph)
    eps_val = min(_check_eps(eps), LP_EPS_CAP)
    if objective not in ("max_offdiag", "expected_accuracy"):
        raise ValueError(f"objective must be 'max_offdiag' or 'expected_accuracy', "
                         f"got {objective!r}")
    weights = _check_prior(graph, np.full(graph.k, 1 / graph.k) if prior is None else prior)
    if len(graph.edges) == 0:
        return np.broadcast_to(np.eye(graph.d), (graph.k, graph.d, graph.d)).copy()
    k, d = graph.k, graph.d
    polytope = _channel_polytope(graph.profiles, graph.edges, math.exp(eps_val))
    off_diagonal = np.tile(~np.eye(d, dtype=bool), (k, 1, 1)).ravel()
    inaccuracy = -(weights[:, None, None] * graph.profiles[:, :, None]
                   * np.eye(d)[None]).ravel()  # minus the expected accuracy, entry by entry
    stages = [("max", off_diagonal), ("linear", inaccuracy)]
    if objective == "expected_accuracy":
        stages.reverse()
    entries = lexicographic_projection(polytope, stages, np.tile(np.eye(d), (k, 1, 1)).ravel(),
                                       "Smooth Categorical")
    return _certify(graph, entries.reshape(k, d, d), eps_val)


def apply_flips(bits: ArrayLike, profile_index: ArrayLike, flips: ArrayLike,
                rng: RngLike = None) -> np.ndarray:
    """Privatize bits: person ``n`` negates ``bits[n]`` with probability
    ``flips[profile_index[n]]`` (Algorithms 1-3, last step).

    >>> apply_flips([0, 1, 1], [0, 0, 1], [0.0, 1.0], rng=0).tolist()
    [0, 1, 0]
    """
    f = flip_channels(flips)[:, 0, 1]
    b = _indices(bits, "bits", 2, "bits (0/1)")
    index = _indices(profile_index, "profile_index", f.size, "profile numbers (entries of flips)")
    if b.shape != index.shape:
        raise ValueError(f"bits must match profile_index in shape, got {b.shape} and "
                         f"{index.shape}")
    flip = as_rng(rng).random(b.shape) < f[index]
    return np.where(flip, 1 - b, b).astype(np.int64)


def apply_channel(values: ArrayLike, profile_index: ArrayLike, matrices: ArrayLike,
                  rng: RngLike = None) -> np.ndarray:
    """Privatize categories: person ``n`` reports a draw from row ``values[n]`` of
    ``matrices[profile_index[n]]`` (Algorithm 4, last step). Vectorized: one uniform per person
    against the cumulative row.

    >>> apply_channel([0, 1], [0, 0], [np.eye(2)], rng=0).tolist()
    [0, 1]
    """
    mats = _stochastic(matrices, "matrices")
    x = _indices(values, "values", mats.shape[1], "categories (rows of matrices)")
    index = _indices(profile_index, "profile_index", mats.shape[0],
                     "profile numbers (channels of matrices)")
    if x.shape != index.shape:
        raise ValueError("values and profile_index must have the same shape")
    cumulative = np.cumsum(mats[index, x], axis=-1)
    draw = as_rng(rng).random(x.shape)[..., None]
    return np.minimum((draw >= cumulative).sum(axis=-1), mats.shape[2] - 1)
