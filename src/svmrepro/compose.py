"""Compose configs outside the command line (reproduce driver, tests)."""

from __future__ import annotations

import copy
import os
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path

import yaml
from hydra import compose, initialize_config_dir
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


#: the configs composed so far inside :func:`composition_cache` (None outside it: every call composes)
_COMPOSED: ContextVar[dict | None] = ContextVar("composed", default=None)


@contextmanager
def composition_cache() -> Iterator[None]:
    """Inside it, a config composed once is composed from memory (a copy) when asked for again: for one
    svmrepro-reproduce invocation, which composes each experiment's configs for its checks, its data, its
    sweep's arguments and its pages (the files are read once; a change made meanwhile is seen by the next
    invocation, as by the sweeps themselves, which compose in their own process)."""
    token = _COMPOSED.set({})
    try:
        yield
    finally:
        _COMPOSED.reset(token)


def compose_config(overrides: list[str] = (), return_hydra_config: bool = False) -> DictConfig:
    overrides = [*searchpath_override(), *overrides]
    composed, key = _COMPOSED.get(), tuple(overrides)
    if composed is None:
        return _compose(overrides, return_hydra_config)
    if key not in composed:  # with Hydra's node, which Hydra's compose deletes when not asked for it; only copies leave
        composed[key] = _compose(overrides, True)
    cfg = copy.deepcopy(composed[key])
    if not return_hydra_config:
        with open_dict(cfg):
            del cfg["hydra"]
    return cfg


def _compose(overrides: list[str], return_hydra_config: bool) -> DictConfig:
    settings.register()
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        return compose("config", overrides=overrides, return_hydra_config=return_hydra_config)


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
