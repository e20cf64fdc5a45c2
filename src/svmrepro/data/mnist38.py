"""MNIST 3 vs 8 with swapped labels (cross-training sec. 4.2, Fig. 4).

The standard MNIST split restricted to the digits 3 (+1) and 8 (-1): 11982 training and 1984
test images, 784 pixels scaled to [0, 1]. "Artificial noise was introduced by swapping the
labels of 0%, 5%, 10% and 15% of the examples", training and test alike: ``label_noise``
swaps exactly that fraction of each set, drawn from its own stream so the images and the
``n_train`` subsample do not move with it; the labels before the swap are ``y_*_clean``, so the
error on "the unmodified testing set" can be reported too.

Source: the canonical IDX files, verified by their published sha256. ``shared/data/mnist``
has all of them exactly but the training images, which it holds only as
``mnist_train_images_from_png.npz`` (every pixel within 1 grey level of the original, see its
PROVENANCE.md), and a re-gzipped test-image file (same content, other bytes). Per image file
the loader takes the canonical one when a copy is at hand (data home, or shared/data), else the
offline stand-in, else downloads the canonical one; ``source_checksums`` names the one chosen,
so the fingerprint tells runs on the rebuilt images from runs on the original.
"""

from __future__ import annotations

import gzip
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from svmrepro.data.base import Dataset, DatasetSource, check_param, flip_labels, rng_for, stratified_subsample
from svmrepro.data.files import RemoteFile

URL = "https://ossci-datasets.s3.amazonaws.com/mnist/"
N_TRAIN = 11982  # 6131 threes + 5851 eights


def _canonical(name: str, sha256: str, shared: bool = True) -> RemoteFile:
    return RemoteFile(name, URL + name, sha256, subdir="mnist", shared_name=f"mnist/{name}" if shared else None)


TRAIN_IMAGES = _canonical(
    "train-images-idx3-ubyte.gz", "440fcabf73cc546fa21475e81ea370265605f56be210a4024d2ca8f203523609"
)
TRAIN_LABELS = _canonical(
    "train-labels-idx1-ubyte.gz", "3552534a0a558bbed6aed32b30c495cca23d567ec52cac8be1a0730e8010255c"
)
# shared/data's t10k-images file is the re-gzipped stand-in below, so the canonical one is not looked for there
TEST_IMAGES = _canonical(
    "t10k-images-idx3-ubyte.gz", "8d422c7b0a1c1c79245a5bcf07fe86e33eeafee792b84584aec276f5a2dbc4e6", shared=False
)
TEST_LABELS = _canonical(
    "t10k-labels-idx1-ubyte.gz", "f7ae60f92e00ec6debd23a6088c31dbd2371eca3ffa0defaefb259924204aec6"
)

# offline stand-ins, never downloaded; their URL is the canonical file they replace
TRAIN_IMAGES_REBUILT = RemoteFile(
    "mnist_train_images_from_png.npz", TRAIN_IMAGES.url,
    "6419d4c386b1dc62191a7be1fbb47b053ed0ab334ef1a4dd82f5d59a131f4dde",
    subdir="mnist", shared_name="mnist/mnist_train_images_from_png.npz",
)
TEST_IMAGES_REGZIPPED = RemoteFile(
    "t10k-images-idx3-ubyte.gz", TEST_IMAGES.url,
    "167310007f03058885c7e95e6c0b19c20de5c7fd3031f4cbdadc9014a523d80b",
    subdir="mnist/regzipped", shared_name="mnist/t10k-images-idx3-ubyte.gz",
)


def choose(canonical: RemoteFile, stand_in: RemoteFile) -> RemoteFile:
    """The canonical file if a copy is at hand, else the stand-in if one is, else the canonical (download)."""
    if canonical.available_offline() or not stand_in.available_offline():
        return canonical
    return stand_in


def read_idx(path: Path) -> np.ndarray:
    """An IDX array of unsigned bytes: 4-byte magic (last byte = ndim), ndim big-endian sizes, data."""
    with gzip.open(path, "rb") as handle:
        raw = handle.read()
    ndim = raw[3]
    shape = np.frombuffer(raw, ">u4", count=ndim, offset=4)
    return np.frombuffer(raw, np.uint8, offset=4 + 4 * ndim).reshape(shape)


def read_images(file: RemoteFile) -> np.ndarray:
    path = file.fetch()
    if path.suffix == ".npz":
        with np.load(path) as archive:
            return archive["x_train"]
    return read_idx(path)


def three_vs_eight(images: np.ndarray, labels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    keep = (labels == 3) | (labels == 8)
    X = images[keep].reshape(int(keep.sum()), -1) / 255.0
    return X, np.where(labels[keep] == 3, 1, -1)


@dataclass(frozen=True)
class Mnist38(DatasetSource):
    label_noise: float = 0.0
    n_train: int = N_TRAIN

    name = "mnist38"

    def __post_init__(self):
        ok = isinstance(self.label_noise, (int, float)) and 0 <= self.label_noise < 0.5
        check_param("dataset", "label_noise", self.label_noise, ok, "a fraction in [0, 0.5)")
        ok = isinstance(self.n_train, int) and 2 <= self.n_train <= N_TRAIN
        allowed = f"an integer in [2, {N_TRAIN}] (mnist38 has {N_TRAIN} training images)"
        check_param("dataset", "n_train", self.n_train, ok, allowed)

    def remote_files(self) -> list[RemoteFile]:
        """Train images, train labels, test images, test labels: the files ``load`` reads now."""
        train = choose(TRAIN_IMAGES, TRAIN_IMAGES_REBUILT)
        return [train, TRAIN_LABELS, choose(TEST_IMAGES, TEST_IMAGES_REGZIPPED), TEST_LABELS]

    def source_checksums(self) -> dict[str, str]:
        return {file.name: file.sha256 for file in self.remote_files()}

    def load(self, seed: int) -> Dataset:
        train_images, train_labels, test_images, test_labels = self.remote_files()
        X_train, y_train = three_vs_eight(read_images(train_images), read_idx(train_labels.fetch()))
        X_test, y_test = three_vs_eight(read_images(test_images), read_idx(test_labels.fetch()))
        if self.n_train < N_TRAIN:
            rows = stratified_subsample(y_train, self.n_train, rng_for(seed, "mnist38/subsample"))
            X_train, y_train = X_train[rows], y_train[rows]
        noise = rng_for(seed, "mnist38/noise")
        return Dataset(
            self.name, X_train, flip_labels(y_train, self.label_noise, noise),
            X_test, flip_labels(y_test, self.label_noise, noise), source_fingerprint=self.fingerprint(),
            y_train_clean=y_train, y_test_clean=y_test,
        )
