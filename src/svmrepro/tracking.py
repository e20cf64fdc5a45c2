"""MLflow tracking: where the store is, and logging that survives concurrent writers.

The embedded default is a SQLite store ``mlflow.db`` in the current folder, with artifacts in
``mlartifacts`` beside it. A SQLite store is made whole or not at all, and checked before MLflow
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

import atexit
import getpass
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

import pandas as pd
from hydra.experimental.callback import Callback
from mlflow.entities import Dataset as DatasetEntity
from mlflow.entities import DatasetInput, InputTag, Metric, Param, RunTag
from mlflow.tracking import MlflowClient
from omegaconf import DictConfig

from svmrepro import sqlite_store
from svmrepro.environment import git_source
from svmrepro.locations import default_store_uri
from svmrepro.errors import SvmReproError
from svmrepro.redact import redact

log = logging.getLogger(__name__)
T = TypeVar("T")

#: MLflow's limits for one log_batch call and for a param value
MAX_BATCH_PARAMS = 100
MAX_PARAM_LENGTH = 6000
#: runs per page of a search (MLflow's own page for a pandas search)
SEARCH_PAGE = 10000
RUN_KEY_TAG = "run_key"
ADHOC_EXPERIMENT = "adhoc"
#: which process runs a run (the runs table of a report need not keep them: tags.process.*)
HOST_TAG, PID_TAG, PROCESS_START_TAG = "process.host", "process.pid", "process.start"
KILLED_REASON_TAG = "killed_reason"
#: what a run is: a result of the runner, the parent run of a sweep, or the files of a built output.
#: Reads of results (:meth:`Store.finished_run_id`, the runs tables of reports) skip the other two.
KIND_TAG, RESULT_KIND, SWEEP_KIND, REPORT_KIND = "svmrepro.kind", "result", "sweep", "report"
NOT_RESULTS = (SWEEP_KIND, REPORT_KIND)
#: MLflow's system tags, as its Tracking documentation ("System Tags") names them (the constants in
#: mlflow.utils.mlflow_tags are not in MLflow's public API reference)
SOURCE_NAME_TAG, SOURCE_TYPE_TAG, USER_TAG = "mlflow.source.name", "mlflow.source.type", "mlflow.user"
GIT_COMMIT_TAG, GIT_BRANCH_TAG, GIT_REPO_TAG = "mlflow.source.git.commit", "mlflow.source.git.branch", "mlflow.source.git.repoURL"
PARENT_RUN_TAG, RUN_NAME_TAG = "mlflow.parentRunId", "mlflow.runName"
#: in a sweep's folder (hydra.sweep.dir): the parent run its jobs log under (:class:`PrepareStore`)
SWEEP_RUN_FILE = "mlflow_sweep_run.json"
#: the longest dataset digest and run name MLflow stores (its SQL schema)
MAX_DIGEST_LENGTH, MAX_RUN_NAME_LENGTH = 36, 250
#: seconds between two samples of the system metrics (tracking.system_metrics=true)
SYSTEM_METRICS_INTERVAL_S = 1.0
#: seconds a tracking server has to answer the probe
PROBE_TIMEOUT_S = 5.0
#: default port of each SQLAlchemy dialect MLflow can keep its runs in
DATABASE_PORTS = {"postgresql": 5432, "mysql": 3306, "mssql": 1433}


class TrackingError(SvmReproError):
    """The tracking store cannot be reached or opened; the message names its URI."""


def tracking_uri(configured: str | None = None) -> str:
    """``tracking.uri``, else ``$MLFLOW_TRACKING_URI``, else ``./mlflow.db``."""
    if configured:
        return configured
    return os.environ.get("MLFLOW_TRACKING_URI") or default_store_uri()


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


def is_result(tags: dict[str, str]) -> bool:
    """Whether a run with these tags is a result (runs older than the kind tag are)."""
    return tags.get(KIND_TAG, RESULT_KIND) not in NOT_RESULTS


def source_tags(git: dict[str, str] | None = None) -> dict[str, str]:
    """MLflow's Source and User columns (the command that ran, LOCAL) and its git tags from ``git``
    (``commit``, ``branch``, ``repo``, those known)."""
    try:
        user = getpass.getuser()
    except (KeyError, OSError):  # no name for this uid (a container)
        user = str(os.getuid())
    tags = {SOURCE_NAME_TAG: sys.argv[0] if sys.argv and sys.argv[0] else "python", SOURCE_TYPE_TAG: "LOCAL",
            USER_TAG: user}
    names = {"commit": GIT_COMMIT_TAG, "branch": GIT_BRANCH_TAG, "repo": GIT_REPO_TAG}
    tags.update({names[k]: v for k, v in (git or {}).items() if k in names and v and v != "unknown"})
    return tags


def mlflow_names(metrics: dict[str, float]) -> tuple[dict[str, float], dict[str, float]]:
    """``(metrics, params)`` as logged: a data-set constant (``data.<key>``) is a param, and a
    dotted name (``stage1.n_sv``) is written with ``/`` (``stage1/n_sv``), which the MLflow UI
    groups into chart sections. :func:`svmrepro_names` undoes it for the runs tables of reports."""
    params = {k: v for k, v in metrics.items() if k.startswith("data.")}
    return {k.replace(".", "/"): v for k, v in metrics.items() if k not in params}, params


def svmrepro_names(frame: pd.DataFrame) -> pd.DataFrame:
    """A runs table from MLflow (``mlflow.search_runs``) with the names the runner measured:
    ``metrics.stage1/n_sv`` -> ``metrics.stage1.n_sv`` and the param ``params.data.<key>`` ->
    the number ``metrics.data.<key>``, so a report spec and a runs CSV (old or new) name them alike."""
    renamed = {c: "metrics." + c.removeprefix("metrics.").replace("/", ".") for c in frame.columns
               if c.startswith("metrics.") and "/" in c}
    constants = [c for c in frame.columns if c.startswith("params.data.")]
    renamed.update({c: "metrics." + c.removeprefix("params.") for c in constants})
    out = frame.assign(**{c: pd.to_numeric(frame[c], errors="coerce") for c in constants})
    return out.rename(columns=renamed)


def write_sweep_run(sweep_dir: str | Path, run_id: str) -> Path:
    path = Path(sweep_dir) / SWEEP_RUN_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"run_id": run_id}) + "\n")
    return path


def sweep_run_id(sweep_dir: str | Path | None) -> str | None:
    """The parent run of the sweep whose folder is ``sweep_dir`` (None outside a sweep, or before
    :class:`PrepareStore` wrote it: a sweep launched without our callback)."""
    path = Path(sweep_dir) / SWEEP_RUN_FILE if sweep_dir else None
    if path is None or not path.is_file():
        return None
    return json.loads(path.read_text())["run_id"]


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
                reason = f"process {tags[PID_TAG]} on {tags[HOST_TAG]} ended while the run was RUNNING; {marked_by}"
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

    def find_run(self, experiment_id: str, tags: dict[str, str]) -> str | None:
        """The id of a run of ``experiment_id`` that has every tag of ``tags``, or None."""
        query = " and ".join(f"tags.`{key}` = '{value}'" for key, value in tags.items())
        found = retry_locked(lambda: self.client.search_runs([experiment_id], filter_string=query, max_results=1))
        return found[0].info.run_id if found else None

    def log_artifact(self, run_id: str, path: str | Path) -> None:
        retry_locked(lambda: self.client.log_artifact(run_id, str(path)))

    def clear_artifacts(self, run_id: str) -> None:
        """Delete every artifact of run ``run_id`` (a report run whose files are logged anew)."""
        # imported here: only a rebuilt report needs it
        from mlflow.store.artifact.artifact_repository_registry import get_artifact_repository

        artifact_uri = retry_locked(lambda: self.client.get_run(run_id)).info.artifact_uri
        get_artifact_repository(artifact_uri, tracking_uri=self.uri).delete_artifacts()

    def delete_run(self, run_id: str) -> None:
        """Soft-delete run ``run_id``: MLflow's ``deleted`` lifecycle, restorable with ``mlflow runs restore``."""
        retry_locked(lambda: self.client.delete_run(run_id))

    def start_run(self, experiment_id: str, run_name: str, tags: dict[str, str], parent_run_id: str | None = None) -> str:
        """A new RUNNING run; with ``parent_run_id`` nested under it (MLflow's ``mlflow.parentRunId``)."""
        tags = {**tags, **({PARENT_RUN_TAG: parent_run_id} if parent_run_id else {})}
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

    def log_dataset(self, run_id: str, name: str, fingerprint: str, source: str | dict[str, str],
                    features: dict, targets: dict, context: str = "training") -> None:
        """The data set as an MLflow dataset input (the run page's Datasets, the runs table's Dataset
        column): its ``name``, our ``fingerprint`` as digest (cut to MLflow's 36 characters; the
        whole one is the run's ``data_fingerprint`` tag), its ``source`` (a folder of files, or the
        generator's parameters), and the schema and shapes of its arrays."""
        import mlflow.data  # a second of imports, only for a run
        from mlflow.data.code_dataset_source import CodeDatasetSource

        origin = source if isinstance(source, str) else CodeDatasetSource(source)
        dataset = mlflow.data.from_numpy(features, source=origin, targets=targets, name=name,
                                         digest=fingerprint[:MAX_DIGEST_LENGTH])
        entity = DatasetEntity(**dataset.to_dict())
        inputs = [DatasetInput(entity, [InputTag("mlflow.data.context", context)])]
        retry_locked(lambda: self.client.log_inputs(run_id, datasets=inputs))

    def log_model(self, experiment_id: str, run_id: str, estimator: Any, input_example: Any = None) -> str:
        """The fitted estimator as an MLflow model of the run (``mlflow.sklearn``'s format, the
        Models column); returns the model's id. Made with the client (a logged model, its files, the
        run's output), so no process-wide active run or tracking URI is involved."""
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
                mlflow.sklearn.save_model(estimator, path, mlflow_model=meta, signature=signature,
                                          input_example=input_example,
                                          pip_requirements=mlflow.sklearn.get_default_pip_requirements())
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
                self.set_tags(found.info.run_id, {KILLED_REASON_TAG: f"process {found.data.tags[PID_TAG]} ended "
                                                  "while the sweep was RUNNING"})
                self.terminate(found.info.run_id, "KILLED")
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

    def run_metrics(self, run_id: str) -> dict[str, float]:
        """The last value of each metric of run ``run_id`` (a skipped run's result is the finished one's)."""
        return dict(retry_locked(lambda: self.client.get_run(run_id)).data.metrics)


