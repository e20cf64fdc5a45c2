"""Claims checked before any compute: every claim of a paper against its primitive's typed ``Test``
and against what its output's experiment can produce, without running anything.

A claims file fails here, in one line naming the file, the claim and the key, when it is missing though
the paper's lock registers claims (:func:`claims_file`), when it has no claims, when a claim's output is
no experiment, when its test has a key its primitive does not read or a value of the wrong type, when its
region's bound is not a finite number (``below: .nan``), or when the test names what the output's runs
cannot hold:

- a group (``a``, ``b``, ``group``) or a ``where``/``at`` value that no job of the sweep gives its
  column: ``tags.algorithm`` is the algorithm option a job picks, ``tags.label`` its ``label`` (else
  its data set), ``params.<key>`` the value its overrides or the experiment's config give ``<key>``
  (a key of a config group the job replaces, and not overridden, can hold any value);
- a column (``x``, ``where``, ``by``, ``group_column``) that is none of the params of the sweep's
  configs, the tags the runner derives from a job, and the columns of the output's runs tables;
- a metric (``metric``, a side's ``metric``, ``x: metrics.<name>``) that the output's runs tables do
  not have. A run's metrics are whatever its measure and its estimator's ``diagnostics_`` return
  (``step3.Tfinal.n_train``), so no list of them exists before a run: the runs tables already made
  (``<results>/<paper>/<id>.runs.csv``, committed for the full mode) are what the code logs; an
  output without one, or a test reading an algorithm its tables have no runs of yet, has its
  metrics checked when its claims are judged.

A claim's ``today`` readings (its test with the ``today`` block's keys merged in) are checked the same
way; a side read from another output (``output:``) is held to that output's runs when judged. Every mode of an
experiment's sweep counts, and the sweeps of the experiments its output includes
(``report.include``): a claim may read any of their runs. ``svmrepro-reproduce`` runs
:func:`check_claims` before its first sweep, and alone with ``--check``.
"""

from __future__ import annotations

import copy
import csv
import json
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from difflib import get_close_matches
from functools import cache
from pathlib import Path

import yaml
from omegaconf import OmegaConf
from omegaconf.errors import ConfigKeyError, MissingMandatoryValue, OmegaConfBaseException

from svmrepro.compose import compose_run, experiments
from svmrepro.errors import ConfigError, first_line
from svmrepro.identity import NON_IDENTITY_KEYS, flatten, identity_config
from svmrepro.locations import config_dirs, data_file
from svmrepro.report.claims.lock import LOCK_FILE
from svmrepro.report.claims.primitives import primitive
from svmrepro.report.claims.schema import CLAIMS_FILE, Claim, Region, claims_path, parse_claims
from svmrepro.report.claims.selection import METRIC, Selection
from svmrepro.report.claims.today import READINGS
from svmrepro.report.claims.estimate import GROUP_COLUMN as ALGORITHM
from svmrepro.report.claims.fastest import FASTER_OF, candidates, is_choice
from svmrepro.report.runs import KEEP_COLUMNS
from svmrepro.report.spec import spec_from_config
from svmrepro.store import choice_tags, run_params
from svmrepro.sweep.jobs import sweep_jobs


@dataclass
class Produced:
    """What the runs of an output can hold: each column with the values the sweep gives it (None:
    any value), and the metrics its runs tables have (None: no runs table yet, not known)."""

    columns: dict[str, set[str] | None] = field(default_factory=dict)
    metrics: set[str] | None = None
    #: ``params.<group>.`` of the config groups some job replaces: any key below may be a column
    open_prefixes: set[str] = field(default_factory=set)
    #: the algorithms the runs tables have runs of (None: no runs table yet)
    tabled: set[str] | None = None

    def knows_metrics_of(self, test: Selection) -> bool:
        """Whether the runs tables tell the metrics ``test`` reads: not when it reads an algorithm
        the sweep has gained since they were written."""
        if self.metrics is None:
            return False
        return test.group_column != ALGORITHM or all(str(group) in self.tabled for _, group in test.groups())

    def has(self, column: str) -> bool:
        return column in self.columns or column.startswith(tuple(self.open_prefixes))

    def add(self, column: str, value) -> None:
        if column in self.columns and self.columns[column] is None:
            return
        if value is None:
            self.columns[column] = None
        else:
            self.columns.setdefault(column, set()).add(_text(value))


def _text(value) -> str:
    """A value as a runs table compares it: numbers by value (``5000`` is ``5000.0``), else as text."""
    text = str(value).strip().strip("'\"")
    try:
        return repr(float(text))
    except ValueError:
        return text


