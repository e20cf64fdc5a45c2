"""MLflow tracking: where the store is, and logging that survives concurrent writers.

The embedded default is a SQLite store at ``<project>/mlflow.db`` with artifacts in
``<project>/mlartifacts``. Several joblib workers may log to one SQLite file: the launching
process creates the store and the experiment first (:class:`PrepareStore`, a Hydra callback),
because workers racing on a new store's schema lose runs, and every call retries while SQLite
answers "database is locked".
"""

from __future__ import annotations

import json
import logging
import os
import random
import time
from pathlib import Path
from typing import Any, Callable, TypeVar
from urllib.parse import urlparse

from hydra.experimental.callback import Callback
from mlflow.entities import Metric, Param, RunTag
from mlflow.tracking import MlflowClient
from omegaconf import DictConfig

from svmrepro.data.files import PROJECT_ROOT

log = logging.getLogger(__name__)
T = TypeVar("T")

#: MLflow's limits for one log_batch call and for a param value
MAX_BATCH_PARAMS = 100
MAX_PARAM_LENGTH = 6000
RUN_KEY_TAG = "run_key"
ADHOC_EXPERIMENT = "adhoc"


def tracking_uri(configured: str | None = None) -> str:
    """``tracking.uri``, else ``$MLFLOW_TRACKING_URI``, else the project's SQLite store."""
    if configured:
        return configured
    return os.environ.get("MLFLOW_TRACKING_URI") or f"sqlite:///{PROJECT_ROOT / 'mlflow.db'}"


def experiment_name(choices: dict[str, Any]) -> str:
    """One MLflow experiment per ``<paper>/<id>`` (the ``experiment`` option chosen)."""
    return choices.get("experiment") or ADHOC_EXPERIMENT


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
        self.client = MlflowClient(tracking_uri=self.uri)
        self._artifact_root = artifact_root

    def _artifact_location(self, name: str) -> str | None:
        if self._artifact_root:
            root = Path(self._artifact_root)
        elif self.uri.startswith("sqlite:///"):
            root = Path(urlparse(self.uri).path).parent / "mlartifacts"
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

    def finished_run_id(self, experiment_id: str, key: str) -> str | None:
        runs = retry_locked(
            lambda: self.client.search_runs(
                [experiment_id],
                filter_string=f"tags.{RUN_KEY_TAG} = '{key}' and attributes.status = 'FINISHED'",
                max_results=1,
            )
        )
        return runs[0].info.run_id if runs else None

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

    Runs before any job of a multirun starts, so joblib workers find both in place.
    """

    def on_multirun_start(self, config: DictConfig, **kwargs: Any) -> None:
        store = Store(config.tracking.uri, config.tracking.artifact_root)
        name = experiment_name(dict(config.hydra.runtime.choices))
        store.experiment_id(name)
        log.info("MLflow store %s ready, experiment %s", store.uri, name)
