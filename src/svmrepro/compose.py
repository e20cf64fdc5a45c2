"""Compose configs outside the command line (reproduce driver, tests)."""

from __future__ import annotations

import os
from pathlib import Path

import yaml
from hydra import compose, initialize_config_dir
from hydra.core.override_parser.overrides_parser import OverridesParser
from hydra_plugins.svmrepro_sweeper.mode_sweeper import expand, sweep_grids
from omegaconf import DictConfig, OmegaConf, open_dict

from svmrepro import settings
from svmrepro.errors import ConfigError, SvmReproError
from svmrepro.locations import CONF_DIR, CONFIG_DIRS_ENV, config_dirs, user_config_dirs


def searchpath_override() -> list[str]:
    """``hydra.searchpath=[file://...]`` for the user's config folders (none: no override)."""
    dirs = user_config_dirs()
    return [f"hydra.searchpath=[{','.join(f'file://{d}' for d in dirs)}]"] if dirs else []


def check_config_files(folder: Path) -> None:
    """Every YAML file of a user's config folder parses, read as Hydra reads it (OmegaConf), checked
    before Hydra composes (where a malformed file ends in a traceback): one line naming the file,
    the place and the problem."""
    for path in sorted(folder.rglob("*.yaml")):
        try:
            OmegaConf.load(path)
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
            raise ConfigError(f"config file {path} is not valid YAML{where}: "
                              f"{getattr(exc, 'problem', None) or exc}") from None


def use_config_dirs(dirs: list[Path]) -> None:
    """The user's config folders (``--config-dir`` of svmrepro-reproduce and svmrepro-data), for this process's
    compositions and (as ``hydra.searchpath``) its sweeps."""
    for folder in dirs:
        if not (folder / "experiment").is_dir() and not (folder / "dataset").is_dir():
            raise SvmReproError(f"--config-dir {folder}: expected a folder with experiment/<paper>/<id>.yaml "
                                "or dataset/<name>.yaml files")
        check_config_files(folder)
    if dirs:
        os.environ[CONFIG_DIRS_ENV] = os.pathsep.join(str(folder.resolve()) for folder in dirs)


def compose_config(overrides: list[str] = (), return_hydra_config: bool = False) -> DictConfig:
    settings.register()
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        return compose("config", overrides=[*searchpath_override(), *overrides],
                       return_hydra_config=return_hydra_config)


def experiments(paper: str | None = None) -> list[str]:
    """``<paper>/<id>`` of every experiment file (of one paper if given), the user's included, sorted."""
    pattern = f"{paper}/*.yaml" if paper else "*/*.yaml"
    return sorted({str(p.relative_to(root / "experiment").with_suffix(""))
                   for root in config_dirs() for p in (root / "experiment").glob(pattern)})


def papers() -> list[str]:
    return sorted({p.name for root in config_dirs() if (root / "experiment").is_dir()
                   for p in (root / "experiment").iterdir() if p.is_dir()})


def compose_run(overrides: list[str]) -> tuple[DictConfig, dict[str, str | None]]:
    """A run's config (without Hydra's node) and the group options chosen, as svmrepro-run gets them."""
    cfg = compose_config(overrides, return_hydra_config=True)
    choices = dict(cfg.hydra.runtime.choices)
    with open_dict(cfg):
        del cfg["hydra"]
    return cfg, choices


def config_groups() -> set[str]:
    """The config groups of svmrepro's configs and the user's (``conf/<group>/``), Hydra's left out."""
    return {path.name for root in config_dirs() for path in root.iterdir() if path.is_dir()} - {"hydra"}


def sweep_jobs(sweep, extra: dict[str, object] | None = None) -> list[list[str]]:
    """The overrides of every job of an experiment's sweep (a grid or a list of grids), with
    ``extra`` given as on the command line, exactly as ``svmrepro-run -m`` expands it (a list of
    grids narrowed by it: :func:`~hydra_plugins.svmrepro_sweeper.mode_sweeper.narrow`)."""
    parser = OverridesParser.create()
    given = parser.parse_overrides([f"{key}={value}" for key, value in (extra or {}).items()])
    return expand(sweep_grids(sweep), [], parser, given, config_groups())
