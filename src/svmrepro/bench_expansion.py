"""Self-benchmark of :mod:`svmrepro.algorithms.kernel_expansion` against LIBSVM's ``decision_function``.

Both terms of the ratio are measured in one ``fit``, on the same fitted model and the same rows,
alternating ``repeats`` times (:func:`svmrepro.bench.median_over_repeats`), so a change of load hits
both alike (``conf/experiment/bench/kernel_expansion.yaml``). Like every self-benchmark it predicts
nothing (:class:`~svmrepro.measures.BenchmarkMixin`).
"""

from __future__ import annotations

import tracemalloc
from numbers import Integral

import numpy as np
from sklearn.base import BaseEstimator, MetaEstimatorMixin, _fit_context, clone
from sklearn.utils._param_validation import HasMethods, Interval
from sklearn.utils.validation import check_random_state, validate_data

from svmrepro.algorithms.kernel_expansion import DEFAULT_BLOCK_BYTES, blas_threads, decision_values, supports_expansion
from svmrepro.bench import median_over_repeats
from svmrepro.measures import BenchmarkMixin
from svmrepro.metrics import support_counts
from svmrepro.timing import timed


def peak_bytes(call) -> int:
    """Peak of the memory Python and numpy allocate while ``call`` runs (tracemalloc)."""
    tracemalloc.start()
    try:
        call()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


class KernelExpansionBenchmark(BenchmarkMixin, MetaEstimatorMixin, BaseEstimator):
    """Decision values of one fitted SVC by LIBSVM and by blocked BLAS products, timed in turn.

    ``fit`` fits a clone of ``estimator`` on ``(X, y)``, draws ``n_eval`` rows of ``X`` (with
    replacement), then ``repeats`` times evaluates the model's decision function on them, first by
    LIBSVM (``estimator_.decision_function``, one row at a time), then by
    :func:`~svmrepro.algorithms.kernel_expansion.decision_values`.

    Parameters
    ----------
    estimator : fitted-to-be binary SVC with a kernel of ``kernel_expansion.KERNELS``
    n_eval : int >= 1, default=60000
        Rows evaluated per timing.
    repeats : int >= 1, default=3
    block_bytes : int >= 8, default=64 MiB
        Memory bound of one block of kernel values.
    random_state : int, RandomState or None
        Draws the evaluated rows.

    Attributes
    ----------
    estimator_ : the fitted SVC
    support_counts_ : dict, those of ``estimator_``
    diagnostics_ : dict
        ``libsvm_s``, ``expansion_s`` (median wall seconds), ``libsvm_cpu_s``, ``expansion_cpu_s``
        (median CPU seconds of this process), ``speedup`` (``libsvm_s / expansion_s``),
        ``max_rel_diff`` (``max |ours - LIBSVM| / max |LIBSVM|``), ``peak_mib`` (tracemalloc
        peak of one expansion), ``n_eval``, ``n_features``, ``blas_threads``, ``repeats``, and the
        per-round series ``libsvm_s_rounds``, ``expansion_s_rounds``.
    """

    _parameter_constraints: dict = {
        "estimator": [HasMethods(["fit", "decision_function"])],
        "n_eval": [Interval(Integral, 1, None, closed="left")],
        "repeats": [Interval(Integral, 1, None, closed="left")],
        "block_bytes": [Interval(Integral, 8, None, closed="left")],
        "random_state": ["random_state"],
    }

    def __init__(self, estimator, *, n_eval=60000, repeats=3, block_bytes=DEFAULT_BLOCK_BYTES, random_state=None):
        self.estimator = estimator
        self.n_eval = n_eval
        self.repeats = repeats
        self.block_bytes = block_bytes
        self.random_state = random_state

    @_fit_context(prefer_skip_nested_validation=False)
    def fit(self, X, y):
        X, y = validate_data(self, X, y)
        self.estimator_ = clone(self.estimator).fit(X, y)
        if not supports_expansion(self.estimator_):
            raise ValueError(
                f"{type(self.estimator_).__name__} fitted here is not a binary LIBSVM model with a kernel the "
                "expansion computes (linear, poly, rbf, sigmoid)"
            )
        self.support_counts_ = support_counts(self.estimator_)
        rows = X[check_random_state(self.random_state).randint(0, len(X), self.n_eval)]
        outputs = {}

        def one_round() -> dict[str, float]:
            outputs["libsvm"], libsvm_s, libsvm_cpu = timed(lambda: self.estimator_.decision_function(rows))
            outputs["ours"], ours_s, ours_cpu = timed(self._expand(rows))
            return {"libsvm_s": libsvm_s, "expansion_s": ours_s, "libsvm_cpu_s": libsvm_cpu,
                    "expansion_cpu_s": ours_cpu}

        medians, rounds = median_over_repeats(one_round, self.repeats)
        libsvm = outputs["libsvm"]
        self.diagnostics_ = {
            **medians,
            "speedup": medians["libsvm_s"] / medians["expansion_s"],
            "max_rel_diff": float(np.max(np.abs(outputs["ours"] - libsvm)) / np.max(np.abs(libsvm))),
            "peak_mib": peak_bytes(self._expand(rows)) / 2**20,
            "n_eval": self.n_eval,
            "n_features": X.shape[1],
            "blas_threads": blas_threads(),
            "repeats": self.repeats,
            "libsvm_s_rounds": rounds["libsvm_s"],
            "expansion_s_rounds": rounds["expansion_s"],
        }
        return self

    def _expand(self, rows):
        return lambda: decision_values(self.estimator_, rows, block_bytes=self.block_bytes)
