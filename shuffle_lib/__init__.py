"""shuffle_lib: the mechanisms and privacy accountants of the Shuffle Privacy book.

Chapters import from here; every formula the book states is implemented once, in this package.
"""

#: The library's version, in one place (``pyproject.toml`` reads it from here): 2.0 is the
#: book's second edition, 2.0.1 its patch release of accountants safe at every level, 2.1 the
#: state-of-the-art accountants of Part II; CHANGELOG.md lists what changed.
__version__ = "2.1.0"

from shuffle_lib import accounting, learning
from shuffle_lib.randomizers import (
    gaussian_mechanism,
    gaussian_sigma,
    k_randomized_response,
    krr_channel,
    krr_frequency_estimate,
    laplace_mean_std,
    laplace_mechanism,
    personalized_laplace_mean_std,
    personalized_rr_estimate_std,
    randomized_response,
    rr_estimate_std,
    rr_frequency_estimate,
)
from shuffle_lib.shuffler import shuffle

__all__ = [
    "accounting",
    "gaussian_mechanism",
    "gaussian_sigma",
    "k_randomized_response",
    "krr_channel",
    "krr_frequency_estimate",
    "laplace_mean_std",
    "laplace_mechanism",
    "learning",
    "personalized_laplace_mean_std",
    "personalized_rr_estimate_std",
    "randomized_response",
    "rr_estimate_std",
    "rr_frequency_estimate",
    "shuffle",
]
