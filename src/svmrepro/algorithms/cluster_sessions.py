"""Sessions with a dask or ray cluster for :func:`svmrepro.algorithms.parallel.backend_context`.

Connecting is where a cluster fails first: a scheduler that does not answer, or one without
workers. Each fails within ``timeout`` seconds as a :class:`~svmrepro.errors.ConfigError` whose
one line names the address (a password in it masked) and what to do, rather than the client
waiting for an outside timeout.
"""

from __future__ import annotations

import logging
import threading
import time
from contextlib import contextmanager

from svmrepro.errors import ConfigError, first_line
from svmrepro.redact import redact


def no_worker_error(address: str | None, timeout: float) -> ConfigError:
    """The one line for a dask scheduler that had no worker for ``timeout`` seconds."""
    where = redact(address) if address else "the default dask client's scheduler"
    return ConfigError(f"parallel.address={where}: no dask worker after {timeout:g} s (parallel.timeout); "
                       f"start workers (dask worker {where}) or point parallel.address at a cluster that has some")


@contextmanager
def dask_client(address: str | None, timeout: float):
    """A dask client for the block: connected to ``address`` once a worker is there, else the
    current default client, else a local cluster."""
    from distributed import Client, LocalCluster, default_client

    if address is not None:
        try:
            client = Client(address, timeout=timeout)
        except OSError as exc:  # dask's connect timeout is an OSError too
            raise ConfigError(
                f"parallel.address={redact(address)}: no dask scheduler answered in {timeout:g} s "
                f"(parallel.timeout): {first_line(exc)}; start one there (dask scheduler) or fix parallel.address"
            ) from None
        with client:
            try:
                client.wait_for_workers(1, timeout=timeout)
            except TimeoutError:
                raise no_worker_error(address, timeout) from None
            with _closed_without_workers(client, timeout) as abandoned:
                try:
                    yield
                except Exception:
                    if abandoned.is_set():
                        raise no_worker_error(address, timeout) from None
                    raise
        return
    try:
        default_client()
    except ValueError:  # no client yet: a cluster of this machine for the block
        # its HTTP server on a free loopback port (dashboard_address=None still binds :8787),
        # and the cluster's INFO lines kept out of the run's log
        with _log_level("distributed", logging.WARNING), LocalCluster(
            threads_per_worker=1, dashboard_address="127.0.0.1:0"
        ) as cluster, Client(cluster):
            yield
        return
    yield  # joblib's dask backend finds the current default client itself


@contextmanager
def _closed_without_workers(client, timeout: float):
    """Close ``client`` once its scheduler has had no worker for ``timeout`` seconds.

    Tasks of a cluster whose last worker is gone wait for a new one, for ever unless the
    scheduler was started with a no-workers timeout: closing the client cancels them, so the fit
    waiting on them ends. Yields the event set when that happened.
    """
    stop, abandoned = threading.Event(), threading.Event()

    def watch():
        alone_since = None
        while not stop.wait(1.0):
            if client.scheduler_info().get("workers"):  # the client's view, refreshed every few seconds
                alone_since = None
            elif alone_since is None:
                alone_since = time.monotonic()
            elif time.monotonic() - alone_since > timeout:
                abandoned.set()
                client.close()
                return

    watcher = threading.Thread(target=watch, name="svmrepro-dask-workers", daemon=True)
    watcher.start()
    try:
        yield abandoned
    finally:
        stop.set()
        watcher.join()


def lost_with_a_worker(error: Exception) -> bool:
    """Whether ``error`` is dask's report of a task or an input that went with a lost worker.

    Every worker holds a copy of a fit's data when it starts
    (:func:`svmrepro.algorithms.parallel.data_on_cluster`), but dask's active memory manager drops
    copies no queued task needs yet, so a worker may die holding the last one: the call's tasks are
    then cancelled ("already forgotten", "lost scattered data"). With every worker gone, the same
    report comes at once, before the scheduler's wait for a worker (:func:`a_worker_within`).
    """
    from distributed import KilledWorker
    from distributed.client import FutureCancelledError

    return isinstance(error, (FutureCancelledError, KilledWorker))


def a_worker_within(timeout: float) -> bool:
    """Whether the default dask client's scheduler has a worker, or gets one within ``timeout`` seconds."""
    from distributed import default_client

    if workers_left() > 0:
        return True
    try:
        default_client().wait_for_workers(1, timeout=timeout)
    except (TimeoutError, ValueError, OSError):  # none came; no client, or one closed
        return False
    return True


def workers_left() -> int:
    """The workers of the default dask client's scheduler (0 without a client, or with a closed one)."""
    from distributed import default_client

    try:
        return len(default_client().scheduler_info().get("workers", {}))
    except (ValueError, OSError):  # no client, or one closed (_closed_without_workers)
        return 0


@contextmanager
def _log_level(name: str, level: int):
    logger = logging.getLogger(name)
    before = logger.level
    logger.setLevel(level)
    try:
        yield
    finally:
        logger.setLevel(before)


@contextmanager
def ray_session(address: str | None):
    """Ray's joblib backend registered, and ray joined at ``address`` (or started) for the block."""
    import ray
    from ray.util.joblib import register_ray

    register_ray()
    started = not ray.is_initialized()
    if started:
        ray.init(address=address)
    try:
        yield
    finally:
        if started:
            ray.shutdown()
