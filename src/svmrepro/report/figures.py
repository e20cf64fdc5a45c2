"""One figure per output: a panel per metric, our mean ± std per group, the paper's values beside.

Each group has one colour; the paper's numbers of a group are drawn hollow in that colour, with
a marker of their own per group (``<group> (paper)`` in the legend), so a paper point is never
mistaken for another group's. A categorical x (data sets, problems, a single numeric value) is
drawn as points dodged side by side per group, without connecting lines. A paper number given
for every x is drawn at each of our x, never as a band over the panel. An axis whose values span
more than a decade is logarithmic (:mod:`.ticks`); a log-log panel has a slope-1 guide; a claim
that tests a ratio adds a panel of it (:mod:`.ratio_panel`). The legend sits outside the panels,
so it never hides a point, and says what the error bars are.
"""

from __future__ import annotations

import math
import re
import textwrap
from dataclasses import dataclass
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (the backend must be chosen first)
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from matplotlib import ticker  # noqa: E402
from matplotlib.lines import Line2D  # noqa: E402
from matplotlib.transforms import blended_transform_factory, offset_copy  # noqa: E402

from svmrepro.report.claims.schema import load_claims  # noqa: E402
from svmrepro.report.figure_keys import figure_key, is_current, png_metadata  # noqa: E402
from svmrepro.report.labels import is_count, is_seconds, label  # noqa: E402
from svmrepro.report.ratio_panel import Ratio, claimed_ratios, draw_ratios  # noqa: E402
from svmrepro.report.spec import ReportSpec  # noqa: E402
from svmrepro.report.tables import x_label  # noqa: E402
from svmrepro.report.ticks import declutter, linear_ticks, log_ticks, plain, spans_decades  # noqa: E402
from svmrepro.writing import write_file  # noqa: E402

#: hollow markers of the paper's numbers, one per group (ours are filled circles)
PAPER_MARKERS = ("s", "D", "^", "v", "P", "X", "p", "h", "<", ">")
ERROR_BARS = "error bars: ± one standard deviation over seeds"
PANEL_WIDTH, PANEL_HEIGHT, MAX_COLUMNS = 4.2, 3.4, 3
#: characters of 10 pt tick labels side by side across a panel
CHARACTERS_PER_PANEL = 44
#: points between two groups' paper markers at the same x of a numeric axis
PAPER_DODGE_PT = 5
SLOPE_GUIDE = "slope 1 guide (y ∝ x)"
EVERY_X = "right edge: for every x"
#: share of a numeric x axis added on the right for the numbers given for every x
EDGE_ROOM = 0.1


@dataclass(frozen=True)
class Style:
    colour: tuple
    marker: str
    slot: int  # the group's place among those dodged on a categorical axis


@dataclass(frozen=True)
class XAxis:
    """Where a row's x goes: its number, or its category's position plus its group's offset."""

    categories: tuple[str, ...] | None
    n_groups: int
    log: bool = False

    @property
    def categorical(self) -> bool:
        return self.categories is not None

    def offset(self, style: Style) -> float:
        width = min(0.8 / self.n_groups, 0.22)
        return (style.slot - (self.n_groups - 1) / 2) * width

    def position(self, x, style: Style) -> float:
        return self.centre(x) + (self.offset(style) if self.categorical else 0.0)

    def centre(self, x) -> float:
        """The x's own place, shared by every group: its number or its category's index."""
        return self.categories.index(x_label(x)) if self.categorical else float(x)

    def paper_transform(self, ax, style: Style, every_x: bool):
        """Where a group's paper markers go. On a numeric axis they sit a few points beside the
        other groups' at the same x, and a number for every x stands once at the panel's right
        edge, in axes x and data y (a category's dodge is in :meth:`position` already)."""
        if self.categorical:
            return ax.transData
        shift = (style.slot - (self.n_groups - 1) / 2) * PAPER_DODGE_PT
        if every_x:
            return offset_copy(blended_transform_factory(ax.transAxes, ax.transData), fig=ax.figure,
                               x=shift - 2 * PAPER_DODGE_PT, units="points")
        return offset_copy(ax.transData, fig=ax.figure, x=shift, units="points")


def plot(table: pd.DataFrame, paper: pd.DataFrame | None, spec: ReportSpec, path: Path) -> None:
    """Draw the output's figure (:func:`draw`), with a ratio panel for the ratios its claims test,
    and write it to ``path``, unless ``path`` is that figure already (:mod:`.figure_keys`)."""
    ratios = claimed_ratios(load_claims(spec.paper_id), spec, table)
    key = figure_key("output", table, paper, spec, ratios)
    if not is_current(path, key):
        save_figure(draw(table, paper, spec, ratios), spec.title, path, key)


