"""svmrepro-reproduce's own decisions: which experiments, outputs whose data is missing, --check."""

import math

import mlflow
import pandas as pd
from pathlib import Path

import pytest
from mlflow.entities import ViewType

from svmrepro.compose import compose_config, compose_run
from svmrepro.sweep.jobs import sweep_jobs
from svmrepro.report.runs import read_runs
from svmrepro.report.spec import ReportSpec
from svmrepro.report.tables import read_paper
from svmrepro.report.numbers import DIFFERS, NO_RUNS, WITHIN_RANGE, WITHIN_TOLERANCE, distances, our_numbers, verdict
from svmrepro.reproduce import in_dependency_order, main as reproduce, parse_args, selected_experiments
from svmrepro.runner import run

CHECKOUT = Path(__file__).resolve().parents[1]

NAN = math.nan


def test_an_output_whose_data_is_missing_says_not_run_and_why(tmp_path, monkeypatch, store_uri):
    monkeypatch.setenv("SVMREPRO_DATA", str(tmp_path / "empty_home"))
    monkeypatch.setenv("SVMREPRO_OFFLINE", "1")
    code = reproduce(
        ["--experiment", "svr_decomposition/table1", "--results-dir", str(tmp_path), "--tracking-uri", store_uri]
    )
    assert code == 0
    page = (tmp_path / "svr_decomposition" / "table1.md").read_text()
    assert "**not run**" in page and "cup98lrn.zip" in page
    assert not (tmp_path / "svr_decomposition" / "table1.runs.csv").exists()


def test_unknown_paper_lists_the_valid_ones(capsys):
    assert reproduce(["no_such_paper"]) == 2
    assert "cross_training" in capsys.readouterr().err


@pytest.mark.parametrize("names, expected", [
    (["cascade/table4"], ["cascade/table4"]),  # an experiment named where a paper goes: not "0 of 0 outputs"
    (["cascade/table4", "--experiment", "cascade/table5"], ["cascade/table4", "cascade/table5"]),
    (["potential_sv"], ["potential_sv/example", "potential_sv/discard_rate", "potential_sv/retrain",
                        "potential_sv/retrain_today"]),
])
def test_papers_and_experiments_are_chosen_wherever_they_are_named(names, expected):
    chosen = selected_experiments(parse_args(names))
    assert sorted(chosen) == sorted(expected)


def test_a_store_given_as_an_override_is_the_store_of_the_sweeps_and_the_build(capsys):
    args = parse_args(["--override", "tracking.uri=sqlite:///a.db", "--override", "seed=0"])
    assert args.tracking_uri == "sqlite:///a.db" and args.override == ["seed=0"]  # not on the sweeps' command line
    assert reproduce(["--override", "tracking.uri=sqlite:///a.db", "--tracking-uri", "sqlite:///b.db"]) == 2
    assert capsys.readouterr().err.count("\n") == 1


# --check: what exists, what is missing, and our numbers beside the paper's

CHECKED = "cross_training/fig3_baseline"
#: two seconds-long configurations of its sweep (training sizes 120 and 160)
SMALL = ["dataset.n_train=120,160", "dataset.n_test=200", "seed=0", "selection.cv.n_splits=2", "selection.param_grid.C=[1.0]"]


def test_check_lists_finished_and_missing_configurations_and_writes_nothing(tmp_path, store_uri, capsys):
    base = [f"experiment={CHECKED}", "mode=quick", f"tracking.uri={store_uri}"]
    jobs = sweep_jobs(compose_config(base).sweep.quick, dict(o.split("=", 1) for o in SMALL))
    assert len(jobs) == 2
    run(*compose_run([*base, *next(job for job in jobs if "dataset.n_train=120" in job)]))
    results = tmp_path / "results"
    args = ["--experiment", CHECKED, "--tracking-uri", store_uri, "--results-dir", str(results)]
    args += [f"--override={o}" for o in SMALL]
    assert reproduce([*args, "--no-run"]) == 0  # builds the output and logs its report run
    built = sorted(results.rglob("*"))
    store = (tmp_path / "mlflow.db").read_bytes()
    capsys.readouterr()

    assert reproduce([*args, "--check"]) == 0
    out = capsys.readouterr().out
    assert "1 FINISHED runs; the quick sweep has 2 configurations: 1 done, 1 missing" in out  # report run not counted
    missing = [line for line in out.splitlines() if "missing:" in line]
    assert len(missing) == 1 and "dataset.n_train=160" in missing[0] and missing[0].endswith("(seed 0)")
    assert "numbers vs experiments/cross_training/fig3.csv" in out
    assert any(line.split()[:3] == ["svc_linear", "120", "test_error"] for line in out.splitlines())
    assert sorted(results.rglob("*")) == built and (tmp_path / "mlflow.db").read_bytes() == store

    assert reproduce([*args, "--check", "--from-csv"]) == 0  # the same from the runs CSV beside the output
    assert "1 FINISHED runs; the quick sweep has 2 configurations: 1 done, 1 missing" in capsys.readouterr().out


