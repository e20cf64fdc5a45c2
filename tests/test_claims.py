"""Claims as data: the schema of experiments/<paper>/claims.yaml, the primitives' statistics against
scipy's, the verdict rules, and the scoreboard page."""

import datetime
import math
import subprocess
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from scipy import stats

from svmrepro.compose import experiments, papers
from svmrepro.errors import ConfigError, SvmReproError, first_line
from svmrepro.report.claims import schema
from svmrepro.report.claims.estimate import Estimate
from svmrepro.report.claims.lock import LOCK_FILE
from svmrepro.report.claims.primitives import compare, slope, threshold, trend
from svmrepro.report.claims.schema import Region, claims_path, load_claims, parse_claims
from svmrepro.report.claims.scoreboard import write_scoreboard
from svmrepro.report.claims.verdict import (
    INCONCLUSIVE, NOT_RUN, NOT_SUPPORTED, PARTLY, SUPPORTED, decide, judge,
)
from toy_claims import TOY_CLAIM_HEAD

CHECKOUT = Path(__file__).resolve().parents[1]

CLAIM = TOY_CLAIM_HEAD + """\
    test: {kind: compare, metric: fit_cpu_s, a: a, b: b, stat: ratio}
    expect: {below: 0.6}
    partly: {below: 1.0}
    timing: true
  - id: speech
    source: Table 2
    claim: the same on speech
    paper_says: 851 vs 6787 min
    not_run: the corpus is licensed
"""


def runs(a, b, seeds=None, load=0.5, x=None, extra=None):
    """A runs table: groups a and b with fit_cpu_s values ``a`` and ``b``, paired by seed."""
    seeds = list(range(len(a))) if seeds is None else seeds
    rows = []
    for group, values in (("a", a), ("b", b)):
        for i, (seed, value) in enumerate(zip(seeds, values)):
            rows.append({"run_id": f"{ord(group):x}{i:030x}", "status": "FINISHED", "tags.algorithm": group, "tags.seed": str(seed),
                         "tags.cpu_count": "2", "tags.load_avg_1m": str(load), "tags.git_commit": "abcdef123",
                         "params.dataset.n_train": str(x[i] if x is not None else 100),
                         "metrics.fit_cpu_s": value, **(extra or {})})
    return pd.DataFrame(rows)


def claims(text=CLAIM):
    return parse_claims("toy", text, "experiments/toy/claims.yaml")


# --- schema -------------------------------------------------------------------------------------


def test_a_claims_file_parses_to_claims_with_regions():
    faster, speech = claims()
    assert faster.expect == Region(high=0.6) and faster.partly == Region(high=1.0) and faster.timing
    assert speech.not_run == "the corpus is licensed" and speech.test == {}


@pytest.mark.parametrize("change, words", [
    (("timing: true", "timing: maybe"), "timing"),
    (("    source: Table 1\n", "    source: Table 1\n    colour: red\n"), "colour"),
    (("expect: {below: 0.6}", "expect: {between: [2, 1]}"), "between"),
    (("expect: {below: 0.6}", "expect: {below: 0.6, above: 0.1}"), "one of below, above, between"),
    (("kind: compare", "kind: anova"), "not a claim primitive"),
    (("- id: speech", "- id: faster"), "used twice"),
    (("    expect: {below: 0.6}\n", ""), "needs output, test and expect"),
])
def test_a_bad_claims_file_is_one_line_naming_the_file_and_the_key(change, words):
    with pytest.raises(ConfigError) as error:
        claims(CLAIM.replace(*change))
    message = str(error.value)
    assert "\n" not in message and message.startswith("experiments/toy/claims.yaml") and words in message


@pytest.mark.parametrize("paper", [paper for paper in papers() if claims_path(paper).is_file()])
def test_a_claims_file_reads_as_pyyaml_s_own_parser_reads_it(paper):
    """libyaml's parser, where PyYAML has it, gives each committed claims file the objects PyYAML's pure-Python
    parser gives it."""
    text = claims_path(paper).read_text()
    assert schema._load(text) == yaml.load(text, Loader=schema._Loader)


