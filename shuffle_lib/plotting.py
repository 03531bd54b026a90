"""Pure plotting functions: data in, ``matplotlib.figure.Figure`` out.

Chapters compute numbers with the library and hand them here; no formula is evaluated in this
module, so the text, the tables and the figures cannot disagree. Every function labels its axes
and draws on a fresh figure unless an ``ax`` is given.
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

    The figure is detached from pyplot, so a notebook shows it once (when it is returned).

    >>> fig, axes = panel_grid(2)
    >>> axes.shape
    (2,)
    """
    if ncols < 1 or nrows < 1:
        raise ValueError(f"need at least one panel, got {nrows} x {ncols}")
    figsize = (size[0] * ncols, size[1] * nrows)
    fig, axes = plt.subplots(nrows, ncols, figsize=figsize, layout="constrained", squeeze=False)
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

    >>> fig = plot_lines([1, 2], {"a": [1, 4]}, xlabel="n", ylabel="error")
    >>> fig.axes[0].get_xlabel()
    'n'
    """
    x_arr = np.asarray(x, dtype=float)
    if not lines and not points:
        raise ValueError("nothing to plot: give at least one line or one set of points")
    fig, axes = _figure_and_axes(ax, (6.0, 4.0))
    for label, y in lines.items():
        y_arr = np.asarray(y, dtype=float)
        if y_arr.shape != x_arr.shape:
            raise ValueError(f"line {label!r} has shape {y_arr.shape}, x has {x_arr.shape}")
        (line,) = axes.plot(x_arr, y_arr, marker="." if errors and label in errors else None,
                            label=label)
        if errors and label in errors:
            half = np.asarray(errors[label], dtype=float)
            if half.shape != x_arr.shape:
                raise ValueError(f"errors for {label!r} have shape {half.shape}, x has "
                                 f"{x_arr.shape}")
            axes.fill_between(x_arr, y_arr - half, y_arr + half, color=line.get_color(), alpha=0.2)
    for label, (px, py) in (points or {}).items():
        axes.plot(np.asarray(px), np.asarray(py), "o", markersize=5, label=label)
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
    if not groups:
        raise ValueError("nothing to plot: give at least one group")
    names = list(groups)
    fig, axes = _figure_and_axes(ax, (6.0, 4.0))
    axes.boxplot([np.asarray(groups[name], dtype=float) for name in names],
                 tick_labels=names, showmeans=False)
    for label, (group, value) in (reference or {}).items():
        if group not in groups:
            raise ValueError(f"reference {label!r} names an unknown group {group!r}")
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

    >>> fig = plot_tradeoff_curves([0, 1], {"f": [1, 0]})
    >>> fig.axes[0].get_ylabel()
    'type II error $\\beta$'
    """
    alpha_arr = np.asarray(alpha, dtype=float)
    fig, axes = _figure_and_axes(ax, (4.8, 4.6))
    axes.plot([0, 1], [1, 0], color="0.6", linestyle="--", label="perfect privacy")
    for label, beta in curves.items():
        axes.plot(alpha_arr, np.asarray(beta, dtype=float), label=label)
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
    ``discrete``, ignoring ``bins``).

    >>> fig = plot_histograms({"a": [0.0, 1.0]}, xlabel="output")
    >>> fig.axes[0].get_ylabel()
    'density'
    """
    if not samples:
        raise ValueError("samples must not be empty")
    arrays = {label: np.asarray(values, dtype=float) for label, values in samples.items()}
    pooled = np.concatenate(list(arrays.values()))
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

    >>> fig = plot_labelled_points([[0, 0], [1, 1]], [0, 1], title="data")
    >>> fig.axes[0].get_title()
    'data'
    """
    xy = np.asarray(points, dtype=float)
    lab = np.asarray(labels)
    if xy.ndim != 2 or xy.shape[1] != 2 or lab.shape != (xy.shape[0],):
        raise ValueError(f"need (n, 2) points and n labels, got {xy.shape} and {lab.shape}")
    if lab.max(initial=-1) >= len(colors):
        raise ValueError(f"label {lab.max()} has no colour ({len(colors)} given)")
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
