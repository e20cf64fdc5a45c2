"""The slope-difference primitive: two log-log slopes, each side from its own output's runs, compared
with a Welch-Satterthwaite t interval; a claim whose other output has no runs is "not run"."""

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from svmrepro.errors import ConfigError
from svmrepro.report.claims.primitives import slope_difference
from svmrepro.report.claims.schema import parse_claims
from svmrepro.report.claims.scoreboard import judge_all
from svmrepro.report.claims.verdict import NOT_RUN, SUPPORTED, judge

SIZES = np.repeat([500, 1000, 2000, 4000, 8000], 3)
NOISE = np.random.default_rng(0).normal(0, 0.05, SIZES.size)
CLAIMS = """\
claims:
  - id: same_factor
    source: Tables 1 and 2
    claim: the scaling factor is about the same in both regimes
    paper_says: 2.24 vs 2.35
    output: toy/free
    test: {kind: slope_difference, metric: fit_cpu_s, x: params.dataset.n_train,
           a: {group: dcmp}, b: {output: toy/bounded, group: dcmp}}
    expect: {between: [0.3, 0.7]}
"""


def power_law(exponent, group="dcmp", offset=0):
    """Runs whose fit_cpu_s is n ** exponent times the same noise at every exponent."""
    return pd.DataFrame({"run_id": [f"{offset + i:032x}" for i in range(SIZES.size)], "status": "FINISHED",
                         "tags.algorithm": group, "tags.seed": [str(i % 3) for i in range(SIZES.size)],
                         "params.dataset.n_train": SIZES.astype(str),
                         "metrics.fit_cpu_s": SIZES ** exponent * np.exp(NOISE)})


TEST = {"kind": "slope_difference", "metric": "fit_cpu_s", "x": "params.dataset.n_train",
        "a": {"group": "dcmp"}, "b": {"output": "toy/bounded", "group": "dcmp"}}


def test_the_difference_of_two_slopes_has_a_welch_satterthwaite_interval():
    estimate = slope_difference.evaluate(TEST, {None: power_law(2.0), "toy/bounded": power_law(2.5, offset=100)}, "t")
    fit = stats.linregress(np.log(SIZES), np.log(SIZES ** 2.0) + NOISE)
    # the same residuals on both sides: equal standard errors, so Welch's df is 2 (n - 2)
    half = stats.t.ppf(0.975, 2 * (SIZES.size - 2)) * np.sqrt(2) * fit.stderr
    assert estimate.value == pytest.approx(0.5)
    assert (estimate.low, estimate.high) == (pytest.approx(0.5 - half), pytest.approx(0.5 + half))
    assert estimate.n == 2 * SIZES.size and len(estimate.runs) == 2 * SIZES.size
    assert estimate.p_value < 1e-6 and "dcmp (bounded) - dcmp" in estimate.statistic


def test_unequal_sides_use_the_satterthwaite_degrees_of_freedom():
    noisy = power_law(2.0, offset=200)
    noisy["metrics.fit_cpu_s"] *= np.exp(np.random.default_rng(1).normal(0, 0.3, SIZES.size))
    few = power_law(2.0).iloc[3:12]
    estimate = slope_difference.evaluate(TEST, {None: few, "toy/bounded": noisy}, "t")
    a = stats.linregress(np.log(pd.to_numeric(few["params.dataset.n_train"])), np.log(few["metrics.fit_cpu_s"]))
    b = stats.linregress(np.log(SIZES), np.log(noisy["metrics.fit_cpu_s"]))
    se2 = a.stderr ** 2 + b.stderr ** 2
    df = se2 ** 2 / (a.stderr ** 4 / (len(few) - 2) + b.stderr ** 4 / (SIZES.size - 2))
    assert len(few) - 2 < df < SIZES.size + len(few) - 4
    assert estimate.high - estimate.low == pytest.approx(2 * stats.t.ppf(0.975, df) * np.sqrt(se2))


def test_at_selects_sizes_by_another_column_than_x():
    runs = power_law(2.0)
    runs["metrics.n_free_sv"] = pd.to_numeric(runs["params.dataset.n_train"]) / 2
    test = {**TEST, "x": "metrics.n_free_sv", "at": [2000, 4000, 8000], "at_column": "params.dataset.n_train"}
    estimate = slope_difference.evaluate(test, {None: runs, "toy/bounded": runs}, "t")
    assert estimate.value == pytest.approx(0.0) and estimate.n == 2 * 9


def test_judge_gives_the_primitive_each_output_it_names_and_not_run_without_one():
    claim = parse_claims("toy", CLAIMS, "experiments/toy/claims.yaml")[0]
    found = judge(claim, {"toy/free": power_law(2.0), "toy/bounded": power_law(2.5, offset=100)})
    assert found.verdict == SUPPORTED and found.estimate.value == pytest.approx(0.5)
    missing = judge(claim, {"toy/free": power_law(2.0)})
    assert missing.verdict == NOT_RUN and missing.reason == "no runs of toy/bounded yet"


def test_judge_all_reads_the_other_outputs_runs_table_beside_its_own(tmp_path):
    (tmp_path / "toy").mkdir()
    power_law(2.0).to_csv(tmp_path / "toy" / "free.runs.csv", index=False)
    power_law(2.5, offset=100).to_csv(tmp_path / "toy" / "bounded.runs.csv", index=False)
    claim = parse_claims("toy", CLAIMS, "experiments/toy/claims.yaml")[0]
    [verdict] = judge_all([claim], tmp_path)
    assert verdict.verdict == SUPPORTED and verdict.seeds == 3


@pytest.mark.parametrize("change, key", [
    ({"b": {"output": "toy/bounded", "grup": "dcmp"}}, ".b.grup"),
    ({"b": "dcmp"}, ": Merge error: str is not a subclass of Side"),
    ({"metric": None}, ".metric"),
])
def test_a_bad_test_is_one_line_naming_the_key(change, key):
    with pytest.raises(ConfigError) as error:
        slope_difference.evaluate({**TEST, **change}, {None: power_law(2.0), "toy/bounded": power_law(2.5)}, "t.test")
    message = str(error.value)
    assert "\n" not in message and message.startswith(f"t.test{key}")