def test_an_amendment_s_date_is_read_as_its_text():
    assert schema._load("date: 2026-11-26") == {"date": "2026-11-26"}


def test_a_yaml_mistake_in_a_claims_file_is_told_in_pyyaml_s_own_words():
    bad = CLAIM.replace("- id: speech", "- id: speech: Table 2")
    with pytest.raises(yaml.YAMLError) as pure:
        yaml.load(bad, Loader=schema._Loader)
    with pytest.raises(ConfigError) as error:
        claims(bad)
    assert str(error.value) == f"experiments/toy/claims.yaml: {first_line(pure.value)}"


def _locks_and_past_claims() -> list[tuple[str, str]]:
    """(where, text) of every committed lock file and of the first and the last version git has of each paper's
    claims file (``blind`` reads them all: these two span the forms they took)."""
    texts = []
    for paper in papers():
        lock = claims_path(paper).with_name(LOCK_FILE)
        if lock.is_file():
            texts.append((str(lock), lock.read_text()))
        path = claims_path(paper).resolve().relative_to(CHECKOUT)
        log = subprocess.run(["git", "-C", str(CHECKOUT), "log", "--format=%h", "--", str(path)],
                             capture_output=True, text=True, check=False).stdout.split()
        for commit in dict.fromkeys(log[:1] + log[-1:]):
            shown = subprocess.run(["git", "-C", str(CHECKOUT), "show", f"{commit}:{path}"],
                                   capture_output=True, text=True, check=False)
            if shown.returncode == 0:
                texts.append((f"{commit}:{path}", shown.stdout))
    return texts


def test_a_lock_and_a_past_claims_file_read_as_yaml_safe_load_reads_them():
    """libyaml's parser, where PyYAML has it, gives every lock file and a claims file's past versions the objects
    ``yaml.safe_load`` gives them (a date read as a date there)."""
    texts = _locks_and_past_claims()
    assert len(texts) > len(papers())  # the locks and at least one past version: history is there to read
    for where, text in texts:
        assert schema.safe_load(text) == yaml.safe_load(text), where
    assert schema.safe_load("date: 2026-11-26") == {"date": datetime.date(2026, 11, 26)}


def test_a_yaml_mistake_in_a_lock_is_raised_as_yaml_safe_load_raises_it():
    bad = "claims:\n  a: {hash: 1\n  b: [\n"
    with pytest.raises(yaml.YAMLError) as pure:
        yaml.safe_load(bad)
    with pytest.raises(yaml.YAMLError) as fast:
        schema.safe_load(bad)
    assert str(fast.value) == str(pure.value) and type(fast.value) is type(pure.value)


# --- primitives ---------------------------------------------------------------------------------


def test_compare_ratio_is_the_geometric_mean_of_paired_ratios_with_a_paired_t_test():
    a = [10.0, 12.0, 9.0, 11.0, 10.5]
    b = [5.5, 5.9, 4.2, 5.8, 5.0]
    estimate = compare.evaluate({"metric": "fit_cpu_s", "a": "a", "b": "b", "stat": "ratio"}, {None: runs(a, b)}, "t")
    logs = np.log(np.array(b) / np.array(a))
    assert estimate.value == pytest.approx(math.exp(logs.mean()))
    low, high = stats.t.interval(0.95, len(logs) - 1, loc=logs.mean(), scale=stats.sem(logs))
    assert (estimate.low, estimate.high) == (pytest.approx(math.exp(low)), pytest.approx(math.exp(high)))
    assert estimate.p_value == pytest.approx(stats.ttest_rel(np.log(b), np.log(a)).pvalue)
    assert estimate.n == 5 and estimate.effect < 0


def test_compare_pairs_by_seed_not_by_row_order():
    a, b = [1.0, 2.0, 3.0], [2.0, 4.0, 6.0]
    table = runs(a, b)
    shuffled = pd.concat([table[table["tags.algorithm"] == "a"], table[table["tags.algorithm"] == "b"][::-1]])
    estimate = compare.evaluate({"metric": "fit_cpu_s", "a": "a", "b": "b"}, {None: shuffled}, "t")
    assert estimate.value == pytest.approx(2.0) and estimate.low == pytest.approx(2.0)


