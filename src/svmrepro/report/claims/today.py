"""A timing claim's second verdict: against today's solver (issue 31).

A claim's ``today`` block (:mod:`.schema`) names the test keys that replace its own, typically the
baseline group and the companion output (``<id>_today``) whose runs hold it; the claim is judged
again with them merged in, in the same ``expect`` / ``partly`` and under the same timing rule, by
:func:`.verdict.judge` itself. ``inside`` judges it a third time with today's solver inside the method
too. A claim that compares no solver we could replace is ``unchanged``, a verdict word of its own.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace

import pandas as pd

from svmrepro.report.claims.schema import Claim
from svmrepro.report.claims.verdict import Verdict, judge

UNCHANGED = "unchanged"
#: where each reading's test keys come from, in a claims file
READINGS = {"today": "today.test", "inside": "today.inside.test"}


@dataclass
class TodayVerdict:
    """A claim's verdict against today's solver and, where the method runs it inside, with it
    inside; ``note``: the basis in words (what the claim is judged against, or why unchanged)."""

    claim: Claim
    today: Verdict
    inside: Verdict | None
    note: str

    def text(self) -> str:
        """``supported`` or ``supported; inside: not supported``."""
        return self.today.verdict + (f"; inside: {self.inside.verdict}" if self.inside is not None else "")


def basis(claim: Claim) -> str:
    """What the today test judges the claim against: ``against svc_onedal (cascade/table1_today)``, each
    group the today test names, with the output whose runs hold it; the ``unchanged`` reason instead."""
    today = claim.today
    if today.test is None:
        return today.unchanged
    named = []
    for key, value in today.test.items():
        if isinstance(value, dict) and "group" in value:
            named.append(f"{value['group']} ({value.get('output') or claim.output})")
        elif key in ("a", "b", "group"):
            named.append(f"{value} ({today.test.get('output') or claim.output})")
    return "against " + ", ".join(named) if named else f"today's test keys {', '.join(today.test)}"


def judge_today(claim: Claim, runs: Mapping[str, pd.DataFrame | None]) -> TodayVerdict | None:
    """``claim``'s verdicts against today's solver from ``runs`` (as :func:`.verdict.judge` reads
    them); None for a claim without a ``today`` block."""
    if claim.today is None:
        return None
    tests = claim.today.tests(claim.test)
    verdicts = {name: None if test is None else judge(replace(claim, test=test), runs, READINGS[name])
                for name, test in tests.items()}
    today = verdicts["today"] or Verdict(claim, UNCHANGED, claim.today.unchanged)
    return TodayVerdict(claim, today, verdicts["inside"], basis(claim))