def draw(table: pd.DataFrame, paper: pd.DataFrame | None, spec: ReportSpec,
         ratios: tuple[Ratio, ...] | list[Ratio] = ()) -> plt.Figure:
    """The figure of ``table`` (:func:`svmrepro.report.tables.summarise`) and the paper's numbers;
    with ``ratios`` a last panel of them (:func:`svmrepro.report.ratio_panel.draw_ratios`)."""
    if paper is not None:
        paper = paper[paper["metric"].isin(spec.metrics)]
    styles = _group_styles(table, paper)
    categories = _categories(table, paper, spec)
    axis = XAxis(categories, len(styles), log=categories is None and _log_x(table, paper, spec))
    n_panels = len(spec.metrics) + bool(ratios)
    n_rows = math.ceil(n_panels / MAX_COLUMNS)
    n_cols = math.ceil(n_panels / n_rows)  # 4 panels as 2 x 2, not 3 + 1
    ours: dict[str, object] = {}  # legend handle per label of ours
    papers: dict[str, set[str]] = {}  # per group with paper numbers, notes on where they stand
    width = PANEL_WIDTH * n_cols + _legend_width(styles, ratios)
    fig, axes = plt.subplots(n_rows, n_cols, figsize=(width, PANEL_HEIGHT * n_rows), squeeze=False)
    for ax, metric in zip(axes.flat, spec.metrics):
        ax.set_ylabel(label(metric))
        if not _has_numbers(table, paper, metric):
            _say_empty(ax, metric)
            continue
        if _draw_ours(ax, table, metric, styles, axis, ours):
            ours[ERROR_BARS] = Line2D([], [], color="0.3", marker="|", ms=11, mew=1.2, ls="none")
        at_edge = paper is not None and _draw_paper(ax, paper[paper["metric"] == metric], styles, axis, papers)
        values = np.asarray(_panel_values(table, paper, metric), float)
        # a forced log axis needs a positive value to show (a smoke run may log zeros only)
        log_y = (metric in spec.logy and bool((values > 0).any())) or spans_decades(values)
        _format_x(ax, table, spec, axis)
        if at_edge:
            _room_at_right(ax, axis.log)
        _format_y(ax, metric, log=log_y)
        if axis.log and log_y and is_count(spec.x) and (is_seconds(metric) or is_count(metric)):
            _slope_guide(ax, table, metric, ours)
        ax.grid(alpha=0.3)
    if ratios:
        ax = axes.flat[len(spec.metrics)]
        values = draw_ratios(ax, table, paper, list(ratios), axis.centre, ours,
                             dodge=min(0.8 / len(ratios), 0.22) if axis.categorical else 0.0)
        if np.isfinite(np.asarray(values, float)).any():
            _format_x(ax, table, spec, axis)
            _format_y(ax, "ratio", log=spans_decades(values))
            ax.grid(alpha=0.3)
        else:  # no x with both groups (a smoke run): no ratio to draw
            _say_empty(ax, "ratio")
    for ax in axes.flat[n_panels:]:
        ax.set_visible(False)
    _legend(axes[0][n_cols - 1], ours, papers, styles, spec)
    return fig


def _log_x(table: pd.DataFrame, paper: pd.DataFrame | None, spec: ReportSpec) -> bool:
    values = list(table.loc[table["runs"] > 0, "x"])
    if paper is not None:
        values += list(paper["x"].dropna())
    return spec.logx or spans_decades(pd.to_numeric(pd.Series(values, dtype=object), errors="coerce"))


def _panel_values(table: pd.DataFrame, paper: pd.DataFrame | None, metric: str) -> list[float]:
    """Every number a panel draws: our means and the paper's values and range ends."""
    values = list(table.loc[table["runs"] > 0, f"{metric}_mean"].astype(float))
    if paper is not None:
        rows = paper[paper["metric"] == metric]
        values += [float(v) for column in ("value", "low", "high") for v in rows[column].dropna()]
    return values


def _slope_guide(ax, table: pd.DataFrame, metric: str, handles: dict) -> None:
    """A line of slope 1 on log-log axes of a time or a count against a size, from our lowest mean
    at the smallest x: a curve steeper than it grows faster than linearly. It leaves the panel's limits
    as the data set them."""
    rows = table[(table["runs"] > 0) & np.isfinite(table[f"{metric}_mean"].astype(float))]
    x = rows["x"].astype(float)
    if x.nunique() < 2:
        return
    start = rows.loc[x == x.min(), f"{metric}_mean"].astype(float).min()
    if not start > 0:
        return
    xs = np.array([x.min(), x.max()])
    handles[SLOPE_GUIDE] = ax.plot(xs, start * xs / xs[0], color="0.55", ls=(0, (1, 2)), lw=1.2,
                                    scalex=False, scaley=False)[0]


