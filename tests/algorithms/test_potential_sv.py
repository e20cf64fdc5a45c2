"""Potential SVs (Del Favero et al. 2011): the slides' claims as properties of random separable sets."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from numpy.testing import assert_array_equal
from sklearn.base import clone
from sklearn.svm import SVC
from sklearn.utils._param_validation import InvalidParameterError

from svmrepro.algorithms.potential_sv import (
    NotSeparableError,
    PotentialSVClassifier,
    PotentialSVFilter,
    deltas,
    is_potential_sv,
    lp_decide,
    simplex_decide,
)
from svmrepro.data.separable import Separable

HARD_MARGIN = SVC(kernel="linear", C=1e6, tol=1e-10)

# Positives on the square [1, 2] x [0, 1] plus its centre, negatives at x = -1: only the corners
# facing the negatives, and both negatives, are potential SVs.
SQUARE_X = np.array([[1, 0], [1, 1], [2, 0], [2, 1], [1.5, 0.5], [-1, 0], [-1, 1]], dtype=float)
SQUARE_Y = np.array([1, 1, 1, 1, 1, -1, -1])
SQUARE_PSV = np.array([True, True, False, False, False, True, True])

# The slides' "differences between the two conditions": (1, 0) sits mid-edge of its class, the
# only hyperplane through it is the x axis, and the negative (3, 0) lies on it: "<=" holds, "<" not.
EDGE_X = np.array([[0, 0], [1, 0], [2, 0], [3, 0], [1, -1]], dtype=float)
EDGE_Y = np.array([1, 1, 1, -1, -1])

SETTINGS = settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
separable_sets = st.builds(
    lambda seed, n, d: Separable(n_train=n, n_test=2, n_features=d).load(seed),
    seed=st.integers(0, 10_000), n=st.integers(12, 50), d=st.integers(2, 4),
)


def _mask(selector, n):
    mask = np.zeros(n, dtype=bool)
    mask[selector.support_] = True
    return mask


def _hyperplane(model):
    return np.r_[model.coef_.ravel(), model.intercept_]


@pytest.mark.parametrize("decider", ["simplex", "lp"])
def test_square_toy_has_the_potential_svs_worked_out_by_hand(decider):
    assert_array_equal([is_potential_sv(SQUARE_X, SQUARE_Y, i, decider) for i in range(7)], SQUARE_PSV)
    assert_array_equal(_mask(PotentialSVFilter(decider=decider).fit(SQUARE_X, SQUARE_Y), 7), SQUARE_PSV)


def test_deltas_follow_the_proposition_sign_convention():
    D = deltas(SQUARE_X, SQUARE_Y, 0)
    # Delta_j^T w <= 0 for the hyperplane x = 1 oriented towards the positives (w = e_1)
    assert np.all(D @ np.array([1.0, 0.0]) <= 0)
    assert_array_equal(D[-1], -(SQUARE_X[0] - SQUARE_X[6]))


def test_relaxed_and_strict_tests_differ_on_the_slides_degenerate_case():
    D, opposite = deltas(EDGE_X, EDGE_Y, 1), np.array([False, False, True, True])
    assert simplex_decide(D).is_psv and lp_decide(D).is_psv
    assert not lp_decide(D, opposite=opposite).is_psv


@SETTINGS
@given(data=separable_sets)
def test_deciders_agree_with_each_other_and_with_the_strict_test(data):
    X, y = data.X_train, data.y_train.astype(float)
    for i in range(len(X)):
        D = deltas(X, y, i)
        relaxed = simplex_decide(D)
        assert relaxed.is_psv == lp_decide(D).is_psv == lp_decide(D, opposite=np.delete(y, i) != y[i]).is_psv
        if relaxed.is_psv:  # the simplex's ray is the normal of a quasi-separating hyperplane
            assert np.all(D @ relaxed.w <= 1e-9 * np.linalg.norm(D, axis=1))


@SETTINGS
@given(data=separable_sets)
def test_hard_margin_svm_uses_only_potential_svs_and_is_unchanged_without_the_rest(data):
    X, y = data.X_train, data.y_train
    psv = _mask(PotentialSVFilter().fit(X, y), len(X))
    full = clone(HARD_MARGIN).fit(X, y)
    assert psv[full.support_].all()
    reduced = clone(HARD_MARGIN).fit(X[psv], y[psv])
    assert np.abs(_hyperplane(full) - _hyperplane(reduced)).max() < 1e-6


@SETTINGS
@given(data=separable_sets, weights_seed=st.integers(0, 10_000))
def test_points_strictly_inside_their_class_hull_are_discarded(data, weights_seed):
    X, y = data.X_train, data.y_train
    rng = np.random.default_rng(weights_seed)
    positives = X[y == 1]
    inside = rng.dirichlet(np.ones(len(positives)), size=3) @ positives  # all weights > 0
    X_more, y_more = np.vstack([X, inside]), np.r_[y, [1, 1, 1]]
    kept = _mask(PotentialSVFilter(decider="lp").fit(X_more, y_more), len(X_more))
    assert not kept[len(X):].any()


@SETTINGS
@given(data=separable_sets, chunk=st.integers(3, 20))
def test_streaming_keeps_exactly_the_potential_svs_of_everything_seen(data, chunk):
    X, y = data.X_train, data.y_train
    batch = PotentialSVFilter(chunk_size=None).fit(X, y)
    stream = PotentialSVFilter()
    for start in range(0, len(X), chunk):
        stream.partial_fit(X[start:start + chunk], y[start:start + chunk])
    assert_array_equal(stream.support_, batch.support_)
    assert_array_equal(stream.X_, X[batch.support_])
    assert stream.n_samples_seen_ == len(X)


@pytest.mark.parametrize("decider", ["simplex", "lp"])
def test_non_separable_input_is_refused(decider):
    xor_X, xor_y = np.array([[0, 0], [1, 1], [0, 1], [1, 0]], dtype=float), np.array([1, 1, -1, -1])
    with pytest.raises(NotSeparableError, match="not linearly separable"):
        PotentialSVFilter(decider=decider).fit(xor_X, xor_y)
    stream = PotentialSVFilter(decider=decider).partial_fit(xor_X[:3], xor_y[:3])
    with pytest.raises(NotSeparableError):
        stream.partial_fit(xor_X[3:], xor_y[3:])


def test_more_than_two_classes_and_bad_parameters_are_refused():
    with pytest.raises(ValueError, match="two classes"):
        PotentialSVFilter().fit(SQUARE_X, np.arange(7) % 3)
    with pytest.raises(InvalidParameterError):
        PotentialSVFilter(decider="dual").fit(SQUARE_X, SQUARE_Y)
    with pytest.raises(InvalidParameterError):
        PotentialSVClassifier(selector="all").fit(SQUARE_X, SQUARE_Y)


def test_one_class_chunk_first_then_the_other_class():
    stream = PotentialSVFilter().partial_fit(SQUARE_X[:5], SQUARE_Y[:5])
    assert_array_equal(stream.support_, [0, 1, 2, 3])  # one class: its hull's vertices
    stream.partial_fit(SQUARE_X[5:], SQUARE_Y[5:])
    assert_array_equal(_mask(stream, 7), SQUARE_PSV)


def test_classifier_equals_the_svm_on_everything_and_audits_the_claims():
    data = Separable(n_train=300, n_test=200, n_features=3).load(7)
    model = PotentialSVClassifier(HARD_MARGIN, selector=PotentialSVFilter(chunk_size=64), audit=True,
                                  record_points=True).fit(data.X_train, data.y_train)
    full = clone(HARD_MARGIN).fit(data.X_train, data.y_train)
    assert_array_equal(model.predict(data.X_test), full.predict(data.X_test))
    assert_array_equal(np.sort(model.support_), np.sort(full.support_))
    diag = model.diagnostics_
    assert diag["n_potential_sv"] + diag["n_discarded"] == 300
    assert diag["coef_max_abs_diff"] < 1e-6 and diag["future_coef_max_abs_diff"] < 1e-6
    assert diag["sv_outside_psv"] == diag["future_sv_violations"] == 0
    assert model.support_counts_["n_sv"] == len(full.support_)
    assert len(diag["points"]["X"]) == 300 and set(diag["points"]["sv"]) <= set(diag["points"]["potential_sv"])
    assert clone(model).get_params()["selector"].chunk_size == 64