def numbers_rows(out: str) -> list[list[str]]:
    """The (group, x, metric) rows of --check's numbers beside the paper's."""
    return [line.split()[:3] for line in out.splitlines() if line.split()[:1] == ["svc_linear"]]


def test_check_counts_the_runs_the_build_reads_and_runs_outside_the_sweep_are_pruned(tmp_path, store_uri, capsys):
    base = [f"experiment={CHECKED}", "mode=quick", f"tracking.uri={store_uri}"]
    small = dict(o.split("=", 1) for o in SMALL)
    for n_train in ("120", "140"):  # 140 is not in the (overridden) sweep: a configuration since removed
        run(*compose_run([*base, *[f"{k}={v}" for k, v in {**small, "dataset.n_train": n_train}.items()]]))
    results = tmp_path / "results"
    args = ["--experiment", CHECKED, "--tracking-uri", store_uri, "--results-dir", str(results)]
    args += [f"--override={o}" for o in SMALL]
    capsys.readouterr()
    # --check reads what the build reads: the run outside the sweep is left out of its counts and numbers
    assert reproduce([*args, "--check"]) == 0
    out = capsys.readouterr().out
    assert "1 FINISHED runs; the quick sweep has 2 configurations: 1 done, 1 missing" in out
    assert ("1 runs of configurations outside the quick sweep left out (--include-extra keeps them; "
            "--prune deletes them)") in out
    assert ["svc_linear", "140", "test_error"] not in numbers_rows(out)
    assert reproduce([*args, "--check", "--include-extra"]) == 0
    out = capsys.readouterr().out
    assert "2 FINISHED runs" in out and "1 runs of configurations outside the sweep (they count in the output" in out
    assert ["svc_linear", "140", "test_error"] in numbers_rows(out)
    assert reproduce([*args, "--prune"]) == 0
    assert "1 runs outside the sweep deleted" in capsys.readouterr().out
    assert reproduce([*args, "--no-run"]) == 0
    built = read_runs(results / "cross_training" / "fig3_baseline.runs.csv")
    assert list(built["params.dataset.n_train"]) == ["120"]
    deleted = mlflow.MlflowClient(store_uri).search_runs(
        [mlflow.MlflowClient(store_uri).get_experiment_by_name(CHECKED).experiment_id], run_view_type=ViewType.DELETED_ONLY)
    assert [r.data.params["dataset.n_train"] for r in deleted] == ["140"]
    assert deleted[0].data.tags["svmrepro.pruned"].startswith("configuration not in the quick sweep")


def test_check_does_not_create_a_missing_store(tmp_path, capsys):
    uri = f"sqlite:///{tmp_path / 'none.db'}"
    assert reproduce(["--experiment", CHECKED, "--check", "--tracking-uri", uri]) == 0
    assert "0 FINISHED runs; the quick sweep has 6 configurations: 0 done, 6 missing" in capsys.readouterr().out
    assert not (tmp_path / "none.db").exists()


@pytest.mark.parametrize(
    ("ours", "value", "low", "high", "word", "rel"),
    [
        (0.15, NAN, 0.13, 0.20, WITHIN_RANGE, 0.0),
        (0.21, NAN, 0.13, 0.20, WITHIN_TOLERANCE, 0.05),  # 5 % above the range's upper end
        (0.25, NAN, 0.13, 0.20, DIFFERS, 0.25),
        (5.0, NAN, NAN, 3.0, DIFFERS, 2 / 3),  # "at most 3": a range open below
        (95.0, 100.0, NAN, NAN, WITHIN_TOLERANCE, -0.05),
        (89.0, 100.0, NAN, NAN, DIFFERS, -0.11),
        (0.0, 0.0, NAN, NAN, WITHIN_TOLERANCE, 0.0),
        (0.1, 0.0, NAN, NAN, DIFFERS, math.inf),
    ],
)
def test_verdict_is_the_relative_distance_to_the_paper_value_or_range(ours, value, low, high, word, rel):
    assert verdict(ours, value, low, high) == (word, pytest.approx(rel))


PAPER = """group,x,metric,value,low,high,source
a,100,err,0.10,,,hit within 10 %
a,200,err,0.10,,,missed
a,,n_sv,,10,20,a range for every x
b,100,err,,0.3,,open-ended range
b,999,err,0.5,,,an x we did not run
a,,fit_time_s_loglog_slope_vs_n,2.0,,,time ~ n^2
"""


