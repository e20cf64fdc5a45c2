"""report/stats.py, the one home of the report's statistics, against scipy and hand-computed cases;
and no other report module computing one of them."""

import math
import re
from pathlib import Path

import numpy as np
import pytest
from scipy import stats as scipy_stats

import svmrepro.report
from svmrepro.report.stats import line_fit, loglog_fit, paired, rise, t_interval

A = np.array([10.0, 12.0, 9.0, 11.0, 10.5])
B = np.array([5.5, 5.9, 4.2, 5.8, 5.0])


def test_t_interval_is_scipys_and_has_no_ends_below_two_values():
    values = [0.10, 0.12, 0.11, 0.14]
    found = t_interval(values)
    low, high = scipy_stats.t.interval(0.95, 3, loc=np.mean(values), scale=scipy_stats.sem(values))
    assert (found.value, found.low, found.high, found.n) == (pytest.approx(0.1175), pytest.approx(low),
                                                             pytest.approx(high), 4)
    one = t_interval([3.0])
    assert one.value == 3.0 and math.isnan(one.low) and math.isnan(one.high) and one.n == 1


def test_a_paired_difference_is_scipys_paired_t_test_with_cohens_dz():
    found = paired(A, B)
    diffs = B - A
    assert found.value == pytest.approx(diffs.mean()) and found.n == 5
    assert found.p_value == pytest.approx(scipy_stats.ttest_rel(B, A).pvalue)
    assert found.std == pytest.approx(diffs.std(ddof=1))
    assert found.effect == pytest.approx(diffs.mean() / diffs.std(ddof=1))
    low, high = scipy_stats.t.interval(0.95, 4, loc=diffs.mean(), scale=scipy_stats.sem(diffs))
    assert (found.low, found.high) == (pytest.approx(low), pytest.approx(high))


def test_a_paired_ratio_is_the_geometric_mean_with_the_log_ratios_interval():
    # b = a / 2 exactly except for one pair at a / 4: log ratios [-ln 2] * 3 + [-ln 4]
    a, b = np.array([2.0, 4.0, 8.0, 8.0]), np.array([1.0, 2.0, 4.0, 2.0])
    found = paired(a, b, ratio=True)
    logs = np.log([0.5, 0.5, 0.5, 0.25])
    assert found.value == pytest.approx(0.25 ** 0.25 * 0.5 ** 0.75)  # geometric mean of 1/2, 1/2, 1/2, 1/4
    half = scipy_stats.t.ppf(0.975, 3) * logs.std(ddof=1) / 2
    assert (found.low, found.high) == (pytest.approx(math.exp(logs.mean() - half)),
                                      pytest.approx(math.exp(logs.mean() + half)))
    assert found.p_value == pytest.approx(scipy_stats.ttest_1samp(logs, 0).pvalue) and found.effect < 0


def test_a_ratio_skips_pairs_that_are_not_positive_and_constant_differences_have_no_p_value():
    found = paired([1.0, 0.0, 2.0, 4.0], [2.0, 5.0, 4.0, 8.0], ratio=True)
    assert found.n == 3 and found.value == pytest.approx(2.0) and found.low == pytest.approx(2.0)
    assert math.isnan(found.p_value) and math.isnan(found.effect)


def test_a_line_fit_has_the_hand_computed_slope_and_interval():
    # x 1..5, y 2 4 5 4 5: Sxx = 10, Sxy = 6, slope 0.6; residuals -0.8 0.6 1 -0.6 -0.2, SSE 2.4,
    # stderr sqrt(2.4 / 3 / 10); t(0.975, 3) = 3.182446305
    found = line_fit([1, 2, 3, 4, 5], [2, 4, 5, 4, 5])
    half = 3.182446305284263 * math.sqrt(0.08)
    assert (found.value, found.low, found.high, found.n) == (pytest.approx(0.6), pytest.approx(0.6 - half),
                                                             pytest.approx(0.6 + half), 5)
    assert math.isnan(line_fit([1, 2], [1, 3]).low) and line_fit([1, 2], [1, 3]).value == pytest.approx(2.0)
    assert math.isnan(line_fit([3, 3, 3], [1, 2, 3]).value)


def test_a_loglog_fit_recovers_a_power_law_over_the_positive_points():
    n = np.array([500.0, 1000.0, 2000.0, 4000.0, 0.0])
    found = loglog_fit(n, 3e-6 * n ** 2.2)
    assert found.value == pytest.approx(2.2) and found.n == 4  # the point at 0 has no logarithm
    assert found.low == pytest.approx(2.2) and found.high == pytest.approx(2.2)


def test_rise_is_zero_when_flat_and_the_range_over_the_mean_for_a_line_through_zero():
    sizes = [100, 200, 300, 400]
    assert rise(sizes, [5.0] * 4).value == pytest.approx(0.0)
    assert rise(sizes, [1.0, 2.0, 3.0, 4.0]).value == pytest.approx(3.0 / 2.5)
    assert math.isnan(rise(sizes, [0.0] * 4).value)


def test_no_other_report_module_computes_a_statistic():
    """Tests, intervals and fits live in stats.py; a section or a primitive calls it (issue 30)."""
    root = Path(svmrepro.report.__file__).parent
    computing = re.compile(r"(from|import) scipy|ttest_\w*\(|linregress\(|polyfit\(|\.ppf\(")
    found = [str(path.relative_to(root)) for path in root.rglob("*.py")
             if path.name != "stats.py" and computing.search(path.read_text())]
    assert found == []
