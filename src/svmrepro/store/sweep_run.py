"""A sweep's parent run: made by the launching process before any job starts
(:class:`PrepareStore`, a Hydra callback), named in the sweep's folder for every job to log under.

Several joblib workers may log to one SQLite file: the launching process creates the store and
the experiment first, so the workers never race on them.
"""

from __future__ import annotations

import atexit
import json
import logging
import sys
import time
from pathlib import Path
from typing import Any

from hydra.experimental.callback import Callback
from hydra_plugins.svmrepro_sweeper import failures
from omegaconf import DictConfig

from svmrepro.environment import git_source
from svmrepro.errors import error_line
from svmrepro.redact import redact
from svmrepro.store.client import Store
from svmrepro.store.location import TrackingError, experiment_name
from svmrepro.store.names import ERROR_MESSAGE_TAG, KIND_TAG, SWEEP_KIND, source_tags
from svmrepro.store.processes import process_tags

log = logging.getLogger(__name__)

#: in a sweep's folder (hydra.sweep.dir): the parent run its jobs log under (:class:`PrepareStore`)
SWEEP_RUN_FILE = "mlflow_sweep_run.json"
#: the sweep run's count of failed jobs (their lines: the artifact ``failures.txt``; the first: ``error_message``)
FAILED_JOBS_TAG = "jobs.failed"


def failed_job_lines(sweep_dir: Path) -> list[str]:
    """The line of each failed job of the sweep in ``sweep_dir``, by job number (none without the file)."""
    if not (sweep_dir / failures.FILE).is_file():
        return []
    return [line for _, line in sorted(failures.read(sweep_dir).items())]


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
        self._sweep: tuple[Store, str, str, Path] | None = None

    def on_multirun_start(self, config: DictConfig, **kwargs: Any) -> None:
        name = experiment_name(dict(config.hydra.runtime.choices))
        try:
            store = Store(config.tracking.uri, config.tracking.artifact_root)
            experiment_id = store.experiment_id(name)
        except TrackingError as exc:
            print(redact(f"svmrepro-run: error: {exc}"), file=sys.stderr)
            sys.exit(2)
        log.info("MLflow store %s ready, experiment %s", store.uri, name)
        for orphan in store.mark_orphan_sweeps_killed(experiment_id):
            log.info("sweep run %s marked KILLED: its process ended while it was RUNNING", orphan)

        tags = {KIND_TAG: SWEEP_KIND, "experiment": name, "mode": str(config.get("mode", "")),
                "sweep_dir": str(config.hydra.sweep.dir), **process_tags(),
                **source_tags(git_source())}
        run_name = f"sweep-{name}-{time.strftime('%Y%m%d-%H%M%S')}"
        run_id = store.start_run(experiment_id, run_name, tags)
        write_sweep_run(config.hydra.sweep.dir, run_id)
        self._sweep = (store, experiment_id, run_id, Path(config.hydra.sweep.dir))
        atexit.register(self._close, at_exit=True)

    def on_multirun_end(self, config: DictConfig, **kwargs: Any) -> None:
        self._close(at_exit=False)

    def _close(self, at_exit: bool) -> None:
        if self._sweep is None:
            return
        (store, experiment_id, run_id, sweep_dir), self._sweep = self._sweep, None
        try:
            for orphan in store.mark_orphan_children_killed(experiment_id, run_id):
                log.info("run %s KILLED: its process ended while it was RUNNING", orphan)
            counts = store.child_statuses(experiment_id, run_id)
            failed_jobs = failed_job_lines(sweep_dir)
            if counts.get("KILLED") or counts.get("RUNNING"):
                status = "KILLED"
            elif counts.get("FAILED") or failed_jobs or at_exit:
                status = "FAILED"
            else:
                status = "FINISHED"
            store.set_tags(run_id, {f"runs.{s.lower()}": str(n) for s, n in counts.items()})
            if failed_jobs:  # a job may fail before its run exists (a bad value): its reason is kept here
                store.set_tags(run_id, {FAILED_JOBS_TAG: str(len(failed_jobs)), ERROR_MESSAGE_TAG: failed_jobs[0]})
                store.log_text(run_id, "\n".join(failed_jobs) + "\n", failures.FILE.replace(".jsonl", ".txt"))
            store.terminate(run_id, status)
        except Exception as exc:  # at exit, after the sweep's own error: one line, not a second traceback
            if not at_exit:
                raise
            log.warning("sweep run %s left RUNNING: %s", run_id, error_line(exc))
