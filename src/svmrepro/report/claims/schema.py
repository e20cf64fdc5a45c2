"""The typed schema of ``experiments/<paper>/claims.yaml``.

.. code-block:: yaml

    claims:
      - id: table1_fewer_svs              # unique within the paper
        source: Table 1                   # where the paper makes the claim
        claim: X-Train keeps fewer SVs than LIBSVM at the same accuracy   # in our words
        paper_says: "Forest 90000: 13023 vs 18983 SVs"                    # the paper's numbers
        kind: finding                     # finding (default), sanity (true by construction of our code) or
                                          # open_question (the paper's future work); headlines count findings
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
            changed: [region]             # a non-empty subset of: claim, test, region, output, output_config, timing, today, kind
            why: "the paper's words are ..."
            verdict_before: "partly supported: +0.0053 [0.0022, 0.0084]"
        today:                            # timing claims only: judged again against today's solver (oneDAL)
          test:                           # keys that replace the test's (a shallow merge), same expect/partly
            a: {output: cascade/table1_today, group: svc_onedal, metric: fit_time_s}
          inside:                         # optional: judged a third time with oneDAL inside the method too
            test:                         # keys that replace the claim's own test's
              a: {output: cascade/table1_today, group: svc_onedal, metric: fit_time_s}
              b: {output: cascade/table1_today, group: cascade_svc_onedal, metric: critical_path_cpu_s}
          conditions:                     # optional, the keys of conditions: where today's reading differs
            scale: "..."
      - id: table2_speech
        source: Table 2
        claim: ...
        paper_says: ...
        not_run: the Numbers95 corpus is licensed, not public     # a claim we cannot test

``expect`` and ``partly`` are written before the runs are read, from the paper's claim and its
stated tolerance: ``{below: t}``, ``{above: t}`` or ``{between: [low, high]}``. A change to a claim
after that is an amendment, and ``experiments/<paper>/claims.lock.yaml`` (:mod:`.lock`) makes an
unrecorded one fail the tests.

A timing claim's ``today`` block (issue 31) judges it a second time with today's solver as the
baseline, in the same regions under the same timing rule (:mod:`.today`): ``test`` replaces some of
the claim's test keys, typically the baseline group and the output (a companion experiment
``<id>_today``) its runs come from. A timing claim that compares no solver we could replace says
why instead, ``today: {unchanged: "<why>"}``, and may still have ``inside``.
"""

from __future__ import annotations

import copy
import math
import re
from dataclasses import dataclass, field, fields
from difflib import get_close_matches
from datetime import date
from functools import cache, lru_cache
from pathlib import Path
from typing import Any, Optional

import yaml
from omegaconf import MISSING, DictConfig, OmegaConf
from omegaconf.errors import OmegaConfBaseException

from svmrepro.errors import ConfigError, first_line
from svmrepro.locations import data_file

CLAIMS_FILE = "claims.yaml"
#: what a claim is: a ``finding`` about the world the paper reports, a ``sanity`` check of a property our code
#: has by construction (true by the theory it implements), or an ``open_question`` the paper leaves for
#: future work; the headline counts findings only (issue 48, item 3)
KINDS = ("finding", "sanity", "open_question")
FINDING = KINDS[0]
#: what an amendment may change: the claim's text, its test, its regions, its output, that output's
#: experiment config, its timing flag (the parts :mod:`.lock` hashes), and its ``today`` block
CHANGES = ("claim", "test", "region", "output", "output_config", "timing", "today", "kind")
COMMIT = re.compile(r"[0-9a-f]{7,40}")


class _Loader(yaml.SafeLoader):
    """YAML without timestamps: an amendment's ``date: 2026-11-26`` stays the text it is."""


class _FastLoader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):
    """:class:`_Loader` with libyaml's parser where PyYAML has it: the same objects, in a tenth of the time."""


