"""An OpenML data set by its id, read by :func:`sklearn.datasets.fetch_openml`::

    _target_: svmrepro.data.openml.OpenML
    data_id: 1590            # https://www.openml.org/d/1590 (adult)
    target: null             # the data set's default target column
    n_train: 1000
    n_test: 2000

Downloaded once into ``$SVMREPRO_DATA/openml`` (scikit-learn's cache there); with
``SVMREPRO_OFFLINE=1`` a data set not in that cache fails at once in one line. An OpenML id names one
version of one data set, whose files OpenML never changes (a new version gets a new id) and
scikit-learn checks against OpenML's MD5 when it downloads them: the id and the target in the
fingerprint identify the bytes. Categorical features are one-hot encoded; a missing value is an
error. svmrepro draws the splits (:class:`~svmrepro.data.split.SplitSource`).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.datasets import fetch_openml

from svmrepro.data.base import check_param
from svmrepro.data.files import OFFLINE_ENV, data_home
from svmrepro.data.split import SplitSource
from svmrepro.errors import DataError, first_line


@dataclass(frozen=True, kw_only=True)
class OpenML(SplitSource):
    data_id: int
    target: str | None = None

    name = "openml"

    def __post_init__(self):
        super().__post_init__()
        check_param("dataset", "data_id", self.data_id, self.data_id >= 1, "an OpenML data set id (an integer >= 1)")

    def origin(self) -> str:
        return f"https://www.openml.org/d/{self.data_id}"

    def cache(self) -> Path:
        return data_home() / "openml"

    def stored_in(self) -> str:
        return str(self.cache())

    def available_offline(self) -> bool:
        """Whether scikit-learn's cache holds this data set's description (its first download)."""
        return (self.cache() / "openml.org" / "api" / "v1" / "json" / "data" / f"{self.data_id}.gz").is_file()

    def table(self, seed: int) -> tuple[np.ndarray, np.ndarray]:
        if os.environ.get(OFFLINE_ENV, "") not in ("", "0") and not self.available_offline():
            raise DataError(f"OpenML data set {self.data_id} is not in {self.cache()} and downloads are disabled "
                            f"by {OFFLINE_ENV}: run once online (svmrepro-data fetch <name>)")
        try:
            bunch = fetch_openml(data_id=self.data_id, data_home=str(self.cache()), as_frame=True,
                                 target_column=self.target or "default-target")
        except (OSError, ValueError) as exc:  # no network, an unknown id or target
            raise DataError(f"OpenML data set {self.data_id} cannot be fetched: {first_line(exc)}") from None
        if bunch.target is None or getattr(bunch.target, "ndim", 1) != 1:
            raise DataError(f"OpenML data set {self.data_id} has no single target column: "
                            "expected dataset.target to name one")
        return pd.get_dummies(bunch.data, dtype=float), bunch.target.to_numpy()
