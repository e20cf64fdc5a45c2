"""The output figures a reader can read: which paper point is whose, categories as categories,
axis labels in words with units, plain numbers on count axes, a legend that covers nothing."""

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from matplotlib.colors import to_rgba
from omegaconf import OmegaConf

from svmrepro.report.claims.schema import parse_claims
from svmrepro.report.figures import draw, plot, plt
from svmrepro.report.labels import label
from svmrepro.report.ratio_panel import claimed_ratios
from svmrepro.report.spec import spec_from_config
from svmrepro.report.tables import summarise, to_markdown, with_paper

CONF = Path(__file__).resolve().parents[1] / "conf" / "experiment"


def _runs(x, groups, metrics, seeds=(0, 1, 2)):
    """Runs of each group at each x and seed; metric values from ``metrics[name](group, x, seed)``."""
    rows = [{"params.x": str(xv), "tags.algorithm": g, "params.seed": str(s),
             **{f"metrics.{m}": f(g, xv, s) for m, f in metrics.items()}}
            for g in groups for xv in x for s in seeds]
    return pd.DataFrame(rows)


def _spec(**report):
    return spec_from_config("p/f", {"title": "t", "x": "params.x", **report})


def _paper(rows):
    return pd.DataFrame(rows, columns=["group", "x", "metric", "value", "low", "high", "source"])


DATA_SETS = ["banana", "forest_200000", "forest_50000", "waveform"]
CATEGORICAL_RUNS = _runs(DATA_SETS, ["svc", "xtrain"], {"n_sv": lambda g, x, s: 100 + 10 * len(x) + s,
                                                        "test_error": lambda g, x, s: 0.1 + 0.01 * s})
CATEGORICAL_SPEC = _spec(metrics=["test_error", "n_sv"], x_label="data set")
CATEGORICAL_PAPER = _paper([
    ["svc", "banana", "test_error", 0.11, None, None, "T1"],
    ["xtrain", "banana", "test_error", 0.12, None, None, "T1"],
    ["svc", "waveform", "n_sv", 172, None, None, "T1"],
    ["xtrain", "waveform", "n_sv", 87, None, None, "T1"],
])


@pytest.fixture
def categorical():
    table = with_paper(summarise(CATEGORICAL_RUNS, CATEGORICAL_SPEC), CATEGORICAL_PAPER, CATEGORICAL_SPEC)
    fig = draw(table, CATEGORICAL_PAPER, CATEGORICAL_SPEC)
    fig.canvas.draw()
    yield fig
    plt.close(fig)


def _labels(axis, minor=False):
    """The tick labels of ``axis`` inside its view (matplotlib also keeps some just outside)."""
    low, high = sorted(axis.get_view_interval())
    ticks = axis.get_minor_ticks() if minor else axis.get_major_ticks()
    return [t.label1.get_text() for t in ticks if low <= t.get_loc() <= high and t.label1.get_text()]


def _legend(fig):
    legends = [ax.get_legend() for ax in fig.axes if ax.get_legend()]
    assert len(legends) == 1, "one legend for the whole figure"
    return legends[0]


def _paper_markers(ax):
    """(x, y, marker, edge colour) of the hollow markers in ``ax``."""
    return [(x, y, line.get_marker(), to_rgba(line.get_markeredgecolor()))
            for line in ax.lines if line.get_markerfacecolor() == "none" and line.get_marker() not in ("", "None")
            for x, y in zip(line.get_xdata(), line.get_ydata())]


def _ours(ax):
    """{colour: (x, y)} of our filled points in ``ax``."""
    return {to_rgba(c.lines[0].get_color()): (c.lines[0].get_xdata(), c.lines[0].get_ydata()) for c in ax.containers}


def test_each_groups_paper_points_have_its_colour_and_a_marker_of_their_own(categorical):
    ax = categorical.axes[0]  # test_error: a paper point of each group at banana
    markers = _paper_markers(ax)
    assert len(markers) == 2
    assert markers[0][2] != markers[1][2], "two groups' paper points look the same"
    ours = _ours(ax)
    for x, y, _, colour in markers:
        assert colour in ours, "a paper point in no group's colour"
        assert np.isclose(ours[colour][0], x).any(), "a paper point away from its group's own points"
    texts = [t.get_text() for t in _legend(categorical).get_texts()]
    assert "svc (paper)" in texts and "xtrain (paper)" in texts


