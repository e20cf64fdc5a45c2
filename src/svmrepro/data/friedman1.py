"""Friedman's regression problem #1, as :func:`sklearn.datasets.make_friedman1` draws it.

``y = 10 sin(pi x1 x2) + 20 (x3 - 0.5)^2 + 10 x4 + 5 x5 + noise * N(0, 1)`` with ``x`` uniform on
``[0, 1]^n_features`` (features 6.. are irrelevant). A regression set nobody here tuned on: the
self-benchmark of DecompositionSVR against LIBSVM runs on it beside PVA97NK (bench/svr_vs_libsvm).
"""

from __future__ import annotations

from dataclasses import dataclass

from sklearn.datasets import make_friedman1

from svmrepro.data.base import REGRESSION, Dataset, DatasetSource, check_memory, check_param, rng_for


@dataclass(frozen=True)
class Friedman1(DatasetSource):
    n_train: int = 1000
    n_test: int = 1000
    n_features: int = 10
    noise: float = 1.0

    name = "friedman1"
    task = REGRESSION

    def __post_init__(self):
        owner = "dataset"
        check_param(owner, "n_train", self.n_train, self.n_train >= 2, "an integer >= 2")
        check_param(owner, "n_test", self.n_test, self.n_test >= 1, "an integer >= 1")
        check_param(owner, "n_features", self.n_features, self.n_features >= 5, "an integer >= 5")
        check_param(owner, "noise", self.noise, self.noise >= 0, "a float >= 0")
        check_memory(self.name, {"n_train": self.n_train, "n_test": self.n_test}, self.n_features + 1)

    def _draw(self, n: int, seed: int, split: str):
        state = int(rng_for(seed, f"friedman1/{split}").integers(2**31 - 1))
        return make_friedman1(n_samples=n, n_features=self.n_features, noise=self.noise, random_state=state)

    def load(self, seed: int) -> Dataset:
        X_train, y_train = self._draw(self.n_train, seed, "train")
        X_test, y_test = self._draw(self.n_test, seed, "test")
        return Dataset(
            self.name, X_train, y_train, X_test, y_test, source_fingerprint=self.fingerprint(), task=REGRESSION
        )
