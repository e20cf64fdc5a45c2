"""Compose configs outside the command line (reproduce driver, tests)."""

from __future__ import annotations

import copy
import functools
import hashlib
import os
import re
from collections import OrderedDict
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path

import yaml
from hydra import compose, initialize_config_dir
from hydra.core.override_parser.overrides_parser import OverridesParser
from hydra.core.override_parser.types import Override
from hydra.errors import ConfigCompositionException
from omegaconf import DictConfig, OmegaConf, open_dict
from omegaconf.errors import ConfigAttributeError, ConfigKeyError, OmegaConfBaseException

from svmrepro import settings, signals
from svmrepro.errors import ConfigError, SvmReproError
from svmrepro.forks import can_fork, in_forks
from svmrepro.locations import (
    CONF_DIR,
    CONFIG_DIRS_ENV,
    config_dirs,
    config_dirs_value,
    user_config_dirs,
)


def searchpath_override() -> list[str]:
    """``hydra.searchpath=['file://...']`` for the user's config folders (none: no override), each folder
    :func:`quoted`: a comma, a quote, brackets, ``#`` or ``=`` in its path is read as part of it."""
    dirs = user_config_dirs()
    return [f"hydra.searchpath=[{','.join(quoted(f'file://{d}') for d in dirs)}]"] if dirs else []


def quoted(value: str) -> str:
    """``value`` as a quoted Hydra override value that parses back to itself (ValueError if none does)."""
    # Hydra's quoted value: a run of backslashes is literal unless a quote (or the closing quote) follows it
    body = re.sub(r"(\\*)('|$)", lambda m: m.group(1) * 2 + ("\\'" if m.group(2) else ""), value)
    text = "'" + body.replace("${", "\\${") + "'"
    parsed = OverridesParser.create().parse_override(f"key={text}").value()
    if parsed != value:
        raise ValueError(f"{value!r} cannot be written as a Hydra override value")
    return text


def check_config_files(folder: Path, parse: bool = True) -> None:
    """Every YAML file of a config folder is UTF-8 and (``parse``) parses, read as Hydra reads it (OmegaConf),
    checked before Hydra composes (where either ends in a traceback): one line naming the file, the place and
    the problem."""
    for path in sorted(folder.rglob("*.yaml")):
        check_utf8(path)
        if not parse:
            continue
        try:
            OmegaConf.load(path)
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
            raise ConfigError(f"config file {path} is not valid YAML{where}: "
                              f"{getattr(exc, 'problem', None) or exc}") from None