def test_a_categorical_x_is_dodged_points_with_the_names_as_ticks(categorical):
    for ax in categorical.axes[:2]:
        labels = [t.get_text() for t in ax.get_xticklabels()]
        assert labels == ["banana", "forest_50000", "forest_200000", "waveform"]  # numbers inside read as numbers
        for line in ax.lines:
            joined = line.get_linestyle() not in ("None", "none", "", " ")
            assert not (joined and len(set(np.round(line.get_xdata(), 6))) > 1), "categories joined by a line"
        (x_svc, _), (x_xtrain, _) = _ours(ax).values()
        assert np.all(np.asarray(x_svc) < np.asarray(x_xtrain)), "groups drawn on top of each other"
        assert np.allclose(np.round(x_svc), range(4))


def test_axis_labels_are_words_with_units():
    assert label("fit_time_s") == "fit time (s, wall)"
    assert label("fit_cpu_s") == "fit CPU time (s)"
    assert label("critical_path_time_s") == "critical path (s)"
    assert label("n_sv") == "support vectors"
    assert label("n_bounded_sv") == "bounded SVs"
    assert label("test_error") == "test error (fraction)"
    assert label("test_mse") == "test MSE"
    assert label("params.dataset.n_train") == label("metrics.n_train") == "training set size"
    assert label("filter_wait_s") == "filter wait (s)"  # unknown names: from their suffix
    assert label("n_kernel_evals") == "count of kernel evals"


def _experiment_metrics():
    for path in sorted(CONF.rglob("*.yaml")):
        report = OmegaConf.to_container(OmegaConf.load(path)).get("report") or {}
        yield from report.get("metrics", [])
        yield from (report.get(key) for key in ("x", "group") if report.get(key))


def test_every_metric_an_experiment_reports_has_a_label_without_underscores():
    names = set(_experiment_metrics())
    assert {"fit_time_s", "n_sv", "test_error"} <= names  # the configs were read
    assert [name for name in sorted(names) if "_" in label(name)] == []


def test_the_drawn_labels_have_no_underscores_and_x_label_wins(categorical):
    for ax in categorical.axes:
        assert "_" not in ax.get_ylabel() and ax.get_ylabel()
        assert ax.get_xlabel() == "data set"
    spec = _spec(metrics=["fit_time_s"], x="params.dataset.n_train")
    runs = _runs([500, 1000], ["svc"], {"fit_time_s": lambda g, x, s: x / 100}).rename(
        columns={"params.x": "params.dataset.n_train"})
    fig = draw(summarise(runs, spec), None, spec)
    assert (fig.axes[0].get_xlabel(), fig.axes[0].get_ylabel()) == ("training set size", "fit time (s, wall)")
    plt.close(fig)


@pytest.mark.parametrize("metric", ["n_sv", "fit_time_s"])
def test_a_linear_axis_has_plain_numbers_without_offset_or_powers(metric):
    """Values 120,000 to 120,004: matplotlib would write 0..4 and '+1.2e5' above the axis."""
    spec = _spec(metrics=[metric])
    runs = _runs([1, 2, 3], ["svc"], {metric: lambda g, x, s: 120_000 + x + s / 10})
    fig = draw(summarise(runs, spec), None, spec)
    fig.canvas.draw()
    axis = fig.axes[0].yaxis
    assert axis.get_offset_text().get_text() == ""
    labels = _labels(axis)
    assert labels and all(text.startswith("120,00") for text in labels), labels
    if metric == "n_sv":
        assert all(text.replace(",", "").isdigit() for text in labels), "a count axis with fractions"
    plt.close(fig)


def test_a_count_axis_of_zeros_shows_whole_numbers():
    spec = _spec(metrics=["n_sv"])
    fig = draw(summarise(_runs([1, 2], ["svc"], {"n_sv": lambda g, x, s: 0.0}), spec), None, spec)
    fig.canvas.draw()
    assert _labels(fig.axes[0].yaxis) == ["0", "1", "2"]
    plt.close(fig)


