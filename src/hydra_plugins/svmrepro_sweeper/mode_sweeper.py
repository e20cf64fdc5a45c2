"""The svmrepro sweeper (``hydra/sweeper: svmrepro``): its default sweep is the experiment's ``sweep.<mode>``.

A Hydra sweeper plugin on the public :class:`hydra.plugins.sweeper.Sweeper` API, registered in
Hydra's ConfigStore as option ``svmrepro`` of group ``hydra/sweeper`` (:mod:`.config`) and
selected by ``conf/config.yaml``; ``hydra/sweeper=basic`` (Hydra's BasicSweeper: the command
line's sweep only) or an optimizing sweeper (``hydra/sweeper=optuna``) can replace it.

An experiment declares one sweep per mode. A sweep is a grid (``{key: "a,b", seed: "range(3)"}``,
Hydra's sweep syntax per key) or a list of grids, run as their union, for configurations that
are not a Cartesian product (Table 1: each data set with its own kernel width, for two
algorithms whose parameters have different names). ``hydra.sweeper.params`` apply to every grid, a
later value of a key replacing an earlier one (Hydra's rule), and so does the command line to a
one-grid sweep, so ``seed=0`` narrows an experiment's seed sweep to one seed. To a list of grids
the command line applies where it fits (:func:`narrow`): ``algorithm=cascade_svc`` keeps the grids
of that algorithm, ``algorithm.C=10`` the grids that set ``algorithm.C``, with their spelling of
the value (``10.0``: the run the sweep makes).

Unlike Hydra's BasicSweeper, a failed job does not stop the sweep: every batch runs, and the
sweep ends with a summary line, the failed jobs (overrides and error) on stderr and exit code 1.
Each failed job's line is recorded by a Hydra callback where the job ran (:mod:`.failures`).
Before the first job starts, every job is composed and built (:mod:`svmrepro.preflight`): a mistake
(an option that does not exist, a bad value, a data set whose module does not import, a report spec
that does not read) ends the sweep in one line each naming the file and the key, exit code 2. A job
whose configuration lacks a key given on the command line that others have (``-m
algorithm=svc,cascade_svc algorithm.r=0.5``) is not started and is one of the failed jobs; the others
run. Such jobs are numbered after the launched ones. For that, ``svmrepro-run -m`` hands
a command-line key of a config group (``algorithm.r=0.5``) to the jobs as a one-value sweep
(:func:`per_job`): Hydra applies a plain override to the sweep's primary config too, whose
algorithm may lack the key, and would stop the whole sweep.
Finished runs are skipped when the same command is run again, so it retries only the failed ones.
Jobs report their progress and status as they end (:mod:`.progress`).
"""

from __future__ import annotations

import itertools
import logging
import os
import sys
import time
from collections import Counter
from collections.abc import Collection, Iterator, Mapping, Sequence
from pathlib import Path

from hydra.core.override_parser.overrides_parser import OverridesParser
from hydra.core.override_parser.types import Glob, Override
from hydra.core.plugins import Plugins
from hydra.core.utils import JobReturn, JobStatus
from hydra.errors import CompactHydraException
from hydra.plugins.sweeper import Sweeper
from hydra.types import HydraContext, TaskFunction
from omegaconf import DictConfig, OmegaConf

from hydra_plugins.svmrepro_sweeper import failures, progress
from hydra_plugins.svmrepro_sweeper.failures import failure_line
from svmrepro.errors import SvmReproError, error_line, first_line
from svmrepro.redact import redact

log = logging.getLogger(__name__)


class NotAGrid(CompactHydraException):
    """A sweep override the grid cannot enumerate (``interval(...)``: an optimizing sweeper's)."""


def sweep_grids(sweep) -> list[dict]:
    """A sweep node (one grid or a list of grids, OmegaConf or plain) as a list of plain grids."""
    plain = OmegaConf.to_container(sweep, resolve=True) if OmegaConf.is_config(sweep) else sweep
    if not plain:
        return [{}]
    return [dict(grid) for grid in plain] if isinstance(plain, Sequence) else [dict(plain)]


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


def batches(jobs: list[list[str]], size: int | None) -> Iterator[list[list[str]]]:
    """``jobs`` in runs of ``size`` (None or -1: one batch)."""
    size = len(jobs) if size in (None, -1) else size
    for start in range(0, len(jobs), max(size, 1)):
        yield jobs[start : start + size]


def workers(launcher_config) -> int:
    """Jobs run at a time: joblib's ``n_jobs`` (negative counts back from the cores), else 1."""
    n_jobs = (launcher_config or {}).get("n_jobs") or 1
    return max(1, n_jobs if n_jobs > 0 else (os.cpu_count() or 1) + 1 + n_jobs)


def composition_line(error: BaseException) -> str:
    """``error_line`` with OmegaConf's reason (Hydra puts it on a later line) appended."""
    cause = error.__cause__
    reason = first_line(cause) if cause is not None else ""
    return f"{error_line(error)} {reason}".rstrip()


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


