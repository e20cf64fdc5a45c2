"""What the sub-SVMs of a meta-estimator inherit from the whole training set.

The sub-SVMs of cross-training, the cascades, the bagged first stage and the mixture see the labels
-1/+1, and each sees only part of the training set. Left to itself each would derive its own
settings from its part, and solve another problem than one SVC on all the rows. So what SVC derives
from its training set is resolved once, on the whole set (:func:`sub_svm`): ``class_weight``
(``"balanced"`` from all ``n`` counts, a dict by the user's class names) becomes the explicit dict
``{-1: w, +1: w}``, ``gamma="scale"`` / ``"auto"`` a number; a ``sample_weight`` is cut to the rows
each sub-SVM trains on (:func:`subset_weights`, :func:`positive_rows`).
"""

from __future__ import annotations

import numpy as np
from sklearn.base import clone
from sklearn.svm import SVC
from sklearn.utils.class_weight import compute_class_weight

from svmrepro.algorithms.kernel_cache import resolve_gamma


def signed_class_weight(class_weight, classes: np.ndarray, y) -> dict | None:
    """``class_weight`` (None, "balanced" or a dict keyed by ``classes``) as ``{-1: w0, +1: w1}``.

    ``classes[0]`` becomes -1 and ``classes[1]`` +1, as the meta-estimators relabel ``y``.
    "balanced" is ``n / (2 * count)`` over the whole ``y``, as :class:`sklearn.svm.SVC` computes it.
    """
    if class_weight is None:
        return None
    weights = compute_class_weight(class_weight, classes=np.asarray(classes), y=np.asarray(y))
    return {-1: float(weights[0]), 1: float(weights[1])}


def with_class_weight(estimator, classes: np.ndarray, y):
    """A clone of ``estimator`` whose ``class_weight`` is resolved by :func:`signed_class_weight`.

    Nested ones are resolved too (``estimator__class_weight`` of a ``GridSearchCV(SVC(...))``);
    an estimator without a ``class_weight`` parameter (or with None) is cloned as it is.
    """
    model = clone(estimator)
    resolved = {
        name: signed_class_weight(value, classes, y)
        for name, value in model.get_params(deep=True).items()
        if (name == "class_weight" or name.endswith("__class_weight")) and value is not None
    }
    return model.set_params(**resolved) if resolved else model


def sub_svm(estimator, X, classes: np.ndarray, y):
    """The estimator every sub-SVM clones (None: ``SVC()``), its settings fixed on all of ``X``.

    ``class_weight`` as :func:`with_class_weight` resolves it (``y`` in the user's labels or in
    -1/+1 ordered as ``classes``); ``gamma="scale"`` / ``"auto"`` as :class:`sklearn.svm.SVC`
    resolves them on ``X``.
    """
    model = with_class_weight(SVC() if estimator is None else estimator, classes, y)
    gamma = model.get_params(deep=False).get("gamma")
    if isinstance(gamma, str):
        model.set_params(gamma=resolve_gamma(gamma, X))
    return model


def subset_weights(sample_weight: np.ndarray | None, subsets) -> list[np.ndarray | None]:
    """``sample_weight`` of each index set in ``subsets`` (None for every one without weights)."""
    return [None if sample_weight is None else sample_weight[s] for s in subsets]


def positive_rows(rows: np.ndarray, sample_weight: np.ndarray | None) -> np.ndarray:
    """``rows`` less those of zero weight: the rows a sub-SVM is fitted on.

    SVC drops zero-weight rows itself but then numbers ``support_`` among the rows it kept
    (scikit-learn issues 5150, 25380); leaving them out first keeps ``rows[model.support_]`` right.
    """
    return rows if sample_weight is None else rows[sample_weight[rows] > 0]
