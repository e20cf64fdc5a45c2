"""Cross-training (Algorithm 3) and bagging of its first stage: rules, contract, properties."""

import numpy as np
import pytest
from joblib import parallel_config
from numpy.testing import assert_allclose, assert_array_equal
from scipy.sparse import csr_matrix
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.svm import SVC, NuSVC
from sklearn.utils.estimator_checks import parametrize_with_checks

from svmrepro.algorithms.bagging import BaggedFirstStageSVC
from svmrepro.algorithms.cross_training import (
    CrossTrainingSVC,
    best_threshold_shift,
    cross_training_keep,
    draw_subsets,
    rebalance,
)
from svmrepro.data.gaussian_clouds import GaussianClouds
from svmrepro.metrics import support_counts

CLOUDS = GaussianClouds(n_train=1500, n_test=5000, std=1.5).load(0)
SMALL = GaussianClouds(n_train=300, n_test=10, std=1.5).load(1)
LINEAR = SVC(kernel="linear", C=1.0)

# columns: misclassified, confident, kept, kept (margin SV), kept (m + v = 0),
# misclassified by the variance but kept by the std, confident by the variance but kept by the std
MARGINS = np.array([
    [-1.0, 2.0, 0.5, 1.0, 0.0, -0.8, 1.0],
    [-1.0, 2.0, 0.5, 1.0, 0.0, 0.2, 2.0],
    [-1.0, 2.0, 0.5, 1.0, 0.0, -0.8, 1.0],
    [-1.0, 2.0, 0.5, 1.0, 0.0, 0.2, 2.0],
])


def test_keep_rule_on_a_hand_made_margin_table():
    edit = cross_training_keep(MARGINS)
    assert_allclose(edit.mean, [-1, 2, 0.5, 1, 0, -0.3, 1.5])
    assert_allclose(edit.spread, [0, 0, 0, 0, 0, 0.25, 0.25])  # the variance, 1/s as in step 3
    assert_array_equal(edit.misclassified, [1, 0, 0, 0, 0, 1, 0])
    assert_array_equal(edit.confident, [0, 1, 0, 0, 0, 0, 1])
    assert_array_equal(edit.kept, [0, 0, 1, 1, 1, 0, 0])


def test_keep_rule_with_the_standard_deviation():
    edit = cross_training_keep(MARGINS, spread="std")
    assert_allclose(edit.spread[-2:], [0.5, 0.5])
    assert_array_equal(edit.kept, [0, 0, 1, 1, 1, 1, 1])


def test_rebalance_reinserts_the_least_confident_of_the_minority_class():
    y = np.array([1, 1, 1, -1, -1, -1, -1, 1])
    kept = np.array([1, 1, 1, 1, 0, 0, 0, 0], dtype=bool)
    confident = np.array([0, 0, 0, 0, 1, 1, 1, 1], dtype=bool)
    lower = np.array([0, 0, 0, 0, 5.0, 2.0, 3.0, 1.5])
    assert_array_equal(rebalance(kept, confident, lower, y), [5, 6])
    # fewer step-5 discards than the deficit: all of them come back
    assert_array_equal(rebalance(kept, confident & (lower > 4), lower, y), [4])
    assert len(rebalance(np.ones(8, dtype=bool), confident, lower, np.array([1, -1] * 4))) == 0


@pytest.mark.parametrize(
    ("decision", "y", "shift"),
    [
        ([-2.0, -1.0, 1.0, 2.0], [-1, 1, 1, 1], 1.5),  # one +1 below 0: move the threshold under it
        ([-2.0, -1.0, 1.0, 2.0], [-1, -1, 1, 1], 0.0),  # already best: keep the SVM's b
        ([-2.0, 0.5, 1.0, 2.0], [-1, -1, 1, 1], -0.75),
    ],
)
def test_best_threshold_shift(decision, y, shift):
    assert best_threshold_shift(np.array(decision), np.array(y)) == pytest.approx(shift)


@pytest.mark.parametrize(
    ("decision", "y", "weight", "shift"),
    [
        ([-2.0, -1.0, 1.0, 2.0], [-1, 1, 1, 1], [1, 0, 1, 1], 0.0),  # the misclassified +1 weighs nothing
        ([-1.0, 1.0, 2.0], [1, -1, -1], [1, 1, 1], -3.0),  # one error: predict -1 everywhere
        ([-1.0, 1.0, 2.0], [1, -1, -1], [3, 1, 1], 2.0),  # the +1 outweighs both -1: predict +1 everywhere
    ],
)
def test_best_threshold_shift_counts_weighted_errors(decision, y, weight, shift):
    assert best_threshold_shift(np.array(decision), np.array(y), np.array(weight, dtype=float)) == pytest.approx(shift)


