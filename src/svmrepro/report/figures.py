"""One figure per output: a panel per metric, our mean ± std per group, the paper's values beside.

Each group has one colour; the paper's numbers of a group are drawn hollow in that colour, with
a marker of their own per group (``<group> (paper)`` in the legend), so a paper point is never
mistaken for another group's. A categorical x (data sets, problems, a single numeric value) is
drawn as points dodged side by side per group, without connecting lines. The legend sits
outside the panels, so it never hides a point, and says what the error bars are.
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

from svmrepro.report.labels import is_count, label  # noqa: E402
from svmrepro.report.spec import ReportSpec  # noqa: E402
from svmrepro.report.tables import x_label  # noqa: E402

#: hollow markers of the paper's numbers, one per group (ours are filled circles)
PAPER_MARKERS = ("s", "D", "^", "v", "P", "X", "p", "h", "<", ">")
ERROR_BARS = "error bars: ± one standard deviation over seeds"
PANEL_WIDTH, PANEL_HEIGHT, MAX_COLUMNS = 4.2, 3.4, 3
#: characters of 10 pt tick labels side by side across a panel
CHARACTERS_PER_PANEL = 44
#: at most this many data values become the ticks of a log x axis
MAX_DATA_TICKS = 12


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

    @property
    def categorical(self) -> bool:
        return self.categories is not None

    def offset(self, style: Style) -> float:
        width = min(0.8 / self.n_groups, 0.22)
        return (style.slot - (self.n_groups - 1) / 2) * width

    def position(self, x, style: Style) -> float:
        if not self.categorical:
            return float(x)
        return self.categories.index(x_label(x)) + self.offset(style)


def plot(table: pd.DataFrame, paper: pd.DataFrame | None, spec: ReportSpec, path: Path) -> None:
    """Draw the output's figure (:func:`draw`) and write it to ``path``."""
    save_figure(draw(table, paper, spec), spec.title, path)


def draw(table: pd.DataFrame, paper: pd.DataFrame | None, spec: ReportSpec) -> plt.Figure:
    """The figure of ``table`` (:func:`svmrepro.report.tables.summarise`) and the paper's numbers."""
    if paper is not None:
        paper = paper[paper["metric"].isin(spec.metrics)]
    styles = _group_styles(table, paper)
    axis = XAxis(_categories(table, paper, spec), len(styles))
    n_rows = math.ceil(len(spec.metrics) / MAX_COLUMNS)
    n_cols = math.ceil(len(spec.metrics) / n_rows)  # 4 panels as 2 x 2, not 3 + 1
    ours: dict[str, object] = {}  # legend handle per label of ours
    kinds: dict[str, set[str]] = {}  # per group, how its paper numbers were drawn: "point", "line"
    width = PANEL_WIDTH * n_cols + _legend_width(styles)
    fig, axes = plt.subplots(n_rows, n_cols, figsize=(width, PANEL_HEIGHT * n_rows), squeeze=False)
    for ax, metric in zip(axes.flat, spec.metrics):
        ax.set_ylabel(label(metric))
        if not _has_numbers(table, paper, metric):
            _say_empty(ax, metric)
            continue
        if _draw_ours(ax, table, metric, styles, axis, ours):
            ours[ERROR_BARS] = Line2D([], [], color="0.3", marker="|", ms=11, mew=1.2, ls="none")
        if paper is not None:
            _draw_paper(ax, paper[paper["metric"] == metric], styles, axis, kinds)
        _format_x(ax, table, spec, axis)
        _format_y(ax, metric, log=metric in spec.logy)
        ax.grid(alpha=0.3)
    for ax in axes.flat[len(spec.metrics):]:
        ax.set_visible(False)
    _legend(axes[0][n_cols - 1], ours, kinds, styles, spec)
    return fig


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


def save_figure(fig, title: str, path: Path) -> None:
    width = fig.get_size_inches()[0]
    fig.suptitle(textwrap.fill(title, width=int(width * 11)), fontsize=10)  # ~11 characters an inch
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
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


def _draw_paper(ax, paper: pd.DataFrame, styles: dict[str, Style], axis: XAxis, kinds: dict) -> None:
    """Hollow markers in the group's colour; a range as a bar between two of them; a number for
    every x as a dashed line (a band) on a numeric axis, and as a marker at each category."""
    for _, row in paper.iterrows():
        style = styles[str(row["group"])]
        kind = kinds.setdefault(str(row["group"]), set())
        if pd.isna(row["x"]) and not axis.categorical:
            line = {"color": style.colour, "ls": _dashes(style), "lw": 1.3}
            if pd.notna(row["value"]):
                ax.axhline(row["value"], **line)
            else:
                ax.axhspan(row["low"], row["high"], color=style.colour, alpha=0.1, lw=0)
                for edge in (row["low"], row["high"]):
                    ax.axhline(edge, **line)
            kind.add("line")
            continue
        xs = axis.categories if pd.isna(row["x"]) else [row["x"]]
        for x in (axis.position(value, style) for value in xs):
            ys = [row["value"]] if pd.notna(row["value"]) else [row["low"], row["high"]]
            if len(ys) == 2:
                ax.plot([x, x], ys, color=style.colour, lw=4, alpha=0.35, solid_capstyle="butt")
            ax.plot([x] * len(ys), ys, ls="none", **_hollow(style))
        kind.add("point")


def _hollow(style: Style) -> dict:
    return {"color": style.colour, "marker": style.marker, "mfc": "none", "mew": 1.5, "ms": 8}


