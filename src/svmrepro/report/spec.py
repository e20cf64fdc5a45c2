r"""The regeneration spec of one output, read from the ``report:`` node of its experiment YAML.

    report:
      title: "Fig. 3: ..."
      x: params.dataset.n_train        # a column of the runs table (MLflow naming)
      x_label: training set size
      group: tags.algorithm            # one curve / block of rows per value
      metrics: [n_sv, test_error]      # metrics.<name> columns, one panel each
      logx: false
      logy: [n_sv]                     # panels drawn on a log scale
      paper: experiments/<paper>/<file>.csv   # the paper's numbers (optional)
      deviations: ["where our setup differs, in one line each"]
      include: [<paper>/<id>]          # optional: runs of other experiments shown beside this one's
      slopes: [{y: fit_time_s, x: params.dataset.n_train}]   # optional: log-log slopes (report/slopes.py)
      ratios: {metric: fit_time_s, to: svr}   # optional: each group's mean / the reference group's, per x
      paired: {metric: test_error, a: svc, b: xtrain, by: params.seed}   # optional: paired t-test (report/paired.py)
      summary_row: mean                # optional: a row per group averaging its x values
      rows_from_metrics: '(?P<row>step\d\.\w+)\.(?P<metric>\w+)'   # optional, see below
      scatter: {key: points, sets: {potential_sv: o, sv_full: x}}     # optional, see below
      surface: true                    # optional: decision surfaces (report/surface.py)

``rows_from_metrics`` turns each run into several rows: every logged metric whose name matches
the regular expression (named groups ``row`` and ``metric``) becomes the value of
``metrics.<metric>`` in the row ``<row>`` (column ``row``, so ``x: row``); the run's other metrics
are dropped. A run's per-step diagnostics (``step1.T1.n_sv``, ...) become a table of steps.

``scatter`` adds ``<id>.scatter.png``: one panel per run, drawn from ``diagnostics_[key]`` of the run
(its ``diagnostics.json`` artifact) = ``{X: 2-d points, y: labels, <set>: [row indices], ...}``.
Points are coloured by ``y``, points in none of the ``sets`` are faint grey, and each named set gets
its matplotlib marker (a filled marker such as ``o`` is drawn hollow and large). The points are
copied into ``<id>.points.json`` beside the runs CSV, so ``--from-csv`` redraws the picture.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from omegaconf import DictConfig, OmegaConf

from svmrepro.errors import ConfigError
from svmrepro.locations import data_file


#: summary rows a report can add per group (``x`` of the row = its name)
SUMMARY_ROWS = ("mean",)


@dataclass(frozen=True)
class ScatterSpec:
    """Which diagnostics entry holds a run's points, and the marker of each index set in it."""

    sets: tuple[tuple[str, str], ...]
    key: str = "points"


def scatter_from_config(experiment: str, node) -> ScatterSpec:
    from matplotlib.markers import MarkerStyle  # only experiments with a scatter pay for the import

    if not isinstance(node, dict) or set(node) - {"key", "sets"}:
        raise ConfigError(f"{experiment}: report.scatter must be {{key: <diagnostics key>, sets: {{<set>: <marker>}}}}")
    sets = node.get("sets")
    if not isinstance(sets, dict) or not sets:
        raise ConfigError(f"{experiment}: report.scatter.sets must map each index set to a marker, e.g. {{sv: o}}")
    for name, marker in sets.items():
        if marker not in MarkerStyle.markers:
            raise ConfigError(f"{experiment}: report.scatter.sets.{name}={marker!r} is not a matplotlib marker")
    return ScatterSpec(sets=tuple((str(k), str(v)) for k, v in sets.items()), key=str(node.get("key", "points")))