def test_a_log_x_is_labelled_at_the_data_without_crowded_minor_labels():
    spec = _spec(metrics=["fit_time_s"], logx=True, logy=["fit_time_s"])
    x = [500, 1000, 2000, 3000, 4000, 5000]
    fig = draw(summarise(_runs(x, ["svr"], {"fit_time_s": lambda g, x, s: x ** 2 / 1e5}), spec), None, spec)
    fig.canvas.draw()
    ax = fig.axes[0]
    assert _labels(ax.xaxis) == ["500", "1,000", "2,000", "3,000", "5,000"]  # 4,000 would touch 3,000
    for axis in (ax.xaxis, ax.yaxis):
        assert _labels(axis, minor=True) == []
    plt.close(fig)


def test_the_legend_is_outside_every_panel(categorical):
    box = _legend(categorical).get_window_extent()
    for ax in categorical.axes:
        assert not box.overlaps(ax.get_window_extent()), "the legend covers a panel"


def test_the_legend_says_what_the_error_bars_are_when_there_are_some(categorical):
    texts = " ".join(t.get_text() for t in _legend(categorical).get_texts())
    assert "± one standard deviation" in texts and "seeds" in texts
    single = CATEGORICAL_RUNS[CATEGORICAL_RUNS["params.seed"] == "0"]  # one run per point: no std
    fig = draw(summarise(single, CATEGORICAL_SPEC), None, CATEGORICAL_SPEC)
    assert "standard deviation" not in " ".join(t.get_text() for t in _legend(fig).get_texts())
    plt.close(fig)


def test_a_paper_number_for_every_x_stands_once_at_the_right_edge_never_a_band():
    """Fig. 3's 0.13-0.20 "all sizes" range once filled the whole error panel."""
    spec = _spec(metrics=["test_error"])
    paper = _paper([["svc", None, "test_error", 0.2, None, None, "T1"],
                    ["xtrain", None, "test_error", None, 0.1, 0.3, "T1"]])
    numeric = summarise(_runs([1, 2], ["svc", "xtrain"], {"test_error": lambda g, x, s: 0.15 + 0.02 * x}), spec)
    fig = draw(numeric, paper, spec)
    fig.canvas.draw()
    ax = fig.axes[0]
    assert len(ax.patches) == 0, "a shaded band"
    width = ax.get_window_extent().width
    for line in ax.lines:  # no level line across the panel
        shown = line.get_transform().transform(np.column_stack([line.get_xdata(), line.get_ydata()]))
        assert not (np.ptp(shown[:, 1]) < 1 and np.ptp(shown[:, 0]) > 0.5 * width), "a paper line across the panel"
    markers = _paper_markers(ax)
    assert len(markers) == 3 and {colour for *_, colour in markers} == set(_ours(ax))  # svc's, xtrain's 2 ends
    edge = ax.get_window_extent().x1
    for line in ax.lines:
        if line.get_markerfacecolor() == "none":
            shown = line.get_transform().transform(np.column_stack([line.get_xdata(), line.get_ydata()]))
            assert np.all(shown[:, 0] > edge - 0.15 * width), "not at the right edge"
            assert np.all(shown[:, 0] < edge), "outside the panel"
            assert np.all(shown[:, 1] >= ax.get_window_extent().y0 - 1), "below the panel: the y axis misses it"
    assert ax.get_ylim()[1] >= 0.3 and "right edge" in " ".join(t.get_text() for t in _legend(fig).get_texts())
    assert max(ax.get_xticks()) <= 2, "a tick at the edge reads as an x we ran"
    plt.close(fig)
    one_x = summarise(_runs([100000], ["svc", "xtrain"], {"test_error": lambda g, x, s: 0.2}), spec)
    fig = draw(one_x, paper, spec)  # one value of x: a category; the paper point beside ours
    markers = _paper_markers(fig.axes[0])
    assert {colour for *_, colour in markers} == set(_ours(fig.axes[0]))
    assert [t.get_text() for t in fig.axes[0].get_xticklabels()] == ["100000"]
    plt.close(fig)


