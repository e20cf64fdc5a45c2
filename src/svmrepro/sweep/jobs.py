"""What jobs an experiment means: its sweep's grammar, expanded, and each job's config.

One module owns the answer, for every consumer: the svmrepro sweeper (the Hydra plugin
:mod:`hydra_plugins.svmrepro_sweeper`, which imports this and nothing the other way), the preflight
(:mod:`svmrepro.preflight`), the claims check, the run identity (:func:`number_types`) and
``svmrepro-reproduce``.

An experiment declares one sweep per mode. A sweep is a grid (``{key: "a,b", seed: "range(3)"}``,
Hydra's sweep syntax per key) or a list of grids, run as their union, for configurations that
are not a Cartesian product (Table 1: each data set with its own kernel width, for two
algorithms whose parameters have different names). ``hydra.sweeper.params`` apply to every grid, a
later value of a key replacing an earlier one (Hydra's rule), and so does the command line to a
one-grid sweep, so ``seed=0`` narrows an experiment's seed sweep to one seed. To a list of grids
the command line applies where it fits (:func:`narrow`): ``algorithm=cascade_svc`` keeps the grids
of that algorithm, ``algorithm.C=10`` the grids that set ``algorithm.C``, with their spelling of
the value (``10.0``: the run the sweep makes).

:class:`JobComposer` composes each job's config as ``svmrepro-run`` would, at a fraction of Hydra's
cost per job; :func:`per_job` rewrites a command line so a group's key applies to each job, not to
the sweep's primary config.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Callable, Collection, Mapping, Sequence

from hydra.core.override_parser.overrides_parser import OverridesParser
from hydra.core.override_parser.types import Glob, Override
from hydra.errors import CompactHydraException
from omegaconf import DictConfig, OmegaConf

from svmrepro.compose import (
    compose_run, config_groups, files_state, searchpath_override, split_overrides, with_values,
)
from svmrepro.errors import SvmReproError


class NotAGrid(CompactHydraException):
    """A sweep override the grid cannot enumerate (``interval(...)``: an optimizing sweeper's)."""


def sweep_grids(sweep) -> list[dict]:
    """A sweep node (one grid or a list of grids, OmegaConf or plain) as a list of plain grids."""
    plain = OmegaConf.to_container(sweep, resolve=True) if OmegaConf.is_config(sweep) else sweep
    if not plain:
        return [{}]
    return [dict(grid) for grid in plain] if isinstance(plain, Sequence) else [dict(plain)]


#: the mode of the confirmatory phase (issue 48): the full sweep on seeds no run of the experiment had
CONFIRM_MODE = "confirm"
#: the mode whose sweep the confirmatory phase repeats
FULL_MODE = "full"


def mode_sweep(cfg, mode: str):
    """The sweep node of ``mode`` in an experiment's composed config ``cfg`` (None: none).

    ``confirm`` repeats the ``full`` sweep on the experiment's ``confirm.seeds`` (a list, or Hydra's
    ``"a,b"`` / ``range(n)``): each grid takes the first of them, as many as the grid had seeds (at least
    one), so a grid of one seed stays one seed and the others get fresh seeds in the same number up to
    the list's length. Without ``confirm.seeds`` an experiment has no confirm sweep."""
    sweeps = (cfg.get("sweep") or {}) if cfg is not None else {}
    if mode != CONFIRM_MODE:
        return sweeps.get(mode)
    seeds = confirm_seeds(cfg)
    full = sweeps.get(FULL_MODE)
    if not seeds or full is None:
        return None
    parser = OverridesParser.create()
    grids = []
    for grid in sweep_grids(full):
        had = values_of(parser.parse_override(f"seed={grid['seed']}")) if "seed" in grid else ["0"]
        grids.append({**grid, "seed": ",".join(str(seed) for seed in seeds[: max(1, min(len(seeds), len(had)))])})
    return grids


def confirm_seeds(cfg) -> list[int]:
    """The experiment's ``confirm.seeds`` as integers (empty without them)."""
    confirm = cfg.get("confirm") if cfg is not None else None
    given = confirm.get("seeds") if confirm is not None else None
    if given is None:
        return []
    if OmegaConf.is_config(given):
        given = OmegaConf.to_container(given, resolve=True)
    if isinstance(given, (list, tuple)):
        return [int(seed) for seed in given]
    return [int(seed) for seed in values_of(OverridesParser.create().parse_override(f"seed={given}"))]


def values_of(override: Override) -> list[str]:
    """The values ``override`` sets, as Hydra writes them after ``=`` (one for a plain override)."""
    if not override.is_sweep_override():
        return [override.get_value_element_as_str()]
    if override.is_discrete_sweep():
        return list(override.sweep_string_iterator())
    raise NotAGrid(f"{override.input_line}: the svmrepro sweeper runs grids (a,b / choice / range / glob); "
                   "an interval is for an optimizing sweeper (hydra/sweeper=optuna)")


def grid_values(overrides: Sequence[Override]) -> dict[str, list[str]]:
    """Each key's values; a later override of a key replaces an earlier one in the earlier one's place."""
    values: dict[str, list[str]] = {}
    for override in overrides:
        values[override.get_key_element()] = values_of(override)
    return values


def jobs_of(values: Mapping[str, list[str]]) -> list[list[str]]:
    return [[f"{key}={value}" for key, value in zip(values, job)] for job in itertools.product(*values.values())]


def product(overrides: Sequence[Override]) -> list[list[str]]:
    """The Cartesian product of ``overrides`` (Hydra's sweep syntax), one list of overrides per job.

    A later override of a key replaces an earlier one in the earlier one's place; a plain override
    is a one-value sweep.
    """
    return jobs_of(grid_values(overrides))


class NoEntryFits(SvmReproError, CompactHydraException):
    """A command-line option of a config group that no entry of a list-form sweep uses."""


def same_value(parser: OverridesParser, key: str, values: list[str]) -> list[object]:
    """``values`` as Hydra reads them, numbers as floats (``10`` is ``10.0``), others as their repr (a
    list or a mapping too), to compare one value with another."""
    read = [parser.parse_override(f"{key}={value}").value() for value in values]
    return [float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else repr(v) for v in read]


def narrow(entries: list[dict[str, list[str]]], given: Mapping[str, list[str]], parser: OverridesParser,
           groups: Collection[str]) -> list[dict[str, list[str]]]:
    """The entries of a list-form sweep that the command line's ``given`` values fit, with those values.

    A key that no entry sets applies to every entry (Hydra's rule). A key that some entries set applies
    to those only: each keeps the given values it has, spelled as it spells them (``10`` given, the
    entry's ``10.0`` kept: one run identity), and an entry left with none is left out. When no entry
    has any, the given values replace the entries' own (a value the sweep lacks, such as a new size),
    unless the key is a config group (``algorithm=...``): an option no entry uses is one line.
    """
    for key, wanted in given.items():
        setting = [entry for entry in entries if key in entry]
        if not setting:
            entries = [{**entry, key: wanted} for entry in entries]
            continue
        asked = same_value(parser, key, wanted)
        kept = [{**entry, key: [v for v, same in zip(entry[key], same_value(parser, key, entry[key])) if same in asked]}
                for entry in setting]
        if any(entry[key] for entry in kept):
            entries = [entry for entry in kept if entry[key]]
        elif key in groups:
            used = sorted({value for entry in setting for value in entry[key]})
            raise NoEntryFits(f"{key}={','.join(wanted)}: no entry of the sweep uses it; its entries use "
                              f"{key}={','.join(used)}")
        else:
            entries = [{**entry, key: wanted} for entry in setting]
    return entries


def expand(grids: list[Mapping], overrides: list[Override], parser: OverridesParser,
           narrowing: list[Override] = (), groups: Collection[str] = ()) -> list[list[str]]:
    """Every job's overrides: each grid expanded with ``overrides`` applied on top, concatenated.

    ``narrowing`` (the command line's) applies the same way to a one-grid sweep; to a list of grids,
    by :func:`narrow`, ``groups`` naming the config groups.
    """
    given = grid_values(narrowing)
    everywhere = {key: values for key, values in grid_values(overrides).items() if key not in given}
    entries = [{**grid_values(parser.parse_overrides([f"{key}={value}" for key, value in grid.items()])), **everywhere}
               for grid in grids]
    if len(entries) > 1:
        entries, given = narrow(entries, given, parser, groups), {}
    elif entries:  # a value the grid has, in the grid's spelling (10 given, its 10.0 kept: one run identity)
        given = {key: spelled(parser, key, wanted, entries[0].get(key, [])) for key, wanted in given.items()}
    return [job for entry in entries for job in jobs_of({**entry, **given})]


def spelled(parser: OverridesParser, key: str, wanted: list[str], own: list[str]) -> list[str]:
    """Each of ``wanted`` as ``own`` writes the same value, if it has it."""
    mine = dict(zip(same_value(parser, key, own), own))
    return [mine.get(value, text) for value, text in zip(same_value(parser, key, wanted), wanted)]


def number_types(sweep) -> dict[str, type]:
    """The number type (int or float) each key takes in a ``sweep`` node (``{mode: grid or list of
    grids}``), over every mode and grid; a key given numbers of both types is left out."""
    parser = OverridesParser.create()
    found: dict[str, set[type]] = {}
    plain = OmegaConf.to_container(sweep, resolve=True) if OmegaConf.is_config(sweep) else sweep
    for grids in (plain or {}).values():
        for grid in sweep_grids(grids):
            for key, value in grid.items():
                override = parser.parse_override(f"{key}={value}")
                if isinstance(override.value(), Glob):  # config-group options, never numbers
                    continue
                values = override.sweep_iterator() if override.is_discrete_sweep() else [override.value()]
                found.setdefault(key, set()).update(
                    type(v) for v in values if isinstance(v, (int, float)) and not isinstance(v, bool))
    return {key: types.pop() for key, types in found.items() if len(types) == 1}


def sweep_jobs(sweep, extra: dict[str, object] | None = None) -> list[list[str]]:
    """The overrides of every job of an experiment's sweep (a grid or a list of grids), with
    ``extra`` given as on the command line, exactly as ``svmrepro-run -m`` expands it (a list of
    grids narrowed by it: :func:`narrow`)."""
    parser = OverridesParser.create()
    given = parser.parse_overrides([f"{key}={value}" for key, value in (extra or {}).items()])
    return expand(sweep_grids(sweep), [], parser, given, config_groups())


def per_job(arguments: list[str], groups: Collection[str]) -> list[str]:
    """``arguments`` with each plain ``<group>.<key>=<value>`` override written ``<group>.<key>=choice(<value>)``.

    A one-value sweep is applied to each job, not to the primary config of the sweep. Flags,
    ``+``/``~`` overrides, sweeps, and values with an interpolation (``choice`` would make it a
    literal) are left as they are.
    """
    parser = OverridesParser.create()
    rewritten = []
    for argument in arguments:
        try:
            override = None if argument.startswith("-") else parser.parse_override(argument)
        except Exception:  # not an override (a flag's value), or a bad one Hydra reports itself
            override = None
        if (override is None or override.is_sweep_override() or override.is_add() or override.is_delete()
                or override.is_force_add() or override.package is not None
                or override.key_or_group.split(".", 1)[0] not in groups or "." not in override.key_or_group):
            rewritten.append(argument)
            continue
        value = argument.split("=", 1)[1] or "''"
        rewritten.append(argument if "${" in value else f"{override.key_or_group}=choice({value})")
    return rewritten


class JobComposer:
    """The configs of many jobs ``[*base, *job]`` of one sweep, each as :func:`compose_run` gives it, at a
    fraction of the cost: Hydra composes (about 0.1 s) once per distinct set of a job's overrides that
    change what is composed (config-group options, ``+``/``~`` overrides), and a job's plain ``key=value``
    overrides are applied to a copy as Hydra applies them after composing (``OmegaConf.update``, the
    value as Hydra's override parser reads it). A sweep of a thousand jobs is composed in seconds.

    ``compose`` replaces :func:`compose_run` (the svmrepro sweeper's: Hydra's composition of a job of the
    sweep it runs), called as it would be with ``[*base, *job]``."""

    def __init__(self, base: list[str] = (),
                 compose: Callable[[list[str]], tuple[DictConfig, dict]] | None = None) -> None:
        self.base = list(base)
        self._compose = compose or compose_run
        self._state = files_state()  # the config files as the sweep starts: what its jobs' overrides mean
        self._composed: dict[tuple[str, ...], tuple[DictConfig, dict] | Exception] = {}
        self._shared: dict[tuple[str, ...], tuple[DictConfig, dict] | Exception] = {}

    def compose(self, job: list[str]) -> tuple[DictConfig, dict[str, str | None]]:
        """The job's config and its config-group options; a composition error as Hydra raises it."""
        key, values = split_overrides(job, self._state)
        if key not in self._composed:
            try:
                self._composed[key] = self._compose([*self.base, *key])
            except Exception as exc:  # noqa: BLE001  (raised again for every job that needs it)
                self._composed[key] = exc
        composed = self._composed[key]
        if isinstance(composed, Exception):
            raise composed
        return with_values(composed[0], values), dict(composed[1])

    def shared(self, job: list[str]) -> tuple[DictConfig, dict[str, str | None]]:
        """The job's config as :meth:`compose` gives it, made once per job and the same object at every call:
        read-only (a change raises OmegaConf's ``ReadonlyConfigError``), for the readers that only read it (the
        checks, the data, the store's skip, the sweep's hashes) and would otherwise each copy it again."""
        key = tuple(job)
        if key not in self._shared:
            try:
                cfg, choices = self.compose(list(job))
                OmegaConf.set_readonly(cfg, True)
                self._shared[key] = (cfg, choices)
            except Exception as exc:  # noqa: BLE001  (raised again for every call that needs it)
                self._shared[key] = exc
        found = self._shared[key]
        if isinstance(found, Exception):
            raise found
        return found[0], dict(found[1])


def shared_composer(base: tuple[str, ...]) -> JobComposer:
    """One :class:`JobComposer` of ``base`` per state of the config files (:func:`~svmrepro.compose.files_state`)
    and per set of config folders (the user's, :func:`~svmrepro.compose.searchpath_override`): an
    ``svmrepro-reproduce`` invocation composes each job once (:meth:`JobComposer.shared`) for its checks, its
    data, the store's skip and its pages."""
    return _shared_composer(tuple(base), tuple(searchpath_override()), files_state())


def experiment_composer(experiment: str, mode: str) -> JobComposer:
    """The :func:`shared_composer` of the jobs of ``experiment``'s sweep in ``mode``."""
    return shared_composer((f"experiment={experiment}", f"mode={mode}"))


def experiment_jobs(experiment: str, mode: str, extra: Mapping[str, object] | None = None) -> list[list[str]]:
    """The jobs of ``experiment``'s sweep in ``mode`` (:func:`sweep_jobs`, ``extra`` on each), read from its
    shared composition (:func:`experiment_composer`)."""
    return sweep_jobs(mode_sweep(experiment_composer(experiment, mode).shared([])[0], mode), extra)


@functools.lru_cache(maxsize=64)
def _shared_composer(base: tuple[str, ...], searchpath: tuple[str, ...], state: str) -> JobComposer:
    return JobComposer(list(base))
