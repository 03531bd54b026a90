"""Pure plotting functions: data in, ``matplotlib.figure.Figure`` out.

Chapters compute numbers with the library and hand them here; no formula is evaluated in this
module, so the text, the tables and the figures cannot disagree. Every function labels its axes
and draws on a fresh figure unless an ``ax`` is given.

Inputs are checked before anything is drawn: data are arrays of numbers (``TypeError`` for
strings, bools, None or other objects; NaN and infinities are allowed in curves and points, where
matplotlib leaves a gap, but not in histograms or box plots), labels are strings, flags are bools.
Limits: at most ``MAX_PANELS`` (64) panels and ``MAX_FIGURE_INCHES`` (200) per side of a figure,
at most ``MAX_BINS`` (10,000) histogram bins.

One style for every figure of the book, set when this module is imported (:func:`use_book_style`):
Okabe and Ito's colour-blind-safe palette (``PALETTE``) as matplotlib's colour cycle, and text
sizes that stay readable when a figure is scaled to the page. No series is told apart by its colour
alone: each curve and set of points of :func:`plot_lines` and :func:`plot_tradeoff_curves` has its
own marker (``MARKERS``), each overlaid histogram its own hatch (``HATCHES``).

The explorers (``explore_*``, one per part of the book) are the one exception to "no computation
here": each turns slider settings into a figure, and every number it draws comes from a call to
the library (no formula is re-implemented). The chapters wrap them in ``ipywidgets``; the static
website shows the default figure. One update (call and draw) is timed by
``benchmarks/bench_explorers.py`` against a goal of 0.1 s.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import matplotlib
import matplotlib.pyplot as plt
import numpy as np
from matplotlib import cycler
from matplotlib.axes import Axes
from matplotlib.axis import Axis
from matplotlib.figure import Figure
from matplotlib.ticker import (
    FixedLocator,
    FuncFormatter,
    LogLocator,
    NullFormatter,
    NullLocator,
)
from numpy.typing import ArrayLike
from scipy.special import expit, logit
from scipy.stats import laplace

from shuffle_lib._validation import (
    RngLike,
    as_rng,
    check_array,
    check_bool,
    check_instance,
    check_integer,
    check_real,
)
from shuffle_lib.accounting import (
    bbgn19_epsilon,
    clone_numerical_epsilon,
    erlingsson19_epsilon,
    fmt21_closed_form_epsilon,
    fmt21_numerical_epsilon,
    fmt21_theorem_epsilon,
    fmt21_validity_limit,
    gdp_tradeoff,
    gspa_epsilon,
    personalized_numerical_epsilon,
    shuffled_personalized_rr_epsilon,
    shuffled_rr_exact_epsilon,
    tradeoff_from_distributions,
)
from shuffle_lib.accounting.rounds import RoundsTable
from shuffle_lib.randomizers import k_randomized_response, krr_channel

MAX_PANELS = 64  # panels of one panel_grid figure (64 take about half a second)
MAX_FIGURE_INCHES = 200.0  # per side: inside the renderers' 2^16-pixel limit up to 300 dpi
MAX_BINS = 10_000  # bins of one histogram (also the integers a discrete histogram spans)
BAR_BINS_MAX = 1_000  # plot_histograms draws bars up to this many bins, filled outlines beyond

# --- The book's style -------------------------------------------------------------------------

# Okabe & Ito's colour-blind-safe palette ("Color Universal Design", 2008) without its yellow,
# too light on white: blue, orange, bluish green, vermillion, reddish purple, sky blue, black.
# C0-C3 keep the roles of matplotlib's default C0-C3 (blue, orange, green, red).
PALETTE = ("#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#000000")
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")  # one per series of plot_lines
HATCHES = ("", "//", "..", "\\\\", "xx", "--", "oo", "++")  # per overlaid histogram or bar group
MARK_EVERY_POINT_MAX = 30  # curves with more points carry a marker every tenth of the diagonal
BOOK_STYLE: dict[str, object] = {
    "axes.prop_cycle": cycler(color=PALETTE),
    "font.size": 11.0,  # text, and the base of relative sizes ("small" is 9.2 points)
    "axes.titlesize": 12.0,
    "axes.labelsize": 11.0,
    "xtick.labelsize": 10.0,
    "ytick.labelsize": 10.0,
    "legend.fontsize": 10.0,
    "lines.linewidth": 1.8,
    "lines.markersize": 5.5,
    "hatch.linewidth": 0.8,
}


def use_book_style() -> None:
    """Set matplotlib's defaults to the book's style, ``BOOK_STYLE``: the colour-blind-safe
    ``PALETTE`` as the colour cycle (so ``"C0"`` to ``"C6"`` name its colours) and readable text
    sizes (11-point text, 10-point ticks and legends).

    Importing this module calls it once, so every figure of the book, including those a chapter
    draws with matplotlib directly, gets the style; ``matplotlib.rcdefaults()`` undoes it.

    >>> use_book_style()
    >>> matplotlib.rcParams["axes.prop_cycle"].by_key()["color"][0]
    '#0072B2'
    """
    matplotlib.rcParams.update(BOOK_STYLE)


def series_marks(index: int, points: int) -> dict[str, object]:
    """Marker keywords of a plot's ``index``-th series of ``points`` points: its own marker from
    ``MARKERS``, on every point of a short series and about every tenth of the axes' diagonal on a
    long one (staggered, so that curves on top of each other still show each marker).

    >>> series_marks(1, 10)
    {'marker': 's', 'markevery': None}
    """
    check_integer(index, "index", 0)
    check_integer(points, "points", 0)
    spacing = None if points <= MARK_EVERY_POINT_MAX else (0.025 * (index % 4), 0.1)
    return {"marker": MARKERS[index % len(MARKERS)], "markevery": spacing}


use_book_style()


def _values(value: object, name: str, ndim: int = 1, finite: bool = False) -> np.ndarray:
    """``value`` as a non-empty float array with ``ndim`` axes: numbers only (``TypeError`` for
    strings, bools, None or objects); NaN and infinities are kept (matplotlib leaves a gap there)
    unless ``finite``."""
    return check_array(value, name, ndim=ndim, finite=finite, allow_nan=not finite)

def _unit_values(value: object, name: str) -> np.ndarray:
    """``value`` as a non-empty 1-D float array of probabilities: entries in [0, 1] or NaN (a gap);
    ``ValueError`` naming ``name`` for anything off the unit interval, infinities included."""
    return check_array(value, name, ndim=1, finite=False, allow_nan=True, low=0.0, high=1.0)


def _check_text(value: object, name: str, optional: bool = False) -> None:
    if not (optional and value is None):
        check_instance(value, name, str)


def _check_mapping(value: object, name: str, optional: bool = False) -> Mapping:
    if optional and value is None:
        return {}
    check_instance(value, name, Mapping)
    return value  # type: ignore[return-value]


def _check_ax(ax: object) -> None:
    if ax is not None:
        check_instance(ax, "ax", Axes)


def _figure_and_axes(ax: Axes | None, size: tuple[float, float]) -> tuple[Figure, Axes]:
    if ax is not None:
        return ax.figure, ax
    fig, new_ax = plt.subplots(figsize=size, layout="constrained")
    plt.close(fig)  # returned, not shown twice by the notebook's inline backend
    return fig, new_ax


def _readable_log_ticks(axis: Axis, limits: tuple[float, float]) -> None:
    """Ticks at 1, 2, 5 x 10^k on short log ranges (decades only on long ones), plain labels."""
    low, high = sorted(limits)
    decades = np.log10(high) - np.log10(low) if 0 < low < high < np.inf else np.inf
    axis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0) if decades <= 2 else (1.0,)))
    axis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:g}"))
    axis.set_minor_formatter(NullFormatter())


def panel_grid(
    ncols: int, nrows: int = 1, size: tuple[float, float] = (5.0, 3.6)
) -> tuple[Figure, np.ndarray]:
    """A figure with ``nrows x ncols`` panels of the given per-panel size, for side-by-side plots.

    The figure is detached from pyplot, so a notebook shows it once (when it is returned). At
    most ``MAX_PANELS`` (64) panels and ``MAX_FIGURE_INCHES`` (200) inches per side.

    >>> fig, axes = panel_grid(2)
    >>> axes.shape
    (2,)
    """
    columns, rows = check_integer(ncols, "ncols", 1), check_integer(nrows, "nrows", 1)
    if columns * rows > MAX_PANELS:
        raise ValueError(f"ncols x nrows = {columns} x {rows} panels, more than the documented "
                         f"limit MAX_PANELS = {MAX_PANELS}")
    check_instance(size, "size", (tuple, list))
    if len(size) != 2:
        raise ValueError(f"size must be a (width, height) pair in inches, got {size!r}")
    figsize = (check_real(size[0], "size", low=0.0, low_open=True) * columns,
               check_real(size[1], "size", low=0.0, low_open=True) * rows)
    if max(figsize) > MAX_FIGURE_INCHES:
        raise ValueError(f"size {size!r} with {rows} x {columns} panels makes a figure of "
                         f"{figsize} inches, above the limit of {MAX_FIGURE_INCHES} per side")
    fig, axes = plt.subplots(rows, columns, figsize=figsize, layout="constrained", squeeze=False)
    plt.close(fig)
    return fig, axes.ravel()


def plot_lines(
    x: ArrayLike,
    lines: Mapping[str, ArrayLike],
    *,
    xlabel: str,
    ylabel: str,
    title: str | None = None,
    points: Mapping[str, tuple[ArrayLike, ArrayLike]] | None = None,
    errors: Mapping[str, ArrayLike] | None = None,
    logx: bool = False,
    logy: bool = False,
    ax: Axes | None = None,
) -> Figure:
    """Curves sharing one x-axis (``lines``), plus optional measured ``points`` (x, y) as markers
    and, for the lines named in ``errors``, a shaded band of the given half-width (for example one
    standard deviation over trials). Each curve and each set of points has its own colour and its
    own marker (:func:`series_marks`).

    >>> fig = plot_lines([1.0, 2.0], {"a": [1.0, 4.0]}, xlabel="n", ylabel="error")
    >>> fig.axes[0].get_xlabel()
    'n'
    """
    x_arr = _values(x, "x")
    curves = {label: _values(y, f"lines[{label!r}]")
              for label, y in _check_mapping(lines, "lines").items()}
    bands = {label: _values(half, f"errors[{label!r}]")
             for label, half in _check_mapping(errors, "errors", optional=True).items()}
    markers = {}
    for label, pair in _check_mapping(points, "points", optional=True).items():
        check_instance(pair, f"points[{label!r}]", (tuple, list))
        if len(pair) != 2:
            raise ValueError(f"points[{label!r}] must be an (x, y) pair, got {pair!r:.80}")
        markers[label] = (_values(pair[0], f"points[{label!r}]"),
                          _values(pair[1], f"points[{label!r}]"))
        if markers[label][0].shape != markers[label][1].shape:
            raise ValueError(f"points[{label!r}] has x and y of different shapes")
    for name, arrays in (("lines", curves), ("errors", bands)):
        for label, arr in arrays.items():
            if arr.shape != x_arr.shape:
                raise ValueError(f"{name}[{label!r}] has shape {arr.shape}, x has {x_arr.shape}")
    if not curves and not markers:
        raise ValueError("nothing to plot: give at least one line (lines) or one set of points")
    _check_text(xlabel, "xlabel")
    _check_text(ylabel, "ylabel")
    _check_text(title, "title", optional=True)
    check_bool(logx, "logx")
    check_bool(logy, "logy")
    _check_ax(ax)
    fig, axes = _figure_and_axes(ax, (6.0, 4.0))
    for index, (label, y_arr) in enumerate(curves.items()):
        (line,) = axes.plot(x_arr, y_arr, label=label, **series_marks(index, x_arr.size))
        if label in bands:
            axes.fill_between(x_arr, y_arr - bands[label], y_arr + bands[label],
                              color=line.get_color(), alpha=0.2)
    for index, (label, (px, py)) in enumerate(markers.items(), start=len(curves)):
        axes.plot(px, py, linestyle="none", marker=MARKERS[index % len(MARKERS)], markersize=6,
                  label=label)
    axes.set_xscale("log" if logx else "linear")
    axes.set_yscale("log" if logy else "linear")
    if logx:
        _readable_log_ticks(axes.xaxis, axes.get_xlim())
    if logy:
        _readable_log_ticks(axes.yaxis, axes.get_ylim())
    axes.set_xlabel(xlabel)
    axes.set_ylabel(ylabel)
    if title:
        axes.set_title(title)
    axes.grid(True, which="major", alpha=0.3)
    axes.legend(frameon=False)
    return fig


def plot_boxes(
    groups: Mapping[str, ArrayLike],
    *,
    xlabel: str,
    ylabel: str,
    reference: Mapping[str, tuple[str, float]] | None = None,
    title: str | None = None,
    ax: Axes | None = None,
) -> Figure:
    """One box plot per group (repeated measurements, e.g. an error over independent runs), in
    the order given, and optional ``reference`` markers ``label -> (group, value)`` drawn as
    stars over their group (e.g. a published value).

    >>> fig = plot_boxes({"1%": [1.0, 1.2], "5%": [3.0, 3.1]}, xlabel="rate", ylabel="error")
    >>> [t.get_text() for t in fig.axes[0].get_xticklabels()]
    ['1%', '5%']
    """
    boxes = {name: _values(values, f"groups[{name!r}]", finite=True)
             for name, values in _check_mapping(groups, "groups").items()}
    if not boxes:
        raise ValueError("nothing to plot: give at least one group in groups")
    stars = {}
    for label, pair in _check_mapping(reference, "reference", optional=True).items():
        check_instance(pair, f"reference[{label!r}]", (tuple, list))
        if len(pair) != 2 or pair[0] not in boxes:
            raise ValueError(f"reference {label!r} must be (a group of groups, a value), "
                             f"got {pair!r:.80}")
        stars[label] = (pair[0], check_real(pair[1], f"reference[{label!r}]"))
    _check_text(xlabel, "xlabel")
    _check_text(ylabel, "ylabel")
    _check_text(title, "title", optional=True)
    _check_ax(ax)
    names = list(boxes)
    fig, axes = _figure_and_axes(ax, (6.0, 4.0))
    axes.boxplot([boxes[name] for name in names], tick_labels=names, showmeans=False)
    for label, (group, value) in stars.items():
        axes.plot(names.index(group) + 1, value, "*", markersize=12, label=label)
    axes.set_xlabel(xlabel)
    axes.set_ylabel(ylabel)
    if title:
        axes.set_title(title)
    axes.grid(True, axis="y", alpha=0.3)
    if reference:
        axes.legend(frameon=False)
    return fig


def plot_tradeoff_curves(
    alpha: ArrayLike,
    curves: Mapping[str, ArrayLike],
    *,
    title: str | None = None,
    ax: Axes | None = None,
) -> Figure:
    r"""Trade-off curves :math:`\beta = f(\alpha)` on the unit square, each with its own marker, and
    the dashed grey line :math:`\beta = 1-\alpha` (perfect privacy: no test beats guessing) for
    reference. ``alpha`` and every curve are error probabilities: entries in [0, 1] (NaN leaves a
    gap), since the axes show exactly the unit square; anything outside, infinities included, is
    refused with a ``ValueError`` naming the argument.

    >>> fig = plot_tradeoff_curves([0.0, 1.0], {"f": [1.0, 0.0]})
    >>> fig.axes[0].get_ylabel()
    'type II error $\\beta$'
    """
    alpha_arr = _unit_values(alpha, "alpha")
    betas = {label: _unit_values(beta, f"curves[{label!r}]")
             for label, beta in _check_mapping(curves, "curves").items()}
    for label, beta in betas.items():
        if beta.shape != alpha_arr.shape:
            raise ValueError(f"curves[{label!r}] has shape {beta.shape}, alpha has "
                             f"{alpha_arr.shape}")
    _check_text(title, "title", optional=True)
    _check_ax(ax)
    fig, axes = _figure_and_axes(ax, (4.8, 4.6))
    axes.plot([0, 1], [1, 0], color="0.6", linestyle="--", label="perfect privacy")
    for index, (label, beta) in enumerate(betas.items()):
        axes.plot(alpha_arr, beta, label=label, **series_marks(index, alpha_arr.size))
    axes.set_xlim(0, 1)
    axes.set_ylim(0, 1)
    axes.set_aspect("equal")
    axes.set_xlabel(r"type I error $\alpha$")
    axes.set_ylabel(r"type II error $\beta$")
    if title:
        axes.set_title(title)
    axes.legend(frameon=False, fontsize="small")
    return fig


def plot_histograms(
    samples: Mapping[str, ArrayLike],
    *,
    xlabel: str,
    bins: int = 60,
    discrete: bool = False,
    title: str | None = None,
    ax: Axes | None = None,
) -> Figure:
    """Overlaid density histograms of several samples on common bins (one bin per integer when
    ``discrete``, ignoring ``bins``), each with its own colour and hatch (``HATCHES``). Samples
    are finite numbers; at most ``MAX_BINS`` (10,000) bins, also for the integers a discrete
    histogram spans. Up to ``BAR_BINS_MAX`` (1,000) bins each bin is a bar; beyond, each sample
    is one filled outline of the same heights (one bar per bin is a matplotlib patch each, about
    ten times slower to build and draw: 2,000 bars took 25 s against 2.6 s on a loaded machine).

    >>> fig = plot_histograms({"a": [0.0, 1.0]}, xlabel="output")
    >>> fig.axes[0].get_ylabel()
    'density'
    """
    arrays = {label: _values(values, f"samples[{label!r}]", finite=True)
              for label, values in _check_mapping(samples, "samples").items()}
    if not arrays:
        raise ValueError("samples must not be empty")
    check_integer(bins, "bins", 1, MAX_BINS)
    check_bool(discrete, "discrete")
    _check_text(xlabel, "xlabel")
    _check_text(title, "title", optional=True)
    _check_ax(ax)
    pooled = np.concatenate(list(arrays.values()))
    if discrete and np.ceil(pooled.max()) - np.floor(pooled.min()) >= MAX_BINS:
        raise ValueError(f"samples span {pooled.min():g} to {pooled.max():g}: a discrete "
                         f"histogram would need more than MAX_BINS = {MAX_BINS} bins")
    if discrete:
        edges = np.arange(np.floor(pooled.min()) - 0.5, np.ceil(pooled.max()) + 1.0)
    else:
        edges = np.histogram_bin_edges(pooled, bins=bins)
    fig, axes = _figure_and_axes(ax, (6.0, 3.6))
    for index, (label, values) in enumerate(arrays.items()):
        axes.hist(values, bins=edges, density=True, alpha=0.5, label=label,
                  hatch=HATCHES[index % len(HATCHES)],
                  histtype="bar" if edges.size - 1 <= BAR_BINS_MAX else "stepfilled")
    axes.set_xlabel(xlabel)
    axes.set_ylabel("density")
    if title:
        axes.set_title(title)
    axes.legend(frameon=False)
    return fig


# Paired light/dark colours: warm (vermillion, orange) and cool (blue, bluish green), in the
# label order of :func:`shuffle_lib.datasets.synthetic_clusters` (cluster, crescent, light/dark
# half): the PALETTE's colours and their tints (mixed 55% with white).
PAIRED_LABEL_COLORS = ("#ECB78C", "#D55E00", "#F4D48C", "#E69F00",
                       "#8CC0DC", "#0072B2", "#8CD3C0", "#009E73")


def plot_labelled_points(
    points: ArrayLike,
    labels: ArrayLike,
    *,
    title: str | None = None,
    colors: Sequence[str] = PAIRED_LABEL_COLORS,
    xlabel: str = "public position $t_1$",
    ylabel: str = "public position $t_2$",
    ax: Axes | None = None,
) -> Figure:
    """Points in the public plane coloured by a categorical label (label ``c`` gets
    ``colors[c]``; negative labels, meaning "no guess", are grey).

    >>> fig = plot_labelled_points([[0.0, 0.0], [1.0, 1.0]], [0, 1], title="data")
    >>> fig.axes[0].get_title()
    'data'
    """
    xy = _values(points, "points", ndim=2)
    lab = check_array(labels, "labels", ndim=1, integer=True)
    if xy.shape[1] != 2 or lab.shape != (xy.shape[0],):
        raise ValueError(f"need (n, 2) points and n labels, got {xy.shape} and {lab.shape}")
    check_instance(colors, "colors", (tuple, list))
    if not colors or not all(isinstance(c, str) for c in colors):
        raise TypeError(f"colors must be a non-empty sequence of colour names, got {colors!r:.80}")
    if lab.max(initial=-1) >= len(colors):
        raise ValueError(f"labels: label {lab.max()} has no colour ({len(colors)} given)")
    _check_text(title, "title", optional=True)
    _check_text(xlabel, "xlabel")
    _check_text(ylabel, "ylabel")
    _check_ax(ax)
    palette = np.array([*colors, "#bbbbbb"])
    fig, axes = _figure_and_axes(ax, (4.0, 3.0))
    axes.scatter(xy[:, 0], xy[:, 1], c=palette[np.where(lab >= 0, lab, len(colors))], s=4,
                 linewidths=0)
    axes.set_xlabel(xlabel)
    axes.set_ylabel(ylabel)
    axes.set_aspect("equal")
    if title:
        axes.set_title(title)
    return fig


# ---------------------------------------------------------------------------------------------
# Explorers: one per part of the book. Each takes slider settings and returns one figure; every
# number drawn is computed by a library call.

EXPLORER_LEVEL_MAX = 20.0  # largest eps, mu or eps0 an explorer takes (curves are flat beyond)
EXPLORER_GRID_MAX = 12  # points of an explorer's grid of population sizes
LAPLACE_CELLS = 400  # cells between the two Laplace means in explore_tradeoff
AMPLIFICATION_N_MAX = 10**7  # largest n of explore_amplification (about 0.2 s per bound there)
POPULATION_N_MAX = 10**5  # largest n of explore_population_mix (users are listed one by one)
POPULATION_LEVEL_MAX = 10.0  # largest local level of explore_population_mix
POPULATION_LEVELS_MAX = 10  # number of distinct levels of explore_population_mix
ATTACK_PEOPLE_MAX = 2_000  # people of explore_dsigma_attack
ATTACK_RESAMPLES_MAX = 200  # report draws per release order in explore_dsigma_attack
CHAIN_PROFILES_MAX = 41  # profiles of explore_profile_chain
SWAP_STRATUM_MAX = 10**8  # largest stratum of explore_swap_rate (swapping_epsilon's accurate range)


def _size_grid(n_grid: object, name: str, maximum: int) -> np.ndarray:
    """A grid of population sizes: 2 to ``EXPLORER_GRID_MAX`` distinct integers in [2, maximum],
    sorted."""
    sizes = np.unique(check_array(n_grid, name, ndim=1, integer=True, low=2, high=maximum))
    if not 2 <= sizes.size <= EXPLORER_GRID_MAX:
        raise ValueError(f"{name} must hold 2 to {EXPLORER_GRID_MAX} distinct sizes, got "
                         f"{sizes.size}")
    return sizes


def _explorer_axes(
    size: tuple[float, float], ncols: int = 1, width_ratios: tuple[float, ...] | None = None,
    bottom: float = 0.55,
) -> tuple[Figure, np.ndarray]:
    """A detached figure of ``ncols`` panels side by side with fixed margins (in inches): no
    layout engine, which would measure every text of the figure at each draw, about 40% of an
    update's drawing time."""
    width, height = size
    fig = plt.figure(figsize=size, layout="none")
    plt.close(fig)  # returned, not shown twice by the notebook's inline backend
    grid = {"left": 0.75 / width, "right": 1 - 0.15 / width, "bottom": bottom / height,
            "top": 1 - 0.35 / height, "wspace": 0.9 * ncols / (width - 0.9 * ncols),
            "width_ratios": width_ratios}
    return fig, fig.subplots(1, ncols, squeeze=False, gridspec_kw=grid)[0]


