"""MLflow tracking: where the store is, and logging that survives concurrent writers.

The embedded default is a SQLite store at ``<project>/mlflow.db`` with artifacts in
``<project>/mlartifacts``. A SQLite store is made whole or not at all, and checked before MLflow
opens it (:func:`ensure_store`, :mod:`svmrepro.sqlite_store`), so any number of processes may
start at once on a missing store. Several joblib workers may log to one SQLite file: the
launching process creates the experiment first (:class:`PrepareStore`, a Hydra callback), and
every call retries while SQLite answers "database is locked".

A run holds its run key while it runs (:meth:`Store.claim`): identical runs started at once fit
once, the others wait for it and then skip.

A store that cannot be reached fails at once with its URI (:func:`probe`): MLflow itself retries
an unreachable server for minutes. Every run is tagged with the host and process that run it, so
a run left RUNNING by a killed process is marked KILLED when the same computation is started
again (:meth:`Store.mark_orphans_killed`).
"""

from __future__ import annotations

import json
import logging
import os
import random
import socket
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import partial
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import urlparse

from hydra.experimental.callback import Callback
from mlflow.entities import Metric, Param, RunTag
from mlflow.tracking import MlflowClient
from omegaconf import DictConfig

from svmrepro import sqlite_store
from svmrepro.data.files import PROJECT_ROOT
from svmrepro.errors import SvmReproError
from svmrepro.redact import redact

log = logging.getLogger(__name__)
T = TypeVar("T")

#: MLflow's limits for one log_batch call and for a param value
MAX_BATCH_PARAMS = 100
MAX_PARAM_LENGTH = 6000
RUN_KEY_TAG = "run_key"
ADHOC_EXPERIMENT = "adhoc"
#: which process runs a run (the runs table of a report need not keep them: tags.process.*)
HOST_TAG, PID_TAG, PROCESS_START_TAG = "process.host", "process.pid", "process.start"
KILLED_REASON_TAG = "killed_reason"
#: seconds a tracking server has to answer the probe
PROBE_TIMEOUT_S = 5.0
#: default port of each SQLAlchemy dialect MLflow can keep its runs in
DATABASE_PORTS = {"postgresql": 5432, "mysql": 3306, "mssql": 1433}


class TrackingError(SvmReproError):
    """The tracking store cannot be reached or opened; the message names its URI."""


def tracking_uri(configured: str | None = None) -> str:
    """``tracking.uri``, else ``$MLFLOW_TRACKING_URI``, else the project's SQLite store."""
    if configured:
        return configured
    return os.environ.get("MLFLOW_TRACKING_URI") or f"sqlite:///{PROJECT_ROOT / 'mlflow.db'}"


def experiment_name(choices: dict[str, Any]) -> str:
    """One MLflow experiment per ``<paper>/<id>`` (the ``experiment`` option chosen)."""
    return choices.get("experiment") or ADHOC_EXPERIMENT


def sqlite_path(uri: str) -> Path | None:
    """The file of a ``sqlite:///<path>`` URI (relative or, with a fourth slash, absolute)."""
    if not uri.startswith("sqlite:///"):
        return None
    return Path(uri[len("sqlite:///") :].split("?", 1)[0])


def probe(uri: str) -> None:
    """Fail in seconds, naming ``uri`` (its password masked), when the store cannot be reached.

    A server gets one request without retries (any HTTP answer will do: it is there); a database
    server (``postgresql://``, ``mysql://``, ...) one TCP connection to its host and port (MLflow
    would retry it for minutes); a SQLite or file store needs a folder that exists or can be
    made, and that this process may write.
    """
    fail = f"tracking store {redact(uri)} cannot be reached"
    parsed = urlparse(uri)
    scheme = parsed.scheme
    if scheme in ("http", "https"):
        try:
            urllib.request.urlopen(f"{uri.rstrip('/')}/health", timeout=PROBE_TIMEOUT_S).close()
        except urllib.error.HTTPError:
            pass
        except (urllib.error.URLError, OSError) as exc:
            raise TrackingError(f"{fail}: {getattr(exc, 'reason', exc)}") from None
        return
    dialect = scheme.split("+", 1)[0]
    if dialect in DATABASE_PORTS:
        try:
            host, port = parsed.hostname, parsed.port or DATABASE_PORTS[dialect]
        except ValueError as exc:  # a port that is not a number
            raise TrackingError(f"{fail}: {exc}") from None
        if host:  # none: a local socket, which MLflow reaches its own way
            try:
                socket.create_connection((host, port), timeout=PROBE_TIMEOUT_S).close()
            except OSError as exc:
                raise TrackingError(f"{fail}: no connection to {host}:{port} ({exc.strerror or exc})") from None
        return
    path = sqlite_path(uri) if scheme == "sqlite" else Path(urlparse(uri).path) if scheme in ("file", "") else None
    if path is None or not path.name:  # in-memory SQLite, or a store MLflow reaches its own way
        return
    folder = path.parent if scheme == "sqlite" else path
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise TrackingError(f"{fail}: cannot create {folder}: {exc.strerror or exc}") from None
    if not os.access(folder, os.W_OK | os.X_OK):
        raise TrackingError(f"{fail}: {folder} is not writable")


