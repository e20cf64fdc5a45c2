"""Training-set editing for nearest-neighbour rules (cross-training paper, sec. 2.3).

Three sample selectors, each with ``fit(X, y)`` storing ``sample_indices_`` (the examples kept,
sorted) and ``fit_resample(X, y)`` returning them (the imbalanced-learn protocol, without the
dependency):

- :class:`WilsonEdit`: Wilson's edited nearest-neighbour rule, removes noise;
- :class:`MultiEdit`: Devijver and Kittler's MULTIEDIT (the paper's Algorithm 2), removes the
  examples on the wrong side of the Bayes boundary;
- :class:`Condense`: Hart's CONDENSE, removes the examples far from the boundary.

:class:`EditedSVC` trains a classifier (a SVM, or ``KNeighborsClassifier(1)`` for the classical
edited 1-NN rules) on an editor's output.
"""

from __future__ import annotations

import time
import warnings
from numbers import Integral

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.exceptions import ConvergenceWarning
from sklearn.metrics.pairwise import euclidean_distances
from sklearn.neighbors import KNeighborsClassifier, NearestNeighbors
from sklearn.svm import SVC
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import HasMethods, Interval
from sklearn.utils.metaestimators import available_if
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import _check_sample_weight, check_is_fitted, validate_data

from svmrepro.algorithms.final_model import FinalModelProbabilities, final_model_has, support_vectors
from svmrepro.algorithms.kernel_expansion import decision_values, supports_expansion
from svmrepro.algorithms.parallel import N_JOBS, fit_one
from svmrepro.algorithms.sub_svms import positive_rows
from svmrepro.metrics import support_counts


class _Editor(BaseEstimator):
    """``fit`` stores ``sample_indices_``; subclasses implement ``_select(X, y) -> indices``."""

    def fit(self, X, y):
        self._validate_params()
        X, y = validate_data(self, X, y)
        check_classification_targets(y)
        self.sample_indices_ = np.sort(self._select(X, y))
        return self

    def fit_resample(self, X, y):
        """Fit, then return the kept examples ``(X[sample_indices_], y[sample_indices_])``."""
        X, y = validate_data(self, X, y)
        self.fit(X, y)
        return X[self.sample_indices_], y[self.sample_indices_]


class WilsonEdit(_Editor):
    """Wilson's edited nearest-neighbour rule (ENN).

    Removes every example that the k-NN rule on the other ``n - 1`` examples misclassifies
    (majority vote, ties to the smallest label, as ``KNeighborsClassifier``). Wilson (1972) uses
    k = 3; the paper's sec. 2.3 describes it with the 1-NN rule (``n_neighbors=1``).

    Parameters
    ----------
    n_neighbors : int >= 1, default=3
        k of the k-NN rule.
    n_jobs : int or None, default=None
        Workers of the neighbour search (:class:`sklearn.neighbors.NearestNeighbors`).

    Attributes
    ----------
    sample_indices_ : indices of the examples kept (sorted)

    References
    ----------
    D. L. Wilson. Asymptotic properties of nearest neighbor rules using edited data. IEEE Trans.
    Systems, Man, and Cybernetics 2:408-420, 1972.

    Examples
    --------
    >>> from sklearn.datasets import make_classification
    >>> from svmrepro.algorithms import WilsonEdit
    >>> X, y = make_classification(n_samples=300, random_state=0)
    >>> X_kept, y_kept = WilsonEdit().fit_resample(X, y)
    >>> X_kept.shape
    (272, 20)
    """

    _parameter_constraints: dict = {
        "n_neighbors": [Interval(Integral, 1, None, closed="left")],
        "n_jobs": N_JOBS,
    }

    def __init__(self, n_neighbors=3, *, n_jobs=None):
        self.n_neighbors = n_neighbors
        self.n_jobs = n_jobs

    def _select(self, X, y):
        classes, codes = np.unique(y, return_inverse=True)
        # kneighbors() without X leaves each example out of its own neighbours
        neighbours = NearestNeighbors(n_neighbors=self.n_neighbors, n_jobs=self.n_jobs).fit(X).kneighbors(
            return_distance=False
        )
        votes = np.zeros((len(y), len(classes)), dtype=int)
        np.add.at(votes, (np.arange(len(y))[:, None], codes[neighbours]), 1)
        return np.flatnonzero(votes.argmax(axis=1) == codes)


