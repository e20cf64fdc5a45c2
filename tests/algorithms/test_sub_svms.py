"""class_weight resolved once on the whole training set, by the user's labels (svmrepro.algorithms.sub_svms)."""

import numpy as np
import pytest
from sklearn.svm import SVC

from svmrepro.algorithms.sub_svms import positive_rows, signed_class_weight, sub_svm, subset_weights, with_class_weight

LABELS = np.array(["a"] * 30 + ["b"] * 10)


def test_balanced_is_computed_on_all_rows_as_svc_does():
    svc = SVC(class_weight="balanced").fit(np.arange(40.0)[:, None], LABELS)
    weights = signed_class_weight("balanced", np.array(["a", "b"]), LABELS)
    assert weights == {-1: pytest.approx(svc.class_weight_[0]), 1: pytest.approx(svc.class_weight_[1])}


def test_a_dict_is_keyed_by_the_users_labels():
    assert signed_class_weight({"a": 1.0, "b": 3.0}, np.array(["a", "b"]), LABELS) == {-1: 1.0, 1: 3.0}
    with pytest.raises(ValueError):
        signed_class_weight({"x": 1.0}, np.array(["a", "b"]), LABELS)
    assert signed_class_weight(None, np.array(["a", "b"]), LABELS) is None


def test_with_class_weight_clones_and_leaves_the_given_estimator_alone():
    given = SVC(class_weight="balanced", C=3.0)
    model = with_class_weight(given, np.array(["a", "b"]), LABELS)
    assert model is not given and given.class_weight == "balanced"
    assert model.get_params()["C"] == 3.0
    assert model.class_weight == {-1: pytest.approx(40 / 60), 1: pytest.approx(2.0)}
    assert with_class_weight(SVC(), np.array(["a", "b"]), LABELS).class_weight is None


def test_subset_weights_cut_the_rows():
    w = np.arange(5.0)
    parts = subset_weights(w, [np.array([0, 2]), np.array([4])])
    np.testing.assert_array_equal(parts[0], [0.0, 2.0])
    np.testing.assert_array_equal(parts[1], [4.0])
    assert subset_weights(None, [np.array([0])]) == [None]


def test_a_class_weight_inside_a_search_is_resolved_too():
    from sklearn.model_selection import GridSearchCV

    search = GridSearchCV(SVC(class_weight={"a": 1.0, "b": 3.0}), {"C": [1.0]})
    model = with_class_weight(search, np.array(["a", "b"]), LABELS)
    assert model.estimator.class_weight == {-1: 1.0, 1: 3.0}
    assert search.estimator.class_weight == {"a": 1.0, "b": 3.0}


def test_positive_rows_leave_out_zero_weights():
    rows = np.array([3, 4, 5])
    np.testing.assert_array_equal(positive_rows(rows, np.array([1.0, 1, 1, 0, 2, 0])), [4])
    assert positive_rows(rows, None) is rows


@pytest.mark.parametrize("gamma", ["scale", "auto"])
@pytest.mark.parametrize("as_sparse", [False, True])
def test_sub_svm_fixes_gamma_on_the_whole_set_as_svc_does(gamma, as_sparse):
    from scipy import sparse

    X = np.random.default_rng(0).normal(size=(40, 3)) * [1.0, 5.0, 0.1]
    X = sparse.csr_matrix(X) if as_sparse else X
    model = sub_svm(SVC(gamma=gamma, class_weight="balanced"), X, np.array(["a", "b"]), LABELS)
    assert model.gamma == pytest.approx(SVC(gamma=gamma).fit(X, LABELS)._gamma)
    assert model.class_weight == {-1: pytest.approx(40 / 60), 1: pytest.approx(2.0)}
    assert sub_svm(None, X, np.array(["a", "b"]), LABELS).get_params()["C"] == 1.0


def test_cross_training_and_the_mixture_give_every_sub_svm_the_whole_sets_gamma():
    from sklearn.datasets import make_classification

    from svmrepro.algorithms.cross_training import CrossTrainingSVC
    from svmrepro.algorithms.mixture import GatedSVMMixture

    X, y = make_classification(n_samples=200, n_features=4, random_state=0)
    X[:100] *= 10.0  # the parts' variances differ from the whole set's
    whole = SVC().fit(X, y)._gamma
    ct = CrossTrainingSVC(SVC(), n_subsets=3, random_state=0).fit(X, y)
    assert [m.gamma for m in [*ct.estimators_, ct.final_estimator_]] == pytest.approx([whole] * 4)
    mixture = GatedSVMMixture(SVC(), n_experts=2, n_iter=1, random_state=0).fit(X, y)
    gammas = [e.gamma for e in mixture.experts_ if hasattr(e, "gamma")]
    assert gammas and gammas == pytest.approx([whole] * len(gammas))