def _store_file(uri: str) -> Path | None:
    """The file of a SQLite store; None for any other store, an in-memory one included."""
    path = sqlite_path(uri)
    return path if path is not None and path.name not in ("", ":memory:") else None


def ensure_store(uri: str, create: bool = True) -> bool:
    """Whether the store ``uri`` has anything to read, after making a missing SQLite store whole
    (when ``create``; a read-only caller passes False and gets False for a missing file).

    An existing SQLite file that is not at MLflow's schema (half-built by an interrupted creation,
    half-migrated, or older) is never handed to MLflow, which would migrate it: a
    :class:`TrackingError` says what it is and how to repair it. Other stores are left to MLflow.
    """
    path = _store_file(uri)
    if path is None:
        return True
    if not create and not sqlite_store.exists(path):
        return False
    found = sqlite_store.ensure(path, uri)
    if found:
        raise TrackingError(found)
    return True


def _proc_stat(pid: int) -> tuple[str, str] | None:
    """State and start time (clock ticks after boot) of process ``pid``, from Linux's /proc."""
    try:
        with open(f"/proc/{pid}/stat") as handle:
            fields = handle.read().rsplit(")", 1)[1].split()  # fields 3, 4, ... after the command name
        return fields[0], fields[19]
    except (OSError, IndexError):
        return None


def process_tags() -> dict[str, str]:
    """The host and process running a run (see :meth:`Store.mark_orphans_killed`)."""
    stat = _proc_stat(os.getpid())
    return {HOST_TAG: socket.gethostname(), PID_TAG: str(os.getpid()), PROCESS_START_TAG: stat[1] if stat else ""}


def process_gone(tags: dict[str, str]) -> bool:
    """Whether the process named by a run's tags has ended (only decidable on its own host).

    A zombie has ended, and a pid whose process started at another time has been reused.
    """
    if tags.get(HOST_TAG) != socket.gethostname() or not tags.get(PID_TAG, "").isdigit():
        return False
    pid = int(tags[PID_TAG])
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:  # alive, another user's
        pass
    stat, started = _proc_stat(pid), tags.get(PROCESS_START_TAG)
    return stat is not None and (stat[0] == "Z" or bool(started) and stat[1] != started)


def _is_locked(exc: Exception) -> bool:
    text = str(exc).lower()
    return "database is locked" in text or "database is busy" in text


def retry_locked(call: Callable[[], T], attempts: int = 12) -> T:
    """Run ``call``, retrying with jittered backoff while SQLite reports a lock."""
    for attempt in range(attempts):
        try:
            return call()
        except Exception as exc:  # MLflow wraps SQLAlchemy's OperationalError in MlflowException
            if not _is_locked(exc) or attempt == attempts - 1:
                raise
            time.sleep(min(5.0, 0.05 * 2**attempt) * (0.5 + random.random()))
    raise AssertionError("unreachable")