class MultiEdit(_Editor):
    """MULTIEDIT (Devijver and Kittler 1982, sec. 3.11; the paper's Algorithm 2).

    1. Split the remaining examples at random into ``n_splits`` parts S_1..S_s.
    2. Classify S_i with the 1-NN rule on S_((i+1) mod s); discard the misclassified examples
       (all parts are classified before any is discarded).
    3. Repeat until ``patience`` (the paper's T) successive iterations discard nothing.

    Stops early, with a ``ConvergenceWarning``, after ``max_iter`` iterations or when fewer
    than ``n_splits`` examples remain.

    Parameters
    ----------
    n_splits : int >= 2, default=3
        s, the parts of step 1.
    patience : int >= 1, default=3
        T, the iterations without a discard that end the edit.
    max_iter : int >= 1, default=1000
        Iterations at most.
    random_state : int, RandomState or None, default=None
        Draws the parts.

    Attributes
    ----------
    sample_indices_ : indices of the multi-edited training set
    n_iter_ : iterations run
    history_ : examples remaining after each iteration

    Examples
    --------
    >>> from sklearn.datasets import make_classification
    >>> from svmrepro.algorithms import MultiEdit
    >>> X, y = make_classification(n_samples=300, random_state=0)
    >>> len(MultiEdit(random_state=0).fit(X, y).sample_indices_)
    114
    """

    _parameter_constraints: dict = {
        "n_splits": [Interval(Integral, 2, None, closed="left")],
        "patience": [Interval(Integral, 1, None, closed="left")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "random_state": ["random_state"],
    }

    def __init__(self, n_splits=3, *, patience=3, max_iter=1000, random_state=None):
        self.n_splits = n_splits
        self.patience = patience
        self.max_iter = max_iter
        self.random_state = random_state

    def _select(self, X, y):
        rng = check_random_state(self.random_state)
        remaining = np.arange(len(y))
        self.history_, quiet = [], 0
        while quiet < self.patience:
            if len(self.history_) == self.max_iter or len(remaining) < self.n_splits:
                warnings.warn(
                    f"MultiEdit stopped after {len(self.history_)} iterations with {len(remaining)} examples "
                    f"left, before {self.patience} iterations without a discard (max_iter={self.max_iter}, "
                    f"n_splits={self.n_splits})",
                    ConvergenceWarning,
                )
                break
            splits = np.array_split(rng.permutation(remaining), self.n_splits)
            wrong = []
            for i, part in enumerate(splits):
                reference = splits[(i + 1) % self.n_splits]
                nn = KNeighborsClassifier(n_neighbors=1).fit(X[reference], y[reference])
                wrong.append(part[nn.predict(X[part]) != y[part]])
            wrong = np.concatenate(wrong)
            remaining = np.setdiff1d(remaining, wrong)
            quiet = 0 if len(wrong) else quiet + 1
            self.history_.append(len(remaining))
        self.n_iter_ = len(self.history_)
        return remaining


class Condense(_Editor):
    """Hart's CONDENSE: a subset on which the 1-NN rule classifies the whole training set.

    The store starts with one random example; passes over the other examples (in a random
    order) move every example the 1-NN rule on the store misclassifies into the store, until a
    pass moves none. Each example's nearest store member is updated as the store grows, so a
    pass costs one distance row per example moved.

    Parameters
    ----------
    random_state : int, RandomState or None, default=None
        Draws the first example and the order of the passes.

    Attributes
    ----------
    sample_indices_ : indices of the condensed set (sorted)
    n_iter_ : passes over the training set

    References
    ----------
    P. Hart. The condensed nearest neighbor rule. IEEE Trans. Information Theory 14:515-516, 1968.

    Examples
    --------
    >>> from sklearn.datasets import make_classification
    >>> from svmrepro.algorithms import Condense
    >>> X, y = make_classification(n_samples=300, random_state=0)
    >>> len(Condense(random_state=0).fit(X, y).sample_indices_)
    96
    """

    _parameter_constraints: dict = {"random_state": ["random_state"]}

    def __init__(self, *, random_state=None):
        self.random_state = random_state

    def _select(self, X, y):
        order = check_random_state(self.random_state).permutation(len(y))
        in_store = np.zeros(len(y), dtype=bool)
        nearest_dist = np.full(len(y), np.inf)
        nearest_label = np.empty_like(y)

        def store(i):
            in_store[i] = True
            dist = euclidean_distances(X, X[i : i + 1], squared=True).ravel()
            closer = dist < nearest_dist
            nearest_dist[closer] = dist[closer]
            nearest_label[closer] = y[i]

        store(order[0])
        self.n_iter_, moved = 0, True
        while moved:
            moved = False
            for i in order:
                if not in_store[i] and nearest_label[i] != y[i]:
                    store(i)
                    moved = True
            self.n_iter_ += 1
        return np.flatnonzero(in_store)


class EditedSVC(FinalModelProbabilities, ClassifierMixin, BaseEstimator):
    """A classifier trained on an editor's selection of the training set.

    Parameters
    ----------
    editor : sample selector with ``fit_resample``, default=None
        Cloned; None means ``MultiEdit()``. Its ``random_state``, if it has one left at None,
        is set to this estimator's ``random_state``.
    estimator : classifier, default=None
        Cloned; None means ``SVC()``. ``KNeighborsClassifier(n_neighbors=1)`` gives the edited
        1-NN rules of sec. 2.3.
    random_state : int, RandomState or None, default=None

    Attributes
    ----------
    classes_ : ndarray of the class labels
    editor_ : the fitted editor
    estimator_ : the classifier, fitted on the edited training set
    sample_indices_ : indices into X of the edited training set
    support_ : indices into X of the classifier's support vectors (if it has ``support_``, as SVC)
    support_vectors_ : ndarray of shape (n_sv, n_features)
    n_support_ : ndarray of shape (n_classes,), dtype int32
        Support vectors of each class, in the order of ``classes_``.
    support_counts_ : dict of the classifier's support-vector counts (empty if not a SVM)
    diagnostics_ : dict with ``n_edited``, ``n_removed``, ``edit_time_s``, ``final_fit_time_s``

    Notes
    -----
    ``decision_function``, ``predict_proba`` and ``predict_log_proba`` are the classifier's, where
    it has them (``KNeighborsClassifier`` has probabilities and no decision function).

    Examples
    --------
    >>> from sklearn.datasets import make_classification
    >>> from sklearn.svm import SVC
    >>> from svmrepro.algorithms import EditedSVC, MultiEdit
    >>> X, y = make_classification(n_samples=300, random_state=0)
    >>> model = EditedSVC(MultiEdit(), SVC(C=10.0), random_state=0).fit(X, y)
    >>> model.diagnostics_["n_removed"]  # by MULTIEDIT, of the 300 examples
    186
    >>> model.n_support_
    array([20, 28], dtype=int32)
    """

    _parameter_constraints: dict = {
        "editor": [HasMethods(["fit_resample"]), None],
        "estimator": [HasMethods(["fit", "predict"]), None],
        "random_state": ["random_state"],
    }
    _final_model = "estimator_"  # its predict_proba and predict_log_proba (FinalModelProbabilities)

    def __init__(self, editor=None, estimator=None, *, random_state=None):
        self.editor = editor
        self.estimator = estimator
        self.random_state = random_state

    def fit(self, X, y, sample_weight=None):
        """Edit ``(X, y)``, then fit the classifier on the edited set.

        ``sample_weight`` (non-negative) goes to the classifier only, for the edited rows (those
        of zero weight left out, as SVC leaves them out): the editors are nearest-neighbour rules
        on the rows, unweighted, so an integer weight is not the same as repeating a row.
        """
        self._validate_params()
        X, y = validate_data(self, X, y)
        if sample_weight is not None:
            sample_weight = _check_sample_weight(sample_weight, X, ensure_non_negative=True)
        check_classification_targets(y)
        self.classes_ = np.unique(y)
        self.editor_ = clone(MultiEdit() if self.editor is None else self.editor)
        if self.editor_.get_params().get("random_state", 0) is None:
            self.editor_.set_params(random_state=self.random_state)
        start = time.perf_counter()
        _, y_edit = self.editor_.fit_resample(X, y)
        edit_time = time.perf_counter() - start
        self.sample_indices_ = self.editor_.sample_indices_
        rows = positive_rows(self.sample_indices_, sample_weight)
        lost = np.setdiff1d(self.classes_, y[rows])
        if len(lost):
            raise ValueError(
                f"editor={self.editor_!r} removed every example of class(es) {lost.tolist()}"
                + ("" if sample_weight is None else " of non-zero sample_weight")
            )
        self.estimator_, fit_time, _ = fit_one(
            SVC() if self.estimator is None else self.estimator, X, y, rows, sample_weight=sample_weight
        )
        self.support_counts_ = support_counts(self.estimator_)
        if hasattr(self.estimator_, "support_"):
            self.support_ = rows[self.estimator_.support_]
            self.support_vectors_, self.n_support_ = support_vectors(X, y, self.support_, self.classes_)
        self.diagnostics_ = {
            "n_edited": len(y_edit),
            "n_removed": len(y) - len(y_edit),
            "edit_time_s": edit_time,
            "final_fit_time_s": fit_time,
        }
        return self

    def predict(self, X):
        check_is_fitted(self)
        X = validate_data(self, X, reset=False)
        if len(self.classes_) == 2 and supports_expansion(self.estimator_):
            return self.classes_[(decision_values(self.estimator_, X) > 0).astype(int)]
        return self.estimator_.predict(X)

    @available_if(final_model_has("decision_function", "estimator_", "estimator"))
    def decision_function(self, X):
        """The classifier's decision values, by blocked kernel products for a binary SVM
        (:func:`~svmrepro.algorithms.kernel_expansion.decision_values`)."""
        check_is_fitted(self)
        return decision_values(self.estimator_, validate_data(self, X, reset=False))
