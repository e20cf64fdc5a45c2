"""A 2-d problem that two linear pieces solve (SVM mixture, sec. 5.1, Fig. 1).

The paper only says: 10,000 training and 10,000 test examples, two input dimensions, "two
non-linearly separable classes", and that a mixture of two linear SVMs with a linear gater
draws a non-linear surface that fits them (Fig. 1 shows decision surfaces, not the generator).

Our construction: points uniform on ``[-1, 1]^2``; class +1 above the chevron
``x_2 = |x_1| - 1/2``, class -1 below. The chevron is two half-lines meeting at ``(0, -1/2)``,
so a gater that splits on the sign of ``x_1`` plus one linear expert per side classifies
without error, while the best single line (``x_2 = 0``) errs on 1/8 of the square. The area
above the chevron is half the square, so the classes are balanced in expectation.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from svmrepro.data.base import Dataset, DatasetSource, check_memory, check_param, rng_for


@dataclass(frozen=True)
class Toy2d(DatasetSource):
    n_train: int = 10000
    n_test: int = 10000

    name = "toy2d"

    def __post_init__(self):
        owner = "dataset"
        check_param(owner, "n_train", self.n_train, self.n_train >= 2, "an integer >= 2")
        check_param(owner, "n_test", self.n_test, self.n_test >= 1, "an integer >= 1")
        check_memory(self.name, {"n_train": self.n_train, "n_test": self.n_test}, 3)

    @staticmethod
    def _draw(n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        X = rng.uniform(-1.0, 1.0, size=(n, 2))
        y = np.where(X[:, 1] > np.abs(X[:, 0]) - 0.5, 1, -1)
        return X, y

    def load(self, seed: int) -> Dataset:
        X_train, y_train = self._draw(self.n_train, rng_for(seed, "toy2d/train"))
        X_test, y_test = self._draw(self.n_test, rng_for(seed, "toy2d/test"))
        return Dataset(self.name, X_train, y_train, X_test, y_test, source_fingerprint=self.fingerprint())