def _groups() -> set[str]:
    """The config groups (``algorithm``, ``dataset``, ...): an override of one picks an option."""
    return {p.name for root in config_dirs() for p in root.iterdir() if p.is_dir() and p.name != "hydra"}


def _job_values(job: list[str], cfg, base: dict[str, object], choices: dict, groups: set[str]) -> tuple[dict, set[str]]:
    """Column -> value of the run one job of the sweep makes from the experiment's config ``cfg``
    (``base``: its params, flattened; None: a value not known without composing the job), as
    :func:`svmrepro.runner.run` tags and logs it, and the config groups the job replaces (any
    ``params.<group>.<key>`` may then be a column)."""
    overrides = dict(item.lstrip("+").split("=", 1) for item in job if not item.startswith("~"))
    picked = {**{g: choices.get(g) for g in groups}, **{k: v for k, v in overrides.items() if k in groups}}
    replaced = {k for k, v in overrides.items() if k in groups and v != choices.get(k)}
    values: dict[str, object] = {}
    for key, value in base.items():
        values[f"params.{key}"] = None if key.split(".")[0] in replaced else value
    values.update({f"params.{key}": value for key, value in overrides.items()
                   if key not in groups and key.split(".")[0] not in NON_IDENTITY_KEYS})
    seed = overrides.get("seed", base.get("seed"))
    label = overrides.get("label", cfg.get("label")) or picked.get("dataset")
    experiment = str(choices["experiment"])
    values.update({"tags.algorithm": picked.get("algorithm"), "tags.dataset": picked.get("dataset"),
                   "tags.label": label, "tags.seed": seed, "tags.experiment": experiment,
                   "tags.paper": experiment.split("/")[0]})
    values.update({f"tags.{k}": v for k, v in choice_tags(picked).items()})
    return values, replaced


def _runs_tables(output: str, runs_dirs: Sequence[Path]) -> list[tuple[list[str], set[str]]]:
    """The header of each runs table of ``output`` in ``runs_dirs``, with the algorithms its runs have."""
    paper, output_id = output.split("/", 1)
    tables = []
    for folder in runs_dirs:
        path = Path(folder) / paper / f"{output_id}.runs.csv"
        if path.is_file():
            with path.open(newline="") as handle:
                rows = csv.reader(handle)
                header = next(rows, [])
                at = header.index(ALGORITHM) if ALGORITHM in header else None
                tables.append((header, {row[at] for row in rows if at is not None and len(row) > at}))
    return tables


@cache
def _swept(output: str, dirs: tuple[Path, ...]) -> Produced:
    """The columns the runs of ``output`` can hold and their values, from its experiment's sweep in
    every mode and those of the experiments it includes; composed once per search path ``dirs``."""
    found, groups = Produced(), _groups()
    composed = {output: compose_run([f"experiment={output}"])}
    for experiment in spec_from_config(output, composed[output][0].get("report")).include:
        composed[experiment] = compose_run([f"experiment={experiment}"])
    for cfg, choices in composed.values():
        base = run_params(flatten(identity_config(cfg)))
        sweep = cfg.get("sweep") or {}
        for mode in list(sweep) or [base["mode"]]:
            for job in sweep_jobs(sweep.get(mode)):
                values, replaced = _job_values(job, cfg, base, choices, groups)
                for column, value in {**values, "tags.mode": mode, "params.mode": mode}.items():
                    found.add(column, value)
                found.open_prefixes |= {f"params.{group}." for group in replaced}
    for column in KEEP_COLUMNS:
        found.add(column, None)
    return found


def produced(output: str, runs_dirs: Sequence[Path] = ()) -> Produced:
    """What the runs of ``output`` can hold (:class:`Produced`): what its sweeps give, and the
    columns of its runs tables in ``runs_dirs``."""
    swept = _swept(output, tuple(config_dirs()))
    found = Produced({column: None if values is None else set(values) for column, values in swept.columns.items()},
                     None, set(swept.open_prefixes))
    for header, algorithms in _runs_tables(output, runs_dirs):
        found.metrics = (found.metrics or set()) | {c.removeprefix(METRIC) for c in header if c.startswith(METRIC)}
        found.tabled = (found.tabled or set()) | algorithms
        for column in header:
            if not column.startswith(METRIC) and column not in found.columns:
                found.add(column, None)
    return found


