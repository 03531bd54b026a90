"""Hostile inputs against the whole public API (see ``hostile_api.py`` for the machinery).

Every public function and class of ``shuffle_lib`` is called with its docstring example's
arguments, each replaced in turn by hostile values (NaN, infinities, negatives, zero, 1e-300,
1e300, huge integers, wrong types, empty and wrong-shaped arrays). Each call must end, within a
time and memory limit, in a ``ValueError``/``TypeError`` from our own validation that names the
argument, or in a finite, correctly shaped result. A public object without a docstring example
fails the suite unless it is exempted below with a reason.
"""

from __future__ import annotations

import hostile_api
import pytest

TIME_LIMIT_SECONDS = 5.0

# Objects that return an infinity by design for some valid input (the reason says which input).
# Each is documented in the function's docstring; NaN is never allowed.
MAY_RETURN_INFINITY: dict[str, str] = {
    "shuffle_lib.accounting.finite.channel_epsilon":
        "an output possible under one row only: the pure-DP epsilon is infinite",
    "shuffle_lib.accounting.finite.epsilon_for_delta":
        "mass above delta on outcomes only one law can produce: no finite epsilon exists",
    "shuffle_lib.accounting.finite.renyi_divergence":
        "P charges an outcome Q does not: the divergence is infinite",
    "shuffle_lib.audit.exact_epsilon": "disjoint supports: no finite epsilon exists",
    "shuffle_lib.audit.worst_pair": "the largest exact_epsilon over pairs, infinite as above",
    "shuffle_lib.audit.threshold_attack":
        "the 'never guess' test has threshold +inf, the best test on indistinguishable samples",
    "shuffle_lib.audit.audit": "reports threshold_attack's outcome, threshold +inf as above",
    "shuffle_lib.divergences.hamming_set_distance": "datasets of different sizes",
    "shuffle_lib.divergences.normalized_renyi_divergence": "supports differ",
    "shuffle_lib.inference.inferential_privacy_loss":
        "an observation rules out one value and not another (a channel with zeros)",
    "shuffle_lib.inference.informed_log_odds_shift": "a channel with zeros, as above",
    "shuffle_lib.inference.arrangement_loss": "a channel with zeros, as above",
    "shuffle_lib.inference.assignment_belief_levels": "a channel with zeros, as above",
    "shuffle_lib.inference.posterior_log_odds": "an observation rules out a or b",
    "shuffle_lib.permutations.log_derangements": "-inf at m = 1: one item has no derangement",
    "shuffle_lib.dsigma.DSigmaMechanism.permutation_log_prob":
        "-inf for an order a non-shuffling mechanism never releases",
    "shuffle_lib.dsigma.exhaustive_privacy_loss":
        "a non-shuffling mechanism against groups of two or more people",
    "shuffle_lib.swapping.swapping_epsilon":
        "the theorem's formula at p in {0, 1} with b > 0 (a correct, possibly loose bound)",
    "shuffle_lib.swapping.swapping_epsilon_lower_bound":
        "at p in {0, 1} two datasets at distance 2 are perfectly distinguishable",
    "shuffle_lib.swapping.pairwise_swapping_losses":
        "an output only one of the two datasets can produce (e.g. p = 0)",
    "shuffle_lib.swapping.exact_swapping_epsilon": "no finite budget exists (e.g. p = 0)",
}

# Public objects not exercised with hostile values, and why.
EXEMPT: dict[str, str] = {
    "shuffle_lib.audit.AttackOutcome":
        "a frozen record built only by threshold_attack and audit; its epsilon re-checks fields",
    "shuffle_lib.datasets.PublicPrivateData":
        "a frozen record built only by the dataset loaders, which validate their inputs",
}

API = hostile_api.public_api()


@pytest.fixture(scope="module")
def results() -> tuple[dict[str, hostile_api.Call], dict[str, list[str]], int]:
    calls, cases = hostile_api.build_cases(API)
    outcomes = hostile_api.run_all(API, cases, TIME_LIMIT_SECONDS)
    failures = hostile_api.judge(cases, outcomes, set(MAY_RETURN_INFINITY))
    print(f"\nhostile inputs: {len(API)} public objects, {len(calls)} with an example, "
          f"{len(cases)} calls, {len(EXEMPT)} exemptions")
    return calls, failures, len(cases)


@pytest.mark.parametrize("qualname", list(API))
def test_hostile_inputs_are_refused_or_handled(qualname: str, results) -> None:
    calls, failures, _ = results
    if qualname in EXEMPT:
        pytest.skip(EXEMPT[qualname])
    assert qualname in calls, f"{qualname} has no docstring example to take a valid call from"
    assert not failures.get(qualname), "\n".join(failures[qualname])


def test_exemptions_and_infinity_list_name_public_objects() -> None:
    stale = (set(EXEMPT) | set(MAY_RETURN_INFINITY)) - set(API)
    assert not stale, f"no such public objects: {sorted(stale)}"
    assert all(EXEMPT.values()) and all(MAY_RETURN_INFINITY.values()), "every entry needs a reason"


def test_the_suite_exercises_most_of_the_api(results) -> None:
    calls, _, n_cases = results
    assert len(calls) + len(EXEMPT) == len(API)
    assert n_cases >= 20 * len(calls)
