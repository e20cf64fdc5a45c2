r"""The regeneration spec of one output, read from the ``report:`` node of its experiment YAML.

    report:
      title: "Fig. 3: ..."
      x: params.dataset.n_train        # a column of the runs table (MLflow naming)
      x_label: training set size
      group: tags.algorithm            # one curve / block of rows per value
      group_label: setting             # optional: the legend's title and the table's first header
      metrics: [n_sv, test_error]      # metrics.<name> columns, one panel each
      logx: false                      # true: always log (an x spanning > a decade is log anyway)
      logy: [n_sv]                     # panels always on a log scale (report/ticks.py)
      paper: experiments/<paper>/<file>.csv   # the paper's numbers (optional)
      deviations: ["where our setup differs, in one line each"]
      include: [<paper>/<id>]          # optional: runs of other experiments shown beside this one's
      summary_row: mean                # optional: a row per group averaging its x values
      rows_from_metrics: '(?P<row>step\d\.\w+)\.(?P<metric>\w+)'   # optional, see below
      # optional keys of the page's sections (report/sections/<key>.py), in page order:
      scatter: {key: points, sets: {potential_sv: o, sv_full: x}}     # see below
      surface: true                    # decision surfaces
      paired: {metric: test_error, a: svc, b: xtrain, by: params.seed}   # paired t-test per x
      ratios: {metric: fit_time_s, to: svr}   # each group's mean / the reference group's, per x
      slopes: [{y: fit_time_s, x: params.dataset.n_train}]   # log-log slopes per group

``rows_from_metrics`` turns each run into several rows: every logged metric whose name matches
the regular expression (named groups ``row`` and ``metric``) becomes the value of
``metrics.<metric>`` in the row ``<row>`` (column ``row``, so ``x: row``); the run's other metrics
are dropped. A run's per-step diagnostics (``step1.T1.n_sv``, ...) become a table of steps.

``scatter`` adds ``<id>.scatter.png``: one panel per run, drawn from ``diagnostics_[key]`` of the run
(its ``diagnostics.json`` artifact) = ``{X: 2-d points, y: labels, <set>: [row indices], ...}``.
Points are coloured by ``y``, points in none of the ``sets`` are faint grey, and each named set gets
its matplotlib marker (a filled marker such as ``o`` is drawn hollow and large). The points are
copied into ``<id>.points.json`` beside the runs CSV, so ``--from-csv`` redraws the picture.

A wrong node stops with one :class:`~svmrepro.errors.ConfigError` line that names the experiment's
YAML file, the key and what it must hold. The node's shape is the dataclass :func:`report_node`, an
OmegaConf structured config of :class:`BaseNode`'s keys and each section's own key
(:mod:`svmrepro.report.sections`): merging the YAML into it refuses unknown keys and values of the
wrong type; the checks that span keys (the regex has its groups; a section's, e.g. a ratio's metric
is reported) follow.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, make_dataclass
from functools import cache
from pathlib import Path
from typing import Any, List, Optional, get_args, get_origin, get_type_hints

from omegaconf import MISSING, DictConfig, OmegaConf
from omegaconf.errors import ConfigKeyError, OmegaConfBaseException

from svmrepro.errors import ConfigError
from svmrepro.locations import config_file, data_file
from svmrepro.report.registry import section_options


#: summary rows a report can add per group (``x`` of the row = its name)
SUMMARY_ROWS = ("mean",)
#: the column whose values are the curves (blocks of rows) when a report names none
DEFAULT_GROUP = "tags.algorithm"


# ---------------------------------------------------------------------------------------------
# The node as written in YAML. ``expects`` (field metadata) says in words what a key holds.

def _expects(text: str, **default):
    return field(metadata={"expects": text}, **default)


@dataclass
class BaseNode:
    """The keys of an experiment's ``report:`` node that the output's table and figure read (the
    module docstring shows every key in use); :func:`report_node` adds the sections' keys."""

    title: str = _expects("a title string", default=MISSING)
    x: str = _expects("a column of the runs table, e.g. params.dataset.n_train", default=MISSING)
    metrics: List[str] = _expects("a list of metric names", default=MISSING)
    group: str = _expects("a column of the runs table, e.g. tags.algorithm", default=DEFAULT_GROUP)
    x_label: Optional[str] = _expects("a string", default=None)
    group_label: Optional[str] = _expects("a string", default=None)
    logx: bool = _expects("true or false", default=False)
    logy: List[str] = _expects("a list of metric names", default_factory=list)
    paper: Optional[str] = _expects("a path such as experiments/<paper>/<file>.csv", default=None)
    deviations: List[str] = _expects("a list of strings, one per difference", default_factory=list)
    include: List[str] = _expects("a list of experiments <paper>/<id>", default_factory=list)
    summary_row: Optional[str] = _expects(f"one of: {', '.join(SUMMARY_ROWS)}", default=None)
    rows_from_metrics: Optional[str] = _expects("a regular expression with the groups (?P<row>) and (?P<metric>)",
                                                default=None)


