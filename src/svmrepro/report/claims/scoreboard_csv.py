"""``<results>/claims.csv``: the scoreboard for machines, one row per claim, written with the page
(:func:`svmrepro.report.claims.scoreboard.write_scoreboard`) so that both show the same verdicts.

Columns: ``paper, id, kind`` (finding, sanity or open_question), ``verdict, statistic, estimate, low,
high`` (the statistic and its 95 % interval; empty for a claim not run), ``expect_low, expect_high, partly_low, partly_high`` (the
regions, open ends ``-inf``/``inf``; empty without the region), ``runs, seeds`` (those read),
``registered`` (the commit that registered the claim, from its lock), ``blind`` (from its lock, computed
from git by :mod:`.blind`: true only when the claim's current test, regions and output were committed before
every runs CSV it reads; empty for a claim not run), ``amended`` (the commits of
its amendments, joined by ``;``), ``conditions`` (``key: value; ...``), and a timing claim's
verdict against today's solver (:mod:`.today`): ``verdict_today, estimate_today, low_today,
high_today``, the same with today's solver inside the method (``..._today_inside``), and
``today_note``, what it was judged against or why it is ``unchanged``, ``today_baseline``, the solver
(and its threads) the today reading took as the baseline by the rule of :mod:`.fastest`, and
``today_inside_with``, the solver the ``inside`` reading took inside the method (all empty for a claim
without a ``today`` block); ``verdict_confirm, estimate_confirm, low_confirm, high_confirm, runs_confirm,
seeds_confirm``: the locked claim judged on the confirmatory phase's runs alone (``results/confirm/``; empty
verdict and 0 runs until they are made). Numbers keep 6 significant digits, so a rebuild on another machine writes the same bytes.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from svmrepro.report.claims.lock import LockEntry
from svmrepro.report.claims.schema import Region
from svmrepro.report.claims.today import TodayVerdict
from svmrepro.report.claims.verdict import Verdict
from svmrepro.writing import write_file

CLAIMS_CSV = "claims.csv"
COLUMNS = ("paper", "id", "kind", "verdict", "statistic", "estimate", "low", "high", "expect_low", "expect_high",
           "partly_low", "partly_high", "runs", "seeds", "registered", "blind", "amended", "conditions",
           "verdict_today", "estimate_today", "low_today", "high_today", "verdict_today_inside",
           "estimate_today_inside", "low_today_inside", "high_today_inside", "today_note",
           "today_baseline", "today_inside_with", "verdict_confirm", "estimate_confirm", "low_confirm",
           "high_confirm", "runs_confirm", "seeds_confirm")


def _ends(region: Region | None) -> tuple[float | None, float | None]:
    return (region.low, region.high) if region is not None else (None, None)


def _reading(verdict: Verdict | None, suffix: str) -> dict:
    """A verdict against today's solver as the columns ``verdict<suffix>, estimate<suffix>, ...``."""
    estimate = verdict.estimate if verdict is not None else None
    return {f"verdict{suffix}": verdict.verdict if verdict is not None else None,
            f"estimate{suffix}": estimate.value if estimate else None,
            f"low{suffix}": estimate.low if estimate else None, f"high{suffix}": estimate.high if estimate else None}


def _today(today: TodayVerdict | None) -> dict:
    return {**_reading(today and today.today, "_today"), **_reading(today and today.inside, "_today_inside"),
            "today_note": today.note if today is not None else None,
            "today_baseline": (today.baseline or None) if today is not None else None,
            "today_inside_with": (today.inside_with or None) if today is not None else None}


def _row(verdict: Verdict, entry: LockEntry | None) -> dict:
    claim, estimate = verdict.claim, verdict.estimate
    (expect_low, expect_high), (partly_low, partly_high) = _ends(claim.expect), _ends(claim.partly)
    return {
        "paper": claim.paper, "id": claim.id, "kind": claim.kind, "verdict": verdict.verdict,
        "statistic": estimate.statistic if estimate else None,
        "estimate": estimate.value if estimate else None,
        "low": estimate.low if estimate else None, "high": estimate.high if estimate else None,
        "expect_low": expect_low, "expect_high": expect_high, "partly_low": partly_low, "partly_high": partly_high,
        "runs": len(estimate.runs) if estimate else 0, "seeds": verdict.seeds,
        "registered": entry.registered if entry else None,
        "blind": entry.blind if entry is not None and entry.blind is not None else None,
        "amended": ";".join(amendment.commit for amendment in claim.amendments),
        "conditions": claim.conditions.text(),
    }


def _confirm(verdict: Verdict | None) -> dict:
    """The claim judged on the confirmatory phase's runs: ``verdict_confirm, ...``, runs and seeds read."""
    reading = _reading(verdict, "_confirm")
    ran = verdict is not None and verdict.estimate is not None
    return {**reading, "runs_confirm": len(verdict.estimate.runs) if ran else 0,
            "seeds_confirm": verdict.seeds if ran else 0}


def write_claims_csv(verdicts: list[Verdict], todays: list[TodayVerdict | None],
                     locks: dict[str, dict[str, LockEntry]], results_dir: Path,
                     confirms: list[Verdict] | None = None) -> Path:
    """``<results_dir>/claims.csv`` of ``verdicts`` and, for each, its verdict against today's solver
    (``todays``, None for a claim without one) and on the confirmatory phase's runs (``confirms``, None
    outside the full mode's scoreboard); ``locks``: each paper's lock entries by claim id."""
    confirms = confirms if confirms is not None else [None] * len(verdicts)
    table = pd.DataFrame([{**_row(v, locks.get(v.claim.paper, {}).get(v.claim.id)), **_today(today),
                           **_confirm(confirm)}
                          for v, today, confirm in zip(verdicts, todays, confirms, strict=True)],
                         columns=list(COLUMNS))
    path = results_dir / CLAIMS_CSV
    write_file(path, table.to_csv(index=False, float_format="%.6g"))
    return path
