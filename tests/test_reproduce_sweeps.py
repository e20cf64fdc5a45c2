"""svmrepro-reproduce runs every experiment's sweep in one child process (:mod:`svmrepro.sweeps`, issue 31 point
4: the quick reproduction's fixed cost per output), builds each output as its sweep ends, and a sweep or an
output that fails stops none of the others."""

import json
import os
import subprocess
import sys

import pytest
from mlflow.tracking import MlflowClient
from stores import copy_store

from svmrepro import reproduce as reproducing
from svmrepro.locations import CONFIG_DIRS_ENV

#: a user's experiment of two quick jobs, each a fit of well under a second
EXPERIMENT = """\
# @package _global_
defaults:
  - override /dataset: gaussian_clouds
  - override /algorithm: svc_linear
dataset:
  n_train: 40
  n_test: 40
sweep:
  quick: {seed: "0,1"}
report:
  title: {title}
  x: params.seed
  metrics: [test_error]
"""
NAMES = ("mine/one", "mine/two")


@pytest.fixture
def folder(tmp_path, monkeypatch, empty_store):
    """Two experiments of the user's (``conf/experiment/mine/``) in the current folder, and no claims; an empty
    store."""
    copy_store(empty_store, tmp_path / "mlflow.db")
    monkeypatch.setenv(CONFIG_DIRS_ENV, "")  # --config-dir sets it for the process; put back afterwards
    monkeypatch.chdir(tmp_path)
    for name in NAMES:
        path = tmp_path / "conf" / "experiment" / f"{name}.yaml"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(EXPERIMENT.replace("{title}", name))
    monkeypatch.setattr(reproducing, "papers", lambda: ["mine"])
    return tmp_path


def _arguments(folder):
    return ["--config-dir", str(folder / "conf"), *(a for name in NAMES for a in ("--experiment", name)),
            "--tracking-uri", f"sqlite:///{folder / 'mlflow.db'}", "--results-dir", str(folder / "results")]


def test_every_sweep_runs_in_one_child_process_and_each_output_is_built_as_its_sweep_ends(folder, monkeypatch):
    children, running_at_build = [], {}
    popen, build_one = subprocess.Popen, reproducing.build_one

    def counted(command, *args, **kwargs):
        child = popen(command, *args, **kwargs)
        if command[1:3] in (["-m", "svmrepro"], ["-m", "svmrepro.sweeps"]):  # not git's, nor loky's
            children.append(child)
        return child

    def watched(experiment, plan, args):
        running_at_build[experiment] = children[0].poll() is None
        return build_one(experiment, plan, args)

    monkeypatch.setattr(subprocess, "Popen", counted)
    monkeypatch.setattr(reproducing, "build_one", watched)
    assert reproducing.main(_arguments(folder)) == 0
    assert len(children) == 1
    # the first output is built while the child runs the second sweep
    assert running_at_build["mine/one"] and set(running_at_build) == set(NAMES)
    client = MlflowClient(f"sqlite:///{folder / 'mlflow.db'}")
    for name in NAMES:
        assert (folder / "results" / "mine" / f"{name.split('/')[1]}.md").is_file()
        runs = client.search_runs([client.get_experiment_by_name(name).experiment_id], "tags.mode = 'quick'")
        assert sorted(r.data.params["seed"] for r in runs if "seed" in r.data.params) == ["0", "1"]


