"""A claim's verdict, from its primitive's estimate and the regions the claim stated beforehand.

- **not run**: the claim says why it cannot be tested here (``not_run``), or an output it reads has no runs.
- **supported**: the whole 95 % interval lies inside ``expect``.
- **partly supported**: not supported, but the whole interval lies inside ``partly``.
- **not supported**: the whole interval lies outside ``expect`` and not inside ``partly``. No number of
  seeds can make such a claim supported, so it is never "inconclusive"; where the interval straddles
  ``partly``'s edge, the reason says that partial support is still undecided.
- **inconclusive**: only when more or cleaner runs could change the verdict: the runs give no interval
  (no runs match, too few runs or seeds, or pairs whose differences are all the same, a zero-width interval), the interval straddles the edge of ``expect`` (and does
  not lie inside ``partly``), or (``timing: true``) a run read was timed on a loaded machine (1-minute
  load above cores + 0.5 at its start or end).

Regions are open intervals, so an interval touching an edge from outside counts as outside.
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd

from svmrepro.errors import SvmReproError
from svmrepro.exclusive import LOAD_MARGIN, SHARED, TIMING_TAG
from svmrepro.report.claims.estimate import SEED_COLUMN, Estimate
from svmrepro.report.claims.primitives import outputs_read, primitive, reads_outputs
from svmrepro.report.claims.schema import Claim
from svmrepro.store import commit_column

SUPPORTED, PARTLY, NOT_SUPPORTED, INCONCLUSIVE, NOT_RUN = (
    "supported", "partly supported", "not supported", "inconclusive", "not run")
VERDICTS = (SUPPORTED, PARTLY, NOT_SUPPORTED, INCONCLUSIVE, NOT_RUN)
LOAD_TAGS = ("tags.load_avg_1m", "tags.load_avg_1m_end")


@dataclass
class Verdict:
    claim: Claim
    verdict: str
    reason: str
    estimate: Estimate | None = None

    @property
    def commits(self) -> list[str]:
        runs = self.estimate.runs if self.estimate is not None else None
        if runs is None:
            return []
        return sorted({str(c)[:7] for c in commit_column(runs).dropna()})

    @property
    def seeds(self) -> int:
        runs = self.estimate.runs if self.estimate is not None else None
        return int(runs[SEED_COLUMN].nunique()) if runs is not None and SEED_COLUMN in runs else 0

    def ours(self) -> str:
        return self.estimate.text() if self.estimate is not None else "—"


def loaded_runs(runs: pd.DataFrame) -> tuple[int, float]:
    """How many of ``runs`` were timed above cores + :data:`LOAD_MARGIN`, and the highest load."""
    cores = pd.to_numeric(runs.get("tags.cpu_count"), errors="coerce")
    loads = [pd.to_numeric(runs[tag], errors="coerce") for tag in LOAD_TAGS if tag in runs]
    if not loads or cores is None:
        return 0, float("nan")
    load = pd.concat(loads, axis=1).max(axis=1)
    return int((load > cores + LOAD_MARGIN).sum()), float(load.max())


def shared_runs(runs: pd.DataFrame) -> int:
    """How many of ``runs`` held a shared slot of the machine (their ``timing`` tag; runs made before the
    tag existed count as their load says, :func:`loaded_runs`)."""
    column = f"tags.{TIMING_TAG}"
    return int((runs[column] == SHARED).sum()) if column in runs else 0


def decide(claim: Claim, estimate: Estimate) -> tuple[str, str]:
    """The verdict and its reason (see the module's docstring)."""
    if estimate.n == 0:
        return INCONCLUSIVE, "no runs match the test"
    if claim.timing:
        shared = shared_runs(estimate.runs)
        if shared:
            return INCONCLUSIVE, (f"{shared} of {len(estimate.runs)} runs were timed beside other runs "
                                  f"(timing: {SHARED}): their times are not evidence")
        loaded, highest = loaded_runs(estimate.runs)
        if loaded:
            return INCONCLUSIVE, f"{loaded} of {len(estimate.runs)} runs timed at load up to {highest:.2f} > cores + {LOAD_MARGIN}"
    if not estimate.has_interval:
        return INCONCLUSIVE, f"too few {estimate.unit} for an interval ({estimate.n})"
    low, high = estimate.low, estimate.high
    if estimate.unit == "pairs" and low == high:
        return INCONCLUSIVE, f"the {estimate.n} pairs are identical: no interval, whatever their number"
    expect, partly = claim.expect, claim.partly
    if expect.holds(low, high):
        return SUPPORTED, f"interval inside {expect.text()}"
    if partly is not None and partly.holds(low, high):
        return PARTLY, f"interval inside {partly.text()}, not inside {expect.text()}"
    if not expect.misses(low, high):
        return INCONCLUSIVE, f"interval straddles the edge of {expect.text()}"
    if partly is None or partly.misses(low, high):
        return NOT_SUPPORTED, f"interval outside {expect.text()}" + (f" and partly ({partly.text()})" if partly else "")
    return NOT_SUPPORTED, f"interval outside {expect.text()}; partly ({partly.text()}) undecided: straddles its edge"


def judge(claim: Claim, runs: Mapping[str, pd.DataFrame | None], test: str = "test") -> Verdict:
    """``claim``'s verdict from ``runs``, the runs table of each output (absent or None when it has
    none yet): its own output's, and those of the other outputs its primitive reads; ``test``: where
    the claims file gives ``claim.test``, for errors (``today.test`` for a reading against today's solver)."""
    if claim.not_run is not None:
        return Verdict(claim, NOT_RUN, claim.not_run)
    where = f"experiments/{claim.paper}/claims.yaml: {claim.id}.{test}"
    module = primitive(claim.test.get("kind"), where)
    tables = {name: runs.get(name or claim.output) for name in outputs_read(module, claim.test)}
    missing = [name or claim.output for name, table in tables.items() if table is None or table.empty]
    if missing:
        return Verdict(claim, NOT_RUN, f"no runs of {', '.join(missing)} yet")
    key = _judged_key(claim, runs, [name or claim.output for name in tables], test)
    if key is not None and key in _JUDGED and _JUDGED[key].claim is claim:
        _JUDGED.move_to_end(key)
        return _JUDGED[key]
    try:
        estimate = module.evaluate(claim.test, tables if reads_outputs(module) else next(iter(tables.values())), where)
    except SvmReproError as exc:  # the primitives name ``where`` themselves
        message = str(exc)
        raise SvmReproError(message if message.startswith(where) else f"{where}: {message}") from None
    except KeyError as exc:
        raise SvmReproError(f"{where}: {exc}") from None
    with np.errstate(invalid="ignore"):
        verdict, reason = decide(claim, estimate)
    judged = Verdict(claim, verdict, reason, estimate)
    if key is not None:
        _JUDGED[key] = judged
        while len(_JUDGED) > JUDGED_KEPT:
            _JUDGED.popitem(last=False)
    return judged


#: this process's verdicts, by claim (the object, held by its verdict so its id names no other), the claim
#: file's key of its test and the sha256 of the CSV text of each runs table read: a reproduction judges each claim
#: for its output's page and again for the scoreboard, on the same runs CSV (tests/test_claims.py)
_JUDGED: OrderedDict[tuple, Verdict] = OrderedDict()
#: verdicts kept at most (the least recently used go first)
JUDGED_KEPT = 1024


def _judged_key(claim: Claim, runs: Mapping[str, pd.DataFrame | None], outputs: list[str], test: str) -> tuple | None:
    """The key of ``claim``'s verdict in :data:`_JUDGED`: None unless ``runs`` knows the CSV text of every table
    read (a :class:`~svmrepro.report.claims.scoreboard.RunsTables`), so a verdict on tables made in memory is
    never kept."""
    text = getattr(runs, "text", None)
    if text is None:
        return None
    texts = [text(output) for output in outputs]
    if any(t is None for t in texts):
        return None
    return (id(claim), test, *(hashlib.sha256(t.encode()).hexdigest() for t in texts))
