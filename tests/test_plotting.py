"""Plotting: inputs are checked before drawing (limits, types, shapes); NaN leaves a gap. The
explorers draw what the library computes: each test reads the plotted data back and compares it
with the library's value at the slider's setting."""

from __future__ import annotations

import math

import matplotlib
import matplotlib.pyplot as plt
import numpy as np
import pytest
from matplotlib.axes import Axes
from matplotlib.lines import Line2D
from scipy.special import logit

from shuffle_lib.accounting import (
    approx_dp_tradeoff,
    fmt21_numerical_epsilon,
    fmt21_theorem_epsilon,
    fmt21_validity_limit,
    gdp_tradeoff,
    gspa_epsilon,
    personalized_numerical_epsilon,
    shuffled_rr_exact_epsilon,
)
from shuffle_lib.attacks import attack_neighbours, knn_reconstruction, vulnerability_rate
from shuffle_lib.datasets import synthetic_clusters
from shuffle_lib.plotting import (
    HATCHES,
    MARKERS,
    PALETTE,
    explore_amplification,
    explore_dsigma_attack,
    explore_population_mix,
    explore_profile_chain,
    explore_swap_rate,
    explore_tradeoff,
    panel_grid,
    plot_boxes,
    plot_histograms,
    plot_labelled_points,
    plot_lines,
    plot_tradeoff_curves,
    series_marks,
    use_book_style,
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


# ---------------------------------------------------------------------------------------------
# The book's style: a colour-blind-safe palette, and no series told apart by colour alone

# Okabe & Ito (2008), "Color Universal Design": blue, orange, bluish green, vermillion, reddish
# purple, sky blue, black (their yellow, #F0E442, is left out: 1.2:1 against white).
OKABE_ITO = ("#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#000000")


def test_importing_the_module_sets_the_colour_blind_safe_palette_and_readable_text() -> None:
    assert PALETTE == OKABE_ITO
    use_book_style()  # what importing shuffle_lib.plotting did; other tests may have reset it
    assert tuple(matplotlib.rcParams["axes.prop_cycle"].by_key()["color"]) == OKABE_ITO
    fig, ax = plt.subplots()  # a chapter drawing with matplotlib directly gets the palette too
    plt.close(fig)
    first, second = ax.plot([0, 1], [0, 1]), ax.plot([0, 1], [1, 0])
    assert (first[0].get_color(), second[0].get_color()) == OKABE_ITO[:2]
    sizes = {key: matplotlib.font_manager.FontProperties(size=matplotlib.rcParams[key])
             .get_size_in_points() for key in ("font.size", "axes.labelsize", "axes.titlesize",
                                               "xtick.labelsize", "ytick.labelsize",
                                               "legend.fontsize")}
    assert min(sizes.values()) >= 10, sizes


def test_series_differ_in_marker_or_hatch_not_only_in_colour(small_synthetic) -> None:
    x = np.linspace(1.0, 2.0, 200)  # long curves: markers spaced along the line
    fig = plot_lines(x, {f"curve {i}": x + i for i in range(5)}, xlabel="x", ylabel="y",
                     points={"measured": (x[:3], x[:3]), "published": (x[:2], x[:2])})
    lines = fig.axes[0].get_lines()
    assert [ln.get_marker() for ln in lines] == list(MARKERS[:7])
    assert len({ln.get_color() for ln in lines}) == 7
    assert all(ln.get_markevery() is not None for ln in lines[:5])  # not 200 markers each
    assert all(ln.get_linestyle() == "None" for ln in lines[5:])  # points are not joined
    short = plot_lines([1.0, 2.0, 3.0], {"a": [1.0, 2.0, 3.0], "b": [3.0, 2.0, 1.0]},
                       xlabel="x", ylabel="y").axes[0].get_lines()
    assert [ln.get_markevery() for ln in short] == [None, None]  # every point marked
    curves = plot_tradeoff_curves([0.0, 0.5, 1.0], {"f": [1.0, 0.4, 0.0], "g": [1.0, 0.2, 0.0]})
    assert [ln.get_marker() for ln in curves.axes[0].get_lines()[1:]] == list(MARKERS[:2])
    histograms = plot_histograms({"a": [0.0, 1.0], "b": [0.5, 1.5], "c": [1.0, 2.0]},
                                 xlabel="x", bins=4).axes[0]
    hatches = [container.patches[0].get_hatch() for container in histograms.containers]
    assert [str(hatch or "") for hatch in hatches] == list(HATCHES[:3])  # first: plain
    data, sources = small_synthetic
    bars = explore_dsigma_attack(data.t, data.x, sources, resamples=2).axes[1].containers
    assert len({group.patches[0].get_hatch() for group in bars}) == len(bars) == 3
    assert series_marks(2, 5) == {"marker": MARKERS[2], "markevery": None}


# ---------------------------------------------------------------------------------------------
# Explorers


def line(ax: Axes, label: str) -> Line2D:
    """The one line of ``ax`` whose legend label starts with ``label``."""
    found = [ln for ln in ax.get_lines() if ln.get_label().startswith(label)]
    assert len(found) == 1, [ln.get_label() for ln in ax.get_lines()]
    return found[0]


def laplace_tradeoff(eps: float, alpha: np.ndarray) -> np.ndarray:
    """T(Lap(0, 1/eps), Lap(1, 1/eps)) in closed form (Dong, Roth & Su 2022, Example: Laplace)."""
    corner = math.exp(-eps) / 2
    middle = math.exp(-eps) / (4 * np.maximum(alpha, corner))
    return np.where(alpha < corner, 1 - math.exp(eps) * alpha,
                    np.where(alpha <= 0.5, middle, math.exp(-eps) * (1 - alpha)))


@pytest.mark.parametrize(("eps", "mu"), [(0.3, 0.5), (1.0, 1.0), (2.5, 3.0)])
def test_tradeoff_explorer_draws_the_three_exact_curves(eps: float, mu: float) -> None:
    ax = explore_tradeoff(eps, mu).axes[0]
    rr, lap, gauss = (line(ax, name) for name in ("randomized", "Laplace", "Gaussian"))
    alpha = rr.get_xdata()
    assert np.allclose(rr.get_ydata(), approx_dp_tradeoff(eps, 0.0, alpha), atol=1e-12)
    assert np.allclose(gauss.get_ydata(), gdp_tradeoff(mu, alpha), atol=1e-12)
    closed = laplace_tradeoff(eps, alpha)
    gap = lap.get_ydata() - closed
    assert gap.min() > -1e-12 and gap.max() < 1e-4  # exact at the cells, chords above between
    assert (lap.get_ydata() >= rr.get_ydata() - 1e-12).all()  # Laplace is eps-DP as well
    assert f"ε = {eps:.3g}" in rr.get_label() and f"μ = {mu:.3g}" in gauss.get_label()


def test_amplification_explorer_draws_each_bound_where_it_is_proved() -> None:
    n = np.array([1_000, 10_000, 100_000])
    ax = explore_amplification(4.0, 1e-6, list(n)).axes[0]
    assert np.array_equal(line(ax, "clone numerical (FMT21)").get_xdata(), n)
    assert np.allclose(line(ax, "clone numerical (FMT21)").get_ydata(),
                       fmt21_numerical_epsilon(4.0, n, 1e-6), rtol=1e-12)
    floor = line(ax, "shuffled RR").get_ydata()
    assert np.allclose(floor, [shuffled_rr_exact_epsilon(4.0, int(m), 1e-6) for m in n])
    assert (floor <= line(ax, "clone numerical (FMT21)").get_ydata()).all()
    theorem = line(ax, "Theorem 3.1").get_ydata()
    proved = 4.0 <= fmt21_validity_limit(n, 1e-6)
    assert list(proved) == [False, False, True]  # the closed forms start between 1e4 and 1e5
    assert np.isnan(theorem[~proved]).all()
    assert np.isclose(theorem[-1], fmt21_theorem_epsilon(4.0, 100_000, 1e-6))
    assert np.isnan(line(ax, "Erlingsson").get_ydata()).all()  # eps0 > 1/2
    assert np.array_equal(line(ax, "no shuffling").get_ydata(), np.full(3, 4.0))
    small = explore_amplification(0.5, 1e-6, [1_000, 10_000]).axes[0]
    assert np.isfinite(line(small, "Erlingsson").get_ydata()).all()


def test_population_mixer_splits_users_and_draws_both_accountants() -> None:
    levels, shares, delta = np.array([0.5, 1.0, 3.0]), [2.0, 1.0, 1.0], 1e-4
    fig = explore_population_mix(shares, levels, delta, [1_000, 2_001])
    bars, curves = fig.axes
    assert np.allclose([bar.get_height() for bar in bars.patches], [0.5, 0.25, 0.25])
    for i, n in enumerate((1_000, 2_001)):
        # largest remainder: 2,001 users split 1000.5 / 500.25 / 500.25 become 1001 / 500 / 500
        counts = np.array([500, 250, 250]) if n == 1_000 else np.array([1001, 500, 500])
        assert counts.sum() == n
        gspa = gspa_epsilon(np.repeat(levels, counts), 0.0, delta)
        exact = personalized_numerical_epsilon(levels, 0.0, delta, counts=counts)
        assert math.isclose(line(curves, "GSPA").get_ydata()[i], gspa, rel_tol=1e-12)
        assert math.isclose(line(curves, "clone reduction").get_ydata()[i], exact, rel_tol=1e-12)
    floor = line(curves, "shuffled RR").get_ydata()
    assert (floor <= line(curves, "clone reduction").get_ydata()).all()
    # all users at one level: the other bars are empty and the accountants see one level
    one = explore_population_mix([0.0, 1.0], [0.5, 1.0], delta, [1_000, 2_000])
    assert math.isclose(line(one.axes[1], "clone reduction").get_ydata()[0],
                        personalized_numerical_epsilon([1.0] * 1000, 0.0, delta), rel_tol=1e-9)


@pytest.fixture(scope="module")
def small_synthetic():
    data = synthetic_clusters(200, rng=5)
    return data, attack_neighbours(data.t, 0.25, 25, rng=5)


def test_dsigma_explorer_scores_are_the_library_scores(small_synthetic) -> None:
    data, sources = small_synthetic
    # eps = 20: the reports are the true labels (a flip has probability 1e-8), so every score
    # can be recomputed without the explorer's random draws
    fig = explore_dsigma_attack(data.t, data.x, sources, radius=0.0, alpha=4.0, eps=20.0,
                                resamples=5)
    scatter, bars = fig.axes
    heights = np.array([bar.get_height() for bar in bars.patches]).reshape(3, 3)
    ldp, mechanism, uniform = heights
    guess = knn_reconstruction(data.t, data.x, 15)
    expected = [vulnerability_rate(data.x, sources, np.arange(200), 20.0, 8, 5, rng=0),
                np.mean(guess == data.x), np.mean(guess // 4 == data.x // 4)]
    assert np.allclose(ldp, expected)
    # radius 0: every group holds one person, nothing moves, so the mechanism is plain LDP
    assert np.allclose(mechanism, ldp)
    assert "width 0" in bars.get_legend().get_texts()[1].get_text()
    assert uniform[1] < ldp[1] - 0.3  # the uniform shuffle hides the labels
    assert scatter.collections[0].get_offsets().shape == (200, 2)
    assert bars.get_xticklabels()[2].get_text() == "k-NN\nblocks of 4"


def test_dsigma_explorer_dial_moves_between_the_extremes(small_synthetic) -> None:
    data, sources = small_synthetic

    def mechanism_scores(radius: float) -> np.ndarray:
        bars = explore_dsigma_attack(data.t, data.x, sources, radius=radius, alpha=4.0).axes[1]
        return np.array([bar.get_height() for bar in bars.patches]).reshape(3, 3)[1]

    # a larger radius blurs more: the labels' k-NN accuracy falls (clusters far apart survive)
    small, large = mechanism_scores(0.01), mechanism_scores(0.5)
    assert large[1] < small[1] - 0.2 and large[0] <= small[0]


@pytest.mark.parametrize("eps", [0.2, 1.0])
def test_profile_chain_explorer_draws_the_linear_program_flips(eps: float) -> None:
    from shuffle_lib.profile import ProfileGraph, flip_channels, output_laws, smooth_one_bit

    flips_ax, rates_ax = explore_profile_chain(eps, 6).axes
    p = np.linspace(0, 1, 6)
    chain = ProfileGraph(p, [(i, i + 1) for i in range(5)])
    smooth = smooth_one_bit(chain, eps)
    assert np.allclose(line(flips_ax, "Smooth One Bit").get_ydata(), smooth, atol=1e-12)
    assert np.allclose(line(flips_ax, "randomized").get_ydata(), 1 / (1 + math.exp(eps)))
    assert np.allclose(line(rates_ax, "Smooth One Bit").get_ydata(),
                       output_laws(chain, flip_channels(smooth))[:, 1], atol=1e-12)
    assert np.array_equal(line(rates_ax, "no noise").get_ydata(), p)
    # the chain asks only neighbours to look alike: Smooth One Bit flips less than RR
    assert (smooth <= 1 / (1 + math.exp(eps)) + 1e-9).all()
    assert f"ε = {eps:g}" in flips_ax.get_title()


def test_swap_rate_explorer_reads_the_budget_and_the_measured_error() -> None:
    from shuffle_lib.swapping import minimum_swapping_epsilon, swapping_epsilon

    rates, mape = [0.5, 0.01, 0.1], [6.0, 1.0, 2.0]  # any order
    budget_ax, mape_ax = explore_swap_rate(rates, mape, rate=0.05, stratum_size=264_331).axes
    curve = line(budget_ax, "budget")
    assert np.allclose(curve.get_ydata(), swapping_epsilon(264_331, curve.get_xdata()))
    chosen = line(budget_ax, "p = 0.05")
    assert chosen.get_ydata()[0] == swapping_epsilon(264_331, 0.05)
    assert line(budget_ax, "floor").get_ydata()[0] == minimum_swapping_epsilon(264_331)[0]
    measured = line(mape_ax, "measured")
    assert np.array_equal(measured.get_xdata(), [0.01, 0.1, 0.5])
    marked = line(mape_ax, "p = 0.05").get_ydata()[0]
    assert math.isclose(marked, np.interp(logit(0.05), logit([0.01, 0.1]), [1.0, 2.0]))
    assert 1.0 < marked < 2.0
    at_run = explore_swap_rate(rates, mape, rate=0.1).axes[1]
    assert line(at_run, "p = 0.1").get_ydata()[0] == 2.0
    outside = explore_swap_rate(rates, mape, rate=0.9).axes[1]
    assert len(outside.get_lines()) == 1 and outside.get_title() == "outside the measured rates"


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (lambda: explore_tradeoff(0.0, 1.0), ValueError, "eps"),
        (lambda: explore_tradeoff(1.0, 21.0), ValueError, "mu"),
        (lambda: explore_tradeoff("1", 1.0), TypeError, "eps"),
        (lambda: explore_amplification(11.0, 1e-6), ValueError, "eps0"),
        (lambda: explore_amplification(1.0, 0.5), ValueError, "delta"),
        (lambda: explore_amplification(1.0, 1e-6, [1000]), ValueError, "n_grid"),
        (lambda: explore_amplification(1.0, 1e-6, [1000, 10**8]), ValueError, "n_grid"),
        (lambda: explore_amplification(1.0, 1e-6, [1000.5, 2000]), ValueError, "n_grid"),
        (lambda: explore_amplification(1.0, 1e-6, list(range(2, 15))), ValueError, "n_grid"),
        (lambda: explore_population_mix([0.0, 0.0], [1.0, 2.0]), ValueError, "shares"),
        (lambda: explore_population_mix([1.0], [1.0, 2.0]), ValueError, "shares"),
        (lambda: explore_population_mix([1.0, 1.0], [1.0, 11.0]), ValueError, "levels"),
        (lambda: explore_population_mix([1.0] * 11, [1.0] * 11), ValueError, "levels"),
        (lambda: explore_population_mix([1.0], [1.0], 1e-20), ValueError, "delta"),
        (lambda: explore_population_mix([1.0], [1.0], 1e-4, [100, 10**6]), ValueError, "n_grid"),
        (lambda: explore_profile_chain(0.5, 1), ValueError, "k"),
        (lambda: explore_profile_chain(0.5, 42), ValueError, "k"),
        (lambda: explore_profile_chain(True, 6), TypeError, "eps"),
        (lambda: explore_swap_rate([0.01, 1.0], [1.0, 2.0]), ValueError, "mape_rates"),
        (lambda: explore_swap_rate([0.01, 0.01], [1.0, 2.0]), ValueError, "mape_rates"),
        (lambda: explore_swap_rate([0.01, 0.1], [1.0]), ValueError, "mape_values"),
        (lambda: explore_swap_rate([0.01, 0.1], [1.0, -2.0]), ValueError, "mape_values"),
        (lambda: explore_swap_rate([0.01, 0.1], [1.0, 2.0], rate=1.0), ValueError, "rate"),
        (lambda: explore_swap_rate([0.01, 0.1], [1.0, 2.0], stratum_size=0), ValueError,
         "stratum_size"),
        (lambda: explore_swap_rate([0.01, 0.1], [1.0, 2.0], stratum_size=10**9), ValueError,
         "stratum_size"),
    ],
)
def test_explorers_refuse_bad_settings(call, error: type, message: str) -> None:
    with pytest.raises(error, match=message):
        call()


@pytest.mark.parametrize(
    ("change", "error", "message"),
    [
        ({"t": np.zeros((200, 3))}, ValueError, "t must be"),
        ({"t": np.zeros((3_000, 2))}, ValueError, "t must be"),
        ({"x": np.full(200, 8)}, ValueError, "x must be"),
        ({"x": np.zeros(199, dtype=int)}, ValueError, "x must hold"),
        ({"sources": np.full((200, 3), 200)}, ValueError, "sources"),
        ({"sources": np.zeros((199, 3), dtype=int)}, ValueError, "sources"),
        ({"radius": -1.0}, ValueError, "radius"),
        ({"alpha": np.nan}, ValueError, "alpha"),
        ({"n_categories": 9}, ValueError, "n_categories"),
        ({"eps": 0.0}, ValueError, "eps"),
        ({"resamples": 10**6}, ValueError, "resamples"),
        ({"block": 0}, ValueError, "block"),
        ({"n_neighbors": 201}, ValueError, "n_neighbors"),
        ({"rng": "seed"}, TypeError, "rng"),
    ],
)
def test_dsigma_explorer_refuses_bad_settings(small_synthetic, change, error, message) -> None:
    data, sources = small_synthetic
    arguments = {"t": data.t, "x": data.x, "sources": sources, **change}
    with pytest.raises(error, match=message):
        explore_dsigma_attack(**arguments)


@pytest.mark.parametrize(
    ("alpha", "beta", "name"),
    [
        ([0.0, 0.5, 1.5], [1.0, 0.4, 0.0], "alpha"),
        ([-0.1, 0.5, 1.0], [1.0, 0.4, 0.0], "alpha"),
        ([0.0, 0.5, np.inf], [1.0, 0.4, 0.0], "alpha"),
        ([0.0, 0.5, 1.0], [1.0, 1.2, 0.0], "curves"),
        ([0.0, 0.5, 1.0], [1.0, -1e-9, 0.0], "curves"),
        ([0.0, 0.5, 1.0], [1.0, -np.inf, 0.0], "curves"),
    ],
)
def test_tradeoff_points_off_the_unit_square_are_refused(alpha, beta, name: str) -> None:
    with pytest.raises(ValueError, match=name):
        plot_tradeoff_curves(alpha, {"f": beta})


def test_tradeoff_curves_keep_gaps_and_the_closed_square() -> None:
    fig = plot_tradeoff_curves([0.0, 0.5, 1.0], {"f": [1.0, np.nan, 0.0]})  # NaN: a gap
    drawn = fig.axes[0].get_lines()[1].get_ydata()
    assert np.isnan(drawn[1]) and drawn[0] == 1.0 and drawn[2] == 0.0
    for eps in np.geomspace(1e-300, 20.0, 9):  # every explorer level stays on the square
        explore_tradeoff(float(eps), float(eps))


def test_histograms_beyond_the_bar_limit_have_the_same_heights() -> None:
    from shuffle_lib.plotting import BAR_BINS_MAX, MAX_BINS

    values = np.random.default_rng(8).normal(size=5_000)
    for bins in (BAR_BINS_MAX, BAR_BINS_MAX + 1, MAX_BINS):
        fig = plot_histograms({"a": values}, xlabel="x", bins=bins)
        heights, edges = np.histogram(values, bins=bins, density=True)  # numpy's own route
        patches = fig.axes[0].patches
        if bins <= BAR_BINS_MAX:
            np.testing.assert_allclose([p.get_height() for p in patches], heights, rtol=1e-12)
        else:  # one outline: its vertices climb to each bin's height between its edges
            assert len(patches) == 1
            outline = patches[0].get_path().vertices
            tops = outline[1:-1:2, 1][: heights.size]
            np.testing.assert_allclose(tops, heights, rtol=1e-12)
            np.testing.assert_allclose(outline[1:-1:2, 0][: heights.size], edges[:-1],
                                       rtol=1e-12)
