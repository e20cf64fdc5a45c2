"""Intel oneDAL's SVC and SVR (scikit-learn-intelex) as the baseline and inside every meta-estimator.

sklearnex's estimators subclass scikit-learn's and expose what a meta-estimator reads from a sub-SVM
(``support_``, ``dual_coef_``, ``support_vectors_``, ``intercept_``, ``n_support_``, ``class_weight_``, the
fitted ``_gamma``), so they go in as ``estimator=`` unchanged. These tests prove it: each meta-estimator
fits with oneDAL inside (every sub-fit on oneDAL, none fallen back to LIBSVM) to LIBSVM's #SV and test error.

Why the margins: both solvers stop when the KKT gap is below ``tol`` (1e-3), LIBSVM by SMO on pairs,
oneDAL by its thunder working sets, so the two duals agree to about ``tol``, not exactly; a support
vector whose alpha is that close to 0 may be in one and not the other. Measured on this data, every
#SV is equal and every test error is equal but the mixture's; the margins (2 SVs, 10 of 2000 test
points) leave room for another BLAS. The mixture trains its gater on the experts' outputs by SGD and
reassigns rows from them, so a 1e-3 difference moves whole rows, and how many depends on the CPU (oneDAL's
and OpenBLAS's kernels differ between AVX-512 and AVX2). A margin of 4 SVs, set on an Intel Xeon (AVX-512),
failed on an AMD EPYC (AVX2): 163 SVs against LIBSVM's 172, test errors 0.041 and 0.0465. Its margins are
10 % of its #SV (17) and 40 test points.
"""

import logging
from importlib.metadata import version

import numpy as np
import pytest
from sklearn.svm import SVC, SVR

from svmrepro.algorithms.bagging import BaggedFirstStageSVC
from svmrepro.algorithms.cross_training import CrossTrainingSVC
from svmrepro.algorithms.editing import EditedSVC, WilsonEdit
from svmrepro.algorithms.graf_cascade import GrafCascadeSVC
from svmrepro.algorithms.kernel_expansion import decision_values
from svmrepro.algorithms.mixture import GatedSVMMixture
from svmrepro.algorithms.potential_sv import PotentialSVClassifier
from svmrepro.algorithms.wen_lu_cascade import WenLuCascadeSVC
from svmrepro.metrics import support_counts
from svmrepro.solver import solver_tags

sklearnex_svm = pytest.importorskip("sklearnex.svm", reason="scikit-learn-intelex installs on Linux x86-64 only")

# a 2x2 checkerboard of 600 points with 5 % of the labels flipped, and 2000 clean test points
_rng = np.random.default_rng(0)
X = _rng.uniform(0, 200, size=(600, 2))
y = np.where((X[:, 0] < 100) == (X[:, 1] < 100), 1, -1) * np.where(_rng.random(600) < 0.05, -1, 1)
X_TEST = _rng.uniform(0, 200, size=(2000, 2))
Y_TEST = np.where((X_TEST[:, 0] < 100) == (X_TEST[:, 1] < 100), 1, -1)
SVM = dict(kernel="rbf", C=100.0, gamma=1e-3)
# potential SVs are defined on linearly separable data only: two clouds with a margin between them
_side = _rng.normal(size=(300, 2))
Y_SEP = np.where(_side[:, 0] + 0.5 * _side[:, 1] > 0, 1, -1)
X_SEP = _side + 0.3 * Y_SEP[:, None] * np.array([1.0, 0.5])

# (meta-estimator around a given SVC, its data, its test data, #SV margin, test-error margin)
META = {
    "wen_lu_cascade": (WenLuCascadeSVC, X, y, X_TEST, Y_TEST, 2, 0.005),
    "graf_cascade": (lambda svm: GrafCascadeSVC(svm, n_subsets=4), X, y, X_TEST, Y_TEST, 2, 0.005),
    "cross_training": (lambda svm: CrossTrainingSVC(svm, random_state=0), X, y, X_TEST, Y_TEST, 2, 0.005),
    "bagged_first_stage": (lambda svm: BaggedFirstStageSVC(svm, random_state=0), X, y, X_TEST, Y_TEST, 2, 0.005),
    "edited": (lambda svm: EditedSVC(WilsonEdit(), svm), X, y, X_TEST, Y_TEST, 2, 0.005),
    "mixture": (lambda svm: GatedSVMMixture(svm, random_state=0), X, y, X_TEST, Y_TEST, 17, 0.02),
    "potential_sv": (PotentialSVClassifier, X_SEP, Y_SEP, X_SEP, Y_SEP, 2, 0.005),
}


