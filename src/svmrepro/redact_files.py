"""The Hydra callback that masks passwords in the files Hydra writes for each job (:mod:`svmrepro.redact`
masks the text; this module rewrites the files, through :mod:`svmrepro.writing`, never through a link)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hydra.experimental.callback import Callback
from omegaconf import DictConfig

from svmrepro.redact import redact
from svmrepro.writing import write_file


class RedactHydraFiles(Callback):
    """Hydra callback: redact the ``config.yaml``, ``hydra.yaml`` and ``overrides.yaml`` Hydra has
    just written into the job's output folder (it writes them before ``on_job_start``); each is replaced
    whole, and a symlink among them is refused (:class:`svmrepro.writing.SymlinkInTheWay`), never followed."""

    def on_job_start(self, config: DictConfig, **kwargs: Any) -> None:
        subdir = config.hydra.output_subdir
        if subdir is None:
            return
        folder = Path(config.hydra.runtime.output_dir)
        for path in (folder / subdir).glob("*.yaml"):
            text = path.read_text()
            masked = redact(text)
            if masked != text:
                write_file(path, masked, root=folder)
