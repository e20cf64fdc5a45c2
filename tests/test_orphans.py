"""``kill -9`` of ``svmrepro-run`` (its process alone, not its group) leaves no process behind: the
workers watch their parent (:func:`svmrepro.signals.end_with_parent`) and end within seconds, the
sweep's runs they held marked KILLED, and the resource trackers end once the workers have.

Real ``svmrepro-run`` processes over test_faults' FaultyClassifier, whose fit sleeps: a sweep on
the joblib launcher's 2 workers, and one run whose cascade fits its sub-models on 2 loky workers.
"""

import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import forked_cli
import psutil
import pytest
from stores import copy_store
from test_faults import SLEEP_ENV, _env, _runs, _status_counts, _sweep_command

from svmrepro.signals import alive
from svmrepro.store import KILLED_REASON_TAG

#: a fit outlasts the test: a worker ends only because its parent has
FIT_S = "60"
#: seconds the processes left have to end after the kill
ENDED_WITHIN_S = 10


@pytest.fixture
def root(tmp_path, empty_store):
    copy_store(empty_store, tmp_path / "mlflow.db")
    (tmp_path / "conf" / "algorithm").mkdir(parents=True)
    (tmp_path / "conf" / "algorithm" / "faulty.yaml").write_text("_target_: test_faults.FaultyClassifier\n")
    (tmp_path / "conf" / "algorithm" / "faulty_cascade.yaml").write_text(
        "_target_: svmrepro.algorithms.wen_lu_cascade.WenLuCascadeSVC\n"
        "estimator:\n  _target_: test_faults.FaultyClassifier\nn_jobs: 2\n")
    return tmp_path


def _command_line(process: psutil.Process) -> str:
    """A process's command line; empty for one that ended (or is a zombie) meanwhile."""
    try:
        return " ".join(process.cmdline())
    except psutil.Error:
        return ""


def _loky_workers(process: psutil.Process) -> list[psutil.Process]:
    return [child for child in process.children() if "LokyProcess" in _command_line(child)]


def _kill_main_once(command: list[str], root: Path, ready) -> tuple[list[psutil.Process], list[psutil.Process]]:
    """Start ``command`` in a session of its own, SIGKILL its process alone once ``ready(process)``;
    (the descendants it had, those still running ``ENDED_WITHIN_S`` seconds later)."""
    main = forked_cli.start(command, env=_env(**{SLEEP_ENV: FIT_S}), cwd=root, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    family: list[psutil.Process] = []
    try:
        process, deadline = psutil.Process(main.pid), time.monotonic() + 120
        while not ready(process):
            assert main.poll() is None, "the command ended before it was killed"
            assert time.monotonic() < deadline, "no worker fitting in time"
            time.sleep(0.1)
        family = process.children(recursive=True)
        os.kill(main.pid, signal.SIGKILL)
        main.wait()
        deadline = time.monotonic() + ENDED_WITHIN_S
        while any(map(alive, family)) and time.monotonic() < deadline:
            time.sleep(0.1)
        return family, [process for process in family if alive(process)]
    finally:
        for process in filter(alive, family):  # only when the test failed
            process.kill()
        if main.poll() is None:
            os.killpg(main.pid, signal.SIGKILL)
            main.wait()


def test_the_workers_of_a_sweep_end_when_its_process_is_killed(root):
    def fitting(process):
        return len(_loky_workers(process)) == 2 and _status_counts(root / "mlflow.db")["RUNNING"] == 2

    family, left = _kill_main_once(_sweep_command(root, "orphaned"), root, fitting)
    assert len(family) >= 3  # the 2 workers and at least one resource tracker
    assert left == [], f"still running {ENDED_WITHIN_S} s after the sweep's process was killed: {left}"
    runs = _runs(root)
    assert Counter(run.status for run in runs) == {"KILLED": 2}
    assert all("SIGTERM received by process" in run.tags[KILLED_REASON_TAG] for run in runs)


def test_the_workers_of_a_sweep_end_when_its_process_is_killed_as_they_start(root):
    """Issue 46, item 6: killed as soon as the workers are there, before either runs a job (a job's start
    takes a second or more in a fresh worker: imports, Hydra's set-up); they watch their parent from their
    start (the loky pool's initializer), not from their first job. Before: LokyProcess-1 and both resource
    trackers still alive, re-parented, over 100 s later."""
    def starting(process):
        return len(_loky_workers(process)) >= 1 and _status_counts(root / "mlflow.db")["RUNNING"] == 0

    family, left = _kill_main_once(_sweep_command(root, "orphaned_early"), root, starting)
    assert len(family) >= 2  # a worker and a resource tracker at least
    assert left == [], f"still running {ENDED_WITHIN_S} s after the sweep's process was killed: {left}"


def test_the_sub_model_workers_of_a_run_end_when_its_process_is_killed(root):
    command = [sys.executable, "-m", "svmrepro", f"hydra.searchpath=[file://{root / 'conf'}]", "algorithm=faulty_cascade",
               "dataset.n_train=40", "dataset.n_test=40", f"tracking.uri=sqlite:///{root / 'mlflow.db'}",
               f"hydra.run.dir={root / 'run'}"]

    def fitting(process):
        return len(_loky_workers(process)) == 2 and _status_counts(root / "mlflow.db")["RUNNING"] == 1

    family, left = _kill_main_once(command, root, fitting)
    assert len(family) >= 3
    assert left == [], f"still running {ENDED_WITHIN_S} s after the run's process was killed: {left}"