def test_compare_difference_and_a_metric_per_side():
    table = runs([1.0, 2.0, 3.0], [1.5, 2.5, 3.7], extra={"metrics.critical_path_s": 1.0})
    estimate = compare.evaluate({"metric": "fit_cpu_s", "a": "a", "b": {"group": "b", "metric": "critical_path_s"},
                                 "stat": "difference"}, {None: table}, "t")
    assert estimate.value == pytest.approx(1.0 - 2.0) and "critical_path_s / fit_cpu_s" in estimate.statistic


def test_compare_pairs_a_side_of_another_output_with_the_claims_own_by_seed():
    own, companion = runs([], [4.0, 5.0, 6.0], seeds=[0, 1, 2]), runs([2.0, 2.5, 3.0], [], seeds=[0, 1, 2])
    companion["tags.algorithm"] = "svc_onedal"
    test = {"metric": "fit_cpu_s", "a": {"group": "svc_onedal", "output": "toy/table1_today"}, "b": "b"}
    assert compare.outputs(test) == ["toy/table1_today", None]
    estimate = compare.evaluate(test, {None: own, "toy/table1_today": companion}, "t")
    assert estimate.value == pytest.approx(2.0) and estimate.n == 3 and len(estimate.runs) == 6


def test_slope_recovers_a_power_law_exponent_and_its_interval():
    rng = np.random.default_rng(0)
    sizes = np.repeat([500, 1000, 2000, 4000], 3)
    table = runs(list(sizes ** 2.0 * np.exp(rng.normal(0, 0.05, sizes.size))), [], x=list(sizes),
                 seeds=list(range(sizes.size)))
    estimate = slope.evaluate({"metric": "fit_cpu_s", "x": "params.dataset.n_train", "group": "a"}, table, "t")
    fit = stats.linregress(np.log(sizes), np.log(pd.to_numeric(table["metrics.fit_cpu_s"])))
    assert estimate.value == pytest.approx(fit.slope) and estimate.low < 2.0 < estimate.high


def test_where_with_a_list_keeps_the_runs_at_any_of_its_values():
    sizes = np.repeat([500, 1000, 2000, 4000], 3)
    # steeper above 1000 rows: the slope over the larger sizes alone is the steeper one
    times = np.where(sizes > 1000, sizes ** 2.0, 1000.0 * sizes)
    table = runs(list(times), [], x=list(sizes), seeds=list(range(sizes.size)))
    test = {"metric": "fit_cpu_s", "x": "params.dataset.n_train", "group": "a"}
    large = slope.evaluate({**test, "where": {"params.dataset.n_train": [2000, 4000]}}, table, "t")
    assert large.n == 6 and large.value == pytest.approx(2.0)
    assert slope.evaluate(test, table, "t").value < 1.9


def test_trend_is_flat_for_a_constant_and_one_for_a_line_through_zero():
    sizes = [100, 200, 300, 400]
    flat = trend.evaluate({"metric": "fit_cpu_s", "x": "params.dataset.n_train", "group": "a"},
                          runs([5.0, 5.0, 5.0, 5.0], [], x=sizes), "t")
    line = trend.evaluate({"metric": "fit_cpu_s", "x": "params.dataset.n_train", "group": "a"},
                          runs([1.0, 2.0, 3.0, 4.0], [], x=sizes), "t")
    assert flat.value == pytest.approx(0.0) and line.value == pytest.approx(3.0 / 2.5)


def test_threshold_is_the_mean_with_its_t_interval():
    values = [0.10, 0.12, 0.11]
    estimate = threshold.evaluate({"metric": "fit_cpu_s", "group": "a"}, runs(values, []), "t")
    low, high = stats.t.interval(0.95, 2, loc=np.mean(values), scale=stats.sem(values))
    assert (estimate.value, estimate.low, estimate.high) == (pytest.approx(np.mean(values)), pytest.approx(low),
                                                             pytest.approx(high))


# --- verdicts -----------------------------------------------------------------------------------


def estimate(low, high, n=5, load=0.5):
    return Estimate("s", (low + high) / 2, low, high, n, runs([1.0] * n, [1.0] * n, load=load))


