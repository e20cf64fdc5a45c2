"""Whether the process that runs a run has ended, through psutil (svmrepro.store.processes): a
live process has not, a dead or zombie one has, and a reused pid (another start time) has."""

import os
import socket
import subprocess
import sys
import time

import psutil

from svmrepro.store import HOST_TAG, PID_TAG, PROCESS_START_TAG, process_gone, process_tags


def test_this_process_is_alive():
    tags = process_tags()
    assert tags[HOST_TAG] == socket.gethostname() and tags[PID_TAG] == str(os.getpid())
    assert abs(float(tags[PROCESS_START_TAG]) - psutil.Process().create_time()) < 0.1
    assert not process_gone(tags)


def _tags_of(pid: int, start: str) -> dict[str, str]:
    return {HOST_TAG: socket.gethostname(), PID_TAG: str(pid), PROCESS_START_TAG: start}


def test_an_ended_process_and_a_zombie_are_gone():
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    start = f"{psutil.Process(child.pid).create_time():.2f}"
    deadline = time.monotonic() + 30
    while psutil.Process(child.pid).status() != psutil.STATUS_ZOMBIE and time.monotonic() < deadline:
        time.sleep(0.01)
    assert process_gone(_tags_of(child.pid, start))  # ended, not yet reaped by its parent
    child.wait()
    assert process_gone(_tags_of(child.pid, start))  # reaped: no such process


def test_a_reused_pid_is_gone_and_an_unknown_start_is_not_judged():
    me = os.getpid()
    assert process_gone(_tags_of(me, f"{psutil.Process().create_time() - 3600:.2f}"))
    assert not process_gone(_tags_of(me, "123456"))  # clock ticks after boot, tagged before psutil
    assert not process_gone(_tags_of(me, ""))


def test_a_process_of_another_host_is_never_judged():
    assert not process_gone({HOST_TAG: "elsewhere", PID_TAG: "1", PROCESS_START_TAG: "1.00"})