#: each test typed so far, by its primitive's ``Test`` and its keys (:func:`typed_test`)
_TYPED: dict[str, Selection] = {}


def typed_test(claim: Claim, where: str) -> Selection:
    """``claim.test`` merged into its primitive's ``Test``: an unknown key, a wrong type or a
    missing key is one line naming it. A test is merged once per process (OmegaConf's merge is most
    of a check's time): the same keys give a copy of the test typed before."""
    schema = primitive(claim.test.get("kind"), f"{where}.kind").Test
    seen = json.dumps([schema.__module__, schema.__qualname__, claim.test], sort_keys=True, default=repr)
    if seen not in _TYPED:
        _TYPED[seen] = _merged(schema, claim, where)
    test = copy.deepcopy(_TYPED[seen])
    problems = test.problems()
    if problems:
        key, problem = problems[0]
        raise ConfigError(f"{where}.{key}: {problem}")
    return test


def _merged(schema: type, claim: Claim, where: str) -> Selection:
    """``claim.test`` merged into ``schema`` key by key; a failure is one line naming its key."""
    node = OmegaConf.structured(schema)
    for key, value in claim.test.items():  # one key at a time, so that a failure names its key
        try:
            node = OmegaConf.merge(node, {key: value})
        except ConfigKeyError:
            valid = ", ".join(OmegaConf.structured(schema).keys())
            raise ConfigError(f"{where}.{key}: not a key of a {claim.test['kind']} test; valid: {valid}") from None
        except OmegaConfBaseException as exc:
            raise ConfigError(f"{where}.{key}: {first_line(exc)}") from None
    try:
        test = OmegaConf.to_object(node)
    except MissingMandatoryValue as exc:
        raise ConfigError(f"{where}.{exc.full_key}: missing: a {claim.test['kind']} test needs it") from None
    return test


def _check_region(region: Region | None, where: str) -> None:
    """A region's bounds are finite numbers; only the side a ``below`` or ``above`` leaves open is infinite."""
    if region is None:
        return
    key = "below" if region.low == -math.inf else "above" if region.high == math.inf else "between"
    bounds = {"below": [region.high], "above": [region.low], "between": [region.low, region.high]}[key]
    if not all(math.isfinite(b) for b in bounds):
        raise ConfigError(f"{where}.{key}: expected finite numbers, got {', '.join(f'{b:g}' for b in bounds)}")


def _check_reads(test: Selection, found: Produced, output: str, where: str) -> None:
    """The columns, values and metrics ``test`` reads are ones the runs of ``output`` can hold."""
    for key, column, wanted in test.reads():
        if column.startswith(METRIC):
            name = column.removeprefix(METRIC)
            if found.knows_metrics_of(test) and name not in found.metrics:
                close = get_close_matches(name, found.metrics, n=3)
                raise ConfigError(f"{where}.{key}: {name!r} is not a metric the runs of {output} log"
                                  + (f"; closest: {', '.join(close)}" if close else ""))
            continue
        if not found.has(column):
            raise ConfigError(f"{where}.{key}: {column!r} is not a column of the runs of {output}: expected "
                              "params.<key> of its config, tags.<name> the runner sets, or metrics.<name>")
        values = found.columns.get(column)
        for value in wanted:
            if values is not None and _text(value) not in values:
                raise ConfigError(f"{where}.{key}: {value!r} is no value of {column} in the sweep of {output}; "
                                  f"valid: {', '.join(sorted(_shown(v) for v in values))}")


def _shown(text: str) -> str:
    """A value as the YAML would give it (``5000``, not ``5000.0``)."""
    try:
        number = float(text)
    except ValueError:
        return text
    return f"{number:g}"


def claims_file(paper: str) -> Path | None:
    """``paper``'s claims file; None when it has none. Its claims lock (``claims.lock.yaml``, :mod:`.lock`) says
    that it has some: the first lock found (as :func:`~svmrepro.locations.data_file` finds a paper's files) that
    registers claims with no claims file beside it is one line naming the file expected, where the paper would
    otherwise be judged as having no claims."""
    lock = data_file(f"experiments/{paper}/{LOCK_FILE}")
    expected = lock.with_name(CLAIMS_FILE)
    if lock.is_file() and not expected.is_file():
        try:
            registered = dict((yaml.safe_load(lock.read_text()) or {}).get("claims") or {})
        except (OSError, yaml.YAMLError, AttributeError, TypeError, ValueError):
            registered = None  # a damaged lock still says that the paper has claims
        if registered != {}:
            outputs = sorted({name for entry in (registered or {}).values() if isinstance(entry, dict)
                              for name in entry.get("data") or {}})
            count = "claims" if registered is None else f"{len(registered)} claim{'s' * (len(registered) > 1)}"
            read = f" (on {', '.join(outputs)})" if outputs else ""
            raise ConfigError(f"{expected}: no such file, though {lock.name} beside it registers {count} of paper "
                              f"{paper}{read}: restore the claims file, or delete the lock if the paper has none")
    path = claims_path(paper)
    return path if path.is_file() else None


