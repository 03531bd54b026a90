"""The divergences of a (D, d_X, d_T) DP definition (Bailie, Gong & Meng 2023): dataset distances
and output divergences, against brute force and closed forms."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from stat_checks import shifted_discrete_gaussians

from shuffle_lib.accounting.finite import renyi_divergence
from shuffle_lib.divergences import (
    hamming_set_distance,
    normalized_renyi_divergence,
    symmetric_difference_distance,
    unordered_dataset,
)


def test_renyi_near_order_one() -> None:
    # the log1p/expm1 branch: the alpha -> 1 limit is KL, and equal laws give exactly 0
    p, q = np.array([0.6, 0.3, 0.1]), np.array([0.2, 0.5, 0.3])
    kl = float(np.sum(p * np.log(p / q)))
    assert renyi_divergence(p, q, 1 + 1e-7) == pytest.approx(kl, rel=1e-5)
    assert renyi_divergence(p, p, 1 + 1e-9) == 0.0
    assert renyi_divergence(p, q, 2.0) == pytest.approx(math.log(np.sum(p**2 / q)))


@pytest.mark.parametrize("sigma2", [0.3, 1.0, 4.0, 25.0])
def test_normalized_renyi_of_discrete_gaussians(sigma2: float) -> None:
    # N_Z(0, s2) vs N_Z(1, s2): D_alpha <= alpha / (2 s2), with equality at alpha = 2
    p, q = shifted_discrete_gaussians(sigma2)
    assert normalized_renyi_divergence(p, q) ** 2 == pytest.approx(1 / (2 * sigma2), rel=1e-6)


def test_normalized_renyi_randomized_response() -> None:
    # pure eps-DP implies (eps^2 / 2)-zCDP (Bun & Steinke 2016, Proposition 3.3)
    for eps in (0.1, 1.0, 3.0):
        rr = np.array([math.exp(eps), 1.0]) / (1 + math.exp(eps))
        value = normalized_renyi_divergence(rr, rr[::-1])
        assert 0 < value**2 <= eps**2 / 2 + 1e-12
        dense = max(renyi_divergence(rr, rr[::-1], a) / a for a in np.linspace(1.0001, 200, 20_000))
        assert value**2 >= dense - 1e-9


def test_dataset_distances() -> None:
    x = [("MA", 2, "own"), ("TX", 1, "rent"), ("MA", 2, "rent")]
    y = [("MA", 2, "rent"), ("TX", 1, "rent"), ("MA", 2, "rent")]
    assert unordered_dataset(x) != unordered_dataset(y)
    assert unordered_dataset(x) == unordered_dataset(x[::-1])
    assert hamming_set_distance(x, y) == 1.0 and symmetric_difference_distance(x, y) == 2
    assert hamming_set_distance(x, x[::-1]) == 0.0
    assert hamming_set_distance(x, x[:2]) == math.inf
    assert symmetric_difference_distance(x, x[:2]) == 1


def test_hamming_is_the_shortest_path_of_replacements(rng: np.random.Generator) -> None:
    # breadth-first search over "replace one record" moves on multisets of 3 records from {0,1,2}
    datasets = sorted({tuple(sorted(c)) for c in itertools.product(range(3), repeat=3)})
    for start in datasets:
        dist = {start: 0}
        frontier = [start]
        while frontier:
            nxt = []
            for d in frontier:
                for i, v in itertools.product(range(3), range(3)):
                    e = tuple(sorted((*d[:i], v, *d[i + 1:])))
                    if e not in dist:
                        dist[e] = dist[d] + 1
                        nxt.append(e)
            frontier = nxt
        for end, steps in dist.items():
            rows_a, rows_b = [(v,) for v in start], [(v,) for v in end]
            assert hamming_set_distance(rows_a, rows_b) == steps
            assert symmetric_difference_distance(rows_a, rows_b) == 2 * steps


def test_bad_input_raises() -> None:
    with pytest.raises(ValueError, match="max_alpha"):
        normalized_renyi_divergence([0.5, 0.5], [0.5, 0.5], max_alpha=1.0)
    with pytest.raises(ValueError, match="same length"):
        normalized_renyi_divergence([0.5, 0.5], [1.0])


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: unordered_dataset("ab"), "rows must be an iterable of rows"),
        (lambda: unordered_dataset(None), "rows must be an iterable of rows"),
        (lambda: unordered_dataset(["ab", "cd"]), "rows must hold rows that are sequences"),
        (lambda: unordered_dataset([(1,), ("a",)]), "rows must hold records that can be ordered"),
        (lambda: unordered_dataset([([1],)]), "rows must hold rows of hashable fields"),
        (lambda: symmetric_difference_distance("x", [(1,)]), "x must be an iterable"),
        (lambda: symmetric_difference_distance([(1,)], 3.5), "y must be an iterable"),
        (lambda: hamming_set_distance(None, [(1,)]), "x must be an iterable"),
        (lambda: hamming_set_distance([(1,)], [2]), "y must hold rows"),
        (lambda: normalized_renyi_divergence(["a", "b"], [0.5, 0.5]), "p must be"),
        (lambda: normalized_renyi_divergence([0.5, 0.5], [0.5, 0.5], max_alpha="9"), "max_alpha"),
    ],
)
def test_rows_and_laws_of_the_wrong_type_are_refused(call, message: str) -> None:
    with pytest.raises(TypeError, match=message):
        call()


def test_rows_may_be_lists_or_array_rows() -> None:
    assert symmetric_difference_distance([[1, 2], [3, 4]], np.array([[3, 4], [1, 2]])) == 0
    assert hamming_set_distance([[1, 2]], [(1, 3)]) == 1.0


def test_normalized_renyi_never_uses_orders_past_max_alpha() -> None:
    # the grid started at 1 + 1e-6 even when max_alpha was closer to 1 (scipy then refused the
    # reversed bracket with its own error); max_alpha above the largest Rényi order is refused
    # naming max_alpha, not alpha
    p, q = [0.75, 0.25], [0.25, 0.75]
    for max_alpha in (1 + 1e-9, 1 + 1e-7):
        value = normalized_renyi_divergence(p, q, max_alpha=max_alpha)
        orders = 1 + np.geomspace(1e-12, max_alpha - 1, 50)
        # the supremum over (1, max_alpha] of D_alpha / alpha, each order from the definition
        best = max(max(renyi_divergence(p, q, a), renyi_divergence(q, p, a)) / a for a in orders)
        assert value == pytest.approx(math.sqrt(best), rel=1e-6)
    with pytest.raises(ValueError, match="max_alpha"):
        normalized_renyi_divergence(p, q, max_alpha=1e301)
