"""Privacy accountants: exact finite-mechanism accounting, f-DP/GDP, (eps, delta) composition,
and zCDP. One job per module; the public names are re-exported here."""

from shuffle_lib.accounting.approx_dp import (
    advanced_composition,
    basic_composition,
    group_privacy,
    optimal_composition_delta,
    optimal_composition_epsilon,
)
from shuffle_lib.accounting.fdp import (
    approx_dp_tradeoff,
    gdp_compose,
    gdp_delta,
    gdp_epsilon,
    gdp_group,
    gdp_mu,
    gdp_tradeoff,
    tradeoff_from_distributions,
)
from shuffle_lib.accounting.finite import (
    channel_delta,
    channel_epsilon,
    epsilon_for_delta,
    hockey_stick_divergence,
    renyi_divergence,
)
from shuffle_lib.accounting.zcdp import (
    approx_dp_to_zcdp,
    gaussian_zcdp,
    zcdp_compose,
    zcdp_to_approx_dp,
)

__all__ = [
    "advanced_composition",
    "approx_dp_to_zcdp",
    "approx_dp_tradeoff",
    "basic_composition",
    "channel_delta",
    "channel_epsilon",
    "epsilon_for_delta",
    "gaussian_zcdp",
    "gdp_compose",
    "gdp_delta",
    "gdp_epsilon",
    "gdp_group",
    "gdp_mu",
    "gdp_tradeoff",
    "group_privacy",
    "hockey_stick_divergence",
    "optimal_composition_delta",
    "optimal_composition_epsilon",
    "renyi_divergence",
    "tradeoff_from_distributions",
    "zcdp_compose",
    "zcdp_to_approx_dp",
]