def check_utf8(path: Path) -> None:
    """``path`` reads as UTF-8, the encoding Hydra and OmegaConf read a config file in; else one line naming
    the file and the byte offset (from 0) of the first byte that is not, rather than a UnicodeDecodeError."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ConfigError(f"config file {path} cannot be read: {exc.strerror or exc}") from None
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise ConfigError(f"config file {path} is not valid UTF-8 at byte offset {exc.start} (line {line}): "
                          f"byte 0x{data[exc.start]:02x}, {exc.reason}; save it as UTF-8") from None


def check_config_folders(user_dirs: Iterable[Path] = ()) -> None:
    """Before Hydra reads a config: svmrepro's own config files are UTF-8 (read in milliseconds; parsing its
    hundred files would add a second to every command, and the tests parse them), and each of the user's
    folders passes :func:`check_config_files` whole."""
    check_config_files(CONF_DIR, parse=False)
    for folder in user_dirs:
        check_config_files(folder)


def use_config_dirs(dirs: list[Path]) -> None:
    """The user's config folders (``--config-dir`` of svmrepro-reproduce and svmrepro-data), for this process's
    compositions and (as ``hydra.searchpath``) its sweeps; svmrepro's own and theirs checked first
    (:func:`check_config_folders`)."""
    for folder in dirs:
        if not (folder / "experiment").is_dir() and not (folder / "dataset").is_dir():
            raise SvmReproError(f"--config-dir {folder}: expected a folder with experiment/<paper>/<id>.yaml "
                                "or dataset/<name>.yaml files")
        try:  # Hydra's search path names it (searchpath_override)
            quoted(f"file://{folder.resolve()}")
        except ValueError:
            raise SvmReproError(f"--config-dir {folder}: a '${{' in its path is an interpolation to Hydra, which has "
                                "no way to write it in an override: rename the folder") from None
    check_config_folders(dirs)
    if dirs:
        os.environ[CONFIG_DIRS_ENV] = config_dirs_value(dirs)


#: this process's compositions, by (the overrides that change what Hydra composes, digest of the config files'
#: contents): a config is composed by Hydra (about 0.2 s) once per state of the files and set of config-group
#: options, however often it is asked for and whatever plain values are set on it
_COMPOSED: OrderedDict[tuple, _Composed] = OrderedDict()
#: compositions kept at most (the least recently used go first)
COMPOSED_KEPT = 512
#: the digest of the config files for the invocation inside :func:`composition_cache` (None outside it)
_SNAPSHOT: ContextVar[str | None] = ContextVar("snapshot", default=None)


def config_files_digest() -> str:
    """sha256 over the path and content of every YAML file of svmrepro's config folder and the user's: what
    a composition reads, so an unchanged digest is an unchanged composition."""
    total = hashlib.sha256()
    for root in config_dirs():
        for path in sorted(Path(root).rglob("*.yaml")):
            total.update(f"{path}\0".encode())
            total.update(hashlib.sha256(path.read_bytes()).digest())
    return total.hexdigest()


@contextmanager
def composition_cache() -> Iterator[None]:
    """Inside it, the config files are read as they were on entering it: for one svmrepro-reproduce
    invocation, which composes each experiment's configs for its checks, its data, its sweep's arguments and
    its pages from one state of the files (a change made meanwhile is seen by the next invocation, as by the
    sweeps themselves, which compose in their own process)."""
    token = _SNAPSHOT.set(config_files_digest())
    try:
        yield
    finally:
        _SNAPSHOT.reset(token)


def compose_config(overrides: list[str] = (), return_hydra_config: bool = False) -> DictConfig:
    """The config Hydra composes from ``overrides`` (with the user's config folders), each caller its own copy.

    Hydra composes the overrides that change what is composed (config-group options, ``+``/``~``, Hydra's
    own) once per state of the config files (:func:`config_files_digest`), with Hydra's node, which Hydra's
    compose deletes when not asked for it; the plain ``key=value`` overrides are then applied to a copy as
    Hydra applies them after composing (:func:`apply_override`), so ``experiment=X`` and ``experiment=X
    mode=full`` are one composition. Hydra's node lists only the former in ``hydra.overrides.task``."""
    with signals.held():  # a stop inside OmegaConf leaves a node half-built: its error would pass for the configs'
        composed, values = _composition(overrides)
    return with_values(composed.full if return_hydra_config else composed.bare, values)


def with_values(cfg: DictConfig, values: Iterable[Override]) -> DictConfig:
    """A copy of the composed ``cfg`` with the plain ``values`` set as Hydra sets them after composing
    (:func:`apply_override`, with its errors); a stop meanwhile waits for the copy to be whole."""
    with signals.held():
        cfg = copy.deepcopy(cfg)
        for override in values:
            apply_override(cfg, override)
    return cfg


@dataclass(frozen=True)
class _Composed:
    """One composition, kept: with Hydra's node (``full``), without it (``bare``: what most callers want, and a
    fifth of the full one's copying), and the config-group options Hydra's node records."""

    full: DictConfig
    bare: DictConfig
    choices: dict[str, str | None]


def files_state() -> str:
    """The state of the config files a composition reads now: the invocation's (:func:`composition_cache`), else
    read."""
    return _SNAPSHOT.get() or config_files_digest()


def split_overrides(overrides: Iterable[str], state: str | None = None) -> tuple[tuple[str, ...], tuple[Override, ...]]:
    """``overrides`` parsed as Hydra parses them (with its errors): those that change what is composed (their
    lines) and the plain values (:func:`is_value_override`), as the config files of ``state``
    (:func:`files_state`, read when not given) define the config groups. Parsed once per list and state."""
    return _split(tuple(overrides), state or files_state())


def _composition(overrides: list[str]) -> tuple[_Composed, tuple[Override, ...]]:
    """The kept composition of ``overrides``' structural part, and their plain values (:func:`compose_config`)."""
    key, values = _key(overrides)
    if key in _COMPOSED:
        _COMPOSED.move_to_end(key)
    else:
        _keep(key, _composed(key[0]))
    return _COMPOSED[key], values


def _key(overrides: Sequence[str], digest: str | None = None) -> tuple[tuple, tuple[Override, ...]]:
    """The key of ``overrides``' composition in :data:`_COMPOSED` (their structural part with the user's config
    folders, and ``digest``: the state of the config files, :func:`files_state` when not given), and their plain
    values."""
    digest = digest or files_state()
    structural, values = split_overrides((*searchpath_override(), *overrides), digest)
    return (structural, digest), values


def _composed(structural: tuple[str, ...]) -> _Composed:
    """Hydra's composition of ``structural``, with and without Hydra's node."""
    full = _compose(list(structural), True)
    bare = copy.deepcopy(full)
    with open_dict(bare):
        del bare["hydra"]
    return _Composed(full, bare, dict(full.hydra.runtime.choices))


def _keep(key: tuple, composed: _Composed) -> None:
    _COMPOSED[key] = composed
    while len(_COMPOSED) > COMPOSED_KEPT:
        _COMPOSED.popitem(last=False)


#: the fewest compositions :func:`compose_ahead` shares among processes: fewer are composed where they are needed
AHEAD_MIN = 32


def compose_ahead(override_lists: Iterable[Sequence[str]], processes: int) -> int:
    """Compose and keep the configs of ``override_lists`` that are not kept yet, shared among ``processes``
    forks of this process (:func:`svmrepro.forks.in_forks`), so that the callers that then compose them one by one
    (a reproduction's checks, its store's skip, its pages) find them composed; returns how many were. Nothing
    when fewer than :data:`AHEAD_MIN` are left or this process cannot fork (:func:`svmrepro.forks.can_fork`). A
    list whose composition fails is left out: its caller meets the error where it composes it."""
    digest, todo = files_state(), {}
    for overrides in override_lists:
        try:
            key, _ = _key(overrides, digest)
        except Exception:  # noqa: BLE001  (reported by the caller that composes it)
            continue
        if key not in _COMPOSED:
            todo.setdefault(key)
    if len(todo) < AHEAD_MIN or not can_fork(processes):
        return 0
    keys = list(todo)[-COMPOSED_KEPT:]  # no more than are kept
    done = 0
    for key, composed in zip(keys, list(in_forks(_composed_or_none, [key[0] for key in keys], processes))):
        if composed is not None:
            _keep(key, composed)
            done += 1
    return done


def _composed_or_none(structural: tuple[str, ...]) -> _Composed | None:
    try:
        return _composed(structural)
    except Exception:  # noqa: BLE001  (composed again, and reported, by the caller)
        return None


@functools.lru_cache(maxsize=4096)
def _split(overrides: tuple[str, ...], digest: str) -> tuple[tuple[str, ...], tuple[Override, ...]]:
    """``overrides`` parsed as Hydra parses them (with its errors), split into those that change what is
    composed and the plain values (:func:`is_value_override`; the config groups are those of the config files
    of ``digest``); kept, as parsing costs more than the rest of a cached composition."""
    parsed = _parser().parse_overrides(list(overrides))
    return (tuple(o.input_line for o in parsed if not is_value_override(o)),
            tuple(o for o in parsed if is_value_override(o)))


@functools.cache
def _parser() -> OverridesParser:
    return OverridesParser.create()


def is_group(key: str) -> bool:
    """Whether ``key`` names a config group (``dataset``, ``hydra/launcher``): an override of it picks an option."""
    return "/" in key or key in config_groups()


def is_value_override(override: Override) -> bool:
    """A plain ``key=value`` of the config (not of a config group, not Hydra's, no ``+``/``~``): Hydra sets it
    on the composed config, it changes nothing of what is composed."""
    return not (override.is_delete() or override.is_add() or override.is_force_add() or override.package is not None
                or override.key_or_group.split(".")[0] == "hydra" or is_group(override.key_or_group))


def apply_override(cfg: DictConfig, override: Override) -> None:
    """``override`` (a plain value: :func:`is_value_override`) applied to ``cfg`` as Hydra's config loader applies
    it after composing, with its errors."""
    try:
        OmegaConf.update(cfg, override.key_or_group, override.value(), merge=True)
    except (ConfigAttributeError, ConfigKeyError) as exc:
        raise ConfigCompositionException(f"Could not override '{override.key_or_group}'.\n"
                                         f"To append to your config use +{override.input_line}") from exc
    except OmegaConfBaseException as exc:
        raise ConfigCompositionException(f"Error merging override {override.input_line}") from exc


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
    with signals.held():  # as compose_config
        composed, values = _composition(overrides)
    return with_values(composed.bare, values), dict(composed.choices)


def config_groups() -> set[str]:
    """The config groups of svmrepro's configs and the user's (``conf/<group>/``), Hydra's left out."""
    return {path.name for root in config_dirs() for path in root.iterdir() if path.is_dir()} - {"hydra"}
