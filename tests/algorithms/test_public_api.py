"""The estimators as a user of scikit-learn meets them (issue 47, item 3): every public estimator imported from
``svmrepro.algorithms`` (cheaply), its docstring's example run, and the surface of :class:`sklearn.svm.SVC` on
every classifier whose model is one SVM: ``support_vectors_``, ``n_support_``, ``decision_function``, and
``predict_proba`` / ``predict_log_proba`` where that SVM has them.

Before: ``from svmrepro.algorithms import WenLuCascadeSVC`` raised ImportError, CrossTrainingSVC had no
``support_vectors_`` and no classifier had ``predict_proba``, even with ``SVC(probability=True)`` inside.
"""

import doctest
import importlib
import inspect
import pkgutil
import subprocess
import sys

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal
from sklearn.base import BaseEstimator
from sklearn.datasets import make_blobs, make_classification
from sklearn.neighbors import KNeighborsClassifier
from sklearn.svm import SVC

import svmrepro.algorithms as algorithms
from svmrepro.algorithms import (
    BaggedFirstStageSVC,
    CrossTrainingSVC,
    EditedSVC,
    GatedSVMMixture,
    GrafCascadeSVC,
    MultiEdit,
    PotentialSVClassifier,
    WenLuCascadeSVC,
)

X, Y = make_classification(n_samples=160, n_features=5, random_state=0)
Y = np.where(Y > 0, "yes", "no")  # labels of the user's, not -1/+1
X_SEPARABLE, Y_SEPARABLE = make_blobs(n_samples=80, centers=[[-2, -2], [2, 2]], random_state=0)
PROBABILITY_SVC = SVC(probability=True, random_state=0)
#: scikit-learn 1.9 deprecates SVC(probability=True) (CalibratedClassifierCV is its door); it still works until 1.11
pytestmark = pytest.mark.filterwarnings("ignore:The `probability` parameter was deprecated:FutureWarning")


def public_estimators_of_the_modules() -> set[str]:
    """The estimators each module of the package defines for use: a public BaseEstimator subclass with its own
    ``__init__`` (the abstract shells, ``CascadeClassifier``, ``FirstStageSVC``, ``EpsilonSVRBase``, have none)."""
    found = set()
    for module in pkgutil.iter_modules(algorithms.__path__):
        namespace = importlib.import_module(f"svmrepro.algorithms.{module.name}")
        found |= {name for name, cls in vars(namespace).items()
                  if inspect.isclass(cls) and cls.__module__ == namespace.__name__ and issubclass(cls, BaseEstimator)
                  and not name.startswith("_") and "__init__" in vars(cls)}
    return found


def test_every_public_estimator_is_importable_from_the_package():
    assert set(algorithms.__all__) == public_estimators_of_the_modules()
    for name in algorithms.__all__:
        cls = getattr(algorithms, name)
        assert getattr(importlib.import_module(cls.__module__), name) is cls
    assert set(algorithms.__all__) <= set(dir(algorithms))
    with pytest.raises(AttributeError, match="has no attribute 'WenLuCascade'"):
        algorithms.WenLuCascade  # noqa: B018


