"""The forest plot of a paper's findings (``results/<paper>/claims.png``): every row's label is whole, and the
legend names the runs each marker stands for, only the markers drawn."""

from dataclasses import replace

import pandas as pd
import pytest

from svmrepro.report.claims.estimate import Estimate
from svmrepro.report.claims.forest import draw_forest
from svmrepro.report.claims.schema import FINDING, load_claims
from svmrepro.report.claims.verdict import Verdict


@pytest.mark.parametrize("id_length", [12, 60])  # the longest claim id is 43 characters
def test_every_row_label_lies_inside_the_figure_however_long_the_claim_id(id_length):
    claim = next(c for c in load_claims("mixture") if c.kind == FINDING)
    rows = []
    for k, words in enumerate(("short", "x" * id_length)):
        estimate = Estimate("n_sv: a / b", 0.9 + k / 10, 0.8, 1.2, 5, runs=pd.DataFrame())
        verdict = Verdict(replace(claim, id=f"{words}_{k}"), "inconclusive", "", estimate)
        rows.append((verdict, replace(verdict)))
    figure = draw_forest("mixture", rows, ["a_claim_not_run"], "full")
    renderer = figure.canvas.get_renderer()
    labels = [text for axis in figure.axes for text in axis.texts]
    assert len(labels) == 2
    edges = [text.get_window_extent(renderer) for text in labels]
    assert all(edge.x0 >= 0 for edge in edges), [edge.x0 for edge in edges]  # nothing cut at the left edge
    axes_left = min(axis.get_window_extent(renderer).x0 for axis in figure.axes)
    assert all(edge.x1 <= axes_left for edge in edges)  # and none runs into its row's axis
    if id_length == 12:  # short labels leave the rows most of the width
        assert axes_left < 0.35 * figure.get_figwidth() * figure.dpi


def _rows(confirmed: bool):
    claim = next(c for c in load_claims("mixture") if c.kind == FINDING)
    estimate = Estimate("n_sv: a / b", 0.9, 0.8, 1.2, 5, runs=pd.DataFrame())
    verdict = Verdict(claim, "inconclusive", "", estimate)
    return [(verdict, replace(verdict, verdict="supported") if confirmed else None)]


def _legend(figure) -> dict[str, str]:
    """Each marker label of the legend and its marker."""
    legend = figure.legends[0]
    return {text.get_text(): handle.get_marker() for text, handle in zip(legend.get_texts(), legend.legend_handles)
            if handle.get_label() and hasattr(handle, "get_marker") and handle.get_marker() not in (None, "None", "")}


def _drawn_markers(figure) -> set[str]:
    return {line.get_marker() for axis in figure.axes for line in axis.lines if line.get_marker() not in ("None", "")}


@pytest.mark.parametrize(("mode", "confirmed", "expected"), [
    ("confirm", False, {"confirmatory runs": "D"}),  # a confirm page's own runs are the confirmatory ones
    ("full", False, {"exploratory runs": "o"}),  # no confirm run yet: no diamond in the legend
    ("full", True, {"exploratory runs": "o", "confirmatory runs": "D"}),
    ("quick", False, {"quick runs": "o"}),
])
def test_the_legend_names_the_runs_of_the_page_and_only_the_markers_drawn(mode, confirmed, expected):
    figure = draw_forest("mixture", _rows(confirmed), [], mode)
    assert _legend(figure) == expected
    assert _drawn_markers(figure) == set(expected.values())
