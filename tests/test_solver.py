"""The ``solver`` tags name the SVM solver an estimator fits with, nested ones too (oneDAL's: tests/algorithms/test_onedal.py)."""

from importlib.metadata import version

import pytest
from sklearn.model_selection import GridSearchCV
from sklearn.neural_network import MLPClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC, SVR, NuSVC

from svmrepro.algorithms.graf_cascade import GrafCascadeSVC
from svmrepro.algorithms.svr_decomposition import DecompositionSVR
from svmrepro.solver import solver_tags

LIBSVM = {"solver": "libsvm", "solver.version": version("scikit-learn")}


@pytest.mark.parametrize(
    "estimator",
    [SVC(), SVR(), NuSVC(), GrafCascadeSVC(SVC(C=10.0)), GridSearchCV(SVC(), {"C": [1.0]}),
     make_pipeline(StandardScaler(), SVC())],
    ids=["svc", "svr", "nu_svc", "cascade", "search", "pipeline"],
)
def test_libsvm_is_named_with_the_version_of_scikit_learn_that_bundles_it(estimator):
    assert solver_tags(estimator) == LIBSVM


@pytest.mark.parametrize("estimator", [MLPClassifier(), DecompositionSVR()], ids=["mlp", "decomposition_svr"])
def test_an_estimator_without_libsvm_or_onedal_gets_no_solver_tags(estimator):
    assert solver_tags(estimator) == {}
