"""class_weight resolved once on the whole training set, by the user's labels (svmrepro.algorithms.weights)."""

import numpy as np
import pytest
from sklearn.svm import SVC

from svmrepro.algorithms.weights import positive_rows, signed_class_weight, subset_weights, with_class_weight

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
