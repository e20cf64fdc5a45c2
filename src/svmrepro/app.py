"""``svmrepro-run``: the Hydra command line around :func:`svmrepro.runner.run`.

    svmrepro-run dataset=gaussian_clouds algorithm=svc_linear seed=3
    svmrepro-run -m experiment=cross_training/fig3_baseline hydra/launcher=joblib
    svmrepro-run -m --quiet experiment=cross_training/fig3_baseline   # no progress lines

In a sweep each job logs a progress line when it ends (jobs done, skipped, failed, remaining,
time elapsed and left); ``--quiet`` (or ``SVMREPRO_QUIET=1``) leaves them out. A sweep with a
failed job ends with the list of failures and exit code 1; a bad value or an unreachable
tracking store ends a run (or a sweep, before any job starts) with one line and exit code 2.
SIGTERM and SIGINT (Ctrl-C) end a run or a sweep with one line and exit code 143 or 130: the
workers end, the runs in progress are marked KILLED (:mod:`svmrepro.signals`); so does a signal
while the program starts (its imports) or ends (its workers shutting down). Every line
printed or logged has the password of a URI masked (:mod:`svmrepro.redact`).

The sweeper is svmrepro's (``hydra/sweeper: svmrepro``, :mod:`hydra_plugins.svmrepro_sweeper`);
``hydra/sweeper=basic`` runs Hydra's on the command line's sweep alone, and an optimizing sweeper
minimizes what a job returns, the run's validation error (``val_error``, ``val_mse`` in
regression; a skipped run's is the finished run's):

    svmrepro-run -m hydra/sweeper=optuna hydra.sweeper.n_trials=20 dataset=covtype dataset.n_val=1000 \
        'algorithm.C=interval(0.1,10)'

Without a validation split a job returns None, which the grid sweepers (svmrepro's, Hydra's basic)
ignore; under any other sweeper that job fails with one line naming the missing split (a test
error is never offered for tuning).
"""

from __future__ import annotations

from svmrepro.stop_line import one_line_stop  # first: a Ctrl-C during the slow imports below is one line

one_line_stop("svmrepro-run", __name__)

import logging
import os
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import hydra
from hydra.core.hydra_config import HydraConfig
from hydra.errors import CompactHydraException
from hydra.experimental.callback import Callback
from hydra.types import RunMode
from omegaconf import DictConfig

from svmrepro import cluster_watch, settings, signals
from svmrepro.completion import as_ours
from svmrepro.compose import check_config_folders, config_groups
from svmrepro.locations import (
    CONF_DIR,
    CONFIG_DIRS_ENV,
    check_writable,
    config_dir_option,
    config_dirs_value,
    user_config_dirs,
)
from svmrepro.errors import SvmReproError, SweepStopped, error_line, storage_failure
from svmrepro.options import unknown_options
from svmrepro.redact import redact
from svmrepro.signals import MAIN_PID_ENV
from svmrepro.sweep import SWEEPER_TARGET, failures, progress
from svmrepro.sweep.folder import claim as claim_sweep_folder
from svmrepro.sweep.jobs import per_job

if TYPE_CHECKING:
    from svmrepro.runner import RunResult

log = logging.getLogger("svmrepro")
settings.register()

QUIET_FLAG = "--quiet"
MULTIRUN_FLAGS = ("-m", "--multirun")
#: the sweepers that run grids and ignore what a job returns; any other is taken to minimize it
GRID_SWEEPERS = (SWEEPER_TARGET, "hydra._internal.core_plugins.basic_sweeper.BasicSweeper")


class NoValidationSplit(SvmReproError, CompactHydraException):
    """An optimizing sweeper's job whose data set has no validation split: nothing to minimize.

    A CompactHydraException, so Hydra prints its message alone when the sweeper re-raises it."""


class WritableOutputs(Callback):
    """Hydra callback, the first: the run's or sweep's output folder can be written, checked before
    Hydra makes it (a traceback) and the store is opened; otherwise one line and exit 2."""

    def on_run_start(self, config: DictConfig, **kwargs: Any) -> None:
        self._check(Path(config.hydra.run.dir), "hydra.run.dir")

    def on_multirun_start(self, config: DictConfig, **kwargs: Any) -> None:
        """The sweep's folder is its own (:func:`svmrepro.sweep.folder.claim`), made before any callback
        writes in it."""
        try:
            folder = claim_sweep_folder(config)
        except ValueError as exc:
            print(f"svmrepro-run: error: hydra.sweep.dir: {exc}; name another folder", file=sys.stderr)
            sys.exit(2)
        except OSError as exc:
            print(f"svmrepro-run: error: the output folder {Path(str(config.hydra.sweep.dir)).resolve()} "
                  f"(hydra.sweep.dir) cannot be made: {exc.strerror or exc}", file=sys.stderr)
            sys.exit(2)
        self._check(folder, "hydra.sweep.dir")

    @staticmethod
    def _check(folder: Path, key: str) -> None:
        try:
            check_writable(folder)
        except OSError as exc:
            print(f"svmrepro-run: error: the output folder {folder.resolve()} ({key}) cannot be written: "
                  f"{exc.strerror or exc}", file=sys.stderr)
            sys.exit(2)