@pytest.mark.parametrize("low, high, verdict", [
    (0.40, 0.55, SUPPORTED),
    (0.55, 0.90, PARTLY),
    (1.05, 1.30, NOT_SUPPORTED),
    (0.80, 1.20, NOT_SUPPORTED),  # outside expect: more runs cannot make it supported
    (0.50, 1.20, INCONCLUSIVE),
])
def test_the_interval_against_the_stated_regions_gives_the_verdict(low, high, verdict):
    faster = claims()[0]
    assert decide(faster, estimate(low, high))[0] == verdict


def test_a_timing_on_a_loaded_machine_or_too_few_runs_is_inconclusive():
    faster = claims()[0]
    verdict, reason = decide(faster, estimate(0.4, 0.5, load=3.2))
    assert verdict == INCONCLUSIVE and "load" in reason
    one = Estimate("s", 0.5, float("nan"), float("nan"), 1, runs([1.0], [0.5]))
    assert decide(faster, one)[0] == INCONCLUSIVE


def test_identical_pairs_give_no_interval_and_so_no_verdict_but_inconclusive():
    """Three pairs whose differences are all the same give a zero-width t interval: no evidence of a spread,
    not a supported claim (issue 48, item 4); pairs that differ decide as before."""
    same = claims()[0]
    identical = compare.evaluate({"kind": "compare", "metric": "fit_cpu_s", "a": "a", "b": "b", "stat": "ratio"},
                                 {None: runs([1.0, 2.0, 4.0], [0.5, 1.0, 2.0])}, "toy")
    assert identical.low == identical.high == pytest.approx(0.5)
    verdict, reason = decide(same, identical)
    assert verdict == INCONCLUSIVE and "identical" in reason
    differing = compare.evaluate({"kind": "compare", "metric": "fit_cpu_s", "a": "a", "b": "b", "stat": "ratio"},
                                 {None: runs([1.0, 2.0, 4.0], [0.5, 1.01, 1.98])}, "toy")
    assert decide(same, differing)[0] == SUPPORTED


def test_a_timing_read_from_runs_that_shared_the_machine_is_inconclusive_whatever_the_load():
    """Quick mode runs its timed experiments beside others (the plan's ``timing: shared``): a claim about
    time that reads such a run is inconclusive even at a low load; its tag absent (runs older than it),
    the load rule alone decides."""
    faster = claims()[0]
    alone = estimate(0.4, 0.5)
    assert decide(faster, alone)[0] == SUPPORTED
    alone.runs["tags.timing"] = "exclusive"
    assert decide(faster, alone)[0] == SUPPORTED
    beside = estimate(0.4, 0.5)
    beside.runs.loc[0, "tags.timing"] = "shared"
    verdict, reason = decide(faster, beside)
    assert verdict == INCONCLUSIVE and "1 of 10 runs were timed beside other runs" in reason
    untimed = replace(faster, timing=False)
    assert decide(untimed, beside)[0] == SUPPORTED  # an accuracy claim reads them as before


def test_a_one_group_test_reads_the_output_its_output_key_names():
    """A method run only in a companion output (oneDAL inside it, ``<id>_today``) is judged from that
    output's runs, not the claim's own."""

    faster, _ = claims()
    test = {"kind": "threshold", "metric": "fit_cpu_s", "group": "a", "output": "toy/table1_today"}
    claim = replace(faster, test=test)
    own, companion = runs([100.0, 100.0, 100.0], []), runs([0.2, 0.3, 0.25], [])
    assert judge(claim, {"toy/table1": own}).verdict == NOT_RUN
    found = judge(claim, {"toy/table1": own, "toy/table1_today": companion})
    assert found.estimate.value == pytest.approx(0.25) and found.verdict == SUPPORTED


def test_judge_reads_the_runs_and_says_not_run_without_them():
    faster, speech = claims()
    assert judge(speech, {}).verdict == NOT_RUN
    assert judge(faster, {}).verdict == NOT_RUN and "no runs of toy/table1" in judge(faster, {}).reason
    found = judge(faster, {"toy/table1": runs([10.0, 12.0, 11.0, 10.0], [4.0, 5.0, 4.5, 4.4])})
    assert found.verdict == SUPPORTED and found.commits == ["abcdef1"] and found.seeds == 4