def _lighten_log_panel(ax: Axes) -> None:
    """Savings on a log-log panel of an explorer, drawn by :func:`plot_lines` (its limits set, ticks
    at the bottom and left), each tick being five artists made anew at every draw: no minor ticks
    (the labelled major ticks of ``_readable_log_ticks`` stay), and only the major ticks inside the
    limits (the log locator adds a decade beyond each end, made but not drawn). The title is placed
    by hand where matplotlib's automatic placement puts it for such axes (that placement lays out
    every tick label first)."""
    for axis, limits in ((ax.xaxis, ax.get_xlim()), (ax.yaxis, ax.get_ylim())):
        low, high = sorted(limits)
        ticks = axis.get_major_locator()()
        # a hair wider than the limits: matplotlib itself draws the ticks within 1e-10 of them
        inside = (ticks >= low * (1 - 1e-9)) & (ticks <= high * (1 + 1e-9))
        axis.set_major_locator(FixedLocator(ticks[inside]))
        axis.set_minor_locator(NullLocator())
    ax.set_title(ax.get_title(), y=1.0)


def explore_tradeoff(eps: float = 1.0, mu: float = 1.0) -> Figure:
    r"""Part I explorer: exact trade-off curves of randomized response and of the Laplace
    mechanism at level ``eps`` (both pure :math:`\varepsilon`-DP) and of the Gaussian mechanism
    at ``mu`` (:math:`G_\mu`), on the unit square with perfect privacy for reference (Chen, Cao
    & Ge, GSPA, equation 5 and Facts 1 and 3; Dong, Roth & Su 2022).

    - Randomized response: :func:`~shuffle_lib.accounting.fdp.tradeoff_from_distributions` on
      the two rows of :func:`~shuffle_lib.randomizers.krr_channel` (the curve is
      :math:`f_{\varepsilon,0}`).
    - Laplace, sensitivity 1 and scale :math:`1/\varepsilon`: the same exact computation on the
      output rounded to ``LAPLACE_CELLS`` (400) equal cells between the two means plus the two
      half-lines outside them, where the likelihood ratio is constant. Rounding is
      post-processing and keeps every likelihood-ratio threshold test, so the curve is exact at
      the 401 thresholds and joins them by chords: it lies above the continuous curve, by less
      than 1e-4 (the tests compare it with the closed form).
    - Gaussian: :func:`~shuffle_lib.accounting.fdp.gdp_tradeoff`.

    ``eps`` and ``mu`` lie in (0, 20].

    >>> fig = explore_tradeoff(eps=1.0, mu=1.0)
    >>> fig.axes[0].get_xlabel()
    'type I error α'
    """
    level = check_real(eps, "eps", low=0.0, low_open=True, high=EXPLORER_LEVEL_MAX)
    shift = check_real(mu, "mu", low=0.0, low_open=True, high=EXPLORER_LEVEL_MAX)
    alpha = np.linspace(0.0, 1.0, 501)
    rr = krr_channel(2, level)
    cuts = np.concatenate([[-np.inf], np.linspace(0.0, 1.0, LAPLACE_CELLS + 1), [np.inf]])
    # cell masses from the tail on each mean's far side, so no digit cancels
    on_x = -np.diff(laplace.sf(cuts, loc=0.0, scale=1.0 / level))
    on_x_prime = np.diff(laplace.cdf(cuts, loc=1.0, scale=1.0 / level))
    curves = {
        f"randomized response, ε = {level:.3g}":
            tradeoff_from_distributions(rr[0], rr[1], alpha),
        f"Laplace, ε = {level:.3g}":
            tradeoff_from_distributions(on_x, on_x_prime, alpha),
        f"Gaussian, μ = {shift:.3g}": gdp_tradeoff(shift, alpha),
    }
    fig, (ax,) = _explorer_axes((4.8, 4.6))
    plot_tradeoff_curves(alpha, curves, title="trade-off curves", ax=ax)
    # plain-text labels: a new canvas parses mathtext anew, a large part of one update's time
    ax.set_xlabel("type I error α")
    ax.set_ylabel("type II error β")
    return fig