def objective(result: RunResult, hydra_cfg) -> float | None:
    """What the job returns: the run's validation error; None, or under an optimizing sweeper
    :class:`NoValidationSplit`, when the data set has no validation split."""
    value = result.validation_error
    if value is None and hydra_cfg.mode == RunMode.MULTIRUN and hydra_cfg.sweeper.get("_target_") not in GRID_SWEEPERS:
        sweeper = hydra_cfg.runtime.choices.get("hydra/sweeper")
        raise NoValidationSplit(
            f"svmrepro-run: error: job {hydra_cfg.job.num} has no validation error for sweeper {sweeper} to minimize: "
            f"data set {hydra_cfg.runtime.choices.get('dataset')} has no validation split (one that has: "
            "dataset=covtype dataset.n_val=1000); the test error is never tuned on")
    return value


@hydra.main(config_path=str(CONF_DIR), config_name="config", version_base="1.3")
def job(cfg: DictConfig) -> float | None:
    signals.release(signals.START)  # Hydra has composed: a stop held meanwhile stops the process here
    hydra_cfg = HydraConfig.get()
    sweeping = hydra_cfg.mode == RunMode.MULTIRUN
    # a full disk fails every line written to the job's log file, each with a "--- Logging error ---"
    # traceback on the console: the console keeps the lines, the log file loses them quietly
    logging.raiseExceptions = False
    started, status = time.perf_counter(), progress.FAILED
    try:
        if sweeping and failures.stopped(hydra_cfg.sweep.dir):  # another job's write was refused
            raise SweepStopped("not started: the sweep stopped at a job whose write the file system refused")
        with signals.stopping_job(in_worker=signals.in_sweep_worker()):
            # imported when a run runs, not with the command line: scikit-learn, MLflow and the algorithms
            # take seconds, which shell completion (-sc query) and --help would wait for at every Tab
            from svmrepro.runner import SKIPPED, run
            from svmrepro.store import sweep_run_id

            with cluster_watch.watching(cfg.parallel.backend, cfg.parallel.address, cfg.parallel.timeout):
                result = run(cfg, dict(hydra_cfg.runtime.choices), overrides=list(hydra_cfg.overrides.task),
                             parent_run_id=sweep_run_id(hydra_cfg.sweep.dir) if sweeping else None,
                             job_files=job_files(hydra_cfg))
        value = objective(result, hydra_cfg)
        status = progress.SKIPPED if result.status == SKIPPED else progress.DONE
    except signals.Interrupted:
        sweeping = False  # the sweep stops: no progress line
        raise
    except SvmReproError as exc:
        if sweeping:
            raise  # the sweep goes on; the sweeper lists the failed jobs at the end
        print(redact(f"svmrepro-run: error: {exc}"), file=sys.stderr)
        sys.exit(2)
    except Exception as exc:  # a bug or a failed fit: its traceback in the job's log (and, once a run exists, in MLflow)
        places = [str(place) for place in (cfg.tracking.get("artifact_root"), hydra_cfg.runtime.output_dir)
                  if place and "://" not in str(place)]
        full = storage_failure(exc, redact(str(cfg.tracking.uri)), places)
        if sweeping:
            if full:  # the machine's failure, not the code's: one line, and the sweep stops
                failures.stop(hydra_cfg.sweep.dir)
                log.error("job %s failed: %s", hydra_cfg.job.num, full)
            else:
                log.exception("job %s failed", hydra_cfg.job.num)
            raise
        if full:
            print(redact(f"svmrepro-run: error: the run failed: {full}"), file=sys.stderr)
            sys.exit(1)
        # not raised to Hydra, which would print "Error executing job with overrides: [...]" with a
        # password of tracking.uri in clear: the traceback goes through the job's (masking) logging
        log.exception("the run failed")
        print(redact(f"svmrepro-run: error: the run failed: {error_line(exc)} (traceback above and in "
                     f"{hydra_cfg.runtime.output_dir})"), file=sys.stderr)
        sys.exit(1)
    finally:
        if sweeping:
            from svmrepro.store import log_progress

            try:
                line = progress.record(hydra_cfg.sweep.dir, hydra_cfg.job.num, status, time.perf_counter() - started)
                log_progress(hydra_cfg.sweep.dir, cfg.tracking.uri, cfg.tracking.artifact_root)
            except Exception as exc:  # the disk that failed the job fails its progress too: the job's own error stands
                if not storage_failure(exc):
                    raise
                line = None
            if line and not progress.quiet():
                log.info(line)
    return value


