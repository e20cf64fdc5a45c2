"""A claim about time judged a second time, against today's solver (issue 31): the ``today`` block of
a claims file, its lock, its verdicts from the runs, and where they are shown (claims.csv, the
scoreboard's column, results/today.md); its lock is tested in test_claims_lock.py."""

import math

import pandas as pd
import pytest

from svmrepro.errors import ConfigError
from svmrepro.report.claims.schema import load_claims, parse_claims
from svmrepro.report.claims.scoreboard import RunsTables, write_scoreboard
from svmrepro.report.claims.today import judge_today
from svmrepro.report.claims.today_page import write_today_page
from toy_claims import TOY_CLAIM_HEAD

#: b against a in toy/table1; today: against svc_onedal of the companion toy/table1_today, and with
#: oneDAL inside b too; a second claim whose companion has no runs, one unchanged, one not about time
CLAIMS = TOY_CLAIM_HEAD + """\
    test: {kind: compare, metric: fit_cpu_s, a: a, b: b, stat: ratio}
    expect: {below: 0.6}
    partly: {below: 1.0}
    timing: true
    today:
      test:
        a: {output: toy/table1_today, group: svc_onedal}
      inside:
        test:
          a: {output: toy/table1_today, group: svc_onedal}
          b: {output: toy/table1_today, group: b_onedal}
      conditions: {scale: "toy rows"}
  - id: faster_table2
    source: Table 2
    claim: b trains faster than a on table 2
    paper_says: a third of the time
    output: toy/table1
    test: {kind: compare, metric: fit_cpu_s, a: a, b: b, stat: ratio}
    expect: {below: 0.6}
    timing: true
    today:
      test: {a: {output: toy/table2_today, group: svc_onedal}}
  - id: b_scales
    source: Fig. 1
    claim: b's time grows slowly
    paper_says: linear
    output: toy/table1
    test: {kind: compare, metric: fit_cpu_s, a: b, b: b, stat: ratio}
    expect: {below: 1.5}
    timing: true
    today: {unchanged: "compares b with itself: no baseline solver to replace"}
  - id: accurate
    source: Table 1
    claim: b is as accurate as a
    paper_says: same error
    output: toy/table1
    test: {kind: compare, metric: test_error, a: a, b: b, stat: difference}
    expect: {between: [-0.01, 0.01]}
"""
LIBSVM, ONEDAL = ("libsvm", "1.7.2"), ("onedal", "2026.2.0")


def runs(groups: dict[str, tuple[list[float], tuple[str, str]]]) -> pd.DataFrame:
    """A runs table: each group's fit_cpu_s values by seed, tagged with its solver and version."""
    rows = [{"run_id": f"{sum(map(ord, group)):016x}{seed:016x}", "status": "FINISHED", "tags.algorithm": group, "tags.seed": str(seed),
             "tags.cpu_count": "2", "tags.load_avg_1m": "0.3", "tags.solver": solver, "tags.solver.version": version,
             "metrics.fit_cpu_s": value, "metrics.test_error": 0.1}
            for group, (values, (solver, version)) in groups.items() for seed, value in enumerate(values)]
    return pd.DataFrame(rows)


@pytest.fixture
def results(tmp_path, monkeypatch):
    """The toy claims in the current folder, and the runs tables of toy/table1 and its companion."""
    monkeypatch.chdir(tmp_path)  # experiments/toy/claims.yaml is read from the current folder first
    (tmp_path / "experiments" / "toy").mkdir(parents=True)
    (tmp_path / "experiments" / "toy" / "claims.yaml").write_text(CLAIMS)
    folder = tmp_path / "results" / "toy"
    folder.mkdir(parents=True)
    runs({"a": ([10.0, 12.0, 11.0], LIBSVM), "b": ([4.0, 5.0, 4.5], LIBSVM)}).to_csv(folder / "table1.runs.csv",
                                                                                   index=False)
    runs({"svc_onedal": ([3.0, 3.6, 3.1], ONEDAL), "b_onedal": ([1.0, 1.3, 1.1], ONEDAL)}).to_csv(
        folder / "table1_today.runs.csv", index=False)
    (folder / "table1.md").write_text("# Table 1\n")
    return tmp_path / "results"


# --- the today block of a claims file ---------------------------------------------------------------


@pytest.mark.parametrize("block, words", [
    ("    today: {test: {a: c}}\n", "faster).today: only a tested timing claim"),
    ("    today: {test: {a: c}, unchanged: why}\n", "faster).today: give one of test"),
    ("    today: {conditions: {scale: x}}\n", "faster).today: give one of test"),
    ("    today: {test: {a: c}, colour: red}\n", "faster).today.colour"),
    ("    today: {test: {aa: c}}\n", "faster).today.test.aa: not a key of a compare test"),
    ("    today: {unchanged: why, inside: {test: {stats: ratio}}}\n", "faster).today.inside.test.stats: not a key"),
    ("    today: {unchanged: why, conditions: {colour: red}}\n", "faster).today.conditions.colour"),
])
def test_a_bad_today_block_is_one_line_naming_the_file_the_claim_and_the_key(block, words):
    text = TOY_CLAIM_HEAD + ("    test: {kind: compare, metric: fit_cpu_s, a: a, b: b}\n    expect: {below: 0.6}\n"
                             "    timing: " + ("false\n" if "only a tested" in words else "true\n") + block)
    with pytest.raises(ConfigError) as error:
        parse_claims("toy", text, "experiments/toy/claims.yaml")
    message = str(error.value)
    assert "\n" not in message and message.startswith("experiments/toy/claims.yaml: claims[0] (") and words in message


