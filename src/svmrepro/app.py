"""``svmrepro-run``: the Hydra command line around :func:`svmrepro.runner.run`.

    svmrepro-run dataset=gaussian_clouds algorithm=svc_linear seed=3
    svmrepro-run -m experiment=cross_training/fig3_baseline hydra/launcher=joblib
    svmrepro-run -m --quiet experiment=cross_training/fig3_baseline   # no progress lines

In a sweep each job logs a progress line when it ends (jobs done, skipped, failed, remaining,
time elapsed and left); ``--quiet`` (or ``SVMREPRO_QUIET=1``) leaves them out. A sweep with a
failed job ends with the list of failures and exit code 1; a bad value or an unreachable
tracking store ends a run (or a sweep, before any job starts) with one line and exit code 2.
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
from omegaconf import DictConfig

from svmrepro import settings
from svmrepro.data.files import PROJECT_ROOT
from svmrepro.errors import SvmReproError
from svmrepro.runner import SKIPPED, run

log = logging.getLogger("svmrepro")
settings.register()

QUIET_FLAG, QUIET_ENV = "--quiet", "SVMREPRO_QUIET"


@hydra.main(config_path=str(PROJECT_ROOT / "conf"), config_name="config", version_base="1.3")
def job(cfg: DictConfig) -> str:
    hydra_cfg = HydraConfig.get()
    sweeping = hydra_cfg.mode == RunMode.MULTIRUN
    started, status = time.perf_counter(), progress.FAILED
    try:
        result = run(cfg, dict(hydra_cfg.runtime.choices))
        status = progress.SKIPPED if result.status == SKIPPED else progress.DONE
    except SvmReproError as exc:
        if sweeping:
            raise  # the sweep goes on; the sweeper lists the failed jobs at the end
        print(f"svmrepro-run: error: {exc}", file=sys.stderr)
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


def main() -> None:
    """The console script: ``--quiet`` is ours (passed on to sweep workers as ``SVMREPRO_QUIET``)."""
    if QUIET_FLAG in sys.argv[1:]:
        sys.argv = [arg for arg in sys.argv if arg != QUIET_FLAG]
        os.environ[QUIET_ENV] = "1"
    job()


if __name__ == "__main__":
    main()
