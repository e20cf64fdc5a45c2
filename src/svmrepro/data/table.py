"""A CSV or Parquet file with a label column::

    _target_: svmrepro.data.table.Table
    path: data/my_study.csv   # relative to the config folder (--config-dir) or the current folder
    label: outcome            # the label (or regression target) column
    features: null            # the feature columns; null: every other column
    n_train: 500
    n_test: 1000

pandas reads it (Parquet through pyarrow); svmrepro draws the splits
(:class:`~svmrepro.data.split.SplitSource`). The file's sha256 is in the fingerprint, and ``load``
checks the file still has it, so an edited file is new data, never mixed with runs of the old one.
Constructing the source finds the file and reads its header only (the column names), so a wrong
path or column fails in one line before any data is read.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow.parquet as pq

from svmrepro.data.base import check_param
from svmrepro.data.files import sha256_of, verify
from svmrepro.data.split import SplitSource
from svmrepro.locations import user_config_dirs

#: how each file type is read: its header's column names, and the columns asked for
READERS = {
    ".csv": (lambda path: list(pd.read_csv(path, nrows=0).columns),
             lambda path, columns: pd.read_csv(path, usecols=columns)),
    ".parquet": (lambda path: list(pq.read_schema(path).names),
                 lambda path, columns: pd.read_parquet(path, columns=columns)),
}


@dataclass(frozen=True, kw_only=True)
class Table(SplitSource):
    path: str
    label: str
    features: list[str] | None = None

    name = "table"

    def __post_init__(self):
        super().__post_init__()
        found = self.file
        suffix = found.suffix.lower() if found else Path(self.path).suffix.lower()
        check_param("dataset", "path", self.path, suffix in READERS, "a .csv or .parquet file")
        places = ", ".join(str(folder) for folder in self._folders())
        check_param("dataset", "path", self.path, found is not None, f"a file below one of: {places}")
        columns = READERS[suffix][0](found)
        check_param("dataset", "label", self.label, self.label in columns, f"a column of {found.name}: "
                    f"{', '.join(map(str, columns))}")
        check_param("dataset", "features", self.features,
                    self.features is None or (isinstance(self.features, Sequence) and not isinstance(self.features, str)),
                    "null or a list of column names")
        missing = [name for name in self.features or () if name not in columns or name == self.label]
        check_param("dataset", "features", self.features, not missing,
                    f"columns of {found.name} other than the label (not {missing[0] if missing else ''})")
        object.__setattr__(self, "features", None if self.features is None else list(self.features))

    def _folders(self) -> list[Path]:
        return [*user_config_dirs(), Path.cwd()]

    @cached_property
    def file(self) -> Path | None:
        """The file: the path itself when absolute, else the first config folder (then the current
        folder) that has it."""
        return next((folder / self.path for folder in self._folders() if (folder / self.path).is_file()), None)

    def source_checksums(self) -> dict[str, str]:
        return {self.file.name: self._sha256}

    @cached_property
    def _sha256(self) -> str:
        return sha256_of(self.file)

    def origin(self) -> str:
        return str(self.file)

    def stored_in(self) -> str:
        return str(self.file)

    def table(self, seed: int) -> tuple[np.ndarray, np.ndarray]:
        verify(self.file, self._sha256)  # the bytes the fingerprint was made of
        columns = self.features or [c for c in READERS[self.file.suffix.lower()][0](self.file) if c != self.label]
        frame = READERS[self.file.suffix.lower()][1](self.file, [*columns, self.label])
        return frame[columns].to_numpy(), frame[self.label].to_numpy()