def test_a_paper_number_at_an_x_is_drawn_at_that_x_and_inside_the_axes():
    """Fig. 3's LIBSVM 450 s at 8000 points: a marker at 8000, on an axis that reaches it."""
    spec = _spec(metrics=["fit_time_s"], x="params.dataset.n_train")
    runs = _runs([500, 2000, 8000], ["svc", "xtrain"], {"fit_time_s": lambda g, x, s: x / 1000}).rename(
        columns={"params.x": "params.dataset.n_train"})
    paper = _paper([["svc", 8000, "fit_time_s", 450.0, None, None, "F3"]])
    fig = draw(summarise(runs, spec), paper, spec)
    fig.canvas.draw()
    ax = fig.axes[0]
    [(x, y, _, _)] = _paper_markers(ax)
    assert (x, y) == (8000, 450.0)
    assert ax.get_ylim()[0] < 450.0 < ax.get_ylim()[1]
    plt.close(fig)


def _scale_of(ys, paper_values=()):
    spec = _spec(metrics=["fit_time_s"])
    runs = _runs([1, 2, 3], ["svc"], {"fit_time_s": lambda g, x, s: ys[x - 1]})
    paper = _paper([["svc", x, "fit_time_s", v, None, None, "T1"] for x, v in paper_values]) if paper_values else None
    fig = draw(summarise(runs, spec), paper, spec)
    scale = fig.axes[0].get_yscale()
    plt.close(fig)
    return scale


def test_an_axis_becomes_log_when_its_positive_values_span_more_than_a_decade():
    """Cascade Table 1: the paper's 30-46 s beside our 0.04-0.14 s, ours flattened at zero."""
    assert _scale_of([0.04, 0.1, 0.14]) == "linear"  # 3.5x: stays linear
    assert _scale_of([0.04, 0.1, 0.14], paper_values=[(1, 46.0), (2, 30.0)]) == "log"  # with the paper's
    assert _scale_of([1.0, 30.0, 300.0]) == "log"
    assert _scale_of([0.0, 30.0, 300.0]) == "linear"  # a zero has no place on a log axis
    spec = _spec(metrics=["n_sv"], x="params.dataset.n_train")
    for x, scale in (([500, 1000, 8000], "log"), ([1, 5, 9], "linear")):
        runs = _runs(x, ["svc"], {"n_sv": lambda g, x, s: 100.0}).rename(columns={"params.x": "params.dataset.n_train"})
        fig = draw(summarise(runs, spec), None, spec)
        assert fig.axes[0].get_xscale() == scale
        plt.close(fig)


def test_a_log_log_time_panel_has_a_labelled_slope_one_guide():
    spec = _spec(metrics=["fit_time_s", "test_error"], x="params.dataset.n_train")
    runs = _runs([1000, 10000, 100000], ["svc"], {"fit_time_s": lambda g, x, s: (x / 1000) ** 1.5,
                                                   "test_error": lambda g, x, s: 0.1}).rename(
        columns={"params.x": "params.dataset.n_train"})
    fig = draw(summarise(runs, spec), None, spec)
    time_panel, error_panel = fig.axes[:2]
    guides = [line for line in time_panel.lines if line.get_color() == "0.55"]
    assert len(guides) == 1
    x, y = (np.log10(np.asarray(v, float)) for v in guides[0].get_data())
    assert np.isclose((y[-1] - y[0]) / (x[-1] - x[0]), 1.0)
    assert (x[0], y[0]) == (3.0, 0.0)  # from our first point
    assert not [line for line in error_panel.lines if line.get_color() == "0.55"]  # linear y: no guide
    assert any("slope 1" in t.get_text() for t in _legend(fig).get_texts())
    plt.close(fig)


def test_a_summary_row_comes_last_and_the_note_says_what_its_bars_are(tmp_path):
    spec = _spec(metrics=["n_sv"], summary_row="mean")
    runs = _runs([1, 2, 10], ["svc"], {"n_sv": lambda g, x, s: 90.0 + x + s})
    fig = draw(summarise(runs, spec), None, spec)
    assert [t.get_text() for t in fig.axes[0].get_xticklabels()] == ["1", "2", "10", "mean"]
    assert "at 'mean'" in " ".join(t.get_text() for t in _legend(fig).get_texts())
    plt.close(fig)
    plot(summarise(runs, spec), None, spec, tmp_path / "f.png")
    assert (tmp_path / "f.png").read_bytes()[:4] == b"\x89PNG"


