"""The contract every data set follows.

A data set is configured by a small dataclass (one per module, one YAML per class in
``conf/dataset/``): constructing it only stores and checks parameters, so a bad value fails
before anything is read or generated. ``load(seed)`` then returns a :class:`Dataset` with
deterministic splits, and ``fingerprint()`` identifies the data without loading it: it hashes
the class, its parameters and the checksums of its source files (which ``load`` verifies).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np

from svmrepro.errors import ConfigError

CLASSIFICATION = "classification"
REGRESSION = "regression"


@dataclass(frozen=True, eq=False)
class Dataset:
    """Arrays of one realisation of a data set.

    ``y_*_clean`` hold the labels before label noise was applied (``None`` for data sets without
    a label-noise option), so runs can report the error on clean labels. Classification labels are ``-1/+1``
    for two-class problems.
    """

    name: str
    X_train: np.ndarray
    y_train: np.ndarray
    X_test: np.ndarray
    y_test: np.ndarray
    fingerprint: str
    task: str = CLASSIFICATION
    X_val: np.ndarray | None = None
    y_val: np.ndarray | None = None
    y_train_clean: np.ndarray | None = None
    y_test_clean: np.ndarray | None = None
    #: scalar facts about this realisation worth logging (e.g. a generator's Bayes risk)
    info: dict[str, float] = field(default_factory=dict)

    @property
    def n_train(self) -> int:
        return int(self.X_train.shape[0])

    @property
    def n_test(self) -> int:
        return int(self.X_test.shape[0])


class DatasetSource(ABC):
    """A configured data set. Subclasses are frozen dataclasses whose fields are the config.

    Subclasses implement :meth:`load` and, when they read files, :meth:`source_checksums`.
    They validate their fields in ``__post_init__`` with :func:`check_param`.
    """

    #: the ``conf/dataset/<name>.yaml`` option and the MLflow ``dataset`` tag
    name: ClassVar[str]
    task: ClassVar[str] = CLASSIFICATION

    @abstractmethod
    def load(self, seed: int) -> Dataset:
        """Return the realisation drawn by ``seed`` (same seed, same arrays)."""

    def source_checksums(self) -> dict[str, str]:
        """sha256 of each source file, by file name; empty for generated data."""
        return {}

    def params(self) -> dict:
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}

    def fingerprint(self) -> str:
        """sha256 over the class, its parameters and its source files' checksums."""
        payload = {
            "source": f"{type(self).__module__}.{type(self).__qualname__}",
            "params": self.params(),
            "files": self.source_checksums(),
        }
        text = json.dumps(payload, sort_keys=True, default=str)
        return hashlib.sha256(text.encode()).hexdigest()


def check_param(owner: str, name: str, value, ok: bool, allowed: str) -> None:
    """Raise a one-line :class:`ConfigError` naming ``owner.name``, the value and what is allowed."""
    if not ok:
        raise ConfigError(f"{owner}.{name}={value!r} is invalid: expected {allowed}")


def rng_for(seed: int, stream: str) -> np.random.Generator:
    """An independent generator per (seed, purpose), so e.g. label noise does not move the split."""
    digest = hashlib.sha256(stream.encode()).digest()
    return np.random.default_rng([int(seed), int.from_bytes(digest[:8], "little")])


def stratified_subsample(y: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
    """Indices of ``n`` rows of ``y`` drawn without replacement, keeping class proportions."""
    if n > y.shape[0]:
        raise ConfigError(f"cannot draw {n} rows from {y.shape[0]}")
    classes, counts = np.unique(y, return_counts=True)
    quota = np.floor(counts * n / y.shape[0]).astype(int)
    # hand the rows lost to rounding to the classes with the largest remainders
    remainder = counts * n / y.shape[0] - quota
    quota[np.argsort(-remainder, kind="stable")[: n - quota.sum()]] += 1
    picked = [
        rng.choice(np.flatnonzero(y == c), size=q, replace=False) for c, q in zip(classes, quota)
    ]
    return np.sort(np.concatenate(picked))


def flip_labels(y: np.ndarray, fraction: float, rng: np.random.Generator) -> np.ndarray:
    """Copy of two-class ``y`` with exactly ``round(fraction * len(y))`` labels swapped."""
    classes = np.unique(y)
    if classes.size != 2:
        raise ConfigError(f"label noise needs two classes, got {classes.size}")
    noisy = y.copy()
    idx = rng.choice(y.shape[0], size=int(round(fraction * y.shape[0])), replace=False)
    noisy[idx] = np.where(y[idx] == classes[0], classes[1], classes[0])
    return noisy
