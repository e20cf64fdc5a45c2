"""The store's client: the few MLflow operations svmrepro makes, on one store's URI, each retried
while SQLite answers "database is locked" (several joblib workers may log to one SQLite file).

Every MLflow call of the package is made here, on a :class:`Store`'s client, never through
MLflow's process-wide tracking URI. A run ends in one of three ways, each spelled once: FINISHED
(:meth:`Store.terminate`), FAILED with its reason (:meth:`Store.fail`: the exception's class and
first line as tags, its traceback as an artifact) or KILLED with its reason (:meth:`Store.kill`).

A run holds its run key while it runs (:meth:`Store.claim`): identical runs started at once fit
once, the others wait for it and then skip. Every run is tagged with the host and process that
run it, so a run left RUNNING by a killed process is marked KILLED when the same computation is
started again (:meth:`Store.mark_orphans_killed`).
"""

from __future__ import annotations

import json
import logging
import os
import random
import socket
import time
import traceback
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import partial
from pathlib import Path
from typing import Any, TypeVar

import pandas as pd
from mlflow.entities import Dataset as DatasetEntity
from mlflow.entities import DatasetInput, InputTag, Metric, Param, RunTag
from mlflow.tracking import MlflowClient

from svmrepro import signals
from svmrepro.errors import error_line, first_line
from svmrepro.redact import redact
from svmrepro.store import sqlite
from svmrepro.store.location import (
    TRACKING_URI_ENV, TrackingError, check_artifact_location, ensure_store, probe, sqlite_path, store_file, tracking_uri,
)
from svmrepro.store.names import (
    DATASET_CONTEXT_TAG, ERROR_MESSAGE_TAG, ERROR_TYPE_TAG, EXPERIMENT_KIND, EXPERIMENT_KIND_TAG, HOST_TAG,
    KILLED_REASON_TAG, KIND_TAG, NOTE_TAG, PARENT_RUN_TAG, PID_TAG, RUN_KEY_TAG, RUN_NAME_TAG, SWEEP_KIND, as_text,
    is_result,
)
from svmrepro.store.processes import process_gone

log = logging.getLogger(__name__)
T = TypeVar("T")
#: MLflow's SQL session logs every SQLAlchemy OperationalError with its traceback before it raises it
#: again ("database is locked", which :func:`retry_locked` waits out; "database or disk is full")
MLFLOW_SESSION_LOGGER, MLFLOW_SESSION_ERROR = "mlflow.store.db.utils", "SQLAlchemy database error"
#: a run that finds itself first among the runs of its key on a store without a claim looks again after this many
#: times the milliseconds its own run took to be seen, within these bounds (Store.first_of_key)
SETTLE_LATENCIES, SETTLE_MIN_S, SETTLE_MAX_S = 3, 0.25, 5.0


