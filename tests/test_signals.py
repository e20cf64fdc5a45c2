"""SIGTERM and Ctrl-C stop a sweep cleanly: exit 143 / 130, one line, no traceback, no process
left, the runs in progress KILLED (not RUNNING, not FAILED), one log line per run.

Real ``svmrepro-run -m`` processes over test_faults' FaultyClassifier, whose fit sleeps: 4 jobs,
joblib launcher with 2 workers (and one in-process sweep, Hydra's basic launcher). The signal is
sent once 2 runs are RUNNING; a sweep started in a session of its own stands for a terminal, so
Ctrl-C is SIGINT to its whole process group. A SIGTERM after the sweep ended, while the process
ends, is a stop as well (143).
"""

import ast
import contextlib
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
from mlflow.tracking import MlflowClient
from stores import copy_store
from test_faults import SLEEP_ENV, _env, _runs, _status_counts, _sweep_command
from test_reproduce_sweeps import EXPERIMENT

from svmrepro import app, compose, signals, sweeps
from svmrepro.signals import alive
from svmrepro.store import KILLED_REASON_TAG, retry_locked

#: a fit outlasts the test: a run ends only through the signal
FIT_S = "60"


@pytest.fixture
def root(tmp_path, empty_store):
    copy_store(empty_store, tmp_path / "mlflow.db")
    (tmp_path / "conf" / "algorithm").mkdir(parents=True)
    (tmp_path / "conf" / "algorithm" / "faulty.yaml").write_text("_target_: test_faults.FaultyClassifier\n")
    return tmp_path