def test_group_label_titles_the_legend_and_the_table_s_first_column():
    spec = _spec(metrics=["test_error", "n_sv"], x_label="data set", group_label="model and setting")
    table = summarise(CATEGORICAL_RUNS, spec)
    fig = draw(table, None, spec)
    assert _legend(fig).get_title().get_text() == "model and setting"
    plt.close(fig)
    assert to_markdown(table, spec).splitlines()[0].startswith("| model and setting | data set | runs |")
    fig = draw(table, None, CATEGORICAL_SPEC)  # without it, the group column's name in words
    assert _legend(fig).get_title().get_text() == label("tags.algorithm")
    plt.close(fig)


RATIO_CLAIMS = """
claims:
  - id: fewer_svs
    source: T1
    claim: fewer SVs
    paper_says: 82 vs 93
    output: p/f
    test: {kind: compare, metric: n_sv, a: svc, b: cascade, stat: ratio}
    expect: {below: 0.9}
  - id: faster
    source: T1
    claim: faster
    paper_says: 15 s vs 38 s
    output: p/f
    test: {kind: compare, a: {group: svc, metric: fit_cpu_s}, b: {group: cascade, metric: critical_path_cpu_s},
           stat: ratio}
    expect: {below: 0.6}
  - id: same_error
    source: T1
    claim: same error
    paper_says: 0.2 % vs 0.25 %
    output: p/f
    test: {kind: compare, metric: n_sv, a: svc, b: cascade, stat: difference}
    expect: {between: [-1, 1]}
  - id: elsewhere
    source: T2
    claim: fewer SVs elsewhere
    paper_says: 1 vs 2
    output: p/other
    test: {kind: compare, metric: n_sv, a: svc, b: cascade, stat: ratio}
    expect: {below: 0.9}
"""


def test_a_claim_that_tests_a_ratio_gets_a_ratio_panel_with_the_paper_s_ratio_as_markers(tmp_path):
    """Cascade Table 1: cascade / standard #SV and time per problem, the paper's ratio beside ours."""
    claims = parse_claims("p", RATIO_CLAIMS, tmp_path / "claims.yaml")
    spec = _spec(metrics=["n_sv", "fit_cpu_s", "critical_path_cpu_s", "fit_time_s", "critical_path_time_s"])
    values = {("svc", "n_sv"): 100.0, ("cascade", "n_sv"): 80.0, ("svc", "fit_cpu_s"): 0.05,
              ("cascade", "critical_path_cpu_s"): 0.04}
    runs = _runs([1, 2], ["svc", "cascade"], {m: (lambda g, x, s, m=m: values.get((g, m), np.nan) * x)
                                              for m in spec.metrics})
    paper = _paper([["svc", 1, "n_sv", 93, None, None, "T1"], ["cascade", 1, "n_sv", 82, None, None, "T1"],
                    ["svc", 2, "fit_time_s", 38.0, None, None, "T1"],
                    ["cascade", 2, "critical_path_time_s", 15.0, None, None, "T1"]])
    table = with_paper(summarise(runs, spec), paper, spec)
    ratios = claimed_ratios(claims, spec, table)
    assert [(r.a, r.b) for r in ratios] == [(("svc", "n_sv"), ("cascade", "n_sv")),
                                          (("svc", "fit_cpu_s"), ("cascade", "critical_path_cpu_s"))]
    fig = draw(table, paper, spec, ratios)
    panel = next(ax for ax in fig.axes if ax.get_visible() and "ratio" in ax.get_ylabel())
    ours = [line for line in panel.lines if line.get_linestyle() not in ("None", "none")
            and line.get_marker() not in ("None", "")]
    assert [list(np.round(line.get_ydata(), 6)) for line in ours] == [[0.8, 0.8], [0.8, 0.8]]
    paper_ratios = sorted((float(x), round(float(y), 4)) for x, y, *_ in _paper_markers(panel))
    assert paper_ratios == [(1.0, round(82 / 93, 4)), (2.0, round(15 / 38, 4))]  # its time for our CPU time
    assert any(list(line.get_ydata()) == [1.0, 1.0] and line.get_marker() in ("None", "") for line in panel.lines)
    texts = [t.get_text() for t in _legend(fig).get_texts()]
    assert "ratio: support vectors: cascade / svc" in texts and "ratio: support vectors: cascade / svc (paper)" in texts
    plt.close(fig)
    only_n_sv = _spec(metrics=["n_sv"])  # a ratio of metrics the output does not report is not drawn
    assert [r.b for r in claimed_ratios(claims, only_n_sv, summarise(runs, only_n_sv))] == [("cascade", "n_sv")]
    declared = _spec(metrics=["n_sv"], ratios={"metric": "n_sv", "to": "svc"})  # report.ratios draws one too
    assert claimed_ratios([], declared, summarise(runs, declared)) == [ratios[0]]