class PrepareStore(Callback):
    """Hydra callback: create the store, the experiment and the sweep's parent run in the launching
    process, before any job starts, so joblib workers find them in place and log under it.

    A store that cannot be reached ends the sweep here, in one line, before any job starts. The
    parent run (``sweep-<experiment>-<time>``, tag ``svmrepro.kind=sweep``) is named in
    ``<hydra.sweep.dir>/mlflow_sweep_run.json``, which every job reads, whatever launcher runs it
    (a folder the jobs share already: Hydra writes their outputs there). Every invocation gets its
    own parent, one whose jobs were all skipped included (no child run: their runs are under the
    sweeps that made them). It ends FINISHED when the sweep does, FAILED or KILLED when one of its
    runs did; a sweep that ends without Hydra's ``on_multirun_end`` (a failed job, Ctrl-C) closes
    it at exit, KILLED if a run was killed, else FAILED; one whose process was killed outright is
    marked KILLED by the next sweep of the experiment on this host.
    """

    def __init__(self) -> None:
        self._sweep: tuple[Store, str, str] | None = None

    def on_multirun_start(self, config: DictConfig, **kwargs: Any) -> None:
        try:
            store = Store(config.tracking.uri, config.tracking.artifact_root)
        except TrackingError as exc:
            print(f"svmrepro-run: error: {exc}", file=sys.stderr)
            sys.exit(2)
        name = experiment_name(dict(config.hydra.runtime.choices))
        experiment_id = store.experiment_id(name)
        log.info("MLflow store %s ready, experiment %s", store.uri, name)
        for orphan in store.mark_orphan_sweeps_killed(experiment_id):
            log.info("sweep run %s marked KILLED: its process ended while it was RUNNING", orphan)

        tags = {KIND_TAG: SWEEP_KIND, "experiment": name, "mode": str(config.get("mode", "")),
                "sweep_dir": str(config.hydra.sweep.dir), **process_tags(),
                **source_tags(git_source())}
        run_name = f"sweep-{name}-{time.strftime('%Y%m%d-%H%M%S')}"
        run_id = store.start_run(experiment_id, run_name, tags)
        write_sweep_run(config.hydra.sweep.dir, run_id)
        self._sweep = (store, experiment_id, run_id)
        atexit.register(self._close, at_exit=True)

    def on_multirun_end(self, config: DictConfig, **kwargs: Any) -> None:
        self._close(at_exit=False)

    def _close(self, at_exit: bool) -> None:
        if self._sweep is None:
            return
        (store, experiment_id, run_id), self._sweep = self._sweep, None
        try:
            for orphan in store.mark_orphan_children_killed(experiment_id, run_id):
                log.info("run %s KILLED: its process ended while it was RUNNING", orphan)
            counts = store.child_statuses(experiment_id, run_id)
            if counts.get("KILLED") or counts.get("RUNNING"):
                status = "KILLED"
            elif counts.get("FAILED") or at_exit:
                status = "FAILED"
            else:
                status = "FINISHED"
            store.set_tags(run_id, {f"runs.{s.lower()}": str(n) for s, n in counts.items()})
            store.terminate(run_id, status)
        except Exception as exc:  # at exit, after the sweep's own error: one line, not a second traceback
            if not at_exit:
                raise
            log.warning("sweep run %s left RUNNING: %s", run_id, redact((str(exc).splitlines() or [type(exc).__name__])[0]))
