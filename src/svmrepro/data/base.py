"""The contract every data set follows.

A data set is configured by a small dataclass (one per module, one YAML per class in
``conf/dataset/``): constructing it only stores and checks parameters, so a bad value fails
before anything is read or generated. ``load(seed)`` then returns a :class:`Dataset` with
deterministic splits, and ``fingerprint()`` identifies the data without loading it: it hashes
the class, its parameters and the checksums of its source files (which ``load`` verifies). A
loaded :class:`Dataset`'s own ``fingerprint`` adds the bytes of every array the estimator sees,
so two realisations that differ in any value never share one.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import typing
from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import ClassVar

import numpy as np

from svmrepro.data.memory import memory_limit
from svmrepro.errors import ConfigError

CLASSIFICATION = "classification"
REGRESSION = "regression"


def array_sha256(arrays: Mapping[str, np.ndarray], prefix: str = "") -> str:
    """sha256 over ``prefix`` and each array's name, dtype, shape and bytes (in C order)."""
    digest = hashlib.sha256(prefix.encode())
    for name, array in arrays.items():
        digest.update(f"/{name}:{array.dtype.str}:{array.shape}/".encode())
        digest.update(np.ascontiguousarray(array).data)
    return digest.hexdigest()


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
    #: :meth:`DatasetSource.fingerprint` of the source that drew these arrays
    source_fingerprint: str
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

    @cached_property
    def fingerprint(self) -> str:
        """sha256 over the source's fingerprint, the task and every array the estimator sees."""
        arrays = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        return array_sha256(
            {name: value for name, value in arrays.items() if isinstance(value, np.ndarray)},
            f"{self.source_fingerprint}/{self.task}",
        )


class DatasetSource(ABC):
    """A configured data set. Subclasses are frozen dataclasses whose fields are the config.

    Subclasses implement :meth:`load` and, when they read files, :meth:`source_checksums`.
    They validate their fields in ``__post_init__`` with :func:`check_param` (and their sizes with
    :func:`check_rows`), trusting the types :meth:`check_types` checked in a config beforehand.
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

    @classmethod
    def check_types(cls, config: Mapping, owner: str = "dataset") -> None:
        """Refuse a config value whose type is not its field's annotation (``n_train=2.5``,
        ``std=abc``) in one line, before the constructor compares it with anything."""
        hints = typing.get_type_hints(cls)
        for f in dataclasses.fields(cls):
            if f.name in config:
                allowed = _allowed(hints[f.name])
                if allowed is not None and not allowed[0](config[f.name]):
                    check_param(owner, f.name, config[f.name], False, allowed[1])

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


#: (test, wording) per annotated type; an int is a valid float, a bool is neither
_TYPES = {
    int: (lambda v: isinstance(v, int) and not isinstance(v, bool), "an integer"),
    float: (lambda v: isinstance(v, (int, float)) and not isinstance(v, bool), "a number"),
    bool: (lambda v: isinstance(v, bool), "true or false"),
    str: (lambda v: isinstance(v, str), "a string"),
}


def _allowed(hint) -> tuple | None:
    """(test, wording) of a field annotation: a plain type of ``_TYPES`` or one of them or None."""
    if hint in _TYPES:
        return _TYPES[hint]
    args = typing.get_args(hint)
    rest = [a for a in args if a is not type(None)]
    if len(args) == 2 and len(rest) == 1 and rest[0] in _TYPES:
        test, wording = _TYPES[rest[0]]
        return (lambda v: v is None or test(v)), f"{wording} or null"
    return None


def check_rows(sizes: Mapping[str, int], available: int, why: str) -> None:
    """Refuse split sizes (config key -> rows) adding up to more than ``available`` rows in one
    line naming the largest key, its room and ``why`` (the data set and its count), before any data
    is read or drawn."""
    total = sum(sizes.values())
    if total > available:
        key = max(sizes, key=sizes.get)
        room = max(available - (total - sizes[key]), 0)
        others = ", ".join(f"{k}={v}" for k, v in sizes.items() if k != key)
        beside = f" with {others}" if others else ""
        raise ConfigError(f"dataset.{key}={sizes[key]} is invalid: expected at most {room}{beside}: {why}")


def check_memory(dataset: str, sizes: Mapping[str, int], values_per_row: int, rows_per_unit: int = 1) -> None:
    """:func:`check_rows` of a generated data set: its float64 rows of ``values_per_row`` values
    (label included) must fit in half of the memory this process may use (:func:`memory_limit`: the
    machine's, its cgroup's limit or what its RLIMIT_AS leaves, the smallest), since its draws need
    about twice the arrays; beyond that it would die allocating them. ``rows_per_unit``: rows per
    unit of the size keys (2 for sizes per class of two classes)."""
    limit = memory_limit()
    if limit is None:
        return
    available = limit.bytes // 2 // (8 * values_per_row * rows_per_unit)
    unit = " per class" if rows_per_unit > 1 else ""
    check_rows(sizes, available, f"{dataset} fits {available} rows{unit} of {values_per_row} values in half of "
                                 f"{limit.what}")


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
