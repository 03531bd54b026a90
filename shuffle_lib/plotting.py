"""Pure plotting functions: data in, ``matplotlib.figure.Figure`` out.

Chapters compute numbers with the library and hand them here; no formula is evaluated in this
module, so the text, the tables and the figures cannot disagree. Every function labels its axes
and draws on a fresh figure unless an ``ax`` is given.

Inputs are checked before anything is drawn: data are arrays of numbers (``TypeError`` for
strings, bools, None or other objects; NaN and infinities are allowed in curves and points, where
matplotlib leaves a gap, but not in histograms or box plots), labels are strings, flags are bools.
Limits: at most ``MAX_PANELS`` (64) panels and ``MAX_FIGURE_INCHES`` (200) per side of a figure,
at most ``MAX_BINS`` (10,000) histogram bins.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.axes import Axes
from matplotlib.axis import Axis
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter
from numpy.typing import ArrayLike

from shuffle_lib._validation import (
    check_array,
    check_bool,
    check_instance,
    check_integer,
    check_real,
)

MAX_PANELS = 64  # panels of one panel_grid figure (64 take about half a second)
MAX_FIGURE_INCHES = 200.0  # per side: inside the renderers' 2^16-pixel limit up to 300 dpi
MAX_BINS = 10_000  # bins of one histogram (also the integers a discrete histogram spans)


def _values(value: object, name: str, ndim: int = 1, finite: bool = False) -> np.ndarray:
    """``value`` as a non-empty float array with ``ndim`` axes: numbers only (``TypeError`` for
    strings, bools, None or objects); NaN and infinities are kept (matplotlib leaves a gap there)
    unless ``finite``."""
    try:
        arr = np.asarray(value)
    except ValueError as err:  # ragged nesting
        raise TypeError(f"{name} must be an array of numbers, got {value!r:.80}") from err
    if arr.dtype.kind not in "iuf":
        raise TypeError(f"{name} must be an array of numbers, got {value!r:.80}")
    if arr.ndim != ndim or arr.size == 0:
        raise ValueError(f"{name} must be a non-empty {ndim}-D array, got shape {arr.shape}")
    if finite and not np.isfinite(arr).all():
        raise ValueError(f"{name} must hold finite numbers (no NaN or infinity)")
    return arr.astype(float)


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
    standard deviation over trials).

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
    for label, y_arr in curves.items():
        (line,) = axes.plot(x_arr, y_arr, marker="." if label in bands else None, label=label)
        if label in bands:
            axes.fill_between(x_arr, y_arr - bands[label], y_arr + bands[label],
                              color=line.get_color(), alpha=0.2)
    for label, (px, py) in markers.items():
        axes.plot(px, py, "o", markersize=5, label=label)
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
    r"""Trade-off curves :math:`\beta = f(\alpha)` on the unit square, with the line
    :math:`\beta = 1-\alpha` (perfect privacy: no test beats guessing) for reference.

    >>> fig = plot_tradeoff_curves([0.0, 1.0], {"f": [1.0, 0.0]})
    >>> fig.axes[0].get_ylabel()
    'type II error $\\beta$'
    """
    alpha_arr = _values(alpha, "alpha")
    betas = {label: _values(beta, f"curves[{label!r}]")
             for label, beta in _check_mapping(curves, "curves").items()}
    for label, beta in betas.items():
        if beta.shape != alpha_arr.shape:
            raise ValueError(f"curves[{label!r}] has shape {beta.shape}, alpha has "
                             f"{alpha_arr.shape}")
    _check_text(title, "title", optional=True)
    _check_ax(ax)
    fig, axes = _figure_and_axes(ax, (4.8, 4.6))
    axes.plot([0, 1], [1, 0], color="0.6", linestyle="--", label="perfect privacy")
    for label, beta in betas.items():
        axes.plot(alpha_arr, beta, label=label)
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
    ``discrete``, ignoring ``bins``). Samples are finite numbers; at most ``MAX_BINS`` (10,000)
    bins, also for the integers a discrete histogram spans.

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
    for label, values in arrays.items():
        axes.hist(values, bins=edges, density=True, alpha=0.5, label=label)
    axes.set_xlabel(xlabel)
    axes.set_ylabel("density")
    if title:
        axes.set_title(title)
    axes.legend(frameon=False)
    return fig


# Paired light/dark colours: warm (red, orange) and cool (blue, green), in the label order of
# :func:`shuffle_lib.datasets.synthetic_clusters` (cluster, crescent, light/dark half).
PAIRED_LABEL_COLORS = ("#ff9896", "#d62728", "#ffbb78", "#ff7f0e",
                       "#aec7e8", "#1f77b4", "#98df8a", "#2ca02c")


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
