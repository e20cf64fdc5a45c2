"""The sweepers of ``svmrepro-run -m``: svmrepro's own (``hydra/sweeper: svmrepro``, a registered
option on Hydra's public Sweeper API, selected by default), Hydra's basic one, and Optuna's, which
minimizes what a job returns: the run's validation error.

The command-line sweeps are real ``svmrepro-run -m`` processes on seconds-long runs.
"""

import subprocess
import sys
from types import SimpleNamespace

import forked_cli
import pytest

# Hydra's grid expansion (private API), the reference ours must match
from hydra._internal.core_plugins.basic_sweeper import BasicSweeper
from hydra.core.override_parser.overrides_parser import OverridesParser
from hydra.core.plugins import Plugins
from hydra.core.utils import JobReturn, JobStatus
from hydra.plugins.sweeper import Sweeper
from hydra.types import RunMode
from mlflow.tracking import MlflowClient
from omegaconf import OmegaConf

# Hydra's plugin scan runs these modules again: their classes are looked up on the module when used
from hydra_plugins.svmrepro_sweeper import mode_sweeper
from hydra_plugins.svmrepro_sweeper.config import ModeSweeperConf
from svmrepro.app import NoValidationSplit, objective, other_sweeper
from svmrepro.compose import compose_config, compose_run
from svmrepro.sweep import failures
from svmrepro.sweep.jobs import NotAGrid, product, sweep_jobs
from svmrepro.errors import SvmReproError
from svmrepro.runner import FINISHED, SKIPPED, RunResult, run

BASIC = "hydra._internal.core_plugins.basic_sweeper.BasicSweeper"
#: a seconds-long run with a validation split: covtype, 200 / 100 / 100 rows
WITH_VALIDATION = ["dataset=covtype", "dataset.n_train=200", "dataset.n_val=100", "dataset.n_test=100"]


def _sweep(tmp_path, name, *arguments):
    command = [sys.executable, "-m", "svmrepro", "-m", *arguments,
               f"tracking.uri=sqlite:///{tmp_path / 'mlflow.db'}", f"hydra.sweep.dir={tmp_path / name}"]
    return forked_cli.run(command, capture_output=True, text=True, timeout=300, cwd=tmp_path)


def _runs(tmp_path, experiment="adhoc"):
    """The runs of ``experiment`` that have a result (a sweep's parent run has none)."""
    client = MlflowClient(f"sqlite:///{tmp_path / 'mlflow.db'}")
    runs = client.search_runs([client.get_experiment_by_name(experiment).experiment_id], max_results=100)
    return [r for r in runs if "test_error" in r.data.metrics]


def test_the_svmrepro_sweeper_is_a_registered_option_selected_by_default():
    hydra = compose_config(return_hydra_config=True).hydra
    assert hydra.runtime.choices["hydra/sweeper"] == "svmrepro"
    assert hydra.sweeper._target_ == ModeSweeperConf._target_ == f"{mode_sweeper.__name__}.ModeSweeper"
    assert compose_config(["hydra/sweeper=basic"], return_hydra_config=True).hydra.sweeper._target_ == BASIC
    # Hydra's plugin scan loads the module anew: the same class by name
    assert ModeSweeperConf._target_ in {f"{c.__module__}.{c.__name__}" for c in Plugins.instance().discover(Sweeper)}
    assert not [cls for cls in mode_sweeper.ModeSweeper.__mro__ if cls.__module__.startswith("hydra._internal")]


@pytest.mark.parametrize("arguments", [
    [],
    ["a=1,2", "b=x", "c=range(3)"],
    ["a=1,2", "b=x", "a=3,4,5"],  # a later value of a key replaces the earlier one, in its place
    ["+x=1", "~y", "c=choice(1,2)", "d=[1,2]", "e=''", "f=${seed}"],
])
def test_grids_expand_as_hydra_basic_sweeper_expands_them(arguments):
    overrides = OverridesParser.create().parse_overrides(arguments)
    assert product(overrides) == BasicSweeper.split_arguments(overrides, None)[0]


