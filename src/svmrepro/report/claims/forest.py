"""The verdicts of one paper at a glance: ``results/<paper>/claims.png`` (issue 48, item 7).

One row per finding: its estimate and 95 % interval from the page's own runs (a circle; a diamond when they
are the confirmatory runs) and, in full mode, below it from the confirmatory runs where they exist (a diamond),
against the claim's ``expect`` region (dark band) and ``partly`` region (light band), each interval coloured by
its verdict; the legend names only the markers drawn. Claims read different statistics (ratios, differences,
slopes, means), so each row has its own axis: a ratio's on a log scale, centred on the regions' edges. A
finding that was not run is listed by name under the rows. Drawn from the verdicts the scoreboard shows, so
the two never disagree.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from svmrepro.report.claims.schema import FINDING
from svmrepro.report.claims.verdict import Verdict
from svmrepro.report.figure_keys import figure_key, is_current, png_metadata
from svmrepro.writing import write_file

FIGURE = "claims.png"
#: the colour of each verdict (colour-blind-safe: Okabe and Ito's palette)
COLOURS = {"supported": "#009E73", "partly supported": "#E69F00", "not supported": "#D55E00",
           "inconclusive": "#999999", "not run": "#FFFFFF"}
#: 13.6 inches at 100 dpi: a 1366-px laptop screen's width
WIDTH_IN, ROW_IN, DPI = 13.6, 0.42, 100
#: what the runs of a page in each mode are, as the legend names them
PHASES = {"quick": "quick runs", "full": "exploratory runs", "confirm": "confirmatory runs"}
CONFIRM_MARKER = "D"


def marker(mode: str) -> str:
    """The marker of the estimates from a ``mode`` page's own runs: a diamond for confirmatory runs, else a circle."""
    return CONFIRM_MARKER if mode == "confirm" else "o"


def phase(mode: str) -> str:
    """What the runs of a ``mode`` page are, as the legend names them."""
    return PHASES.get(mode, f"{mode} runs")


def markers_text(mode: str, confirms_drawn: bool) -> str:
    """The legend's markers in words, for the page that shows the figure: only the markers drawn."""
    own = f"{'diamond' if marker(mode) == CONFIRM_MARKER else 'circle'}: {phase(mode)}"
    return own + (f"; diamond: {phase('confirm')}" if confirms_drawn and mode != "confirm" else "")


def _ends(verdict: Verdict | None) -> list[float]:
    if verdict is None or verdict.estimate is None:
        return []
    estimate = verdict.estimate
    return [x for x in (estimate.value, estimate.low, estimate.high) if np.isfinite(x)]


def _limits(claim, readings: list[Verdict | None], log: bool) -> tuple[float, float]:
    """The row's x range: its regions' finite edges and its intervals, padded."""
    points = [x for region in (claim.expect, claim.partly) if region is not None
              for x in (region.low, region.high) if math.isfinite(x)]
    points += [x for reading in readings for x in _ends(reading)]
    if log:
        points = [math.log10(x) for x in points if x > 0]
    if not points:
        return (-1.0, 1.0)
    low, high = min(points), max(points)
    pad = (high - low) * 0.15 or (abs(high) * 0.2 or 0.5)
    return (low - pad, high + pad)


def _is_ratio(verdicts: list[Verdict | None]) -> bool:
    """A ratio's row is drawn on a log scale (its statistic reads ``a / b``, and every value is positive)."""
    shown = [v for v in verdicts if v is not None and v.estimate is not None]
    return bool(shown) and all(" / " in v.estimate.statistic and all(x > 0 for x in _ends(v)) for v in shown)


def _band(axis, region, log: bool, lows: tuple[float, float], colour: str, alpha: float) -> None:
    if region is None:
        return
    low, high = region.low, region.high
    if log:
        low = math.log10(low) if low > 0 else -math.inf
        high = math.log10(high) if high > 0 else -math.inf
    low, high = max(low, lows[0]), min(high, lows[1])
    if high > low:
        axis.axvspan(low, high, color=colour, alpha=alpha, lw=0)


def _interval(axis, verdict: Verdict | None, y: float, log: bool, marker: str) -> None:
    if verdict is None or verdict.estimate is None or not np.isfinite(verdict.estimate.value):
        return
    estimate, colour = verdict.estimate, COLOURS.get(verdict.verdict, "#000000")
    f = (lambda x: math.log10(x)) if log else (lambda x: x)
    if estimate.has_interval:
        axis.plot([f(estimate.low), f(estimate.high)], [y, y], color=colour, lw=3, solid_capstyle="butt")
    axis.plot([f(estimate.value)], [y], marker=marker, color=colour, markeredgecolor="black", markersize=7)


