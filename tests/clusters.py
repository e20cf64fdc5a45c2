"""Clusters started as a user starts them: a ``dask scheduler`` and ``dask worker`` processes, or a
``ray start --head``, on loopback.

Tests of the documented cluster paths (README, "Scaling out") use these rather than an in-process
``LocalCluster``: the scheduler and each worker are separate processes, so a test can kill a worker
mid-fit and the client sees what it sees on a real cluster. Workers run without a nanny, so a killed
worker stays dead (a nanny would restart it).
"""

from __future__ import annotations

import json
import os
import secrets
import socket
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import psutil
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


#: On Linux ray replaces a loopback ``--node-ip-address`` (and the host of a loopback address given to
#: ``ray.init``) with the machine's routable address, and its servers bind to that, or to every
#: interface; with this variable set (ray_constants.ENABLE_RAY_CLUSTER) it keeps 127.0.0.1. The head
#: and every client (``ray.init``, ``svmrepro-run``) need it: a client without it looks for the
#: head's raylet at the routable address and waits.
RAY_LOOPBACK_ENV = {"RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0"}


def ray_token_env() -> dict:
    """Token authentication with a fresh token, for a head and its clients: ray 2.60 switches it on
    by itself when ~/.ray/auth_token exists (which any local ``ray.init()`` writes), and a client of
    such a head fails with "InvalidAuthToken"; a token of its own also leaves ~/.ray alone."""
    return {"RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": secrets.token_hex(32)}


def ray_launcher_path(target: Path) -> str:
    """Where hydra-ray-launcher is found: "" when installed, else ``target``, where it is installed
    without its dependencies (pyproject.toml's ray extra says why it is not in the test extra)."""
    import importlib.util
    from importlib.metadata import requires

    from packaging.requirements import Requirement

    if importlib.util.find_spec("hydra_plugins") and importlib.util.find_spec("hydra_plugins.hydra_ray_launcher"):
        return ""
    (wanted,) = [Requirement(r) for r in requires("svmrepro") if r.startswith("hydra-ray-launcher")]
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--target", str(target),
                    f"{wanted.name}{wanted.specifier}"], check=True)
    return str(target)


@dataclass
class RayHead:
    """A running ``ray start --head``; ``address`` is what ``parallel.address`` and
    ``hydra.launcher.ray.init.address`` take, ``env`` the environment its clients run in."""

    address: str
    env: dict
    process: subprocess.Popen


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _wait_for_line(path: Path, line: str, process: subprocess.Popen, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"ray start exited with {process.returncode}: {path.read_text()[-2000:]}")
        if line in path.read_text():
            return
        time.sleep(0.2)
    raise TimeoutError(f"no {line!r} in {path} after {timeout} s")


def _stop_tree(process: subprocess.Popen, timeout: float) -> None:
    """SIGTERM ``ray start --block`` (it stops the processes it started), then SIGKILL whatever of its
    process tree (GCS, raylet, agents, workers) is still alive; by pid, never ``ray stop``, which
    stops every ray of the machine."""
    try:
        tree = [psutil.Process(process.pid), *psutil.Process(process.pid).children(recursive=True)]
    except psutil.NoSuchProcess:
        tree = []
    process.terminate()
    _, alive = psutil.wait_procs(tree, timeout=timeout)
    for survivor in alive:
        survivor.kill()
    _, alive = psutil.wait_procs(alive, timeout=timeout)
    process.wait(timeout=timeout)
    if alive:
        raise RuntimeError(f"ray processes survived SIGKILL: {[p.pid for p in alive]}")


@contextmanager
def ray_head(env: dict | None = None, num_cpus: int = 2, object_store_mib: int = 100, timeout: float = 180.0):
    """``ray start --head --block`` on 127.0.0.1 and free ports, ``num_cpus`` workers, no dashboard.

    ``env`` (default: this process's) is the head's environment, so its workers import what the
    clients import (``PYTHONPATH``); the head's ``env`` adds the loopback and token settings its
    clients need. Skips the test when ray is not installed. Every process of the
    head is stopped on exit, by pid.
    """
    pytest.importorskip("ray", reason='pip install -e ".[ray]"')
    env = {**(os.environ if env is None else env), **RAY_LOOPBACK_ENV, **ray_token_env()}
    port = _free_port()
    # ray's temporary directory holds its unix sockets (session_<date>_<pid>/sockets/plasma_store), whose
    # paths may not exceed 107 bytes: a short directory of its own rather than one under pytest's tmp_path
    with tempfile.TemporaryDirectory(prefix="svmrepro-ray-", ignore_cleanup_errors=True) as temp_dir:
        log = Path(temp_dir) / "head.log"
        with log.open("w") as out:
            head = subprocess.Popen(
                [sys.executable, "-m", "ray.scripts.scripts", "start", "--head", "--block",
                 "--node-ip-address", "127.0.0.1", "--port", str(port), "--num-cpus", str(num_cpus),
                 "--object-store-memory", str(object_store_mib * 2**20), "--include-dashboard", "false",
                 # both default to a fixed port (10001, 52365), taken when two heads run at once
                 "--ray-client-server-port", str(_free_port()), "--dashboard-agent-listen-port", str(_free_port()),
                 "--temp-dir", temp_dir, "--disable-usage-stats"],
                stdout=out, stderr=subprocess.STDOUT, env=env,
            )
        try:
            _wait_for_line(log, "Ray runtime started", head, timeout)
            yield RayHead(address=f"127.0.0.1:{port}", env=env, process=head)
        finally:
            _stop_tree(head, timeout=60)
