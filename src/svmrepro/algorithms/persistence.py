"""svmrepro's estimators in skops's format, MLflow's default for a scikit-learn model.

``mlflow.sklearn.log_model(model, name="model")`` writes the model with skops (MLflow's default
``serialization_format`` outside Databricks) and loads it back at once, trusting skops's default
types (scikit-learn's estimators, NumPy's and SciPy's types) plus the call's ``skops_trusted_types``;
a file holding any other type is refused ("untrusted types"). svmrepro's classes are declared to
skops through two doors:

- :data:`SKOPS_TRUSTED_TYPES` is MLflow's documented one:
  ``log_model(model, name="model", skops_trusted_types=SKOPS_TRUSTED_TYPES)`` writes the names into
  the model's ``MLmodel`` file, so a process that never imports svmrepro (``mlflow models serve``)
  loads it too.
- :func:`trust_in_skops` adds them to skops's default trusted types in this process, so MLflow's
  defaults work: importing :mod:`svmrepro.algorithms` does it, when skops is imported or at once if
  it is already (:func:`declare_to_skops`).

skops trusts a class to be built from a file without running the file's code: it makes the
object with ``cls.__new__`` and sets its attributes, each of a type it audits the same way. That
holds for these classes as for scikit-learn's estimators: none defines ``__new__``, ``__reduce__``
or a ``__setstate__`` beyond ``BaseEstimator``'s (``CrossTrainingSVC``'s only rebuilds a tuple).

skops has no public registry of default trusted types: :func:`trust_in_skops` extends the list its
``ObjectNode`` reads (``skops.io._trusted_types.SKLEARN_ESTIMATOR_TYPE_NAMES``), the one private
name used here, for the skops minor version ``pyproject.toml`` pins (tests/test_mlflow_models.py).
"""

from __future__ import annotations

import importlib
import importlib.abc
import sys
import warnings

#: every svmrepro class a fitted public estimator may hold, as skops names types (module.class)
SKOPS_TRUSTED_TYPES: tuple[str, ...] = (
    "svmrepro.algorithms.bagging.BaggedFirstStageSVC",
    "svmrepro.algorithms.cascade.Subproblem",
    "svmrepro.algorithms.cross_training.CrossTrainingSVC",
    "svmrepro.algorithms.editing.Condense",
    "svmrepro.algorithms.editing.EditedSVC",
    "svmrepro.algorithms.editing.MultiEdit",
    "svmrepro.algorithms.editing.WilsonEdit",
    "svmrepro.algorithms.full_qp_svr.FullQPSVR",
    "svmrepro.algorithms.graf_cascade.GrafCascadeSVC",
    "svmrepro.algorithms.mixture.GatedSVMMixture",
    "svmrepro.algorithms.mixture._ConstantExpert",
    "svmrepro.algorithms.potential_sv.PotentialSVClassifier",
    "svmrepro.algorithms.potential_sv.PotentialSVFilter",
    "svmrepro.algorithms.svr_decomposition.DecompositionSVR",
    "svmrepro.algorithms.wen_lu_cascade.WenLuCascadeSVC",
)
#: skops's list of default trusted classes, and the module that reads it when skops is imported
SKOPS_DEFAULTS, SKOPS_READER = "skops.io._trusted_types", "skops.io._general"


def trust_in_skops() -> bool:
    """Add :data:`SKOPS_TRUSTED_TYPES` to skops's default trusted types (once); whether they are there.

    Without skops nothing is done; a skops whose private list moved warns, in one line naming the
    documented door instead."""
    try:
        trusted = importlib.import_module(SKOPS_DEFAULTS).SKLEARN_ESTIMATOR_TYPE_NAMES
    except ImportError:
        return False
    except AttributeError:
        warnings.warn(f"svmrepro cannot declare its estimators to this skops ({SKOPS_DEFAULTS} has no "
                      "SKLEARN_ESTIMATOR_TYPE_NAMES): pass skops_trusted_types=svmrepro.algorithms."
                      "SKOPS_TRUSTED_TYPES to mlflow.sklearn.log_model", RuntimeWarning, stacklevel=2)
        return False
    trusted.extend(name for name in SKOPS_TRUSTED_TYPES if name not in trusted)
    return True


class _WhenSkopsLoads(importlib.abc.MetaPathFinder):
    """Calls :func:`trust_in_skops` just before skops's module that reads the defaults is imported; finds
    no module itself (it answers None, so the import goes on as it would without it)."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname == SKOPS_READER:
            trust_in_skops()
        return None


def declare_to_skops() -> None:
    """:func:`trust_in_skops` now if skops is imported, else when it is (once per process)."""
    if SKOPS_READER in sys.modules:
        trust_in_skops()
    elif not any(isinstance(finder, _WhenSkopsLoads) for finder in sys.meta_path):
        sys.meta_path.insert(0, _WhenSkopsLoads())
