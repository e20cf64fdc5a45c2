"""Kernel rows on demand, with a least-recently-used cache whose size is counted in samples.

Laskov (1999), sec. 5, trains with "cache size of 5000 samples": a decomposition step needs the
kernel rows of its working set only, K[B, :], so the cache keeps whole rows (one row per
training sample) and evicts the row used longest ago. :class:`KernelCache` counts hits, misses
and kernel evaluations (one per entry computed), which :class:`DecompositionSVR` reports.
"""

from __future__ import annotations

import numpy as np

KERNELS = ("linear", "rbf")


def resolve_gamma(gamma, X: np.ndarray) -> float:
    """``gamma`` as a number; ``"scale"`` and ``"auto"`` as in :class:`sklearn.svm.SVR`."""
    if gamma == "scale":
        variance = X.var()
        return 1.0 / (X.shape[1] * variance) if variance > 0 else 1.0
    if gamma == "auto":
        return 1.0 / X.shape[1]
    return float(gamma)


class KernelColumns:
    """``K(A)[i, j] = k(A[i], B[j])`` for a fixed ``B``: ``a.b`` or ``exp(-gamma |a - b|^2)``.

    ``B``'s transpose and squared norms are kept, so a call costs one matrix product and no
    input checks: the decomposition asks for 20 rows at a time, thousands of times.
    """

    def __init__(self, B: np.ndarray, kernel: str, gamma: float):
        self.kernel, self.gamma = kernel, gamma
        self._BT = np.ascontiguousarray(B.T)
        self._B_sq = np.einsum("ij,ij->i", B, B)

    def __call__(self, A: np.ndarray) -> np.ndarray:
        dots = A @ self._BT
        if self.kernel == "linear":
            return dots
        squared = np.einsum("ij,ij->i", A, A)[:, None] + self._B_sq[None, :] - 2.0 * dots
        return np.exp(-self.gamma * np.maximum(squared, 0.0, out=squared), out=squared)


class KernelCache:
    """Rows K[i, :] of the training kernel matrix, at most ``capacity`` of them kept (LRU).

    Rows live in one preallocated ``(capacity, n)`` array; ``slot_of[i]`` is row i's slot or -1,
    ``stamp[s]`` the request that last used slot s. A request computes all its missing rows in one
    kernel call and evicts the slots with the oldest stamps, never one the request itself uses.
    """

    def __init__(self, X: np.ndarray, kernel: str, gamma: float, capacity: int):
        self.X, self._kernel = X, KernelColumns(X, kernel, gamma)
        n = X.shape[0]
        self.capacity = int(min(capacity, n))
        self._rows = np.empty((self.capacity, n))
        self._slot_of = np.full(n, -1, dtype=np.intp)
        self._owner = np.full(self.capacity, -1, dtype=np.intp)
        self._stamp = np.full(self.capacity, -1, dtype=np.int64)
        self._clock = 0
        self.hits = self.misses = self.kernel_evaluations = 0

    def _compute(self, rows: np.ndarray) -> np.ndarray:
        self.kernel_evaluations += rows.size * self.X.shape[0]
        return self._kernel(self.X[rows])

    def rows(self, index: np.ndarray) -> np.ndarray:
        """K[index, :] as a new ``(len(index), n)`` array; ``index`` holds distinct sample numbers."""
        index = np.asarray(index, dtype=np.intp)
        self._clock += 1
        slots = self._slot_of[index]
        missing = slots < 0
        self.hits += int(np.count_nonzero(~missing))
        self.misses += int(np.count_nonzero(missing))
        self._stamp[slots[~missing]] = self._clock
        new = index[missing]
        if index.size > self.capacity:  # a request larger than the cache: serve it uncached
            out = np.empty((index.size, self.X.shape[0]))
            out[~missing] = self._rows[slots[~missing]]
            out[missing] = self._compute(new)
            return out
        if new.size:
            victims = np.argpartition(self._stamp, new.size - 1)[: new.size]
            evicted = self._owner[victims]
            self._slot_of[evicted[evicted >= 0]] = -1
            self._rows[victims] = self._compute(new)
            self._owner[victims], self._slot_of[new] = new, victims
            self._stamp[victims] = self._clock
            slots[missing] = victims
        return self._rows[slots]

    @property
    def hit_rate(self) -> float:
        requests = self.hits + self.misses
        return self.hits / requests if requests else 0.0
