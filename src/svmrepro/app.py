"""``svmrepro-run``: the Hydra command line around :func:`svmrepro.runner.run`.

    svmrepro-run dataset=gaussian_clouds algorithm=svc_linear seed=3
    svmrepro-run -m experiment=cross_training/fig3_baseline hydra/launcher=joblib
    svmrepro-run -m --quiet experiment=cross_training/fig3_baseline   # no progress lines

In a sweep each job logs a progress line when it ends (jobs done, skipped, failed, remaining,
time elapsed and left); ``--quiet`` (or ``SVMREPRO_QUIET=1``) leaves them out. A sweep with a
failed job ends with the list of failures and exit code 1; a bad value or an unreachable
tracking store ends a run (or a sweep, before any job starts) with one line and exit code 2.
SIGTERM and SIGINT (Ctrl-C) end a run or a sweep with one line and exit code 143 or 130: the
workers end, the runs in progress are marked KILLED (:mod:`svmrepro.signals`). Every line
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

import logging
import os
import sys
import time

import hydra
from hydra.core.hydra_config import HydraConfig
from hydra.errors import CompactHydraException
from hydra.types import RunMode
from hydra_plugins.svmrepro_sweeper import progress
from hydra_plugins.svmrepro_sweeper.config import ModeSweeperConf
from hydra_plugins.svmrepro_sweeper.mode_sweeper import per_job
from omegaconf import DictConfig

from svmrepro import settings, signals
from svmrepro.locations import CONF_DIR
from svmrepro.errors import SvmReproError
from svmrepro.redact import redact
from svmrepro.runner import SKIPPED, RunResult, run
from svmrepro.store import sweep_run_id

log = logging.getLogger("svmrepro")
settings.register()

QUIET_FLAG, QUIET_ENV = "--quiet", "SVMREPRO_QUIET"
#: the pid of the svmrepro-run process, so a job knows whether it runs in a worker process
MAIN_PID_ENV = "SVMREPRO_MAIN_PID"
MULTIRUN_FLAGS = ("-m", "--multirun")
#: the sweepers that run grids and ignore what a job returns; any other is taken to minimize it
GRID_SWEEPERS = (ModeSweeperConf._target_, "hydra._internal.core_plugins.basic_sweeper.BasicSweeper")


class NoValidationSplit(SvmReproError, CompactHydraException):
    """An optimizing sweeper's job whose data set has no validation split: nothing to minimize.

    A CompactHydraException, so Hydra prints its message alone when the sweeper re-raises it."""


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
    hydra_cfg = HydraConfig.get()
    sweeping = hydra_cfg.mode == RunMode.MULTIRUN
    started, status = time.perf_counter(), progress.FAILED
    try:
        with signals.stopping_job(in_worker=os.environ.get(MAIN_PID_ENV) != str(os.getpid())):
            result = run(cfg, dict(hydra_cfg.runtime.choices), overrides=list(hydra_cfg.overrides.task),
                         parent_run_id=sweep_run_id(hydra_cfg.sweep.dir) if sweeping else None)
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
    except Exception:
        if sweeping:  # a bug or a failed fit: its traceback in the job's log (and, once a run exists, in MLflow)
            log.exception("job %s failed", hydra_cfg.job.num)
        raise
    finally:
        if sweeping:
            line = progress.record(hydra_cfg.sweep.dir, hydra_cfg.job.num, status, time.perf_counter() - started)
            if line and os.environ.get(QUIET_ENV, "") in ("", "0"):
                log.info(line)
    return value


def group_names() -> set[str]:
    """The config groups a run's config is made of (``conf/<group>/``), Hydra's and experiments left out."""
    return {path.name for path in CONF_DIR.iterdir() if path.is_dir()} - {"hydra", "experiment"}


def other_sweeper(arguments: list[str]) -> bool:
    """Whether the command line picks a sweeper other than svmrepro's (:func:`per_job` is for it alone)."""
    return any(arg.startswith("hydra/sweeper=") and arg != "hydra/sweeper=svmrepro" for arg in arguments)


def main() -> None:
    """The console script: ``--quiet`` is ours (passed on to sweep workers as ``SVMREPRO_QUIET``)."""
    signals.install()
    os.environ[MAIN_PID_ENV] = str(os.getpid())
    if QUIET_FLAG in sys.argv[1:]:
        sys.argv = [arg for arg in sys.argv if arg != QUIET_FLAG]
        os.environ[QUIET_ENV] = "1"
    if any(flag in sys.argv[1:] for flag in MULTIRUN_FLAGS) and not other_sweeper(sys.argv[1:]):
        sys.argv = sys.argv[:1] + per_job(sys.argv[1:], group_names())
    try:
        job()
    except signals.Interrupted as stop:
        print(f"svmrepro-run: stopped by {stop}: the runs in progress were marked KILLED, the finished ones "
              "are kept; the same command runs the rest", file=sys.stderr)
        sys.exit(stop.exit_code)


if __name__ == "__main__":
    main()
