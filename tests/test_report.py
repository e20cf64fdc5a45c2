import json

import numpy as np
import pandas as pd
import pytest

from svmrepro.errors import ConfigError, SvmReproError
from svmrepro.report import build_output
from svmrepro.report.runs import read_runs
from svmrepro.report.spec import spec_from_config
from svmrepro.report.tables import summarise, with_paper

SPEC = spec_from_config(
    "paper_x/fig9", {"title": "t", "x": "params.n", "group": "tags.algorithm", "metrics": ["n_sv", "test_error"]}
)
RUNS = pd.DataFrame(
    {
        "params.n": ["100", "100", "100", "200"],
        "tags.algorithm": ["svc"] * 4,
        "metrics.n_sv": [10.0, 20.0, 30.0, 50.0],
        "metrics.test_error": [0.1, 0.2, 0.3, 0.5],
    }
)
PAPER = pd.DataFrame(
    {
        "group": ["svc", "svc", "svc"],
        "x": [200, 400, None],
        "metric": ["n_sv", "n_sv", "test_error"],
        "value": [55.0, 90.0, None],
        "low": [None, None, 0.1],
        "high": [None, None, 0.2],
        "source": ["Table 1"] * 3,
    }
)


def test_summarise_gives_mean_std_and_count_per_point():
    table = summarise(RUNS, SPEC).set_index("x")
    assert table.loc[100, "runs"] == 3 and table.loc[200, "runs"] == 1
    assert table.loc[100, "n_sv_mean"] == 20.0
    assert table.loc[100, "n_sv_std"] == pytest.approx(10.0)  # sample std of 10, 20, 30
    assert pd.isna(table.loc[200, "n_sv_std"])


def test_a_metric_no_run_logged_is_named_in_the_error():
    spec = spec_from_config("paper_x/fig9", {"title": "t", "x": "params.n", "metrics": ["n_kernel_evals"]})
    with pytest.raises(SvmReproError, match="n_kernel_evals.*logged metrics: n_sv, test_error"):
        summarise(RUNS.assign(**{"tags.algorithm": "svc"}), spec)


def test_paper_values_sit_beside_ours_and_paper_only_points_get_rows():
    table = with_paper(summarise(RUNS, SPEC), PAPER, SPEC).set_index("x")
    assert table.loc[200, "n_sv_paper"] == "55"
    assert table.loc[400, "runs"] == 0 and table.loc[400, "n_sv_paper"] == "90"
    assert table.loc[100, "n_sv_paper"] == ""
    assert set(table["test_error_paper"]) == {"0.1–0.2"}  # a blank x applies to every x


def test_unknown_report_key_is_refused():
    with pytest.raises(ConfigError, match="report.colour"):
        spec_from_config("p/f", {"title": "t", "x": "a", "metrics": ["m"], "colour": "red"})


def test_build_output_writes_all_four_files(tmp_path):
    paths = build_output(SPEC, RUNS, tmp_path, "quick")
    for path in (paths.table_md, paths.table_csv, paths.figure, paths.runs_csv):
        assert path.stat().st_size > 0
    assert "20 ± 10" in paths.table_md.read_text()


def test_summary_row_mean_averages_over_x_and_meets_the_papers_mean():
    spec = spec_from_config(
        "paper_x/t1",
        {"title": "t", "x": "params.n", "metrics": ["n_sv"], "summary_row": "mean"},
    )
    paper = PAPER.assign(x=["100", "mean", None])
    table = with_paper(summarise(RUNS, spec), paper, spec).set_index("x")
    assert list(table.index) == ["100", "200", "mean"]
    assert table.loc["mean", "n_sv_mean"] == pytest.approx(35.0)  # mean of the per-x means 20 and 50
    assert table.loc["mean", "n_sv_std"] == pytest.approx(np.std([20.0, 50.0], ddof=1))
    assert table.loc["mean", "runs"] == 4
    assert table.loc["mean", "n_sv_paper"] == "90" and table.loc["100", "n_sv_paper"] == "55"


