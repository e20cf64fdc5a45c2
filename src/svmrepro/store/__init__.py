"""The MLflow store: the one home of svmrepro's MLflow calls (no other module imports MLflow).

- :mod:`.location`: where the store is, and whether it can be used (reachable, kept, its artifact
  folder writable), checked before anything is written;
- :mod:`.sqlite`: a SQLite store made whole or not at all, never written when damaged or at
  another schema, and the per-run claims beside it;
- :mod:`.client`: :class:`Store`, the operations a run, a sweep and a report make;
- :mod:`.sweep_run`: a sweep's parent run (:class:`PrepareStore`, a Hydra callback);
- :mod:`.processes`: which process runs a run, and whether it has ended;
- :mod:`.names`: tag names and metric names as MLflow shows them;
- :mod:`.ui`: what ``svmrepro-ui`` serves and prints: MLflow's UI, a link to each experiment's runs table.

MLflow itself is imported with :mod:`.client` (seconds), when :class:`Store` is first asked for: a Hydra
callback of this package is made at every ``svmrepro-run``, and a bad value is one line before MLflow loads.
"""

import importlib

from svmrepro.store.location import (
    TRACKING_URI_ENV, TrackingError, check_userinfo, ensure_store, experiment_description, experiment_name, probe, sqlite_path,
    store_file, tracking_uri,
)
from svmrepro.store.names import (
    ADHOC_EXPERIMENT, ERROR_MESSAGE_TAG, ERROR_TYPE_TAG, GIT_COMMIT_TAG, HOST_TAG, KILLED_REASON_TAG, KIND_TAG,
    NOTE_TAG, NOT_RESULTS, PARENT_RUN_TAG, PID_TAG, PROCESS_START_TAG, REPORT_KIND, RESULT_KIND, RUN_KEY_TAG,
    PHASE_TAG, RUN_NAME_TAG, SWEEP_KIND, choice_tags, commit_column, is_result, mlflow_names, run_commit, run_params,
    phase_of, source_tags, svmrepro_names,
)
from svmrepro.store.processes import process_gone, process_tags
from svmrepro.store.sweep_run import SWEEP_RUN_FILE, PrepareStore, log_progress, sweep_run_id, write_sweep_run

__all__ = [
    "ADHOC_EXPERIMENT", "ERROR_MESSAGE_TAG", "ERROR_TYPE_TAG", "GIT_COMMIT_TAG", "HOST_TAG", "KILLED_REASON_TAG",
    "KIND_TAG", "NOTE_TAG", "NOT_RESULTS", "PARENT_RUN_TAG", "PHASE_TAG", "PID_TAG", "PROCESS_START_TAG", "PrepareStore",
    "REPORT_KIND", "RESULT_KIND", "RUN_KEY_TAG", "RUN_NAME_TAG", "SWEEP_KIND", "SWEEP_RUN_FILE", "Store",
    "TRACKING_URI_ENV", "TrackingError", "artifact_dict", "choice_tags", "commit_column", "ensure_store",
    "check_userinfo", "experiment_description", "experiment_name", "is_result", "log_progress", "mlflow_names", "phase_of", "probe",
    "process_gone", "process_tags", "retry_locked", "run_commit", "run_params", "source_tags", "sqlite_path",
    "store_file", "svmrepro_names", "sweep_run_id", "tracking_uri", "write_sweep_run",
]

#: the names of :mod:`.client`, imported when one is first asked for (:pep:`562`)
_CLIENT = ("Store", "artifact_dict", "retry_locked")


def __getattr__(name: str):
    if name in _CLIENT:
        value = getattr(importlib.import_module(f"{__name__}.client"), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
