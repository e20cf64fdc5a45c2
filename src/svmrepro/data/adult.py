"""UCI Adult in the 123 binary features of LIBSVM's a1a..a9a (cross-training Table 1, "Adult").

Encoding (Platt 1998, as shipped in a9a): each of the 14 attributes becomes a block of one-hot
features, blocks in the column order of ``adult.data``; a ``?`` sets no feature of its block.

======  ==============  ====  ================================================
index   attribute       bins  bin edges (a value v falls in bin #{edges <= v})
======  ==============  ====  ================================================
1-5     age             5     26, 33, 41, 50
6-13    workclass       8     categories in adult.names order
14-18   fnlwgt          5     106648, 158662, 196338, 259873
19-34   education       16
35-39   education-num   5     9, 10, 11, 13
40-46   marital-status  7
47-60   occupation      14
61-66   relationship    6
67-71   race            5
72-73   sex             2
74-75   capital-gain    2     1 (zero / positive)
76-77   capital-loss    2     1 (zero / positive)
78-82   hours-per-week  5     35, 40, 41, 48
83-123  native-country  41
======  ==============  ====  ================================================

Platt's bin edges are not published. Ours are the quintiles of the 32561 rows of ``adult.data``
(where two quintiles coincide, the repeated value gets a bin of its own: education-num
9, 9, 10, 13 -> 9, 10, 11, 13), computed by :func:`quintile_edges`. a9a's rows are
``adult.data``'s in order; on the 543 of them we could read (rows 1-272 and 17043-17313) this
layout and these edges set exactly a9a's features and labels. Only the fnlwgt edges stay
uncertain: a9a pins each to a gap (the first to [106499, 108293]) that holds our quintile.

Sizes: ``n_train`` rows are drawn from ``adult.data`` by the seed, stratified (3185 = a3a's size,
32560 = the paper's a9a count, one short of the file's 32561; a3a itself is one fixed subset,
ours changes with the seed). The test set is the first ``n_test`` records of ``adult.test``:
the paper's 16280 drops the last of its 16281 records, the same for every seed (the missing
record is not documented; Bottou's lasvm-adult test file ends in a label-only line).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from svmrepro.data.base import Dataset, DatasetSource, check_param, rng_for, stratified_subsample
from svmrepro.data.files import RemoteFile

UCI = "https://archive.ics.uci.edu/ml/machine-learning-databases/adult/"
TRAIN = RemoteFile(
    "adult.data", UCI + "adult.data", "5b00264637dbfec36bdeaab5676b0b309ff9eb788d63554ca0a249491c86603d",
    subdir="adult", shared_name="adult/adult.data",
)
TEST = RemoteFile(
    "adult.test", UCI + "adult.test", "a2a9044bc167a35b2361efbabec64e89d69ce82d9790d2980119aac5fd7e9c05",
    subdir="adult", shared_name="adult/adult.test",
)
N_TRAIN_ROWS, N_TEST_ROWS = 32561, 16281

#: the values of each categorical attribute, in adult.names order (= a9a's feature order)
CATEGORIES = {
    "workclass": "Private Self-emp-not-inc Self-emp-inc Federal-gov Local-gov State-gov Without-pay "
    "Never-worked",
    "education": "Bachelors Some-college 11th HS-grad Prof-school Assoc-acdm Assoc-voc 9th 7th-8th 12th "
    "Masters 1st-4th 10th Doctorate 5th-6th Preschool",
    "marital-status": "Married-civ-spouse Divorced Never-married Separated Widowed Married-spouse-absent "
    "Married-AF-spouse",
    "occupation": "Tech-support Craft-repair Other-service Sales Exec-managerial Prof-specialty "
    "Handlers-cleaners Machine-op-inspct Adm-clerical Farming-fishing Transport-moving Priv-house-serv "
    "Protective-serv Armed-Forces",
    "relationship": "Wife Own-child Husband Not-in-family Other-relative Unmarried",
    "race": "White Asian-Pac-Islander Amer-Indian-Eskimo Other Black",
    "sex": "Female Male",
    "native-country": "United-States Cambodia England Puerto-Rico Canada Germany Outlying-US(Guam-USVI-etc) "
    "India Japan Greece South China Cuba Iran Honduras Philippines Italy Poland Jamaica Vietnam Mexico "
    "Portugal Ireland France Dominican-Republic Laos Ecuador Taiwan Haiti Columbia Hungary Guatemala "
    "Nicaragua Scotland Thailand Yugoslavia El-Salvador Trinadad&Tobago Peru Hong Holand-Netherlands",
}
QUINTILE_BINNED = ("age", "fnlwgt", "education-num", "hours-per-week")
ZERO_OR_POSITIVE = ("capital-gain", "capital-loss")
COLUMNS = (
    "age workclass fnlwgt education education-num marital-status occupation relationship race sex "
    "capital-gain capital-loss hours-per-week native-country".split()
)


def read_adult(path, skiprows: int = 0) -> tuple[pd.DataFrame, np.ndarray]:
    """Attributes and -1/+1 labels (``>50K`` is +1; adult.test writes ``>50K.``)."""
    frame = pd.read_csv(path, header=None, names=[*COLUMNS, "income"], skipinitialspace=True, skiprows=skiprows)
    return frame[COLUMNS], np.where(frame["income"].str.rstrip(".") == ">50K", 1, -1)


def quintile_edges(values: np.ndarray) -> np.ndarray:
    """The 4 interior quintiles, made strictly increasing so a repeated quintile gets its own bin."""
    edges = np.quantile(values, [0.2, 0.4, 0.6, 0.8])
    for i in range(1, edges.size):
        edges[i] = max(edges[i], edges[i - 1] + 1)
    return edges


def encode(frame: pd.DataFrame, edges: dict[str, np.ndarray]) -> np.ndarray:
    """The 123 binary features of ``frame``'s rows, block by block in column order."""
    blocks = []
    for column in COLUMNS:
        if column in edges:
            codes, width = np.searchsorted(edges[column], frame[column], side="right"), edges[column].size + 1
        else:
            values = CATEGORIES[column].split()
            codes = frame[column].map({v: i for i, v in enumerate(values)}).fillna(-1).to_numpy(int)
            width = len(values)
        blocks.append((codes[:, None] == np.arange(width)).astype(float))  # code -1 (`?`) sets nothing
    return np.hstack(blocks)