def _has_numbers(table: pd.DataFrame, paper: pd.DataFrame | None, metric: str) -> bool:
    """Whether a panel has anything to draw: a mean of ours or a number of the paper's (a group
    that alone logged ``metric`` may have no runs)."""
    ours = table.loc[table["runs"] > 0, f"{metric}_mean"].to_numpy(float)
    return bool(np.isfinite(ours).any()) or (paper is not None and (paper["metric"] == metric).any())


def _say_empty(ax, metric: str) -> None:
    """An empty panel that says why, instead of axes (a log scale has nothing to span)."""
    ax.text(0.5, 0.5, f"no run logged {metric}", transform=ax.transAxes, ha="center", va="center", fontsize=9)
    ax.set_xticks([])
    ax.set_yticks([])


def save_figure(fig, title: str, path: Path, key: str | None = None) -> None:
    """Title ``fig``, lay it out with no two tick labels touching (:func:`.ticks.declutter`) and write it,
    with ``key`` (:func:`.figure_keys.figure_key` of what it is drawn from) in the PNG."""
    width = fig.get_size_inches()[0]
    fig.suptitle(textwrap.fill(title, width=int(width * 11)), fontsize=10)  # ~11 characters an inch
    declutter(fig, fig.tight_layout)
    path.parent.mkdir(parents=True, exist_ok=True)
    metadata = png_metadata(key) if key else None
    write_file(path, lambda out: fig.savefig(out, dpi=110, format="png", metadata=metadata))
    plt.close(fig)


def _group_styles(table: pd.DataFrame, paper: pd.DataFrame | None) -> dict[str, Style]:
    """A colour, a paper marker and a dodge slot per group: ours in the table's order, then the
    paper's groups that have no row of ours."""
    groups = list(dict.fromkeys(table["group"].astype(str)))
    if paper is not None:
        groups += [g for g in dict.fromkeys(paper["group"].astype(str)) if g not in groups]
    colours = plt.get_cmap("tab10").colors
    return {g: Style(colours[k % len(colours)], PAPER_MARKERS[k % len(PAPER_MARKERS)], k) for k, g in enumerate(groups)}


def _natural(text: str) -> tuple:
    """Sort key reading the numbers inside a label: forest_50000 before forest_200000."""
    parts = re.split(r"(\d+(?:\.\d+)?)", text)
    return tuple((0, float(p), "") if re.fullmatch(r"\d+(?:\.\d+)?", p) else (1, 0.0, p) for p in parts if p)


def _categories(table: pd.DataFrame, paper: pd.DataFrame | None, spec: ReportSpec) -> tuple[str, ...] | None:
    """The category labels of a text x, or of a numeric x with one value; None for a numeric axis."""
    if pd.api.types.is_numeric_dtype(table["x"]) and table["x"].nunique() > 1:
        return None
    labels = [x_label(x) for x in table["x"]]
    if paper is not None:
        labels += [x_label(x) for x in paper["x"].dropna()]
    labels = list(dict.fromkeys(labels))
    return tuple(sorted(labels, key=lambda text: (text == spec.summary_row, _natural(text))))


def _draw_ours(ax, table: pd.DataFrame, metric: str, styles: dict[str, Style], axis: XAxis, handles: dict) -> bool:
    """Our mean per (group, x), with error bars where there is a standard deviation; True if any."""
    ours = table[table["runs"] > 0]
    with_bars = False
    for group, rows in ours.groupby("group", sort=False):  # in the table's order
        style = styles[str(group)]
        x = np.array([axis.position(value, style) for value in rows["x"]])
        order = np.argsort(x, kind="stable")
        std = rows[f"{metric}_std"].to_numpy(float)[order]
        yerr = np.nan_to_num(std) if np.isfinite(std).any() else None
        with_bars |= yerr is not None
        drawn = ax.errorbar(
            x[order], rows[f"{metric}_mean"].to_numpy(float)[order], yerr=yerr, color=style.colour,
            marker="o", ms=5, capsize=3, ls="none" if axis.categorical else "-",
        )
        handles.setdefault(f"ours: {group}", drawn)
    return with_bars