def test_rows_from_metrics_unfolds_per_step_metrics_into_rows(tmp_path):
    runs = pd.DataFrame(
        {
            "params.seed": ["1", "2", "1"],
            "tags.algorithm": ["cascade", "cascade", "svc"],
            "metrics.n_sv": [5.0, 6.0, 7.0],
            "metrics.step1.T1.n_sv": [3.0, 5.0, None],
            "metrics.step1.T1.fit_time_s": [0.1, 0.3, None],
            "metrics.step2.T12.n_sv": [4.0, 4.0, None],
            "metrics.step2.T12.fit_time_s": [0.2, 0.2, None],
        }
    )
    spec = spec_from_config(
        "paper_x/t6",
        {"title": "t", "x": "row", "metrics": ["n_sv", "fit_time_s"],
         "rows_from_metrics": r"(?P<row>step\d\.\w+)\.(?P<metric>n_sv|fit_time_s)"},
    )
    table = summarise(runs, spec).set_index("x")
    assert list(table.index) == ["step1.T1", "step2.T12"]  # the svc run has no step metrics
    assert table.loc["step1.T1", "n_sv_mean"] == 4.0 and table.loc["step1.T1", "runs"] == 2
    assert table.loc["step2.T12", "fit_time_s_mean"] == pytest.approx(0.2)
    assert "step1.T1" in build_output(spec, runs, tmp_path, "quick").table_md.read_text()


@pytest.mark.parametrize(
    ("node", "message"),
    [
        ({"summary_row": "median"}, "summary_row='median'; allowed: mean"),
        ({"rows_from_metrics": r"step(?P<row>\d)"}, "named groups 'row' and 'metric'"),
        ({"rows_from_metrics": "step(("}, "not a regular expression"),
    ],
)
def test_bad_summary_and_row_options_are_refused(node, message):
    with pytest.raises(ConfigError, match=message.replace("(", r"\(")):
        spec_from_config("p/f", {"title": "t", "x": "a", "metrics": ["m"], **node})


