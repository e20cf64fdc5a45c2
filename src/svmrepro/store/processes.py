"""Which process runs a run, and whether it has ended: a run left RUNNING by a killed process is
found by its tags (:meth:`svmrepro.store.Store.mark_orphans_killed`).

Processes are inspected through psutil (its start time tells a reused pid from the original).
"""

from __future__ import annotations

import os
import socket

import psutil

from svmrepro.store.names import HOST_TAG, PID_TAG, PROCESS_START_TAG

#: seconds two readings of one process's start time may differ by: psutil derives it from the
#: boot time, which the kernel recomputes from the wall clock (NTP moves it slightly)
START_TOLERANCE_S = 1.0


def process_tags() -> dict[str, str]:
    """The host and process running a run, and when that process started (seconds since the epoch)."""
    return {HOST_TAG: socket.gethostname(), PID_TAG: str(os.getpid()),
            PROCESS_START_TAG: f"{psutil.Process().create_time():.2f}"}


def process_gone(tags: dict[str, str]) -> bool:
    """Whether the process named by a run's tags has ended (only decidable on its own host).

    A zombie has ended, and a pid whose process started at another time has been reused.
    """
    if tags.get(HOST_TAG) != socket.gethostname() or not tags.get(PID_TAG, "").isdigit():
        return False
    try:
        process = psutil.Process(int(tags[PID_TAG]))
        if process.status() == psutil.STATUS_ZOMBIE:
            return True
        started = process.create_time()
    except psutil.NoSuchProcess:
        return True
    except psutil.AccessDenied:  # alive, another user's
        return False
    tagged = tags.get(PROCESS_START_TAG, "")
    if "." not in tagged:  # none, or clock ticks after boot (tagged before psutil): not comparable
        return False
    return abs(started - float(tagged)) > START_TOLERANCE_S
