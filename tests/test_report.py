import numpy as np
import pandas as pd
import pytest

from svmrepro.errors import ConfigError, SvmReproError
from svmrepro.report import build_output
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
    paths = build_output(SPEC, RUNS, tmp_path, tmp_path, "quick")
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
    assert "step1.T1" in build_output(spec, runs, tmp_path, tmp_path, "quick").table_md.read_text()


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
