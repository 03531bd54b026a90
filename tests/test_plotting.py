"""Plotting: inputs are checked before drawing (limits, types, shapes); NaN leaves a gap."""

from __future__ import annotations

import numpy as np
import pytest

from shuffle_lib.plotting import (
    panel_grid,
    plot_boxes,
    plot_histograms,
    plot_labelled_points,
    plot_lines,
    plot_tradeoff_curves,
)


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (lambda: panel_grid(10**12), ValueError, "ncols"),
        (lambda: panel_grid(2.5), TypeError, "ncols"),
        (lambda: panel_grid(True), TypeError, "ncols"),
        (lambda: panel_grid(2, nrows="2"), TypeError, "nrows"),
        (lambda: panel_grid(2, size=(1e300, 3.0)), ValueError, "size"),
        (lambda: panel_grid(2, size=(float("nan"), 3.0)), ValueError, "size"),
        (lambda: panel_grid(2, size=5.0), TypeError, "size"),
        (lambda: plot_lines(["a", "b"], {"y": [1.0, 2.0]}, xlabel="x", ylabel="y"), TypeError,
         "x must be"),
        (lambda: plot_lines([1.0, 2.0], None, xlabel="x", ylabel="y"), TypeError, "lines"),
        (lambda: plot_lines([1.0, 2.0], {"y": [1.0]}, xlabel="x", ylabel="y"), ValueError,
         "lines"),
        (lambda: plot_lines([1.0, 2.0], {"y": [1.0, 2.0]}, xlabel=None, ylabel="y"), TypeError,
         "xlabel"),
        (lambda: plot_lines([1.0, 2.0], {"y": [1.0, 2.0]}, xlabel="x", ylabel="y", logx="no"),
         TypeError, "logx"),
        (lambda: plot_lines([1.0, 2.0], {"y": [1.0, 2.0]}, xlabel="x", ylabel="y", ax="ax"),
         TypeError, "ax"),
        (lambda: plot_lines([1.0, 2.0], {"y": [1.0, 2.0]}, xlabel="x", ylabel="y",
                            points={"p": 3.0}), TypeError, "points"),
        (lambda: plot_boxes({"a": [1.0, np.nan]}, xlabel="x", ylabel="y"), ValueError, "groups"),
        (lambda: plot_boxes({"a": [1.0]}, xlabel="x", ylabel="y", reference={"r": ("b", 1.0)}),
         ValueError, "reference"),
        (lambda: plot_histograms({"a": [0.0, 1e300]}, xlabel="x", discrete=True), ValueError,
         "samples"),
        (lambda: plot_histograms({"a": [0.0, np.inf]}, xlabel="x"), ValueError, "samples"),
        (lambda: plot_histograms({"a": [0.0, 1.0]}, xlabel="x", bins=10**12), ValueError, "bins"),
        (lambda: plot_histograms({"a": [0.0, 1.0]}, xlabel="x", discrete="yes"), TypeError,
         "discrete"),
        (lambda: plot_tradeoff_curves([0.0, 1.0], {"f": [1.0]}), ValueError, "curves"),
        (lambda: plot_tradeoff_curves([], {"f": []}), ValueError, "alpha"),
        (lambda: plot_labelled_points([[0.0, 0.0]], [0.5]), ValueError, "labels"),
        (lambda: plot_labelled_points([[0.0, 0.0]], [np.nan]), ValueError, "labels"),
        (lambda: plot_labelled_points([[0.0, 0.0]], [9]), ValueError, "labels"),
        (lambda: plot_labelled_points([[0.0, 0.0]], [0], colors="red"), TypeError, "colors"),
    ],
)
def test_bad_input_is_refused_before_drawing(call, error: type, message: str) -> None:
    with pytest.raises(error, match=message):
        call()


def test_nan_and_infinity_leave_gaps_in_curves() -> None:
    fig = plot_lines([1.0, 2.0, 3.0], {"a": [1.0, np.nan, np.inf]}, xlabel="n", ylabel="y",
                     logy=True)
    assert len(fig.axes[0].get_lines()) == 1
    fig, axes = panel_grid(2, size=(4.0, 3.0))
    assert axes.shape == (2,) and tuple(fig.get_size_inches()) == (8.0, 3.0)
