"""The papers' algorithms as scikit-learn estimators, one per module.

Every public estimator is importable from here::

    from svmrepro.algorithms import CrossTrainingSVC, GrafCascadeSVC, WenLuCascadeSVC

A module is imported when one of its names is first asked for (PEP 562), so importing this package
costs no estimator's dependencies (numba's compiled SVR decomposition, CVXOPT, a cluster's client).
Importing it declares svmrepro's classes to skops, MLflow's default model format, so that
``mlflow.sklearn.log_model(model, name="model")`` works with MLflow's defaults
(:mod:`svmrepro.algorithms.persistence`; ``SKOPS_TRUSTED_TYPES`` is MLflow's documented door).
"""

from __future__ import annotations

import importlib

from svmrepro.algorithms.persistence import SKOPS_TRUSTED_TYPES, declare_to_skops  # noqa: F401 (a door of its own)

#: each public estimator, paper by paper, and the module that holds it
_HOMES = {
    "CrossTrainingSVC": "cross_training",
    "BaggedFirstStageSVC": "bagging",
    "EditedSVC": "editing",
    "WilsonEdit": "editing",
    "MultiEdit": "editing",
    "Condense": "editing",
    "GatedSVMMixture": "mixture",
    "WenLuCascadeSVC": "wen_lu_cascade",
    "GrafCascadeSVC": "graf_cascade",
    "PotentialSVClassifier": "potential_sv",
    "PotentialSVFilter": "potential_sv",
    "DecompositionSVR": "svr_decomposition",
    "FullQPSVR": "full_qp_svr",
}
__all__ = list(_HOMES)

declare_to_skops()


def __getattr__(name: str):
    if name not in _HOMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = globals()[name] = getattr(importlib.import_module(f"{__name__}.{_HOMES[name]}"), name)
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})