def test_an_interval_is_not_a_grid():
    with pytest.raises(NotAGrid, match="hydra/sweeper=optuna"):
        product(OverridesParser.create().parse_overrides(["seed=0,1", "algorithm.C=interval(0.1,10)"]))


def test_the_modes_sweep_is_a_union_of_grids_with_params_and_the_command_line_on_each():
    sweeper = mode_sweeper.ModeSweeper(params={"seed": "0,1"})
    sweeper.hydra_context = SimpleNamespace(config_loader=None)
    sweeper.config = OmegaConf.create({"mode": "quick", "sweep": {"quick": [{"a": "1,2"}, {"b": "x", "seed": 5}],
                                                                  "full": {"c": "9"}}})
    # params apply to every grid; a command-line key that one grid sets narrows that grid, the other is left out
    assert sweeper.jobs(["a=3"]) == [["a=3", "seed=0"], ["a=3", "seed=1"]]
    assert sweeper.jobs(["c=4"]) == [["a=1", "seed=0", "c=4"], ["a=1", "seed=1", "c=4"], ["a=2", "seed=0", "c=4"],
                                     ["a=2", "seed=1", "c=4"], ["b=x", "seed=0", "c=4"], ["b=x", "seed=1", "c=4"]]


def test_group_keys_become_one_value_sweeps_for_svmrepros_sweeper_alone():
    """``algorithm.C=1`` -> ``algorithm.C=choice(1)`` is for the svmrepro sweeper's unstarted jobs only."""
    assert other_sweeper(["-m", "hydra/sweeper=optuna", "algorithm.C=1"])
    assert not other_sweeper(["-m", "hydra/sweeper=svmrepro", "algorithm.C=1"])
    assert not other_sweeper(["-m", "seed=0,1", "algorithm.C=1"])


def _failed_job(sweep_dir, error, num=3):
    """A failed job's return; its Hydra config names another folder, as a ``${now:...}`` resolved anew there does."""
    hydra_cfg = OmegaConf.create({"hydra": {"job": {"num": num}, "sweep": {"dir": str(sweep_dir / "later")}}})
    job = JobReturn(overrides=[f"seed={num}", "tracking.uri=https://u:secret@mlflow.example"], hydra_cfg=hydra_cfg,
                    status=JobStatus.FAILED)
    job.return_value = error
    return job


def _job_config(sweep_dir):
    """The config a job's callbacks get: the sweep's folder as the sweep resolved it."""
    return OmegaConf.create({"hydra": {"sweep": {"dir": str(sweep_dir)}}})


def test_the_failure_callback_records_a_failed_jobs_line_in_its_sweep(tmp_path, capsys):
    failures.start(tmp_path)
    failures.RecordFailures().on_job_end(_job_config(tmp_path),
                                         _failed_job(tmp_path, RuntimeError("fit failed\nsecond line")))
    line = failures.read(tmp_path)[3]
    assert line.startswith("#3 seed=3 tracking.uri=") and line.endswith(": RuntimeError: fit failed")
    assert "secret" not in line
    assert "Error executing job" not in capsys.readouterr().err  # the sweeper's summary says it instead


def test_the_failure_callback_leaves_other_sweeps_alone(tmp_path):
    failures.RecordFailures().on_job_end(_job_config(tmp_path), _failed_job(tmp_path, RuntimeError("x")))
    assert list(tmp_path.iterdir()) == []


def test_the_sweeper_records_a_failed_job_its_callback_did_not(tmp_path):
    """A config without RecordFailures: the reason comes from the error the launcher returned."""
    failures.start(tmp_path)
    failures.RecordFailures().on_job_end(_job_config(tmp_path), _failed_job(tmp_path, ValueError("recorded"), num=0))
    ended = [_failed_job(tmp_path, ValueError("recorded"), num=0), _failed_job(tmp_path, KeyError("svc"), num=1)]
    lines = mode_sweeper.ModeSweeper().failure_lines(ended, tmp_path)
    assert [line.split(": ", 1)[1] for line in lines] == ["ValueError: recorded", "KeyError: 'svc'"]
    assert failures.read(tmp_path) == dict(enumerate(lines))


