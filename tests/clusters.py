"""Clusters started as a user starts them: a ``dask scheduler`` and ``dask worker`` processes on loopback.

Tests of the documented cluster paths (README, "Scaling out") use these rather than an in-process
``LocalCluster``: the scheduler and each worker are separate processes, so a test can kill a worker
mid-fit and the client sees what it sees on a real cluster. Workers run without a nanny, so a killed
worker stays dead (a nanny would restart it).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import pytest

@dataclass
class DaskProcesses:
    """A running scheduler and its workers; ``address`` is what ``parallel.address`` takes."""

    address: str
    scheduler: subprocess.Popen
    workers: list[subprocess.Popen] = field(default_factory=list)

    def kill_worker(self, index: int = 0) -> None:
        """SIGKILL one worker process, as when its host goes away."""
        self.workers[index].kill()
        self.workers[index].wait(timeout=30)

    def kill_all_workers(self) -> None:
        for index in range(len(self.workers)):
            self.kill_worker(index)


def _scheduler_address(path: Path, process: subprocess.Popen, timeout: float) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"the dask scheduler exited with {process.returncode}")
        try:
            return json.loads(path.read_text())["address"]
        except (FileNotFoundError, json.JSONDecodeError, KeyError):
            time.sleep(0.1)
    raise TimeoutError(f"no dask scheduler address in {path} after {timeout} s")


def _wait_for_workers(address: str, n_workers: int, timeout: float) -> None:
    from distributed import Client

    with Client(address, timeout=timeout) as client:
        client.wait_for_workers(n_workers, timeout=timeout)


@contextmanager
def dask_processes(tmp_path: Path, n_workers: int = 2, nthreads: int = 1, memory_limit: str = "2GiB",
                   timeout: float = 60.0):
    """A ``dask scheduler`` and ``n_workers`` ``dask worker`` processes, all on 127.0.0.1.

    Skips the test when ``distributed`` is not installed. Every process is killed on exit.
    """
    pytest.importorskip("distributed", reason='pip install -e ".[dask]"')
    scheduler_file = tmp_path / "scheduler.json"
    env = {**os.environ, "DASK_DISTRIBUTED__LOGGING__DISTRIBUTED": "error"}
    quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL, "env": env}
    scheduler = subprocess.Popen(
        [sys.executable, "-m", "distributed.cli.dask_scheduler", "--host", "127.0.0.1", "--port", "0",
         "--dashboard-address", "127.0.0.1:0", "--scheduler-file", str(scheduler_file)],
        **quiet,
    )
    cluster = DaskProcesses(address="", scheduler=scheduler)
    try:
        cluster.address = _scheduler_address(scheduler_file, scheduler, timeout)
        for _ in range(n_workers):
            cluster.workers.append(subprocess.Popen(
                [sys.executable, "-m", "distributed.cli.dask_worker", cluster.address, "--no-nanny",
                 "--nthreads", str(nthreads), "--host", "127.0.0.1", "--no-dashboard",
                 "--memory-limit", memory_limit],
                **quiet,
            ))
        _wait_for_workers(cluster.address, n_workers, timeout)
        yield cluster
    finally:
        for process in [*cluster.workers, scheduler]:
            if process.poll() is None:
                process.kill()
            process.wait(timeout=30)
