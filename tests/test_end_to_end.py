"""A tiny 2-job joblib multirun into a new SQLite store, read back, re-run, and reported."""

import subprocess
import sys

import forked_cli
import mlflow
import pandas as pd
import pytest

from svmrepro.reproduce import main as reproduce

EXPERIMENT = "cross_training/fig3_baseline"
#: the sweep's narrowing of the experiment: svmrepro-reproduce gets it as --override to count its runs
SMALL = ["dataset.n_train=150,200", "dataset.n_test=300", "seed=0", "selection.param_grid.C=[1.0]",
         "selection.cv.n_splits=3"]
NARROWED = [f"--override={item}" for item in SMALL]


def _sweep(store_uri, sweep_dir):
    command = [
        sys.executable, "-m", "svmrepro", "-m", f"experiment={EXPERIMENT}", *SMALL,
        "hydra/launcher=parallel", "hydra.launcher.n_jobs=2",
        f"tracking.uri={store_uri}", f"hydra.sweep.dir={sweep_dir}",
    ]
    done = forked_cli.run(command, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout + done.stderr


@pytest.fixture(scope="module")
def swept(tmp_path_factory):
    root = tmp_path_factory.mktemp("e2e")
    store_uri = f"sqlite:///{root / 'mlflow.db'}"
    first_log = _sweep(store_uri, root / "sweep1")
    mlflow.set_tracking_uri(store_uri)
    results = "tags.`svmrepro.kind` = 'result'"  # each sweep also has its parent run
    first = mlflow.search_runs(experiment_names=[EXPERIMENT], filter_string=results)
    second_log = _sweep(store_uri, root / "sweep2")
    second = mlflow.search_runs(experiment_names=[EXPERIMENT], filter_string=results)
    return root, store_uri, first, second, first_log, second_log


def test_both_jobs_finish_in_a_new_store(swept):
    _, _, first, _, first_log, _ = swept
    assert len(first) == 2 and set(first["status"]) == {"FINISHED"}
    assert sorted(first["params.dataset.n_train"].astype(int)) == [150, 200]
    assert "already exists" not in first_log
    assert "sweep ended: 2 jobs" in first_log and "2 done, 0 skipped, 0 failed" in first_log


def test_rerunning_the_sweep_executes_nothing(swept):
    _, _, first, second, _, second_log = swept
    assert sorted(second["run_id"]) == sorted(first["run_id"])
    assert second_log.count("skip: run") == 2
    # the sweeper tells a skipped job from one that ran by the status the job recorded (progress.jsonl)
    assert "0 done, 2 skipped, 0 failed" in second_log


def test_a_rerun_finds_the_finished_runs_in_one_read_and_launches_no_job(swept):
    """The sweeper skips the jobs whose runs FINISHED before it launches any: no job starts (Hydra makes a
    folder per job it launches), and the sweep's parent run, which made no run, is deleted."""
    root, *_, second_log = swept
    assert [path.name for path in (root / "sweep2").iterdir() if path.is_dir()] == []
    assert [path.name for path in (root / "sweep1").iterdir() if path.is_dir()] != []
    assert "sweep run" in second_log and "deleted: the sweep made no run" in second_log


def test_reproduce_builds_the_output_and_rebuilds_it_from_csv(swept):
    root, store_uri, *_ = swept
    results = root / "results"
    args = ["--experiment", EXPERIMENT, "--tracking-uri", store_uri, "--results-dir", str(results), *NARROWED]
    assert reproduce([*args, "--no-run"]) == 0
    out = results / "cross_training"
    table = pd.read_csv(out / "fig3_baseline.csv")
    ours = table[table["runs"] > 0]
    assert sorted(ours["x"]) == [150, 200] and set(ours["runs"]) == {1}
    runs = pd.read_csv(out / "fig3_baseline.runs.csv")
    assert len(runs) == 2 and (out / "fig3_baseline.png").stat().st_size > 0
    built_from_mlflow = (out / "fig3_baseline.md").read_text()
    (out / "fig3_baseline.md").unlink()
    assert reproduce([*args, "--from-csv"]) == 0
    assert (out / "fig3_baseline.md").read_text() == built_from_mlflow


def test_runs_outside_the_sweep_are_left_out_with_one_warning_unless_asked_for(swept, caplog):
    root, store_uri, *_ = swept
    args = ["--experiment", EXPERIMENT, "--tracking-uri", store_uri, "--no-run"]
    # the quick sweep as configured has neither of the sweep's sizes: both runs are someone else's
    assert reproduce([*args, "--results-dir", str(root / "results_default")]) == 1
    warnings = [r.getMessage() for r in caplog.records if "outside the quick sweep" in r.getMessage()]
    assert warnings == [f"{EXPERIMENT}: 2 runs of configurations outside the quick sweep left out "
                        "(--include-extra keeps them; --prune deletes them)"]
    assert reproduce([*args, "--results-dir", str(root / "results_extra"), "--include-extra"]) == 0
    runs = pd.read_csv(root / "results_extra" / "cross_training" / "fig3_baseline.runs.csv")
    assert len(runs) == 2


def test_an_output_shows_the_runs_of_the_experiments_it_includes(swept):
    root, store_uri, *_ = swept
    results = root / "results_include"
    # cross_training/fig3 includes fig3_baseline's LIBSVM runs; fig3 itself has none in this store
    # the sweep's narrowing is fig3_baseline's (fig3's own algorithm has no selection.cv): its runs kept as extra
    args = ["--experiment", "cross_training/fig3", "--tracking-uri", store_uri, "--results-dir", str(results),
            "--include-extra"]
    assert reproduce([*args, "--no-run"]) == 0
    table = pd.read_csv(results / "cross_training" / "fig3.csv")
    assert set(table.loc[table["runs"] > 0, "group"]) == {"svc_linear"}
