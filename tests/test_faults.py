"""Faults a sweep survives: kill -9 half-way, a fit that raises, four workers on one SQLite store,
and the same numbers from the same config whatever the number of workers.

The sweeps are real ``svmrepro-run -m`` processes (4 jobs, joblib launcher with 2 workers) over a
test-only estimator, :class:`FaultyClassifier`, given to Hydra through a config directory of the
test's own (``hydra.searchpath``). The chain killed -> re-run with a failing job -> re-run runs once
per module; its time is mostly the start-up of the sweep and worker processes.
"""

import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from types import SimpleNamespace

import forked_cli
import numpy as np
import pytest
from joblib import Parallel, delayed
from mlflow.tracking import MlflowClient
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.validation import check_is_fitted

from stores import copy_store

from svmrepro.compose import compose_run
from svmrepro.runner import FINISHED, run
from svmrepro.store import KILLED_REASON_TAG, Store

SLEEP_ENV, FAIL_ENV = "FAULTS_SLEEP_S", "FAULTS_FAIL_SEEDS"
SEEDS = list(range(4))
FAILING_SEED = 3  # the last job: it never finishes before the kill


class FaultyClassifier(ClassifierMixin, BaseEstimator):
    """Test-only nearest-class-mean classifier whose ``fit`` sleeps ``$FAULTS_SLEEP_S`` seconds and
    raises when its ``random_state`` (the run's seed) is listed in ``$FAULTS_FAIL_SEEDS``.

    The environment, not the config, decides, so a run's identity stays the same whether it
    sleeps or fails: a re-run of the same sweep skips and retries exactly as for a real fault.
    """

    _parameter_constraints: dict = {"random_state": ["random_state"]}

    def __init__(self, *, random_state=None):
        self.random_state = random_state

    def fit(self, X, y):
        time.sleep(float(os.environ.get(SLEEP_ENV, "0")))
        if str(self.random_state) in os.environ.get(FAIL_ENV, "").split(","):
            raise RuntimeError(f"fit failed on purpose (random_state={self.random_state})")
        self.classes_ = np.unique(y)
        self.means_ = np.array([X[y == label].mean(axis=0) for label in self.classes_])
        return self

    def predict(self, X):
        check_is_fitted(self)
        return self.classes_[((X[:, None, :] - self.means_) ** 2).sum(axis=2).argmin(axis=1)]


def _sweep_command(root: Path, name: str, *extra: str) -> list[str]:
    return [
        sys.executable, "-m", "svmrepro", "-m", *extra, f"hydra.searchpath=[file://{root / 'conf'}]",
        "algorithm=faulty", "dataset.n_train=40", "dataset.n_test=40", f"seed=range({len(SEEDS)})",
        "hydra/launcher=parallel", "hydra.launcher.n_jobs=2",
        f"tracking.uri=sqlite:///{root / 'mlflow.db'}", f"hydra.sweep.dir={root / name}",
    ]


def _env(**extra: str) -> dict[str, str]:
    """Workers import this module (the estimator's ``_target_``) from tests/."""
    path = os.pathsep.join(filter(None, [str(Path(__file__).parent), os.environ.get("PYTHONPATH")]))
    env = {k: v for k, v in os.environ.items() if k not in (SLEEP_ENV, FAIL_ENV)}
    return {**env, "PYTHONPATH": path, **extra}


def _sweep(root: Path, name: str, *extra: str, **env: str) -> subprocess.CompletedProcess:
    done = forked_cli.run(_sweep_command(root, name, *extra), env=_env(**env), cwd=root,
                          capture_output=True, text=True, timeout=300)
    done.output = done.stdout + done.stderr
    return done


def identical_runs_at_once(root: Path, uri: str, copies: int, *overrides: str) -> tuple[list[int], list[str]]:
    """``copies`` ``svmrepro-run`` processes of one configuration (a 2-s fit of FaultyClassifier) started at once
    on the store at ``uri``: their exit codes and outputs."""
    (root / "conf" / "algorithm").mkdir(parents=True, exist_ok=True)
    (root / "conf" / "algorithm" / "faulty.yaml").write_text("_target_: test_faults.FaultyClassifier\n")
    command = [sys.executable, "-m", "svmrepro", f"hydra.searchpath=[file://{root / 'conf'}]",
               "algorithm=faulty", "dataset.n_train=40", "dataset.n_test=40", *overrides,
               f"tracking.uri={uri}", f"hydra.run.dir={root / 'out'}"]
    env = _env(**{SLEEP_ENV: "2"})
    procs = [forked_cli.start(command, env=env, cwd=root, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              text=True) for _ in range(copies)]
    outputs = [p.communicate(timeout=300)[0] for p in procs]
    return [p.returncode for p in procs], outputs