def _dashes(style: Style) -> tuple:
    """Dashes of a paper line; the next group's fill the gaps, so two groups' equal lines both show."""
    return (4 * (style.slot % 2), (4, 4))


def _legend_width(styles: dict[str, Style]) -> float:
    longest = max([len(f"{g} (paper)") for g in styles] + [len(ERROR_BARS) // 2 + 2])
    return 0.6 + 0.055 * longest  # inches, at 7 pt


def _legend(ax, ours: dict, kinds: dict[str, set[str]], styles: dict[str, Style], spec: ReportSpec) -> None:
    """One legend, right of the top-right panel: per group ours then the paper's, then the note."""
    entries = {}
    for group, style in styles.items():
        if f"ours: {group}" in ours:
            entries[f"ours: {group}"] = ours[f"ours: {group}"]
        kind = kinds.get(group)
        if kind:
            marker = style.marker if "point" in kind else "none"
            entries[f"{group} (paper)"] = Line2D(
                [], [], ls=_dashes(style) if "line" in kind else "none", lw=1.3, **{**_hollow(style), "marker": marker}
            )
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
        labels = [_plain(float(c)) if is_count(spec.x) and _is_number(c) else c for c in axis.categories]
        long = max(map(len, labels)) > 0.8 * CHARACTERS_PER_PANEL / len(labels)  # they would touch level
        ax.set_xticks(range(len(labels)), labels, fontsize=8 if long else None,
                      rotation=35 if long else 0, ha="right" if long else "center", rotation_mode="anchor")
        ax.set_xlim(-0.5, len(labels) - 0.5)
        return
    if spec.logx:
        ax.set_xscale("log")
        _log_ticks(ax.xaxis, ax.get_xlim(), data=np.unique(table.loc[table["runs"] > 0, "x"].to_numpy(float)))
    else:
        _linear_ticks(ax.xaxis, count=is_count(spec.x))


def _format_y(ax, metric: str, log: bool) -> None:
    if log:
        ax.set_yscale("log")
        _log_ticks(ax.yaxis, ax.get_ylim())
    else:
        _linear_ticks(ax.yaxis, count=is_count(metric))


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _plain(value: float, _position=None) -> str:
    """A tick as a reader writes it: 2,000 and 0.05, never 2×10³."""
    if math.isfinite(value) and value == int(value) and abs(value) >= 1:
        return f"{int(value):,}"
    return f"{value:g}"


def _linear_ticks(axis, count: bool) -> None:
    """Whole numbers with thousands separators on a count axis; never an offset ("+1e3"), and
    scientific notation only for numbers below 1e-4 or above 1e6."""
    if count:
        low, high = axis.get_view_interval()
        if high - low < 2:  # all equal (0 SVs outside): whole numbers around them, not 0.02 steps
            centre = round((low + high) / 2)
            low = centre - 1.2 if centre >= 1 else -0.2
            getattr(axis.axes, f"set_{axis.axis_name}lim")(low, low + 2.4)
        axis.set_major_locator(ticker.MaxNLocator(nbins="auto", steps=[1, 2, 2.5, 5, 10], integer=True))
        axis.set_major_formatter(ticker.FuncFormatter(lambda value, _: f"{value:,.0f}"))
        return
    axis.set_major_formatter(_Linear())


class _Linear(ticker.Formatter):
    """Plain numbers with thousands separators and the decimals the ticks need (0.25, 12,000):
    no offset, no shared power of ten; only numbers below 1e-4 are written 5e-11, each in full."""

    ticks: tuple[float, ...] = ()

    def set_locs(self, locs):
        super().set_locs(locs)
        self.ticks = tuple(float(v) for v in locs if np.isfinite(v))

    def __call__(self, value, pos=None):
        finite = [abs(v) for v in self.ticks]
        if finite and 0 < max(finite) < 1e-4:
            return f"{value:.3g}"
        decimals = next((d for d in range(10) if all(math.isclose(v, round(v, d), abs_tol=1e-12) for v in finite)), 10)
        text = f"{value:,.{decimals}f}"
        return text[1:] if text.startswith("-") and not float(text.replace(",", "")) else text  # no "-0"


def _log_ticks(axis, limits: tuple[float, float], data: np.ndarray | None = None) -> None:
    """Labels only on major ticks: the data's x values when few, 1-2-5 steps over a short span,
    powers of ten over a long one; minor ticks unlabelled, so labels never crowd."""
    axis.set_minor_formatter(ticker.NullFormatter())
    low, high = (max(v, np.finfo(float).tiny) for v in sorted(limits))
    decades = math.log10(high / low)
    if data is not None and 1 < len(data := data[data > 0]) <= MAX_DATA_TICKS:
        kept = [data[0]]
        for value in data[1:]:  # thin to labels at least 1/7 of the span apart
            if math.log10(value / kept[-1]) >= decades / 7:
                kept.append(value)
        axis.set_major_locator(ticker.FixedLocator(kept))
        axis.set_major_formatter(ticker.FuncFormatter(_plain))
    elif decades <= 2.5:
        subs = (1.0, 1.5, 2.0, 3.0, 5.0, 7.0) if decades < 1.2 else (1.0, 2.0, 5.0)
        axis.set_major_locator(ticker.LogLocator(base=10, subs=subs))
        axis.set_major_formatter(ticker.FuncFormatter(_plain))
    else:
        axis.set_major_locator(ticker.LogLocator(base=10))
        axis.set_major_formatter(ticker.LogFormatterSciNotation())
