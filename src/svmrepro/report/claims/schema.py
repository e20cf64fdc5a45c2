"""The typed schema of ``experiments/<paper>/claims.yaml``.

.. code-block:: yaml

    claims:
      - id: table1_fewer_svs              # unique within the paper
        source: Table 1                   # where the paper makes the claim
        claim: X-Train keeps fewer SVs than LIBSVM at the same accuracy   # in our words
        paper_says: "Forest 90000: 13023 vs 18983 SVs"                    # the paper's numbers
        output: cross_training/table1     # the output (experiment) whose runs test it
        test:                             # a primitive and its arguments (svmrepro.report.claims.primitives)
          kind: compare
          metric: n_sv
          a: svc                          # reference group (a value of ``group``), or {group: .., metric: ..}
          b: cross_training
          stat: ratio
        expect: {below: 0.8}              # the statistic's region that supports the claim
        partly: {below: 1.0}              # optional: the region that supports it in part
        timing: false                     # true: a run timed at load > cores + 0.5 makes it inconclusive
        conditions:                       # optional: where the verdict was reached under conditions other
          scale: "20000 of the paper's 100000 rows"    # than the paper's (keys: scale, data, cores,
          data: "pva97nk stands in for cup98LRN"       # parallel, counts, other)
        amendments:                       # optional, in order: each change made after the verdict could be seen
          - commit: 1a2b3c4               # the commit that made it (7-40 hex digits)
            date: 2026-11-26
            changed: [region]             # a non-empty subset of: claim, test, region, output, output_config, timing
            why: "the paper's words are ..."
            verdict_before: "partly supported: +0.0053 [0.0022, 0.0084]"
      - id: table2_speech
        source: Table 2
        claim: ...
        paper_says: ...
        not_run: the Numbers95 corpus is licensed, not public     # a claim we cannot test

``expect`` and ``partly`` are written before the runs are read, from the paper's claim and its
stated tolerance: ``{below: t}``, ``{above: t}`` or ``{between: [low, high]}``. A change to a claim
after that is an amendment, and ``experiments/<paper>/claims.lock.yaml`` (:mod:`.lock`) makes an
unrecorded one fail the tests.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field, fields
from datetime import date
from pathlib import Path
from typing import Any, Optional

import yaml
from omegaconf import MISSING, OmegaConf
from omegaconf.errors import OmegaConfBaseException

from svmrepro.errors import ConfigError
from svmrepro.locations import data_file

CLAIMS_FILE = "claims.yaml"
#: what an amendment may change: the claim's text, its test, its regions, its output, that output's
#: experiment config, its timing flag (the parts :mod:`.lock` hashes)
CHANGES = ("claim", "test", "region", "output", "output_config", "timing")
COMMIT = re.compile(r"[0-9a-f]{7,40}")


class _Loader(yaml.SafeLoader):
    """YAML without timestamps: an amendment's ``date: 2026-11-26`` stays the text it is."""


