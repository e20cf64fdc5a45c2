"""Forest CoverType (UCI covtype: 581012 rows, 54 features, classes 1..7) as two-class problems.

``problem`` picks the paper's protocol (it is not called ``task``: that is the class attribute
saying classification or regression); sizes and ``scale`` left ``None`` take that protocol:

- ``2_vs_rest``: mixture (Collobert et al. 2001, sec. 5.2, Table 1): class 2 is +1, the other
  six -1; 100000 train / 10000 validation / 50000 test rows; "each [feature] normalized by
  dividing by the maximum found on the training set" (``scale="train_max"``: column-wise max of
  ``|x|`` over the training split, all-zero columns left as they are). Cross-training Table 1
  ("Forest", 50000/90000/200000 train, 58100 test) names no task: it is this one with
  ``n_val=0, n_test=58100`` (see ``conf/dataset/covtype.yaml``).
- ``6_vs_7`` and ``4_vs_5``: cascade problems A5 and A6 (Wen & Lu 2004, Table 2): only those two
  classes, the first one +1; ``ceil(count / 2)`` of each class to training, the rest to test;
  raw features (``scale="none"``: their sigma = 100 is on the unscaled attributes).

Splits are stratified (:func:`stratified_subsample`), disjoint, drawn by the seed, and in random
order. The data is read from UCI's ``covtype.data.gz`` in the data home when it is there, else
from the six gzip parts in ``shared/data/covtype``, else downloaded; every file is verified, and
so is the decompressed text. The parsed table is cached in the data home as ``.npy``, keyed by
the checksum of that text, so only the first load parses; the cache is verified against the
table's own checksum on every load, and rebuilt when it does not match.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import logging
from dataclasses import dataclass
from math import ceil
from pathlib import Path

import numpy as np
import pandas as pd

from svmrepro.data.base import (
    Dataset, DatasetSource, array_sha256, check_param, check_rows, rng_for, stratified_subsample,
)
from svmrepro.data.files import RemoteFile, atomic_write, data_home
from svmrepro.errors import DataError

log = logging.getLogger(__name__)

URL = "https://archive.ics.uci.edu/ml/machine-learning-databases/covtype/covtype.data.gz"
#: UCI's file; scikit-learn's fetch_covtype checks the same sha256 on its mirror of it
CANONICAL = RemoteFile(
    "covtype.data.gz", URL, "614360d0257557dd1792834a85a1cdebfadc3c4f30b011d56afee7ffb5b15771", "covtype"
)
#: the offline copy: covtype.data in six gzip parts (shared/data/covtype/PROVENANCE.md)
PARTS = tuple(
    RemoteFile(f"covtype.data.part0{i}.gz", URL, sha256, "covtype", f"covtype/covtype.data.part0{i}.gz")
    for i, sha256 in enumerate((
        "8077d32385f968e85c5cc9ccd1aa36d702b4cb1e95bfc2fb9ffa0ce6ca9560d4",
        "febeeeb3c827c236127422924bb8745fac8b91fbadb48bcf0740856d44ce8469",
        "9be3d213f08593e605a89a293cee6864c1eb6908c472d5d70187b22ad6c30dc2",
        "15a8f49acd0dc95b92848bdb817c1fa106bff9fd30f21e2f6c18eb6e8f4f54c2",
        "1a744e011c0f5c660f2652388037400b4fc8c97d8b89037f2c94fff6e9ee6b42",
        "2d6df0efabca8fb00fc9aa89c1def5363d6c541aba0a5dd4d9c6b622d028d904",
    ))
)
#: sha256 of the decompressed covtype.data, whichever files it came from; it keys the cache
CONTENT_SHA256 = "0a9371cef7c964b5475d6053cc3e0894a5aa6f65ad1ed3ecb01c45aa96217945"
#: :func:`~svmrepro.data.base.array_sha256` of the parsed table (int32, 581012 x 55): the cache
#: must hash to it, so an edited cache is never used
TABLE_SHA256 = "896ff361cb687b018c74460de0bbab45a6b00aecdc66029f88a5bb426d1128f7"
#: rows of each class in covtype.data (UCI's counts)
CLASS_COUNTS = {1: 211840, 2: 283301, 3: 35754, 4: 2747, 5: 9493, 6: 17367, 7: 20510}
#: problem -> (classes labelled +1, classes labelled -1)
PROBLEMS = {"2_vs_rest": ((2,), (1, 3, 4, 5, 6, 7)), "6_vs_7": ((6,), (7,)), "4_vs_5": ((4,), (5,))}
SCALES = ("none", "train_max")


def _halves(problem: str) -> tuple[int, int, int]:
    counts = [CLASS_COUNTS[c] for group in PROBLEMS[problem] for c in group]
    return sum(ceil(c / 2) for c in counts), 0, sum(c // 2 for c in counts)


#: problem -> ((n_train, n_val, n_test), scale) of its paper
PROTOCOLS = {
    "2_vs_rest": ((100_000, 10_000, 50_000), "train_max"),
    "6_vs_7": (_halves("6_vs_7"), "none"),
    "4_vs_5": (_halves("4_vs_5"), "none"),
}


def source_files() -> list[RemoteFile]:
    """What a parse reads: UCI's gz when cached, else the shared parts if all are there, else the gz."""
    if not CANONICAL.cached_path().exists() and all(part.available_offline() for part in PARTS):
        return list(PARTS)
    return [CANONICAL]


