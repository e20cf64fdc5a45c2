"""What the scoreboard, claims.csv and an output page's claims section show of a claim beyond its
verdict: the conditions it was reached under, the commit that registered it, and its amendments."""

import math

import pandas as pd
import pytest

from svmrepro.report.claims.lock import LockEntry, write_lock
from svmrepro.report.claims.scoreboard import claims_section, judge_all, write_scoreboard
from svmrepro.report.claims.scoreboard_csv import COLUMNS
from svmrepro.report.claims.schema import load_claims
from toy_claims import TOY_CLAIM_HEAD

REGISTERED = "ce7a12ffe065ee73b3b72fff47cc69e51a9dd9e5"
CLAIMS = TOY_CLAIM_HEAD + """\
    test: {kind: compare, metric: fit_cpu_s, a: a, b: b, stat: ratio}
    expect: {below: 0.6}
    partly: {between: [0.0, 1.0]}
    conditions:
      scale: "20000 of the paper's 100000 rows"
      parallel: "critical path, not a measured parallel fit"
    amendments:
      - commit: 1a2b3c4d
        date: 2026-11-26
        changed: [region, output_config]
        why: "the paper says without statistical significance"
        verdict_before: "partly supported: +0.0053 [0.0022, 0.0084]"
  - id: speech
    source: Table 2
    claim: the same on speech
    paper_says: 851 vs 6787 min
    not_run: the corpus is licensed
"""


@pytest.fixture
def results(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # experiments/toy/claims.yaml is read from the current folder first
    (tmp_path / "experiments" / "toy").mkdir(parents=True)
    (tmp_path / "experiments" / "toy" / "claims.yaml").write_text(CLAIMS)
    write_lock("toy", {"faster": LockEntry(REGISTERED, 1, "0" * 64, {}), "speech": LockEntry(REGISTERED, 0, "0" * 64, {})})
    folder = tmp_path / "results"
    (folder / "toy").mkdir(parents=True)
    rows = [{"run_id": f"{i:032x}", "status": "FINISHED", "tags.algorithm": group, "tags.seed": str(i % 3),
             "metrics.fit_cpu_s": value} for i, (group, value) in
            enumerate([("a", 10.0), ("a", 12.0), ("a", 11.0), ("b", 4.0), ("b", 5.0), ("b", 4.5)])]
    pd.DataFrame(rows).to_csv(folder / "toy" / "table1.runs.csv", index=False)
    return folder


def test_the_scoreboard_shows_conditions_the_registering_commit_and_each_amendment(results):
    board = write_scoreboard(["toy"], results, "full")[0].read_text()
    # the scoreboard counts the paper's claims and links its page, which has the rows and the amendments
    [row] = [line for line in board.splitlines() if line.startswith("| [toy](toy/claims.md) |")]
    assert row == "| [toy](toy/claims.md) | 2 | 1 | 0 | 0 | 0 | 1 | 0 | 1 |"
    lines = board.splitlines()
    header = next(k for k, line in enumerate(lines) if line.startswith("| paper |"))
    assert lines[header].count("|") == lines[header + 1].count("|") == row.count("|")  # a table, not a paragraph
    assert "## Amendments" not in board and "| Table 1" not in board
    page = (results / "toy" / "claims.md").read_text()
    assert page.startswith("# toy: does each claim hold? (full mode)") and "](../README.md)" in page
    [faster] = [line for line in page.splitlines() if line.startswith("| Table 1")]
    assert ("| scale: 20000 of the paper's 100000 rows; parallel: critical path, not a measured parallel fit |"
            in faster)
    assert "| ce7a12f, [amended 1x](#toy-faster) |" in faster
    amendments = page[page.index("## Amendments"):]
    assert "### toy: faster" in amendments
    assert ("| 1a2b3c4 | 2026-11-26 | region, output_config | the paper says without statistical significance "
            "| partly supported: +0.0053 [0.0022, 0.0084] |") in amendments
    assert "| conditions |" in page and "| registered |" in page


def test_claims_csv_has_one_row_per_claim_in_the_agreed_columns(results):
    write_scoreboard(["toy"], results, "full")
    table = pd.read_csv(results / "claims.csv")
    assert tuple(table.columns) == COLUMNS
    faster, speech = table.to_dict("records")
    assert (faster["paper"], faster["id"], faster["verdict"]) == ("toy", "faster", "supported")
    assert faster["estimate"] == pytest.approx(math.exp(sum(math.log(b / a) for a, b in
                                                            [(10, 4), (12, 5), (11, 4.5)]) / 3), rel=1e-5)
    assert faster["low"] < faster["estimate"] < faster["high"]
    assert (faster["expect_low"], faster["expect_high"], faster["partly_low"], faster["partly_high"]) == (
        -math.inf, 0.6, 0.0, 1.0)
    assert (faster["runs"], faster["seeds"], faster["registered"], faster["amended"]) == (6, 3, REGISTERED, "1a2b3c4d")
    assert faster["conditions"] == "scale: 20000 of the paper's 100000 rows; parallel: critical path, not a " \
                                   "measured parallel fit"
    assert (speech["verdict"], speech["runs"], speech["seeds"], speech["registered"]) == ("not run", 0, 0, REGISTERED)
    assert all(pd.isna(speech[name]) for name in ("statistic", "estimate", "low", "expect_low", "amended", "conditions"))
    assert (results / "claims.csv").read_text().splitlines()[2] == f"toy,speech,finding,not run,,,,,,,,,0,0,{REGISTERED}{',' * 14},not run,,,,0,0"


def test_an_output_page_shows_conditions_and_links_the_amendment_on_the_scoreboard(results):
    lines = claims_section(judge_all(load_claims("toy"), results))
    assert "| conditions | registered |" in lines[5]
    assert lines[7].endswith("| scale: 20000 of the paper's 100000 rows; parallel: critical path, not a measured "
                             "parallel fit | ce7a12f, [amended 1x](claims.md#toy-faster) |")