def _draw_paper(ax, paper: pd.DataFrame, styles: dict[str, Style], axis: XAxis, papers: dict) -> bool:
    """Hollow markers in the group's colour at their x; a range as a bar between two of them. A
    number for every x is drawn at each category, or once at the right edge of a numeric axis:
    never a band across the panel. True if one stands at the right edge."""
    at_edge = False
    for _, row in paper.iterrows():
        style = styles[str(row["group"])]
        every_x = pd.isna(row["x"])
        where = axis.paper_transform(ax, style, every_x)
        if axis.categorical:
            xs = [axis.position(x, style) for x in (axis.categories if every_x else [row["x"]])]
        else:
            xs = [1.0 if every_x else float(row["x"])]
        ys = [row["value"]] if pd.notna(row["value"]) else [row["low"], row["high"]]
        for x in xs:
            if len(ys) == 2:
                ax.plot([x, x], ys, color=style.colour, lw=4, alpha=0.35, solid_capstyle="butt", transform=where)
            ax.plot([x] * len(ys), ys, ls="none", transform=where, **_hollow(style))
        if not axis.categorical:  # a shifted transform leaves the limits alone; the axes must show the numbers
            ax.update_datalim([(xs[0], y) for y in ys], updatex=not every_x)
        at_edge |= every_x and not axis.categorical
        papers.setdefault(str(row["group"]), set()).add(EVERY_X if every_x and not axis.categorical else "")
    ax.autoscale_view()
    return at_edge


def _room_at_right(ax, log: bool) -> None:
    """Widen the x axis on the right by :data:`EDGE_ROOM` of its span, so the numbers drawn at the
    right edge stand clear of our last x."""
    low, high = ax.get_xlim()
    ticks = [t for t in ax.get_xticks() if low <= t <= high]  # no tick of an x we have no run at
    ax.set_xlim(low, high * (high / low) ** EDGE_ROOM if log else high + EDGE_ROOM * (high - low))
    ax.xaxis.set_major_locator(ticker.FixedLocator(ticks))


def _hollow(style: Style) -> dict:
    return {"color": style.colour, "marker": style.marker, "mfc": "none", "mew": 1.5, "ms": 8}


def _legend_width(styles: dict[str, Style], ratios) -> float:
    texts = [f"{g} (paper; {EVERY_X})" for g in styles] + [f"ratio: {r.text} (paper)" for r in ratios]
    longest = max([len(t) for t in texts] + [len(ERROR_BARS) // 2 + 2])
    return 0.6 + 0.055 * longest  # inches, at 7 pt


def _legend(ax, ours: dict, papers: dict[str, set[str]], styles: dict[str, Style], spec: ReportSpec) -> None:
    """One legend, right of the top-right panel: per group ours then the paper's, then the ratios,
    the slope guide and the note on the error bars."""
    entries = {}
    for group, style in styles.items():
        if f"ours: {group}" in ours:
            entries[f"ours: {group}"] = ours[f"ours: {group}"]
        if group in papers:
            notes = "; ".join(["paper", *sorted(filter(None, papers[group]))])
            entries[f"{group} ({notes})"] = Line2D([], [], ls="none", **_hollow(style))
    entries.update({text: handle for text, handle in ours.items()
                    if not text.startswith("ours: ") and text != ERROR_BARS})
    if ERROR_BARS in ours:
        note = ERROR_BARS.replace(" over", "\nover")
        if spec.summary_row:
            note += f"\n(at '{spec.summary_row}': over the means at each x)"
        entries[note] = ours[ERROR_BARS]
    legend_outside(ax, list(entries.values()), list(entries), title=spec.group_label or label(spec.group))


def legend_outside(ax, handles: list, labels: list[str], **options) -> None:
    """A legend right of ``ax``, outside every panel, so it never covers a point."""
    ax.legend(handles, labels, loc="upper left", bbox_to_anchor=(1.04, 1.0), borderaxespad=0, fontsize=7,
              title_fontsize=7, alignment="left", **options)


def _format_x(ax, table: pd.DataFrame, spec: ReportSpec, axis: XAxis) -> None:
    ax.set_xlabel(spec.x_label or label(spec.x))
    if axis.categorical:
        labels = [plain(float(c)) if is_count(spec.x) and _is_number(c) else c for c in axis.categories]
        long = max(map(len, labels)) > 0.8 * CHARACTERS_PER_PANEL / len(labels)  # they would touch level
        ax.set_xticks(range(len(labels)), labels, fontsize=8 if long else None,
                      rotation=35 if long else 0, ha="right" if long else "center", rotation_mode="anchor")
        ax.set_xlim(-0.5, len(labels) - 0.5)
        return
    if axis.log:
        ax.set_xscale("log")
        log_ticks(ax.xaxis, ax.get_xlim(), data=np.unique(table.loc[table["runs"] > 0, "x"].to_numpy(float)))
    else:
        linear_ticks(ax.xaxis, count=is_count(spec.x))


def _format_y(ax, metric: str, log: bool) -> None:
    if log:
        ax.set_yscale("log")
        log_ticks(ax.yaxis, ax.get_ylim())
    else:
        linear_ticks(ax.yaxis, count=is_count(metric))


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True