class DropReraisedSqlErrors(logging.Filter):
    """Drops MLflow's log record of an SQL error that it raises again: the caller retries it or
    reports it in one line, so the record's traceback (dozens of lines, once per retry) says nothing more."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not str(record.msg).startswith(MLFLOW_SESSION_ERROR)


logging.getLogger(MLFLOW_SESSION_LOGGER).addFilter(DropReraisedSqlErrors())

#: MLflow's limits for one log_batch call and for a param value
MAX_BATCH_PARAMS = 100
MAX_PARAM_LENGTH = 6000
#: the longest error message kept as a tag (the whole traceback is the run's traceback.txt)
MAX_ERROR_MESSAGE_LENGTH = 500
#: runs per page of a search (MLflow's own page for a pandas search)
SEARCH_PAGE = 10000
#: the longest dataset digest and run name MLflow stores (its SQL schema)
MAX_DIGEST_LENGTH, MAX_RUN_NAME_LENGTH = 36, 250
#: seconds between two samples of the system metrics (tracking.system_metrics=true)
SYSTEM_METRICS_INTERVAL_S = 1.0
#: how SQLAlchemy names a unique-constraint violation (its driver's exception class, in the message)
DUPLICATE_MARKERS = ("IntegrityError", "UniqueViolation")
#: tries of a write that met the same row written at that moment by another process (a data set; an experiment tag)
DATASET_ATTEMPTS = 3


def _is_locked(exc: Exception) -> bool:
    text = str(exc).lower()
    return "database is locked" in text or "database is busy" in text


def _is_duplicate(exc: Exception) -> bool:
    """Whether ``exc`` is a unique-constraint violation in the store's database. From a server it
    arrives as the message alone (a ``RestException``), so the message is what is read: SQLAlchemy
    starts it with the database driver's class, "(sqlite3.IntegrityError) UNIQUE constraint
    failed: ..." or "(psycopg2.errors.UniqueViolation) duplicate key value ...", as it does in the
    ``MlflowException`` of an embedded store."""
    return any(marker in str(exc) for marker in DUPLICATE_MARKERS)


def _retry(transient: Callable[[Exception], bool], call: Callable[[], T], attempts: int) -> T:
    """Run ``call``, retrying with jittered backoff while it raises what ``transient`` accepts; a
    SIGTERM or Ctrl-C stops the process after the call, not inside it (:func:`svmrepro.signals.held`)."""
    for attempt in range(attempts):
        try:
            with signals.held():
                return call()
        except Exception as exc:  # MLflow wraps SQLAlchemy's errors in MlflowException
            if not transient(exc) or attempt == attempts - 1:
                raise
            time.sleep(min(5.0, 0.05 * 2**attempt) * (0.5 + random.random()))
    raise AssertionError("unreachable")


def retry_locked(call: Callable[[], T], attempts: int = 12) -> T:
    """Run ``call``, retrying with jittered backoff while SQLite reports a lock."""
    return _retry(_is_locked, call, attempts)


def artifact_dict(artifact_uri: str, name: str) -> dict | None:
    """A run's JSON artifact ``name`` (the run's ``artifact_uri``) as a dict; None when it has none."""
    import mlflow.artifacts  # only a build from MLflow needs it

    try:
        return mlflow.artifacts.load_dict(f"{artifact_uri}/{name}")
    except Exception:  # noqa: BLE001  (a missing artifact raises one of several MLflow/OS types)
        return None


class Store:
    """The few MLflow operations a run needs, each retried on a locked SQLite store."""

    def __init__(self, uri: str | None = None, artifact_root: str | None = None):
        self.uri = tracking_uri(uri)
        probe(self.uri)
        # before anything is made; checked even when the experiment exists (its location stays its own)
        check_artifact_location(artifact_root, f"tracking.artifact_root={artifact_root}")
        ensure_store(self.uri)
        try:  # opening a SQLite store reads its schema, which a writer may hold locked
            self.client = retry_locked(lambda: MlflowClient(tracking_uri=self.uri))
        except Exception as exc:
            raise TrackingError(redact(f"tracking store {self.uri} cannot be opened: {error_line(exc)}")) from exc
        self._artifact_root = artifact_root

    def _artifact_location(self, name: str) -> str | None:
        if self._artifact_root:
            root = Path(self._artifact_root)
        elif sqlite_path(self.uri) is not None:
            root = sqlite_path(self.uri).parent / "mlartifacts"
        else:  # a server decides where artifacts go
            return None
        return (root / name.replace("/", "__")).resolve().as_uri()

    def experiment_id(self, name: str, description: str | None = None) -> str:
        """Id of experiment ``name``, created if missing (tolerating a concurrent creator).

        A new experiment is one of "Machine learning" (:data:`EXPERIMENT_KIND`), not of GenAI apps,
        and ``description`` (the experiment's title) is its description; an experiment made before
        either was set gets them here once.

        Its artifact folder must be one this process can make and write: a new experiment's is
        checked before the experiment exists (MLflow keeps an experiment's location for good, so a
        bad ``tracking.artifact_root`` would break every later run of it), an existing one's
        before a run of it is made (:class:`TrackingError`, naming the folder and the way out).
        """
        wanted = {EXPERIMENT_KIND_TAG: EXPERIMENT_KIND, **({NOTE_TAG: description} if description else {})}
        found = retry_locked(lambda: self.client.get_experiment_by_name(name))
        if found is None:
            location = self._artifact_location(name)
            check_artifact_location(location, f"tracking.artifact_root={self._artifact_root}"
                                    if self._artifact_root else f"artifacts of tracking store {self.uri}")
            try:
                return retry_locked(lambda: self.client.create_experiment(name, artifact_location=location, tags=wanted))
            except Exception:
                found = retry_locked(lambda: self.client.get_experiment_by_name(name))
                if found is None:
                    raise
        check_artifact_location(
            found.artifact_location, f"experiment {name} keeps its artifacts in {found.artifact_location}",
            "make that folder writable, or rename the experiment (its runs stay in it) so that the next run "
            f"makes it anew: {TRACKING_URI_ENV}={redact(self.uri)} mlflow experiments rename "
            f"--experiment-id {found.experiment_id} --new-name {name}-unusable")
        for tag, value in wanted.items():
            if tag not in found.tags:  # another process setting it at once: the same value, kept once
                set_tag = partial(self.client.set_experiment_tag, found.experiment_id, tag, value)
                _retry(_is_duplicate, lambda: retry_locked(set_tag), DATASET_ATTEMPTS)
        return found.experiment_id

    def _runs_of_key(self, experiment_id: str, key: str, status: str, max_results: int = 1000):
        found = retry_locked(
            lambda: self.client.search_runs(
                [experiment_id],
                filter_string=f"tags.{RUN_KEY_TAG} = '{key}' and attributes.status = '{status}'",
                max_results=max_results,
            )
        )
        return [run for run in found if is_result(run.data.tags)]

    def finished_run_id(self, experiment_id: str, key: str) -> str | None:
        runs = self._runs_of_key(experiment_id, key, "FINISHED", max_results=1)
        return runs[0].info.run_id if runs else None

    def result_runs_by_key(self, experiment: str, status: str) -> dict[str, list]:
        """The result runs (never a sweep's or a report's) of the experiment named ``experiment`` in ``status``,
        by run key, each key's newest first (none when the experiment does not exist): one search of the
        store where :meth:`finished_run_id` makes one per key."""
        found: dict[str, list] = {}
        for run in self.search(experiment, f"attributes.status = '{status}'"):
            key = run.data.tags.get(RUN_KEY_TAG)
            if key and is_result(run.data.tags):
                found.setdefault(key, []).append(run)
        return found

    def kill_orphans(self, running: list) -> list[str]:
        """Mark KILLED those of the RUNNING runs ``running`` whose process is gone (:meth:`mark_orphans_killed`)."""
        return self._kill_orphans(running, f"marked by process {os.getpid()} skipping the same run key")

    def own_running_runs(self, experiment_id: str, key: str) -> list[str]:
        """The RUNNING runs of ``key`` that this process started (by its host and pid tags)."""
        mine = {HOST_TAG: socket.gethostname(), PID_TAG: str(os.getpid())}
        return [run.info.run_id for run in self._runs_of_key(experiment_id, key, "RUNNING")
                if all(run.data.tags.get(tag) == value for tag, value in mine.items())]

    def mark_orphans_killed(self, experiment_id: str, key: str) -> list[str]:
        """Mark KILLED the RUNNING runs of ``key`` whose process is gone (killed with its sweep).

        Only runs started on this host can be judged; a run of a live process is left alone.
        """
        return self._kill_orphans(self._runs_of_key(experiment_id, key, "RUNNING"),
                                  f"marked by process {os.getpid()} starting the same run key")

    def _kill_orphans(self, running: list, marked_by: str) -> list[str]:
        """Mark KILLED those of the ``running`` runs whose process is gone, saying who marked them."""
        killed = []
        for found in running:
            tags = found.data.tags
            if process_gone(tags):
                self.kill(found.info.run_id, f"process {tags[PID_TAG]} on {tags[HOST_TAG]} ended while the run "
                                             f"was RUNNING; {marked_by}")
                killed.append(found.info.run_id)
        return killed

    def kill(self, run_id: str, reason: str) -> None:
        """End run ``run_id`` KILLED (stopped, not failed), tagged with why (``killed_reason``)."""
        self.set_tags(run_id, {KILLED_REASON_TAG: reason})
        self.terminate(run_id, "KILLED")

    def fail(self, run_id: str, error: BaseException) -> None:
        """End run ``run_id`` FAILED with its reason: ``error``'s class and the first line of its
        message as tags (``error_type``, ``error_message``; the runs table shows them), its
        traceback as ``traceback.txt``, passwords masked.

        Whatever part of the reason cannot be logged (an artifact store that refuses files) is
        warned about; the run is ended FAILED all the same, never left RUNNING.
        """
        message = first_line(error)[:MAX_ERROR_MESSAGE_LENGTH]
        text = redact("".join(traceback.format_exception(type(error), error, error.__traceback__)))
        steps = ((lambda: self.set_tags(run_id, {ERROR_TYPE_TAG: type(error).__name__, ERROR_MESSAGE_TAG: message})),
                 (lambda: self.log_text(run_id, text, "traceback.txt")))
        for step in steps:
            try:
                step()
            except Exception as exc:  # noqa: BLE001  (the run must still end FAILED)
                log.warning("run %s: its failure could not be logged whole: %s", run_id, error_line(exc))
        self.terminate(run_id, "FAILED")

    @contextmanager
    def claim(self, key: str) -> Iterator[None]:
        """Hold run key ``key`` while the block runs; another process holding it is waited for.

        On a SQLite store the claim is a lock file the kernel frees when its process ends, however
        it ends (:func:`svmrepro.store.sqlite.claim`). Processes on several hosts sharing a server
        store have no claim: each still skips a key that FINISHED before it looked.
        """
        path = store_file(self.uri)
        if path is None:
            yield
            return

        def waiting(holder: str) -> None:
            log.info("run key %s is being run by %s: waiting for it", key[:12], holder.strip())

        with sqlite.claim(path, key, waiting):
            yield

    def first_of_key(self, experiment_id: str, key: str, run_id: str) -> Any | None:
        """On a store without a claim (a server, a database): the run of ``key`` that run ``run_id``, just
        created, yields to, else None (it fits).

        A FINISHED run of the key is yielded to; so is a RUNNING one of a live process created before
        ``run_id`` (by start time, then run id). A run's start time is its client's clock when it asked for the
        run, so a run asked for earlier may be seen later (its request took longer): a run that finds itself
        first looks again after :data:`SETTLE_LATENCIES` times the time its own run took to be seen (at least
        :data:`SETTLE_MIN_S`), and yields if such a run came. Of runs created at once, then, one fits (seen
        with 6 processes forked at once on one host, where two did without the second look); on hosts whose
        clocks agree as well. A run that yields deletes its own; one waiting for it follows to the run it
        yielded to (:meth:`wait_until_ended`). A SQLite store has its claim (:meth:`claim`) instead.
        """
        if store_file(self.uri) is not None:
            return None
        first, seen_after_ms = self._first_of_key(experiment_id, key, run_id)
        if first is not None or seen_after_ms is None:
            return first
        time.sleep(min(SETTLE_MAX_S, max(SETTLE_MIN_S, SETTLE_LATENCIES * seen_after_ms / 1000)))
        return self._first_of_key(experiment_id, key, run_id)[0]

    def _first_of_key(self, experiment_id: str, key: str, run_id: str) -> tuple[Any | None, float | None]:
        """The run ``run_id`` yields to now, and, when none, the milliseconds its run took to be seen (None
        if it is not seen yet: a store that lags, where it yields to none)."""
        # RUNNING before FINISHED: a run that ends between the two searches is then in the second
        order = self._running_in_order(experiment_id, key)
        finished = [run for run in self._runs_of_key(experiment_id, key, "FINISHED") if run.info.run_id != run_id]
        if finished:
            return finished[0], None
        ids = [run.info.run_id for run in order]
        if run_id not in ids:  # our own run not visible yet: a store that lags; yield to none
            return None, None
        if ids[0] != run_id:
            return order[0], None
        return None, max(0.0, time.time() * 1000 - order[0].info.start_time)

    def _running_in_order(self, experiment_id: str, key: str) -> list:
        """The RUNNING runs of ``key`` whose process is alive, first the one asked for first (then by run id)."""
        running = [run for run in self._runs_of_key(experiment_id, key, "RUNNING") if not process_gone(run.data.tags)]
        return sorted(running, key=lambda run: (run.info.start_time, run.info.run_id))

    def wait_until_ended(self, run_id: str, poll_s: float = 1.0) -> Any:
        """Run ``run_id`` once it is no longer RUNNING (or its process, on this host, is gone). A run deleted
        meanwhile yielded in turn (:meth:`first_of_key`): the wait goes on for the run of its key that is
        first now, if any."""
        while True:
            run = retry_locked(lambda: self.client.get_run(run_id))
            if run.info.lifecycle_stage == "deleted" and (key := run.data.tags.get(RUN_KEY_TAG)):
                running = self._running_in_order(run.info.experiment_id, key)
                # searched after RUNNING: a run that ends between the two searches is in this one
                finished = self._runs_of_key(run.info.experiment_id, key, "FINISHED", max_results=1)
                following = (finished or running or [None])[0]
                if following is None:
                    return run
                run_id = following.info.run_id
                continue
            if run.info.status != "RUNNING" or process_gone(run.data.tags):
                return run
            time.sleep(poll_s)

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
                if key and is_result(run.data.tags):
                    counts[key] = counts.get(key, 0) + 1
            token = page.token
            if not token:
                break
        return counts

    # -- reads and upkeep of svmrepro.report and svmrepro-reproduce: every MLflow call of the package is
    # made here, on this store's client, never through MLflow's process-wide tracking URI

    def search(self, experiment: str, filter_string: str = "") -> Iterator[Any]:
        """Every run of the experiment named ``experiment`` (none when it does not exist) that
        matches ``filter_string``, page by page."""
        found = retry_locked(lambda: self.client.get_experiment_by_name(experiment))
        token = None
        while found is not None:
            page = retry_locked(partial(
                self.client.search_runs, [found.experiment_id], filter_string, max_results=SEARCH_PAGE,
                page_token=token))
            yield from page
            token = page.token
            if not token:
                return

    def runs_frame(self, experiment: str, filter_string: str = "") -> pd.DataFrame:
        """The runs of :meth:`search` laid out as ``mlflow.search_runs(output_format="pandas")`` lays
        them out: ``run_id``, ``experiment_id``, ``status``, ``artifact_uri``, ``start_time`` and
        ``end_time`` (UTC), then ``metrics.<key>`` (NaN where a run has none), ``params.<key>`` and
        ``tags.<key>`` (None where a run has none)."""
        runs = list(self.search(experiment, filter_string))
        info = {
            "run_id": [r.info.run_id for r in runs],
            "experiment_id": [r.info.experiment_id for r in runs],
            "status": [r.info.status for r in runs],
            "artifact_uri": [r.info.artifact_uri for r in runs],
            "start_time": [pd.to_datetime(r.info.start_time, unit="ms", utc=True) for r in runs],
            "end_time": [pd.to_datetime(r.info.end_time, unit="ms", utc=True) for r in runs],
        }
        columns = [("metrics", [r.data.metrics for r in runs], float("nan")),
                   ("params", [r.data.params for r in runs], None), ("tags", [r.data.tags for r in runs], None)]
        for prefix, values, missing in columns:
            for key in sorted({key for value in values for key in value}):
                info[f"{prefix}.{key}"] = [value.get(key, missing) for value in values]
        return pd.DataFrame(info)

    def experiments(self) -> dict[str, str]:
        """The name of every active experiment of the store, by id."""
        found, token = {}, None
        while True:
            page = retry_locked(partial(self.client.search_experiments, max_results=SEARCH_PAGE, page_token=token))
            found.update({e.experiment_id: e.name for e in page})
            token = page.token
            if not token:
                return found

    def find_run(self, experiment_id: str, tags: dict[str, str]) -> str | None:
        """The id of a run of ``experiment_id`` that has every tag of ``tags``, or None."""
        query = " and ".join(f"tags.`{key}` = '{value}'" for key, value in tags.items())
        found = retry_locked(lambda: self.client.search_runs([experiment_id], filter_string=query, max_results=1))
        return found[0].info.run_id if found else None

    def log_artifact(self, run_id: str, path: str | Path, artifact_path: str | None = None) -> None:
        retry_locked(lambda: self.client.log_artifact(run_id, str(path), artifact_path))

    def log_artifacts(self, run_id: str, folder: str | Path, artifact_path: str | None = None) -> None:
        """Every file under ``folder``, as the run's artifacts under ``artifact_path``."""
        retry_locked(lambda: self.client.log_artifacts(run_id, str(folder), artifact_path))

    def clear_artifacts(self, run_id: str) -> None:
        """Delete every artifact of run ``run_id`` (a report run whose files are logged anew)."""
        # imported here: only a rebuilt report needs it
        from mlflow.store.artifact.artifact_repository_registry import get_artifact_repository

        artifact_uri = retry_locked(lambda: self.client.get_run(run_id)).info.artifact_uri
        get_artifact_repository(artifact_uri, tracking_uri=self.uri).delete_artifacts()

    def status_and_tags(self, run_id: str) -> tuple[str, dict[str, str]]:
        """Run ``run_id``'s status (``FINISHED``, ``RUNNING``, ...) and tags."""
        run = retry_locked(lambda: self.client.get_run(run_id))
        return run.info.status, dict(run.data.tags)

    def artifact_sizes(self, run_id: str) -> dict[str, int | None]:
        """Run ``run_id``'s top-level artifacts: each name with its size in bytes (None for a folder)."""
        return {Path(item.path).name: item.file_size for item in retry_locked(lambda: self.client.list_artifacts(run_id))}

    def delete_run(self, run_id: str) -> None:
        """Soft-delete run ``run_id``: MLflow's ``deleted`` lifecycle, restorable with ``mlflow runs restore``."""
        retry_locked(lambda: self.client.delete_run(run_id))

    def start_run(self, experiment_id: str, run_name: str, tags: dict[str, str], parent_run_id: str | None = None) -> str:
        """A new RUNNING run; with ``parent_run_id`` nested under it (MLflow's ``mlflow.parentRunId``)."""
        tags = {k: as_text(v) for k, v in {**tags, **({PARENT_RUN_TAG: parent_run_id} if parent_run_id else {})}.items()}
        run = retry_locked(lambda: self.client.create_run(experiment_id, run_name=run_name, tags=tags))
        return run.info.run_id

    def unique_run_name(self, experiment_id: str, name: str, key: str) -> str:
        """``name``, or ``name-<key[:8]>`` when a run of another run key already has that name (a
        name repeats only for the same computation, run again with ``force``), or is longer than
        MLflow keeps (its SQL schema: 250 characters)."""
        if len(name) > MAX_RUN_NAME_LENGTH:
            return f"{name[:MAX_RUN_NAME_LENGTH - 9]}-{key[:8]}"
        query = f"tags.`{RUN_NAME_TAG}` = '{name}'"
        found = retry_locked(lambda: self.client.search_runs([experiment_id], query, max_results=1000))
        clash = any(run.data.tags.get(RUN_KEY_TAG) != key for run in found)
        return f"{name}-{key[:8]}" if clash else name

    def log_dataset(self, run_id: str, name: str, fingerprint: str | None, source: str | dict[str, str],
                    features: Any, targets: Any, context: str = "training") -> None:
        """One split of a data set as an MLflow dataset input of the run (the run page's Datasets,
        the runs table's Dataset column), in ``context`` (MLflow's ``training``, ``validation``,
        ``testing``): its ``name``, ``fingerprint`` as digest (cut to MLflow's 36 characters; the
        whole one is the run's ``data_fingerprint`` tag; None: MLflow's digest of the arrays), its
        ``source`` (a folder of files, or the generator's parameters), and the schema and shape of
        its arrays.

        A data set is one row per experiment, shared by its runs, which MLflow's ``log_inputs``
        reads and, when missing, inserts before it links the run to it, in one transaction. Runs of
        a sweep that log the same data set at the same moment each find no row and insert one: the
        first commits, the others break the rows' unique constraint (experiment, name, digest), and
        their runs would fail though nothing is wrong with them (issue 32). Such a call is tried
        again (:data:`DATASET_ATTEMPTS` in all): the row exists by then, so MLflow only links the
        run to it; a run already linked is left as it is, so a retry never adds a second input.
        """
        import mlflow.data  # a second of imports, only for a run
        from mlflow.data.code_dataset_source import CodeDatasetSource

        origin = source if isinstance(source, str) else CodeDatasetSource(source)
        dataset = mlflow.data.from_numpy(features, source=origin, targets=targets, name=name,
                                         digest=fingerprint[:MAX_DIGEST_LENGTH] if fingerprint else None)
        entity = DatasetEntity(**dataset.to_dict())
        inputs = [DatasetInput(entity, [InputTag(DATASET_CONTEXT_TAG, context)])]
        _retry(_is_duplicate, lambda: retry_locked(lambda: self.client.log_inputs(run_id, datasets=inputs)),
               DATASET_ATTEMPTS)

    def log_model(self, experiment_id: str, run_id: str, estimator: Any, input_example: Any = None) -> str:
        """The fitted estimator as an MLflow model of the run (``mlflow.sklearn``'s format, the
        Models column); returns the model's id. Made with the client (a logged model, its files, the
        run's output), so no process-wide active run or tracking URI is involved.

        Serialized with cloudpickle: MLflow's default, skops, refuses any type not on its list (a grid
        search's results; svmrepro's estimators are declared to it, :mod:`svmrepro.algorithms.persistence`),
        and gives no safety on loading here, as
        MLflow 3 loads a skops model only with ``MLFLOW_ALLOW_PICKLE_DESERIALIZATION=true`` too
        (the model's own MLmodel file lists the types it trusts)."""
        import tempfile

        import mlflow.sklearn
        from mlflow.entities import LoggedModelOutput
        from mlflow.models import Model, infer_signature

        signature = None
        if input_example is not None and hasattr(estimator, "predict"):
            signature = infer_signature(input_example, estimator.predict(input_example))
        else:  # a self-benchmark predicts nothing
            input_example = None
        model = retry_locked(lambda: self.client.create_logged_model(
            experiment_id, name="model", source_run_id=run_id, model_type="sklearn"))
        try:
            with tempfile.TemporaryDirectory() as folder:
                path = Path(folder) / "model"
                meta = Model(run_id=run_id, artifact_path="model", model_id=model.model_id)
                # MLflow's default requirements: inferring them loads the model in a subprocess (seconds)
                mlflow.sklearn.save_model(
                    estimator, path, mlflow_model=meta, signature=signature, input_example=input_example,
                    serialization_format=mlflow.sklearn.SERIALIZATION_FORMAT_CLOUDPICKLE,
                    pip_requirements=mlflow.sklearn.get_default_pip_requirements(include_cloudpickle=True))
                retry_locked(lambda: self.client.log_model_artifacts(model.model_id, str(path)))
        except BaseException:
            retry_locked(lambda: self.client.finalize_logged_model(model.model_id, "FAILED"))
            raise
        retry_locked(lambda: self.client.finalize_logged_model(model.model_id, "READY"))
        retry_locked(lambda: self.client.log_outputs(run_id, [LoggedModelOutput(model.model_id, 0)]))
        return model.model_id

    def mark_orphan_sweeps_killed(self, experiment_id: str) -> list[str]:
        """Mark KILLED the RUNNING sweep runs of this host whose process is gone (killed outright)."""
        query = f"tags.`{KIND_TAG}` = '{SWEEP_KIND}' and attributes.status = 'RUNNING'"
        killed = []
        for found in retry_locked(lambda: self.client.search_runs([experiment_id], query, max_results=1000)):
            if process_gone(found.data.tags):
                self.kill(found.info.run_id, f"process {found.data.tags[PID_TAG]} ended while the sweep was RUNNING")
                killed.append(found.info.run_id)
        return killed

    @contextmanager
    def system_metrics(self, run_id: str, enabled: bool) -> Iterator[None]:
        """With ``enabled``, MLflow's system metrics (CPU, memory, ...; ``system/`` charts) sampled
        every :data:`SYSTEM_METRICS_INTERVAL_S` seconds while the block runs (a shorter block: none). MLflow's public door to them is the
        fluent ``start_run(log_system_metrics=True)``; its monitor is used here with this store's
        URI instead (mlflow.system_metrics.system_metrics_monitor, tested in tests/test_runner.py)."""
        if not enabled:
            yield
            return
        from mlflow.system_metrics.system_metrics_monitor import SystemMetricsMonitor

        monitor = SystemMetricsMonitor(run_id, sampling_interval=SYSTEM_METRICS_INTERVAL_S, tracking_uri=self.uri)
        monitor.start()
        try:
            yield
        finally:
            monitor.finish()

    def mark_orphan_children_killed(self, experiment_id: str, parent_run_id: str) -> list[str]:
        """Mark KILLED the RUNNING runs nested under ``parent_run_id`` whose process is gone (a worker
        killed before it could mark its run: after the stop's grace period, or by joblib)."""
        query = f"tags.`{PARENT_RUN_TAG}` = '{parent_run_id}' and attributes.status = 'RUNNING'"
        running = retry_locked(lambda: self.client.search_runs([experiment_id], query, max_results=5000))
        return self._kill_orphans(running, f"marked by the sweep's process {os.getpid()} as the sweep ended")

    def child_statuses(self, experiment_id: str, parent_run_id: str) -> dict[str, int]:
        """How many runs nested under ``parent_run_id`` have each status."""
        query = f"tags.`{PARENT_RUN_TAG}` = '{parent_run_id}'"
        counts: dict[str, int] = {}
        for run in retry_locked(lambda: self.client.search_runs([experiment_id], query, max_results=5000)):
            counts[run.info.status] = counts.get(run.info.status, 0) + 1
        return counts

    def log_params(self, run_id: str, params: dict[str, object]) -> None:
        items = [Param(k, as_text(v)[:MAX_PARAM_LENGTH]) for k, v in sorted(params.items())]
        for start in range(0, len(items), MAX_BATCH_PARAMS):
            chunk = items[start : start + MAX_BATCH_PARAMS]
            retry_locked(lambda: self.client.log_batch(run_id, params=chunk))

    def log_metrics(self, run_id: str, metrics: dict[str, float], series: dict[str, list[float]], step: int = 0) -> None:
        """``metrics`` at ``step``, and each of ``series`` at steps 0, 1, ..."""
        now = int(time.time() * 1000)
        items = [Metric(k, float(v), now, step) for k, v in sorted(metrics.items())]
        for name, values in sorted(series.items()):
            items += [Metric(name, float(v), now, step) for step, v in enumerate(values)]
        for start in range(0, len(items), 1000):
            chunk = items[start : start + 1000]
            retry_locked(lambda: self.client.log_batch(run_id, metrics=chunk))

    def set_tags(self, run_id: str, tags: dict[str, str]) -> None:
        items = [RunTag(k, as_text(v)) for k, v in tags.items()]
        retry_locked(lambda: self.client.log_batch(run_id, tags=items))

    def log_text(self, run_id: str, text: str, artifact_file: str) -> None:
        retry_locked(lambda: self.client.log_text(run_id, text, artifact_file))

    def log_json(self, run_id: str, obj: Any, artifact_file: str) -> None:
        self.log_text(run_id, json.dumps(obj, indent=2, sort_keys=True, default=str), artifact_file)

    def terminate(self, run_id: str, status: str) -> None:
        retry_locked(lambda: self.client.set_terminated(run_id, status=status))

    def run_metrics(self, run_id: str) -> dict[str, float]:
        """The last value of each metric of run ``run_id`` (a skipped run's result is the finished one's)."""
        return dict(retry_locked(lambda: self.client.get_run(run_id)).data.metrics)
