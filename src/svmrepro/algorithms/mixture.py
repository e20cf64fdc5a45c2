"""Parallel mixture of SVMs (Collobert, Bengio & Bengio, NIPS 2001, sec. 3).

``M`` SVM experts, each trained on its own part of the training set, combined by a gater network
``w(x)``: ``f(x) = tanh(sum_m w_m(x) s_m(x))`` (eq. 6). The outer loop of sec. 3:

1. split the training set into M random parts of size near N/M;
2. train each expert on its part (in parallel, :func:`svmrepro.algorithms.parallel.fit_each`);
3. with the experts fixed, train the gater on the whole set to minimise eq. (7)
   (:mod:`svmrepro.algorithms.gater`);
4. re-assign each example to the expert of highest ``w_m(x_i)`` that holds fewer than
   ``N/M + c`` examples (:func:`capacity_assign`);
5. repeat from 2 for ``n_iter`` iterations or until the validation error goes up.

``gater="uniform"`` is the paper's "uniform SVM mixture" baseline: ``w_m = 1/M``, experts on the
random parts of step 1, no re-assignment (constant weights carry no information to move examples).

The experts' outputs ``s_m(x)``, needed for every example at every outer iteration, are blocked
kernel expansions (:func:`svmrepro.algorithms.kernel_expansion.decision_values`), not LIBSVM's
one-row-at-a-time ``decision_function``.
"""

from __future__ import annotations

import logging
import time
from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import HasMethods, Interval, StrOptions
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import _check_sample_weight, check_is_fitted, validate_data

from svmrepro.algorithms import gater as gnet
from svmrepro.algorithms.kernel_expansion import decision_values
from svmrepro.algorithms.parallel import N_JOBS, data_on_cluster, fit_each, map_each, task_cpu_time, timed_task
from svmrepro.algorithms.sub_svms import sub_svm, subset_weights
from svmrepro.metrics import support_counts

log = logging.getLogger(__name__)  # progress of long fits, one line per outer iteration


def capacity(n_samples: int, n_experts: int, slack: int) -> int:
    """The largest number of examples an expert may hold: the largest integer ``< N/M + c``."""
    return int(np.ceil(n_samples / n_experts + slack)) - 1


def capacity_assign(weights: np.ndarray, slack: int, order: np.ndarray | None = None) -> np.ndarray:
    """Sec. 3, step 4: each example (in ``order``) goes to its highest-weight expert not yet full.

    An expert is full at :func:`capacity` examples; since ``M * capacity >= N`` every example
    finds a place. Returns the expert index of each row of ``weights`` (n_samples, n_experts).
    """
    n, m = weights.shape
    cap = capacity(n, m, slack)
    ranking = np.argsort(-weights, axis=1, kind="stable")
    counts = np.zeros(m, dtype=int)
    labels = np.empty(n, dtype=int)
    for i in range(n) if order is None else order:
        for expert in ranking[i]:
            if counts[expert] < cap:
                counts[expert] += 1
                labels[i] = expert
                break
    return labels


class _ConstantExpert:
    """Stands in for an expert whose part holds a single class (or nothing): ``s(x) = value``.

    Not a LIBSVM model, so :func:`decision_values` calls its own ``decision_function``."""

    support_ = np.empty(0, dtype=int)

    def __init__(self, value: float):
        self.value = value

    def decision_function(self, X):
        return np.full(len(X), self.value)


def _fit_experts(estimator, X, y, labels, n_experts, n_jobs, sample_weight=None):
    """Step 2: an SVM per part (a constant for a one-class part), each fitted with its rows'
    ``sample_weight``, and the experts' outputs ``s_m(x)`` on every row of ``X``.

    ``labels`` covers the first ``len(labels)`` rows of ``X``, ``y`` and ``sample_weight`` (the
    fitting rows; validation rows may follow). Rows of weight 0 do not count when telling a
    one-class part. Returns experts, wall and CPU fit seconds and parts, and the scores: ``S`` of
    shape (n_samples, M) with each expert's wall and CPU seconds for its column.

    Scoring M experts on all N rows costs about N x (total #SV) kernel values: at Table 1's size it
    outweighs fitting them. Each expert is scored in the task that fitted it, so it is as parallel
    as the fits (one expert per machine) and no expert goes back to the cluster to be scored.
    """
    parts = [np.flatnonzero(labels == k) for k in range(n_experts)]
    counted = parts if sample_weight is None else [idx[sample_weight[idx] > 0] for idx in parts]
    trainable = [k for k, idx in enumerate(counted) if len(np.unique(y[idx])) == 2]
    fits = fit_each(estimator, X, y, [parts[k] for k in trainable], n_jobs, sample_weight, evaluate=decision_values)
    experts = [_ConstantExpert(float(y[idx][0]) if len(idx) else 0.0) for idx in counted]
    times, cpu_times = [0.0] * n_experts, [0.0] * n_experts
    scores = {k: timed_task(decision_values, experts[k], X) for k in set(range(n_experts)) - set(trainable)}
    for k, model, sec, cpu, *scored in zip(trainable, *fits):
        experts[k], times[k], cpu_times[k], scores[k] = model, sec, cpu, scored
    S = np.column_stack([scores[k][0] for k in range(n_experts)])
    return experts, times, cpu_times, parts, (S, [scores[k][1] for k in range(n_experts)],
                                              [scores[k][2] for k in range(n_experts)])


