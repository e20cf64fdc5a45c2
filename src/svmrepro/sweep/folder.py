"""A sweep's output folder, its own: never shared with another sweep started in the same second.

Hydra's default ``hydra.sweep.dir`` (``multirun/<date>/<time>``) names a second, and two sweeps started
in it would share the folder: its ``mlflow_sweep_run.json`` (which parent run the jobs log under), its
progress and its failures. :func:`claim` makes the folder with one atomic ``mkdir`` before anything is
written in it; a folder that exists already is another sweep's, so the next free ``<time>-1``,
``<time>-2``, ... is taken. The folder chosen is handed to every job as a command-line override of the
sweep (``hydra.overrides.hydra``), from which Hydra composes each job's config, whatever launcher runs it.

A folder the user names (``hydra.sweep.dir=...`` on the command line) is taken as named, as Hydra does:
re-running a sweep into it is what such a name is for.
"""

from __future__ import annotations

import itertools
from pathlib import Path

from omegaconf import DictConfig, read_write

# a value in Hydra's override grammar: one home, beside the compositions (its --config-dir quoted alike)
from svmrepro.compose import quoted

KEY = "hydra.sweep.dir"


def named_on_command_line(config: DictConfig) -> bool:
    """Whether ``hydra.sweep.dir`` was given on the command line (``hydra.overrides.hydra``)."""
    return any(override.lstrip("+~").split("=", 1)[0] == KEY for override in config.hydra.overrides.hydra)


def claim(config: DictConfig) -> Path:
    """The sweep's folder, made now; ``config`` (the sweep's primary config) and every job's config name it.

    Raises OSError when a folder cannot be made (the caller says so in one line)."""
    folder = Path(str(config.hydra.sweep.dir))
    if named_on_command_line(config):
        return folder
    folder.parent.mkdir(parents=True, exist_ok=True)
    for n in itertools.count():
        candidate = folder if n == 0 else folder.with_name(f"{folder.name}-{n}")
        try:
            candidate.mkdir()
        except FileExistsError:
            continue
        break
    override = f"{KEY}={quoted(str(candidate))}"
    with read_write(config.hydra):
        config.hydra.sweep.dir = str(candidate)
        config.hydra.overrides.hydra.append(override)
    return candidate