def _status_counts(db: Path) -> Counter:
    """Statuses of the sweep's runs (not of its parent run) straight from the SQLite file, read-only
    (empty while the store is being made)."""
    query = ("select status, count(*) from runs where run_uuid not in (select run_uuid from tags"
             " where key = 'svmrepro.kind' and value = 'sweep') group by status")
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=1) as con:
            return Counter(dict(con.execute(query).fetchall()))
    except sqlite3.Error:
        return Counter()


def _runs(root: Path) -> list[SimpleNamespace]:
    client = MlflowClient(f"sqlite:///{root / 'mlflow.db'}")
    experiment = client.get_experiment_by_name("adhoc")
    return [
        SimpleNamespace(id=r.info.run_id, status=r.info.status, seed=int(r.data.tags["seed"]), tags=r.data.tags,
                        artifact_uri=r.info.artifact_uri)
        for r in client.search_runs([experiment.experiment_id], max_results=1000)
        if r.data.tags.get("svmrepro.kind") != "sweep"  # the sweep's parent run
    ]


def _seeds(runs, status: str) -> Counter:
    return Counter(r.seed for r in runs if r.status == status)


def _kill_half_way(root: Path) -> None:
    """Start the sweep in a process group of its own; SIGKILL the group once 2 runs FINISHED while
    another is RUNNING (each fit sleeps 1.5 s: the second pair of jobs is under way)."""
    log = open(root / "killed.log", "w")
    sweep = forked_cli.start(_sweep_command(root, "killed"), env=_env(**{SLEEP_ENV: "1.5", FAIL_ENV: str(FAILING_SEED)}),
                             cwd=root, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    deadline = time.monotonic() + 180
    try:
        while True:
            counts = _status_counts(root / "mlflow.db")
            if counts["FINISHED"] >= 2 and counts["RUNNING"] >= 1:
                break
            assert sweep.poll() is None, f"the sweep ended before it was killed: {(root / 'killed.log').read_text()}"
            assert time.monotonic() < deadline, "no run FINISHED in time"
            time.sleep(0.2)
    finally:
        os.killpg(sweep.pid, signal.SIGKILL)
        sweep.wait()
        log.close()


@pytest.fixture(scope="module")
def chain(tmp_path_factory, empty_store):
    """Sweep killed half-way; re-run with the last seed's fit raising; re-run with nothing failing."""
    root = tmp_path_factory.mktemp("faults")
    copy_store(empty_store, root / "mlflow.db")
    (root / "conf" / "algorithm").mkdir(parents=True)
    (root / "conf" / "algorithm" / "faulty.yaml").write_text(f"_target_: {__name__}.FaultyClassifier\n")
    _kill_half_way(root)
    with sqlite3.connect(root / "mlflow.db") as con:
        integrity = con.execute("pragma integrity_check").fetchall()
    killed = _runs(root)
    failing = _sweep(root, "failing", **{FAIL_ENV: str(FAILING_SEED)})
    after_failing = _runs(root)
    fixed = _sweep(root, "fixed", "--quiet")
    return SimpleNamespace(root=root, integrity=integrity, killed=killed, failing=failing,
                           after_failing=after_failing, fixed=fixed, after_fixed=_runs(root))


def test_a_sweep_killed_half_way_leaves_a_sound_store(chain):
    assert chain.integrity == [("ok",)]
    statuses = Counter(r.status for r in chain.killed)
    assert statuses["FINISHED"] >= 2 and statuses["RUNNING"] >= 1
    assert len(_seeds(chain.killed, "FINISHED")) < len(SEEDS)


def test_the_rerun_executes_only_the_missing_configurations(chain):
    finished = set(_seeds(chain.killed, "FINISHED"))
    executed = [s for s in SEEDS if s not in finished]
    assert chain.failing.output.count("skip: run") == len(finished)
    assert chain.failing.output.count(" FINISHED: ") == len([s for s in executed if s != FAILING_SEED])
    assert _seeds(chain.after_failing, "FINISHED") == Counter({s: 1 for s in SEEDS if s != FAILING_SEED})


def test_runs_left_running_by_the_kill_are_marked_killed_by_the_rerun(chain):
    orphans = {r.id for r in chain.killed if r.status == "RUNNING"}
    later = {r.id: r for r in chain.after_failing}
    for run_id in orphans:
        assert later[run_id].status == "KILLED"
        assert "ended while the run was RUNNING" in later[run_id].tags[KILLED_REASON_TAG]
    assert not [r for r in chain.after_fixed if r.status == "RUNNING"]


def test_a_fit_that_raises_fails_its_run_and_the_sweep_with_a_summary(chain):
    failing = chain.failing
    assert failing.returncode == 1
    assert f"svmrepro-run: 1 of {len(SEEDS)} jobs failed" in failing.stderr
    assert f"seed={FAILING_SEED}" in failing.stderr and "RuntimeError: fit failed on purpose" in failing.stderr
    assert "Traceback" not in failing.stderr
    assert f"sweep ended: {len(SEEDS)} jobs" in failing.output and "1 failed" in failing.output
    failed = [r for r in chain.after_failing if r.status == "FAILED"]
    assert {r.seed for r in failed} == {FAILING_SEED}
    client = MlflowClient(f"sqlite:///{chain.root / 'mlflow.db'}")
    text = client.download_artifacts(failed[-1].id, "traceback.txt", str(chain.root))
    assert "RuntimeError: fit failed on purpose" in Path(text).read_text()


def test_the_next_rerun_retries_only_the_failed_one(chain):
    fixed = chain.fixed
    assert fixed.returncode == 0, fixed.stderr[-2000:]
    assert fixed.output.count("skip: run") == len(SEEDS) - 1
    assert fixed.output.count(" FINISHED: ") == 1
    assert _seeds(chain.after_fixed, "FINISHED") == Counter({s: 1 for s in SEEDS})


def test_each_job_logs_a_progress_line_and_quiet_silences_them(chain):
    lines = [line for line in chain.failing.stdout.splitlines() if "progress: " in line]
    n = len(SEEDS)
    assert {line.split("progress: ")[1].split(" ")[0] for line in lines} == {f"{k}/{n}" for k in range(1, n + 1)}
    assert any(f"{n}/{n} jobs ended" in line and "0 remaining" in line and "none left" in line for line in lines)
    assert "progress: " not in chain.fixed.output  # --quiet
    assert len((chain.root / "fixed" / "progress.jsonl").read_text().splitlines()) == 1 + len(SEEDS)


def test_no_sweep_met_a_locked_database(chain):
    for output in ((chain.root / "killed.log").read_text(), chain.failing.output, chain.fixed.output):
        assert "database is locked" not in output


def _run_job(overrides: list[str]) -> str:
    return run(*compose_run(overrides)).status


def test_four_workers_logging_to_one_sqlite_store_in_repeated_sweeps(store_uri, monkeypatch):
    """3 rounds of 8 fast runs by 4 loky worker processes, each with its own MLflow client: every
    write (run creation, params, metrics, artifacts, termination) meets the others' locks."""
    monkeypatch.setenv("PYTHONPATH", _env()["PYTHONPATH"])
    Store(store_uri).experiment_id("adhoc")  # as PrepareStore does before a sweep's jobs start
    jobs = [["dataset.n_train=40", "dataset.n_test=40", "algorithm=svc_linear", f"seed={seed}",
             f"tracking.uri={store_uri}", "force=true"] for seed in SEEDS]
    with Parallel(n_jobs=4, backend="loky") as parallel:
        for _ in range(3):
            assert parallel(delayed(_run_job)(job) for job in jobs) == [FINISHED] * len(SEEDS)
    client = MlflowClient(store_uri)
    runs = client.search_runs([client.get_experiment_by_name("adhoc").experiment_id], max_results=100)
    assert Counter(r.info.status for r in runs) == {"FINISHED": 3 * len(SEEDS)}
    assert Counter(Counter(r.data.tags["seed"] for r in runs).values()) == {3: len(SEEDS)}


def test_cascade_gives_the_same_numbers_twice_and_with_two_workers(tiny_cfg):
    """Sub-SVMs fitted in 1 or 2 worker processes: every metric but the times (``*_s``) is equal,
    the support-vector counts of every step included. (The support sets themselves are compared
    in tests/algorithms/test_cascade.py and test_cross_training.py.)"""
    choices = {"experiment": "test/faults", "algorithm": "cascade_svc"}

    def numbers(*overrides):
        cfg = tiny_cfg("algorithm=cascade_svc", "dataset.n_train=400", "force=true", *overrides)
        metrics = run(cfg, choices).metrics
        return {k: v for k, v in metrics.items() if not k.endswith("_s")}

    serial = numbers("algorithm.n_jobs=1")
    assert "n_sv" in serial and "step1.T1.n_sv" in serial
    assert numbers("algorithm.n_jobs=1") == serial
    assert numbers("algorithm.n_jobs=2") == serial
