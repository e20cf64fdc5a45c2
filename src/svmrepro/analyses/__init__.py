"""Analyses of a fitted run: extra diagnostics an experiment asks for, computed after the fit.

An estimator only learns and predicts. What an experiment wants to know beyond that (is a model
refitted on a subset the same, where are the points for a scatter plot) is an *analysis*: a
callable ``analysis(estimator, X, y) -> dict`` given the fitted final estimator and the training
split. An experiment lists its analyses by name under ``analysis:``, each a constructor config
(``_target_`` + arguments); the runner builds them with the estimator and calls them, in that
order, once the run is measured. Their dicts join the estimator's ``diagnostics_`` in the run's
log (scalars as metrics, numeric lists as series, everything in ``diagnostics.json``), so a report
reads them as it reads any diagnostic. Adding an analysis is one module here and one config line.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from svmrepro.build import _instantiate
from svmrepro.errors import ConfigError

#: what an analysis is called with and returns
Analysis = Callable[..., dict]


def build_analyses(node) -> dict[str, Analysis]:
    """The analyses of an ``analysis:`` config node (None: none), built before any data is read."""
    if node is None:
        return {}
    if not hasattr(node, "items") or "_target_" in node:
        raise ConfigError("analysis must map names to analyses, e.g. {audit: {_target_: ...}}")
    analyses = {str(name): _instantiate(spec, f"analysis.{name}") for name, spec in node.items()}
    for name, analysis in analyses.items():
        if not callable(analysis):
            raise ConfigError(f"analysis.{name}: {type(analysis).__name__} is not callable as (estimator, X, y)")
    return analyses


def run_analyses(analyses: Mapping[str, Analysis], estimator, X, y) -> dict:
    """The merged diagnostics of every analysis, in order; a key an earlier one set is an error."""
    found: dict = {}
    for name, analysis in analyses.items():
        extra = analysis(estimator, X, y)
        clash = sorted(set(found) & set(extra))
        if clash:
            raise ValueError(f"analysis {name!r} reports {clash}, already reported by an earlier analysis")
        found.update(extra)
    return found
