r"""Privacy auditing: lower bounds on epsilon from an actual attack, and exact audits.

A mechanism :math:`M` is :math:`(\varepsilon, \delta)`-DP on neighbours :math:`x, x'` only if
every test that decides between :math:`M(x)` and :math:`M(x')` has error rates with
:math:`\text{FPR} + e^\varepsilon\,\text{FNR} \ge 1 - \delta` and
:math:`\text{FNR} + e^\varepsilon\,\text{FPR} \ge 1 - \delta` (Kairouz, Oh & Viswanath 2015,
Theorem 2.1; Wasserman & Zhou 2010). So a test with small errors certifies
:math:`\varepsilon \ge \ln((1 - \delta - \text{FNR})/\text{FPR})`. Audits run such a test on
samples: the error rates are estimated, so they are replaced by Clopper-Pearson upper confidence
bounds (Jagielski, Ullman & Oprea 2020; Nasr et al. 2021), and the test itself (a threshold on a
score) is chosen on samples that are not used to count its errors, so the bound keeps its
confidence.

Where the output law is finite, :func:`exact_epsilon` and :func:`worst_pair` give the exact
:math:`\varepsilon(\delta)` instead (through :mod:`shuffle_lib.accounting.finite`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sized
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike
from scipy.stats import beta

from shuffle_lib._validation import (
    RngLike,
    as_rng,
    check_array,
    check_bool,
    check_instance,
    check_integer,
    check_real,
)
from shuffle_lib.accounting.finite import (
    _check_pair_terms,
    _worst_pair,
    check_distribution_pair,
    epsilon_for_delta,
)

Sampler = Callable[[int, int, np.random.Generator], ArrayLike]

DIRECTIONS = ("greater", "less")
"""The two directions of a threshold test (:class:`AttackOutcome`)."""

MAX_AUDIT_TRIALS = 5 * 10**5
"""Largest ``trials`` of :func:`audit`, where it answers in a few seconds: two random permutations
of ``2 * trials`` scores, and with continuous scores one Clopper-Pearson quantile (a few
microseconds) per distinct error count, up to ``trials + 1`` of them. The book's full-scale audits
use at most 200,000."""


def _check_level(value: float, name: str, closed_low: bool) -> float:
    return check_real(value, name, low=0, high=1, low_open=not closed_low, high_open=True)


def _clopper_pearson(k: np.ndarray, trials: int, level: float) -> np.ndarray:
    """:func:`clopper_pearson_upper` on checked arguments (``k`` a float array)."""
    with np.errstate(invalid="ignore"):
        upper = beta.ppf(level, k + 1, trials - k)
    return np.where(k >= trials, 1.0, upper)


def clopper_pearson_upper(successes: ArrayLike, trials: int, level: float) -> np.ndarray:
    r"""One-sided Clopper-Pearson upper confidence bound on a binomial rate: the largest
    :math:`r` with :math:`\Pr(\mathrm{Bin}(n, r) \le k) \ge 1 - \text{level}`, that is the
    ``level`` quantile of :math:`\mathrm{Beta}(k + 1, n - k)` (1 when :math:`k = n`)
    (Clopper & Pearson 1934). Vectorized over ``successes``: whole numbers in ``[0, trials]``;
    ``trials`` an integer ``>= 0``; ``level`` in ``(0, 1)``.

    >>> float(clopper_pearson_upper(0, 100, 0.95).round(4))
    0.0295
    """
    n = check_integer(trials, "trials", 0)
    k = check_array(successes, "successes", integer=True, low=0, high=n).astype(float)
    return _clopper_pearson(k, n, _check_level(level, "level", closed_low=False))


def _bound(fp: ArrayLike, fn: ArrayLike, trials: int, delta: float, confidence: float
           ) -> np.ndarray:
    """Vectorized :func:`epsilon_lower_bound` (arguments already checked)."""
    level = 1 - (1 - confidence) / 2
    fpr = _clopper_pearson(np.asarray(fp, dtype=float), trials, level)
    fnr = _clopper_pearson(np.asarray(fn, dtype=float), trials, level)
    return _bound_from_rates(fpr, fnr, delta)


def _bound_from_rates(fpr: np.ndarray, fnr: np.ndarray, delta: float) -> np.ndarray:
    """:func:`_bound` from the two Clopper-Pearson upper rates."""
    best = np.zeros(np.broadcast(fpr, fnr).shape)
    with np.errstate(divide="ignore", invalid="ignore"):
        for errors, other in ((fpr, fnr), (fnr, fpr)):
            top = 1 - delta - other
            term = np.where(top > 0, np.log(np.where(top > 0, top, 1.0)) - np.log(errors), 0.0)
            best = np.maximum(best, term)
    return best


def epsilon_lower_bound(false_positives: int, false_negatives: int, trials: int,
                        delta: float = 0.0, confidence: float = 0.95) -> float:
    r"""Lower bound on :math:`\varepsilon` from a distinguishing test's errors. With ``trials``
    runs under each of two neighbouring inputs, :math:`\overline{\text{FPR}}` and
    :math:`\overline{\text{FNR}}` are one-sided Clopper-Pearson upper bounds on the two error
    rates, each at level :math:`1 - (1 - \text{confidence})/2`, so that both hold together with
    probability at least ``confidence``; then

    .. math:: \varepsilon \ge \max\Bigl\{0,\ \ln\frac{1 - \delta - \overline{\text{FNR}}}
              {\overline{\text{FPR}}},\ \ln\frac{1 - \delta - \overline{\text{FPR}}}
              {\overline{\text{FNR}}}\Bigr\},

    a term counting only when its numerator is positive (the hypothesis-testing reading of
    :math:`(\varepsilon,\delta)`-DP, Kairouz, Oh & Viswanath 2015, Theorem 2.1; used for audits
    by Jagielski, Ullman & Oprea 2020). It may be ``inf`` only when ``trials`` is infinite, which
    it never is: an upper confidence bound on a rate is positive.

    >>> round(epsilon_lower_bound(0, 0, 1000), 3)  # a perfect test on 1000 runs each
    5.601
    >>> epsilon_lower_bound(500, 500, 1000)  # a coin flip proves nothing
    0.0
    """
    n = check_integer(trials, "trials", 1)
    fp = check_integer(false_positives, "false_positives", 0, n)
    fn = check_integer(false_negatives, "false_negatives", 0, n)
    slack = _check_level(delta, "delta", closed_low=True)
    level = _check_level(confidence, "confidence", closed_low=False)
    return float(_bound(fp, fn, n, slack, level))


@dataclass(frozen=True)
class AttackOutcome:
    """A threshold test counted on held-out samples: it guesses ``x`` when the score is
    ``>= threshold`` (``direction == "greater"``) or ``<= threshold`` (``"less"``).
    ``false_positives`` counts held-out samples from ``x'`` guessed as ``x``,
    ``false_negatives`` samples from ``x`` guessed as ``x'``; ``trials`` held-out samples per
    input. ``threshold`` is ``inf`` for the test that never guesses ``x`` (the best one when the
    samples cannot be told apart). Built by :func:`threshold_attack` (and so by :func:`audit`);
    every field is checked on construction: the counts are integers in ``[0, trials]``,
    ``trials >= 1``, ``threshold`` a real number (``±inf`` allowed, NaN not), ``direction`` one
    of ``"greater"``, ``"less"``, ``delta`` in ``[0, 1)`` and ``confidence`` in ``(0, 1)``
    (``TypeError``/``ValueError`` naming the field).

    >>> outcome = AttackOutcome(5, 10, 1000, 0.5, "greater", 0.0, 0.95)
    >>> round(outcome.epsilon, 3)
    4.436
    """

    false_positives: int
    false_negatives: int
    trials: int
    threshold: float
    direction: str
    delta: float
    confidence: float

    def __post_init__(self) -> None:
        n = check_integer(self.trials, "trials", 1)
        for name in ("false_positives", "false_negatives"):
            if check_integer(getattr(self, name), name, 0) > n:
                raise ValueError(f"{name} must be at most trials = {n}, got "
                                 f"{getattr(self, name)!r}")
        check_real(self.threshold, "threshold", allow_inf=True)
        if not isinstance(self.direction, str):
            raise TypeError(f"direction must be a str, got {self.direction!r:.80}")
        if self.direction not in DIRECTIONS:
            raise ValueError(f"direction must be one of {DIRECTIONS}, got {self.direction!r}")
        _check_level(self.delta, "delta", closed_low=True)
        _check_level(self.confidence, "confidence", closed_low=False)

    @property
    def epsilon(self) -> float:
        """The lower bound :func:`epsilon_lower_bound` of these counts."""
        return epsilon_lower_bound(self.false_positives, self.false_negatives, self.trials,
                                   self.delta, self.confidence)


def _scores(values: ArrayLike, name: str) -> np.ndarray:
    array = check_array(values, name)
    if array.ndim != 1 or array.size < 2:
        raise ValueError(f"{name} must be a 1-D array of at least 2 finite scores, got shape "
                         f"{np.shape(values)}")
    return array


def threshold_attack(scores_x: ArrayLike, scores_x_prime: ArrayLike, delta: float = 0.0,
                     confidence: float = 0.95, rng: RngLike = None) -> AttackOutcome:
    r"""The best threshold test between two samples of scores, with its errors counted on
    samples it was not chosen on. Each sample is split at random into two halves of equal size
    (the two samples must have the same size). On the first halves, every threshold between
    observed scores and both directions are tried, and the one with the largest
    :func:`epsilon_lower_bound` is kept (ties, such as a bound of 0 everywhere, go to the largest
    empirical advantage, one minus the two error rates); its errors are then counted on the second
    halves. The
    choice depends only on the first halves, so the counts on the second are binomial with the
    test's true error rates, and the bound keeps its ``confidence`` (Jagielski, Ullman & Oprea
    2020; choosing and counting on the same samples would overstate it).

    >>> gen = np.random.default_rng(0)
    >>> outcome = threshold_attack(gen.normal(4, 1, 2000), gen.normal(0, 1, 2000), rng=1)
    >>> outcome.direction, outcome.trials, bool(outcome.epsilon > 2)
    ('greater', 1000, True)
    """
    from_x, from_x_prime = _scores(scores_x, "scores_x"), _scores(scores_x_prime, "scores_x_prime")
    if from_x.size != from_x_prime.size:
        raise ValueError(f"need as many scores under x as under x', got {from_x.size} and "
                         f"{from_x_prime.size}")
    slack = _check_level(delta, "delta", closed_low=True)
    level = _check_level(confidence, "confidence", closed_low=False)
    gen = as_rng(rng)
    half = from_x.size // 2
    x_order, xp_order = gen.permutation(from_x.size), gen.permutation(from_x.size)
    choose_x, count_x = from_x[x_order[:half]], from_x[x_order[half:2 * half]]
    choose_xp, count_xp = from_x_prime[xp_order[:half]], from_x_prime[xp_order[half:2 * half]]
    candidates = np.unique(np.concatenate([choose_x, choose_xp, [np.inf]]))
    # both directions from one sort of each half: for "score <= t" ("-score >= -t"), the false
    # positives are the x' scores <= t and the false negatives the x scores > t
    x_sorted, xp_sorted = np.sort(choose_x), np.sort(choose_xp)
    x_below = np.searchsorted(x_sorted, candidates, side="left")
    xp_below = np.searchsorted(xp_sorted, candidates, side="left")
    errors = {"greater": (half - xp_below, x_below),
              "less": (np.searchsorted(xp_sorted, candidates, side="right"),
                       half - np.searchsorted(x_sorted, candidates, side="right"))}
    # Clopper-Pearson once per distinct count (a count lies in 0..half), not once per threshold
    counts, where = np.unique(np.concatenate([e for pair in errors.values() for e in pair]),
                              return_inverse=True)
    rates = _clopper_pearson(counts.astype(float), half, 1 - (1 - level) / 2)[where]
    rates = rates.reshape(4, candidates.size)
    best = ((-1.0, -2.0), np.inf, "greater")
    for index, direction in enumerate(("greater", "less")):
        fp, fn = errors[direction]
        bounds = _bound_from_rates(rates[2 * index], rates[2 * index + 1], slack)
        advantage = (half - fn - fp) / half  # ties (e.g. every bound 0): the best separation
        pick = int(np.lexsort((advantage, bounds))[-1])
        key = (float(bounds[pick]), float(advantage[pick]))
        if key > best[0]:
            best = (key, float(candidates[pick]), direction)
    _, threshold, direction = best
    # the errors of the chosen test on the second halves: two counts, no sort
    if direction == "greater":
        fp_count, fn_count = np.count_nonzero(count_xp >= threshold), np.count_nonzero(
            count_x < threshold)
    else:
        fp_count, fn_count = np.count_nonzero(count_xp <= threshold), np.count_nonzero(
            count_x > threshold)
    return AttackOutcome(int(fp_count), int(fn_count), half, threshold, direction, slack, level)


def audit(sample: Sampler, trials: int, score: Callable[[np.ndarray], ArrayLike] | None = None,
          delta: float = 0.0, confidence: float = 0.95, rng: RngLike = None,
          progress: bool = False, chunk: int = 200_000) -> AttackOutcome:
    r"""Audit a mechanism end to end: draw ``2 * trials`` outputs on each of two neighbouring
    inputs with ``sample(which, size, rng)`` (``which`` is 0 for :math:`x`, 1 for :math:`x'`),
    map them through ``score`` (default: the outputs, which must then be numbers), and run
    :func:`threshold_attack`; ``trials`` outputs per input choose the test and ``trials`` count
    its errors. The result's ``epsilon`` is a lower bound on the mechanism's :math:`\varepsilon`
    at ``delta`` that holds with probability ``confidence`` (Jagielski, Ullman & Oprea 2020).
    Draws in chunks of ``chunk`` with a progress bar (``tqdm.auto``) when ``progress``.
    ``trials`` is at most ``MAX_AUDIT_TRIALS`` (``5 * 10**5``: a few seconds with continuous
    scores, whose Clopper-Pearson bounds dominate the cost).

    >>> flip = lambda which, size, gen: (gen.random(size) < 0.75) == (which == 0)
    >>> outcome = audit(flip, 20_000, rng=0)  # randomized response, eps = ln 3 = 1.0986
    >>> round(outcome.epsilon, 3), outcome.false_positives, outcome.false_negatives
    (1.052, 5045, 5086)
    """
    total = 2 * check_integer(trials, "trials", 1, MAX_AUDIT_TRIALS)
    chunk = check_integer(chunk, "chunk", 1)
    if not callable(sample) or (score is not None and not callable(score)):
        raise TypeError(f"sample (and score, if given) must be callables, got sample={sample!r:.60}"
                        f", score={score!r:.60}")
    slack = _check_level(delta, "delta", closed_low=True)
    level = _check_level(confidence, "confidence", closed_low=False)
    show = check_bool(progress, "progress")
    gen = as_rng(rng)
    # a generator, not a list: with chunk = 1 a list would hold 4 * trials tuples
    steps: Iterable[tuple[int, int, int]] = (
        (which, start, min(chunk, total - start)) for which in (0, 1)
        for start in range(0, total, chunk))
    if show:
        from tqdm.auto import tqdm

        steps = tqdm(steps, desc="audit draws", total=2 * -(-total // chunk))
    drawn: dict[int, list[np.ndarray]] = {0: [], 1: []}
    for which, _, size in steps:
        outputs = np.asarray(sample(which, size, gen))
        try:
            values = np.asarray(outputs if score is None else score(outputs), dtype=float)
        except (TypeError, ValueError) as err:  # strings, None, objects
            raise TypeError(f"sample/score must give numbers, got {type(outputs).__name__} "
                            f"from sample") from err
        if values.shape != (size,):
            raise ValueError(f"sample/score must give one number per output: expected shape "
                             f"({size},), got {values.shape}")
        drawn[which].append(values)
    return threshold_attack(np.concatenate(drawn[0]), np.concatenate(drawn[1]), slack, level,
                            gen)


def exact_epsilon(p: ArrayLike, q: ArrayLike, delta: float = 0.0) -> float:
    r"""The exact :math:`\varepsilon(\delta)` between two finite output laws, in both directions:
    the smallest :math:`\varepsilon \ge 0` with :math:`H_{e^\varepsilon}(P\|Q) \le \delta` and
    :math:`H_{e^\varepsilon}(Q\|P) \le \delta` (``inf`` if none), from
    :func:`shuffle_lib.accounting.finite.epsilon_for_delta`. No test can prove more: this is the
    target an audit's lower bound approaches.

    >>> round(exact_epsilon([0.75, 0.25], [0.25, 0.75]), 6) == round(float(np.log(3)), 6)
    True
    """
    first, second = check_distribution_pair(check_array(p, "p", ndim=1),
                                            check_array(q, "q", ndim=1))
    slack = _check_level(delta, "delta", closed_low=True)
    return float(epsilon_for_delta(first, second, slack))


def worst_pair(laws: ArrayLike, pairs: Iterable[tuple[int, int]] | None = None,
               delta: float = 0.0) -> tuple[float, tuple[int, int]]:
    r"""The pair of inputs whose output laws (rows of ``laws``, shape ``(inputs, outputs)``, each
    a distribution) are hardest to hide: the largest :func:`exact_epsilon` over ``pairs`` (every
    pair ``i < j`` of rows by default; otherwise pairs of two different row indices), and a pair
    attaining it, the first in the order of ``pairs`` (ties, such as every pair of k-ary
    randomized response, go to the first). ``inf`` (exactly) when some pair has no finite
    :math:`\varepsilon`, as in :func:`exact_epsilon`; the value is rounded up like it, within
    1e-12 (relative above 1) of the exact maximum.

    At ``delta = 0`` the quantity is linear in the table: :math:`\varepsilon` is
    :math:`\max_o\ln(\max_x C[x,o]/\min_x C[x,o])` over all pairs, found column by column,
    and the value is :func:`exact_epsilon` of the pair found. At ``delta > 0`` it has no linear
    form: one bisection on :math:`\varepsilon` for the largest hockey-stick divergence over the
    pairs (vectorized, dropping each pair as soon as it is within ``delta`` below the answer);
    at most ``MAX_PAIR_TERMS`` (``10**7``, :mod:`shuffle_lib.accounting.finite`) ordered pairs
    times outputs, ``ValueError`` beyond, before any work.

    >>> rr = [[0.75, 0.25], [0.25, 0.75], [0.5, 0.5]]
    >>> eps, pair = worst_pair(rr)
    >>> round(eps, 4), pair
    (1.0986, (0, 1))
    """
    slack = _check_level(delta, "delta", closed_low=True)
    shape = getattr(laws, "shape", None)  # refuse a huge array before reading its entries
    if slack > 0 and pairs is None and isinstance(shape, tuple) and len(shape) == 2:
        _check_pair_terms(shape[0] * (shape[0] - 1), shape[1], "laws (every pair of rows)")
    rows = check_array(laws, "laws")
    if rows.ndim != 2 or rows.shape[0] < 2:
        raise ValueError(f"laws must be an (inputs, outputs) array with at least 2 rows, got "
                         f"shape {rows.shape}")
    if (rows < 0).any() or np.abs(rows.sum(axis=1) - 1.0).max() > 1e-9:
        raise ValueError("laws must hold distributions: non-negative rows that sum to 1")
    n_rows, outputs = rows.shape
    if pairs is None:
        if slack > 0:
            _check_pair_terms(n_rows * (n_rows - 1), outputs, "laws (every pair of rows)")
        value, code = _worst_pair(rows, None, slack, 1e-12)
        return value, (code // n_rows, code % n_rows)
    check_instance(pairs, "pairs", Iterable)
    if slack > 0 and isinstance(pairs, Sized):
        _check_pair_terms(2 * len(pairs), outputs, "pairs (both orders)")
    checked = []
    for pair in pairs:
        check_instance(pair, "pairs", (tuple, list, np.ndarray))
        if len(pair) != 2:
            raise ValueError(f"pairs must hold (i, j) pairs of rows, got {pair!r}")
        i, j = (check_integer(v, "pairs", 0) for v in pair)
        if not (i < n_rows and j < n_rows) or i == j:
            raise ValueError(f"pairs must join two different rows in 0..{n_rows - 1}, "
                             f"got {pair!r}")
        checked.append((i, j))
        if slack > 0:
            _check_pair_terms(2 * len(checked), outputs, "pairs (both orders)")
    if not checked:
        raise ValueError("pairs is empty: there is nothing to audit")
    index = np.array(checked, dtype=np.int64)
    value, position = _worst_pair(rows, index, slack, 1e-12)
    return value, checked[position]
