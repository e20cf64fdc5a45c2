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
from typing import TYPE_CHECKING, Any

from hydra.experimental.callback import Callback
from omegaconf import DictConfig, OmegaConf

from svmrepro import signals
from svmrepro.environment import git_source
from svmrepro.errors import error_line
from svmrepro.redact import redact
from svmrepro.store.location import TrackingError, experiment_description, experiment_name
from svmrepro.store.names import (
    ERROR_MESSAGE_TAG, KIND_TAG, NOTE_TAG, PARENT_RUN_TAG, SWEEP_KIND, as_text, source_tags,
)
from svmrepro.store.processes import process_tags
from svmrepro.sweep import failures, progress
from svmrepro.sweep.jobs import mode_sweep
from svmrepro.writing import write_file

if TYPE_CHECKING:
    import pandas as pd

    from svmrepro.store.client import Store

log = logging.getLogger(__name__)

#: in a sweep's folder (hydra.sweep.dir): the parent run its jobs log under (:class:`PrepareStore`)
SWEEP_RUN_FILE = "mlflow_sweep_run.json"
#: the sweep run's count of failed jobs (their lines: the artifact ``failures.txt``; the first: ``error_message``)
FAILED_JOBS_TAG = "jobs.failed"
#: the sweep run's artifact that sums it up at its end (:func:`summary`)
SUMMARY_FILE = "sweep_summary.json"
#: where an optimizing sweeper (Hydra's Optuna sweeper) leaves its best trial, in the sweep's folder
OPTIMIZATION_RESULTS = "optimization_results.yaml"
#: the metrics of its runs a sweep's parent run sums up as it ends (:func:`summary_metrics`): its row
#: of the runs table in svmrepro-ui's view, and a chart section of the UI ("mean")
SUMMARY_METRICS = ("test_error", "test_mse", "n_sv", "fit_time_s")


def summary_name(metric: str) -> str:
    """The parent run's metric that sums ``metric`` up (``mean/test_error``): a name of its own, so that
    no search of results (``metrics.test_error < 0.1``) and no chart of a metric takes the sweep for a run."""
    return f"mean/{metric}"


def summary_metrics(runs: pd.DataFrame) -> dict[str, float]:
    """The mean of each of :data:`SUMMARY_METRICS` over ``runs`` (a runs frame: ``metrics.<name>``
    columns), by :func:`summary_name`; a run without the metric is left out, a metric no run has too."""
    found = {}
    for metric in SUMMARY_METRICS:
        values = runs[f"metrics.{metric}"].dropna() if f"metrics.{metric}" in runs else ()
        if len(values):
            found[summary_name(metric)] = float(values.mean())
    return found


def failed_job_lines(sweep_dir: Path) -> list[str]:
    """The line of each failed job of the sweep in ``sweep_dir``, by job number (none without the file)."""
    if not (sweep_dir / failures.FILE).is_file():
        return []
    return [line for _, line in sorted(failures.read(sweep_dir).items())]


def sweep_params(config: DictConfig) -> dict[str, str]:
    """What the sweep runs, as its parent run's params: the experiment, the mode, the sweeper, the
    command line's overrides (a password in them masked), and each axis of the experiment's sweep for the mode (``sweep.<key>``;
    ``sweep``, in JSON, for a list of grids) and of the sweeper's own (``sweeper.<key>``)."""
    mode = as_text(config.get("mode", ""))
    params = {"experiment": experiment_name(dict(config.hydra.runtime.choices)), "mode": mode,
              "sweeper": str(config.hydra.runtime.choices.get("hydra/sweeper")),
              "overrides": redact(" ".join(config.hydra.overrides.task))}
    axes = [("sweep", mode_sweep(config, mode)), ("sweeper", config.hydra.sweeper.get("params"))]
    for prefix, node in axes:
        # the confirm mode's sweep is built in Python (:func:`svmrepro.sweep.jobs.mode_sweep`): plain already
        plain = OmegaConf.to_container(node, resolve=False) if OmegaConf.is_config(node) else node
        if isinstance(plain, dict):
            params.update({f"{prefix}.{key}": str(value) for key, value in plain.items()})
        elif plain:
            params[prefix] = json.dumps(plain)
    return params


