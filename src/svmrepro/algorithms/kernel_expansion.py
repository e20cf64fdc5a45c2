"""Kernel expansions ``f(x) = sum_i a_i K(x, sv_i) + b`` by blocked matrix products.

LIBSVM's ``decision_function`` (and so scikit-learn's SVC and SVR) evaluates one test row at a time
against every support vector, on one core. The same values come out of one BLAS matrix product per
block of test rows: ``K(X_block, SV) @ a``, with the kernel applied elementwise to
``X_block @ SV.T``. Blocks are small enough to stay in the processor's cache between the product,
the kernel and the sum, and are spread over as many threads as BLAS may use (each block's BLAS on
one thread: numpy releases the GIL in both), so the elementwise kernel runs on every core too.
Memory is bounded by ``threads x block_rows x n_sv`` float64 values at once.

Every svmrepro estimator's ``decision_function`` / ``predict`` and the algorithms' inner evaluations
(cross-training's margins, the mixture's expert outputs, the bagged vote, the cascade's final SVM)
go through :func:`decision_values`.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from numbers import Real

import numpy as np
from scipy import sparse
from sklearn.utils.extmath import row_norms, safe_sparse_dot
from threadpoolctl import ThreadpoolController

#: kernels computed here; anything else (``precomputed``, a callable) falls back to the model's own
KERNELS = ("linear", "poly", "rbf", "sigmoid")

#: default bound on one block of kernel values, in bytes (the block is ``rows x n_sv`` float64):
#: a few blocks at once fit a processor's last-level cache
DEFAULT_BLOCK_BYTES = 4 * 2**20

_BLAS = ThreadpoolController().select(user_api="blas")


def blas_threads() -> int:
    """Threads BLAS may use now (the largest pool; 1 inside a worker whose BLAS is limited)."""
    return max([pool.num_threads for pool in _BLAS.lib_controllers] or [1])


def _dense_rows(X) -> np.ndarray:
    return X.toarray() if sparse.issparse(X) else X


def kernel_block(X, SV, *, kernel: str, gamma: float, degree: int, coef0: float, sv_sq_norms=None) -> np.ndarray:
    """``K(X, SV)`` of shape (n_rows, n_sv) in float64, LIBSVM's kernel definitions:

    linear ``<x, s>``; poly ``(gamma <x, s> + coef0)^degree``; rbf ``exp(-gamma |x - s|^2)``;
    sigmoid ``tanh(gamma <x, s> + coef0)``.
    """
    dots = np.asarray(_dense_rows(safe_sparse_dot(X, SV.T, dense_output=True)), dtype=np.float64)
    if kernel == "linear":
        return dots
    if kernel == "poly":
        return (gamma * dots + coef0) ** degree
    if kernel == "sigmoid":
        return np.tanh(gamma * dots + coef0)
    if sv_sq_norms is None:
        sv_sq_norms = row_norms(SV, squared=True)
    # -gamma |x - s|^2 = 2 gamma <x, s> - gamma |x|^2 - gamma |s|^2, at most 0 (rounding can make
    # it positive for a support vector itself)
    dots *= 2.0 * gamma
    dots -= gamma * row_norms(X, squared=True)[:, None]
    dots -= gamma * sv_sq_norms[None, :]
    np.minimum(dots, 0.0, out=dots)
    return np.exp(dots, out=dots)


def block_rows(n_sv: int, block_bytes: int = DEFAULT_BLOCK_BYTES) -> int:
    """Test rows per block so that one block of kernel values stays within ``block_bytes``."""
    return max(1, int(block_bytes // (8 * max(n_sv, 1))))


def kernel_expansion(
    X,
    support_vectors,
    coef,
    intercept: float | np.ndarray = 0.0,
    *,
    kernel: str = "rbf",
    gamma: float = 1.0,
    degree: int = 3,
    coef0: float = 0.0,
    block_bytes: int = DEFAULT_BLOCK_BYTES,
    n_threads: int | None = None,
) -> np.ndarray:
    """``K(X, SV) @ coef.T + intercept`` block by block.

    ``coef`` is ``(n_sv,)`` or ``(n_outputs, n_sv)``; the result is ``(n_rows,)`` or
    ``(n_rows, n_outputs)``. ``X`` and ``support_vectors`` may be dense or scipy sparse. Blocks
    go to ``n_threads`` threads (None: as many as BLAS may use now), each block's BLAS on one;
    the values do not depend on it.
    """
    if kernel not in KERNELS:
        raise ValueError(f"kernel={kernel!r} is not one of {', '.join(KERNELS)}")
    coef = np.asarray(coef, dtype=np.float64)
    flat = coef.ndim == 1
    coef = np.atleast_2d(coef)
    SV = support_vectors if sparse.issparse(support_vectors) else np.asarray(support_vectors, dtype=np.float64)
    if not sparse.issparse(X):
        X = np.asarray(X, dtype=np.float64)
    n = X.shape[0]
    out = np.empty((n, coef.shape[0]), dtype=np.float64)
    sv_sq = row_norms(SV, squared=True) if kernel == "rbf" else None
    step = block_rows(SV.shape[0], block_bytes)

    def expand(start: int) -> None:
        stop = min(start + step, n)
        K = kernel_block(X[start:stop], SV, kernel=kernel, gamma=gamma, degree=degree, coef0=coef0, sv_sq_norms=sv_sq)
        out[start:stop] = K @ coef.T

    starts = range(0, n, step)
    threads = min(len(starts), blas_threads() if n_threads is None else n_threads)
    if threads <= 1:
        for start in starts:
            expand(start)
    else:
        with _BLAS.limit(limits=1), ThreadPoolExecutor(threads) as pool:
            list(pool.map(expand, starts))
    out += np.asarray(intercept, dtype=np.float64)
    return out[:, 0] if flat else out


def fitted_gamma(model) -> float:
    """The numeric gamma a fitted LIBSVM model used.

    ``gamma="scale"`` / ``"auto"`` are resolved at fit time from the training data, and
    scikit-learn keeps the number only as ``_gamma`` (no public attribute): the one private read
    here, checked against ``decision_function`` by the tests.
    """
    gamma = model.get_params()["gamma"]
    return float(gamma) if isinstance(gamma, Real) else float(model._gamma)


def supports_expansion(model) -> bool:
    """A fitted binary (or regression) LIBSVM-like model with a kernel computed here."""
    params = model.get_params() if hasattr(model, "get_params") else {}
    return (
        params.get("kernel") in KERNELS
        and hasattr(model, "support_vectors_")
        and hasattr(model, "dual_coef_")
        and hasattr(model, "intercept_")
        and np.shape(model.dual_coef_)[0] == 1
    )


def _searched(model):
    """The model a fitted search (``GridSearchCV``, nested or not) predicts with, else ``model``."""
    while hasattr(model, "best_estimator_"):
        model = model.best_estimator_
    return model


def decision_values(model, X, *, block_bytes: int = DEFAULT_BLOCK_BYTES) -> np.ndarray:
    """``model.decision_function(X)`` (``predict`` for an SVR) by blocked matrix products.

    ``model`` is a fitted binary SVC / NuSVC, an SVR / NuSVR, or any estimator exposing
    ``support_vectors_``, ``dual_coef_`` of shape (1, n_sv), ``intercept_`` and SVC's kernel
    parameters. Anything else (a precomputed or callable kernel, a multi-class model, a model of
    another kind) is evaluated by its own ``decision_function``. A fitted search
    (``GridSearchCV``) is evaluated through its ``best_estimator_``.
    """
    model = _searched(model)
    if not supports_expansion(model):
        return model.decision_function(X)
    params = model.get_params()
    coef = model.dual_coef_.toarray() if sparse.issparse(model.dual_coef_) else np.asarray(model.dual_coef_)
    return kernel_expansion(
        X,
        model.support_vectors_,
        coef[0],
        float(np.ravel(model.intercept_)[0]),
        kernel=params["kernel"],
        gamma=fitted_gamma(model) if params["kernel"] != "linear" else 1.0,
        degree=int(params.get("degree", 3)),
        coef0=float(params.get("coef0", 0.0)),
        block_bytes=block_bytes,
    )


def predict(model, X) -> np.ndarray:
    """``model.predict(X)`` with the decision values of :func:`decision_values`.

    A binary classifier predicts ``classes_[1]`` where the decision value is positive, a regressor
    the value itself; any other model (a pipeline, a multi-class or non-LIBSVM model) predicts by
    its own ``predict``. The runner scores every run through this, so plain LIBSVM baselines and
    svmrepro's estimators are evaluated by the same kernel expansions.
    """
    unwrapped = _searched(model)
    if not supports_expansion(unwrapped):
        return model.predict(X)
    values = decision_values(unwrapped, X)
    return unwrapped.classes_[(values > 0).astype(int)] if hasattr(unwrapped, "classes_") else values