def test_the_today_tests_are_the_claims_with_the_blocks_keys_merged_in():
    faster, _, scales, accurate = parse_claims("toy", CLAIMS, "claims.yaml")
    tests = faster.today.tests(faster.test)
    assert tests["today"] == {**faster.test, "a": {"output": "toy/table1_today", "group": "svc_onedal"}}
    assert tests["inside"]["b"] == {"output": "toy/table1_today", "group": "b_onedal"} and tests["inside"]["stat"] == "ratio"
    assert scales.today.tests(scales.test) == {"today": None, "inside": None} and accurate.today is None


# --- the verdicts ------------------------------------------------------------------------------------


def test_each_timing_claim_is_judged_against_todays_solver_from_the_runs(results):
    faster, table2, scales, accurate = (judge_today(claim, RunsTables(results)) for claim in load_claims("toy"))
    # b / svc_onedal is about 1.45: the same claim that holds against LIBSVM fails against oneDAL
    assert faster.today.verdict == "not supported" and faster.today.estimate.value == pytest.approx(
        math.exp(sum(math.log(b / a) for a, b in [(3.0, 4.0), (3.6, 5.0), (3.1, 4.5)]) / 3))
    assert faster.inside.verdict == "supported" and faster.inside.estimate.value < 0.6  # b_onedal / svc_onedal
    assert faster.note == "against svc_onedal (toy/table1_today)" and faster.text() == "not supported; inside: supported"
    assert (table2.today.verdict, table2.today.reason) == ("not run", "no runs of toy/table2_today yet")
    assert (scales.today.verdict, scales.inside, scales.note) == (
        "unchanged", None, "compares b with itself: no baseline solver to replace")
    assert accurate is None


def test_a_today_reading_follows_the_claims_timing_rule(results):
    table = pd.read_csv(results / "toy" / "table1_today.runs.csv", dtype=str)
    table["tags.load_avg_1m"] = "3.1"  # above 2 cores + 0.5
    table.to_csv(results / "toy" / "table1_today.runs.csv", index=False)
    faster = judge_today(load_claims("toy")[0], RunsTables(results))
    assert faster.today.verdict == "inconclusive" and "load" in faster.today.reason


# --- where they are shown ----------------------------------------------------------------------------


def test_claims_csv_has_the_today_columns(results):
    write_scoreboard(["toy"], results, "full")
    faster, table2, scales, accurate = pd.read_csv(results / "claims.csv").to_dict("records")
    assert (faster["verdict"], faster["verdict_today"], faster["verdict_today_inside"]) == (
        "supported", "not supported", "supported")
    assert faster["low_today"] < faster["estimate_today"] < faster["high_today"] and faster["low_today"] > 1
    assert faster["high_today_inside"] < 0.6 and faster["today_note"] == "against svc_onedal (toy/table1_today)"
    assert (table2["verdict_today"], scales["verdict_today"]) == ("not run", "unchanged")
    assert scales["today_note"] == "compares b with itself: no baseline solver to replace"
    assert all(pd.isna(scales[name]) for name in ("estimate_today", "verdict_today_inside"))
    assert all(pd.isna(accurate[name]) for name in ("verdict_today", "estimate_today", "today_note"))


def test_the_scoreboard_has_a_column_against_todays_solver_for_timing_claims(results):
    write_scoreboard(["toy"], results, "full")
    page = (results / "toy" / "claims.md").read_text()
    header = next(line for line in page.splitlines() if line.startswith("| claim |"))
    assert "| verdict | confirmed | against today's solver |" in header
    rows = {line.split(" | ")[0].removeprefix("| "): line.split(" | ") for line in page.splitlines()
            if line.startswith("| Table 1") or line.startswith("| Fig. 1")}
    column = header.split(" | ").index("against today's solver")
    assert rows["Table 1: b trains faster than a"][column] == "**not supported**; inside: **supported**"
    assert rows["Fig. 1: b's time grows slowly"][column] == "**unchanged**"
    assert rows["Table 1: b is as accurate as a"][column] == ""


def test_the_today_page_answers_in_one_table_with_numbers_from_the_runs(results):
    text = write_today_page(["toy"], results, "full").read_text()
    assert "`onedal` 2026.2.0" in text and "libsvm" not in text  # today's solver, from its runs' tags
    assert "svmrepro-reproduce --mode full" in text and "cores + 0.5" in text
    rows = [line for line in text.splitlines() if line.startswith("| toy |")]
    assert len(rows) == 3  # the claims about time, not the one about accuracy
    faster = rows[0].split(" | ")
    verdicts = {v.claim.id: v for v in [judge_today(c, RunsTables(results)) for c in load_claims("toy")] if v}
    today = verdicts["faster"].today.estimate
    assert faster[1] == "[faster](toy/table1.md)" and faster[2] == "Table 1: b trains faster than a"
    assert faster[3].startswith("**supported**: 0.409 [")
    assert faster[4] == f"**not supported**: {today.value:.3g} [{today.low:.3g}, {today.high:.3g}]"
    assert faster[5].startswith("**supported**: 0.")
    assert faster[6] == "against svc_onedal (toy/table1_today); scale: toy rows |"
    assert "| **unchanged** |" in rows[2] and "**not supported**: 1 · **inconclusive**: 0 · **not run**: 1 · **unchanged**: 1" in text