def best_trial(sweep_dir: Path) -> tuple[dict[str, object], dict[str, float]]:
    """An optimizing sweeper's best trial (:data:`OPTIMIZATION_RESULTS`) as params (``best.<key>``)
    and metrics (``best_value``); none when the sweeper left none (a grid, or several objectives)."""
    path = sweep_dir / OPTIMIZATION_RESULTS
    found = OmegaConf.to_container(OmegaConf.load(path)) if path.is_file() else {}
    if not isinstance(found, dict) or "best_params" not in found:
        return {}, {}
    best = {f"best.{key}": value for key, value in (found["best_params"] or {}).items()}
    return best, ({"best_value": float(found["best_value"])} if found.get("best_value") is not None else {})


def job_counts(sweep_dir: Path, runs: dict[str, int], failed_jobs: int) -> dict[str, int]:
    """Jobs by how they ended: ``done`` (ran), ``skipped`` (had FINISHED before), ``failed``, and
    ``total``; as the svmrepro sweeper recorded them, else (another sweeper) from the runs made."""
    recorded = progress.counts(sweep_dir)
    if recorded is not None:
        total, ended = recorded
        return {"total": total, **{status: ended[status] for status in (progress.DONE, progress.SKIPPED, progress.FAILED)}}
    done = runs.get("FINISHED", 0)
    failed = max(failed_jobs, sum(n for status, n in runs.items() if status != "FINISHED"))
    return {"total": done + failed, progress.DONE: done, progress.SKIPPED: 0, progress.FAILED: failed}


def log_progress(sweep_dir: str | Path, uri: str | None, artifact_root: str | None = None) -> None:
    """The sweep's job counts so far as metrics of its parent run (``jobs/done``, ``jobs/skipped``,
    ``jobs/failed``, at the step of the number of jobs ended), called by each job as it ends,
    wherever it runs. A count that cannot be logged is warned about: the job's run is whole without it."""
    run_id, recorded = sweep_run_id(sweep_dir), progress.counts(sweep_dir)
    if run_id is None or recorded is None:
        return
    _, ended = recorded
    from svmrepro.store.client import Store  # MLflow: imported once a sweep runs, not when Hydra starts

    try:
        Store(uri, artifact_root).log_metrics(
            run_id, {f"jobs/{status}": ended[status] for status in (progress.DONE, progress.SKIPPED, progress.FAILED)},
            {}, step=sum(ended.values()))
    except Exception as exc:  # noqa: BLE001  (a progress count is not worth a failed job)
        log.warning("sweep run %s: progress not logged: %s", run_id, error_line(exc))


