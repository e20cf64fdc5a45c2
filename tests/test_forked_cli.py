"""tests/forked_cli.py starts svmrepro's command lines as forks of a process that has imported the libraries: here
each way runs the same commands, and what a test of a command line reads (exit code, standard output and error,
the store, a signal's line) is the same. Where a fork would differ (an environment read at import), it is the real
process."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import forked_cli
import psutil
import pytest
from test_faults import SLEEP_ENV, _env, _status_counts

TINY = ["dataset=gaussian_clouds", "dataset.n_train=40", "dataset.n_test=40", "algorithm=svc_linear"]


def _both(args, tmp_path, **kwargs) -> tuple[subprocess.CompletedProcess, subprocess.CompletedProcess]:
    """The command run each way, the two at once."""
    command = [sys.executable, "-m", "svmrepro", *args]
    real = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path, **kwargs)
    with real:  # killed if the forked one or its own wait fails, as subprocess.run kills on its timeout
        try:
            forked = forked_cli.run(command, capture_output=True, text=True, timeout=300, cwd=tmp_path, **kwargs)
            out, err = real.communicate(timeout=300)
        except BaseException:
            real.kill()
            raise
    return subprocess.CompletedProcess(command, real.returncode, out, err), forked


@pytest.mark.parametrize("args", [
    ["dataset.n_train=abc"],  # a bad value: svmrepro's one line, exit code 2
    ["algorithm=cros_training"],  # a misspelled option, named before Hydra composes
    ["seed=abc"],  # Hydra's own error
    ["--help"],  # Hydra's help page, svmrepro's text
], ids=["bad-value", "misspelled", "hydra-error", "help"])
def test_a_forked_command_prints_and_exits_as_the_real_one(args, tmp_path):
    real, forked = _both([*args, f"tracking.uri=sqlite:///{tmp_path / 'mlflow.db'}"], tmp_path)
    assert forked.returncode == real.returncode
    assert forked.stdout == real.stdout
    assert forked.stderr == real.stderr
    assert not (tmp_path / "mlflow.db").exists()


def test_a_forked_run_is_the_real_run_s_identity_and_sees_its_folder_and_environment(tmp_path):
    """The same code and config give the same run key: the real command, second, skips the forked one's run.
    The child's folder, environment and sys.path are the caller's."""
    store = f"sqlite:///{tmp_path / 'mlflow.db'}"
    forked = forked_cli.run([sys.executable, "-m", "svmrepro", *TINY, f"tracking.uri={store}", "hydra.run.dir=out"],
                            capture_output=True, text=True, timeout=300, cwd=tmp_path,
                            env={**os.environ, "SVMREPRO_TEST_MARK": "1"})
    assert forked.returncode == 0, forked.stderr[-3000:]
    assert (tmp_path / "out").is_dir()  # hydra.run.dir, relative: the caller's folder
    real = subprocess.run([sys.executable, "-m", "svmrepro", *TINY, f"tracking.uri={store}", "hydra.run.dir=out"],
                          capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert real.returncode == 0 and "skip: run" in real.stdout + real.stderr, real.stderr[-3000:]
    probe = forked_cli.start([sys.executable, "-m", "svmrepro", "--info", "config"], cwd=tmp_path,
                             env={**os.environ, "SVMREPRO_TEST_MARK": "2"}, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
    assert isinstance(probe, forked_cli.Forked) and probe.pid != os.getpid()
    out, err = probe.communicate(timeout=120)
    assert probe.returncode == 0, err


def test_sigterm_ends_a_forked_run_with_the_real_run_s_line_and_exit_code(tmp_path):
    """A run whose fit sleeps, stopped by SIGTERM mid-fit, each way (the two at once, each in its own store):
    exit code 143 and the same stop line; ``PYTHONPATH`` (tests/, where the estimator is) is applied in the fork
    as the interpreter applies it."""
    (tmp_path / "conf" / "algorithm").mkdir(parents=True)
    (tmp_path / "conf" / "algorithm" / "faulty.yaml").write_text("_target_: test_faults.FaultyClassifier\n")
    env = _env(**{SLEEP_ENV: "30"})
    processes = {}
    for way, start in (("real", subprocess.Popen), ("forked", forked_cli.start)):
        args = [f"hydra.searchpath=[file://{tmp_path / 'conf'}]", "algorithm=faulty", "dataset.n_train=40",
                "dataset.n_test=40", f"tracking.uri=sqlite:///{tmp_path / way / 'mlflow.db'}",
                f"hydra.run.dir={tmp_path / way / 'run'}"]
        command = [sys.executable, "-m", "svmrepro", *args]
        processes[way] = start(command, cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True)
    deadline = time.monotonic() + 120
    for way, process in processes.items():
        while not _status_counts(tmp_path / way / "mlflow.db")["RUNNING"]:
            assert process.poll() is None, process.communicate()
            assert time.monotonic() < deadline, f"the {way} run did not start in time"
            time.sleep(0.1)
        time.sleep(1)  # the run RUNNING, its 40 rows read: inside the fit's 30 s sleep
        process.send_signal(signal.SIGTERM)
    ends = []
    for process in processes.values():
        out, err = process.communicate(timeout=120)
        ends.append((process.returncode, err.strip().splitlines()[-1:]))
    assert ends[0] == ends[1] and ends[0][0] == 128 + signal.SIGTERM, ends


def test_an_environment_read_at_import_gets_the_real_process(tmp_path):
    """A thread count the BLAS reads when it loads, or a sitecustomize on PYTHONPATH, cannot be given to a
    fork: the command is then started as a real process."""
    hide = tmp_path / "hide"
    hide.mkdir()
    (hide / "sitecustomize.py").write_text("")
    for env in ({**os.environ, "OMP_NUM_THREADS": "7"}, {**os.environ, "PYTHONPATH": str(hide)}):
        assert not forked_cli.forkable(env, tmp_path)
        process = forked_cli.start([sys.executable, "-m", "svmrepro", "--help"], env=env, cwd=tmp_path,
                                   stdout=subprocess.DEVNULL)
        assert isinstance(process, subprocess.Popen) and process.wait(timeout=120) == 0
    assert forked_cli.forkable({**os.environ, "PYTHONPATH": str(Path(__file__).parent)}, tmp_path)


def test_a_server_started_before_this_process_s_environment_changed_is_replaced(monkeypatch, tmp_path):
    """``ray.init`` sets OMP_NUM_THREADS in the test process: the commands started after it, which inherit it,
    are forks of a server started with it, not real processes from then on."""
    forked_cli.forkable(None)
    before = forked_cli._server["process"]
    monkeypatch.setenv("OMP_NUM_THREADS", "1" if os.environ.get("OMP_NUM_THREADS") != "1" else "2")
    assert forked_cli.forkable(None)
    assert forked_cli._server["process"] is not before and before.poll() is not None
    done = forked_cli.run([sys.executable, "-c", "pass"])  # not an svmrepro module: the real process
    assert done.returncode == 0
    printed = forked_cli.run([sys.executable, "-m", "svmrepro", "--help"], capture_output=True, text=True, cwd=tmp_path)
    assert printed.returncode == 0 and "experiment=<paper>/<id>" in printed.stdout


def test_a_server_started_while_a_test_s_pythonpath_holds_a_sitecustomize_does_not_run_it(monkeypatch, tmp_path):
    """A test's PYTHONPATH (tests/test_server_sweeps.py puts a sitecustomize there that breaks MLflow) never
    reaches the server, whose imports every later fork shares; its own command is the real process."""
    if forked_cli._server.get("owner") == os.getpid():  # a server of this process: a new one starts below
        forked_cli._server["process"].stdin.close()
        forked_cli._server["process"].wait()
    injected = tmp_path / "injected"
    injected.mkdir()
    marker = tmp_path / "sitecustomize_ran"
    (injected / "sitecustomize.py").write_text(f"open({str(marker)!r}, 'a').write('ran')\n")
    monkeypatch.setenv("PYTHONPATH", str(injected))
    assert not forked_cli.forkable(None, tmp_path)  # this test's own commands: real processes
    assert forked_cli._server["process"].poll() is None and not marker.exists()
    monkeypatch.delenv("PYTHONPATH")
    done = forked_cli.run([sys.executable, "-m", "svmrepro", "--help"], capture_output=True, text=True, cwd=tmp_path)
    assert done.returncode == 0 and not marker.exists()


def _a_zombie(pid: int) -> bool:
    """Whether ``pid`` names a process that ended and was not reaped (False once no process has it)."""
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


@pytest.mark.parametrize("start", [subprocess.Popen, forked_cli.start], ids=["real", "forked"])
def test_an_ended_command_s_pid_names_its_zombie_until_it_is_polled(start, tmp_path):
    """A test may look at a command's process (psutil) while its poll() says it runs: the pid of a command that has
    just ended must still name it, a zombie, until poll() has seen the end, as a Popen's child is until reaped."""
    process = start([sys.executable, "-m", "svmrepro", "--help"], stdout=subprocess.DEVNULL, cwd=tmp_path)
    deadline = time.monotonic() + 120
    while psutil.Process(process.pid).status() != psutil.STATUS_ZOMBIE:  # NoSuchProcess: reaped unpolled
        assert time.monotonic() < deadline, "the command did not end"
        time.sleep(0.05)
    time.sleep(0.5)  # a waiter that reaps at the end would have by now
    assert _a_zombie(process.pid)
    assert process.poll() == 0
    deadline = time.monotonic() + 10
    while _a_zombie(process.pid):
        assert time.monotonic() < deadline, "polled, the pid still names a zombie"
        time.sleep(0.05)