def test_weighted_threshold_makes_the_fewest_errors_as_repeated_rows_do():
    rng = np.random.RandomState(0)
    decision, y, weight = rng.standard_normal(40), rng.choice([-1, 1], 40), rng.randint(0, 4, 40)

    def weighted_errors(shift):
        return weight @ ((decision + shift > 0) != (y > 0))

    fewest = min(weighted_errors(-t) for t in [decision.min() - 1, *decision])  # every split of the sorted values
    repeated = np.repeat(np.arange(40), weight)
    assert weighted_errors(best_threshold_shift(decision, y, weight.astype(float))) == fewest
    assert weighted_errors(best_threshold_shift(decision[repeated], y[repeated])) == fewest


def test_subsets_have_r_over_2_examples_per_class_and_partitions_cover_every_example():
    y = np.array([-1] * 30 + [1] * 20)
    rng = np.random.RandomState(0)
    for subset in draw_subsets(y, 4, 16, rng):
        assert len(subset) == 16 and np.sum(y[subset] > 0) == 8 and len(np.unique(subset)) == 16
    parts = draw_subsets(y, 4, None, rng)
    assert_array_equal(np.sort(np.concatenate(parts)), np.arange(50))
    assert all(np.sum(y[p] > 0) == 5 for p in parts)


def _fit(**params):
    return CrossTrainingSVC(LINEAR, random_state=0, **params).fit(CLOUDS.X_train, CLOUDS.y_train)


def test_keeps_accuracy_and_cuts_support_vectors():
    svc = SVC(kernel="linear", C=1.0).fit(CLOUDS.X_train, CLOUDS.y_train)
    xt = _fit()
    error = {name: np.mean(m.predict(CLOUDS.X_test) != CLOUDS.y_test) for name, m in [("svc", svc), ("xt", xt)]}
    assert error["xt"] <= error["svc"] + 0.015
    assert xt.support_counts_["n_sv"] <= 0.5 * support_counts(svc)["n_sv"]


def test_fitted_attributes_and_diagnostics_are_consistent():
    xt = _fit(balance=True)
    d = xt.diagnostics_
    assert d["n_kept"] + d["n_discarded_misclassified"] + d["n_discarded_confident"] == d["n_fit"] == 1500
    assert d["n_kept"] + d["n_reinserted"] == d["n_final_train"] == len(xt.sample_indices_)
    assert d["final_n_neg"] + d["final_n_pos"] == d["n_final_train"]
    assert d["first_stage_fit_time_max_s"] <= d["first_stage_fit_time_sum_s"]
    assert d["first_stage_fit_cpu_max_s"] == max(d["first_stage_fit_cpus_s"])
    assert d["critical_path_cpu_s"] == pytest.approx(
        d["first_stage_fit_cpu_max_s"] + d["margin_cpu_s"] + d["final_search_cpu_s"])
    assert d["critical_path_time_s"] <= d["first_stage_fit_time_sum_s"] + d["margin_time_s"] + d["final_search_time_s"]
    assert len(d["first_stage_n_sv"]) == len(xt.estimators_) == 5
    assert xt.support_counts_ == support_counts(xt.final_estimator_)
    assert np.isin(xt.support_, xt.sample_indices_).all()
    assert_allclose(xt.decision_function(CLOUDS.X_test[:5]), xt.final_estimator_.decision_function(CLOUDS.X_test[:5]))


def test_same_seed_same_support_set():
    assert_array_equal(_fit().support_, _fit().support_)
    other = CrossTrainingSVC(LINEAR, random_state=1).fit(CLOUDS.X_train, CLOUDS.y_train)
    assert not np.array_equal(other.support_, _fit().support_)


def test_parallel_and_serial_first_stages_give_the_same_model():
    serial = CrossTrainingSVC(LINEAR, subset_size=100, random_state=0, n_jobs=1).fit(SMALL.X_train, SMALL.y_train)
    with parallel_config(backend="threading"):  # two workers without the seconds of process start-up
        parallel = CrossTrainingSVC(LINEAR, subset_size=100, random_state=0, n_jobs=2).fit(SMALL.X_train, SMALL.y_train)
    assert_array_equal(serial.support_, parallel.support_)
    assert_allclose(serial.decision_function(SMALL.X_train), parallel.decision_function(SMALL.X_train))