def test_importing_the_package_imports_no_estimator_module():
    """A module, and what it needs (numba, CVXOPT, scikit-learn), is imported when one of its names is asked for."""
    code = ("import sys, svmrepro.algorithms as a; print(sorted(m for m in sys.modules if m.startswith("
            "('svmrepro.algorithms.', 'sklearn', 'numba', 'cvxopt', 'skops')))); a.WenLuCascadeSVC; "
            "print('numba' in sys.modules, 'svmrepro.algorithms.wen_lu_cascade' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert done.stdout.splitlines() == ["['svmrepro.algorithms.persistence']", "False True"]


@pytest.mark.parametrize("name", algorithms.__all__)
def test_each_docstring_example_runs_as_written(name):
    """The API page shows these examples: the import line, a fit and what it prints."""
    cls = getattr(algorithms, name)
    (test,) = doctest.DocTestFinder(recurse=False).find(cls, name, globs={})
    assert "from svmrepro.algorithms import" in test.docstring
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
    assert runner.run(test).failed == 0


def final_svm(model):
    """The SVM a meta-estimator predicts with."""
    return getattr(model, "final_estimator_", None) or model.estimator_


def sorted_rows(rows: np.ndarray) -> np.ndarray:
    return rows[np.lexsort(rows.T[::-1])]


#: each classifier whose model is one SVM, on data it can fit
ONE_SVM = [
    (WenLuCascadeSVC(SVC(C=10.0)), X, Y),
    (GrafCascadeSVC(SVC(C=10.0), n_subsets=2), X, Y),
    (CrossTrainingSVC(SVC(C=10.0), n_subsets=2, random_state=0), X, Y),
    (EditedSVC(MultiEdit(), SVC(C=10.0), random_state=0), X, Y),
    (PotentialSVClassifier(), X_SEPARABLE, Y_SEPARABLE),
]


@pytest.mark.parametrize(("model", "X", "y"), ONE_SVM, ids=[type(model).__name__ for model, *_ in ONE_SVM])
def test_a_classifier_ending_in_one_svm_shows_its_support_vectors_as_svc_does(model, X, y):
    model.fit(X, y)
    svm = final_svm(model)
    assert_array_equal(model.support_vectors_, X[model.support_])  # indexed into the whole training set
    assert_array_equal(sorted_rows(model.support_vectors_), sorted_rows(svm.support_vectors_))
    assert_array_equal(model.n_support_, svm.n_support_)  # per class, in the order of classes_
    assert model.n_support_.dtype == svm.n_support_.dtype and model.n_support_.sum() == len(model.support_)
    assert_allclose(model.decision_function(X), svm.decision_function(X), atol=1e-9)
    assert not hasattr(model, "predict_proba") and not hasattr(model, "predict_log_proba")  # SVC() has none


def test_the_bagged_svms_show_the_support_vectors_a_prediction_evaluates():
    model = BaggedFirstStageSVC(SVC(C=10.0), n_subsets=2, random_state=0).fit(X, Y)
    assert_array_equal(model.support_vectors_, X[model.support_])
    assert_array_equal(model.n_support_, [np.sum(Y[model.support_] == label) for label in model.classes_])


def test_a_mixture_has_no_single_svm_to_show():
    model = GatedSVMMixture(SVC(C=10.0), n_iter=1, random_state=0).fit(X, Y)
    assert not hasattr(model, "support_vectors_") and not hasattr(model, "predict_proba")
    assert model.support_counts_["n_sv"] == sum(len(expert.support_) for expert in model.experts_)


#: each classifier whose final model may have probabilities, with SVC(probability=True) there
WITH_PROBABILITIES = [
    (WenLuCascadeSVC(PROBABILITY_SVC), X, Y),
    (GrafCascadeSVC(PROBABILITY_SVC, n_subsets=2), X, Y),
    (CrossTrainingSVC(SVC(C=10.0), final_estimator=PROBABILITY_SVC, n_subsets=2, random_state=0), X, Y),
    (EditedSVC(MultiEdit(), PROBABILITY_SVC, random_state=0), X, Y),
    (EditedSVC(MultiEdit(), KNeighborsClassifier(), random_state=0), X, Y),
    (PotentialSVClassifier(SVC(kernel="linear", C=1e6, probability=True, random_state=0)), X_SEPARABLE, Y_SEPARABLE),
]


@pytest.mark.parametrize(("model", "X", "y"), WITH_PROBABILITIES, ids=[
    f"{type(model).__name__}-{type(model.final_estimator or model.estimator).__name__}"
    if isinstance(model, CrossTrainingSVC) else f"{type(model).__name__}-{type(model.estimator).__name__}"
    for model, *_ in WITH_PROBABILITIES])
def test_probabilities_are_the_final_models_where_it_has_them(model, X, y):
    assert hasattr(model, "predict_proba")  # before fit: as configured
    model.fit(X, y)
    inner = final_svm(model)
    proba = model.predict_proba(X[:20])
    assert proba.shape == (20, 2)
    assert_allclose(proba.sum(axis=1), 1.0)
    # columns follow classes_ (the cascades' and cross-training's SVM is fitted on -1/+1: column 0 is classes_[0])
    assert_allclose(proba, inner.predict_proba(X[:20]))
    assert hasattr(model, "predict_log_proba") == hasattr(inner, "predict_log_proba")  # k-NN has none
    if hasattr(inner, "predict_log_proba"):
        assert_allclose(model.predict_log_proba(X[:20]), inner.predict_log_proba(X[:20]))
    with pytest.raises(ValueError, match="features"):
        model.predict_proba(X[:3, :1])


def test_cross_training_s_probabilities_follow_its_final_svm():
    """``final_estimator`` (else ``estimator``) is the SVM predict_proba reads."""
    assert hasattr(CrossTrainingSVC(PROBABILITY_SVC), "predict_proba")
    assert not hasattr(CrossTrainingSVC(PROBABILITY_SVC, final_estimator=SVC()), "predict_proba")
    assert hasattr(CrossTrainingSVC(SVC(), final_estimator=PROBABILITY_SVC), "predict_proba")
    assert not hasattr(EditedSVC(estimator=KNeighborsClassifier()), "decision_function")
