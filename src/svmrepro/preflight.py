"""Every mistake of a reproduction or a sweep, found before its first fit, each in one line naming the
file and the key.

``svmrepro-reproduce`` (before its first sweep, and first thing with ``--check``) and ``svmrepro-run -m``
(before its first job starts: the svmrepro sweeper) check

- every job of each sweep they will run (every entry of a list-form sweep, with the overrides given on
  top): that its config composes (an option of a config group that does not exist, a key its config
  lacks, a value of the wrong type), and that its data set, estimator, model search and analyses can be
  built (:func:`svmrepro.build.build`: every ``_target_`` imports, every constructor accepts its values),
  without reading data or fitting, and without running a config folder's module: its functions and classes
  are looked up in its source (:mod:`svmrepro.data.user_code`), and only a run imports it;
- the report spec of each experiment (:func:`svmrepro.report.spec.spec_from_config`): that the
  experiments it includes exist, and (``svmrepro-reproduce``) that its ``x`` and ``group`` are columns its
  runs can have (:func:`svmrepro.report.claims.check.produced`);
- (``svmrepro-reproduce``) the claims of every paper (:mod:`svmrepro.report.claims.check`).

A problem is named where it was written: ``<experiment file>: sweep.quick[1].algorithm`` for a value of
an entry of a sweep, ``<experiment file>: algorithm.C`` for one the experiment sets, ``<option file>:
_target_`` for one of a config group's option (``conf/dataset/mine.yaml``), ``--override KEY=VALUE``
(``command line KEY=VALUE``) for one given on top of the sweep. A problem is said once however many jobs
it stops.

Jobs alike in all but their seed are built once, and ``svmrepro-reproduce`` composes a sweep's jobs with
one Hydra composition per set of config-group options (:class:`svmrepro.sweep.jobs.JobComposer`), each job
once for the whole invocation (:func:`svmrepro.sweep.jobs.shared_composer`: its data, the store's skip and its
pages read the same configs), so its checks take seconds for a thousand jobs. Those compositions are made
first, shared among the cores when there are many (:func:`svmrepro.compose.compose_ahead`: a whole
reproduction needs one per experiment and per set of config-group options its jobs pick).

One documented freedom of ``svmrepro-run -m`` stays: a key given on the command line that only some
jobs' configs have (``-m algorithm=svc,cascade_svc algorithm.r=0.5``) fails those jobs alone, listed at
the end of the sweep (:mod:`hydra_plugins.svmrepro_sweeper.mode_sweeper`, built on :mod:`svmrepro.sweep.jobs`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from hydra.core.override_parser.overrides_parser import OverridesParser
from hydra.errors import ConfigCompositionException, HydraException, MissingConfigException
from omegaconf import DictConfig, ListConfig, OmegaConf

from svmrepro import settings
from svmrepro.compose import compose_ahead, experiments, is_group
from svmrepro.data.user_code import configs_only
from svmrepro.errors import ConfigError, SvmReproError, composition_line, error_line, first_line
from svmrepro.locations import config_file
from svmrepro.options import option_hint
from svmrepro.report.claims.check import check_paper, claims_file, produced
from svmrepro.report.spec import ReportSpec, experiment_file, spec_from_config
from svmrepro.sweep.jobs import experiment_composer, experiment_jobs, mode_sweep, sweep_grids, sweep_jobs

#: the nodes a run builds before it reads data (:func:`svmrepro.runner.run`)
BUILT = ("dataset", "algorithm", "selection", "analysis")
#: params a run logs beside its config's: the model search's choices, the data set's constants (svmrepro.runner)
LOGGED_PARAMS = ("params.selected.", "params.data.")
#: a problem's first words when they name a config key: ``algorithm.C=-1 is ...``, ``dataset._target_: ...``
KEY_FIRST = re.compile(r"(?P<key>[A-Za-z_]\w*(?:\.\w+)*)(?P<sep>=|: )")

Compose = Callable[[list[str]], tuple[DictConfig, Mapping[str, str | None]]]


@dataclass(frozen=True)
class SweepSource:
    """Where a sweep's overrides were written, to name the place of a problem.

    ``node`` is the experiment's ``sweep.<mode>`` (one grid or a list of grids; None: no sweep), ``given``
    the overrides given on top of every entry, by key, as written, and ``given_as`` where they were
    given (``--override``, ``command line``)."""

    experiment: str | None
    mode: str
    node: Any = None
    given: Mapping[str, str] = field(default_factory=dict)
    given_as: str = "command line"

    @cached_property
    def file(self) -> str | None:
        return experiment_file(self.experiment) if self.experiment else None

    @cached_property
    def grids(self) -> list[dict[str, list[str]]]:
        """Each entry of the sweep as ``{key: its values, as a job's override writes them}``."""
        parser = OverridesParser.create()
        entries = []
        for grid in sweep_grids(self.node):
            overrides = parser.parse_overrides([f"{key}={value}" for key, value in grid.items()])
            entries.append({o.key_or_group: list(o.sweep_string_iterator()) if o.is_sweep_override()
                            else [o.get_value_element_as_str()] for o in overrides})
        return entries

    def entry_key(self, job: Mapping[str, str]) -> tuple[str, dict[str, list[str]]]:
        """``sweep.<mode>[i]`` of the entry a job (``{key: value}``) comes from, and that entry: the
        first whose every key the job has with one of its values (a key given on top, whatever value)."""
        listed = isinstance(self.node, (list, tuple, ListConfig))
        for index, grid in enumerate(self.grids):
            if all(key in self.given or job.get(key) in values for key, values in grid.items()):
                return f"sweep.{self.mode}" + (f"[{index}]" if listed else ""), grid
        return f"sweep.{self.mode}", {}

    def where(self, key: str | None, job: Sequence[str], choices: Mapping[str, str | None]) -> str:
        """The file and key (or the override) that gave ``key`` its value in the job ``job`` (overrides)."""
        if key is not None and key in self.given:
            return f"{self.given_as} {self.given[key]}"
        entry, grid = self.entry_key(dict(item.lstrip("+~").split("=", 1) for item in job if "=" in item))
        if key is None:
            return (f"{self.file}: {entry}" if self.node else self.file) if self.file else "the command line"
        if key in grid:
            return f"{self.file}: {entry}.{key}"
        group = key.split(".")[0]
        if key == group and is_group(group):  # an option the experiment's defaults list picks
            return f"{self.file}: defaults" if self.file else f"the default of {group}"
        if self.file and _sets(self.file, key):
            return f"{self.file}: {key}"
        option = config_file(f"{group}/{choices[group]}.yaml") if choices.get(group) else None
        if option:
            return f"{option}: {key.removeprefix(group + '.')}"
        return f"{self.file}: {key}" if self.file else key


def _sets(path: str, key: str) -> bool:
    """Whether the YAML file ``path`` (an experiment, ``@package _global_``) gives ``key`` a value."""
    try:
        return OmegaConf.select(OmegaConf.load(path), key, default=None) is not None
    except Exception:  # noqa: BLE001  (a key OmegaConf cannot select there is not set there)
        return False


def culprit(error: BaseException) -> tuple[str | None, str]:
    """The config key an error is about (None: not known) and what is wrong, in words."""
    if isinstance(error, MissingConfigException) and error.missing_cfg_file:
        group, _, option = error.missing_cfg_file.rpartition("/")
        hint = option_hint(option, error.options) if error.options else ""
        return group.replace("/", "."), f"no config {option!r} in group {group}{hint}"
    if isinstance(error, ConfigCompositionException):
        named = re.search(r"override '([^']+)'|override \+*([^=\s]+)=", first_line(error))
        return (next(g for g in named.groups() if g) if named else None), composition_line(error).split(": ", 1)[-1]
    if isinstance(error, SvmReproError):
        text = first_line(error)
        found = KEY_FIRST.match(text)
        if not found:
            return None, text
        return found["key"], text[found.end():] if found["sep"] == ": " else text[len(found["key"]) + 1:]
    return None, error_line(error)


def _line(source: SweepSource, job: Sequence[str], choices: Mapping, error: BaseException) -> str:
    key, message = culprit(error)
    return f"{source.where(key, job, choices)}: {message}"


def _built(cfg: DictConfig) -> str:
    """What :func:`svmrepro.build.build` reads of a config, as text: jobs alike in all but their seed build alike."""
    nodes = {key: cfg.get(key) for key in BUILT}
    return json.dumps({key: OmegaConf.to_container(node, resolve=True) if OmegaConf.is_config(node) else node
                       for key, node in nodes.items()}, sort_keys=True, default=str)


def _build_error(cfg: DictConfig) -> BaseException | None:
    """What stops ``cfg`` from being built, reading configs only: a config folder's module is read, not run."""
    from svmrepro.analyses import build_analyses  # scikit-learn: imported once a config is checked, not with
    from svmrepro.build import build  # the checks of claims and options that come first

    try:
        with configs_only():
            build(cfg)
            build_analyses(cfg.get("analysis"))
    except Exception as exc:  # noqa: BLE001  (whatever stops a build is the config's problem, in one line)
        return exc
    return None


@dataclass
class Checked:
    """The jobs of a sweep after the checks: those to run, those left out (a key given on the command
    line that their configs lack) with the reason, and the problems that stop the sweep."""

    runnable: list[list[str]] = field(default_factory=list)
    #: each runnable job's config and config-group options, as composed for the checks
    configs: list[tuple[DictConfig, Mapping[str, str | None]]] = field(default_factory=list)
    unstarted: list[tuple[list[str], str]] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


def check_jobs(source: SweepSource, jobs: Iterable[Sequence[str]], compose: Compose) -> Checked:
    """Compose (``compose(job)``: its config and config-group options) and build every job."""
    checked, problems, builds = Checked(), {}, {}
    partial: list[tuple[list[str], BaseException]] = []
    for job in map(list, jobs):
        choices: Mapping[str, str | None] = {}
        try:
            cfg, choices = compose(job)
            settings.check(cfg)  # what a job may change beside what it builds (its seed)
            built = _built(cfg)
        except Exception as exc:  # noqa: BLE001  (a composition error, a bad setting, an unresolved interpolation)
            if isinstance(exc, ConfigCompositionException) and culprit(exc)[0] in source.given:
                partial.append((job, exc))
            else:
                problems.setdefault(_line(source, job, choices, exc))
            continue
        if built not in builds:
            builds[built] = _build_error(cfg)
        if builds[built] is not None:
            problems.setdefault(_line(source, job, choices, builds[built]))
        else:
            checked.runnable.append(job)
            checked.configs.append((cfg, choices))
    if partial and not checked.runnable:  # a key that no job has: a mistake, not a partial sweep
        problems.update((_line(source, job, {}, exc), None) for job, exc in partial)
    else:
        checked.unstarted = [(job, composition_line(exc)) for job, exc in partial]
    checked.problems = list(problems)
    return checked


def _spec(experiment: str, report, problems: list[str]) -> ReportSpec | None:
    """The experiment's report spec, or None with its first problem added to ``problems``."""
    try:
        return spec_from_config(experiment, report)
    except ConfigError as exc:
        problems.append(first_line(exc))
        return None


def _column_problems(spec: ReportSpec, runs_dirs: Sequence[Path]) -> list[str]:
    """The report's ``x`` and ``group`` that no run of its sweeps can have as a column (a metric, or a
    param a run logs beside its config, is known only once a run has logged it)."""
    found, lines = produced(spec.experiment, runs_dirs), []
    for key in ("x", "group"):
        column = getattr(spec, key)
        if (column.startswith(("metrics.", *LOGGED_PARAMS)) or found.has(column)
                or (column == "row" and spec.rows_from_metrics)):
            continue
        lines.append(f"{experiment_file(spec.experiment)}: report.{key}: {column!r} is not a column of the runs of "
                     f"{spec.experiment}: expected params.<key> of its config or tags.<name> the runner sets")
    return lines


def check_sweep(config: DictConfig, jobs: Iterable[Sequence[str]], compose: Compose, given: Sequence[str]) -> Checked:
    """``svmrepro-run -m``'s checks: every job of the sweep (``given``: the command line's overrides,
    on top of each entry) and the experiment's report spec, if it has one."""
    experiment = config.hydra.runtime.choices.get("experiment")
    mode = str(getattr(config.mode, "value", config.mode))
    parser, written = OverridesParser.create(), {}
    for line in given:
        try:
            written[parser.parse_override(line).key_or_group] = line
        except Exception:  # noqa: BLE001  (not an override: Hydra has refused it already, or it is a flag)
            continue
    source = SweepSource(experiment, mode, mode_sweep(config, mode), written, "command line")
    problems: list[str] = []
    if experiment and config.get("report") is not None:
        _spec(experiment, config.report, problems)
    checked = check_jobs(source, jobs, compose)
    checked.problems = problems + checked.problems
    return checked


def reproduction_problems(names: Sequence[str], mode: str, given: Mapping[str, str], *, jobs: bool,
                          included: bool, runs_dirs: Sequence[Path] = ()) -> list[str]:
    """The problems of the experiments ``names`` (and, with ``included``, of those their outputs include):
    their report specs (the columns they read, against their sweeps and their runs tables in
    ``runs_dirs``) and, with ``jobs``, every job of their ``mode`` sweeps with ``given`` on top."""
    problems: list[str] = []
    known, queue = set(experiments()), list(dict.fromkeys(names))
    written = {key: f"{key}={value}" for key, value in given.items()}
    if jobs:
        _compose_ahead(queue, mode, given)
    for name in queue:
        composer = experiment_composer(name, mode)
        try:
            cfg, _ = composer.shared([])
        except HydraException as exc:
            problems.append(_line(SweepSource(name, mode), [], {}, exc))
            continue
        spec = _spec(name, cfg.get("report"), problems)
        if spec:
            problems += _column_problems(spec, runs_dirs)
        for other in spec.include if spec else ():
            if other not in known:
                problems.append(f"{experiment_file(name)}: report.include: no experiment {other} (expected "
                                "<paper>/<id> of a file experiment/<paper>/<id>.yaml)")
            elif included and other not in queue:
                queue.append(other)
        if jobs:
            node = mode_sweep(cfg, mode)
            source = SweepSource(name, mode, node, written, "--override")
            problems += check_jobs(source, sweep_jobs(node, dict(given)), composer.shared).problems
    return list(dict.fromkeys(problems))


def _compose_ahead(names: Sequence[str], mode: str, given: Mapping[str, str]) -> None:
    """The configs of the experiments ``names`` and of every job of their ``mode`` sweeps, composed ahead on
    every core (:func:`~svmrepro.compose.compose_ahead`): the checks below, the store's skip and the pages find them
    composed."""
    import joblib  # its cores, once there are jobs to check (scikit-learn imports it then), not at start-up

    cores, composers = joblib.cpu_count(), {name: experiment_composer(name, mode) for name in names}
    compose_ahead([composer.base for composer in composers.values()], cores)
    lists = []
    for name, composer in composers.items():
        try:
            lists += [[*composer.base, *job] for job in experiment_jobs(name, mode, dict(given))]
        except Exception:  # noqa: BLE001  (reported by the checks, which compose it again)
            continue
    compose_ahead(lists, cores)


def claims_problems(papers: Iterable[str], runs_dirs: Sequence[Path] = ()) -> tuple[int, list[str]]:
    """The number of claims checked (:func:`~svmrepro.report.claims.check.check_paper`), and the first
    problem of each paper's claims file that has one."""
    count, problems, known = 0, [], {}
    for paper in papers:
        try:
            if claims_file(paper) is None:
                continue
            count += check_paper(paper, runs_dirs, known)
        except (SvmReproError, HydraException) as exc:
            problems.append(first_line(exc))
    return count, problems
