"""The claims the output's runs test (the paper's ``claims.yaml``), each with its verdict
(:mod:`svmrepro.report.claims`).

They are judged on the runs table as the runs CSV beside the page holds it (:func:`runs_table` of
the text just written, not the in-memory table, whose types differ), so this section and the
scoreboard, which reads that CSV, give the same numbers; a claim that also reads another output
(``slope_difference``) gets that output's runs CSV beside this one."""

from __future__ import annotations

from svmrepro.report.claims.schema import load_claims
from svmrepro.report.claims.scoreboard import RunsTables, claims_section
from svmrepro.report.claims.verdict import judge
from svmrepro.report.runs import runs_table
from svmrepro.report.sections import Page

ORDER = 60
OPTION = None  # asked for by the paper's claims file, not by a report: key


def lines(page: Page) -> list[str]:
    spec = page.spec
    claims = [claim for claim in load_claims(spec.paper_id) if claim.output == spec.experiment]
    if not claims:
        return []
    # its own runs as the CSV holds them, and the runs tables beside it of any other output a claim reads
    tables = RunsTables(page.paths.runs_csv.parent.parent,
                        {spec.experiment: runs_table(page.paths.runs_csv, page.runs_csv_text)},
                        {spec.experiment: page.runs_csv_text})
    return claims_section([judge(claim, tables) for claim in claims])