class Store:
    """The few MLflow operations a run needs, each retried on a locked SQLite store."""

    def __init__(self, uri: str | None = None, artifact_root: str | None = None):
        self.uri = tracking_uri(uri)
        probe(self.uri)
        ensure_store(self.uri)
        try:  # opening a SQLite store reads its schema, which a writer may hold locked
            self.client = retry_locked(lambda: MlflowClient(tracking_uri=self.uri))
        except Exception as exc:
            first_line = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
            raise TrackingError(redact(f"tracking store {self.uri} cannot be opened: {first_line}")) from exc
        self._artifact_root = artifact_root

    def _artifact_location(self, name: str) -> str | None:
        if self._artifact_root:
            root = Path(self._artifact_root)
        elif sqlite_path(self.uri) is not None:
            root = sqlite_path(self.uri).parent / "mlartifacts"
        else:  # a server decides where artifacts go
            return None
        return (root / name.replace("/", "__")).resolve().as_uri()

    def experiment_id(self, name: str) -> str:
        """Id of experiment ``name``, created if missing (tolerating a concurrent creator)."""
        found = retry_locked(lambda: self.client.get_experiment_by_name(name))
        if found is not None:
            return found.experiment_id
        try:
            return retry_locked(
                lambda: self.client.create_experiment(name, artifact_location=self._artifact_location(name))
            )
        except Exception:
            found = retry_locked(lambda: self.client.get_experiment_by_name(name))
            if found is None:
                raise
            return found.experiment_id

    def _runs_of_key(self, experiment_id: str, key: str, status: str, max_results: int = 1000):
        return retry_locked(
            lambda: self.client.search_runs(
                [experiment_id],
                filter_string=f"tags.{RUN_KEY_TAG} = '{key}' and attributes.status = '{status}'",
                max_results=max_results,
            )
        )

    def finished_run_id(self, experiment_id: str, key: str) -> str | None:
        runs = self._runs_of_key(experiment_id, key, "FINISHED", max_results=1)
        return runs[0].info.run_id if runs else None

    def mark_orphans_killed(self, experiment_id: str, key: str) -> list[str]:
        """Mark KILLED the RUNNING runs of ``key`` whose process is gone (killed with its sweep).

        Only runs started on this host can be judged; a run of a live process is left alone.
        """
        killed = []
        for found in self._runs_of_key(experiment_id, key, "RUNNING"):
            tags = found.data.tags
            if process_gone(tags):
                reason = (f"process {tags[PID_TAG]} on {tags[HOST_TAG]} ended while the run was RUNNING; "
                          f"marked by process {os.getpid()} starting the same run key")
                self.set_tags(found.info.run_id, {KILLED_REASON_TAG: reason})
                self.terminate(found.info.run_id, "KILLED")
                killed.append(found.info.run_id)
        return killed

    @contextmanager
    def claim(self, key: str) -> Iterator[None]:
        """Hold run key ``key`` while the block runs; another process holding it is waited for.

        On a SQLite store the claim is a lock file the kernel frees when its process ends, however
        it ends (:func:`svmrepro.sqlite_store.claim`). Processes on several hosts sharing a server
        store have no claim: each still skips a key that FINISHED before it looked.
        """
        path = _store_file(self.uri)
        if path is None:
            yield
            return

        def waiting(holder: str) -> None:
            log.info("run key %s is being run by %s: waiting for it", key[:12], holder.strip())

        with sqlite_store.claim(path, key, waiting):
            yield

    def finished_key_counts(self, experiment: str, mode: str) -> dict[str, int]:
        """FINISHED runs per run key of ``experiment`` in ``mode`` (more than one: duplicates)."""
        found = retry_locked(lambda: self.client.get_experiment_by_name(experiment))
        counts: dict[str, int] = {}
        token = None
        while found is not None:
            page = retry_locked(partial(
                self.client.search_runs, [found.experiment_id],
                f"attributes.status = 'FINISHED' and tags.mode = '{mode}'", max_results=1000, page_token=token))
            for run in page:
                key = run.data.tags.get(RUN_KEY_TAG)
                if key:
                    counts[key] = counts.get(key, 0) + 1
            token = page.token
            if not token:
                break
        return counts

    def start_run(self, experiment_id: str, run_name: str, tags: dict[str, str]) -> str:
        run = retry_locked(lambda: self.client.create_run(experiment_id, run_name=run_name, tags=tags))
        return run.info.run_id

    def log_params(self, run_id: str, params: dict[str, object]) -> None:
        items = [Param(k, str(v)[:MAX_PARAM_LENGTH]) for k, v in sorted(params.items())]
        for start in range(0, len(items), MAX_BATCH_PARAMS):
            chunk = items[start : start + MAX_BATCH_PARAMS]
            retry_locked(lambda: self.client.log_batch(run_id, params=chunk))

    def log_metrics(self, run_id: str, metrics: dict[str, float], series: dict[str, list[float]]) -> None:
        now = int(time.time() * 1000)
        items = [Metric(k, float(v), now, 0) for k, v in sorted(metrics.items())]
        for name, values in sorted(series.items()):
            items += [Metric(name, float(v), now, step) for step, v in enumerate(values)]
        for start in range(0, len(items), 1000):
            chunk = items[start : start + 1000]
            retry_locked(lambda: self.client.log_batch(run_id, metrics=chunk))

    def set_tags(self, run_id: str, tags: dict[str, str]) -> None:
        items = [RunTag(k, str(v)) for k, v in tags.items()]
        retry_locked(lambda: self.client.log_batch(run_id, tags=items))

    def log_text(self, run_id: str, text: str, artifact_file: str) -> None:
        retry_locked(lambda: self.client.log_text(run_id, text, artifact_file))

    def log_json(self, run_id: str, obj: Any, artifact_file: str) -> None:
        self.log_text(run_id, json.dumps(obj, indent=2, sort_keys=True, default=str), artifact_file)

    def terminate(self, run_id: str, status: str) -> None:
        retry_locked(lambda: self.client.set_terminated(run_id, status=status))


class PrepareStore(Callback):
    """Hydra callback: create the store and the experiment in the launching process.

    Runs before any job of a multirun starts, so joblib workers find both in place; a store
    that cannot be reached ends the sweep here, in one line, before any job starts.
    """

    def on_multirun_start(self, config: DictConfig, **kwargs: Any) -> None:
        try:
            store = Store(config.tracking.uri, config.tracking.artifact_root)
        except TrackingError as exc:
            print(f"svmrepro-run: error: {exc}", file=sys.stderr)
            sys.exit(2)
        name = experiment_name(dict(config.hydra.runtime.choices))
        store.experiment_id(name)
        log.info("MLflow store %s ready, experiment %s", store.uri, name)
