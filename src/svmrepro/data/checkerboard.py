"""The 2x2 checkerboard of the cascade paper (Wen & Lu 2004, sec. 3.1, Fig. 2, Table 1).

The paper: "The checkerboard divides a 200x200 square into four quadrants. All the points are
uniformly distributed in the square"; four training sets of 5000 positive + 5000 negative
points (problems A1..A4) and "a common test data set" of 10000 + 10000. The coordinates are not
given; we use ``[0, side]^2`` with ``side = 200`` (the RBF kernel, sigma = 31.62, only sees
differences, so the origin does not matter). A point is +1 when it lies in the lower-left or the
upper-right quadrant (its two quadrant indices have even sum), else -1. Each class has exactly
its configured number of points, uniform on its two quadrants.

A1..A4: the training set is drawn by the run's ``seed``, the test set by ``test_seed`` alone, so
every seed shares one test set and problem A_k is ``load(seed=k)`` for four different seeds.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from svmrepro.data.base import Dataset, DatasetSource, check_memory, check_param, rng_for


@dataclass(frozen=True)
class Checkerboard(DatasetSource):
    n_train_per_class: int = 5000
    n_test_per_class: int = 10000
    side: float = 200.0
    test_seed: int = 0

    name = "checkerboard"

    def __post_init__(self):
        owner = "dataset"
        for field in ("n_train_per_class", "n_test_per_class"):
            value = getattr(self, field)
            check_param(owner, field, value, value >= 1, "an integer >= 1")
        check_param(owner, "side", self.side, self.side > 0, "a positive float")
        check_param(owner, "test_seed", self.test_seed, self.test_seed >= 0, "an integer >= 0")
        sizes = {"n_train_per_class": self.n_train_per_class, "n_test_per_class": self.n_test_per_class}
        check_memory(self.name, sizes, 3, rows_per_unit=2)

    def _draw(self, n_per_class: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        y = rng.permutation(np.repeat([-1, 1], n_per_class))
        # a point of class +1 sits in quadrant (q, q), one of class -1 in (q, 1 - q)
        first = rng.integers(0, 2, size=y.shape[0])
        second = np.where(y == 1, first, 1 - first)
        half = self.side / 2
        X = half * (np.column_stack([first, second]) + rng.uniform(size=(y.shape[0], 2)))
        return X, y

    def load(self, seed: int) -> Dataset:
        X_train, y_train = self._draw(self.n_train_per_class, rng_for(seed, "checkerboard/train"))
        X_test, y_test = self._draw(self.n_test_per_class, rng_for(self.test_seed, "checkerboard/test"))
        return Dataset(self.name, X_train, y_train, X_test, y_test, source_fingerprint=self.fingerprint())
