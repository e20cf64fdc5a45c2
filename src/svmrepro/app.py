"""``svmrepro-run``: the Hydra command line around :func:`svmrepro.runner.run`.

    svmrepro-run dataset=gaussian_clouds algorithm=svc_linear seed=3
    svmrepro-run -m experiment=cross_training/fig3_baseline hydra/launcher=joblib
"""

from __future__ import annotations

import logging
import sys

import hydra
from hydra.core.hydra_config import HydraConfig
from hydra.types import RunMode
from omegaconf import DictConfig

from svmrepro import settings
from svmrepro.data.files import PROJECT_ROOT
from svmrepro.errors import SvmReproError
from svmrepro.runner import run

log = logging.getLogger("svmrepro")
settings.register()


@hydra.main(config_path=str(PROJECT_ROOT / "conf"), config_name="config", version_base="1.3")
def main(cfg: DictConfig) -> str:
    hydra_cfg = HydraConfig.get()
    try:
        result = run(cfg, dict(hydra_cfg.runtime.choices))
    except SvmReproError as exc:
        if hydra_cfg.mode == RunMode.MULTIRUN:
            raise  # the sweep goes on; Hydra reports the failed job at the end
        print(f"svmrepro-run: error: {exc}", file=sys.stderr)
        sys.exit(2)
    return result.status


if __name__ == "__main__":
    main()