def check_paper(paper: str, runs_dirs: Sequence[Path] = (), known: dict[str, Produced] | None = None) -> int:
    """Check every claim of ``paper``'s claims file (:mod:`this module <svmrepro.report.claims.check>`);
    the number of claims. ``known`` caches what each output produces across papers."""
    path = claims_path(paper)
    claims = parse_claims(paper, path.read_text(), path)
    if not claims:
        raise ConfigError(f"{path}: has no claims (a claims file lists at least one under claims:)")
    known = {} if known is None else known
    outputs = set(experiments())
    for claim in claims:
        where = f"{path}: {claim.id}"
        _check_region(claim.expect, f"{where}.expect")
        _check_region(claim.partly, f"{where}.partly")
        if claim.not_run is not None:
            continue
        if claim.output not in outputs:
            raise ConfigError(f"{where}.output: no experiment {claim.output} "
                              "(expected <paper>/<id> of a file conf/experiment/<paper>/<id>.yaml)")
        for key, test in _readings(claim).items():
            output = test.get("output") or claim.output  # a one-group test may read another output's runs
            if output not in outputs:
                raise ConfigError(f"{where}.{key}.output: no experiment {output}")
            if output not in known:
                known[output] = produced(output, runs_dirs)
            _check_reads(typed_test(replace(claim, test=test), f"{where}.{key}"), known[output], output,
                         f"{where}.{key}")
            _check_sides(test, known, runs_dirs, outputs, f"{where}.{key}")
    return len(claims)


def _check_sides(test: dict, known: dict[str, Produced], runs_dirs: Sequence[Path], outputs: set[str],
                 where: str) -> None:
    """Each side of ``test`` that names an output of its own (a candidate of a ``faster_of`` side too):
    the output exists, and its runs can hold the side's group and metric."""
    for name in ("a", "b"):
        listed = test.get(name)
        for index, side in enumerate(candidates(listed)):
            if not isinstance(side, dict) or not side.get("output") or "group" not in side:
                continue
            at = f"{where}.{name}" + (f".{FASTER_OF}[{index}]" if is_choice(listed) else "")
            output = side["output"]
            if output not in outputs:
                raise ConfigError(f"{at}.output: no experiment {output}")
            if output not in known:
                known[output] = produced(output, runs_dirs)
            found = known[output]
            groups = found.columns.get(test.get("group_column", ALGORITHM)) or set()
            if found.has(test.get("group_column", ALGORITHM)) and groups and _text(side["group"]) not in groups:
                raise ConfigError(f"{at}.group: {side['group']!r} is no value of {test.get('group_column', ALGORITHM)} "
                                  f"in the sweep of {output}; valid: {', '.join(sorted(_shown(g) for g in groups))}")
            measured = side.get("metric", test.get("metric"))
            tabled = found.tabled is not None and str(side["group"]) in found.tabled
            if measured and tabled and found.metrics is not None and measured not in found.metrics:
                close = get_close_matches(measured, found.metrics, n=3)
                raise ConfigError(f"{at}.metric: {measured!r} is not a metric the runs of {output} log"
                                  + (f"; closest: {', '.join(close)}" if close else ""))


def _readings(claim: Claim) -> dict[str, dict]:
    """The tests the claim is judged by, under the key a claims file gives each at: its own and,
    merged into it, those of its ``today`` block (:mod:`.today`)."""
    found = {"test": claim.test}
    if claim.today is not None:
        found |= {READINGS[name]: test for name, test in claim.today.tests(claim.test).items() if test is not None}
    return found


def check_claims(papers: Iterable[str], runs_dirs: Sequence[Path] = ()) -> int:
    """Check the claims file of each of ``papers`` that has one (:func:`claims_file`); the number of claims
    checked. The first problem is a :class:`~svmrepro.errors.ConfigError` naming the file, the claim and the key."""
    known: dict[str, Produced] = {}
    return sum(check_paper(paper, runs_dirs, known) for paper in papers if claims_file(paper))