def test_a_sweep_that_fails_does_not_stop_the_next_and_each_exit_code_is_reported(folder):
    uri = f"sqlite:///{folder / 'mlflow.db'}"
    sweeps = [
        ["mine/one", ["-m", "--config-dir", str(folder / "conf"), "experiment=mine/one", "algorithm.C=-1"]],
        ["mine/two", ["-m", "--config-dir", str(folder / "conf"), "experiment=mine/two", "seed=0"]],
    ]
    read_end, write_end = os.pipe()
    child = subprocess.Popen([sys.executable, "-m", "svmrepro.sweeps", "--status-fd", str(write_end),
                              json.dumps(sweeps)], pass_fds=(write_end,), stderr=subprocess.PIPE, text=True,
                             env={**os.environ, "MLFLOW_TRACKING_URI": uri})
    os.close(write_end)
    with os.fdopen(read_end) as status:
        reports = [json.loads(line) for line in status]
    _, stderr = child.communicate(timeout=120)
    assert child.returncode == 0, stderr
    assert reports == [{"experiment": "mine/one", "code": 2}, {"experiment": "mine/two", "code": 0}]
    assert "-1 is invalid: The 'C' parameter of SVC" in stderr and "Traceback" not in stderr
    client = MlflowClient(uri)
    one = client.get_experiment_by_name("mine/one")
    assert one is None or not client.search_runs([one.experiment_id])  # the mistake was found before any run
    runs = client.search_runs([client.get_experiment_by_name("mine/two").experiment_id])
    [run] = [r for r in runs if "seed" in r.data.params]  # not the sweep's own run
    assert run.info.status == "FINISHED"


def test_an_output_that_fails_to_build_is_reported_and_the_others_are_built(folder, monkeypatch, capsys):
    def build_one(experiment, plan, args):
        if experiment == "mine/one":
            raise reproducing.SvmReproError("mine/one: no FINISHED runs in mode quick")
        return True

    monkeypatch.setattr(reproducing, "build_one", build_one)
    assert reproducing.main([*_arguments(folder), "--no-run"]) == 1
    out, err = capsys.readouterr()
    assert "svmrepro-reproduce: 1 of 2 outputs written" in out
    assert err.strip().splitlines()[-1] == "svmrepro-reproduce: 1 output(s) not built: mine/one"


def test_a_page_is_not_built_beside_a_timed_run_of_the_next_sweep(folder, monkeypatch):
    """A page is built while the next sweep runs, but never beside a timed run: the build takes a shared
    slot of the machine (svmrepro.exclusive), so it waits while a timed run holds the machine."""
    import threading
    import time

    from svmrepro.exclusive import EXCLUSIVE, machine_slot

    released, started = [], []
    holding = threading.Event()

    def timed_run():
        with machine_slot(EXCLUSIVE, "mine/two"):
            holding.set()
            time.sleep(1.0)
            released.append(time.monotonic())

    def run_sweeps(chosen, plan, tracking_uri, extra):
        threading.Thread(target=timed_run).start()  # the next sweep's timed job, as the first sweep ends
        holding.wait(10)
        yield from ((experiment, True) for experiment in chosen)

    def build_one(experiment, plan, args):
        started.append(time.monotonic())
        return True

    monkeypatch.setattr(reproducing, "run_sweeps", run_sweeps)
    monkeypatch.setattr(reproducing, "build_one", build_one)
    assert reproducing.main(_arguments(folder)) == 0
    assert released and started and min(started) >= released[0]


def _seeds(client: MlflowClient, experiment_id: str) -> list[str]:
    """The seeds of the experiment's quick runs (its jobs' runs: a sweep's own run has none), sorted."""
    return sorted(r.data.params["seed"] for r in client.search_runs([experiment_id], "tags.mode = 'quick'")
                  if "seed" in r.data.params)