def explore_amplification(
    eps0: float = 4.0,
    delta: float = 1e-6,
    n_grid: ArrayLike = (1_000, 10_000, 100_000, 1_000_000),
) -> Figure:
    r"""Part II explorer: central :math:`\varepsilon` at ``delta`` against the number of users for
    every amplification bound of the clones chapter, at local level ``eps0``: Feldman, McMillan &
    Talwar (2021)'s equation (1) and Theorem 3.1 (only where
    :math:`\varepsilon_0\le\ln(n/(16\ln(2/\delta)))`), their numerical clone bound, its stronger
    variant for randomized response, Erlingsson et al. (2019) (only for
    :math:`\varepsilon_0\le 1/2`, :math:`n\ge 1000`, :math:`\delta\le 1/100`), the generic privacy
    blanket of Balle et al. (2019), the exact floor of shuffled randomized response, and
    :math:`\varepsilon_0` itself (no shuffling). Each value is one call of
    :mod:`shuffle_lib.accounting`.

    ``eps0`` in (0, 10], ``delta`` in [1e-150, 0.1], ``n_grid`` 2 to ``EXPLORER_GRID_MAX`` (12)
    sizes in [2, ``AMPLIFICATION_N_MAX``] (1e7). The numerical bounds cost about 10-30 ms per size
    up to a million users and grow with :math:`\sqrt n` beyond.

    >>> fig = explore_amplification(eps0=4.0, delta=1e-6, n_grid=[1000, 10000])
    >>> fig.axes[0].get_xlabel()
    'number of users n'
    """
    level = check_real(eps0, "eps0", low=0.0, low_open=True, high=10.0)
    target = check_real(delta, "delta", low=1e-150, high=0.1)
    n = _size_grid(n_grid, "n_grid", AMPLIFICATION_N_MAX)
    closed_form, theorem, erlingsson = (np.full(n.shape, np.nan) for _ in range(3))
    proved = level <= np.atleast_1d(fmt21_validity_limit(n, target))
    if proved.any():
        closed_form[proved] = fmt21_closed_form_epsilon(level, n[proved], target)
        theorem[proved] = fmt21_theorem_epsilon(level, n[proved], target)
    small = (n >= 1000) & (level <= 0.5) & (target <= 0.01)
    if small.any():
        erlingsson[small] = erlingsson19_epsilon(level, n[small], target)
    lines = {
        "no shuffling (ε₀)": np.full(n.shape, level),
        "equation (1)": closed_form,
        "Theorem 3.1": theorem,
        "clone numerical (FMT21)": np.atleast_1d(fmt21_numerical_epsilon(level, n, target)),
        "clone numerical (stronger)":
            np.atleast_1d(clone_numerical_epsilon(level, n, target, "stronger")),
        "Erlingsson et al. 2019": erlingsson,
        "privacy blanket (generic)": np.atleast_1d(bbgn19_epsilon(level, n, target)),
        "shuffled RR, exact (floor)":
            np.array([shuffled_rr_exact_epsilon(level, int(m), target) for m in n]),
    }
    fig, (ax,) = _explorer_axes((6.0, 4.0))
    with matplotlib.rc_context({"legend.fontsize": "x-small"}):  # plot_lines' legend, small
        plot_lines(n, lines, xlabel="number of users n", ylabel="central ε",
                   title=f"ε₀ = {level:g}, δ = {target:.0e}", logx=True, logy=True, ax=ax)
    _lighten_log_panel(ax)
    # the reference, drawn first, beneath a bound that certifies nothing; its legend entry alike
    for reference in (ax.get_lines()[0], ax.get_legend().legend_handles[0]):
        reference.set_color("0.6")
        reference.set_linestyle(":")
        reference.set_marker("")
    return fig


