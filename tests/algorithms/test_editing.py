"""Editing algorithms of sec. 2.3 (Wilson, MULTIEDIT, CONDENSE) and EditedSVC."""

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal
from sklearn.exceptions import ConvergenceWarning
from sklearn.neighbors import KNeighborsClassifier
from sklearn.svm import SVC
from sklearn.utils.estimator_checks import parametrize_with_checks

from svmrepro.algorithms.editing import Condense, EditedSVC, MultiEdit, WilsonEdit


def _overlapping_gaussians(n, seed):
    """Two 2-d Gaussians, means (+-1, 0), std 1: the Bayes boundary is x_0 = 0 (risk 0.16)."""
    rng = np.random.RandomState(seed)
    y = rng.choice([-1, 1], size=n)
    return y[:, None] * np.array([1.0, 0.0]) + rng.standard_normal((n, 2)), y


X, Y = _overlapping_gaussians(600, 0)
X_SMALL, Y_SMALL = _overlapping_gaussians(60, 1)


@pytest.mark.parametrize("k", [1, 3, 4])
def test_wilson_removes_exactly_the_examples_their_k_neighbours_misclassify(k):
    kept = WilsonEdit(n_neighbors=k).fit(X_SMALL, Y_SMALL).sample_indices_
    expected = []
    for i in range(len(Y_SMALL)):
        dist = np.linalg.norm(X_SMALL - X_SMALL[i], axis=1)
        dist[i] = np.inf
        votes = Y_SMALL[np.argsort(dist)[:k]]
        n_pos, n_neg = np.sum(votes == 1), np.sum(votes == -1)
        predicted = 1 if n_pos > n_neg else -1  # ties to the smallest label, as KNeighborsClassifier
        if predicted == Y_SMALL[i]:
            expected.append(i)
    assert_array_equal(kept, expected)


def test_condensed_set_classifies_the_whole_training_set():
    editor = Condense(random_state=0).fit(X, Y)
    kept = editor.sample_indices_
    assert len(kept) < 0.6 * len(Y)
    nn = KNeighborsClassifier(n_neighbors=1).fit(X[kept], Y[kept])
    assert_array_equal(nn.predict(X), Y)
    assert_array_equal(Condense(random_state=0).fit(X, Y).sample_indices_, kept)


def test_condense_keeps_few_examples_of_separated_classes():
    Xs = X_SMALL + 5 * Y_SMALL[:, None] * np.array([1.0, 0.0])
    assert len(Condense(random_state=0).fit(Xs, Y_SMALL).sample_indices_) <= 4


def test_multiedit_removes_the_overlap_of_two_gaussians():
    editor = MultiEdit(n_splits=3, patience=3, random_state=0).fit(X, Y)
    kept = np.zeros(len(Y), dtype=bool)
    kept[editor.sample_indices_] = True
    wrong_side = np.sign(X[:, 0]) != Y  # on the wrong side of the Bayes boundary
    assert wrong_side.mean() > 0.1
    assert wrong_side[kept].mean() < 0.03  # asymptotically 0
    assert np.abs(X[~kept, 0]).mean() < np.abs(X[kept, 0]).mean()  # removed examples lie near x_0 = 0
    assert editor.n_iter_ >= 3 and np.all(np.diff(editor.history_) <= 0)


def test_multiedit_warns_when_stopped_early():
    with pytest.warns(ConvergenceWarning, match="max_iter=1"):
        MultiEdit(max_iter=1, random_state=0).fit(X, Y)


@pytest.mark.parametrize("editor", [WilsonEdit(), MultiEdit(random_state=0), Condense(random_state=0)])
def test_fit_resample_returns_the_selected_examples(editor):
    X_res, y_res = editor.fit_resample(X_SMALL, Y_SMALL)
    assert_array_equal(X_res, X_SMALL[editor.sample_indices_])
    assert_array_equal(y_res, Y_SMALL[editor.sample_indices_])


def test_edited_svc_trains_on_the_edited_set_with_its_own_seed():
    model = EditedSVC(MultiEdit(), SVC(kernel="linear"), random_state=3).fit(X, Y)
    assert model.editor_.random_state == 3
    assert_array_equal(model.sample_indices_, MultiEdit(random_state=3).fit(X, Y).sample_indices_)
    assert model.support_counts_["n_sv"] == len(model.estimator_.support_)
    assert model.diagnostics_["n_edited"] + model.diagnostics_["n_removed"] == len(Y)
    assert np.mean(model.predict(X) == np.sign(X[:, 0])) > 0.95


