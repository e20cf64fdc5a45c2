"""Rätsch's benchmark sets (banana, splice): where the files come from and how a realisation is drawn.

Rätsch, Onoda and Müller (2001) publish each benchmark as one pool of points plus 100 (splice:
20) train/test index sets, the "realisations" of cross-training Table 1. Those index sets are
not available offline (``shared/data/raetsch/PROVENANCE.md``), so a realisation here is a
stratified draw of ``n_train`` points from the pool, and ``n_test`` of the rest, made by the seed.

No canonical download exists (the combined ``benchmarks.mat`` is not reachable offline), so the
files are never downloaded: the loader reads the copy in the data home or in ``shared/data``,
verified by its sha256, and names the pinned source URL when neither is there.
"""

from __future__ import annotations

from abc import abstractmethod
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
import scipy.io

from svmrepro.data.base import Dataset, DatasetSource, check_param, rng_for, stratified_subsample
from svmrepro.data.files import RemoteFile


def raetsch_file(name: str, sha256: str, source_url: str) -> RemoteFile:
    return RemoteFile(name, source_url, sha256, subdir="raetsch", shared_name=f"raetsch/{name}")


@dataclass(frozen=True)
class RaetschBenchmark(DatasetSource):
    """A pool of points split into ``n_train`` training and ``n_test`` test points per seed."""

    n_train: int
    n_test: int

    file: ClassVar[RemoteFile]
    pool_size: ClassVar[int]

    def __post_init__(self):
        ok_train = isinstance(self.n_train, int) and 2 <= self.n_train < self.pool_size
        check_param(
            "dataset", "n_train", self.n_train, ok_train,
            f"an integer in [2, {self.pool_size - 1}] ({self.name} has {self.pool_size} points)",
        )
        rest = self.pool_size - self.n_train
        ok_test = isinstance(self.n_test, int) and 1 <= self.n_test <= rest
        check_param(
            "dataset", "n_test", self.n_test, ok_test,
            f"an integer in [1, {rest}] ({self.name}'s {self.pool_size} points minus n_train)",
        )

    def remote_files(self) -> list[RemoteFile]:
        return [self.file]

    def source_checksums(self) -> dict[str, str]:
        return {self.file.name: self.file.sha256}

    @abstractmethod
    def _pool(self, mat: dict) -> tuple[np.ndarray, np.ndarray]:
        """All ``pool_size`` points and their -1/+1 labels, from the loaded .mat variables."""

    def _split(self, y: np.ndarray, seed: int) -> tuple[np.ndarray, np.ndarray]:
        rng = rng_for(seed, f"{self.name}/split")
        train = stratified_subsample(y, self.n_train, rng)
        rest = np.setdiff1d(np.arange(y.shape[0]), train)
        return train, rest[stratified_subsample(y[rest], self.n_test, rng)]

    def load(self, seed: int) -> Dataset:
        X, y = self._pool(scipy.io.loadmat(self.file.fetch(download=False)))
        train, test = self._split(y, seed)
        return Dataset(self.name, X[train], y[train], X[test], y[test], source_fingerprint=self.fingerprint())
