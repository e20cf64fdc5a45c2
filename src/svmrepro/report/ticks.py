"""Axes a reader compares at a glance: when an axis is logarithmic, how its ticks are written, and
tick labels that never overlap.

An axis becomes logarithmic by itself when its positive values span more than a decade (the paper's
30-46 s beside our 0.04-0.14 s would otherwise sit ours on the zero line); a value at or below zero
keeps it linear. Tick labels are plain numbers (2,000 and 0.05, never 2×10³ or an offset). After the
layout, labels that still touch are turned, then thinned (:func:`declutter`).
"""

from __future__ import annotations

import math
from itertools import pairwise

import numpy as np
from matplotlib import ticker

#: a log axis from this ratio of the largest to the smallest positive value up
DECADE = 10.0
#: at most this many data values become the ticks of a log x axis
MAX_DATA_TICKS = 12
#: pixels two tick labels keep between them
GAP_PX = 2.0


def spans_decades(values) -> bool:
    """Whether ``values`` (NaNs ignored) are all positive and span more than a decade."""
    finite = np.asarray(values, dtype=float)
    finite = finite[np.isfinite(finite)]
    return finite.size > 1 and finite.min() > 0 and finite.max() / finite.min() > DECADE


def plain(value: float, _position=None) -> str:
    """A tick as a reader writes it: 2,000 and 0.05, never 2×10³."""
    if math.isfinite(value) and value == int(value) and abs(value) >= 1:
        return f"{int(value):,}"
    return f"{value:g}"


def linear_ticks(axis, count: bool) -> None:
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


def log_ticks(axis, limits: tuple[float, float], data: np.ndarray | None = None) -> None:
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
        axis.set_major_formatter(ticker.FuncFormatter(plain))
    elif decades <= 2.5:
        subs = (1.0, 1.5, 2.0, 3.0, 5.0, 7.0) if decades < 1.2 else (1.0, 2.0, 5.0)
        axis.set_major_locator(ticker.LogLocator(base=10, subs=subs))
        axis.set_major_formatter(ticker.FuncFormatter(plain))
    else:
        axis.set_major_locator(ticker.LogLocator(base=10))
        axis.set_major_formatter(ticker.LogFormatterSciNotation())


def shown_ticks(axis) -> list:
    """The major ticks of ``axis`` whose label a reader sees: inside the view, with text, in axis order."""
    low, high = sorted(axis.get_view_interval())
    ticks = [t for t in axis.get_major_ticks() if low <= t.get_loc() <= high]
    return sorted((t for t in ticks if t.label1.get_visible() and t.label1.get_text()), key=lambda t: t.get_loc())


def overlapping(axis, renderer) -> bool:
    """Whether two neighbouring tick labels of ``axis`` touch (closer than :data:`GAP_PX`). Turned
    labels are parallel strips one line high: they touch when the strips do, whatever their boxes
    (a turned label's upright box is far wider than its text)."""
    ticks = shown_ticks(axis)
    angle = math.radians(ticks[0].label1.get_rotation()) if ticks else 0.0
    if angle % math.pi == 0:
        boxes = [tick.label1.get_window_extent(renderer).padded(GAP_PX / 2) for tick in ticks]
        return any(a.overlaps(b) for a, b in pairwise(boxes))
    at = [axis.axes.transData.transform((tick.get_loc(), 0))[0] for tick in ticks]
    height = [renderer.points_to_pixels(tick.label1.get_fontsize()) for tick in ticks]
    return any(abs(b - a) * abs(math.sin(angle)) < h + GAP_PX for a, b, h in zip(at, at[1:], height))


def _thin(axis) -> None:
    """Keep every other labelled tick (the first stays), with the words they had."""
    kept = shown_ticks(axis)[::2]
    locs, texts = [t.get_loc() for t in kept], [t.label1.get_text() for t in kept]
    axis.set_major_locator(ticker.FixedLocator(locs))
    axis.set_major_formatter(ticker.FixedFormatter(texts))


def _turn(axis, degrees: float) -> None:
    axis.set_tick_params(labelrotation=degrees)
    for label in axis.get_majorticklabels():
        label.set(ha="right", va="top" if degrees < 90 else "center", rotation_mode="anchor")


def _categorical(axis) -> bool:
    """Whether ``axis`` names categories (fixed words): a name is never dropped."""
    return isinstance(axis.get_major_formatter(), ticker.FixedFormatter) and axis.axis_name == "x"


def declutter(fig, layout) -> None:
    """Lay ``fig`` out (``layout()``) until no two tick labels of a panel touch: an x axis first
    turns its labels, categories then stand upright and get smaller; a number axis drops every
    other label instead."""
    for _ in range(8):
        layout()
        fig.draw_without_rendering()  # every text placed and measured, no pixel drawn: savefig draws once, at the end
        renderer = fig.canvas.get_renderer()
        crowded = [axis for ax in fig.axes if ax.get_visible() for axis in (ax.xaxis, ax.yaxis)
                   if overlapping(axis, renderer)]
        if not crowded:
            return
        for axis in crowded:
            rotation = max((t.label1.get_rotation() for t in shown_ticks(axis)), default=0)
            if axis.axis_name == "x" and rotation == 0:
                _turn(axis, 35)
            elif _categorical(axis) and rotation < 90:
                _turn(axis, 90)
            elif _categorical(axis):
                axis.set_tick_params(labelsize=max(5.0, 0.85 * shown_ticks(axis)[0].label1.get_fontsize()))
            else:
                _thin(axis)