def test_validation_split_thresholds_and_final_grid():
    xt = _fit(subset_size=300, validation_size="auto", threshold="all", final_param_grid={"C": [0.1, 1.0]})
    val = xt.validation_indices_
    assert len(val) == 100  # r / 3
    assert not np.isin(val, np.concatenate(xt.subsets_)).any() and not np.isin(val, xt.sample_indices_).any()
    assert np.isnan(xt.margin_mean_[val]).all()
    assert xt.best_params_["C"] in (0.1, 1.0) and xt.final_estimator_.C == xt.best_params_["C"]
    error = np.mean(xt.predict(CLOUDS.X_train[val]) != CLOUDS.y_train[val])
    assert xt.diagnostics_["final_validation_error"] == pytest.approx(error)


def test_any_base_svm_and_sparse_input():
    nu = CrossTrainingSVC(NuSVC(nu=0.3, gamma=0.1), final_estimator=NuSVC(nu=0.1, gamma=0.1), random_state=0)
    nu.fit(SMALL.X_train, SMALL.y_train)
    assert isinstance(nu.final_estimator_, NuSVC) and nu.final_estimator_.nu == 0.1
    dense = CrossTrainingSVC(LINEAR, random_state=0).fit(SMALL.X_train, SMALL.y_train)
    sparse = CrossTrainingSVC(LINEAR, random_state=0).fit(csr_matrix(SMALL.X_train), SMALL.y_train)
    assert np.mean(dense.predict(SMALL.X_train) == sparse.predict(csr_matrix(SMALL.X_train))) > 0.99


def test_labels_other_than_plus_minus_one():
    y = np.where(SMALL.y_train > 0, "eight", "three")
    xt = CrossTrainingSVC(LINEAR, random_state=0).fit(SMALL.X_train, y)
    assert_array_equal(xt.classes_, ["eight", "three"])
    assert np.mean(xt.predict(SMALL.X_train) == y) > 0.85


class ConstantDecision(ClassifierMixin, BaseEstimator):
    """f(x) = +0.5 everywhere: every -1 is misclassified, every +1 is kept."""

    def fit(self, X, y):
        self.classes_ = np.unique(y)
        return self

    def decision_function(self, X):
        return np.full(X.shape[0], 0.5)


@pytest.mark.parametrize(
    ("params", "match"),
    [
        ({"subset_size": 400}, "subset_size=400 draws 200 examples of class -1"),
        ({"n_subsets": 1}, "'n_subsets' parameter"),
        ({"n_subsets": 200}, "n_subsets=200: a partition into 200 parts"),
        ({"threshold": "final"}, "'threshold' parameter .* must be 'svm' when validation_size=None"),
        ({"final_param_grid": {"C": [1.0]}}, "'final_param_grid' parameter .* must be None when validation_size"),
        ({"estimator": ConstantDecision()}, "0 examples of class -1 and 150 of class 1"),
        ({"validation_size": 0.999}, "validation_size=0.999"),
    ],
)
def test_edge_cases_name_the_parameter(params, match):
    X, y = SMALL.X_train, np.where(np.arange(300) < 150, -1, 1)  # 150 per class
    with pytest.raises(ValueError, match=match):
        CrossTrainingSVC(**{"estimator": LINEAR, **params}).fit(X, y)


def test_multiclass_is_refused():
    with pytest.raises(ValueError, match="Only binary classification"):
        CrossTrainingSVC(LINEAR).fit(SMALL.X_train[:30], np.arange(30) % 3)


def test_bagging_shares_the_first_stage_and_averages_it():
    xt = CrossTrainingSVC(LINEAR, subset_size=100, random_state=0).fit(SMALL.X_train, SMALL.y_train)
    bag = BaggedFirstStageSVC(LINEAR, subset_size=100, random_state=0).fit(SMALL.X_train, SMALL.y_train)
    for a, b in zip(xt.subsets_, bag.subsets_):
        assert_array_equal(a, b)
    decisions = np.array([m.decision_function(SMALL.X_test) for m in bag.estimators_])
    assert_allclose(bag.decision_function(SMALL.X_test), decisions.mean(axis=0))
    svs = np.unique(np.concatenate([s[m.support_] for m, s in zip(bag.estimators_, bag.subsets_)]))
    assert_array_equal(bag.support_, svs)
    counts = bag.support_counts_
    assert counts["n_sv"] == len(svs) and counts["n_bounded_sv"] + counts["n_free_sv"] == len(svs)
    assert counts["n_sv_sum"] == sum(len(m.support_) for m in bag.estimators_)
    vote = BaggedFirstStageSVC(LINEAR, subset_size=100, aggregation="vote", random_state=0).fit(
        SMALL.X_train, SMALL.y_train
    )
    assert_allclose(vote.decision_function(SMALL.X_test), np.sign(decisions).mean(axis=0))


