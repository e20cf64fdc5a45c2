"""The verdict rule over every layout of a 95 % interval against ``expect`` and ``partly`` (nested or
not, open or closed ends): a label never reads "inconclusive" when more runs could not change it.

Region ends and interval ends are whole numbers, so whether the interval lies inside, across or
outside an open region is decided exactly by the half-integer points of the interval (the oracle),
independently of :class:`~svmrepro.report.claims.schema.Region`'s own arithmetic."""

import math
from dataclasses import replace

import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st

from svmrepro.report.claims.estimate import Estimate
from svmrepro.report.claims.schema import Region, parse_claims
from svmrepro.report.claims.verdict import INCONCLUSIVE, NOT_SUPPORTED, PARTLY, SUPPORTED, decide

CLAIM = parse_claims("toy", """\
claims:
  - id: c
    source: Table 1
    claim: b trains faster than a
    paper_says: half the time
    output: toy/table1
    test: {kind: compare, metric: fit_cpu_s, a: a, b: b}
    expect: {below: 0.6}
""", "experiments/toy/claims.yaml")[0]
EDGES = range(0, 7)


@st.composite
def regions(draw):
    """An open region: below, above or between whole-number edges."""
    kind = draw(st.sampled_from(["below", "above", "between"]))
    if kind == "below":
        return Region(high=draw(st.sampled_from(EDGES)))
    if kind == "above":
        return Region(low=draw(st.sampled_from(EDGES)))
    low = draw(st.sampled_from(EDGES[:-1]))
    return Region(low, draw(st.sampled_from([e for e in EDGES if e > low])))


@st.composite
def intervals(draw):
    low = draw(st.integers(-1, 7))
    return low, draw(st.integers(low, 8))


def points(low, high):
    return [low + k / 2 for k in range(2 * (high - low) + 1)]


def inside(region, low, high):
    return all(region.low < p < region.high for p in points(low, high))


def outside(region, low, high):
    return not any(region.low < p < region.high for p in points(low, high))


def label(expect, partly, low, high):
    claim = replace(CLAIM, expect=expect, partly=partly)
    return decide(claim, Estimate("s", (low + high) / 2, float(low), float(high), 5, pd.DataFrame()))


@settings(max_examples=2000, deadline=None)
@given(expect=regions(), partly=st.none() | regions(), interval=intervals())
def test_a_label_follows_from_where_the_interval_lies(expect, partly, interval):
    low, high = interval
    verdict, reason = label(expect, partly, low, high)
    assert (verdict == SUPPORTED) == inside(expect, low, high)
    if outside(expect, low, high):  # no number of runs makes it supported
        assert verdict != INCONCLUSIVE
        in_partly = partly is not None and inside(partly, low, high)
        assert verdict == (PARTLY if in_partly else NOT_SUPPORTED)
    if verdict == PARTLY:
        assert not inside(expect, low, high) and inside(partly, low, high)
    if verdict == INCONCLUSIVE:  # across expect's edge, and not settled by partly
        assert not inside(expect, low, high) and not outside(expect, low, high)
        assert partly is None or not inside(partly, low, high)
    undecided = verdict == NOT_SUPPORTED and partly is not None and not outside(partly, low, high)
    assert ("undecided: straddles its edge" in reason) == undecided


def test_the_issue_cases_are_not_supported_with_partial_support_undecided():
    """Cascade "fewer SVs" [0.993, 1.001] against < 0.988 and [0.972, 1.01] against < 0.939, partly < 1; SVR's SV-scaling
    factor [1.26, 1.76] against (2.14, 2.45), partly (1.5, 3.06): no seeds can make them supported."""
    for low, high, expect, partly in [(0.993, 1.001, Region(high=0.988), Region(high=1.0)),
                                      (0.972, 1.01, Region(high=0.939), Region(high=1.0)),
                                      (1.26, 1.76, Region(2.14, 2.45), Region(1.5, 3.06))]:
        claim = replace(CLAIM, expect=expect, partly=partly)
        verdict, reason = decide(claim, Estimate("s", (low + high) / 2, low, high, 5, pd.DataFrame()))
        assert verdict == NOT_SUPPORTED
        assert reason == f"interval outside {expect.text()}; partly ({partly.text()}) undecided: straddles its edge"


def test_an_interval_outside_both_regions_names_both():
    claim = replace(CLAIM, expect=Region(high=0.6), partly=Region(high=1.0))
    assert decide(claim, Estimate("s", 1.2, 1.1, 1.3, 5, pd.DataFrame())) == (
        NOT_SUPPORTED, "interval outside < 0.6 and partly (< 1)")
    alone = replace(CLAIM, expect=Region(low=2.0, high=math.inf), partly=None)
    assert decide(alone, Estimate("s", 1.0, 0.5, 1.5, 5, pd.DataFrame())) == (NOT_SUPPORTED, "interval outside > 2")
