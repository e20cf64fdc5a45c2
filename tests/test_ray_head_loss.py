"""A ray head lost in the middle of a run: the one line naming ``parallel.address`` and exit 2, within
``parallel.timeout`` (issue 46, item 8; :mod:`svmrepro.cluster_watch`). The watch itself on a fake head (a probe
that answers as told), then the command line on a ``ray start --head`` killed in the middle of a fit."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
import time

import forked_cli
import psutil
import pytest

from svmrepro import cluster_watch
from svmrepro.cluster_watch import RAY_RECONNECT_ENV, ClusterLost, head_of, lost_line, watching
from svmrepro.store.names import PID_TAG

pytestmark = pytest.mark.skipif(threading.current_thread() is not threading.main_thread(),
                                reason="the watch stops the main thread, where the tests must run")


@pytest.mark.parametrize("address, head", [
    ("127.0.0.1:6379", ("127.0.0.1", 6379)),
    ("ray://head.example:10001", ("head.example", 10001)),
    ("[::1]:6379", ("::1", 6379)),
    ("auto", None),
    (None, None),
    ("head.example", None),
    ("head.example:port", None),
])
def test_the_head_is_read_from_the_address(address, head):
    assert head_of(address) == head


def _wait(seconds: float) -> None:
    """A main thread busy in a wait, as in ray.get: a pending signal is handled in it."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        time.sleep(0.05)


def test_a_head_that_stops_answering_ends_the_block_in_one_line_within_the_timeout(monkeypatch):
    monkeypatch.setattr(cluster_watch, "PROBE_EVERY_S", 0.1)
    monkeypatch.delenv(RAY_RECONNECT_ENV, raising=False)
    calls = []

    def probe(head):
        calls.append(head)
        return len(calls) < 5  # it answers four times, then never again

    started = time.monotonic()
    with pytest.raises(ClusterLost) as lost:
        with watching("ray", "ray://u:s3cr3t@127.0.0.1:10001", timeout=1, probe=probe):
            assert os.environ[RAY_RECONNECT_ENV] == "61"  # ray's own wait longer than the watch's
            _wait(30)
    seconds = time.monotonic() - started
    assert str(lost.value) == lost_line("ray://u:s3cr3t@127.0.0.1:10001", 1)
    assert str(lost.value).startswith("parallel.address=ray://u:***@127.0.0.1:10001: no answer from the ray head "
                                      "for 1 s (parallel.timeout)")
    assert "s3cr3t" not in str(lost.value)
    assert set(calls) == {("127.0.0.1", 10001)}
    assert 1.4 <= seconds < 5  # four answers, then the timeout
    assert RAY_RECONNECT_ENV not in os.environ  # put back as it was
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_a_head_that_answers_is_left_alone_and_ctrl_c_stays_ctrl_c(monkeypatch):
    monkeypatch.setattr(cluster_watch, "PROBE_EVERY_S", 0.05)
    monkeypatch.setenv(RAY_RECONNECT_ENV, "7")
    with watching("ray", "127.0.0.1:6379", timeout=1, probe=lambda head: True):
        _wait(1.5)  # longer than the timeout: nothing happens
        assert os.environ[RAY_RECONNECT_ENV] == "7"  # the user's setting kept
    with pytest.raises(KeyboardInterrupt) as stopped:
        with watching("ray", "127.0.0.1:6379", timeout=1, probe=lambda head: True):
            threading.Timer(0.2, os.kill, (os.getpid(), signal.SIGINT)).start()
            _wait(10)
    assert not isinstance(stopped.value, ClusterLost)


class _RaysOwnError(RuntimeError):
    """An error ray raises for the head it lost before the watch's verdict (``LocalRayletDiedError``, where the
    head ran the driver's raylet too: seen with ray 2.40 and 2.45, hydra/launcher=ray_cluster)."""


def test_an_error_of_ray_s_own_is_the_lost_head_once_the_head_has_had_no_answer_for_the_timeout(monkeypatch):
    monkeypatch.setattr(cluster_watch, "PROBE_EVERY_S", 0.05)
    started = time.monotonic()
    with pytest.raises(ClusterLost) as lost:
        with watching("ray", "127.0.0.1:6379", timeout=1, probe=lambda head: False):
            raise _RaysOwnError("The task's local raylet died")
    assert str(lost.value) == lost_line("127.0.0.1:6379", 1)
    assert 1 <= time.monotonic() - started < 3  # the head given its timeout, no more
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    # a head that answers, at once or after a silence shorter than the timeout: the error is the block's own
    for answers in ([True], [False, False, True]):
        replies = iter([*answers, *[True] * 100])
        started = time.monotonic()
        with pytest.raises(_RaysOwnError):
            with watching("ray", "127.0.0.1:6379", timeout=1, probe=lambda head: next(replies)):
                raise _RaysOwnError("not the head's loss")
        assert time.monotonic() - started < 0.9


@pytest.mark.parametrize("backend, address", [("loky", "127.0.0.1:6379"), ("dask", "tcp://127.0.0.1:8786"),
                                              ("ray", None)])
def test_nothing_is_watched_but_a_ray_head_given_by_its_address(monkeypatch, backend, address):
    monkeypatch.setattr(cluster_watch, "PROBE_EVERY_S", 0.05)
    with watching(backend, address, timeout=1, probe=lambda head: pytest.fail(f"probed {head}")):
        _wait(1.5)