def _relative_allclose(actual, desired, rtol=1e-9):
    assert_allclose(actual, desired, rtol=rtol, atol=rtol * np.abs(desired).max())


def _no_libsvm_evaluation(self, X):
    raise AssertionError("evaluated one row at a time by LIBSVM")


def test_decision_values_by_blocked_expansions_equal_libsvms(monkeypatch):
    X = CLOUDS.X_test[:500]
    xt = CrossTrainingSVC(SVC(gamma=0.2), subset_size=100, validation_size="auto", threshold="all", random_state=0)
    xt.fit(SMALL.X_train, SMALL.y_train)
    first_stage = np.array([m.decision_function(X) for m in xt.estimators_]) + xt.first_stage_shifts_[:, None]
    final = xt.final_estimator_.decision_function(X) + xt.threshold_shift_
    bags = {}
    for aggregation, combine in (("mean", lambda d: d), ("vote", np.sign)):
        bag = BaggedFirstStageSVC(NuSVC(nu=0.3, gamma=0.2), subset_size=100, aggregation=aggregation, random_state=0)
        bag.fit(csr_matrix(SMALL.X_train), SMALL.y_train)
        bags[aggregation] = bag, combine(np.array([m.decision_function(csr_matrix(X)) for m in bag.estimators_]))
    monkeypatch.setattr(SVC, "decision_function", _no_libsvm_evaluation)
    monkeypatch.setattr(NuSVC, "decision_function", _no_libsvm_evaluation)
    _relative_allclose(xt.first_stage_decisions(X), first_stage)
    _relative_allclose(xt.decision_function(X), final)
    for bag, libsvm in bags.values():
        _relative_allclose(bag.decision_function(csr_matrix(X)), libsvm.mean(axis=0))


@pytest.mark.parametrize("Model", [CrossTrainingSVC, BaggedFirstStageSVC])
def test_class_weight_keyed_by_the_users_labels(Model):
    y_named = np.where(SMALL.y_train > 0, "b", "a")
    base = SVC(kernel="linear", class_weight={"a": 1, "b": 3})
    named = Model(base, subset_size=100, random_state=0).fit(SMALL.X_train, y_named)
    signed = Model(SVC(kernel="linear", class_weight={-1: 1, 1: 3}), subset_size=100, random_state=0)
    signed.fit(SMALL.X_train, SMALL.y_train)
    assert base.class_weight == {"a": 1, "b": 3}  # the user's estimator is left as it was
    for model in [*named.estimators_, getattr(named, "final_estimator_", named.estimators_[0])]:
        assert model.class_weight == {-1: 1.0, 1: 3.0}
        assert_array_equal(model.class_weight_, [1.0, 3.0])
    assert_allclose(named.decision_function(CLOUDS.X_test), signed.decision_function(CLOUDS.X_test))


def test_final_param_grid_may_hold_class_weights_keyed_by_the_users_labels():
    y_named = np.where(SMALL.y_train > 0, "b", "a")
    xt = CrossTrainingSVC(LINEAR, validation_size=0.2, final_param_grid={"class_weight": [{"a": 1, "b": 3}]},
                          random_state=0).fit(SMALL.X_train, y_named)
    assert xt.final_estimator_.class_weight == {-1: 1.0, 1: 3.0}
    assert xt.best_params_ == {"class_weight": {"a": 1, "b": 3}}


@pytest.mark.parametrize("Model", [CrossTrainingSVC, BaggedFirstStageSVC])
def test_balanced_class_weight_is_computed_once_on_the_whole_training_set(Model):
    rows = np.concatenate([np.flatnonzero(SMALL.y_train < 0), np.flatnonzero(SMALL.y_train > 0)[:50]])
    X, y = SMALL.X_train[rows], SMALL.y_train[rows]
    expected = SVC(kernel="linear", class_weight="balanced").fit(X, y).class_weight_
    assert expected[0] < 0.8 and expected[1] > 1.4  # the subsets (30 per class) alone would give 1 and 1
    model = Model(SVC(kernel="linear", class_weight="balanced"), subset_size=60, random_state=0).fit(X, y)
    for fitted in [*model.estimators_, getattr(model, "final_estimator_", model.estimators_[0])]:
        assert_allclose(fitted.class_weight_, expected)


@pytest.mark.parametrize("Model", [CrossTrainingSVC, BaggedFirstStageSVC])
def test_unit_sample_weights_change_nothing(Model):
    plain = Model(LINEAR, subset_size=100, random_state=0).fit(SMALL.X_train, SMALL.y_train)
    unit = Model(LINEAR, subset_size=100, random_state=0).fit(SMALL.X_train, SMALL.y_train, sample_weight=np.ones(300))
    assert_array_equal(plain.decision_function(CLOUDS.X_test), unit.decision_function(CLOUDS.X_test))


