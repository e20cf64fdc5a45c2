"""The statistics of the report, in one place: the report's sections and the claim primitives call
these, so a table on a page and a claim's verdict read the same number the same way.

- :func:`t_interval`: a mean and its two-sided t interval;
- :func:`paired`: two methods compared pair by pair (runs sharing a seed): the mean difference, or the
  ratio as the geometric mean of the pairs' ratios, with the t interval of the (log) differences, the
  paired t test's p-value and Cohen's d_z;
- :func:`line_fit`, :func:`loglog_fit`: the least-squares line and the t interval of its slope
  (``n - 2`` degrees of freedom), the log-log one being Laskov's "scaling factor";
- :func:`rise`: a line's rise over the range of x relative to the mean of y, 0 for flat;
- :func:`loglog_slope_difference`: the difference of two independent log-log slopes, with a t
  interval on the Welch-Satterthwaite degrees of freedom.

Every function takes plain arrays and returns NaN where too few values give a number (an interval
needs two values, a slope two distinct x, its interval three points), never raises on them.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

#: the confidence level of every interval
LEVEL = 0.95
NAN = float("nan")


@dataclass(frozen=True)
class Interval:
    """``value`` with its interval ``[low, high]`` (NaN ends when too few values give one) over ``n`` values."""

    value: float
    low: float
    high: float
    n: int


@dataclass(frozen=True)
class Paired(Interval):
    """A paired comparison: :class:`Interval` of the (log) differences, their standard deviation
    ``std``, the two-sided paired t test's ``p_value`` and Cohen's d_z ``effect`` (mean / std)."""

    std: float = NAN
    p_value: float = NAN
    effect: float = NAN


@dataclass(frozen=True)
class Difference(Interval):
    """A difference of two independent estimates with its interval and the two-sided ``p_value`` of
    the difference being 0."""

    p_value: float = NAN


def _scipy_stats():
    """``scipy.stats``, imported with the first interval: it takes a second, which every check of a claims file
    (reading this module's names) would pay before its first line."""
    from scipy import stats

    return stats


def _quantile(dof: float) -> float:
    """The t quantile a two-sided :data:`LEVEL` interval's half width is that many standard errors of."""
    return float(_scipy_stats().t.ppf(0.5 + LEVEL / 2, dof))


def t_interval(values) -> Interval:
    """The mean of ``values`` and its two-sided t interval (NaN ends below two values)."""
    values = np.asarray(values, float)
    mean = float(values.mean()) if values.size else NAN
    if values.size < 2:
        return Interval(mean, NAN, NAN, int(values.size))
    half = float(_quantile(values.size - 1) * values.std(ddof=1) / np.sqrt(values.size))
    return Interval(mean, mean - half, mean + half, int(values.size))


def paired(a, b, *, ratio: bool = False) -> Paired:
    """``b`` against ``a``, pair by pair (equal-length arrays, one pair per position).

    ``ratio=False``: the mean of ``b - a``; ``ratio=True``: the geometric mean of ``b / a`` over the
    pairs where both are positive, its interval the t interval of the log ratios mapped back
    (``std``, ``p_value`` and ``effect`` stay on the log scale). The p-value is the two-sided one-sample
    t test of the differences against 0 (scipy's paired t test); it and the effect size are NaN when
    the differences do not vary.
    """
    a, b = np.asarray(a, float), np.asarray(b, float)
    if ratio:
        usable = (a > 0) & (b > 0)
        diffs = np.log(b[usable] / a[usable])
    else:
        diffs = b - a
    mean, low, high, n = _fields(t_interval(diffs))
    spread = float(diffs.std(ddof=1)) if n >= 2 else NAN
    varies = n >= 2 and spread > 0
    p_value = float(_scipy_stats().ttest_1samp(diffs, 0.0).pvalue) if varies else NAN
    effect = mean / spread if varies else NAN
    if ratio:
        mean, low, high = (float(v) for v in np.exp([mean, low, high]))
    return Paired(mean, low, high, n, std=spread, p_value=p_value, effect=effect)


def _fields(interval: Interval) -> tuple[float, float, float, int]:
    return interval.value, interval.low, interval.high, interval.n


def line_fit(x, y) -> Interval:
    """The least-squares slope of ``y`` on ``x`` (``scipy.stats.linregress``) with its t interval;
    no slope below two distinct x, no interval below three points."""
    return _scaled_slope(np.asarray(x, float), np.asarray(y, float), 1.0)


def _scaled_slope(x: np.ndarray, y: np.ndarray, scale: float) -> Interval:
    if np.unique(x).size < 2:
        return Interval(NAN, NAN, NAN, int(x.size))
    fit = _scipy_stats().linregress(x, y)
    value = float(fit.slope * scale)
    if x.size < 3:
        return Interval(value, NAN, NAN, int(x.size))
    half = float(_quantile(x.size - 2) * fit.stderr * scale)
    return Interval(value, value - half, value + half, int(x.size))


def loglog_fit(x, y) -> Interval:
    """:func:`line_fit` of log y on log x over the points where both are positive: the exponent of a
    power law y ~ x^slope (``n`` counts those points)."""
    x, y = np.asarray(x, float), np.asarray(y, float)
    usable = (x > 0) & (y > 0)
    return line_fit(np.log(x[usable]), np.log(y[usable]))


def rise(x, y) -> Interval:
    """How much y rises over the range of x relative to its mean: the least-squares slope times
    (max x - min x) / |mean y|, with the slope's interval scaled the same way, over the finite points.
    0 is flat, 1 a rise by the mean; NaN when y's mean is 0."""
    x, y = np.asarray(x, float), np.asarray(y, float)
    usable = np.isfinite(x) & np.isfinite(y)
    x, y = x[usable], y[usable]
    if np.unique(x).size < 2 or y.mean() == 0:
        return Interval(NAN, NAN, NAN, int(x.size))
    return _scaled_slope(x, y, (x.max() - x.min()) / abs(y.mean()))


def _loglog_slope_and_error(x, y) -> tuple[float, float, int]:
    x, y = np.asarray(x, float), np.asarray(y, float)
    usable = (x > 0) & (y > 0)
    x, y = np.log(x[usable]), np.log(y[usable])
    if x.size < 3 or np.unique(x).size < 2:
        return NAN, NAN, int(x.size)
    fit = _scipy_stats().linregress(x, y)
    return float(fit.slope), float(fit.stderr), int(x.size)


def loglog_slope_difference(xa, ya, xb, yb) -> Difference:
    """The log-log slope of (``xb``, ``yb``) minus that of (``xa``, ``ya``), two independent fits: the
    difference's standard error is the root of the sum of the squared standard errors, its t interval
    and two-sided p-value use the Welch-Satterthwaite degrees of freedom
    ``(s_a^2 + s_b^2)^2 / (s_a^4 / (n_a - 2) + s_b^4 / (n_b - 2))``, as Welch's test does for two
    means (``n`` counts both fits' points; NaN when either fit has fewer than three)."""
    slope_a, error_a, n_a = _loglog_slope_and_error(xa, ya)
    slope_b, error_b, n_b = _loglog_slope_and_error(xb, yb)
    value, variance = slope_b - slope_a, error_a ** 2 + error_b ** 2
    if not np.isfinite(value) or not variance > 0:
        return Difference(value, NAN, NAN, n_a + n_b)
    dof = variance ** 2 / (error_a ** 4 / (n_a - 2) + error_b ** 4 / (n_b - 2))
    half = _quantile(dof) * np.sqrt(variance)
    p_value = float(2 * _scipy_stats().t.sf(abs(value) / np.sqrt(variance), dof))
    return Difference(value, value - half, value + half, n_a + n_b, p_value=p_value)