def _people_per_level(weights: np.ndarray, n: int) -> np.ndarray:
    """``n`` users split in the proportions ``weights`` (sum 1), rounded by largest remainder."""
    raw = weights * n
    counts = np.floor(raw).astype(np.int64)
    counts[np.argsort(counts - raw, kind="stable")[: n - int(counts.sum())]] += 1
    return counts


def explore_population_mix(
    shares: ArrayLike = (0.54, 0.37, 0.09),
    levels: ArrayLike = (0.1, 0.5, 1.0),
    delta: float = 1e-4,
    n_grid: ArrayLike = (1_000, 3_000, 10_000, 30_000, 100_000),
) -> Figure:
    r"""Part III explorer: a population of personalized local levels mixed in the proportions
    ``shares`` (one per entry of ``levels``, normalized; users rounded by largest remainder), and
    its central :math:`\varepsilon` at ``delta`` for shuffled personalized randomized response
    against the number of users: GSPA's :math:`\mu`-GDP value (Chen, Cao & Ge, Theorem 2, an
    approximation; :func:`~shuffle_lib.accounting.personalized.gspa_epsilon`), the exact
    evaluation of the same clone reduction (a rigorous bound;
    :func:`~shuffle_lib.accounting.personalized.personalized_numerical_epsilon`) and the exact
    privacy of the protocol on one pair of datasets (a floor;
    :func:`~shuffle_lib.accounting.personalized.shuffled_personalized_rr_epsilon`). The default
    population is GSPA's conservative, moderate and liberal users (levels 0.1, 0.5 and 1 in the
    proportions 0.54, 0.37 and 0.09; :func:`~shuffle_lib.privacy_levels.preference_levels`).

    ``shares`` non-negative, not all zero; ``levels`` in [0, 10], at most 10 of them; ``delta``
    in [1e-12, 0.1]; ``n_grid`` 2 to 12 sizes in [2, ``POPULATION_N_MAX``] (1e5: GSPA's value and
    the floor list the users one by one).

    >>> fig = explore_population_mix([0.5, 0.5], [0.5, 2.0], delta=1e-4, n_grid=[1000, 2000])
    >>> fig.axes[1].get_xlabel()
    'number of users n'
    """
    weights = check_array(shares, "shares", ndim=1, low=0.0)
    eps_levels = check_array(levels, "levels", ndim=1, low=0.0, high=POPULATION_LEVEL_MAX)
    if eps_levels.size > POPULATION_LEVELS_MAX:
        raise ValueError(f"levels must hold at most {POPULATION_LEVELS_MAX} levels, got "
                         f"{eps_levels.size}")
    if weights.shape != eps_levels.shape:
        raise ValueError(f"shares must hold one share per level ({eps_levels.size}), got "
                         f"{weights.size}")
    total = float(weights.sum())
    if not 0 < total < np.inf:
        raise ValueError(f"shares must hold finite values that are not all zero, got {shares!r}")
    weights = weights / total
    target = check_real(delta, "delta", low=1e-12, high=0.1)
    sizes = _size_grid(n_grid, "n_grid", POPULATION_N_MAX)
    gspa, exact, floor = (np.empty(sizes.shape) for _ in range(3))
    for i, n in enumerate(sizes):
        counts = _people_per_level(weights, int(n))
        population = np.repeat(eps_levels, counts)
        gspa[i] = gspa_epsilon(population, 0.0, target)
        exact[i] = personalized_numerical_epsilon(eps_levels, 0.0, target, counts=counts)
        floor[i] = shuffled_personalized_rr_epsilon(population, target)
    fig, axes = _explorer_axes((9.2, 3.8), 2)
    positions = np.arange(eps_levels.size)
    # the y-label names the bars (no legend), three y ticks: each artist is redrawn per update
    axes[0].bar(positions, weights, color="0.6")
    axes[0].set_xticks(positions, [f"{level:g}" for level in eps_levels])
    axes[0].set_ylim(0, 1)
    axes[0].set_yticks([0.0, 0.5, 1.0])
    axes[0].set_xlabel("local level εᵢ")
    axes[0].set_ylabel("share of users")
    axes[0].set_title("population", y=1.0)  # placed by hand: see _lighten_log_panel
    with matplotlib.rc_context({"legend.fontsize": "small"}):  # plot_lines' legend, small
        plot_lines(sizes, {"GSPA μ-GDP (approximate)": gspa,
                           "clone reduction, exact (rigorous)": exact,
                           "shuffled RR, exact (floor)": floor},
                   xlabel="number of users n", ylabel="central ε",
                   title=f"δ = {target:.0e}", logx=True, logy=True, ax=axes[1])
    _lighten_log_panel(axes[1])
    return fig