def _hydra_cfg(sweeper, mode=RunMode.MULTIRUN):
    return OmegaConf.create({"mode": mode, "sweeper": {"_target_": sweeper}, "job": {"num": 0},
                             "runtime": {"choices": {"hydra/sweeper": "optuna", "dataset": "gaussian_clouds"}}})


def test_a_job_returns_its_validation_error_and_never_its_test_error():
    measured = {"test_error": 0.1, "train_error": 0.0}
    assert objective(RunResult(FINISHED, "r", "k", {**measured, "val_error": 0.25}), _hydra_cfg("o.Optuna")) == 0.25
    assert objective(RunResult(FINISHED, "r", "k", {"test_mse": 1.0, "val_mse": 2.0}), _hydra_cfg("o.Optuna")) == 2.0
    for sweeper in (ModeSweeperConf._target_, BASIC):
        assert objective(RunResult(FINISHED, "r", "k", measured), _hydra_cfg(sweeper)) is None
    assert objective(RunResult(FINISHED, "r", "k", measured), _hydra_cfg("o.Optuna", RunMode.RUN)) is None
    with pytest.raises(NoValidationSplit, match="data set gaussian_clouds has no validation split"):
        objective(RunResult(FINISHED, "r", "k", measured), _hydra_cfg("o.Optuna"))


def test_a_skipped_run_carries_the_finished_runs_metrics(store_uri):
    overrides = [*WITH_VALIDATION, "algorithm=svc_linear", f"tracking.uri={store_uri}"]
    first = run(*compose_run(overrides))
    again = run(*compose_run(overrides))
    assert (first.status, again.status) == (FINISHED, SKIPPED) and again.run_id == first.run_id
    assert first.validation_error is not None and again.validation_error == first.validation_error


@pytest.mark.usefixtures("store_uri")  # the store at tmp_path / mlflow.db, made: not what is tested
def test_hydra_basic_sweeper_runs_the_command_line_sweep_alone(tmp_path):
    """Not the experiment's 9-job ``sweep.quick``: the 2 jobs of the command line, by Hydra's sweeper."""
    done = _sweep(tmp_path, "basic", "hydra/sweeper=basic", "experiment=cross_training/fig3_baseline",
                  "dataset.n_train=120,160", "dataset.n_test=200", "seed=0", "selection.cv.n_splits=2",
                  "selection.param_grid.C=[1.0]")
    assert done.returncode == 0, done.stderr[-3000:]
    runs = _runs(tmp_path, "cross_training/fig3_baseline")
    assert sorted(int(r.data.params["dataset.n_train"]) for r in runs) == [120, 160]
    assert OmegaConf.load(tmp_path / "basic" / "multirun.yaml").hydra.sweeper._target_ == BASIC
    assert not (tmp_path / "basic" / "progress.jsonl").exists()  # svmrepro's sweeper did not run


