"""KDD Cup 1998 "PVA97NK" subset (9686 rows x 28 fields) as a regression on the gift, Laskov-style.

The full cup98LRN.txt of :mod:`svmrepro.data.kddcup98` (Laskov 1999, sec. 5) could not be found
offline; this processed subset of it (every responder and as many non-responders, 28 renamed
fields; see ``shared/data/kdd98_pva97nk/PROVENANCE.md``) stands in, preprocessed the same way:

- Target: TargetD, the gift in dollars; 0 for non-responders (cup98LRN's coding; empty here).
- Features: the paper drops character fields, so we drop the letter-coded DemGender,
  DemHomeOwner and StatusCat96NK, and DemCluster, a nominal code (cup98LRN's character field
  CLUSTER); ID, TargetB and TargetD are not features. :data:`FEATURES` are the 21 left.
- Missing values are 0, as in kddcup98: GiftAvgCard36 is empty exactly where GiftCntCard36 is 0,
  and DemAge already uses 0 for an unknown age in some rows.
- Features and target are scaled to [0, 1] over all rows; then ``n_train`` and ``n_test``
  disjoint rows are drawn by the seed, and ``n_val`` validation rows from the others (an
  independent draw: the training and test rows do not move with ``n_val``).
- ``n_features`` keeps the first k of :data:`FEATURES` (file order), as Laskov's Table 2 keeps
  the first 50 of cup98LRN's 400; None keeps all 21.

No public URL serves this file as its origin: it is read, verified, from ``shared/data`` or the
data home; the URL in the missing-file message is the pinned public copy it was taken from.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

import numpy as np

from svmrepro.data.base import REGRESSION, Dataset, DatasetSource, check_param, check_rows, rng_for
from svmrepro.data.files import RemoteFile
from svmrepro.data.kddcup98 import check_sizes, draw_rows, unit_scale

SOURCE = RemoteFile(
    "KDD98_PVA97NK.csv",
    "https://raw.githubusercontent.com/agnesyuchuan/Python-Pandas/"
    "551e36ca1013a7d6f6c6f0709c2876cd66abb426/KDD98.csv",
    "000737357188e795d68cddb2e9a56d081d3d3ec7dc37ac552d795c1cf5e33b58",
    "kdd98_pva97nk",
    "kdd98_pva97nk/KDD98_PVA97NK.csv",
)
N_ROWS = 9686
TARGET = "TargetD"
FEATURES = (
    "DemAge", "DemMedHomeValue", "DemMedIncome", "DemPctVeterans", "GiftCnt36", "GiftCntAll",
    "GiftCntCard36", "GiftCntCardAll", "GiftAvg36", "GiftAvgAll", "GiftAvgCard36", "GiftAvgLast",
    "GiftTimeFirst", "GiftTimeLast", "PromCnt12", "PromCnt36", "PromCntAll", "PromCntCard12",
    "PromCntCard36", "PromCntCardAll", "StatusCatStarAll",
)


@dataclass(frozen=True)
class Kdd98Pva97nk(DatasetSource):
    n_train: int = 500
    n_test: int = 1000
    n_val: int = 0
    n_features: int | None = None

    name = "kdd98_pva97nk"
    task = REGRESSION

    def __post_init__(self):
        check_sizes(self.name, self.n_train, self.n_test, N_ROWS)
        check_param("dataset", "n_val", self.n_val, isinstance(self.n_val, int) and self.n_val >= 0, "an integer >= 0")
        check_rows({"n_train": self.n_train, "n_test": self.n_test, "n_val": self.n_val}, N_ROWS,
                   f"{self.name} has {N_ROWS} rows")
        k = self.n_features
        check_param("dataset", "n_features", k, k is None or (isinstance(k, int) and 1 <= k <= len(FEATURES)),
                    f"null or an integer from 1 to {len(FEATURES)}")

    def remote_files(self) -> list[RemoteFile]:
        return [SOURCE]

    def source_checksums(self) -> dict[str, str]:
        return {SOURCE.name: SOURCE.sha256}

    def load(self, seed: int) -> Dataset:
        features = list(FEATURES[: self.n_features])
        table = pd.read_csv(SOURCE.fetch(download=False), usecols=[*features, TARGET], dtype="float64")
        X, y = unit_scale(table[features].to_numpy()), unit_scale(table[TARGET].to_numpy())
        train, test = draw_rows(y.shape[0], self.n_train, self.n_test, rng_for(seed, "kdd98_pva97nk/rows"))
        val = None
        if self.n_val:
            rest = np.setdiff1d(np.arange(y.shape[0]), np.concatenate([train, test]))
            val = rng_for(seed, "kdd98_pva97nk/val").choice(rest, size=self.n_val, replace=False)
        return Dataset(
            self.name, X[train], y[train], X[test], y[test], source_fingerprint=self.fingerprint(), task=REGRESSION,
            X_val=None if val is None else X[val], y_val=None if val is None else y[val],
        )