def test_edited_svc_refuses_an_edit_that_removes_a_class():
    y = np.where(np.arange(60) < 3, 1, -1)  # 3 isolated +1 examples among -1s
    with pytest.raises(ValueError, match="editor=MultiEdit.* removed every example of class"):
        EditedSVC(MultiEdit(), random_state=0).fit(X_SMALL, y)


def test_edited_svc_passes_sample_weight_to_the_classifier_only():
    weight = np.random.RandomState(0).randint(0, 3, len(Y)).astype(float)  # a third of the rows weigh 0
    model = EditedSVC(WilsonEdit(), SVC(kernel="linear")).fit(X, Y, sample_weight=weight)
    assert_array_equal(model.sample_indices_, WilsonEdit().fit(X, Y).sample_indices_)  # the edit ignores weights
    rows = model.sample_indices_
    reference = SVC(kernel="linear").fit(X[rows], Y[rows], sample_weight=weight[rows])
    assert_allclose(model.decision_function(X), reference.decision_function(X), rtol=1e-9, atol=1e-9)
    assert model.support_counts_["n_sv"] == len(reference.support_vectors_)
    assert_array_equal(model.predict(X), reference.predict(X))
    unweighted = EditedSVC(WilsonEdit(), SVC(kernel="linear")).fit(X, Y)
    assert not np.allclose(model.decision_function(X), unweighted.decision_function(X))
    unit = EditedSVC(WilsonEdit(), SVC(kernel="linear")).fit(X, Y, sample_weight=np.ones(len(Y)))
    assert_array_equal(unit.decision_function(X), unweighted.decision_function(X))


def test_edited_svc_decision_function_only_with_the_classifiers():
    assert hasattr(EditedSVC(), "decision_function")
    assert not hasattr(EditedSVC(estimator=KNeighborsClassifier(n_neighbors=1)), "decision_function")
    model = EditedSVC(Condense(random_state=0), SVC(gamma=0.5)).fit(X, Y)
    desired = model.estimator_.decision_function(X)  # LIBSVM's own evaluation
    assert_allclose(model.decision_function(X), desired, rtol=1e-9, atol=1e-9 * np.abs(desired).max())
    assert_array_equal(model.predict(X), model.estimator_.predict(X))


EXPECTED_FAILED_CHECKS = {
    EditedSVC: {
        "check_sample_weight_equivalence_on_dense_data": (
            "sample_weight goes to the classifier only: the editor is a nearest-neighbour rule on the rows, so "
            "repeating a row changes the edit where an integer sample_weight does not"
        ),
    },
}


#: an expected failure of SVC(probability=True) itself (scikit-learn names a check, not its cases)
_PROBA_READONLY = {"check_estimators_pickle": "its readonly_memmap=True case, as SVC(probability=True) itself: "
                   "LIBSVM's predict_proba takes the model's arrays as writable buffers, not a read-only memory map's"}
PROBA_EXPECTED_FAILURES = {
    **_PROBA_READONLY,
    "check_classifiers_train": "SVC(probability=True) fits its Platt scaling by cross-validation on the few rows "
    "CONDENSE keeps: its probabilities' argmax is not predict's class",
    "check_decision_proba_consistency": "the same Platt scaling on the few rows CONDENSE keeps may come out reversed "
    "(seen in 2 of 3 full suites, never alone): its probabilities rank the rows against decision_function, which "
    "scikit-learn documents for SVC(probability=True)",
}


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")  # the checks' random data
@pytest.mark.filterwarnings("ignore:The `probability` parameter was deprecated:FutureWarning")  # scikit-learn 1.9
@parametrize_with_checks(  # the last with the classifier's probabilities (predict_proba, predict_log_proba)
    [WilsonEdit(), MultiEdit(patience=1), Condense(), EditedSVC(Condense()),
     EditedSVC(Condense(), SVC(probability=True, random_state=0))],
    expected_failed_checks=lambda estimator: {
        **EXPECTED_FAILED_CHECKS.get(type(estimator), {}),
        **(PROBA_EXPECTED_FAILURES if getattr(estimator, "estimator", None) is not None else {}),
    },
)
def test_sklearn_contract(estimator, check):
    check(estimator)
