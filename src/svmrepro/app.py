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
"""

from __future__ import annotations

import logging
import os
import sys
import time

import hydra
from hydra.core.hydra_config import HydraConfig
from hydra.types import RunMode
from hydra_plugins.svmrepro_sweeper import progress
from hydra_plugins.svmrepro_sweeper.mode_sweeper import per_job
from omegaconf import DictConfig

from svmrepro import settings, signals
from svmrepro.data.files import PROJECT_ROOT
from svmrepro.errors import SvmReproError
from svmrepro.redact import redact
from svmrepro.runner import SKIPPED, run

log = logging.getLogger("svmrepro")
settings.register()

QUIET_FLAG, QUIET_ENV = "--quiet", "SVMREPRO_QUIET"
#: the pid of the svmrepro-run process, so a job knows whether it runs in a worker process
MAIN_PID_ENV = "SVMREPRO_MAIN_PID"
MULTIRUN_FLAGS = ("-m", "--multirun")


@hydra.main(config_path=str(PROJECT_ROOT / "conf"), config_name="config", version_base="1.3")
def job(cfg: DictConfig) -> str:
    hydra_cfg = HydraConfig.get()
    sweeping = hydra_cfg.mode == RunMode.MULTIRUN
    started, status = time.perf_counter(), progress.FAILED
    try:
        with signals.stopping_job(in_worker=os.environ.get(MAIN_PID_ENV) != str(os.getpid())):
            result = run(cfg, dict(hydra_cfg.runtime.choices))
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
    return result.status


def group_names() -> set[str]:
    """The config groups a run's config is made of (``conf/<group>/``), Hydra's and experiments left out."""
    return {path.name for path in (PROJECT_ROOT / "conf").iterdir() if path.is_dir()} - {"hydra", "experiment"}


def main() -> None:
    """The console script: ``--quiet`` is ours (passed on to sweep workers as ``SVMREPRO_QUIET``)."""
    signals.install()
    os.environ[MAIN_PID_ENV] = str(os.getpid())
    if QUIET_FLAG in sys.argv[1:]:
        sys.argv = [arg for arg in sys.argv if arg != QUIET_FLAG]
        os.environ[QUIET_ENV] = "1"
    if any(flag in sys.argv[1:] for flag in MULTIRUN_FLAGS):
        sys.argv = sys.argv[:1] + per_job(sys.argv[1:], group_names())
    try:
        job()
    except signals.Interrupted as stop:
        print(f"svmrepro-run: stopped by {stop}: the runs in progress were marked KILLED, the finished ones "
              "are kept; the same command runs the rest", file=sys.stderr)
        sys.exit(stop.exit_code)


if __name__ == "__main__":
    main()
