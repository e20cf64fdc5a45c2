"""Rätsch's splice benchmark (cross-training Table 1: 1000 train / 2175 test, RBF SVM).

The pool is the 3175 UCI splice-junction sequences without ambiguous characters (Rätsch's set),
60 nucleotide positions each. Labels follow Rätsch's two-class splice: a splice junction (EI
donor or IE acceptor, 1527 points) is +1, neither (N, 1648 points) is -1.

``encoding`` says how a position becomes numbers; every column is then standardised to mean 0,
std 1 over the pool, as Rätsch's files are (banana.mat is standardised the same way):

- ``file`` (default): one numeric feature per position, the .mat's own codes A=1, T=2, C=3, G=4
  (read off the GT donor / AG acceptor motifs; PROVENANCE.md does not name them), Rätsch's
  60-feature form;
- ``alphabetical``: one feature per position, A=1, C=2, G=3, T=4;
- ``onehot``: four 0/1 features per position (240 features).

Which codes Rätsch used is not documented; the order changes an RBF SVM's distances and so its
error (cross_training experiment ``table1_splice_encoding`` measures all three).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from svmrepro.data.base import check_param
from svmrepro.data.raetsch import RaetschBenchmark, raetsch_file

#: the .mat's nucleotide codes
FILE_CODES = {"A": 1, "T": 2, "C": 3, "G": 4}
#: .mat code (index) -> alphabetical code: A=1 -> 1, T=2 -> 4, C=3 -> 2, G=4 -> 3
FILE_TO_ALPHABETICAL = np.array([0, 1, 4, 2, 3])
ENCODINGS = ("file", "alphabetical", "onehot")
NEITHER = 3  # .mat class codes: 1 = EI, 2 = IE, 3 = N


def encode(codes: np.ndarray, encoding: str) -> np.ndarray:
    """The .mat's nucleotide codes (points x positions) as features, each standardised over the pool."""
    if encoding == "onehot":
        X = np.concatenate([codes[:, :, None] == code for code in sorted(FILE_CODES.values())], axis=2)
        X = X.reshape(len(codes), -1).astype(float)
    else:
        X = (FILE_TO_ALPHABETICAL[codes] if encoding == "alphabetical" else codes).astype(float)
    std = X.std(axis=0)
    return (X - X.mean(axis=0)) / np.where(std > 0, std, 1.0)


@dataclass(frozen=True)
class Splice(RaetschBenchmark):
    n_train: int = 1000
    n_test: int = 2175
    encoding: str = "file"

    name = "splice"
    pool_size = 3175
    file = raetsch_file(
        "splice_uci3175.mat",
        "1bf0b5f4cb21365b526c23051844308c923ed09252d2495fb0b2b9e8a0ba3f31",
        "https://raw.githubusercontent.com/jihanwang/BWFS/e9125f2d20903e786efb19b530ef5257da77932a/splice.mat",
    )

    def __post_init__(self):
        super().__post_init__()
        check_param("dataset", "encoding", self.encoding, self.encoding in ENCODINGS, f"one of {', '.join(ENCODINGS)}")

    def _pool(self, mat: dict) -> tuple[np.ndarray, np.ndarray]:
        return encode(mat["X"], self.encoding), np.where(mat["Y"].ravel() == NEITHER, -1, 1)