def job_files(hydra_cfg) -> list[Path]:
    """What Hydra keeps of the job in its output folder: its ``.hydra/`` folder (config, overrides,
    Hydra's config) and its log file (Hydra's default job logging: ``<job name>.log``)."""
    folder = Path(hydra_cfg.runtime.output_dir)
    return [*([folder / hydra_cfg.output_subdir] if hydra_cfg.output_subdir else []), folder / f"{hydra_cfg.job.name}.log"]


def other_sweeper(arguments: list[str]) -> bool:
    """Whether the command line picks a sweeper other than svmrepro's (:func:`per_job` is for it alone)."""
    return any(arg.startswith("hydra/sweeper=") and arg != "hydra/sweeper=svmrepro" for arg in arguments)


def run_hydra(arguments: list[str]) -> None:
    """Hydra's run or sweep of svmrepro-run's ``arguments``, in this process (:mod:`svmrepro.sweeps` runs several in
    one); its mistakes and failures end it with ``SystemExit`` and their exit code, as they end svmrepro-run.
    ``--quiet`` is taken out for ``SVMREPRO_QUIET``, which the sweep's workers inherit."""
    arguments = as_ours(arguments)
    if QUIET_FLAG in arguments:
        arguments = [arg for arg in arguments if arg != QUIET_FLAG]
        os.environ[progress.QUIET_ENV] = "1"
    if any(flag in arguments for flag in MULTIRUN_FLAGS) and not other_sweeper(arguments):
        arguments = per_job(arguments, config_groups() - {"experiment"})
    sys.argv = sys.argv[:1] + arguments
    signals.hold(signals.START)  # a stop while Hydra composes waits for the job or the sweeper to start (or Hydra to end)
    try:
        job()
    finally:
        if (stop := signals.released(signals.START)) is not None:  # Hydra ended before either started
            raise stop


def main() -> None:
    """The console script: ``--quiet`` is ours (passed on to sweep workers as ``SVMREPRO_QUIET``), and so is
    the shell completion of bash and zsh (``-sc install=bash``). From the moment its handlers are in place a stop
    is its line and 128 + the signal, during the checks before Hydra composes too (an :class:`~svmrepro.signals.
    Interrupted` left to Python's own end would be the line and exit code 1: CI, stop 66)."""
    try:
        signals.install()
        _checked_run(sys.argv[1:])
    except signals.Interrupted as stop:
        print(stop_line(stop), file=sys.stderr)
        sys.exit(stop.exit_code)
    finally:  # a stop while the process ends (joblib's workers shutting down) still exits 128 + the signal
        signals.exit_on_signal(stop_line)
        if (held := signals.released()) is not None:  # held through a sweep's end that failed before its run closed
            print(stop_line(held), file=sys.stderr)
            sys.exit(held.exit_code)


def _checked_run(argv: list[str]) -> None:
    """The config folder and the options checked (one line each and exit code 2), then Hydra's run or sweep."""
    try:
        folder = config_dir_option(argv)
        check_config_folders([folder] if folder else [])
        if folder:
            # its files named in the checks' lines (svmrepro.preflight), as under svmrepro-reproduce --config-dir
            os.environ[CONFIG_DIRS_ENV] = config_dirs_value([*user_config_dirs(), folder])
    except SvmReproError as exc:
        print(f"svmrepro-run: error: {exc}", file=sys.stderr)
        sys.exit(2)
    # a misspelled option is the cause of whatever else would fail: one line each, before Hydra composes
    if unknown := unknown_options(argv, config_groups()):
        print(*(f"svmrepro-run: error: {line}" for line in unknown), sep="\n", file=sys.stderr)
        sys.exit(2)
    os.environ[MAIN_PID_ENV] = str(os.getpid())
    run_hydra(argv)


def stop_line(stop: signals.Interrupted) -> str:
    return (f"svmrepro-run: stopped by {stop}: the runs in progress were marked KILLED, the finished ones are kept; "
            "the same command runs the rest")


if __name__ == "__main__":
    main()