def parse(files: list[RemoteFile]) -> np.ndarray:
    """covtype.data from verified ``files`` (gzip members, in order) as an int32 array (rows, 55)."""
    raw = b"".join(gzip.decompress(f.fetch().read_bytes()) for f in files)
    actual = hashlib.sha256(raw).hexdigest()
    if actual != CONTENT_SHA256:
        names = ", ".join(f.name for f in files)
        raise DataError(
            f"covtype.data decompressed from {names}: expected sha256 {CONTENT_SHA256}, got {actual}"
        )
    table = pd.read_csv(io.BytesIO(raw), header=None, dtype=np.int32, engine="c").to_numpy()
    return np.ascontiguousarray(table)  # C order: the cache then hashes without a copy


def cached_table(cache: Path) -> np.ndarray | None:
    """The table in ``cache`` if it hashes to :data:`TABLE_SHA256`; else None, after one warning line."""
    try:
        table = np.load(cache, allow_pickle=False)
        actual = array_sha256({"table": table})
    except (OSError, ValueError, EOFError) as exc:  # unreadable, truncated or not an .npy
        actual = f"unreadable ({exc})"
    if actual == TABLE_SHA256:
        return table
    log.warning(
        "covtype cache %s is not the parsed covtype.data (sha256 %s, expected %s): rebuilding it "
        "from the verified source files", cache, actual, TABLE_SHA256,
    )
    return None


def load_table() -> np.ndarray:
    """The whole of covtype.data (label in the last column), parsed once, then from the cache.

    The cache is a derived file, so it is verified like a source file: a cache that does not
    hash to :data:`TABLE_SHA256` is rebuilt from the verified sources, and a parse that does not
    (a parser that reads the verified text differently) is an error naming the files.
    """
    cache = data_home() / "covtype" / f"covtype-{CONTENT_SHA256[:16]}.npy"
    if cache.exists() and not cache.is_file():  # refused before the parse, which could not be kept
        raise DataError(f"covtype cache {cache} is not a file: remove it (svmrepro writes the parsed table there)")
    table = cached_table(cache) if cache.is_file() else None
    if table is not None:
        return table
    files = source_files()
    table = parse(files)
    actual = array_sha256({"table": table})
    if actual != TABLE_SHA256:
        raise DataError(
            f"covtype table parsed from {', '.join(f.name for f in files)}: expected sha256 "
            f"{TABLE_SHA256}, got {actual}"
        )
    try:
        with atomic_write(cache) as out:
            np.save(out, table)
    except OSError as exc:  # a full disk, a read-only data home: the table is right, the cache is not kept
        raise DataError(f"cannot write the covtype cache {cache}: {exc.strerror or exc}") from None
    return table


def disjoint_draws(y: np.ndarray, sizes, rng: np.random.Generator) -> list[np.ndarray]:
    """One index array per size: stratified on ``y``, pairwise disjoint, each in random order."""
    free = np.arange(y.shape[0])
    draws = []
    for n in sizes:
        picked = free[stratified_subsample(y[free], n, rng)]
        draws.append(rng.permutation(picked))
        free = np.setdiff1d(free, picked, assume_unique=True)
    return draws


@dataclass(frozen=True)
class CovType(DatasetSource):
    problem: str = "2_vs_rest"
    n_train: int | None = None
    n_val: int | None = None
    n_test: int | None = None
    scale: str | None = None

    name = "covtype"

    def __post_init__(self):
        owner = "dataset"
        check_param(owner, "problem", self.problem, self.problem in PROBLEMS, f"one of {', '.join(PROBLEMS)}")
        check_param(
            owner, "scale", self.scale, self.scale is None or self.scale in SCALES,
            f"null (the problem's protocol) or one of {', '.join(SCALES)}",
        )
        for key, low in (("n_train", 2), ("n_val", 0), ("n_test", 1)):
            value = getattr(self, key)
            check_param(
                owner, key, value, value is None or (isinstance(value, int) and value >= low),
                f"null (the problem's protocol) or an integer >= {low}",
            )
        rows = sum(CLASS_COUNTS[c] for group in PROBLEMS[self.problem] for c in group)
        sizes = dict(zip(("n_train", "n_val", "n_test"), self.sizes()))
        check_rows(sizes, rows, f"covtype problem {self.problem} has {rows} rows")

    def sizes(self) -> tuple[int, int, int]:
        """(n_train, n_val, n_test), ``None`` replaced by the problem's protocol."""
        given = (self.n_train, self.n_val, self.n_test)
        return tuple(p if n is None else n for n, p in zip(given, PROTOCOLS[self.problem][0]))

    def scaling(self) -> str:
        return PROTOCOLS[self.problem][1] if self.scale is None else self.scale

    def source_checksums(self) -> dict[str, str]:
        return {"covtype.data": CONTENT_SHA256}

    def remote_files(self) -> list[RemoteFile]:
        return source_files()

    def load(self, seed: int) -> Dataset:
        table = load_table()
        positive, negative = PROBLEMS[self.problem]
        rows = np.flatnonzero(np.isin(table[:, -1], positive + negative))
        y = np.where(np.isin(table[rows, -1], positive), 1, -1)
        draws = disjoint_draws(y, self.sizes(), rng_for(seed, f"covtype/{self.problem}"))
        X = [table[rows[idx], :-1].astype(np.float64) for idx in draws]
        if self.scaling() == "train_max":
            top = np.abs(X[0]).max(axis=0)
            X = [x / np.where(top == 0, 1, top) for x in X]
        (X_train, X_val, X_test), (y_train, y_val, y_test) = X, [y[idx] for idx in draws]
        has_val = y_val.size > 0
        return Dataset(
            self.name, X_train, y_train, X_test, y_test, source_fingerprint=self.fingerprint(),
            X_val=X_val if has_val else None, y_val=y_val if has_val else None,
        )