@pytest.mark.parametrize("Model", [CrossTrainingSVC, BaggedFirstStageSVC])
def test_sample_weights_reach_each_sub_svm_for_its_rows(Model):
    X, y = SMALL.X_train, SMALL.y_train
    weight = np.random.RandomState(0).randint(0, 4, len(y)).astype(float)  # a quarter of the rows weigh 0
    model = Model(LINEAR, subset_size=100, random_state=0).fit(X, y, sample_weight=weight)
    drawn = Model(LINEAR, subset_size=100, random_state=0).fit(X, y).subsets_
    fitted = list(zip(model.estimators_, model.subsets_, drawn))
    if Model is CrossTrainingSVC:
        rows = model.sample_indices_
        fitted.append((model.final_estimator_, rows, rows))
        assert_array_equal(model.support_, rows[model.final_estimator_.support_])
        assert not np.isin(model.support_, np.flatnonzero(weight == 0)).any()
    for sub_svm, rows, drawn_rows in fitted:
        assert_array_equal(rows, drawn_rows[weight[drawn_rows] > 0])  # the same draw, less the rows of weight 0
        reference = clone(LINEAR).fit(X[drawn_rows], y[drawn_rows], sample_weight=weight[drawn_rows])
        assert_allclose(sub_svm.dual_coef_, reference.dual_coef_)  # as SVC treats a weight of 0
        assert_array_equal(sub_svm.support_vectors_, reference.support_vectors_)
    unweighted = Model(LINEAR, subset_size=100, random_state=0).fit(X, y)
    assert not np.allclose(model.decision_function(CLOUDS.X_test), unweighted.decision_function(CLOUDS.X_test))


_SEPARABLE = (
    "the check's 16 rows are separable: cross-training discards all of them as confidently recognized "
    "(Algorithm 3, step 5), leaving no final training set"
)
_DRAWN_FROM_ROWS = (
    "the first-stage subsets are drawn from the rows, so repeating a row changes the draw where an "
    "integer sample_weight does not"
)
EXPECTED_FAILED_CHECKS = {
    CrossTrainingSVC: {
        "check_sample_weights_shape": _SEPARABLE,
        "check_sample_weights_not_overwritten": _SEPARABLE,
        "check_sample_weight_equivalence_on_dense_data": _DRAWN_FROM_ROWS,
        "check_sample_weight_equivalence_on_sparse_data": _DRAWN_FROM_ROWS,
    },
    BaggedFirstStageSVC: {
        "check_sample_weight_equivalence_on_dense_data": _DRAWN_FROM_ROWS,
        "check_sample_weight_equivalence_on_sparse_data": _DRAWN_FROM_ROWS,
    },
}


#: an expected failure of SVC(probability=True) itself (scikit-learn names a check, not its cases)
_PROBA_READONLY = {"check_estimators_pickle": "its readonly_memmap=True case, as SVC(probability=True) itself: "
                   "LIBSVM's predict_proba takes the model's arrays as writable buffers, not a read-only memory map's"}


# Fixed seeds: with random_state=None the sparse checks' random labels let some subset draws leave
# editing with one class, so the checks passed or failed from one run to the next.
# The third has a final SVM with probabilities (predict_proba and predict_log_proba through the checks).
@pytest.mark.filterwarnings("ignore:The `probability` parameter was deprecated:FutureWarning")  # scikit-learn 1.9
@parametrize_with_checks(
    [
        CrossTrainingSVC(n_subsets=2, balance=True, spread="std", random_state=0),
        BaggedFirstStageSVC(n_subsets=2, random_state=0),
        CrossTrainingSVC(n_subsets=2, balance=True, spread="std", final_estimator=SVC(probability=True, random_state=0),
                         random_state=0),
    ],
    expected_failed_checks=lambda estimator: {
        **EXPECTED_FAILED_CHECKS[type(estimator)],
        **(_PROBA_READONLY if getattr(estimator, "final_estimator", None) is not None else {}),
    },
)
def test_sklearn_contract(estimator, check):
    check(estimator)


def test_subset_size_as_a_fraction_draws_that_share_of_the_training_set():
    rng = np.random.default_rng(3)
    X = rng.standard_normal((400, 2))
    y = np.where(X[:, 0] > 0, 1, -1)
    model = CrossTrainingSVC(estimator=SVC(kernel="linear"), subset_size=0.5, random_state=0).fit(X, y)
    assert [len(s) for s in model.subsets_] == [200] * 5
