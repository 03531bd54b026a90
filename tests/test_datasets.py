"""The bundled UCI Adult files (Becker & Kohavi 1996) and the view of them that Meehan et al.
(2022, Section 5) use: checked against the numbers the UCI documentation (adult.names) publishes
and against checksums pinned independently of our own constants."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest

from shuffle_lib.attacks import attack_neighbours, local_distributions
from shuffle_lib.datasets import (
    ADULT_COLUMNS,
    ADULT_MARITAL_STATUS,
    MAX_NOISE,
    PublicPrivateData,
    adult,
    adult_file_bytes,
    adult_table,
    anes96,
    household_trend,
    massachusetts_1940_households,
    synthetic_clusters,
    synthetic_households,
)

# md5 sums of the files at archive.ics.uci.edu/ml/machine-learning-databases/adult/, as pinned
# by download scripts in other projects (not derived from our copy)
UCI_MD5 = {"adult.data": "5d7c39d7b8804f071cdd1f2a7c460872",
           "adult.test": "35238206dfdf7f1fe215bbb874adecdc"}
UCI_BYTES = {"adult.data": 3_974_305, "adult.test": 2_003_153}


@pytest.fixture(scope="module")
def table():
    return adult_table("all")


@pytest.mark.parametrize("name", sorted(UCI_MD5))
def test_bundled_files_are_the_uci_originals(name: str) -> None:
    raw = adult_file_bytes(name)
    assert len(raw) == UCI_BYTES[name]
    assert hashlib.md5(raw).hexdigest() == UCI_MD5[name]


def test_row_counts_published_in_adult_names(table) -> None:
    # adult.names: 48842 instances (train=32561, test=16281); 45222 without unknowns
    # (train=30162, test=15060)
    assert len(adult_table("train")) == 32_561 and len(adult_table("test")) == 16_281
    assert len(table) == 48_842
    assert len(table.dropna()) == 45_222
    assert len(adult_table("train").dropna()) == 30_162
    assert list(table.columns) == list(ADULT_COLUMNS)


def test_label_shares_published_in_adult_names(table) -> None:
    # adult.names: P[>50K] = 23.93% over all instances, 24.78% without unknowns
    assert set(table["income"]) == {"<=50K", ">50K"}
    assert np.mean(table["income"] == ">50K") == pytest.approx(0.2393, abs=5e-5)
    assert np.mean(table.dropna()["income"] == ">50K") == pytest.approx(0.2478, abs=5e-5)


def test_paper_view_of_adult(table) -> None:
    data = adult()
    train = adult_table("train")
    assert data.t.shape == (32_561, 1) and data.x.shape == (32_561,)
    assert data.n_categories == 2 and data.t_p_categorical
    for values in (data.t, data.x, data.t_p):
        assert np.isfinite(values).all()  # no missing value in any column the experiment uses
    assert data.t.min() == 17 and data.t.max() == 90  # T = [17, 90] in Meehan et al.
    np.testing.assert_array_equal(data.t[:, 0], train["age"])
    np.testing.assert_array_equal(data.x, (train["income"] == ">50K").astype(int))
    decoded = np.array(ADULT_MARITAL_STATUS)[data.t_p.astype(int)]
    np.testing.assert_array_equal(decoded, train["marital_status"])
    assert set(ADULT_MARITAL_STATUS) == set(table["marital_status"])
    assert adult("all").x.size == 48_842


def test_subsample_is_a_seeded_subset_without_repeats() -> None:
    full = adult()
    first, again, other = adult(n=500, rng=7), adult(n=500, rng=7), adult(n=500, rng=8)
    np.testing.assert_array_equal(first.t, again.t)
    assert not np.array_equal(first.t, other.t)
    # each drawn (age, income, status) triple occurs at least as often in the full file
    keys = lambda d: d.t[:, 0] * 100 + d.x * 10 + d.t_p  # noqa: E731
    drawn, counts = np.unique(keys(first), return_counts=True)
    full_keys, full_counts = np.unique(keys(full), return_counts=True)
    assert np.all(counts <= full_counts[np.searchsorted(full_keys, drawn)])


def test_categorical_sources_prefer_equal_status(rng: np.random.Generator) -> None:
    data = adult(n=600, rng=rng)
    sources = attack_neighbours(data.t, 1.0, 5, data.t_p, rng=rng, categorical=True)
    ages, status = data.t[:, 0], data.t_p
    for i in range(data.x.size):
        got = sources[i][sources[i] >= 0]
        near = np.flatnonzero((np.abs(ages - ages[i]) <= 1) & (np.arange(ages.size) != i))
        same = near[status[near] == status[i]]
        assert got.size == min(5, near.size)
        # as many equal-status people as there are (up to 5), all within a year of age
        assert np.sum(status[got] == status[i]) == min(5, same.size)
        assert np.all(np.abs(ages[got] - ages[i]) <= 1)


def test_one_dimensional_local_distributions_match_the_radius_groups(
        rng: np.random.Generator) -> None:
    data = adult(n=3_000, rng=rng)
    ages = data.t[:, 0]
    for r in (0.0, 1.0, 2.5):
        fast = local_distributions(ages, data.x, r, 2)
        # brute force over the pairwise distances
        close = np.abs(ages[:, None] - ages[None, :]) <= r
        slow = np.stack([(close & (data.x == c)).sum(axis=1) for c in (0, 1)], axis=1)
        np.testing.assert_allclose(fast, slow / slow.sum(axis=1, keepdims=True), rtol=1e-12)
    # continuous positions and the radius-group route of two dimensions (a dummy zero column)
    t = rng.random(400)
    x = rng.integers(0, 3, 400)
    np.testing.assert_allclose(local_distributions(t, x, 0.05, 3),
                               local_distributions(np.column_stack([t, np.zeros(400)]), x,
                                                   0.05, 3), rtol=1e-12)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: adult_table("validation"), "split"),
        (lambda: adult(n=1), "n"),
        (lambda: adult("test", n=20_000), "at most"),
        (lambda: adult_file_bytes("adult.names"), "name"),
        (lambda: local_distributions([0.0, 1.0], [0, 2], 1.0, 2), "x must"),
        (lambda: local_distributions([0.0, 1.0], [0, 1], -1.0, 2), "r must"),
    ],
)
def test_bad_input_raises(call, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        call()


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (lambda: synthetic_clusters(10**12), ValueError, "n must be at most 10000000"),
        (lambda: synthetic_clusters(100, noise=np.nan), ValueError, "noise must not be NaN"),
        (lambda: synthetic_clusters(100, noise="0.1"), TypeError, "noise"),
        (lambda: synthetic_households(10**12), ValueError, "n_households must be at most"),
        (lambda: synthetic_households(10**6, size=100), ValueError, "n_households x size"),
        (lambda: synthetic_households(3, size=2.5), TypeError, "size"),
        (lambda: household_trend([0.1, np.nan]), ValueError, "u must not contain NaN"),
        (lambda: household_trend("0.1"), TypeError, "u must be"),
        (lambda: adult_file_bytes(None), TypeError, "name"),
    ],
)
def test_hostile_input_is_refused_by_our_checks(call, error, message: str) -> None:
    with pytest.raises(error, match=message):
        call()


def test_anes96_codes_party_and_household_trend_follows_its_formula() -> None:
    data = anes96()
    assert np.bincount(data.x).tolist() == [488, 37, 419]
    u = np.linspace(0, 1, 11)
    np.testing.assert_allclose(household_trend(u), 0.5 + 0.4 * np.sin(4 * np.pi * u))


def _refuse_to_build(*_args, **_kwargs):
    raise AssertionError("the data were built before the arguments were checked")


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (lambda: massachusetts_1940_households(rng="seed"), TypeError, "rng"),
        (lambda: massachusetts_1940_households(rng=-1), ValueError, "rng"),
        (lambda: adult(n=10**6), ValueError, "n must be at most 32561"),
        (lambda: adult("all", n=48_843), ValueError, "n must be at most 48842"),
        (lambda: adult(rng="seed"), TypeError, "rng"),
        (lambda: adult(split=3), TypeError, "split"),
        (lambda: adult(n=2.5), TypeError, "n must be an integer"),
    ],
)
def test_arguments_are_checked_before_the_data_are_built(monkeypatch, call, error,
                                                         message: str) -> None:
    from shuffle_lib import datasets

    monkeypatch.setattr(datasets, "massachusetts_1940_tenure", _refuse_to_build)
    monkeypatch.setattr(datasets, "adult_table", _refuse_to_build)
    with pytest.raises(error, match=message):
        call()


def test_synthetic_noise_is_limited_so_positions_stay_finite() -> None:
    assert np.isfinite(synthetic_clusters(1000, rng=0, noise=MAX_NOISE).t).all()
    with pytest.raises(ValueError, match="noise"):
        synthetic_clusters(100, rng=0, noise=1e300)  # drew infinite positions before


_T, _X = np.array([[0.0], [1.0], [2.0]]), np.array([0, 1, 1])


@pytest.mark.parametrize(
    ("fields", "error", "message"),
    [
        ({"t": None}, TypeError, "t must"),
        ({"t": [[0.0], [np.nan], [1.0]]}, ValueError, "t must"),
        ({"t": [0.0, 1.0, 2.0]}, ValueError, "t must"),
        ({"t": np.zeros((3, 0))}, ValueError, "t must"),
        ({"t": np.broadcast_to(0.0, (10**12, 1))}, ValueError, "t has"),
        ({"x": [0, 1]}, ValueError, "x must"),
        ({"x": [0, 1, 2]}, ValueError, "x must"),
        ({"x": [0, -1, 1]}, ValueError, "x must"),
        ({"x": [0.0, 1.0, 1.0]}, ValueError, "x must"),
        ({"x": "011"}, TypeError, "x must"),
        ({"n_categories": 1}, ValueError, "n_categories"),
        ({"n_categories": 2.0}, TypeError, "n_categories"),
        ({"t_p": [1.0, 2.0]}, ValueError, "t_p must"),
        ({"t_p": [1.0, np.inf, 2.0]}, ValueError, "t_p must"),
        ({"t_p": "abc"}, TypeError, "t_p must"),
        ({"description": None}, TypeError, "description"),
        ({"t_p_categorical": "yes"}, TypeError, "t_p_categorical"),
        ({"t_p_categorical": True}, ValueError, "t_p_categorical"),
    ],
)
def test_public_private_data_checks_its_fields(fields: dict, error, message: str) -> None:
    valid = {"t": _T, "x": _X, "n_categories": 2}
    PublicPrivateData(**valid)
    with pytest.raises(error, match=message):
        PublicPrivateData(**{**valid, **fields})


def test_every_loader_builds_a_valid_record() -> None:
    for data in (synthetic_clusters(50, rng=0), synthetic_households(4, 3, rng=0), anes96(),
                 adult(n=50, rng=0)):
        assert data.t.dtype == float and data.x.dtype == np.int64
        assert data.t.shape[0] == data.x.size and data.x.max() < data.n_categories
        rebuilt = PublicPrivateData(data.t, data.x, data.n_categories, data.t_p,
                                    data.description, data.t_p_categorical)
        np.testing.assert_array_equal(rebuilt.t, data.t)
