"""The decision surface of a fitted classifier on 2-d data: what a contour picture is drawn from.

A run whose config sets ``surface: {resolution: R, points: P}`` evaluates the fitted estimator's
``decision_function`` (its ``predict`` when it has none) on an R x R grid spanning the training
and test points (5 % margin), and keeps P test points drawn by the seed to show over it. The
runner logs the result as the ``surface.json`` artifact; ``report.surface`` draws it.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from svmrepro.data.base import Dataset, rng_for
from svmrepro.errors import ConfigError

#: significant digits kept of every value (a picture needs no more)
DIGITS = 5
DEFAULTS = {"resolution": 150, "points": 600}


def surface_settings(node: Mapping | None, data: Dataset) -> dict[str, int] | None:
    """``node`` with defaults filled in and checked against ``data``; ``None`` when not asked for."""
    if node is None:
        return None
    unknown = set(node) - set(DEFAULTS)
    if unknown:
        raise ConfigError(f"surface.{sorted(unknown)[0]} is not a surface setting; allowed: {sorted(DEFAULTS)}")
    settings = {**DEFAULTS, **node}
    if not (isinstance(settings["resolution"], int) and 10 <= settings["resolution"] <= 1000):
        raise ConfigError(f"surface.resolution={settings['resolution']!r} is invalid: expected an integer in [10, 1000]")
    if not (isinstance(settings["points"], int) and settings["points"] >= 0):
        raise ConfigError(f"surface.points={settings['points']!r} is invalid: expected an integer >= 0")
    if data.X_train.shape[1] != 2:
        raise ConfigError(f"surface needs 2-d inputs; this data set has {data.X_train.shape[1]} features")
    return settings


def _rounded(values: np.ndarray) -> list:
    return np.vectorize(lambda v: float(f"{v:.{DIGITS}g}"), otypes=[float])(values).tolist()


def decision_surface(estimator, data: Dataset, settings: Mapping[str, int], seed: int) -> dict:
    """``{grid_x, grid_y, values (rows follow grid_y), points_X, points_y}`` of a fitted estimator."""
    both = np.vstack([data.X_train, data.X_test])
    low, high = both.min(axis=0), both.max(axis=0)
    pad = 0.05 * (high - low)
    axes = [np.linspace(lo - p, hi + p, settings["resolution"]) for lo, hi, p in zip(low, high, pad)]
    xx, yy = np.meshgrid(*axes)
    grid = np.column_stack([xx.ravel(), yy.ravel()])
    score = getattr(estimator, "decision_function", estimator.predict)
    values = np.asarray(score(grid), dtype=float).reshape(xx.shape)
    shown = rng_for(seed, "surface").permutation(len(data.y_test))[: settings["points"]]
    return {
        "grid_x": _rounded(axes[0]),
        "grid_y": _rounded(axes[1]),
        "values": _rounded(values),
        "points_X": _rounded(data.X_test[shown]),
        "points_y": data.y_test[shown].tolist(),
    }
