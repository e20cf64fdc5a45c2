"""Data sets that come whole, as one table of rows: svmrepro draws their splits.

A function's ``(X, y)`` (:mod:`.function`), an OpenML data set (:mod:`.openml`) or a CSV or Parquet
file (:mod:`.table`) is one table; :class:`SplitSource` turns it into the training, test and
validation rows of a seed, the same way for each: ``n_train`` and ``n_test`` disjoint rows drawn by
the seed, then ``n_val`` from the rest (an independent draw, so the training and test rows do not
move with ``n_val``). For classification the labels become ``-1/+1`` for two classes (the first in
sorted order is ``-1``) and ``0..k-1`` for more, so labels of any type (strings too) reach the
estimator as numbers; a regression target is taken as floats.
"""

from __future__ import annotations

from abc import abstractmethod
from dataclasses import dataclass

import numpy as np

from svmrepro.data.base import CLASSIFICATION, REGRESSION, Dataset, DatasetSource, check_param, check_rows, rng_for
from svmrepro.errors import DataError

TASKS = (CLASSIFICATION, REGRESSION)


@dataclass(frozen=True, kw_only=True)
class SplitSource(DatasetSource):
    """The split sizes and the task of a data set that comes as one table (subclasses add where from)."""

    n_train: int = 1000
    n_test: int = 1000
    n_val: int = 0
    task: str = CLASSIFICATION

    def __post_init__(self):
        owner = "dataset"
        check_param(owner, "n_train", self.n_train, self.n_train >= 2, "an integer >= 2")
        check_param(owner, "n_test", self.n_test, self.n_test >= 1, "an integer >= 1")
        check_param(owner, "n_val", self.n_val, self.n_val >= 0, "an integer >= 0")
        check_param(owner, "task", self.task, self.task in TASKS, f"one of {', '.join(TASKS)}")

    def sizes(self) -> dict[str, int]:
        return {"n_train": self.n_train, "n_test": self.n_test, "n_val": self.n_val}

    @abstractmethod
    def table(self, seed: int) -> tuple[np.ndarray, np.ndarray]:
        """All rows ``(X, y)`` (``seed`` for a generator: the same seed, the same rows)."""

    @abstractmethod
    def origin(self) -> str:
        """Where the rows come from (a function's dotted path, a URL, a file), as ``svmrepro-data list``,
        MLflow's dataset input and error lines name it."""

    def available_offline(self) -> bool | None:
        """Whether the rows can be had without a download (None: cannot tell)."""
        return True

    def stored_in(self) -> str | None:
        """Where the rows are kept on disk (None: drawn when loaded), as ``svmrepro-data fetch`` says."""
        return None

    def load(self, seed: int) -> Dataset:
        X, y = self.table(seed)
        X, y = self._checked(X, y)
        check_rows(self.sizes(), y.shape[0], f"{self.origin()} has {y.shape[0]} rows")
        rows = rng_for(seed, "split/rows").permutation(y.shape[0])
        train, test = rows[: self.n_train], rows[self.n_train: self.n_train + self.n_test]
        val = None
        if self.n_val:
            rest = rows[self.n_train + self.n_test:]
            val = rng_for(seed, "split/val").choice(rest, size=self.n_val, replace=False)
        return Dataset(
            self.origin(), X[train], y[train], X[test], y[test], source_fingerprint=self.fingerprint(),
            task=self.task, X_val=None if val is None else X[val], y_val=None if val is None else y[val],
        )

    def _checked(self, X, y) -> tuple[np.ndarray, np.ndarray]:
        """``X`` as a 2-d float array and ``y`` as the task's labels, or one line saying what is wrong."""
        try:
            X = np.asarray(X, dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise DataError(f"{self.origin()}: the features are not all numbers ({exc}); "
                            "expected numeric columns besides the label") from None
        y = np.asarray(y)
        if np.isnan(X).any():
            raise DataError(f"{self.origin()}: the features have missing values; expected every value given")
        if X.ndim != 2 or y.ndim != 1 or X.shape[0] != y.shape[0]:
            raise DataError(f"{self.origin()}: expected X of shape (rows, features) and y of shape (rows,), "
                            f"got {X.shape} and {y.shape}")
        if self.task == REGRESSION:
            return X, y.astype(np.float64)
        classes, codes = np.unique(y, return_inverse=True)
        if classes.size < 2:
            raise DataError(f"{self.origin()}: a classification needs two classes or more, got {classes.size}")
        return X, (2 * codes - 1 if classes.size == 2 else codes).astype(np.int64)