_Loader.yaml_implicit_resolvers = _FastLoader.yaml_implicit_resolvers = {
    first: [(tag, pattern) for tag, pattern in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()}


def _read_yaml(text: str, fast: type, pure: type):
    """``text`` read by the ``fast`` loader (libyaml's parser); a mistake raised as the ``pure`` one (the same
    resolvers, PyYAML's pure-Python parser) raises it."""
    try:
        return yaml.load(text, Loader=fast)
    except yaml.YAMLError:
        return yaml.load(text, Loader=pure)


def _load(text: str):
    """The YAML of a claims file; a mistake in it is told in the pure-Python parser's words, as it always was."""
    return _read_yaml(text, _FastLoader, _Loader)


def safe_load(text: str):
    """``yaml.safe_load(text)``'s objects (a timestamp read as a date, as there), parsed by libyaml where PyYAML has it:
    the reading of a lock file and of a claims file's past versions; a mistake is raised as ``yaml.safe_load``
    raises it."""
    return _read_yaml(text, getattr(yaml, "CSafeLoader", yaml.SafeLoader), yaml.SafeLoader)


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
class InsideConf:
    #: keys that replace the claim's own test's, with today's solver inside the method too
    test: dict[str, Any] = MISSING


@dataclass
class TodayConf:
    """A timing claim judged against today's solver: a ``test`` or why it stays ``unchanged``."""

    #: keys that replace the claim's test's (a shallow merge): the baseline group and the output its runs are in
    test: Optional[dict[str, Any]] = None
    #: instead of ``test``: why the claim compares no solver we could replace
    unchanged: Optional[str] = None
    #: optional: the claim judged a third time, with today's solver inside the method
    inside: Optional[InsideConf] = None
    #: where today's reading differs from the paper's conditions (the keys of a claim's ``conditions``)
    conditions: Conditions = field(default_factory=Conditions)


@dataclass(frozen=True)
class Today:
    """A claim's ``today`` block: the test keys that replace the claim's (none when ``unchanged``),
    those of the reading with today's solver inside the method (none without one), and where it
    differs from the claim's conditions."""

    test: dict[str, Any] | None
    unchanged: str | None
    inside: dict[str, Any] | None
    conditions: Conditions = field(default_factory=Conditions)

    def tests(self, test: dict[str, Any]) -> dict[str, dict[str, Any] | None]:
        """The claim's ``test`` with each reading's keys merged in: ``today`` (None when
        unchanged) and ``inside`` (None without one)."""
        return {"today": None if self.test is None else {**test, **self.test},
                "inside": None if self.inside is None else {**test, **self.inside}}


@dataclass
class ClaimConf:
    id: str
    source: str
    claim: str
    paper_says: str
    output: Optional[str] = None
    #: one of :data:`KINDS`
    kind: str = FINDING
    test: Optional[dict[str, Any]] = None
    expect: Optional[RegionConf] = None
    partly: Optional[RegionConf] = None
    timing: bool = False
    not_run: Optional[str] = None
    conditions: Conditions = field(default_factory=Conditions)
    amendments: list[Amendment] = field(default_factory=list)
    #: a tested timing claim only: judged again against today's solver (:mod:`.today`)
    today: Optional[TodayConf] = None


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
    today: Today | None = None
    kind: str = FINDING


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


def _today(where: str, conf: ClaimConf) -> Today | None:
    """The claim's ``today`` block, on a tested timing claim only, with keys its primitive reads."""
    from svmrepro.report.claims.primitives import primitive

    node = conf.today
    if node is None:
        return None
    if not conf.timing or conf.not_run is not None:
        raise ConfigError(f"{where}.today: only a tested timing claim (timing: true, no not_run) is judged against "
                          "today's solver")
    if (node.test is None) == (node.unchanged is None):
        raise ConfigError(f"{where}.today: give one of test (the keys that replace the claim's) or unchanged: <why>")
    if node.unchanged is not None and not node.unchanged.strip():
        raise ConfigError(f"{where}.today.unchanged: empty; say why in words")
    schema = primitive(conf.test.get("kind"), f"{where}.test.kind").Test
    known = set(OmegaConf.structured(schema).keys())
    for name, keys in (("today.test", node.test), ("today.inside.test", node.inside and node.inside.test)):
        if unknown := sorted(set(keys or {}) - known):
            raise ConfigError(f"{where}.{name}.{unknown[0]}: not a key of a {conf.test['kind']} test; "
                              f"valid: {', '.join(sorted(known))}")
    return Today(test=None if node.test is None else dict(node.test), unchanged=node.unchanged,
                 inside=None if node.inside is None else dict(node.inside.test), conditions=node.conditions)


def claims_path(paper: str) -> Path:
    return data_file(f"experiments/{paper}/{CLAIMS_FILE}")


def _claim_named(raw, exc: Exception) -> str:
    """The first line of ``exc``, after the key it names; inside a claim, ``claims[i] (id).key``
    (OmegaConf names a key of a nested node without the claim it is in, so each claim is merged alone)."""
    listed = raw.get("claims") if isinstance(raw, dict) else None
    for index, claim in enumerate(listed if isinstance(listed, list) else []):
        try:
            OmegaConf.to_object(OmegaConf.merge(OmegaConf.structured(ClaimConf), claim))
        except (OmegaConfBaseException, ValueError) as inner:
            named = claim.get("id") if isinstance(claim, dict) else None
            key = f".{inner.full_key}" if getattr(inner, "full_key", None) else ""
            unknown = _unknown_key(claim)
            if unknown:
                return f"claims[{index}] ({named}).{unknown}"
            return f"claims[{index}] ({named}){key}: {first_line(inner)}"
    key = getattr(exc, "full_key", None)
    return f"{key + ': ' if key else ''}{first_line(exc)}"


def _unknown_key(claim) -> str | None:
    """``<key>: not a key of a claim; did you mean ...? (valid: ...)`` for the first key of ``claim`` the
    schema lacks, in our words rather than OmegaConf's (which names its ``ClaimConf``); None when all are known."""
    if not isinstance(claim, dict):
        return None
    valid = [f.name for f in fields(ClaimConf)]
    for key in claim:
        if key not in valid:
            close = get_close_matches(str(key), valid, n=1, cutoff=0.6)
            hint = f"; did you mean {close[0]}?" if close else ""
            return f"{key}: not a key of a claim{hint} (valid: {', '.join(valid)})"
    return None


def parse_claims(paper: str, text: str, path: Path | str) -> list[Claim]:
    """The claims of ``text`` (the YAML of ``path``), checked against the schema: a wrong type, an
    unknown or missing key, a duplicated id or a test without a region is one line naming the
    file and the key. The same text is parsed once per process (claims are frozen)."""
    return list(_parsed(paper, text, str(path)))


@lru_cache(maxsize=64)
def _parsed(paper: str, text: str, path: str) -> tuple[Claim, ...]:
    from svmrepro.report.claims.primitives import primitive  # the registry imports the schema's users

    try:
        raw = _load(text)
        confs = _claim_confs(raw)
    except (yaml.YAMLError, OmegaConfBaseException, ValueError) as exc:
        raise ConfigError(f"{path}: {_claim_named(raw if 'raw' in locals() else None, exc)}") from None
    claims, seen = [], set()
    for index, conf in enumerate(confs):
        where = f"{path}: claims[{index}] ({conf.id})"
        if conf.id in seen:
            raise ConfigError(f"{where}: id {conf.id!r} is used twice")
        seen.add(conf.id)
        if conf.kind not in KINDS:
            raise ConfigError(f"{where}.kind: {conf.kind!r}; valid: {', '.join(KINDS)}")
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
                                             for k, amendment in enumerate(conf.amendments)),
                            today=_today(where, conf), kind=conf.kind))
    return tuple(claims)