def _scores(experts, X, n_jobs) -> np.ndarray:
    """Decision values ``s_m(x)`` of every expert, shape (n_samples, M)."""
    return np.column_stack(map_each(decision_values, experts, X, n_jobs))


def _weights(params, X, n_experts) -> np.ndarray:
    """``w(x)``: the gater's, or the constant 1/M of the uniform mixture (``params=None``)."""
    return np.full((len(X), n_experts), 1.0 / n_experts) if params is None else gnet.gater_weights(params, X)


class GatedSVMMixture(ClassifierMixin, BaseEstimator):
    """Mixture of SVM experts trained on disjoint parts, combined by a gater (sec. 3).

    Parameters
    ----------
    estimator : SVC-like classifier, default=SVC()
        The expert; cloned for each part.
    n_experts : int, default=2
        M.
    n_hidden : int, default=0
        H, tanh hidden units of the gater; 0 is the linear gater ``softmax(Ax + a)`` (Fig. 1).
    gater : {"mlp", "uniform"}, default="mlp"
        "uniform": constant weights 1/M, one pass, no re-assignment (Table 1's uniform mixture).
    n_iter : int, default=5
        K, outer iterations at most.
    capacity_slack : int, default=1
        c in "fewer than N/M + c examples".
    validation_fraction : float or None, default=None
        Held-out share of the training set: the loop stops when its error goes up (keeping the
        previous model) and the gater stops early on its loss. None: K iterations, fixed epochs.
    early_stopping : bool, default=True
        Stop the outer loop when the validation error goes up (only with a validation set).
    gater_max_epochs, gater_batch_size, gater_learning_rate, gater_patience
        Minibatch Adam on eq. (7); the gater is warm-started across outer iterations.
    n_jobs : int or None
        Workers for the experts (fit and decision values).
    random_state : int, RandomState or None
        Initial parts, gater initialisation, minibatches, validation split, re-assignment order.

    Notes
    -----
    Two classes only (eq. 6 has one output in (-1, 1)). ``classes_[0]`` is -1 and ``classes_[1]``
    +1 for the experts and the gater; a ``class_weight`` of ``estimator`` (a dict keyed by the
    labels of ``y``, or "balanced" counted over the whole training set) is resolved once by
    :func:`svmrepro.algorithms.sub_svms.sub_svm` before the experts are cloned.

    Attributes
    ----------
    classes_ : ndarray of shape (2,)
    experts_ : list of the fitted experts (trained on labels -1/+1)
    gater_ : dict of the gater's arrays (None if uniform)
    assignment_ : the expert of each fitting example
    n_iter_ : outer iterations kept
    diagnostics_ : per-iteration lists and scalar times (see ``fit``)
    support_counts_ : dict
        ``n_sv``, ``n_bounded_sv``, ``n_free_sv`` summed over the experts (their parts are disjoint).
        The model is no single SVM, so it has no ``support_vectors_``.

    Examples
    --------
    >>> from sklearn.datasets import make_classification
    >>> from svmrepro.algorithms import GatedSVMMixture
    >>> X, y = make_classification(n_samples=300, random_state=0)
    >>> model = GatedSVMMixture(n_experts=2, random_state=0).fit(X, y)
    >>> model.n_iter_, model.support_counts_["n_sv"]
    (5, 165)
    """

    _parameter_constraints: dict = {
        "estimator": [HasMethods(["fit", "decision_function"]), None],
        "n_experts": [Interval(Integral, 2, None, closed="left")],
        "n_hidden": [Interval(Integral, 0, None, closed="left")],
        "gater": [StrOptions({"mlp", "uniform"})],
        "n_iter": [Interval(Integral, 1, None, closed="left")],
        "capacity_slack": [Interval(Integral, 1, None, closed="left")],
        "validation_fraction": [Interval(Real, 0, 1, closed="neither"), None],
        "early_stopping": ["boolean"],
        "gater_max_epochs": [Interval(Integral, 1, None, closed="left")],
        "gater_batch_size": [Interval(Integral, 1, None, closed="left")],
        "gater_learning_rate": [Interval(Real, 0, None, closed="neither")],
        "gater_patience": [Interval(Integral, 1, None, closed="left")],
        "n_jobs": N_JOBS,
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        estimator=None,
        *,
        n_experts=2,
        n_hidden=0,
        gater="mlp",
        n_iter=5,
        capacity_slack=1,
        validation_fraction=None,
        early_stopping=True,
        gater_max_epochs=20,
        gater_batch_size=32,
        gater_learning_rate=0.01,
        gater_patience=3,
        n_jobs=None,
        random_state=None,
    ):
        self.estimator = estimator
        self.n_experts = n_experts
        self.n_hidden = n_hidden
        self.gater = gater
        self.n_iter = n_iter
        self.capacity_slack = capacity_slack
        self.validation_fraction = validation_fraction
        self.early_stopping = early_stopping
        self.gater_max_epochs = gater_max_epochs
        self.gater_batch_size = gater_batch_size
        self.gater_learning_rate = gater_learning_rate
        self.gater_patience = gater_patience
        self.n_jobs = n_jobs
        self.random_state = random_state

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        return tags

    def fit(self, X, y, sample_weight=None):
        """Run the outer loop; ``diagnostics_`` lists per iteration ``train_error``,
        ``val_error`` (with a validation set), ``expert_size_min/max``, ``gater_loss``,
        ``expert_time_sum_s`` (1-cpu), ``expert_time_max_s`` (M machines; an expert's time is
        its fit plus its decision values on the fitting and validation rows), ``gater_time_s``, the
        same in CPU seconds (``expert_cpu_sum_s``, ``expert_cpu_max_s``, ``gater_cpu_s``), the same
        errors as scalars ``iter<k>.train_error`` / ``iter<k>.val_error``, and the scalars
        ``time_1cpu_s`` and ``time_parallel_s`` (sum of max expert time + gater time: the critical
        path on M machines, sec. 5.2's "50 cpu"), ``cpu_1cpu_s`` and ``cpu_parallel_s`` (the same
        in CPU seconds).

        ``sample_weight`` goes to each expert for the rows of its part, and weights eq. (7) of the
        gater and the errors (:mod:`svmrepro.algorithms.gater`, "Sample weights")."""
        self._validate_params()
        X, y = validate_data(self, X, y)
        check_classification_targets(y)
        self.classes_ = np.unique(y)
        if len(self.classes_) != 2:
            raise ValueError(
                f"Only binary classification is supported (eq. 6 has one output); got {len(self.classes_)} classes"
            )
        if sample_weight is not None:
            sample_weight = _check_sample_weight(sample_weight, X)
        estimator = sub_svm(self.estimator, X, self.classes_, y)
        y_pm = np.where(y == self.classes_[1], 1.0, -1.0)
        rng = check_random_state(self.random_state)
        gen = np.random.default_rng(rng.randint(2**32 - 1))
        M = self.n_experts
        n_fit = len(y_pm)
        if self.validation_fraction is not None:  # the fitting rows first, then the validation rows
            perm = gen.permutation(len(y_pm))
            n_val = max(1, int(round(self.validation_fraction * len(y_pm))))
            n_fit = len(y_pm) - n_val
            order = np.concatenate([np.sort(perm[n_val:]), np.sort(perm[:n_val])])
            X, y_pm, sample_weight = X[order], y_pm[order], *subset_weights(sample_weight, [order])
        if n_fit < 2 * M:
            raise ValueError(f"n_experts={M} needs at least {2 * M} training examples; got {n_fit}")
        labels = gen.permutation(n_fit) % M  # step 1: random parts of size near N/M
        params = None if self.gater == "uniform" else gnet.init_gater(X.shape[1], M, self.n_hidden, gen)
        diag: dict[str, list] = {}
        best, n_outer = None, 1 if self.gater == "uniform" else self.n_iter
        with data_on_cluster(X, y_pm, sample_weight):  # every iteration's experts read the one copy
            for it in range(n_outer):
                experts, params, weights, row = self._iteration(estimator, X, y_pm, sample_weight, labels, params, gen)
                log.info(
                    "mixture iteration %d/%d: train error %.4f%s, experts %.1f s (slowest %.1f s), gater %.1f s",
                    it + 1, n_outer, row["train_error"], f", validation error {row['val_error']:.4f}"
                    if "val_error" in row else "", row["expert_time_sum_s"], row["expert_time_max_s"],
                    row["gater_time_s"],
                )
                for key, value in row.items():
                    diag.setdefault(key, []).append(value)
                if n_fit < len(y_pm) and self.early_stopping and best is not None and row["val_error"] > best[0]:
                    break  # step 5: validation error went up; keep the previous iteration's model
                best = (row.get("val_error", 0.0), experts, params, labels, it + 1)
                if it + 1 < n_outer:  # step 4 for the next iteration
                    labels = capacity_assign(weights, self.capacity_slack, gen.permutation(n_fit))
        _, self.experts_, self.gater_, self.assignment_, self.n_iter_ = best
        self.diagnostics_ = self._finish_diagnostics(diag)
        self.support_counts_ = self._support_counts()
        return self

    def _iteration(self, estimator, X_all, y_all, sample_weight_all, labels, params, gen):
        """Steps 2 and 3 of one outer iteration; returns experts, gater, w(x) and diagnostics.

        The first ``len(labels)`` rows of ``X_all`` (and ``y_all``, ``sample_weight_all``) are the
        fitting rows, the others the validation rows."""
        M, n = self.n_experts, len(labels)
        experts, times, cpus, parts, (S, score_times, score_cpus) = _fit_experts(
            estimator, X_all, y_all, labels, M, self.n_jobs, sample_weight_all
        )
        sample_weight, val_weight = subset_weights(sample_weight_all, [slice(None, n), slice(n, None)])
        X, y, val = X_all[:n], y_all[:n], None if n == len(y_all) else (X_all[n:], y_all[n:], val_weight)
        S, S_val = (S, None) if val is None else (S[:n], S[n:])
        times = [fit + score for fit, score in zip(times, score_times)]
        cpus = [fit + score for fit, score in zip(cpus, score_cpus)]
        start, start_cpu = time.perf_counter(), task_cpu_time()
        if params is not None:
            params, _ = gnet.train_gater(
                params, X, S, y, max_epochs=self.gater_max_epochs, batch_size=self.gater_batch_size,
                learning_rate=self.gater_learning_rate, rng=gen, patience=self.gater_patience,
                validation=None if val is None else (val[0], S_val, *val[1:]), sample_weight=sample_weight,
            )
        weights = _weights(params, X, M)
        gater_time, gater_cpu = time.perf_counter() - start, task_cpu_time() - start_cpu
        f = gnet.mixture_output(weights, S)
        sizes = [len(p) for p in parts]
        row = {
            "train_error": gnet.sign_error(f, y, sample_weight),
            "expert_size_min": min(sizes), "expert_size_max": max(sizes),
            "gater_loss": float(np.average((f - y) ** 2, weights=sample_weight)),
            "expert_time_sum_s": float(sum(times)), "expert_time_max_s": float(max(times)),
            "gater_time_s": gater_time,
            "expert_cpu_sum_s": float(sum(cpus)), "expert_cpu_max_s": float(max(cpus)),
            "gater_cpu_s": gater_cpu,
        }
        if val is not None:
            f_val = gnet.mixture_output(_weights(params, val[0], M), S_val)
            row["val_error"] = gnet.sign_error(f_val, val[1], val[2])
        return experts, params, weights, row

    @staticmethod
    def _finish_diagnostics(diag):
        out = dict(diag)
        for k, name in ((k, n) for n in ("train_error", "val_error") if n in diag for k in range(len(diag[n]))):
            out[f"iter{k}.{name}"] = diag[name][k]
        out["time_1cpu_s"] = float(sum(diag["expert_time_sum_s"]) + sum(diag["gater_time_s"]))
        out["time_parallel_s"] = float(sum(diag["expert_time_max_s"]) + sum(diag["gater_time_s"]))
        out["cpu_1cpu_s"] = float(sum(diag["expert_cpu_sum_s"]) + sum(diag["gater_cpu_s"]))
        out["cpu_parallel_s"] = float(sum(diag["expert_cpu_max_s"]) + sum(diag["gater_cpu_s"]))
        return out

    def _support_counts(self):
        """Parts are disjoint, so the experts' SV counts add up to distinct training points."""
        totals = {"n_sv": 0, "n_bounded_sv": 0, "n_free_sv": 0}
        for expert in self.experts_:
            for key, value in (support_counts(expert) if not isinstance(expert, _ConstantExpert) else {}).items():
                totals[key] += value
        return totals

    def decision_function(self, X):
        """``f(x)`` of eq. (6), in (-1, 1); positive means ``classes_[1]``."""
        check_is_fitted(self)
        X = validate_data(self, X, reset=False)
        weights = _weights(self.gater_, X, len(self.experts_))
        return gnet.mixture_output(weights, _scores(self.experts_, X, self.n_jobs))

    def predict(self, X):
        positive = self.decision_function(X) >= 0  # checks that the mixture is fitted first
        return self.classes_[positive.astype(int)]
