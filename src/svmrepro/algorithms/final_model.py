"""What a meta-estimator shows of the SVM it ends with, as :class:`sklearn.svm.SVC` shows it.

A cascade, cross-training, an edited or a potential-SV classifier predicts with one final model
fitted on some rows of the training set. :class:`FinalModelProbabilities` gives such an estimator
that model's ``predict_proba`` and ``predict_log_proba`` where the model has them (``available_if``:
``SVC(probability=True)`` has, ``SVC()`` has not), and :func:`support_vectors` the support vectors
and per-class counts, indexed into the whole training set.
"""

from __future__ import annotations

import numpy as np
from sklearn.svm import SVC
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import check_is_fitted, validate_data


def final_model_has(method: str, fitted: str, *configured: str):
    """``available_if`` check: the fitted model ``self.<fitted>``, else the first of the parameters
    ``configured`` that is set (``SVC()`` when none is), has ``method``."""

    def check(self) -> bool:
        model = getattr(self, fitted, None)
        if model is None:
            model = next((getattr(self, name) for name in configured if getattr(self, name) is not None), SVC())
        return hasattr(model, method)

    return check


def _proba_check(method: str):
    """:func:`final_model_has` with the owner's own ``_final_model`` and ``_final_model_params``."""

    def check(self) -> bool:
        return final_model_has(method, self._final_model, *self._final_model_params)(self)

    return check


class FinalModelProbabilities:
    """``predict_proba`` and ``predict_log_proba`` of the fitted final model, where it has them.

    The subclass names the fitted model's attribute (``_final_model``) and the parameters that
    configure it, the first set one winning (``_final_model_params``). Its columns follow
    ``classes_``: a binary meta-estimator fits its final model on -1/+1, so column 0 is ``classes_[0]``.
    """

    _final_model = "final_estimator_"
    _final_model_params: tuple[str, ...] = ("estimator",)

    def _final_input(self, X):
        check_is_fitted(self)
        return validate_data(self, X, accept_sparse="csr" if self.__sklearn_tags__().input_tags.sparse else False,
                             reset=False)

    @available_if(_proba_check("predict_proba"))
    def predict_proba(self, X) -> np.ndarray:
        """The final model's class probabilities (for an SVC, Platt scaling fitted by LIBSVM's internal
        cross-validation, which may disagree with ``predict`` near the boundary)."""
        X = self._final_input(X)  # checks the fit first
        return getattr(self, self._final_model).predict_proba(X)

    @available_if(_proba_check("predict_log_proba"))
    def predict_log_proba(self, X) -> np.ndarray:
        """The logarithm of :meth:`predict_proba`."""
        X = self._final_input(X)
        return getattr(self, self._final_model).predict_log_proba(X)


def support_vectors(X, y, support: np.ndarray, classes) -> tuple[object, np.ndarray]:
    """``support_vectors_`` (the rows ``support`` of X) and ``n_support_`` (how many of them each of
    ``classes`` has, labels ``y``), as :class:`sklearn.svm.SVC` names them."""
    labels = np.asarray(y)[support]
    return X[support], np.array([np.sum(labels == label) for label in classes], dtype=np.int32)