@dataclass(frozen=True)
class Adult(DatasetSource):
    n_train: int = 32560
    n_test: int = 16280

    name = "adult"

    def __post_init__(self):
        ok = isinstance(self.n_train, int) and 2 <= self.n_train <= N_TRAIN_ROWS
        allowed = f"an integer in [2, {N_TRAIN_ROWS}] (adult.data has {N_TRAIN_ROWS} rows)"
        check_param("dataset", "n_train", self.n_train, ok, allowed)
        ok = isinstance(self.n_test, int) and 1 <= self.n_test <= N_TEST_ROWS
        allowed = f"an integer in [1, {N_TEST_ROWS}] (adult.test has {N_TEST_ROWS} rows)"
        check_param("dataset", "n_test", self.n_test, ok, allowed)

    def remote_files(self) -> list[RemoteFile]:
        return [TRAIN, TEST]

    def source_checksums(self) -> dict[str, str]:
        return {file.name: file.sha256 for file in self.remote_files()}

    def load(self, seed: int) -> Dataset:
        train, y_train = read_adult(TRAIN.fetch())
        test, y_test = read_adult(TEST.fetch(), skiprows=1)  # line 1 is "|1x3 Cross validator"
        # the bins come from all of adult.data, so every subset shares a9a's encoding
        edges = {c: quintile_edges(train[c].to_numpy()) for c in QUINTILE_BINNED}
        edges.update({c: np.array([1]) for c in ZERO_OR_POSITIVE})
        rows = stratified_subsample(y_train, self.n_train, rng_for(seed, "adult/train"))
        return Dataset(
            self.name, encode(train.iloc[rows], edges), y_train[rows],
            encode(test.iloc[: self.n_test], edges), y_test[: self.n_test], source_fingerprint=self.fingerprint(),
        )