class ModeSweeper(Sweeper):
    """The sweeper of ``hydra/sweeper: svmrepro`` (:class:`.config.ModeSweeperConf`): the mode's sweep,
    every job launched whatever failed, failures listed at the end."""

    def __init__(self, max_batch_size: int | None = None, params: Mapping[str, str] | None = None) -> None:
        self.max_batch_size = max_batch_size
        self.params = dict(params or {})
        self.hydra_context: HydraContext | None = None
        self.config: DictConfig | None = None
        self.launcher = None

    def setup(self, *, hydra_context: HydraContext, task_function: TaskFunction, config: DictConfig) -> None:
        self.hydra_context = hydra_context
        self.config = config
        self.launcher = Plugins.instance().instantiate_launcher(
            hydra_context=hydra_context, task_function=task_function, config=config)

    def jobs(self, arguments: list[str]) -> list[list[str]]:
        """Every job's overrides: the mode's sweep, with ``params`` and ``arguments`` on each grid."""
        mode = getattr(self.config.mode, "value", self.config.mode)  # a Mode enum once typed
        grids = sweep_grids((self.config.get("sweep") or {}).get(mode))
        parser = OverridesParser.create(config_loader=self.hydra_context.config_loader)
        params = parser.parse_overrides([f"{key}={value}" for key, value in self.params.items()])
        groups = {group for group in OmegaConf.select(self.config, "hydra.runtime.choices", default={})
                  if not group.startswith("hydra")}
        return expand(grids, params, parser, parser.parse_overrides(arguments), groups)

    def compose(self, overrides: list[str]) -> tuple[DictConfig, dict]:
        """A job's config, as its launcher will compose it, and its config-group options."""
        cfg = self.hydra_context.config_loader.load_sweep_config(master_config=self.config,
                                                                 sweep_overrides=list(overrides))
        return cfg, dict(cfg.hydra.runtime.choices)

    def checked(self, arguments: list[str], jobs: list[list[str]]) -> tuple[list[list[str]], list[tuple[list[str], str]]]:
        """The jobs to launch, and those a command-line key does not fit with why (one line); any other
        mistake (:mod:`svmrepro.preflight`) ends the sweep before a job starts, one line each, exit code 2."""
        from svmrepro.preflight import check_sweep  # here: Hydra imports every plugin at each start

        given = [*(f"{key}={value}" for key, value in self.params.items()), *arguments]
        checked = check_sweep(self.config, jobs, self.compose, given)
        if checked.problems:
            print(*(redact(f"svmrepro-run: error: {line}") for line in checked.problems), sep="\n", file=sys.stderr)
            sys.exit(2)
        return checked.runnable, checked.unstarted

    def sweep(self, arguments: list[str]) -> list[Sequence[JobReturn]]:
        """Run every batch whatever failed, with progress; a summary, and the failures on stderr."""
        try:
            jobs = self.jobs(arguments)
        except NoEntryFits as exc:  # before any job, like every bad value: one line, exit 2
            experiment = OmegaConf.select(self.config, "hydra.runtime.choices.experiment")
            mode = getattr(self.config.mode, "value", self.config.mode)
            print(f"svmrepro-run: error: the {mode} sweep of {experiment}: {exc}", file=sys.stderr)
            sys.exit(2)
        total = len(jobs)
        jobs, unstarted = self.checked(arguments, jobs)
        sweep_dir = Path(self.config.hydra.sweep.dir)
        sweep_dir.mkdir(parents=True, exist_ok=True)
        (sweep_dir / "multirun.yaml").write_text(redact(OmegaConf.to_yaml(self.config)))
        progress.start(sweep_dir, len(jobs), workers(self.config.hydra.get("launcher")))
        failures.start(sweep_dir)
        for num, (overrides, reason) in enumerate(unstarted, start=len(jobs)):
            line = failure_line(num, overrides, reason)
            log.warning("job not started: %s", line)
            failures.record(sweep_dir, num, line)
        started, returns = time.perf_counter(), []
        for batch in batches(jobs, self.max_batch_size):
            try:
                returns.append(self.launcher.launch(batch, initial_job_idx=sum(map(len, returns))))
            except Exception as exc:  # a worker process died (out of memory?): joblib gives up the batch
                print(f"svmrepro-run: the sweep stopped: {error_line(exc)}\n  the runs that finished are kept; "
                      "the same command runs the rest", file=sys.stderr)
                sys.exit(1)
        ended = [ret for batch in returns for ret in batch]
        failed = self.failure_lines(ended, sweep_dir)
        recorded = progress.statuses(sweep_dir)
        counts = Counter(progress.SKIPPED if recorded.get(self.job_num(ret)) == progress.SKIPPED else progress.DONE
                         for ret in ended if ret.status == JobStatus.COMPLETED)
        counts[progress.FAILED] = len(failed)
        log.info("sweep ended: %d jobs in %s: %s", total, progress.clock(time.perf_counter() - started),
                 progress.counts_text(counts))
        if failed:
            print(f"svmrepro-run: {len(failed)} of {total} jobs failed (the same command retries only them):",
                  *failed, sep="\n  ", file=sys.stderr)
            sys.exit(1)
        return returns

    @staticmethod
    def job_num(ret: JobReturn) -> int | None:
        return ret.hydra_cfg.hydra.job.num if ret.hydra_cfg is not None else None

    def failure_lines(self, ended: list[JobReturn], sweep_dir: Path) -> list[str]:
        """A line per failed job, by job number: the one recorded where it ran, else one recorded now
        from the error the launcher returned; the jobs that never started are recorded already."""
        recorded = failures.read(sweep_dir)
        for ret in ended:
            if ret.status != JobStatus.COMPLETED and self.job_num(ret) not in recorded:
                recorded[self.job_num(ret)] = failures.returned_line(ret)
                failures.record(sweep_dir, self.job_num(ret), recorded[self.job_num(ret)])
        return [recorded[num] for num in sorted(recorded)]