def test_an_experiment_whose_runs_all_finished_starts_no_sweep_and_its_output_is_still_built(folder, monkeypatch,
                                                                                            caplog):
    """Skipping in bulk (issue 44, item 5): the parent reads the store once per experiment; one whose every job's
    run FINISHED starts no sweep (no child process, no sweep run), one with a job left is swept alone, and every
    output is built, in order."""
    assert reproducing.main(_arguments(folder)) == 0
    client = MlflowClient(f"sqlite:///{folder / 'mlflow.db'}")
    ids = {name: client.get_experiment_by_name(name).experiment_id for name in NAMES}
    before = {name: len(client.search_runs([ids[name]])) for name in NAMES}
    two = folder / "conf" / "experiment" / "mine" / "two.yaml"
    two.write_text(two.read_text().replace('seed: "0,1"', 'seed: "0,1,2"'))  # one job left, of mine/two
    swept, built = [], []
    popen, build_one = subprocess.Popen, reproducing.build_one

    def counted(command, *args, **kwargs):
        if command[1:3] == ["-m", "svmrepro.sweeps"]:
            swept.append([name for name, _ in json.loads(command[-1])])
        return popen(command, *args, **kwargs)

    def watched(experiment, plan, args):
        built.append(experiment)
        return build_one(experiment, plan, args)

    monkeypatch.setattr(subprocess, "Popen", counted)
    monkeypatch.setattr(reproducing, "build_one", watched)
    caplog.set_level("INFO", logger="svmrepro.reproduce")
    assert reproducing.main(_arguments(folder)) == 0
    assert swept == [["mine/two"]] and built == list(NAMES)
    assert "mine/one: the run of each of its 2 jobs FINISHED already" in caplog.text
    assert len(client.search_runs([ids["mine/one"]])) == before["mine/one"]  # no run made: no sweep's, no job's
    assert _seeds(client, ids["mine/two"]) == ["0", "1", "2"]  # the job left, made once; none made again
    swept.clear(), built.clear()
    assert reproducing.main(_arguments(folder)) == 0  # nothing left: no sweep at all
    assert swept == [] and built == list(NAMES)
    assert _seeds(client, ids["mine/two"]) == ["0", "1", "2"]


NO_OP_SCRIPT = r"""
import functools, json, os, sys
from svmrepro import reproduce as reproducing

record = sys.argv[1]


def recorded(function):
    @functools.wraps(function)  # its own name and module: a fork's task names the function by them
    def wrapper(*args, **kwargs):
        with open(record, "a") as file:  # by whichever process calls it
            file.write(f"{function.__name__} {os.getpid()}\n")
        return function(*args, **kwargs)
    return wrapper


reproducing.papers = lambda: ["mine"]
for name in ("finished_already", "_runs_pages", "build_one"):
    setattr(reproducing, name, recorded(getattr(reproducing, name)))
code = reproducing.main(json.loads(sys.argv[2]))
print(json.dumps({"code": code, "pid": os.getpid()}))
"""


def test_a_reproduction_with_nothing_to_run_reads_its_store_in_a_fork_while_it_builds_its_pages(folder):
    """Issue 44, item 5: with nothing to run, which experiments are done is read from the store by a fork of the
    process (:func:`svmrepro.forks.ahead`) while the process builds their pages, and the cost page is written by a
    fork while the claims are judged; the files are byte for byte those that one process writes alone (here, in a
    pytest-xdist worker, whose threads keep it from forking)."""
    assert reproducing.main(_arguments(folder)) == 0  # the runs
    assert reproducing.main(_arguments(folder)) == 0  # nothing to run: one process alone
    results = folder / "results"
    alone = {path: path.read_bytes() for path in results.rglob("*") if path.is_file()}
    record = folder / "called_by"
    done = subprocess.run([sys.executable, "-c", NO_OP_SCRIPT, str(record), json.dumps(_arguments(folder))],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert out["code"] == 0
    calls: dict[str, set[int]] = {}
    for line in record.read_text().splitlines():
        name, pid = line.split()
        calls.setdefault(name, set()).add(int(pid))
    assert calls["build_one"] == {out["pid"]}  # the pages: this process
    assert len(calls["finished_already"]) == 1 and out["pid"] not in calls["finished_already"]
    assert len(calls["_runs_pages"]) == 1 and out["pid"] not in calls["_runs_pages"]
    assert done.stderr.count("FINISHED already (one read of the store): no sweep started") == len(NAMES)
    assert {path: path.read_bytes() for path in results.rglob("*") if path.is_file()} == alone