SCATTER_SPEC = spec_from_config(
    "paper_x/example",
    {"title": "t", "x": "params.seed", "metrics": ["n_sv"], "scatter": {"sets": {"psv": "o", "sv": "x"}}},
)
R1, R2 = "1" * 32, "2" * 32  # MLflow run ids, as a runs CSV must hold
SCATTER_RUNS = pd.DataFrame(
    {"run_id": [R1, R2], "status": "FINISHED", "params.seed": ["1", "0"], "tags.algorithm": ["psv_svc"] * 2,
     "metrics.n_sv": [2.0, 2.0]}
)
POINTS = {  # a square of four points, one per corner, and one inside: two potential SVs
    "X": [[0.0, 0.0], [1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [0.5, 0.5]],
    "y": [-1, -1, 1, 1, -1],
    "psv": [1, 2],
    "sv": [1, 2],
    "sv_full": [1, 2],  # not named in the spec: left out of the sidecar
}


def test_scatter_draws_one_panel_per_run_into_a_png(tmp_path):
    from svmrepro.report.scatter import plot_scatter

    path = tmp_path / "example.scatter.png"
    plot_scatter({R1: POINTS, R2: POINTS}, SCATTER_RUNS, SCATTER_SPEC, path)
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_scatter_points_go_to_a_sidecar_that_from_csv_rebuilds_the_picture(tmp_path, monkeypatch):
    import mlflow

    artifacts = {"file:///a/r1": {"points": POINTS, "n_sv": 2}, "file:///a/r2": {"n_sv": 2}}  # r2 has no points
    monkeypatch.setattr(mlflow.artifacts, "load_dict", lambda uri: artifacts[uri.removesuffix("/diagnostics.json")])
    from_store = SCATTER_RUNS.assign(artifact_uri=["file:///a/r1", "file:///a/r2"])
    paths = build_output(SCATTER_SPEC, from_store, tmp_path, "quick")
    assert "artifact_uri" not in paths.runs_csv.read_text()  # a local path has no place in git
    stored = json.loads(paths.points_json.read_text())
    assert list(stored) == [R1] and set(stored[R1]) == {"X", "y", "psv", "sv"}
    assert "Points of 1 of the 2 runs" in paths.table_md.read_text()

    monkeypatch.setattr(mlflow.artifacts, "load_dict", None)  # --from-csv never asks MLflow
    paths.scatter.unlink()
    rebuilt = build_output(SCATTER_SPEC, read_runs(paths.runs_csv), tmp_path, "quick")
    assert rebuilt.scatter.is_file() and json.loads(rebuilt.points_json.read_text()) == stored


@pytest.mark.parametrize(
    ("scatter", "message"),
    [({"sets": {}}, "sets must map"), ({"sets": {"sv": "circle"}}, "'circle' is not a matplotlib marker"),
     ({"sets": {"sv": "o"}, "colour": "k"}, "report.scatter must be")],
)
def test_bad_scatter_options_are_refused(scatter, message):
    with pytest.raises(ConfigError, match=message):
        spec_from_config("p/f", {"title": "t", "x": "a", "metrics": ["m"], "scatter": scatter})


def test_numeric_groups_sort_as_numbers_in_the_table_and_the_legend(tmp_path, monkeypatch):
    from svmrepro.report import figures

    runs = pd.DataFrame({"params.n": ["100"] * 4, "params.d": ["10", "2", "20", "5"], "metrics.n_sv": [1.0, 2, 3, 4]})
    spec = spec_from_config("p/f", {"title": "t", "x": "params.n", "group": "params.d", "metrics": ["n_sv"]})
    assert list(summarise(runs, spec)["group"]) == ["2", "5", "10", "20"]
    drawn = []
    monkeypatch.setattr(figures.plt, "close", drawn.append)
    figures.plot(summarise(runs, spec), None, spec, tmp_path / "f.png")
    legend = [t.get_text() for t in drawn[0].axes[0].get_legend().get_texts()]
    assert legend == ["ours: 2", "ours: 5", "ours: 10", "ours: 20"]
    paper = PAPER.assign(group=["2", "10", "5"], metric="n_sv")
    assert list(with_paper(summarise(runs, spec), paper, spec)["group"].unique()) == ["2", "5", "10", "20"]
    text = runs.assign(**{"params.d": ["b", "a", "10", "c"]})
    assert list(summarise(text, spec)["group"]) == ["10", "a", "b", "c"]  # not all numbers: as text


def test_a_runs_table_survives_a_csv_round_trip_unchanged(tmp_path):
    from svmrepro.report.runs import read_runs, write_runs

    runs = pd.DataFrame(
        {"run_id": [R1, R2], "status": "FINISHED", "params.cv": ["None", "true"], "tags.seed": ["0", "1"],
         "metrics.n_sv": [3.0, None]}
    )
    write_runs(runs, tmp_path / "first.csv")
    write_runs(read_runs(tmp_path / "first.csv"), tmp_path / "second.csv")
    assert (tmp_path / "first.csv").read_text() == (tmp_path / "second.csv").read_text()
    assert read_runs(tmp_path / "first.csv")["params.cv"].tolist() == ["None", "true"]


def test_loglog_slopes_recover_a_power_law_and_sit_beside_the_paper():
    from svmrepro.report.sections.slopes import loglog_slopes

    spec = spec_from_config(
        "p/t", {"title": "t", "x": "params.n", "metrics": ["fit_time_s"], "slopes": [{"y": "fit_time_s", "x": "params.n"}]}
    )
    n = np.array([500, 1000, 2000, 4000])
    runs = pd.DataFrame({"params.n": n.astype(str), "tags.algorithm": "svr", "metrics.fit_time_s": 3e-6 * n**2.2})
    paper = pd.DataFrame({"group": ["svr"], "x": [None], "metric": ["fit_time_s_loglog_slope_vs_n"],
                          "value": [2.08], "low": [None], "high": [None], "source": ["Table 1"]})
    row = loglog_slopes(runs, spec, paper).iloc[0]
    assert row["ours"] == pytest.approx(2.2) and row["paper"] == 2.08 and row["runs"] == 4


def test_ratios_divide_each_group_by_the_reference_at_the_same_x():
    from svmrepro.report.sections.ratios import ratios_to

    spec = spec_from_config(
        "p/t", {"title": "t", "x": "params.n", "metrics": ["fit_time_s"], "ratios": {"metric": "fit_time_s", "to": "svr"}}
    )
    runs = pd.DataFrame({
        "params.n": ["100", "100", "200", "200", "200"],
        "tags.algorithm": ["svr", "ours", "svr", "ours", "ours"],
        "metrics.fit_time_s": [2.0, 6.0, 4.0, 10.0, 14.0],
    })
    ratios = ratios_to(summarise(runs, spec), spec)
    assert ratios.loc[100, "ours"] == 3.0 and ratios.loc[200, "ours"] == 3.0  # (10 + 14) / 2 / 4
    assert list(ratios.columns) == ["ours"]


def test_paired_comparison_pairs_runs_by_seed_and_tests_the_difference():
    from svmrepro.report.sections.paired import paired_differences

    spec = spec_from_config("p/t", {"title": "t", "x": "tags.label", "metrics": ["test_error"],
                                    "paired": {"metric": "test_error", "a": "svc", "b": "xt", "by": "params.seed"}})
    seeds = [str(s) for s in range(6)]
    base = np.array([0.10, 0.12, 0.11, 0.13, 0.10, 0.12])
    runs = pd.DataFrame({
        "tags.label": ["banana"] * 12,
        "tags.algorithm": ["svc"] * 6 + ["xt"] * 6,
        "params.seed": seeds + seeds,
        "metrics.test_error": np.concatenate([base, base + np.array([0.01, 0.012, 0.009, 0.011, 0.01, 0.0105])]),
    })
    row = paired_differences(runs, spec).iloc[0]
    assert row["pairs"] == 6 and row["mean_diff"] == pytest.approx(0.010417, abs=1e-5)
    assert row["p_value"] < 1e-4  # a consistent shift, far beyond its small spread


@pytest.mark.parametrize(
    "option",
    [{"ratios": {"metric": "fit_time_s", "to": "svr"}},
     {"paired": {"metric": "fit_time_s", "a": "svc", "b": "xt", "by": "params.seed"}}],
)
def test_ratios_and_paired_must_compare_a_reported_metric(option):
    with pytest.raises(ConfigError, match="fit_time_s.*not in report.metrics"):
        spec_from_config("p/t", {"title": "t", "x": "params.n", "metrics": ["test_error"], **option})


# A sweep whose reference runs all failed: only the other group's runs are left, the paper has both.
WITHOUT_REFERENCE = pd.DataFrame({
    "params.n": ["100", "100", "200", "200"], "params.seed": ["0", "1", "0", "1"], "tags.algorithm": ["ours"] * 4,
    "metrics.fit_time_s": [1.0, 1.2, 4.0, 4.4], "metrics.kernel_evaluations": [np.nan] * 4,
})
REFERENCE_PAPER = "group,x,metric,value,low,high,source\nsvc,100,fit_time_s,2.0,,,T1\n" \
                  "svc,,fit_time_s_loglog_slope_vs_n,2.1,,,T1\n"


def _without_reference(tmp_path, monkeypatch, **node):
    """The page of an output, with ``node``'s report section, built from :data:`WITHOUT_REFERENCE`."""
    monkeypatch.chdir(tmp_path)  # the paper file is read from the current folder first
    (tmp_path / "experiments" / "paper_x").mkdir(parents=True)
    (tmp_path / "experiments" / "paper_x" / "t1.csv").write_text(REFERENCE_PAPER)
    spec = spec_from_config("paper_x/t1", {"title": "t", "x": "params.n", "metrics": ["fit_time_s"],
                                           "paper": "experiments/paper_x/t1.csv", **node})
    return build_output(spec, WITHOUT_REFERENCE, tmp_path / "out", "quick").table_md.read_text()


def test_ratios_to_a_group_without_runs_say_so_on_the_page(tmp_path, monkeypatch):
    page = _without_reference(tmp_path, monkeypatch, ratios={"metric": "fit_time_s", "to": "svc"})
    assert "## Ratios\n\nno runs of svc: ratios not computed\n" in page


def test_a_paired_comparison_without_runs_of_a_group_says_so_on_the_page(tmp_path, monkeypatch):
    page = _without_reference(tmp_path, monkeypatch,
                              paired={"metric": "fit_time_s", "a": "svc", "b": "ours", "by": "params.seed"})
    assert "## Paired comparison\n\nno runs of svc: paired comparison not computed\n" in page


def test_a_papers_slope_of_a_group_without_runs_is_shown_with_none_of_ours(tmp_path, monkeypatch):
    page = _without_reference(tmp_path, monkeypatch, slopes=[{"y": "fit_time_s", "x": "params.n"}])
    assert "| svc | fit_time_s_loglog_slope_vs_n | 0 | — | 2.10 |" in page
    assert "| ours | fit_time_s_loglog_slope_vs_n | 4 | 1.94 | — |" in page


def test_the_table_shows_a_paper_group_without_runs_as_zero_runs(tmp_path, monkeypatch):
    assert "| svc | 100 | 0 | — | 2 |" in _without_reference(tmp_path, monkeypatch)


def test_a_figure_panel_of_a_metric_only_the_missing_group_logged_says_so(tmp_path, monkeypatch):
    from svmrepro.report import figures

    drawn = []
    monkeypatch.setattr(figures.plt, "close", drawn.append)
    _without_reference(tmp_path, monkeypatch, metrics=["fit_time_s", "kernel_evaluations"],
                       logy=["kernel_evaluations"])  # a log axis with nothing on it raised
    empty = drawn[0].axes[1]
    assert [text.get_text() for text in empty.texts] == ["no run logged kernel_evaluations"]


def test_a_bench_readme_ratio_to_a_group_without_runs_says_so():
    from svmrepro.report.bench_readme import key_numbers

    spec = spec_from_config("bench/t", {"title": "t", "x": "params.n", "metrics": ["fit_time_s"],
                                        "ratios": {"metric": "fit_time_s", "to": "svc"}})
    assert key_numbers(WITHOUT_REFERENCE, spec) == ["no runs of svc: ratios not computed"]


def test_pictures_from_artifacts_draw_the_groups_that_have_runs(tmp_path, monkeypatch):
    import mlflow

    surface = {"grid_x": [0.0, 1.0], "grid_y": [0.0, 1.0], "values": [[-1.0, 1.0], [-1.0, 1.0]],
               "points_X": [[0.2, 0.5]], "points_y": [-1]}
    monkeypatch.setattr(mlflow.artifacts, "load_dict",
                        lambda uri: {"points": POINTS} if uri.endswith("diagnostics.json") else surface)
    spec = spec_from_config("paper_x/example", {"title": "t", "x": "params.seed", "metrics": ["n_sv"], "surface": True,
                                                "scatter": {"sets": {"psv": "o", "sv": "x"}}})
    paths = build_output(spec, SCATTER_RUNS.assign(artifact_uri=["file:///a/r1", "file:///a/r2"]), tmp_path, "quick")
    assert set(json.loads(paths.surface_json.read_text())) == {R2}  # psv_svc's lowest seed; no other group ran
    assert "Points of 2 of the 2 runs" in paths.table_md.read_text() and paths.surface.is_file()


def test_an_empty_runs_table_is_refused_in_one_line(tmp_path):
    with pytest.raises(SvmReproError, match="^paper_x/fig9: no runs to build the output from$"):
        build_output(SPEC, RUNS.iloc[:0], tmp_path, "quick")


def test_surfaces_whose_artifact_files_were_deleted_say_so_and_what_works(tiny_cfg, store_uri, tmp_path):
    """Deleting ``mlartifacts`` keeps the FINISHED runs: a plain re-run skips them, force=true logs anew."""
    import shutil

    from svmrepro.report.runs import runs_from_mlflow
    from svmrepro.runner import SKIPPED, run

    cfg = tiny_cfg("dataset=toy2d", "dataset.n_train=60", "dataset.n_test=60", "surface={resolution:10,points:5}")
    run(cfg)
    runs = runs_from_mlflow("adhoc", "quick", store_uri)
    folder = tmp_path / "mlartifacts"
    assert runs["artifact_uri"][0].startswith(folder.as_uri())
    shutil.rmtree(folder)
    spec = spec_from_config("paper_x/fig1", {"title": "t", "x": "params.seed", "metrics": ["test_error"],
                                             "surface": True})
    with pytest.raises(SvmReproError) as exc:
        build_output(spec, runs, tmp_path / "out", "quick")
    assert str(exc.value) == (
        f"surface.json of 1 FINISHED run(s) that asked for a surface is missing from the store's artifact folder "
        f"{folder / runs['artifact_uri'][0].removeprefix(folder.as_uri() + '/')}: restore that folder, or re-run "
        "them with force=true (a plain re-run skips FINISHED runs)")
    assert run(cfg).status == SKIPPED
    cfg.force = True
    run(cfg)
    assert build_output(spec, runs_from_mlflow("adhoc", "quick", store_uri), tmp_path / "out", "quick").surface.is_file()
