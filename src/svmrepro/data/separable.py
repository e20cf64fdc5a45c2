"""Linearly separable data with a known margin (potential SVs, Del Favero et al. 2011).

The slides treat separable, linear problems only and show "a numerical example" in 2-d without
saying how it was drawn. Ours: a hyperplane ``w^T x + b = 0`` with ``w`` uniform on the unit
sphere and ``b = 0`` (it passes through the centre of the data, so the classes are balanced:
exactly ``n // 2`` points of class -1 per split). A point of class ``y`` is a standard Gaussian
conditioned on ``y (w^T x + b) >= margin``, drawn exactly, without rejection: its component
along ``w`` is a truncated normal, the orthogonal part an ordinary Gaussian. So the data are
separable with geometric margin at least ``margin`` (in units of the Gaussian's standard
deviation) for the true hyperplane, which :meth:`Separable.hyperplane` returns.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.stats import truncnorm

from svmrepro.data.base import Dataset, DatasetSource, check_memory, check_param, rng_for

# the truncation point sits this far (relatively) above `margin`, so that rounding in X @ w
# (~1e-15) can never bring a point below it
_ROUNDING_SLACK = 1e-9


@dataclass(frozen=True)
class Separable(DatasetSource):
    n_train: int = 200
    n_test: int = 1000
    n_features: int = 2
    margin: float = 0.1

    name = "separable"

    def __post_init__(self):
        owner = "dataset"
        check_param(owner, "n_train", self.n_train, self.n_train >= 2, "an integer >= 2")
        check_param(owner, "n_test", self.n_test, self.n_test >= 2, "an integer >= 2")
        check_param(owner, "n_features", self.n_features, self.n_features >= 1, "an integer >= 1")
        check_param(owner, "margin", self.margin, 0 <= self.margin <= 10, "a float in [0, 10]")
        check_memory(self.name, {"n_train": self.n_train, "n_test": self.n_test}, self.n_features + 1)

    def hyperplane(self, seed: int) -> tuple[np.ndarray, float]:
        """The true ``(w, b)`` of realisation ``seed``, with ``|w| = 1``."""
        w = rng_for(seed, "separable/hyperplane").standard_normal(self.n_features)
        return w / np.linalg.norm(w), 0.0

    def _draw(self, n: int, w: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        y = rng.permutation(np.repeat([-1, 1], [n // 2, n - n // 2]))
        lower = self.margin * (1 + _ROUNDING_SLACK) + _ROUNDING_SLACK
        along = truncnorm.rvs(lower, np.inf, size=n, random_state=rng)
        G = rng.standard_normal((n, self.n_features))
        X = G - np.outer(G @ w, w) + np.outer(y * along, w)
        return X, y

    def load(self, seed: int) -> Dataset:
        w, _ = self.hyperplane(seed)
        X_train, y_train = self._draw(self.n_train, w, rng_for(seed, "separable/train"))
        X_test, y_test = self._draw(self.n_test, w, rng_for(seed, "separable/test"))
        return Dataset(self.name, X_train, y_train, X_test, y_test, source_fingerprint=self.fingerprint())
