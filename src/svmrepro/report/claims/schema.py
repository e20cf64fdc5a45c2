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
      - id: table2_speech
        source: Table 2
        claim: ...
        paper_says: ...
        not_run: the Numbers95 corpus is licensed, not public     # a claim we cannot test

``expect`` and ``partly`` are written before the runs are read, from the paper's claim and its
stated tolerance: ``{below: t}``, ``{above: t}`` or ``{between: [low, high]}``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

import yaml
from omegaconf import OmegaConf
from omegaconf.errors import OmegaConfBaseException

from svmrepro.errors import ConfigError
from svmrepro.locations import data_file

CLAIMS_FILE = "claims.yaml"


@dataclass
class RegionConf:
    below: Optional[float] = None
    above: Optional[float] = None
    between: Optional[list[float]] = None


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
        raw = yaml.safe_load(text)
        node = OmegaConf.merge(OmegaConf.structured(ClaimsFileConf), raw or {})
    except (yaml.YAMLError, OmegaConfBaseException, ValueError) as exc:
        key = getattr(exc, "full_key", None)
        first = str(exc).strip().splitlines()[0]
        raise ConfigError(f"{path}: {key + ': ' if key else ''}{first}") from None
    claims, seen = [], set()
    for index, conf in enumerate(OmegaConf.to_object(node).claims):
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
                            not_run=conf.not_run))
    return claims


def load_claims(paper: str) -> list[Claim]:
    """The claims of ``paper`` (none when it has no claims file)."""
    path = claims_path(paper)
    if not path.is_file():
        return []
    return parse_claims(paper, path.read_text(), path)
