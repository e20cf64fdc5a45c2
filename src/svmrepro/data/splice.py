"""Rätsch's splice benchmark (cross-training Table 1: 1000 train / 2175 test, RBF SVM).

The pool is the 3175 UCI splice-junction sequences without ambiguous characters (Rätsch's set),
60 nucleotide positions each. Labels follow Rätsch's two-class splice: a splice junction (EI
donor or IE acceptor, 1527 points) is +1, neither (N, 1648 points) is -1.

Each position is one numeric feature, as in Rätsch's 60-feature set. The .mat codes nucleotides
as A=1, T=2, C=3, G=4 (read off the GT donor / AG acceptor motifs, PROVENANCE.md does not say);
which numbers Rätsch gave them is not known to us, so we recode to the alphabetical A=1, C=2,
G=3, T=4 and then standardise every position to mean 0, std 1 over the pool, as Rätsch's
files are (banana.mat is standardised the same way over its 5300 points).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from svmrepro.data.raetsch import RaetschBenchmark, raetsch_file

#: .mat code (index) -> alphabetical code: A=1 -> 1, T=2 -> 4, C=3 -> 2, G=4 -> 3
MAT_TO_ACGT = np.array([0, 1, 4, 2, 3])
NEITHER = 3  # .mat class codes: 1 = EI, 2 = IE, 3 = N


@dataclass(frozen=True)
class Splice(RaetschBenchmark):
    n_train: int = 1000
    n_test: int = 2175

    name = "splice"
    pool_size = 3175
    file = raetsch_file(
        "splice_uci3175.mat",
        "1bf0b5f4cb21365b526c23051844308c923ed09252d2495fb0b2b9e8a0ba3f31",
        "https://raw.githubusercontent.com/jihanwang/BWFS/e9125f2d20903e786efb19b530ef5257da77932a/splice.mat",
    )

    def _pool(self, mat: dict) -> tuple[np.ndarray, np.ndarray]:
        X = MAT_TO_ACGT[mat["X"]].astype(float)
        X = (X - X.mean(axis=0)) / X.std(axis=0)
        return X, np.where(mat["Y"].ravel() == NEITHER, -1, 1)