def _claim_confs(raw) -> list[ClaimConf]:
    """The claims of a claims file's YAML merged into :class:`ClaimConf`. A claims file is merged claim
    by claim, each claim once per process (a check of a changed file merges only what changed); a file
    of another shape, or a claim that does not merge, is merged whole, for OmegaConf's error."""
    listed = raw.get("claims") if isinstance(raw, dict) and set(raw) == {"claims"} else None
    if isinstance(listed, list) and all(isinstance(claim, dict) for claim in listed):
        try:
            return [copy.deepcopy(_claim_conf(claim)) for claim in listed]
        except (OmegaConfBaseException, ValueError):
            pass
    return OmegaConf.to_object(OmegaConf.merge(OmegaConf.structured(ClaimsFileConf), raw or {})).claims


#: each claim merged so far, by the ``repr`` of its YAML (keys in their order, ``1`` apart from ``1.0`` and ``true``)
_MERGED: dict[str, ClaimConf] = {}


def _claim_conf(claim: dict) -> ClaimConf:
    seen = repr(claim)
    if seen not in _MERGED:
        _MERGED[seen] = OmegaConf.to_object(OmegaConf.merge(_claim_schema(), claim))  # merge copies its first
    return _MERGED[seen]


@cache
def _claim_schema() -> DictConfig:
    """:class:`ClaimConf` as a structured config, made once (it is a third of a claim's merge)."""
    return OmegaConf.structured(ClaimConf)


def load_claims(paper: str) -> list[Claim]:
    """The claims of ``paper`` (none when it has no claims file)."""
    path = claims_path(paper)
    if not path.is_file():
        return []
    return parse_claims(paper, path.read_text(), path)