def _stop(root: Path, sig: int, to_group: bool, running: int, launcher: str = "parallel"):
    """Start the sweep, send ``sig`` once ``running`` runs are RUNNING; (result, processes it had)."""
    command = [arg.replace("hydra/launcher=parallel", f"hydra/launcher={launcher}")
               for arg in _sweep_command(root, "stopped") if launcher == "parallel" or "hydra.launcher." not in arg]
    sweep = forked_cli.start(command, env=_env(**{SLEEP_ENV: FIT_S}), cwd=root,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        deadline = time.monotonic() + 120
        while _status_counts(root / "mlflow.db")["RUNNING"] < running:
            assert sweep.poll() is None, sweep.communicate()
            assert time.monotonic() < deadline, "no run started in time"
            time.sleep(0.1)
        processes = psutil.Process(sweep.pid).children(recursive=True)
        sent = time.monotonic()
        (os.killpg if to_group else os.kill)(sweep.pid, sig)
        stdout, stderr = sweep.communicate(timeout=60)
        stopped_in = time.monotonic() - sent
    finally:
        if sweep.poll() is None:
            os.killpg(sweep.pid, signal.SIGKILL)
            sweep.wait()
    deadline = time.monotonic() + 10  # joblib's resource trackers end once their parent has
    while any(map(alive, processes)) and time.monotonic() < deadline:
        time.sleep(0.1)
    return sweep.returncode, stdout, stderr, stopped_in, [process for process in processes if alive(process)]


@pytest.mark.parametrize(
    ("sig", "to_group", "code"),
    [
        (signal.SIGTERM, False, 143),  # kill <pid>
        (signal.SIGINT, True, 130),  # Ctrl-C in the terminal
        (signal.SIGINT, False, 130),  # kill -INT <pid>: only the launching process gets it
    ],
    ids=["sigterm", "ctrl-c", "sigint-to-the-launcher"],
)
def test_a_signal_stops_a_parallel_sweep_cleanly(root, sig, to_group, code):
    returncode, stdout, stderr, stopped_in, left = _stop(root, sig, to_group, 2)
    name = signal.Signals(sig).name
    assert returncode == code, stderr[-3000:]
    assert "Traceback" not in stderr and "Traceback" not in stdout, stderr[-3000:]
    assert [line for line in stderr.splitlines() if line.startswith("svmrepro-run:")] == [
        f"svmrepro-run: stopped by {name}: the runs in progress were marked KILLED, the finished ones are kept; "
        "the same command runs the rest"
    ]
    assert stopped_in < 15
    assert left == [], "processes of the sweep still running after it ended"
    runs = _runs(root)
    assert Counter(run.status for run in runs) == {"KILLED": 2}
    for run in runs:
        # marked by its own process as the signal went through it, or, when that process was killed
        # first (a loaded machine), by the sweep's process as the sweep ended
        reason = run.tags[KILLED_REASON_TAG]
        assert "received by process" in reason or "marked by the sweep's process" in reason, reason
        assert stdout.count(f"run {run.id} KILLED: ") == 1


def test_sigterm_stops_an_in_process_sweep(root):
    """Hydra's basic launcher: the job runs in the launching process itself."""
    returncode, stdout, stderr, _, left = _stop(root, signal.SIGTERM, False, 1, launcher="basic")
    assert returncode == 143, stderr[-3000:]
    assert "Traceback" not in stderr
    assert left == []
    assert Counter(run.status for run in _runs(root)) == {"KILLED": 1}


@pytest.mark.parametrize("delay_s", [0.0, 0.3])
def test_sigterm_just_after_the_sweep_ended_exits_143_with_one_line(root, delay_s):
    """The sweep has ended and the process is ending (Python's shutdown waits for joblib's workers):
    a SIGTERM then is a stop like any other, not an exception the shutdown ignores (which exited 0).
    At once (issue 46, item 13), while the sweep run is being closed, the stop waits for it: the sweep run
    FINISHED, not left RUNNING for the next sweep to mark KILLED."""
    sweep = forked_cli.start(_sweep_command(root, "ended"), env=_env(), cwd=root, text=True,
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        for line in sweep.stdout:
            if "sweep ended" in line:
                break
        time.sleep(delay_s)
        assert sweep.poll() is None, "the process ended before the signal: nothing tested"
        sweep.send_signal(signal.SIGTERM)
        output = sweep.communicate(timeout=60)[0]
    finally:
        if sweep.poll() is None:
            sweep.kill()
            sweep.wait()
    assert sweep.returncode == 143, output[-3000:]
    assert [line for line in output.splitlines() if line.startswith("svmrepro-run:")] == [
        "svmrepro-run: stopped by SIGTERM: the runs in progress were marked KILLED, the finished ones are kept; "
        "the same command runs the rest"
    ]
    assert "Traceback" not in output and "Exception ignored" not in output
    client = MlflowClient(f"sqlite:///{root / 'mlflow.db'}")
    (sweep_run,) = client.search_runs([client.get_experiment_by_name("adhoc").experiment_id],
                                      "tags.`svmrepro.kind` = 'sweep'")
    assert sweep_run.info.status == "FINISHED"


@pytest.mark.parametrize(("module", "program", "args"), [
    ("svmrepro.reproduce", "svmrepro-reproduce", ["--check"]),
    ("svmrepro.data.cli", "svmrepro-data", ["list"]),
])
def test_ctrl_c_during_the_imports_is_one_line(module, program, args, tmp_path):
    """0.3 s in, each entry point is still importing (hydra, mlflow, scikit-learn: seconds), before
    its main installs anything: one line, and the process ends as Ctrl-C ends it (130 in a shell)."""
    started = subprocess.Popen([sys.executable, "-m", module, *args], cwd=tmp_path, text=True,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    time.sleep(0.3)
    started.send_signal(signal.SIGINT)
    _, stderr = started.communicate(timeout=60)
    assert started.returncode == -signal.SIGINT
    assert stderr.splitlines() == [f"{program}: stopped by SIGINT"]


SWALLOWING = """
import os, signal, sys, time
from svmrepro.stop_line import imported, one_line_stop
one_line_stop("prog", sys.argv[1])
if sys.argv[2] == "imported":
    imported()
try:
    os.kill(os.getpid(), signal.SIGINT)
    time.sleep(2)
except BaseException:  # what an import may do with it: a bare except, a __del__ (\"Exception ignored\")
    pass
print("ran on")
"""


@pytest.mark.parametrize(("module", "phase", "stopped"), [
    ("__main__", "importing", True), ("svmrepro.reproduce", "importing", False), ("__main__", "imported", False)])
def test_ctrl_c_during_an_entry_point_s_imports_ends_it_even_where_the_interrupt_is_swallowed(module, phase,
                                                                                             stopped):
    """``svmrepro-reproduce --check`` stopped 0.3 s in went on and exited 0 (a full suite, under load): raised
    where it landed, the KeyboardInterrupt was swallowed. Run as the entry point, until its main has started, a
    Ctrl-C ends the process at once with its line; imported as a library, or once main has called imported(),
    Python's KeyboardInterrupt is left as it is."""
    done = subprocess.run([sys.executable, "-c", SWALLOWING, module, phase], capture_output=True, text=True,
                          timeout=60)
    if stopped:
        assert (done.returncode, done.stdout, done.stderr) == (-signal.SIGINT, "", "prog: stopped by SIGINT\n")
    else:
        assert (done.returncode, done.stdout) == (0, "ran on\n"), done.stderr


LEFT_AT_EXIT = """
import atexit, gc, os, sys
from svmrepro.stop_line import one_line_stop
one_line_stop("prog", sys.argv[1])

class Cycle:
    def __del__(self):
        os.write(1, b"collected\\n")

atexit.register(lambda: os.write(1, b"handler ran\\n"))
gc.disable()  # only Python's shutdown collects
cycle = Cycle()
cycle.itself = cycle
del cycle
"""


@pytest.mark.parametrize(("module", "printed"), [("__main__", "handler ran\n"),
                                                 ("svmrepro.reproduce", "handler ran\ncollected\n")])
def test_an_entry_point_s_process_ends_without_collecting_its_heap(module, printed):
    """Python's shutdown collected the whole heap of ``svmrepro-reproduce`` (seconds, after its last line). Run as
    the entry point, the process ends without that collection, after every exit handler registered after its
    start has run: a cycle left at exit is not collected. Imported as a library (a test's process), Python's
    shutdown is left as it is."""
    done = subprocess.run([sys.executable, "-c", LEFT_AT_EXIT, module], capture_output=True, text=True, timeout=60)
    assert (done.returncode, done.stdout, done.stderr) == (0, printed, "")


PYTHON_M_SVMREPRO = """
import atexit, runpy, signal, sys
import svmrepro.stop_line as stop_line
seen = []
original = stop_line.one_line_stop

def recording(program, module):
    original(program, module)
    seen.append((module, signal.getsignal(signal.SIGINT).__name__))

stop_line.one_line_stop = recording
atexit.register(lambda: print(seen, file=sys.stderr))
sys.argv = ["svmrepro", "--help"]
runpy.run_module("svmrepro", run_name="__main__", alter_sys=True)
"""


def test_python_m_svmrepro_has_the_console_script_s_stop_during_its_imports():
    """``python -m svmrepro`` imports svmrepro.app under its own name: app's one_line_stop saw a library, not the
    entry point, and left Ctrl-C as Python's KeyboardInterrupt during the slow imports (swallowed where it lands,
    the command ran on). Its __main__ puts the stop in place first, as ``svmrepro-run`` has it."""
    done = subprocess.run([sys.executable, "-c", PYTHON_M_SVMREPRO], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    seen = ast.literal_eval(done.stderr.strip().splitlines()[-1])  # the list the script prints as it ends
    assert seen == [("__main__", "_stop_now"), ("svmrepro.app", "_stop_now")]


@pytest.mark.parametrize("delay", [0.1, 0.3])
def test_ctrl_c_at_the_start_of_svmrepro_run_is_one_line(delay, tmp_path):
    """svmrepro-run imports scikit-learn and MLflow only when a run runs (shell completion answers at
    once), so its imports are over in a fraction of a second: whether Ctrl-C comes during them or
    after its handlers are in place, it is one line and the exit of a Ctrl-C."""
    started = subprocess.Popen([sys.executable, "-m", "svmrepro", "dataset.n_train=40"], cwd=tmp_path, text=True,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    time.sleep(delay)
    started.send_signal(signal.SIGINT)
    _, stderr = started.communicate(timeout=60)
    assert started.returncode in (-signal.SIGINT, 130), stderr[-2000:]
    [line] = stderr.splitlines()
    assert line.startswith("svmrepro-run: stopped by SIGINT")


def _interrupting(call):
    """``call``, after a SIGINT to this process that its handler turns into an exception before ``call`` runs."""
    def interrupted(*args, **kwargs):
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(1)  # the handler raises here
        return call(*args, **kwargs)

    return interrupted


def _exit_code(main, *args) -> int | str | None:
    """The exit code ``main(*args)`` ends with; an Interrupted it leaves uncaught is named instead of raised (a
    KeyboardInterrupt: left to pytest, it would end the whole session)."""
    try:
        main(*args)
    except SystemExit as ended:
        return ended.code
    except signals.Interrupted:
        return "the Interrupted main left uncaught"
    return None


@pytest.mark.parametrize("check", ["config_dir_option", "check_config_folders", "unknown_options", "run_hydra"])
def test_ctrl_c_in_svmrepro_run_s_checks_is_its_line_and_exit_130(check, handlers, monkeypatch, capsys):
    """A Ctrl-C after main's handlers were in place but before Hydra ran left its checks as an uncaught
    Interrupted: Python printed the line through the excepthook, then exited 1, as for an error (CI, stop 66,
    the 0.3 s case above). Wherever in main it lands, it is the line and 130."""
    monkeypatch.setattr(app, check, _interrupting(getattr(app, check)))
    monkeypatch.setattr(sys, "argv", ["svmrepro-run", "dataset.n_train=40"])
    assert _exit_code(app.main) == 128 + signal.SIGINT
    assert capsys.readouterr().err.startswith("svmrepro-run: stopped by SIGINT: the runs in progress")


def test_ctrl_c_as_the_sweeps_process_starts_is_its_line_and_exit_130(handlers, monkeypatch, capsys):
    """The same for svmrepro-reproduce's sweeps process: a stop between its handlers and its sweeps."""
    monkeypatch.setattr(signals, "end_with", _interrupting(signals.end_with))
    read, write = os.pipe()
    os.close(read)
    try:
        code = _exit_code(sweeps.main, ["--status-fd", str(write), "[]"])
    finally:
        with contextlib.suppress(OSError):  # never reached the sweeps, which would own and close it
            os.close(write)
    assert code == 128 + signal.SIGINT
    assert capsys.readouterr().err.startswith("svmrepro-run: stopped by SIGINT: the runs in progress")


STOPPED_AS_A_JOB_STARTS = """
import os, signal, time
from svmrepro import signals

def parent_watched():
    os.kill(os.getpid(), signal.SIGTERM)
    time.sleep(2)  # the handler raises here

signals.end_with_parent = parent_watched
with signals.stopping_job(in_worker=True):
    print("the job ran")
"""


def test_a_stop_as_a_worker_s_job_starts_ends_the_worker_with_143():
    """A SIGTERM between stopping_job's handlers and its job left an Interrupted that no one caught: a traceback
    and exit 1, where a worker stopped in its job ends with 128 + the signal and nothing printed."""
    done = subprocess.run([sys.executable, "-c", STOPPED_AS_A_JOB_STARTS], capture_output=True, text=True, timeout=60)
    assert (done.returncode, done.stdout, done.stderr) == (128 + signal.SIGTERM, "", "")


@pytest.fixture
def handlers(monkeypatch):
    """The signal handlers as they were after the test; no child of the test process stopped."""
    saved = {sig: signal.getsignal(sig) for sig in signals.SIGNALS}
    monkeypatch.setattr(signals, "stop_children", lambda: None)
    monkeypatch.setattr(signals, "_raised", None)  # the test process was never stopped
    yield
    for sig, handler in saved.items():
        signal.signal(sig, handler)


@pytest.mark.parametrize("outcome", ["returns", "raises"])
def test_a_signal_during_a_store_call_stops_the_process_after_the_call(handlers, outcome):
    """Raised inside SQLAlchemy's fetch, the stop made it drop its connection and log "Error closing
    cursor" with a traceback (a Ctrl-C that hit a worker logging its run): the call ends first."""
    signals.install()
    ended = []

    def call():
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(0.05)  # Python has run the handler by now
        ended.append(outcome)
        if outcome == "raises":
            raise ValueError("the call's own error")
        return outcome

    with pytest.raises(signals.Interrupted) as stop:
        retry_locked(call)
    assert ended == [outcome]
    assert stop.value.signum == signal.SIGTERM


def test_outside_a_store_call_a_signal_stops_at_once(handlers):
    signals.install()
    with pytest.raises(signals.Interrupted):
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(1)
        pytest.fail("the stop waited")



def test_a_signal_while_a_config_is_composed_stops_once_it_is_composed(handlers, monkeypatch):
    """Raised inside OmegaConf, the stop left a node half-built and OmegaConf's AttributeError took its place:
    Hydra printed it with its traceback, exit 1, a Ctrl-C passing for a mistake in the configs (CI, stop 56)."""
    signals.install()
    applied = []

    def apply(cfg, override):
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(0.05)  # Python has run the handler by now
        real_apply(cfg, override)
        applied.append(override.key_or_group)

    real_apply = compose.apply_override
    monkeypatch.setattr(compose, "apply_override", apply)
    with pytest.raises(signals.Interrupted) as stop:
        compose.compose_config(["seed=3"])
    assert applied == ["seed"]
    assert stop.value.signum == signal.SIGINT


@pytest.mark.parametrize("started", [True, False], ids=["job-started", "hydra-failed"])
def test_a_signal_while_hydra_starts_waits_for_the_job_and_is_the_stop_if_hydra_fails(handlers, monkeypatch,
                                                                                       started):
    """svmrepro-run holds a stop from Hydra's start until the job (or the sweeper) starts, which stops there;
    Hydra ending first (it prints a composition error and exits 1) is the stop all the same, not exit 1."""
    signals.install()

    def hydra():
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(0.05)
        if started:
            signals.release(signals.START)  # the job's first line
            pytest.fail("the stop waited past the job's start")
        raise SystemExit(1)

    monkeypatch.setattr(app, "job", hydra)
    monkeypatch.setattr(sys, "argv", ["svmrepro-run"])  # run_hydra sets it for Hydra
    with pytest.raises(signals.Interrupted) as stop:
        app.run_hydra(["dataset.n_train=40"])
    assert stop.value.exit_code == 130


def test_an_error_a_library_made_of_the_stop_is_the_stop(handlers):
    """A Ctrl-C landing in a C extension's import (scikit-learn's, as the job imports the runner) came out as
    "ImportError: initialization failed": svmrepro-run said "the run failed", exit 1. Once the process was
    stopped, an error is the stop's; before, it is the error it is."""
    signals.install()
    with pytest.raises(ImportError), signals.stopping_job(in_worker=False):
        raise ImportError("initialization failed")
    with pytest.raises(signals.Interrupted) as stop, signals.stopping_job(in_worker=False):
        try:
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(1)
        except signals.Interrupted:
            raise ImportError("initialization failed") from None
    assert stop.value.signum == signal.SIGINT
    assert isinstance(stop.value.__cause__, ImportError)

def test_the_start_and_a_sweep_s_end_hold_apart(handlers):
    signals.install()
    signals.hold(signals.START)
    signals.hold(signals.SWEEP_END)
    os.kill(os.getpid(), signal.SIGTERM)
    time.sleep(0.05)
    assert signals.released(signals.START) is None  # the sweep's end still holds it
    assert signals.released(signals.START) is None  # released once
    assert signals.released(signals.SWEEP_END).signum == signal.SIGTERM

#: a study of one experiment (test_reproduce_sweeps') whose two fits outlast the test (svmrepro-reproduce runs its
#: sweeps in a child process)
SLOW_EXPERIMENT = EXPERIMENT.replace("svc_linear", "faulty").replace("{title}", "slow")


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL], ids=["sigterm", "sigkill"])
def test_a_stop_of_svmrepro_reproduce_alone_stops_its_sweeps(root, sig):
    """``kill <pid>`` of svmrepro-reproduce (not its process group, as a scheduler or a user may): its sweeps'
    process stops too, its run in progress KILLED; SIGTERM is one line and exit 143. Before, the sweeps went on
    alone, starting job after job, with no process left to build their pages."""
    (root / "conf" / "experiment" / "mine").mkdir(parents=True)
    (root / "conf" / "experiment" / "mine" / "slow.yaml").write_text(SLOW_EXPERIMENT)
    command = [sys.executable, "-m", "svmrepro.reproduce", "--config-dir", str(root / "conf"), "--experiment",
               "mine/slow", "--tracking-uri", f"sqlite:///{root / 'mlflow.db'}", "--results-dir", str(root / "results")]
    main = forked_cli.start(command, env=_env(**{SLEEP_ENV: FIT_S}), cwd=root, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        deadline = time.monotonic() + 120
        while _status_counts(root / "mlflow.db")["RUNNING"] < 1:
            assert main.poll() is None, main.communicate()
            assert time.monotonic() < deadline, "no run started in time"
            time.sleep(0.1)
        processes = psutil.Process(main.pid).children(recursive=True)
        os.kill(main.pid, sig)
        _, stderr = main.communicate(timeout=60)
        deadline = time.monotonic() + 30  # after a SIGKILL, the sweeps' process notices within a second
        while any(map(alive, processes)) and time.monotonic() < deadline:
            time.sleep(0.1)
        left = [process for process in processes if alive(process)]
    finally:
        if main.poll() is None:
            main.kill()
            main.wait()
        with contextlib.suppress(ProcessLookupError):
            os.killpg(main.pid, signal.SIGKILL)
    assert left == [], "the sweeps' process went on after svmrepro-reproduce ended"
    client = MlflowClient(f"sqlite:///{root / 'mlflow.db'}")
    runs = [run for run in client.search_runs([client.get_experiment_by_name("mine/slow").experiment_id])
            if run.data.tags.get("svmrepro.kind") != "sweep"]  # not the sweep's parent run
    assert runs and {run.info.status for run in runs} == {"KILLED"}, [run.info.status for run in runs]
    if sig == signal.SIGTERM:
        assert main.returncode == 143, stderr[-3000:]
        assert "Traceback" not in stderr, stderr[-3000:]
        assert [line for line in stderr.splitlines() if line.startswith("svmrepro-reproduce:")] == [
            "svmrepro-reproduce: stopped by SIGTERM"], stderr[-3000:]