@pytest.mark.slow
@pytest.mark.usefixtures("store_uri")
def test_optuna_minimizes_the_runs_validation_error(tmp_path):
    done = _sweep(tmp_path, "optuna", "hydra/sweeper=optuna", "hydra.sweeper.n_trials=3", "hydra.sweeper.n_jobs=1",
                  "hydra.sweeper.sampler.seed=0", *WITH_VALIDATION, "algorithm.C=interval(0.01,10)")
    assert done.returncode == 0, done.stderr[-3000:]
    runs = _runs(tmp_path)
    assert len(runs) == 3
    result = OmegaConf.load(tmp_path / "optuna" / "optimization_results.yaml")
    assert result.best_value == min(r.data.metrics["val_error"] for r in runs)
    [best] = [r for r in runs if float(r.data.params["algorithm.C"]) == pytest.approx(result.best_params["algorithm.C"])]
    assert best.data.metrics["val_error"] == result.best_value
    # the best trial reaches MLflow: params and value of the sweep's parent run
    client = MlflowClient(f"sqlite:///{tmp_path / 'mlflow.db'}")
    (parent,) = client.search_runs([best.info.experiment_id], "tags.`svmrepro.kind` = 'sweep'")
    assert float(parent.data.params["best.algorithm.C"]) == pytest.approx(result.best_params["algorithm.C"])
    assert parent.data.metrics["best_value"] == result.best_value and parent.data.params["sweeper"] == "optuna"
    assert "algorithm.C=interval(0.01,10)" in parent.data.params["overrides"]
    # the data set's three splits, each an input in its MLflow context
    assert sorted(i.tags[0].value for i in best.inputs.dataset_inputs) == ["testing", "training", "validation"]


def test_optuna_without_a_validation_split_stops_with_one_line(tmp_path):
    done = _sweep(tmp_path, "optuna", "hydra/sweeper=optuna", "hydra.sweeper.n_trials=1", "dataset.n_train=100",
                  "dataset.n_test=100", "algorithm=svc_linear", "algorithm.C=interval(0.1,10)")
    assert done.returncode == 1
    assert "Traceback" not in done.stderr
    assert ("svmrepro-run: error: job 0 has no validation error for sweeper optuna to minimize: data set "
            "gaussian_clouds has no validation split") in done.stderr


# ---------------------------------------------------------------------------------------------
# A list-form sweep (cascade/table1: svc, cascade_svc and the benchmark cascade, each with its own
# parameter names) narrowed by the command line entry by entry (issue 34).

LISTED = "cascade/table1"


def _listed_jobs(**given):
    return sweep_jobs(compose_config([f"experiment={LISTED}"]).sweep.quick, given)


def test_a_group_option_keeps_the_entries_that_use_it_and_every_job_composes():
    jobs = _listed_jobs(algorithm="cascade_svc")
    assert {job[0] for job in jobs} == {"algorithm=cascade_svc"} and len(jobs) == 4
    for job in jobs:
        compose_run([f"experiment={LISTED}", *job])


def test_a_key_that_some_entries_set_narrows_them_with_their_spelling_and_leaves_out_the_others():
    # algorithm.C=1000 is the svc entry's 1000.0: the runs the sweep makes, not new ones
    assert {tuple(job[:3]) for job in _listed_jobs(**{"algorithm.C": "1000"})} == {
        ("algorithm=svc", "algorithm.C=1000.0", "algorithm.gamma=0.0005")}
    # seed=2: the entries that sweep it (the benchmark's has seed 1 alone); seed=9, none has it: replaced
    assert [job[0] for job in _listed_jobs(seed="2")] == ["algorithm=svc", "algorithm=cascade_svc"]
    assert [job[-1] for job in _listed_jobs(seed="9")] == ["seed=9"] * 3
    # a key no entry sets: every entry (Hydra's rule)
    assert all("dataset.n_test=50" in job for job in _listed_jobs(**{"dataset.n_test": "50"}))


def test_a_group_option_no_entry_uses_is_one_line_before_any_job(tmp_path):
    with pytest.raises(SvmReproError, match="algorithm=svc_linear: no entry of the sweep uses it; "
                       "its entries use algorithm=bench_parallel_cascade,cascade_svc,svc"):
        _listed_jobs(algorithm="svc_linear")
    done = _sweep(tmp_path, "none", f"experiment={LISTED}", "algorithm=svc_linear")
    assert done.returncode == 2
    assert done.stderr.strip().splitlines()[-1] == (
        f"svmrepro-run: error: the quick sweep of {LISTED}: algorithm=svc_linear: no entry of the sweep uses it; "
        "its entries use algorithm=bench_parallel_cascade,cascade_svc,svc")