def test_a_claim_reading_a_metric_the_runs_lack_is_one_line_naming_it_once():
    faster = claims()[0]
    lacking = runs([10.0, 12.0], [4.0, 5.0]).drop(columns="metrics.fit_cpu_s")
    with pytest.raises(SvmReproError) as raised:
        judge(faster, {"toy/table1": lacking})
    message = str(raised.value)
    assert "\n" not in message and "'metrics.fit_cpu_s'" in message
    assert message.count("experiments/toy/claims.yaml: faster.test") == 1


def test_the_scoreboard_counts_verdicts_and_links_each_output(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # experiments/toy/claims.yaml is read from the current folder first
    (tmp_path / "experiments" / "toy").mkdir(parents=True)
    (tmp_path / "experiments" / "toy" / "claims.yaml").write_text(CLAIM)
    results = tmp_path / "results"
    (results / "toy").mkdir(parents=True)
    runs([10.0, 12.0, 11.0], [4.0, 5.0, 4.5]).to_csv(results / "toy" / "table1.runs.csv", index=False)
    (results / "toy" / "table1.md").write_text("# page\n")
    (results / "toy" / "table1.png").write_bytes(b"png")
    path, counts = write_scoreboard(["toy"], results, "full")
    board = path.read_text()
    assert counts == {SUPPORTED: 1, NOT_RUN: 1}
    assert "**supported**: 1" in board and "**not run**: 1" in board and "[toy](toy/claims.md)" in board
    page = (results / "toy" / "claims.md").read_text()  # the paper's own page, its outputs beside it
    assert "**supported**: 1" in page and "**not run**: 1" in page
    assert "[table1](table1.md)" in page and '<img src="table1.png"' in page


# --- the papers' own claims -----------------------------------------------------------------------


def test_every_paper_claims_file_parses_and_names_a_known_output():
    known = set(experiments())
    found = {paper: load_claims(paper) for paper in papers()}
    for paper, paper_claims in found.items():
        for claim in paper_claims:
            assert claim.not_run is not None or claim.output in known, f"{paper}: {claim.id} names {claim.output}"


def test_a_claim_is_judged_once_per_runs_csv_text_and_anew_when_the_text_changes(tmp_path, monkeypatch):
    """Issue 44: a reproduction judges each claim for its output's page and again for the scoreboard, on the same
    runs CSV; the second is the first's verdict, kept by the CSV's text, and a changed CSV is judged again."""
    from pathlib import Path

    from svmrepro.report.claims import verdict as verdicts
    from svmrepro.report.claims.scoreboard import RunsTables

    claim = next(c for c in load_claims("cascade") if c.output == "cascade/table1" and c.not_run is None)
    (tmp_path / "cascade").mkdir()
    committed = Path(__file__).resolve().parents[1] / "results" / "cascade" / "table1.runs.csv"
    csv = tmp_path / "cascade" / "table1.runs.csv"
    csv.write_text(committed.read_text())
    # none kept yet: another test of this process may have judged the claim on the same committed CSV
    monkeypatch.setattr(verdicts, "_JUDGED", type(verdicts._JUDGED)())
    calls = []
    module = verdicts.primitive(claim.test["kind"], claim.id)
    evaluate = module.evaluate
    monkeypatch.setattr(module, "evaluate", lambda *args: calls.append(1) or evaluate(*args))
    first = judge(claim, RunsTables(tmp_path))
    again = judge(claim, RunsTables(tmp_path))
    assert len(calls) == 1 and again is first
    # the same table given in memory without its text: judged, not taken from what was kept
    in_memory = judge(claim, {"cascade/table1": RunsTables(tmp_path)["cascade/table1"]})
    assert len(calls) == 2 and in_memory.verdict == first.verdict
    lines = csv.read_text().splitlines(keepends=True)
    csv.write_text("".join(lines[:-1]))  # one run fewer
    fewer = judge(claim, RunsTables(tmp_path))
    assert len(calls) == 3 and len(fewer.estimate.runs) < len(first.estimate.runs)
