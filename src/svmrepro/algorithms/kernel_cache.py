"""Kernel rows on demand, with a least-recently-used cache whose size is counted in samples.

Laskov (1999), sec. 5, trains with "cache size of 5000 samples": a decomposition step needs the
kernel rows of its working set only, K[B, :], so the cache keeps whole rows (one row per
training sample) and evicts the row used longest ago. :class:`KernelCache` counts hits, misses
and kernel evaluations (one per entry computed), which :class:`DecompositionSVR` reports.
"""

from __future__ import annotations

import numpy as np
from scipy import sparse
from sklearn.utils.extmath import row_norms

from svmrepro.algorithms.kernel_expansion import kernel_block

KERNELS = ("linear", "rbf")


def resolve_gamma(gamma, X: np.ndarray) -> float:
    """``gamma`` as a number; ``"scale"`` and ``"auto"`` as in :class:`sklearn.svm.SVR`."""
    if gamma == "scale":
        variance = X.multiply(X).mean() - X.mean() ** 2 if sparse.issparse(X) else X.var()
        return 1.0 / (X.shape[1] * variance) if variance != 0 else 1.0
    if gamma == "auto":
        return 1.0 / X.shape[1]
    return float(gamma)


class KernelCache:
    """Rows K[i, :] of the training kernel matrix, at most ``capacity`` of them kept (LRU).

    Rows live in one preallocated ``(capacity, n)`` array, :attr:`table`; ``slot_of[i]`` is row
    i's slot or -1, ``stamp[s]`` the request that last used slot s. A request computes all its
    missing rows in one kernel call (a blocked product,
    :func:`~svmrepro.algorithms.kernel_expansion.kernel_block`) and evicts the slots with the
    oldest stamps, never one the request itself uses; it returns the slots, so a caller reads the
    rows in place instead of copying them.
    """

    def __init__(self, X: np.ndarray, kernel: str, gamma: float, capacity: int):
        self.X, self.kernel, self.gamma = X, kernel, gamma
        self._X_sq = row_norms(X, squared=True)
        n = X.shape[0]
        self.capacity = int(min(capacity, n))
        self.table = np.empty((self.capacity, n))
        self._slot_of = np.full(n, -1, dtype=np.intp)
        self._owner = np.full(self.capacity, -1, dtype=np.intp)
        self._stamp = np.full(self.capacity, -1, dtype=np.int64)
        self._clock = 0
        self.hits = self.misses = self.kernel_evaluations = 0

    def slots(self, index: np.ndarray) -> np.ndarray:
        """Slots s with ``table[s] == K[index[k], :]``; ``index`` holds at most ``capacity``
        distinct sample numbers."""
        index = np.asarray(index, dtype=np.intp)
        if index.size > self.capacity:
            raise ValueError(f"{index.size} rows requested at once from a cache of {self.capacity}")
        self._clock += 1
        slots = self._slot_of[index]
        missing = slots < 0
        n_missing = int(np.count_nonzero(missing))
        self.hits += index.size - n_missing
        self.misses += n_missing
        self._stamp[slots[~missing]] = self._clock
        if n_missing:
            new = index[missing]
            victims = np.argpartition(self._stamp, n_missing - 1)[:n_missing]
            evicted = self._owner[victims]
            self._slot_of[evicted[evicted >= 0]] = -1
            self.kernel_evaluations += n_missing * self.X.shape[0]
            self.table[victims] = kernel_block(
                self.X[new], self.X, kernel=self.kernel, gamma=self.gamma, degree=3, coef0=0.0, sv_sq_norms=self._X_sq
            )
            self._owner[victims], self._slot_of[new] = new, victims
            self._stamp[victims] = self._clock
            slots[missing] = victims
        return slots

    @property
    def hit_rate(self) -> float:
        requests = self.hits + self.misses
        return self.hits / requests if requests else 0.0
