"""Two Gaussian clouds in d dimensions (cross-training, sec. 4.1, Fig. 3).

Class +1 is centred on ``mean = (1,...,1, 0,...,0)`` (``n_informative`` ones), class -1 on
``-mean``; both are isotropic with standard deviation ``std``. The classes are balanced in
expectation (labels drawn with probability 1/2). The Bayes risk is ``Phi(-|mean| / std)``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.stats import norm

from svmrepro.data.base import Dataset, DatasetSource, check_memory, check_param, rng_for


@dataclass(frozen=True)
class GaussianClouds(DatasetSource):
    n_train: int = 1000
    n_test: int = 10000
    n_features: int = 10
    n_informative: int = 5
    std: float = 2.0

    name = "gaussian_clouds"

    def __post_init__(self):
        owner = "dataset"
        check_param(owner, "n_train", self.n_train, self.n_train >= 2, "an integer >= 2")
        check_param(owner, "n_test", self.n_test, self.n_test >= 1, "an integer >= 1")
        check_param(owner, "n_features", self.n_features, self.n_features >= 1, "an integer >= 1")
        check_param(
            owner, "n_informative", self.n_informative,
            1 <= self.n_informative <= self.n_features, f"an integer in [1, n_features={self.n_features}]",
        )
        check_param(owner, "std", self.std, self.std > 0, "a positive float")
        check_memory(self.name, {"n_train": self.n_train, "n_test": self.n_test}, self.n_features + 1)

    def bayes_risk(self) -> float:
        return float(norm.cdf(-np.sqrt(self.n_informative) / self.std))

    def _draw(self, n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        y = rng.choice(np.array([-1, 1]), size=n)
        mean = np.zeros(self.n_features)
        mean[: self.n_informative] = 1.0
        X = y[:, None] * mean + self.std * rng.standard_normal((n, self.n_features))
        return X, y

    def load(self, seed: int) -> Dataset:
        X_train, y_train = self._draw(self.n_train, rng_for(seed, "gaussian_clouds/train"))
        X_test, y_test = self._draw(self.n_test, rng_for(seed, "gaussian_clouds/test"))
        return Dataset(
            self.name, X_train, y_train, X_test, y_test,
            source_fingerprint=self.fingerprint(), info={"bayes_risk": self.bayes_risk()},
        )