_Loader.yaml_implicit_resolvers = {
    first: [(tag, pattern) for tag, pattern in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()}


@dataclass
class RegionConf:
    below: Optional[float] = None
    above: Optional[float] = None
    between: Optional[list[float]] = None


@dataclass
class Conditions:
    """Where a verdict was reached under conditions other than the paper's, each a short phrase."""

    scale: Optional[str] = None
    data: Optional[str] = None
    cores: Optional[str] = None
    parallel: Optional[str] = None
    counts: Optional[str] = None
    other: Optional[str] = None

    def text(self) -> str:
        """``scale: ...; parallel: ...`` (empty without conditions)."""
        return "; ".join(f"{f.name}: {getattr(self, f.name)}" for f in fields(self) if getattr(self, f.name))


@dataclass
class Amendment:
    """A change to a claim made after its verdict could be seen."""

    commit: str = MISSING
    date: str = MISSING
    changed: list[str] = MISSING
    why: str = MISSING
    verdict_before: str = MISSING


@dataclass
class ClaimConf:
    id: str
    source: str
    claim: str
    paper_says: str
    output: Optional[str] = None
    test: Optional[dict[str, Any]] = None
    expect: Optional[RegionConf] = None
    partly: Optional[RegionConf] = None
    timing: bool = False
    not_run: Optional[str] = None
    conditions: Conditions = field(default_factory=Conditions)
    amendments: list[Amendment] = field(default_factory=list)


@dataclass
class ClaimsFileConf:
    claims: list[ClaimConf] = field(default_factory=list)


@dataclass(frozen=True)
class Region:
    """An interval of the real line, open at its ends: ``(low, high)``."""

    low: float = -math.inf
    high: float = math.inf

    def holds(self, low: float, high: float) -> bool:
        """Whether all of ``[low, high]`` lies inside."""
        return self.low < low and high < self.high

    def misses(self, low: float, high: float) -> bool:
        """Whether none of ``[low, high]`` lies inside."""
        return high <= self.low or low >= self.high

    def text(self) -> str:
        if math.isinf(self.low):
            return f"< {self.high:g}"
        if math.isinf(self.high):
            return f"> {self.low:g}"
        return f"in ({self.low:g}, {self.high:g})"


@dataclass(frozen=True)
class Claim:
    paper: str
    id: str
    source: str
    claim: str
    paper_says: str
    output: str | None
    test: dict[str, Any]
    expect: Region | None
    partly: Region | None
    timing: bool
    not_run: str | None
    conditions: Conditions = field(default_factory=Conditions)
    amendments: tuple[Amendment, ...] = ()


def _amendment(where: str, amendment: Amendment) -> Amendment:
    commit = str(amendment.commit)
    if not COMMIT.fullmatch(commit):
        raise ConfigError(f"{where}.commit: {commit!r}; expected 7 to 40 hex digits (quote it if YAML reads a number)")
    try:
        date.fromisoformat(amendment.date)
    except ValueError:
        raise ConfigError(f"{where}.date: {amendment.date!r}; expected YYYY-MM-DD") from None
    wrong = [word for word in amendment.changed if word not in CHANGES]
    if not amendment.changed or wrong:
        raise ConfigError(f"{where}.changed: {wrong or 'empty'}; expected a non-empty list of: {', '.join(CHANGES)}")
    for name in ("why", "verdict_before"):
        if not getattr(amendment, name).strip():
            raise ConfigError(f"{where}.{name}: empty; say it in words")
    return amendment


def _region(where: str, node: RegionConf | None) -> Region | None:
    if node is None:
        return None
    given = [k for k in ("below", "above", "between") if getattr(node, k) is not None]
    if len(given) != 1:
        raise ConfigError(f"{where}: give one of below, above, between")
    if node.below is not None:
        return Region(high=float(node.below))
    if node.above is not None:
        return Region(low=float(node.above))
    if len(node.between) != 2 or not node.between[0] < node.between[1]:
        raise ConfigError(f"{where}.between: expected [low, high] with low < high")
    return Region(float(node.between[0]), float(node.between[1]))


def claims_path(paper: str) -> Path:
    return data_file(f"experiments/{paper}/{CLAIMS_FILE}")


def parse_claims(paper: str, text: str, path: Path | str) -> list[Claim]:
    """The claims of ``text`` (the YAML of ``path``), checked against the schema: a wrong type, an
    unknown or missing key, a duplicated id or a test without a region is one line naming the
    file and the key."""
    from svmrepro.report.claims.primitives import primitive  # the registry imports the schema's users

    try:
        raw = yaml.load(text, Loader=_Loader)
        confs = OmegaConf.to_object(OmegaConf.merge(OmegaConf.structured(ClaimsFileConf), raw or {})).claims
    except (yaml.YAMLError, OmegaConfBaseException, ValueError) as exc:
        key = getattr(exc, "full_key", None)
        first = str(exc).strip().splitlines()[0]
        raise ConfigError(f"{path}: {key + ': ' if key else ''}{first}") from None
    claims, seen = [], set()
    for index, conf in enumerate(confs):
        where = f"{path}: claims[{index}] ({conf.id})"
        if conf.id in seen:
            raise ConfigError(f"{where}: id {conf.id!r} is used twice")
        seen.add(conf.id)
        if conf.not_run is None:
            if conf.output is None or conf.test is None or conf.expect is None:
                raise ConfigError(f"{where}: a claim we test needs output, test and expect (or not_run: <why>)")
            primitive(conf.test.get("kind"), f"{where}.test.kind")
        claims.append(Claim(paper=paper, id=conf.id, source=conf.source, claim=conf.claim, paper_says=conf.paper_says,
                            output=conf.output, test=dict(conf.test or {}),
                            expect=_region(f"{where}.expect", conf.expect),
                            partly=_region(f"{where}.partly", conf.partly), timing=conf.timing,
                            not_run=conf.not_run, conditions=conf.conditions,
                            amendments=tuple(_amendment(f"{where}.amendments[{k}]", amendment)
                                             for k, amendment in enumerate(conf.amendments))))
    return claims


def load_claims(paper: str) -> list[Claim]:
    """The claims of ``paper`` (none when it has no claims file)."""
    path = claims_path(paper)
    if not path.is_file():
        return []
    return parse_claims(paper, path.read_text(), path)
