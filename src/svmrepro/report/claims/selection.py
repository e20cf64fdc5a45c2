"""The typed arguments of a claim's test: :class:`Selection`, the keys every primitive selects its
runs by (read by :func:`~svmrepro.report.claims.estimate.select` and
:func:`~svmrepro.report.claims.estimate.group_runs`), which each primitive's ``Test`` extends with
its own. :mod:`svmrepro.report.claims.check` merges a claim's test into its primitive's ``Test``
(an OmegaConf structured config: an unknown key or a wrong type fails at load), then asks it which
columns, values and metrics the test reads, to hold them against what the output's sweep produces.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, Optional

from omegaconf import MISSING

from svmrepro.report.claims.estimate import GROUP_COLUMN

#: the prefix of a metric's column in the runs table
METRIC = "metrics."


@dataclass
class Selection:
    #: the primitive: a module of :mod:`svmrepro.report.claims.primitives`
    kind: str = MISSING
    #: keeps the runs whose column has the value, or one of the values of a list:
    #: ``{params.dataset.n_train: 20000, tags.label: [a, b]}``
    where: Optional[Dict[str, Any]] = None
    #: keeps the runs at these values of ``x`` (a value or a list); ``all`` or none: every value
    at: Any = None
    #: a column of the runs table (``params.dataset.n_train``): what a slope or trend is taken
    #: against, and what ``compare`` pairs runs by beside ``by``
    x: Optional[str] = None
    #: the column whose values the test's groups (``a``, ``b``, ``group``) name
    group_column: str = GROUP_COLUMN

    def at_values(self) -> list:
        """The values of ``x`` that ``at`` keeps (none for ``all`` or no ``at``)."""
        if self.at is None or self.at == "all":
            return []
        return list(self.at) if isinstance(self.at, (list, tuple)) else [self.at]

    def problems(self) -> list[tuple[str, str]]:
        """(key, what is wrong) of the checks that span keys."""
        if self.at_values() and self.x is None:
            return [("at", "needs the column 'x'")]
        return []

    def reads(self) -> list[tuple[str, str, list]]:
        """(key, column, the values it asks of the column) for every column the test reads, a
        metric as ``metrics.<name>``; no values: any value."""
        found = [("group_column", self.group_column, [])]
        found += [(key, self.group_column, [group]) for key, group in self.groups()]
        found += [(f"where.{name}", name, list(value) if isinstance(value, (list, tuple)) else [value])
                  for name, value in (self.where or {}).items()]
        if self.x is not None:
            found += [("x", self.x, []), ("at", self.x, self.at_values())]
        return found + [(key, f"{METRIC}{name}", []) for key, name in self.metrics()]

    def groups(self) -> list[tuple[str, Any]]:
        """(key, value of ``group_column``) of each group the test reads."""
        return []

    def metrics(self) -> list[tuple[str, str]]:
        """(key, metric name) of each metric the test reads."""
        return []


@dataclass
class OneGroup(Selection):
    """The arguments of a test of one metric over one group's runs (``slope``, ``threshold``, ``trend``)."""

    metric: str = MISSING
    group: Any = MISSING
    #: the output whose runs the test reads (``<paper>/<id>``), when not the claim's own: a reading
    #: against today's solver of a method run only in the companion output (``<id>_today``)
    output: Optional[str] = None

    def problems(self) -> list[tuple[str, str]]:
        found = super().problems()
        if isinstance(self.group, (list, dict)):
            found.append(("group", "expected one group (a value of group_column)"))
        return found

    def groups(self) -> list[tuple[str, Any]]:
        return [("group", self.group)]

    def metrics(self) -> list[tuple[str, str]]:
        return [("metric", self.metric)]
