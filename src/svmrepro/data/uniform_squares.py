"""Two classes uniform on overlapping unit squares (cross-training, sec. 2.1, Fig. 1).

The paper: "The class distributions were uniform on a unit square with centers c1 and c2.
Varying the distance between c1 and c2 allows us to control the Bayes risk." Ours: class +1 is
uniform on the unit square centred at ``(+delta/2, 0)``, class -1 on the one centred at
``(-delta/2, 0)``, with equal priors (exactly ``n // 2`` points of class -1 per split).

Both densities are 1 on their squares, so with equal priors the Bayes risk is half the mass
where they overlap: a strip of area ``1 - delta`` for ``0 <= delta <= 1``, hence
``bayes_risk = (1 - delta) / 2`` and ``delta = 1 - 2 * bayes_risk``. The config gives
``bayes_risk``; :attr:`UniformSquares.distance` is the centre distance that produces it. The
Bayes decision boundary is ``x_1 = 0`` (any rule is optimal inside the overlap strip).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from svmrepro.data.base import Dataset, DatasetSource, check_memory, check_param, rng_for


@dataclass(frozen=True)
class UniformSquares(DatasetSource):
    bayes_risk: float = 0.1
    n_train: int = 1000
    n_test: int = 10000

    name = "uniform_squares"

    def __post_init__(self):
        owner = "dataset"
        check_param(
            owner, "bayes_risk", self.bayes_risk,
            isinstance(self.bayes_risk, (int, float)) and 0.0 <= self.bayes_risk <= 0.5,
            "a float in [0, 0.5]",
        )
        check_param(owner, "n_train", self.n_train, self.n_train >= 2, "an integer >= 2")
        check_param(owner, "n_test", self.n_test, self.n_test >= 2, "an integer >= 2")
        check_memory(self.name, {"n_train": self.n_train, "n_test": self.n_test}, 3)

    @property
    def distance(self) -> float:
        """Distance between the two square centres that gives ``bayes_risk``."""
        return 1.0 - 2.0 * self.bayes_risk

    def _draw(self, n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        y = rng.permutation(np.repeat([-1, 1], [n // 2, n - n // 2]))
        X = rng.uniform(-0.5, 0.5, size=(n, 2))
        X[:, 0] += y * self.distance / 2
        return X, y

    def load(self, seed: int) -> Dataset:
        X_train, y_train = self._draw(self.n_train, rng_for(seed, "uniform_squares/train"))
        X_test, y_test = self._draw(self.n_test, rng_for(seed, "uniform_squares/test"))
        return Dataset(
            self.name, X_train, y_train, X_test, y_test,
            source_fingerprint=self.fingerprint(),
            # Steinwart (2004), the paper's eq. (1): #SV / n -> 2 B_K, drawn beside Fig. 1's counts
            info={"bayes_risk": self.bayes_risk, "sv_asymptote_2Bn": 2 * self.bayes_risk * self.n_train},
        )
