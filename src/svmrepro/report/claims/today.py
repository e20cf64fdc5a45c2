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

from svmrepro.report.claims.fastest import candidates, is_choice, named
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

    @property
    def baseline(self) -> str:
        """The solver the today reading took as the baseline, by the rule of :mod:`.fastest` (``libsvm, 1
        thread: svc (cascade/table1)``, per problem where they differ); empty where the reading lists no
        candidates or has no runs yet."""
        return named(_choices(self.today))

    @property
    def inside_with(self) -> str:
        """The solver inside the method that the ``inside`` reading took (the faster of the method with
        LIBSVM and with oneDAL inside); empty without candidates."""
        baseline_sides = {choice.side for choice in _choices(self.today)}
        return named([c for c in _choices(self.inside) if c.side not in baseline_sides])

    def text(self) -> str:
        """``supported`` or ``supported; inside: not supported``."""
        return self.today.verdict + (f"; inside: {self.inside.verdict}" if self.inside is not None else "")


def _choices(verdict: Verdict | None) -> tuple:
    return verdict.estimate.choices if verdict is not None and verdict.estimate is not None else ()


def basis(claim: Claim) -> str:
    """What the today test judges the claim against: ``against svc_onedal (cascade/table1_today)``, each
    group the today test names, with the output whose runs hold it; the ``unchanged`` reason instead."""
    today = claim.today
    if today.test is None:
        return today.unchanged
    sides = []
    for key, value in today.test.items():
        if is_choice(value):
            sides.append("the faster of " + " and ".join(f"{one['group']} ({one.get('output') or claim.output})"
                                                         for one in candidates(value)))
        elif isinstance(value, dict) and "group" in value:
            sides.append(f"{value['group']} ({value.get('output') or claim.output})")
        elif key in ("a", "b", "group"):
            sides.append(f"{value} ({today.test.get('output') or claim.output})")
    return "against " + ", ".join(sides) if sides else f"today's test keys {', '.join(today.test)}"


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