def explore_dsigma_attack(
    t: ArrayLike,
    x: ArrayLike,
    sources: ArrayLike,
    radius: float = 0.05,
    alpha: float = 4.0,
    *,
    n_categories: int = 8,
    eps: float = 2.5,
    resamples: int = 20,
    block: int = 4,
    n_neighbors: int = 15,
    rng: RngLike = 0,
) -> Figure:
    r"""Part IV explorer: the :math:`d_\sigma` mechanism of Meehan et al. (2022, Algorithm 1) with
    groups of ``radius`` around the public positions ``t`` and privacy parameter ``alpha``
    (Kendall's tau), against plain LDP (original order) and the uniform shuffle. Left: the labels
    it releases, drawn at the position of the person each is attributed to. Right, for each
    release: the attack's success, the vulnerability rate :math:`\rho` of the majority vote over
    the precomputed ``sources`` (Section 5; :func:`~shuffle_lib.attacks.vulnerability_rate` with
    ``resamples`` report draws), and what a learner recovers, the accuracy of the k-nearest-
    neighbour reconstruction (:func:`~shuffle_lib.attacks.knn_reconstruction`, Meehan et al.'s
    Figure 1 with k-NN in place of a Gaussian process) on the labels and on blocks of ``block``
    consecutive labels (the coarse trend; 4 gives the two clusters of
    :func:`~shuffle_lib.datasets.synthetic_clusters`). This k-NN score stands in for the
    chapter's learnability error :math:`\lambda`, whose calibrated classifier takes most of a
    second to fit.

    Everybody reports through ``n_categories``-ary randomized response at ``eps``, one draw of
    ``rng`` per call (a fixed seed gives the same reports at every slider setting). ``t`` is
    ``(n, 2)`` with at most ``ATTACK_PEOPLE_MAX`` (2,000) people and ``|t| <= 1e150``; ``x`` one
    label per person below ``n_categories`` (2 to 8, the colours of
    :func:`plot_labelled_points`); ``sources`` the ``(n, k)`` output of
    :func:`~shuffle_lib.attacks.attack_neighbours` (computed once, outside the update);
    ``resamples`` at most 200.

    >>> from shuffle_lib.attacks import attack_neighbours
    >>> from shuffle_lib.datasets import synthetic_clusters
    >>> data = synthetic_clusters(200, rng=0)
    >>> sources = attack_neighbours(data.t, 0.25, 25, rng=0)
    >>> fig = explore_dsigma_attack(data.t, data.x, sources, radius=0.05, alpha=4.0,
    ...                             n_categories=8, eps=2.5, resamples=10, block=4,
    ...                             n_neighbors=15, rng=0)
    >>> fig.axes[1].get_ylabel()
    'rate or accuracy'
    """
    from shuffle_lib.attacks import knn_reconstruction, vulnerability_rate
    from shuffle_lib.dsigma import DSigmaMechanism

    points = check_array(t, "t", ndim=2, low=-1e150, high=1e150)
    n = points.shape[0]
    if points.shape[1] != 2 or not 2 <= n <= ATTACK_PEOPLE_MAX:
        raise ValueError(f"t must be (n, 2) public positions with 2 <= n <= {ATTACK_PEOPLE_MAX}, "
                         f"got shape {points.shape}")
    k = check_integer(n_categories, "n_categories", 2, len(PAIRED_LABEL_COLORS))
    values = check_array(x, "x", ndim=1, integer=True, low=0, high=k - 1)
    if values.shape != (n,):
        raise ValueError(f"x must hold one label per person ({n}), got shape {values.shape}")
    neighbours = check_array(sources, "sources", ndim=2, integer=True, low=-1, high=n - 1)
    if neighbours.shape[0] != n:
        raise ValueError(f"sources must hold one row per person ({n}), got shape "
                         f"{neighbours.shape}")
    r = check_real(radius, "radius", low=0.0)
    privacy = check_real(alpha, "alpha", low=0.0)
    level = check_real(eps, "eps", low=0.0, low_open=True, high=EXPLORER_LEVEL_MAX)
    draws = check_integer(resamples, "resamples", 1, ATTACK_RESAMPLES_MAX)
    merge = check_integer(block, "block", 1, k)
    nearest = check_integer(n_neighbors, "n_neighbors", 1, n)
    gen = as_rng(rng)
    mechanism = DSigmaMechanism.from_positions(points, r, privacy)
    reports = k_randomized_response(values, k, level, rng=gen)
    released_by = f"mechanism (width {mechanism.width})"
    orders = {"LDP (original order)": np.arange(n), released_by: mechanism.sample_permutation(gen),
              "uniform shuffle": gen.permutation(n)}
    scores = {}
    for name, order in orders.items():
        guess = knn_reconstruction(points, reports[order], nearest)
        scores[name] = [vulnerability_rate(values, neighbours, order, level, k, draws, rng=gen),
                        float(np.mean(guess == values)),
                        float(np.mean(guess // merge == values // merge))]
    fig, axes = _explorer_axes((10.0, 3.6), 2, width_ratios=(1.7, 1.0), bottom=0.75)
    plot_labelled_points(points, reports[orders[released_by]],
                         title=f"released, r = {r:g}, α = {privacy:g}",
                         xlabel="public position t₁", ylabel="public position t₂", ax=axes[0])
    measures = np.arange(3)
    for j, (name, row) in enumerate(scores.items()):
        axes[1].bar(measures + 0.27 * (j - 1), row, width=0.27, label=name,
                    hatch=HATCHES[j % len(HATCHES)])
    axes[1].set_xticks(measures, ["attack\nρ", "k-NN\nlabels",
                                  f"k-NN\nblocks of {merge}"])
    axes[1].set_ylim(0, 1.35)  # room for the legend above the bars
    axes[1].set_yticks(np.linspace(0.0, 1.0, 6))
    axes[1].set_ylabel("rate or accuracy")
    axes[1].set_title(f"{n} people, {draws} report draws")
    axes[1].legend(frameon=False, fontsize="x-small", loc="upper center", ncol=2)
    return fig


def explore_profile_chain(eps: float = 0.5, k: int = 6) -> Figure:
    r"""Part V explorer: the Bernoulli chain of Geumlek & Chaudhuri (2019, Figure 3): ``k``
    profiles with :math:`p` evenly spaced on [0, 1], neighbours sensitive. Left: each profile's
    flip probability at level ``eps`` under Smooth One Bit (their Algorithm 3, one linear program,
    :func:`~shuffle_lib.profile.smooth_one_bit`), One Bit Cluster (Algorithm 2, one flip per
    connected component, :func:`~shuffle_lib.profile.one_bit_cluster`) and randomized response
    (:func:`~shuffle_lib.randomizers.krr_channel`). Right: the probability that each profile
    reports 1 (:func:`~shuffle_lib.profile.output_laws`); the wider the spread, the more an
    analyst learns about the profiles.

    ``eps`` in (0, 20], ``k`` from 2 to ``CHAIN_PROFILES_MAX`` (41).

    >>> fig = explore_profile_chain(eps=0.5, k=6)
    >>> fig.axes[0].get_ylabel()
    'flip probability'
    """
    from shuffle_lib.profile import (
        ProfileGraph,
        flip_channels,
        one_bit_cluster,
        output_laws,
        smooth_one_bit,
    )

    level = check_real(eps, "eps", low=0.0, low_open=True, high=EXPLORER_LEVEL_MAX)
    size = check_integer(k, "k", 2, CHAIN_PROFILES_MAX)
    p = np.linspace(0.0, 1.0, size)
    chain = ProfileGraph(p, np.column_stack([np.arange(size - 1), np.arange(1, size)]))
    flips = {"Smooth One Bit (LP)": smooth_one_bit(chain, level),
             "One Bit Cluster": one_bit_cluster(chain, level),
             "randomized response": np.full(size, krr_channel(2, level)[0, 1])}
    reports_one = {name: output_laws(chain, flip_channels(flip))[:, 1]
                   for name, flip in flips.items()}
    reports_one["no noise"] = p  # last, so each mechanism keeps its colour in both panels
    fig, axes = _explorer_axes((9.2, 3.8), 2)
    plot_lines(p, flips, xlabel="profile p = P[bit = 1]", ylabel="flip probability",
               title=f"chain of {size}, ε = {level:g}", ax=axes[0])
    plot_lines(p, reports_one, xlabel="profile p = P[bit = 1]", ylabel="P[report 1]",
               title="what the analyst sees", ax=axes[1])
    axes[0].set_ylim(0, 0.5)  # a flip beyond 1/2 is never needed
    return fig


def explore_swap_rate(
    mape_rates: ArrayLike,
    mape_values: ArrayLike,
    rate: float = 0.1,
    stratum_size: int = 264_331,
) -> Figure:
    r"""Part VI explorer: the Permutation Algorithm's budget against the swap rate for a largest
    stratum of ``stratum_size`` households (Bailie, Gong & Meng 2023, theorem slide;
    :func:`~shuffle_lib.swapping.swapping_epsilon`, with the floor of
    :func:`~shuffle_lib.swapping.minimum_swapping_epsilon`), and the error the chosen ``rate``
    costs: ``mape_values`` measured at ``mape_rates`` by swap runs done beforehand (this function
    runs no swap), joined by straight lines in the log-odds of the rate and read off at ``rate``
    (marked only inside the measured range).

    ``rate`` in (0, 1); ``stratum_size`` from 1 to 1e8; ``mape_rates`` distinct rates in (0, 1)
    and ``mape_values`` the matching non-negative errors (%), at least one.

    >>> fig = explore_swap_rate([0.01, 0.5], [1.0, 10.0], rate=0.1, stratum_size=1000)
    >>> fig.axes[0].get_ylabel()
    'budget ε'
    """
    from shuffle_lib.swapping import minimum_swapping_epsilon, swapping_epsilon

    at = check_array(mape_rates, "mape_rates", ndim=1, low=0.0, high=1.0)
    if ((at <= 0) | (at >= 1)).any() or np.unique(at).size != at.size:
        raise ValueError(f"mape_rates must hold distinct rates strictly between 0 and 1, got "
                         f"{mape_rates!r:.80}")
    errors = check_array(mape_values, "mape_values", ndim=1, low=0.0)
    if errors.shape != at.shape:
        raise ValueError(f"mape_values must hold one error per rate ({at.size}), got "
                         f"{errors.size}")
    chosen = check_real(rate, "rate", low=0.0, high=1.0, low_open=True, high_open=True)
    b = check_integer(stratum_size, "stratum_size", 1, SWAP_STRATUM_MAX)
    order = np.argsort(at)
    at, errors = at[order], errors[order]
    grid = expit(np.linspace(-7.0, 10.0, 400))
    budget = swapping_epsilon(b, grid)
    chosen_budget = float(swapping_epsilon(b, chosen))
    floor, best_rate = minimum_swapping_epsilon(b)
    inside = at[0] <= chosen <= at[-1]
    cost = float(np.interp(logit(chosen), logit(at), errors)) if inside else np.nan
    fig, axes = _explorer_axes((9.2, 3.8), 2)
    plot_lines(grid, {f"budget, b = {b:,}": budget},
               points={f"p = {chosen:.3g}": ([chosen], [chosen_budget]),
                       "floor ½ ln(b + 1) at p*": ([best_rate], [floor])},
               xlabel="swap rate p", ylabel="budget ε",
               title=f"ε = {chosen_budget:.2f}", ax=axes[0])
    marked = {f"p = {chosen:.3g} (read off the runs)": ([chosen], [cost])} if inside else None
    plot_lines(at, {"measured (mean over runs)": errors}, points=marked,
               xlabel="swap rate p", ylabel="MAPE (%)",
               title=f"MAPE about {cost:.2f}%" if inside else "outside the measured rates",
               ax=axes[1])
    for ax in axes:
        ax.set_xscale("logit")
        # a few plain ticks: the logit scale's default minor ticks and mathtext labels take most
        # of the drawing time
        ax.xaxis.set_major_locator(FixedLocator([1e-3, 0.01, 0.1, 0.5, 0.9, 0.99, 0.999, 0.9999]))
        ax.xaxis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:g}"))
        ax.xaxis.set_minor_locator(NullLocator())
    axes[1].get_lines()[0].set_marker("o")
    return fig


def _table_index(values: np.ndarray, chosen: object, name: str) -> int:
    """Index of ``chosen`` among the table's ``values`` (``ValueError`` naming it otherwise)."""
    value = check_real(chosen, name)
    hits = np.nonzero(np.isclose(values, value, rtol=1e-12, atol=0.0))[0]
    if hits.size == 0:
        raise ValueError(f"{name} must be one of the table's values {values.tolist()}, got "
                         f"{chosen!r}")
    return int(hits[0])


def explore_rounds(table: RoundsTable, eps0: float = 4.0, n: int = 100_000,
                   rounds: int = 10) -> Figure:
    r"""Part II explorer: the cost of :math:`T` shuffled rounds, read off a
    :class:`~shuffle_lib.accounting.rounds.RoundsTable` computed beforehand
    (:func:`~shuffle_lib.accounting.rounds.rounds_table`; this function computes no bound).
    Left: central :math:`\varepsilon` against :math:`T` at ``eps0`` and ``n``, the upper bound
    for every :math:`\varepsilon_0`-LDP randomizer (the stronger clone pair's PLD, composed) and
    the floor of shuffled randomized response, with :math:`T\varepsilon_0` (no shuffling, basic
    composition) for scale. Right: the same two against :math:`n` at ``eps0`` and ``rounds``.
    The chosen point is marked on both. ``eps0``, ``n`` and ``rounds`` must be values of the
    table.

    >>> from shuffle_lib.accounting.rounds import rounds_table
    >>> table = rounds_table([2.0], [1000, 10000], [1, 10])
    >>> fig = explore_rounds(table, eps0=2.0, n=1000, rounds=10)
    >>> fig.axes[1].get_xlabel()
    'number of users n'
    """
    check_instance(table, "table", RoundsTable)
    i = _table_index(table.eps0, eps0, "eps0")
    j = _table_index(table.n.astype(float), n, "n")
    t = _table_index(table.rounds.astype(float), rounds, "rounds")
    level, size, count = float(table.eps0[i]), int(table.n[j]), int(table.rounds[t])
    fig, axes = _explorer_axes((9.2, 3.8), 2)
    by_rounds = {"upper (any ε₀-LDP randomizer)": table.upper[i, j],
                 "floor (shuffled RR)": table.floor[i, j]}
    if table.rounds.size > 1:
        by_rounds["T ε₀ (no shuffling)"] = table.rounds * level
    chosen = {f"T = {count}": ([count, count], [table.upper[i, j, t], table.floor[i, j, t]])}
    plot_lines(table.rounds, by_rounds, points=chosen, xlabel="rounds T",
               ylabel="central ε", title=f"n = {size:,}, ε₀ = {level:g}",
               logx=table.rounds.size > 1, logy=True, ax=axes[0])
    by_size = {"upper (any ε₀-LDP randomizer)": table.upper[i, :, t],
               "floor (shuffled RR)": table.floor[i, :, t]}
    plot_lines(table.n, by_size,
               points={f"n = {size:,}": ([size, size], [table.upper[i, j, t],
                                                        table.floor[i, j, t]])},
               xlabel="number of users n", ylabel="central ε",
               title=f"T = {count}: ε between {table.floor[i, j, t]:.3g} and "
                     f"{table.upper[i, j, t]:.3g}",
               logx=table.n.size > 1, logy=True, ax=axes[1])
    for ax in axes:
        _lighten_log_panel(ax)
    axes[1].get_legend().remove()  # the same two series as the left panel's legend
    return fig