@cache
def report_node() -> type:
    """Schema of an experiment's ``report:`` node: :class:`BaseNode` and each section's key."""
    added = [(option.key, option.kind,
              _expects(option.expects, default_factory=lambda default=option.default: copy.deepcopy(default)))
             for _, option in section_options().values()]
    return make_dataclass("ReportNode", added, bases=(BaseNode,))


@cache
def expects() -> dict[str, str]:
    """What each key of the ``report:`` node holds, in words."""
    return {f.name: f.metadata["expects"] for f in fields(report_node())}


@cache
def _strict() -> dict[str, Any]:
    """Keys whose wrong values OmegaConf lets through: it turns ``"yes"`` into true and ``[1]`` into
    text, and keeps a list entry that YAML reads as a mapping (``- the paper's time: 3 s``)."""
    return {name: kind for name, kind in get_type_hints(report_node()).items()
            if kind is bool or (get_origin(kind) is list and get_args(kind) == (str,))}


def _is_strictly(value, kind) -> bool:
    if kind is bool:
        return isinstance(value, bool)
    return isinstance(value, list) and all(isinstance(item, str) for item in value)


# ---------------------------------------------------------------------------------------------
# The spec the report code reads

@dataclass(frozen=True)
class ScatterSpec:
    """Which diagnostics entry holds a run's points, and the marker of each index set in it."""

    sets: tuple[tuple[str, str], ...]
    key: str = "points"


@dataclass(frozen=True)
class ReportSpec:
    experiment: str
    title: str
    x: str
    metrics: tuple[str, ...]
    group: str = DEFAULT_GROUP
    x_label: str | None = None
    group_label: str | None = None
    logx: bool = False
    logy: tuple[str, ...] = ()
    paper: str | None = None
    deviations: tuple[str, ...] = field(default_factory=tuple)
    include: tuple[str, ...] = ()
    summary_row: str | None = None
    rows_from_metrics: str | None = None
    #: each section's value by its key (``spec.<key>`` reads it, or the section's value when unset),
    #: e.g. ``{"ratios": ("fit_time_s", "svc")}`` (:mod:`svmrepro.report.sections`)
    options: Mapping[str, Any] = field(default_factory=dict)

    def __getattr__(self, name: str):
        # only names that are no field come here: a section's key
        if name.startswith("__") or name not in section_options():
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        _, option = section_options()[name]
        return self.options.get(name, option.unset)

    @property
    def paper_id(self) -> str:
        return self.experiment.split("/")[0]

    @property
    def output_id(self) -> str:
        return self.experiment.split("/")[-1]

    def paper_path(self) -> Path | None:
        """The paper's numbers: the package's ``experiments/...`` file, or a copy of the user's (:func:`data_file`)."""
        return data_file(self.paper) if self.paper else None


# ---------------------------------------------------------------------------------------------
# Reading and checking a node

def experiment_file(experiment: str) -> str:
    """The YAML file of ``experiment`` as a user opens it (relative to the current folder when it is
    below it), found as Hydra finds it; the experiment's name when no file has it (a spec in code)."""
    return config_file(f"experiment/{experiment}.yaml") or experiment


