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
from hydra.core.override_parser.overrides_parser import OverridesParser
from hydra.core.override_parser.types import Override
from hydra.errors import ConfigCompositionException
from hydra_plugins.svmrepro_sweeper.mode_sweeper import expand, sweep_grids
from omegaconf import DictConfig, OmegaConf, open_dict
from omegaconf.errors import ConfigAttributeError, ConfigKeyError, OmegaConfBaseException

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


def sweep_jobs(sweep, extra: dict[str, object] | None = None) -> list[list[str]]:
    """The overrides of every job of an experiment's sweep (a grid or a list of grids), with
    ``extra`` given as on the command line, exactly as ``svmrepro-run -m`` expands it (a list of
    grids narrowed by it: :func:`~hydra_plugins.svmrepro_sweeper.mode_sweeper.narrow`)."""
    parser = OverridesParser.create()
    given = parser.parse_overrides([f"{key}={value}" for key, value in (extra or {}).items()])
    return expand(sweep_grids(sweep), [], parser, given, config_groups())


class JobComposer:
    """The configs of many jobs ``[*base, *job]`` of one sweep, each as :func:`compose_run` gives it, at a
    fraction of the cost: Hydra composes (about 0.1 s) once per distinct set of a job's overrides that
    change what is composed (config-group options, ``+``/``~`` overrides), and a job's plain ``key=value``
    overrides are applied to a copy as Hydra applies them after composing (``OmegaConf.update``, the
    value as Hydra's override parser reads it). A sweep of a thousand jobs is composed in seconds."""

    def __init__(self, base: list[str]) -> None:
        self.base = list(base)
        self._parser = OverridesParser.create()
        self._composed: dict[tuple[str, ...], tuple[DictConfig, dict] | Exception] = {}

    def compose(self, job: list[str]) -> tuple[DictConfig, dict[str, str | None]]:
        """The job's config and its config-group options; a composition error as Hydra raises it."""
        overrides = self._parser.parse_overrides(list(job))
        values = [o for o in overrides if _is_value(o)]
        key = tuple(o.input_line for o in overrides if not _is_value(o))
        if key not in self._composed:
            try:
                self._composed[key] = compose_run([*self.base, *key])
            except Exception as exc:  # noqa: BLE001  (raised again for every job that needs it)
                self._composed[key] = exc
        composed = self._composed[key]
        if isinstance(composed, Exception):
            raise composed
        cfg, choices = copy.deepcopy(composed[0]), dict(composed[1])
        for override in values:
            _apply(cfg, override)
        return cfg, choices


def is_group(key: str) -> bool:
    """Whether ``key`` names a config group (``dataset``, ``hydra/launcher``): an override of it picks an option."""
    return "/" in key or key in config_groups()


def _is_value(override: Override) -> bool:
    """A plain ``key=value`` of the config (not of a config group, not Hydra's, no ``+``/``~``)."""
    return not (override.is_delete() or override.is_add() or override.is_force_add() or override.package is not None
                or override.key_or_group.split(".")[0] == "hydra" or is_group(override.key_or_group))


def _apply(cfg: DictConfig, override: Override) -> None:
    """``override`` applied to ``cfg`` as Hydra's config loader applies a plain override, with its errors."""
    try:
        OmegaConf.update(cfg, override.key_or_group, override.value(), merge=True)
    except (ConfigAttributeError, ConfigKeyError) as exc:
        raise ConfigCompositionException(f"Could not override '{override.key_or_group}'.\n"
                                         f"To append to your config use +{override.input_line}") from exc
    except OmegaConfBaseException as exc:
        raise ConfigCompositionException(f"Error merging override {override.input_line}") from exc