# the mixture's experts on ray, two at a time, over a few seconds of fitting: the head is killed in the middle
ROWS = ["dataset=gaussian_clouds", "dataset.n_train=6000", "dataset.n_test=500"]
MIXTURE = ["algorithm=gated_svm_mixture", "algorithm.n_experts=8", "algorithm.n_iter=3", "algorithm.n_hidden=10",
           "algorithm.gater_max_epochs=5", "algorithm.estimator.gamma=0.05", "algorithm.n_jobs=2"]
TIMEOUT_S = 3
#: what ray puts before a line its worker printed, as it forwards it to the driver: ``(<task> pid=<pid>) ``, coloured
RAY_PREFIX = re.compile(r"^(\x1b\[[\d;]*m)?\([^()]* pid=\d+[^()]*\)(\x1b\[0m)? ?")


def _lose_the_head(head, command: list[str], cwd) -> tuple[subprocess.Popen, list[str], float]:
    """Run ``command`` against ``head``, kill the head's whole process tree (GCS, raylet, its workers: its machine
    goes away) once the first fit is under way; the process, what it printed, and its seconds after the kill."""
    run = forked_cli.start(command, env=head.env, cwd=cwd, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True)  # the log, then the error line, in order
    lines = []
    for line in run.stdout:  # the experts of the first iteration were on ray: the fit is under way
        lines.append(line)
        if "mixture iteration 1/" in line:
            break
    tree = [psutil.Process(head.process.pid), *psutil.Process(head.process.pid).children(recursive=True)]
    for process in tree:
        process.kill()
    psutil.wait_procs(tree, timeout=30)
    killed = time.monotonic()
    try:
        rest, _ = run.communicate(timeout=120)
    finally:
        run.kill()
    seconds = time.monotonic() - killed
    return run, [line.rstrip("\n") for line in [*lines, *rest.splitlines()] if line.strip()], seconds


def _ends_in_the_line(run: subprocess.Popen, printed: list[str], seconds: float, line: str) -> None:
    # what is printed, not logged (a log record starts with its time: the sweep's closing, after the line, marks
    # the runs its lost jobs left RUNNING); loky's resource tracker, which outlives a process that ended without
    # unwinding (cluster_watch.give_up), warns as it removes the memory-mapping folder joblib left: not ours either
    # a ray worker's log record reaches the driver's output behind ray's prefix, ``(_run_job pid=N)`` in colour,
    # and may come after the line: a log record too
    records = [RAY_PREFIX.sub("", each) for each in printed]
    ours = [each for each in records if not re.match(r"\[?\d{4}-\d\d-\d\d ", each)
            and "resource_tracker" not in each and each.strip() != "warnings.warn("]
    assert run.returncode == 2, "\n".join(printed[-30:])
    assert ours[-1] == f"svmrepro-run: error: {line}"
    assert sum("no answer from the ray head" in each for each in printed) == 1
    assert not any("Traceback" in each for each in printed), "\n".join(printed[-30:])
    # the timeout, the probes, the run's unwinding; not ray's own limit (60 s and more)
    assert seconds < TIMEOUT_S + cluster_watch.UNWIND_S + 15


def _not_finished_nor_failed(store: str) -> list:
    """The runs of ``store``: KILLED when a run unwound; RUNNING when its process ended held in ray's call, for the
    next run of its identity to mark KILLED (its process gone); a lost head never makes a run FAILED."""
    from mlflow.tracking import MlflowClient

    client = MlflowClient(store)
    runs = client.search_runs([e.experiment_id for e in client.search_experiments()])
    for run in runs:
        assert run.info.status in ("KILLED", "RUNNING", "FINISHED"), run.info
        if run.info.status == "RUNNING":
            assert not psutil.pid_exists(int(run.data.tags[PID_TAG]))
    return runs


def test_the_command_line_names_a_ray_head_lost_in_the_middle_of_a_fit_in_one_line(tmp_path, store_uri):
    from clusters import ray_head

    with ray_head() as head:
        run, printed, seconds = _lose_the_head(head, [
            sys.executable, "-m", "svmrepro", *ROWS, *MIXTURE, "parallel.backend=ray",
            f"parallel.address={head.address}", f"parallel.timeout={TIMEOUT_S}", f"tracking.uri={store_uri}",
            f"hydra.run.dir={tmp_path / 'run'}"], tmp_path)
    _ends_in_the_line(run, printed, seconds, lost_line(head.address, TIMEOUT_S))
    (lost_run,) = _not_finished_nor_failed(store_uri)
    assert lost_run.info.status != "FINISHED"


def test_a_ray_launcher_sweep_names_its_lost_head_in_one_line(tmp_path, store_uri):
    """The jobs of a sweep as ray tasks (``hydra/launcher=ray_cluster``): the head that runs them lost, the sweep
    ends in the line naming the launcher's address."""
    from clusters import ray_head, ray_launcher_path

    launcher = ray_launcher_path(tmp_path / "hydra-ray-launcher")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [launcher, os.environ.get("PYTHONPATH")]))}
    with ray_head(env=env) as head:
        run, printed, seconds = _lose_the_head(head, [
            sys.executable, "-m", "svmrepro", "-m", "hydra/launcher=ray_cluster",
            f"hydra.launcher.ray.init.address={head.address}", *ROWS, *MIXTURE, "seed=1,2,3",
            f"parallel.timeout={TIMEOUT_S}", f"tracking.uri={store_uri}", f"hydra.sweep.dir={tmp_path / 'sweep'}"],
            tmp_path)
    _ends_in_the_line(run, printed, seconds, lost_line(head.address, TIMEOUT_S, "hydra.launcher.ray.init.address"))
    _not_finished_nor_failed(store_uri)