@dataclass(frozen=True)
class ReportSpec:
    experiment: str
    title: str
    x: str
    metrics: tuple[str, ...]
    group: str = "tags.algorithm"
    x_label: str | None = None
    logx: bool = False
    logy: tuple[str, ...] = ()
    paper: str | None = None
    deviations: tuple[str, ...] = field(default_factory=tuple)
    include: tuple[str, ...] = ()
    #: (y metric, x column) pairs whose log-log slope per group the output reports
    slopes: tuple[tuple[str, str], ...] = ()
    #: (metric, reference group) for a table of ratios to that group at each x
    ratios: tuple[str, str] | None = None
    #: (metric, group a, group b, pairing column) for a paired comparison of b against a per x
    paired: tuple[str, str, str, str] | None = None
    summary_row: str | None = None
    rows_from_metrics: str | None = None
    scatter: ScatterSpec | None = None
    #: draw each group's decision surface from its runs' ``surface.json`` artifacts
    surface: bool = False

    @property
    def paper_id(self) -> str:
        return self.experiment.split("/")[0]

    @property
    def output_id(self) -> str:
        return self.experiment.split("/")[-1]

    def paper_path(self) -> Path | None:
        """The paper's numbers: the package's ``experiments/...`` file, or a copy of the user's (:func:`data_file`)."""
        return data_file(self.paper) if self.paper else None


def spec_from_config(experiment: str, report: DictConfig | dict | None) -> ReportSpec:
    if not report:
        raise ConfigError(f"experiment {experiment} has no report: section, so it has no output")
    node = OmegaConf.to_container(report, resolve=True) if isinstance(report, DictConfig) else dict(report)
    allowed = set(ReportSpec.__dataclass_fields__) - {"experiment"}
    unknown = set(node) - allowed
    if unknown:
        raise ConfigError(f"{experiment}: report.{sorted(unknown)[0]} is not a report key; allowed: {sorted(allowed)}")
    for required in ("title", "x", "metrics"):
        if required not in node:
            raise ConfigError(f"{experiment}: report.{required} is missing")
    if "slopes" in node:
        if not all(isinstance(fit, dict) and set(fit) == {"x", "y"} for fit in node["slopes"]):
            raise ConfigError(f"{experiment}: report.slopes must be a list of {{y: <metric>, x: <column>}}")
        node["slopes"] = tuple((fit["y"], fit["x"]) for fit in node["slopes"])
    if "ratios" in node:
        fit = node["ratios"]
        if not (isinstance(fit, dict) and set(fit) == {"metric", "to"}):
            raise ConfigError(f"{experiment}: report.ratios must be {{metric: <metric>, to: <group>}}")
        node["ratios"] = (fit["metric"], str(fit["to"]))
    if "paired" in node:
        fit = node["paired"]
        if not (isinstance(fit, dict) and set(fit) == {"metric", "a", "b", "by"}):
            raise ConfigError(f"{experiment}: report.paired must be {{metric: <metric>, a: <group>, b: <group>, by: <column>}}")
        node["paired"] = (fit["metric"], str(fit["a"]), str(fit["b"]), fit["by"])
    for option in ("ratios", "paired"):  # their metric is summarised, so check_columns covers it
        if node.get(option) and node[option][0] not in node["metrics"]:
            raise ConfigError(f"{experiment}: report.{option} compares {node[option][0]!r}, which is not in report.metrics")
    for key in ("metrics", "logy", "deviations", "include"):
        if key in node:
            node[key] = tuple(node[key])
    if node.get("summary_row") not in (None, *SUMMARY_ROWS):
        allowed = ", ".join(SUMMARY_ROWS)
        raise ConfigError(f"{experiment}: report.summary_row={node['summary_row']!r}; allowed: {allowed}")
    if node.get("rows_from_metrics") is not None:
        try:
            groups = set(re.compile(node["rows_from_metrics"]).groupindex)
        except re.error as exc:
            raise ConfigError(f"{experiment}: report.rows_from_metrics is not a regular expression: {exc}") from None
        if groups != {"row", "metric"}:
            raise ConfigError(f"{experiment}: report.rows_from_metrics needs the named groups 'row' and 'metric'")
    if not isinstance(node.get("surface", False), bool):
        raise ConfigError(f"{experiment}: report.surface must be true or false")
    if node.get("scatter") is not None:
        node["scatter"] = scatter_from_config(experiment, node["scatter"])
    return ReportSpec(experiment=experiment, **node)
