import numpy as np
import pytest
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC, SVR, NuSVC

from svmrepro.metrics import error_rate, mean_squared_error, support_counts

RNG = np.random.default_rng(0)
X_SEP = np.array([[-2.0, 0.0], [-1.0, 0.5], [-1.5, -1.0], [2.0, 0.0], [1.0, -0.5], [1.5, 1.0]])
Y_SEP = np.array([-1, -1, -1, 1, 1, 1])
X_OVERLAP = RNG.standard_normal((200, 2))
Y_OVERLAP = np.where(X_OVERLAP[:, 0] + 0.8 * RNG.standard_normal(200) > 0, 1, -1)


def test_hard_margin_on_separable_data_has_no_bounded_sv():
    counts = support_counts(SVC(kernel="linear", C=1e6).fit(X_SEP, Y_SEP))
    assert counts["n_bounded_sv"] == 0
    assert counts["n_free_sv"] == counts["n_sv"] >= 2


def test_tiny_c_bounds_every_alpha():
    # with C -> 0, w -> 0 and every point violates the margin, so every alpha_i = C
    model = SVC(kernel="linear", C=1e-6).fit(X_OVERLAP, Y_OVERLAP)
    counts = support_counts(model)
    assert counts["n_sv"] == counts["n_bounded_sv"] >= 2 * min(np.bincount(Y_OVERLAP > 0)) - 2


def test_bounded_count_matches_dual_coefficients_at_c():
    model = SVC(kernel="rbf", C=0.5).fit(X_OVERLAP, Y_OVERLAP)
    expected = int(np.sum(np.isclose(np.abs(model.dual_coef_[0]), 0.5)))
    counts = support_counts(model)
    assert counts["n_bounded_sv"] == expected > 0
    assert counts["n_sv"] == counts["n_bounded_sv"] + counts["n_free_sv"] == model.support_.size


def test_class_weight_scales_the_bound_per_class():
    model = SVC(kernel="rbf", C=0.5, class_weight={-1: 1.0, 1: 3.0}).fit(X_OVERLAP, Y_OVERLAP)
    bound = np.where(Y_OVERLAP[model.support_] > 0, 1.5, 0.5)
    expected = int(np.sum(np.isclose(np.abs(model.dual_coef_[0]), bound)))
    assert support_counts(model)["n_bounded_sv"] == expected


@pytest.mark.parametrize(
    "wrapped",
    [
        GridSearchCV(SVC(kernel="linear"), {"C": [0.1, 1.0]}, cv=3),
        make_pipeline(StandardScaler(), SVC(kernel="linear", C=0.1)),
    ],
)
def test_counts_see_through_search_and_pipelines(wrapped):
    wrapped.fit(X_OVERLAP, Y_OVERLAP)
    assert support_counts(wrapped)["n_sv"] > 0


def test_nu_svc_and_svr_are_counted():
    nu = support_counts(NuSVC(nu=0.5).fit(X_OVERLAP, Y_OVERLAP))
    assert nu["n_bounded_sv"] > 0 and nu["n_sv"] >= 0.5 * len(Y_OVERLAP) - 1  # nu lower-bounds the SV fraction
    y = X_OVERLAP[:, 0] + 0.3 * RNG.standard_normal(200)
    svr = SVR(C=0.1, epsilon=0.01).fit(X_OVERLAP, y)
    expected = int(np.sum(np.isclose(np.abs(svr.dual_coef_[0]), 0.1)))
    assert support_counts(svr)["n_bounded_sv"] == expected


def test_estimators_without_support_vectors_report_nothing():
    from sklearn.linear_model import LogisticRegression

    assert support_counts(LogisticRegression().fit(X_SEP, Y_SEP)) == {}


def test_error_rate_and_mse_closed_form():
    assert error_rate(np.array([1, -1, 1, 1]), np.array([1, 1, 1, -1])) == 0.5
    assert mean_squared_error(np.array([0.0, 1.0, 2.0]), np.array([1.0, 1.0, 0.0])) == pytest.approx(5 / 3)