def write_sweep_run(sweep_dir: str | Path, run_id: str) -> Path:
    return write_file(Path(sweep_dir) / SWEEP_RUN_FILE, json.dumps({"run_id": run_id}) + "\n", root=sweep_dir)


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
    (a folder the jobs share already: Hydra writes their outputs there). Its params are what the
    sweep runs (:func:`sweep_params`); each job adds its count of jobs ended (:func:`log_progress`);
    at its end it holds the counts of jobs and runs, the mean of each key metric over the runs it made
    that FINISHED (:func:`summary_metrics`), an optimizing sweeper's best trial (:func:`best_trial`) and
    :data:`SUMMARY_FILE`. A sweep whose jobs were all skipped made no run
    (their runs are under the sweeps that made them), nor did one the checks before compute stopped
    (:mod:`svmrepro.preflight`): its parent run is deleted at its end, so an invocation that ran nothing
    adds none. It ends FINISHED when the sweep does, FAILED or KILLED
    when one of its runs did; a sweep that ends without Hydra's ``on_multirun_end`` (a failed job,
    Ctrl-C) closes it at exit, KILLED if a run was killed, else FAILED; one whose process was killed
    outright is marked KILLED by the next sweep of the experiment on this host.
    """

    def __init__(self) -> None:
        self._sweep: tuple[Store, str, str, Path, dict[str, str]] | None = None

    def on_multirun_start(self, config: DictConfig, **kwargs: Any) -> None:
        from svmrepro.store.client import Store  # MLflow: imported once a sweep runs, not when Hydra starts

        name = experiment_name(dict(config.hydra.runtime.choices))
        try:
            store = Store(config.tracking.uri, config.tracking.artifact_root)
            experiment_id = store.experiment_id(name, experiment_description(config))
        except TrackingError as exc:
            print(redact(f"svmrepro-run: error: {exc}"), file=sys.stderr)
            sys.exit(2)
        log.info("MLflow store %s ready, experiment %s", store.uri, name)
        for orphan in store.mark_orphan_sweeps_killed(experiment_id):
            log.info("sweep run %s marked KILLED: its process ended while it was RUNNING", orphan)

        params = sweep_params(config)
        tags = {KIND_TAG: SWEEP_KIND, "experiment": name, "mode": params["mode"],
                "sweep_dir": str(config.hydra.sweep.dir), **process_tags(), **source_tags(git_source()),
                NOTE_TAG: f"Sweep of {name} ({params['mode']} mode): {params['overrides'] or 'no overrides'}."}
        run_name = f"sweep-{name}-{time.strftime('%Y%m%d-%H%M%S')}"
        run_id = store.start_run(experiment_id, run_name, tags)
        store.log_params(run_id, params)
        write_sweep_run(config.hydra.sweep.dir, run_id)
        self._sweep = (store, experiment_id, run_id, Path(config.hydra.sweep.dir), params)
        atexit.register(self._close, at_exit=True)

    def on_multirun_end(self, config: DictConfig, **kwargs: Any) -> None:
        try:
            self._close(at_exit=False)
        finally:  # a stop held since the sweep's end (the sweeper's signals.hold) stops the process now
            signals.release()

    def _close(self, at_exit: bool) -> None:
        if self._sweep is None:
            return
        (store, experiment_id, run_id, sweep_dir, params), self._sweep = self._sweep, None
        try:
            for orphan in store.mark_orphan_children_killed(experiment_id, run_id):
                log.info("run %s KILLED: its process ended while it was RUNNING", orphan)
            counts = store.child_statuses(experiment_id, run_id)
            failed_jobs = failed_job_lines(sweep_dir)
            if not counts and not failed_jobs:  # every job skipped, or the checks before compute stopped it
                store.terminate(run_id, "FINISHED")
                store.delete_run(run_id)
                log.info("sweep run %s deleted: the sweep made no run", run_id)
                return
            if counts.get("KILLED") or counts.get("RUNNING"):
                status = "KILLED"
            elif counts.get("FAILED") or failed_jobs or at_exit:
                status = "FAILED"
            else:
                status = "FINISHED"
            jobs = job_counts(sweep_dir, counts, len(failed_jobs))
            best_params, best_metrics = best_trial(sweep_dir)
            finished = f"tags.`{PARENT_RUN_TAG}` = '{run_id}' and attributes.status = 'FINISHED'"
            means = summary_metrics(store.runs_frame(store.experiments()[experiment_id], finished))
            store.set_tags(run_id, {f"runs.{s.lower()}": str(n) for s, n in counts.items()})
            store.log_params(run_id, best_params)
            store.log_metrics(run_id, {**{f"jobs/{k}": v for k, v in jobs.items()}, **best_metrics, **means}, {},
                              step=jobs["total"])
            if failed_jobs:  # a job may fail before its run exists (a bad value): its reason is kept here
                store.set_tags(run_id, {FAILED_JOBS_TAG: str(len(failed_jobs)), ERROR_MESSAGE_TAG: failed_jobs[0]})
                store.log_text(run_id, "\n".join(failed_jobs) + "\n", failures.FILE.replace(".jsonl", ".txt"))
            store.log_json(run_id, {"sweep": params, "status": status, "jobs": jobs, "runs": counts, "mean": means,
                                    "best": {**best_params, **best_metrics}, "failed_jobs": failed_jobs}, SUMMARY_FILE)
            store.terminate(run_id, status)
        except Exception as exc:  # at exit, after the sweep's own error: one line, not a second traceback
            if not at_exit:
                raise
            try:  # its summary could not be written (a full disk?): its end, one small update, may still be
                store.terminate(run_id, "FAILED")
            except Exception:  # noqa: BLE001
                log.warning("sweep run %s left RUNNING: %s", run_id, error_line(exc))
            else:
                log.warning("sweep run %s marked FAILED without its summary: %s", run_id, error_line(exc))
