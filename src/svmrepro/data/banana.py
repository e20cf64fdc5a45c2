"""Rätsch's banana benchmark (cross-training Table 1: 400 train / 4900 test, RBF SVM).

``banana.mat`` holds one of Rätsch's realisations (400 + 4900 points, 2 standardised features;
which of his 100 is not recorded). Its 5300 points are the pool; labels 0/1 become -1/+1
(2924 / 2376 points). Seed 0 with the default sizes returns the shipped realisation as it is, so
one run matches Rätsch's split exactly; every other seed (or size) is a stratified draw, see
:mod:`svmrepro.data.raetsch`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from svmrepro.data.raetsch import RaetschBenchmark, raetsch_file

SHIPPED_TRAIN, SHIPPED_TEST = 400, 4900


@dataclass(frozen=True)
class Banana(RaetschBenchmark):
    n_train: int = SHIPPED_TRAIN
    n_test: int = SHIPPED_TEST

    name = "banana"
    pool_size = SHIPPED_TRAIN + SHIPPED_TEST
    file = raetsch_file(
        "banana.mat",
        "d24289d68efa2f4dce5417845194fa84512d2a4742cb45cc8b4faf874c15eb52",
        "https://raw.githubusercontent.com/jasmainak/mv_set/ff0de0d819503c6153714ab26e3bdd604a9a5e45/banana.mat",
    )

    def _pool(self, mat: dict) -> tuple[np.ndarray, np.ndarray]:
        # shipped training points first, so the shipped split is (first 400, last 4900)
        X = np.vstack([mat["xtrain"].T, mat["xtest"].T])
        labels = np.concatenate([mat["ytrain"].ravel(), mat["ytest"].ravel()])
        return X, np.where(labels == 1, 1, -1)

    def _split(self, y: np.ndarray, seed: int) -> tuple[np.ndarray, np.ndarray]:
        if seed == 0 and (self.n_train, self.n_test) == (SHIPPED_TRAIN, SHIPPED_TEST):
            return np.arange(SHIPPED_TRAIN), np.arange(SHIPPED_TRAIN, self.pool_size)
        return super()._split(y, seed)