def shown(value) -> str:
    """A value as an error line quotes it: its kind and a short repr."""
    if value is None or isinstance(value, bool):
        return {None: "null", True: "true", False: "false"}[value]
    kind = {str: "the string", list: "the list", dict: "the mapping", int: "the number", float: "the number"}
    text = repr(value)
    return f"{kind.get(type(value), 'the value')} {text if len(text) <= 80 else text[:77] + '...'}"


def _wrong(where: str, key: str, value) -> str:
    return f"{where}: report.{key} must be {expects()[key]}, got {shown(value)}"


def _merged(where: str, node: dict):
    """``node`` merged key by key into :func:`report_node`, so each failure names its top-level key."""
    schema = OmegaConf.structured(report_node())
    unknown = sorted(map(str, set(node) - set(expects())))
    if unknown:
        raise ConfigError(f"{where}: report.{unknown[0]} is not a report key; allowed: {', '.join(expects())}")
    strict = _strict()
    for key, value in node.items():
        if key in strict and not _is_strictly(value, strict[key]):
            raise ConfigError(_wrong(where, key, value))
        try:
            schema.merge_with({key: value})
        except ConfigKeyError as exc:  # an unknown key inside the node (ratios.z)
            raise ConfigError(f"{_wrong(where, key, value)} (no key {exc.key!r})") from None
        except OmegaConfBaseException:
            raise ConfigError(_wrong(where, key, value)) from None
    missing = sorted(OmegaConf.missing_keys(schema))
    if missing:
        key = re.split(r"[.\[]", missing[0])[0]
        hint = "" if missing[0] == key else f"; report.{key} must be {expects()[key]}"
        raise ConfigError(f"{where}: report.{missing[0]} is missing{hint}")
    return OmegaConf.to_object(schema)


def _check(where: str, node: BaseNode) -> None:
    """The rules a type cannot say (each section checks its own key's: its ``configure``)."""
    if not node.metrics:
        raise ConfigError(f"{where}: report.metrics must be {expects()['metrics']}, got the list []")
    if node.summary_row not in (None, *SUMMARY_ROWS):
        raise ConfigError(f"{where}: report.summary_row={node.summary_row!r}; allowed: {', '.join(SUMMARY_ROWS)}")
    if node.rows_from_metrics is not None:
        try:
            groups = set(re.compile(node.rows_from_metrics).groupindex)
        except re.error as exc:
            raise ConfigError(f"{where}: report.rows_from_metrics is not a regular expression: {exc}") from None
        if groups != {"row", "metric"}:
            raise ConfigError(f"{where}: report.rows_from_metrics needs the named groups 'row' and 'metric'")
    if node.paper and not data_file(node.paper).is_file():
        raise ConfigError(f"{where}: report.paper: no file {node.paper} (in the current folder, a --config-dir "
                          f"folder or the package)")


def spec_from_config(experiment: str, report: DictConfig | dict | None) -> ReportSpec:
    """The :class:`ReportSpec` of ``experiment`` from its ``report:`` node, or one ConfigError line."""
    where = experiment_file(experiment)
    if not report:
        raise ConfigError(f"{where}: no report: section, so the experiment has no output")
    try:
        node = OmegaConf.to_container(report, resolve=True) if OmegaConf.is_config(report) else report
    except OmegaConfBaseException as exc:
        raise ConfigError(f"{where}: report: {str(exc).splitlines()[0]}") from None
    if not isinstance(node, dict):
        raise ConfigError(f"{where}: report must be a mapping of report keys (title, x, metrics, ...), "
                          f"got {shown(node)}")
    node = _merged(where, node)
    _check(where, node)
    return ReportSpec(
        experiment=experiment, title=node.title, x=node.x, metrics=tuple(node.metrics), group=node.group,
        x_label=node.x_label, group_label=node.group_label, logx=node.logx, logy=tuple(node.logy), paper=node.paper,
        deviations=tuple(node.deviations), include=tuple(node.include),
        summary_row=node.summary_row, rows_from_metrics=node.rows_from_metrics,
        options={key: module.configure(where, node) for key, (module, _) in section_options().items()},
    )