@pytest.mark.parametrize("name", META)
def test_each_meta_estimator_fits_with_onedal_inside_as_with_libsvm(name, caplog):
    make, X_fit, y_fit, X_eval, y_eval, sv_margin, error_margin = META[name]
    libsvm = make(SVC(**SVM)).fit(X_fit, y_fit)
    caplog.set_level(logging.INFO, logger="sklearnex")
    onedal = make(sklearnex_svm.SVC(**SVM)).fit(X_fit, y_fit)
    fits = [r.getMessage() for r in caplog.records if r.name == "sklearnex" and ".fit:" in r.getMessage()]
    assert fits and all("running accelerated version" in line for line in fits), fits  # none fell back to LIBSVM
    assert abs(support_counts(onedal)["n_sv"] - support_counts(libsvm)["n_sv"]) <= sv_margin
    errors = [np.mean(model.predict(X_eval) != y_eval) for model in (libsvm, onedal)]
    assert abs(errors[1] - errors[0]) <= error_margin


@pytest.mark.parametrize(("estimator", "target"), [(sklearnex_svm.SVC, np.sign(X[:, 0] - 100)),
                                                   (sklearnex_svm.SVR, X[:, 0] / 100 - 1)])
def test_the_blocked_kernel_expansion_of_a_onedal_model_is_its_own_prediction(estimator, target):
    """``gamma="scale"`` resolved at fit time is read as from LIBSVM's model (``fitted_gamma``)."""
    model = estimator(gamma="scale").fit(X, target)
    own = model.decision_function(X_TEST) if hasattr(model, "decision_function") else model.predict(X_TEST)
    np.testing.assert_allclose(decision_values(model, X_TEST), own, rtol=1e-6, atol=1e-6)


def test_onedal_solves_libsvms_problem_to_the_same_model_at_a_tight_tolerance():
    """At tol 1e-5 the two duals agree to ~1e-5: the same #SV (within 1) and decision values within 1e-3."""
    tight = dict(SVM, tol=1e-5)
    libsvm, onedal = SVC(**tight).fit(X, y), sklearnex_svm.SVC(**tight).fit(X, y)
    assert abs(len(onedal.support_) - len(libsvm.support_)) <= 1
    assert support_counts(onedal).keys() == support_counts(libsvm).keys()
    np.testing.assert_allclose(onedal.decision_function(X_TEST), libsvm.decision_function(X_TEST), atol=1e-3)
    libsvr, onedal_svr = SVR(tol=1e-5).fit(X / 100, y), sklearnex_svm.SVR(tol=1e-5).fit(X / 100, y)
    assert abs(len(onedal_svr.support_) - len(libsvr.support_)) <= 1
    np.testing.assert_allclose(onedal_svr.predict(X_TEST / 100), libsvr.predict(X_TEST / 100), atol=1e-3)


@pytest.mark.parametrize(
    ("make", "solver"),
    [(lambda: sklearnex_svm.SVC(), "onedal"), (lambda: sklearnex_svm.SVR(), "onedal"),
     (lambda: WenLuCascadeSVC(sklearnex_svm.SVC()), "onedal"),
     # a first stage on LIBSVM, the final SVM on oneDAL: both named
     (lambda: CrossTrainingSVC(SVC(), final_estimator=sklearnex_svm.SVC()), "libsvm+onedal")],
)
def test_the_solver_tags_name_onedal_with_the_installed_distributions_version(make, solver):
    versions = {"libsvm": version("scikit-learn"), "onedal": version("scikit-learn-intelex")}
    assert solver_tags(make()) == {"solver": solver,
                                   "solver.version": "+".join(versions[name] for name in solver.split("+"))}