def _fit_labels(figure, labels) -> None:
    """The axes start where the widest row label (drawn right-aligned left of its axis) ends, so no label is cut."""
    renderer = figure.canvas.get_renderer()
    widest = max(label.get_window_extent(renderer).width for label in labels) / (figure.get_figwidth() * figure.dpi)
    labels[0].axes.get_gridspec().update(left=min(0.8, widest + 0.03))  # the grid's own left, not the figure's


def write_forest(paper: str, verdicts: list[Verdict], confirms: list[Verdict | None], folder: Path,
                 mode: str) -> Path | None:
    """``<folder>/claims.png`` of ``paper``'s findings (None when it has none), judged on the runs of a ``mode``
    page; ``confirms``: each claim judged on the confirmatory runs (None or *not run* where there are none)."""
    rows = [(v, c) for v, c in zip(verdicts, confirms, strict=True)
            if v.claim.paper == paper and v.claim.kind == FINDING and v.estimate is not None]
    not_run = [v.claim.id for v in verdicts if v.claim.paper == paper and v.claim.kind == FINDING
               and v.estimate is None]
    if not rows:
        return None
    path, key = folder / FIGURE, figure_key("forest", paper, mode, rows, not_run)
    if is_current(path, key):  # that figure already (svmrepro.report.figure_keys)
        return path
    figure = draw_forest(paper, rows, not_run, mode)
    write_file(path, lambda out: figure.savefig(out, format="png", dpi=DPI, metadata=png_metadata(key)))
    _pyplot().close(figure)
    return path


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def shown(verdict: Verdict | None) -> bool:
    """Whether ``verdict`` has an estimate to draw."""
    return verdict is not None and verdict.estimate is not None and bool(np.isfinite(verdict.estimate.value))


def draw_forest(paper: str, rows: list[tuple[Verdict, Verdict | None]], not_run: list[str], mode: str):
    """The figure of ``rows`` (each finding's verdict on the ``mode`` page's runs and, in full mode, its
    confirmatory verdict), ``not_run`` listed below; the legend names only the markers drawn."""
    plt = _pyplot()
    height = ROW_IN * len(rows) + 1.6
    figure, axes = plt.subplots(len(rows), 1, figsize=(WIDTH_IN, height), squeeze=False,
                                gridspec_kw={"left": 0.25, "right": 0.98, "top": 1 - 0.75 / height,
                                             "bottom": 0.85 / height, "hspace": 0.9})
    labels = []
    own = marker(mode)
    for axis, (explore, confirm) in zip(axes[:, 0], rows):
        claim = explore.claim
        log = _is_ratio([explore, confirm])
        limits = _limits(claim, [explore, confirm], log)
        _band(axis, claim.partly, log, limits, "#56B4E9", 0.18)
        _band(axis, claim.expect, log, limits, "#56B4E9", 0.45)
        _interval(axis, explore, 0.65 if shown(confirm) else 0.5, log, own)
        _interval(axis, confirm, 0.25, log, CONFIRM_MARKER)
        axis.set_xlim(*limits)
        axis.set_ylim(0, 1)
        axis.set_yticks([])
        axis.tick_params(axis="x", labelsize=7, pad=1, length=2)
        if log:
            ticks = axis.get_xticks()
            axis.set_xticks(ticks)
            axis.set_xticklabels([f"{10 ** t:.3g}" for t in ticks])
            axis.set_xlim(*limits)
        for side in ("top", "right", "left"):
            axis.spines[side].set_visible(False)
        confirmed = f"; confirm: {confirm.verdict}" if shown(confirm) else ""
        labels.append(axis.text(-0.01, 0.5, f"{claim.id.replace('_', ' ')}  ({explore.verdict}{confirmed})",
                                transform=axis.transAxes, ha="right", va="center", fontsize=8))
    _fit_labels(figure, labels)
    legend = [plt.Line2D([], [], color=c, lw=3, label=v) for v, c in COLOURS.items() if v != "not run"]
    legend.append(plt.Line2D([], [], marker=own, ls="", color="black", label=phase(mode)))
    if any(shown(confirm) for _, confirm in rows):
        legend.append(plt.Line2D([], [], marker=CONFIRM_MARKER, ls="", color="black", label=phase("confirm")))
    legend += [plt.Rectangle((0, 0), 1, 1, color="#56B4E9", alpha=0.45, label="expect"),
               plt.Rectangle((0, 0), 1, 1, color="#56B4E9", alpha=0.18, label="partly")]
    figure.legend(handles=legend, loc="upper center", ncol=len(legend), fontsize=8, frameon=False)
    figure.suptitle(f"{paper}: each finding's estimate and 95 % interval against its regions "
                    "(a ratio's row on a log scale)", y=1 - 0.3 / height, fontsize=10)
    if not_run:
        figure.text(0.01, 0.2 / height, "not run: " + ", ".join(not_run), fontsize=7, wrap=True)
    return figure