def test_claims_set_our_means_beside_a_hand_made_paper_file(tmp_path):
    (tmp_path / "paper.csv").write_text(PAPER)
    paper = read_paper(tmp_path / "paper.csv")
    runs = pd.DataFrame(
        {
            "tags.algorithm": ["a", "a", "a", "b"],
            "params.n": ["100", "100", "200", "100"],  # MLflow params are text
            "metrics.err": [0.105, 0.107, 0.2, 0.25],
            "metrics.n_sv": [14.0, 16.0, 21.0, 5.0],
            "metrics.fit_time_s": [1.0, 1.0, 4.0, 1.0],
        }
    )
    spec = ReportSpec(experiment="p/e", title="t", x="params.n", metrics=("err", "n_sv", "fit_time_s"),
                      options={"slopes": (("fit_time_s", "params.n"),)})
    found = distances(our_numbers(runs, spec, paper), paper)
    by_key = {(r.group, r.x, r.metric): (r.verdict, r.rel) for r in found.itertuples()}
    assert {key: word for key, (word, _) in by_key.items()} == {
        ("a", "100", "err"): WITHIN_TOLERANCE,
        ("a", "200", "err"): DIFFERS,
        ("a", "100", "n_sv"): WITHIN_RANGE,
        ("a", "200", "n_sv"): WITHIN_TOLERANCE,
        ("b", "100", "err"): DIFFERS,
        ("b", "999", "err"): NO_RUNS,
        ("a", "(fit)", "fit_time_s_loglog_slope_vs_n"): WITHIN_TOLERANCE,
    }
    assert by_key[("a", "100", "err")][1] == pytest.approx(0.06)
    assert by_key[("a", "200", "n_sv")][1] == pytest.approx(0.05)
    assert by_key[("a", "(fit)", "fit_time_s_loglog_slope_vs_n")][1] == pytest.approx(0.0, abs=1e-9)
    assert found.set_index(["group", "x", "metric"]).loc[("a", "100", "err"), "runs"] == 2


# results/bench/README.md: written with the self-benchmarks, readable in any checkout


@pytest.mark.parametrize("in_checkout", [True, False])
def test_bench_readme_links_the_protocol_only_relatively(tmp_path, store_uri, in_checkout):
    root = tmp_path / "checkout"
    if in_checkout:
        (root / "experiments" / "bench").mkdir(parents=True)
        (root / "experiments" / "bench" / "README.md").write_text("protocol")
    code = reproduce(["--experiment", "bench/overhead", "--results-dir", str(root / "results"), "--tracking-uri", store_uri])
    assert code == 0
    page = (root / "results" / "bench" / "README.md").read_text()
    assert str(tmp_path) not in page and str(CHECKOUT) not in page
    assert ("(../../experiments/bench/README.md)" in page) is in_checkout
    built = page.split("## ")[1:]
    assert sum("not built yet" not in section for section in built) == 1
    assert any(section.startswith("[Framework overhead") and "runs: 5," in section for section in built)


# order, progress and summary of a reproduction


def test_an_output_is_built_after_the_experiments_it_includes():
    assert in_dependency_order(["cross_training/fig3"], "quick", add_included=True) == [
        "cross_training/fig3_baseline", "cross_training/fig3"]
    assert in_dependency_order(["cross_training/fig3", "cross_training/fig3_baseline"], "quick",
                               add_included=False) == ["cross_training/fig3_baseline", "cross_training/fig3"]
    assert in_dependency_order(["cross_training/fig3"], "quick", add_included=False) == ["cross_training/fig3"]


def test_a_reproduction_prints_its_position_and_ends_with_a_summary(tmp_path, capsys, caplog):
    results = tmp_path / "results"
    for name in ("fig3", "fig3_baseline"):
        (results / "cross_training").mkdir(parents=True, exist_ok=True)
        runs_csv = CHECKOUT / "results" / "cross_training" / f"{name}.runs.csv"
        (results / "cross_training" / runs_csv.name).write_bytes(runs_csv.read_bytes())
    args = ["--experiment", "cross_training/fig3", "--experiment", "cross_training/fig3_baseline", "--from-csv",
            "--mode", "full", "--results-dir", str(results)]
    caplog.set_level("INFO", logger="svmrepro.reproduce")
    assert reproduce(args) == 0
    positions = [r.getMessage() for r in caplog.records if "experiment " in r.getMessage() and " of 2 " in r.getMessage()]
    assert [p.split(":")[0].split(" (")[0] for p in positions] == ["experiment 1 of 2", "experiment 2 of 2"]
    assert positions[0].endswith("cross_training/fig3_baseline") and "left" in positions[1]
    summary = capsys.readouterr().out.strip().splitlines()[-1]
    assert summary.startswith("svmrepro-reproduce: 2 of 2 outputs written in ") and "; findings: " in summary
    assert (results / "README.md").is_file()  # the scoreboard, from the runs CSVs there