def _touching(fig) -> list[str]:
    """Pairs of neighbouring tick labels that overlap as the renderer lays them out: upright labels
    by their boxes, turned ones as parallel strips one line high (their upright boxes overlap)."""
    renderer = fig.canvas.get_renderer()
    found = []
    for ax in (ax for ax in fig.axes if ax.get_visible()):
        for axis in (ax.xaxis, ax.yaxis):
            low, high = sorted(axis.get_view_interval())
            ticks = sorted((t for t in axis.get_major_ticks() if low <= t.get_loc() <= high
                            and t.label1.get_visible() and t.label1.get_text()), key=lambda t: t.get_loc())
            for a, b in zip(ticks, ticks[1:]):
                angle = np.radians(a.label1.get_rotation())
                if np.isclose(np.sin(angle), 0):
                    touch = a.label1.get_window_extent(renderer).overlaps(b.label1.get_window_extent(renderer))
                else:
                    apart = abs(np.diff(ax.transData.transform([(a.get_loc(), 0), (b.get_loc(), 0)])[:, 0])[0])
                    touch = apart * abs(np.sin(angle)) < renderer.points_to_pixels(a.label1.get_fontsize())
                if touch:
                    found.append(f"{a.label1.get_text()} / {b.label1.get_text()}")
    return found


def _drawn(spec, runs, tmp_path, monkeypatch):
    """The figure :func:`plot` lays out and writes (kept open)."""
    drawn = []
    monkeypatch.setattr(plt, "close", drawn.append)
    plot(summarise(runs, spec), None, spec, tmp_path / "f.png")
    [fig] = drawn
    return fig


def test_no_two_tick_labels_overlap_and_numbers_make_room(tmp_path, monkeypatch):
    """The potential-SV discard rate: 10,000 / 30,000 / 100,000 ran into each other."""
    spec = _spec(metrics=["discard_fraction", "n_potential_sv", "filter_iterations_per_point"],
                 x="params.dataset.n_train", logx=True, x_label="training set size n")
    x = [100, 300, 1000, 3000, 10000, 30000, 100000]
    runs = _runs(x, ["2", "5", "10", "20"], {"discard_fraction": lambda g, x, s: 1 - 1 / np.sqrt(x),
                                             "n_potential_sv": lambda g, x, s: np.sqrt(x) * int(g),
                                             "filter_iterations_per_point": lambda g, x, s: int(g) * 1.5}).rename(
        columns={"params.x": "params.dataset.n_train"})
    fig = _drawn(spec, runs, tmp_path, monkeypatch)
    assert _touching(fig) == []
    labels = [t.label1.get_text() for t in fig.axes[0].xaxis.get_major_ticks() if t.label1.get_text()]
    assert "100,000" in labels  # the labels were moved apart, not dropped


def test_no_category_name_is_dropped_to_make_room(tmp_path, monkeypatch):
    names = [f"forest_{n}_rows_of_{k}" for k, n in enumerate([50000, 90000, 200000, 400000, 581012, 600000, 700000])]
    spec = _spec(metrics=["n_sv"], x_label="data set")
    fig = _drawn(spec, _runs(names, ["svc", "xtrain"], {"n_sv": lambda g, x, s: 100.0 + s}), tmp_path, monkeypatch)
    assert _touching(fig) == []
    assert [t.get_text() for t in fig.axes[0].get_xticklabels()] == sorted(names, key=lambda n: int(n.split("_")[1]))
