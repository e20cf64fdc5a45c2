"""Whether a claim was written blind: its current test, regions and output committed before any run it reads
(issue 48, item 1). Computed from git history, never asserted:

- **defined**: the oldest commit from which the claim's ``test``, ``expect``, ``partly``, ``output`` and
  ``not_run`` in ``experiments/<paper>/claims.yaml`` are what they are now (its registration, or the last
  change to any of them, amendment or not);
- **data**: per output the claim's own test reads, the first commit of its runs CSV
  (``results/<paper>/<id>.runs.csv``);
- **blind**: every runs CSV it reads was first committed after ``defined`` (``defined`` is an ancestor of
  each, and not the same commit). A verdict on runs seen before its claim was written is exploratory.

The lock (:mod:`.lock`) keeps the three per claim, written by ``relock`` from git, so a shallow clone still
has them; ``tests/test_claims_blind.py`` recomputes them from git where the history is there.
"""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import yaml

from svmrepro.locations import data_file
from svmrepro.report.claims.primitives import outputs_read, primitive
from svmrepro.report.claims.schema import CLAIMS_FILE, Claim, safe_load

#: the keys of a claim whose change re-registers it
DEFINING = ("test", "expect", "partly", "output", "not_run")
RUNS_SUFFIX = ".runs.csv"


@dataclass(frozen=True)
class Registration:
    """When a claim's current form was committed, and when each runs CSV it reads was first committed."""

    defined: str
    data: dict[str, str] = field(default_factory=dict)
    blind: bool = False


def _git(*args: str) -> str | None:
    try:
        done = subprocess.run(["git", "-C", str(_root()), *args], capture_output=True, text=True, check=False)
    except OSError:
        return None
    return done.stdout if done.returncode == 0 else None


@lru_cache(maxsize=1)
def _root() -> Path:
    return data_file("experiments").resolve().parent


def has_history() -> bool:
    """Whether git history is there to compute registrations from (not a shallow clone, not an installed wheel)."""
    shallow = _git("rev-parse", "--is-shallow-repository")
    return shallow is not None and shallow.strip() == "false"


def _key(raw: dict | None) -> str | None:
    if not isinstance(raw, dict):
        return None
    return json.dumps({k: raw.get(k) for k in DEFINING}, sort_keys=True, default=str)


@lru_cache(maxsize=16)
def _history(paper: str) -> tuple[tuple[str, dict[str, str]], ...]:
    """``(commit, {claim id: key})`` for each commit that changed the paper's claims file, newest first."""
    path = f"experiments/{paper}/{CLAIMS_FILE}"
    log = _git("log", "--format=%H", "--", path) or ""
    found = []
    for commit in log.split():
        text = _git("show", f"{commit}:{path}")
        try:
            raw = safe_load(text or "") or {}
        except yaml.YAMLError:
            raw = {}
        claims = raw.get("claims") if isinstance(raw, dict) else None
        found.append((commit, {str(c.get("id")): _key(c) for c in claims or [] if isinstance(c, dict)}))
    return tuple(found)


def defining_commit(paper: str, claim_id: str) -> str | None:
    """The oldest commit from which the claim's defining keys are what the newest commit has."""
    history = _history(paper)
    if not history:
        return None
    current = history[0][1].get(claim_id)
    if current is None:
        return None
    defined = None
    for commit, keys in history:
        if keys.get(claim_id) != current:
            break
        defined = commit
    return defined


@lru_cache(maxsize=256)
def first_commit(path: str) -> str | None:
    """The commit that first added ``path`` (relative to the checkout), None when git has none."""
    log = _git("log", "--diff-filter=A", "--format=%H", "--", path) or ""
    commits = log.split()
    return commits[-1] if commits else None


def runs_csv(output: str) -> str:
    paper, _, output_id = output.partition("/")
    return f"results/{paper}/{output_id}{RUNS_SUFFIX}"


def outputs_of(claim: Claim) -> list[str]:
    """The outputs whose runs the claim's own test reads."""
    if claim.not_run is not None or not claim.output or not claim.test:
        return []
    module = primitive(claim.test.get("kind"), f"{claim.paper}: {claim.id}.test.kind")
    return list(dict.fromkeys(name or claim.output for name in outputs_read(module, claim.test)))


def _before(earlier: str, later: str) -> bool:
    return earlier != later and _git("merge-base", "--is-ancestor", earlier, later) is not None


def registration(claim: Claim) -> Registration | None:
    """The claim's :class:`Registration` from git (None without the history or before it is committed)."""
    defined = defining_commit(claim.paper, claim.id)
    if defined is None:
        return None
    data = {output: first for output in outputs_of(claim) if (first := first_commit(runs_csv(output)))}
    # no runs committed yet: whatever runs come will come after it
    blind = all(_before(defined, first) for first in data.values())
    return Registration(defined, data, blind)
