"""MNIST 3 vs 8: counts, label noise, and the choice between canonical and rebuilt training images."""

import gzip
import struct

import numpy as np
import pytest

from svmrepro.data import mnist38
from svmrepro.data.files import RemoteFile, sha256_of, shared_data_dir
from svmrepro.data.mnist38 import Mnist38, read_idx
from svmrepro.errors import ConfigError, DataError

SHARED = shared_data_dir()
FOLDER = SHARED / "mnist" if SHARED else None
needs_files = pytest.mark.skipif(
    FOLDER is None or not (FOLDER / "mnist_train_images_from_png.npz").is_file(), reason="shared/data/mnist not present"
)


pytestmark = pytest.mark.usefixtures("offline")


@pytest.fixture(scope="module")
def noisy():
    return Mnist38(label_noise=0.10).load(0)


@needs_files
def test_standard_split_counts(noisy):
    assert noisy.X_train.shape == (11982, 784) and noisy.X_test.shape == (1984, 784)
    assert (noisy.y_train_clean == 1).sum() == 6131 and (noisy.y_train_clean == -1).sum() == 5851  # 3s, 8s
    assert (noisy.y_test_clean == 1).sum() == 1010 and (noisy.y_test_clean == -1).sum() == 974
    assert noisy.X_train.min() == 0.0 and noisy.X_train.max() == 1.0


@needs_files
@pytest.mark.parametrize("noise", [0.0, 0.05, 0.15])
def test_noise_swaps_exactly_the_fraction_and_moves_nothing_else(noise, noisy):
    data = Mnist38(label_noise=noise).load(0)
    assert (data.y_train != data.y_train_clean).sum() == round(noise * 11982)
    assert (data.y_test != data.y_test_clean).sum() == round(noise * 1984)
    np.testing.assert_array_equal(data.X_train, noisy.X_train)
    np.testing.assert_array_equal(data.y_train_clean, noisy.y_train_clean)
    np.testing.assert_array_equal(data.X_test, noisy.X_test)


@needs_files
def test_noise_is_seeded(noisy):
    again, other = Mnist38(label_noise=0.10).load(0), Mnist38(label_noise=0.10).load(1)
    np.testing.assert_array_equal(again.y_train, noisy.y_train)
    np.testing.assert_array_equal(again.y_test, noisy.y_test)
    assert not np.array_equal(other.y_train, noisy.y_train)


@needs_files
def test_subsample_is_stratified_seeded_and_independent_of_noise():
    clean, noisy = Mnist38(n_train=600).load(2), Mnist38(n_train=600, label_noise=0.15).load(2)
    assert clean.X_train.shape == (600, 784)
    assert (clean.y_train == 1).sum() == round(600 * 6131 / 11982)
    np.testing.assert_array_equal(clean.X_train, noisy.X_train)
    np.testing.assert_array_equal(clean.y_train, noisy.y_train_clean)
    assert (noisy.y_train != noisy.y_train_clean).sum() == 90
    assert not np.array_equal(clean.X_train, Mnist38(n_train=600).load(3).X_train)


def write_idx_gz(path, images):
    path.parent.mkdir(parents=True, exist_ok=True)
    header = struct.pack(">4B3I", 0, 0, 8, 3, *images.shape)
    path.write_bytes(gzip.compress(header + images.tobytes(), compresslevel=1))


@needs_files
def test_canonical_train_images_in_the_cache_are_preferred(offline, monkeypatch, noisy):
    assert "mnist_train_images_from_png.npz" in Mnist38().source_checksums()
    rebuilt_fingerprint = Mnist38(label_noise=0.10).fingerprint()
    with np.load(FOLDER / "mnist_train_images_from_png.npz") as archive:
        pixels = archive["x_train"]
    # a stand-in for the canonical file: the same pixels in IDX format, its checksum patched in
    path = offline / "mnist" / "train-images-idx3-ubyte.gz"
    write_idx_gz(path, pixels)
    canonical = RemoteFile(path.name, mnist38.TRAIN_IMAGES.url, sha256_of(path), "mnist")
    monkeypatch.setattr(mnist38, "TRAIN_IMAGES", canonical)
    source = Mnist38(label_noise=0.10)
    assert source.source_checksums()[path.name] == canonical.sha256
    assert "mnist_train_images_from_png.npz" not in source.source_checksums()
    assert source.fingerprint() != rebuilt_fingerprint
    data = source.load(0)
    np.testing.assert_array_equal(data.X_train, noisy.X_train)
    np.testing.assert_array_equal(data.y_train, noisy.y_train)


def test_read_idx_uses_the_header_shape(tmp_path):
    images = np.arange(2 * 3 * 4, dtype=np.uint8).reshape(2, 3, 4)
    write_idx_gz(tmp_path / "tiny.gz", images)
    np.testing.assert_array_equal(read_idx(tmp_path / "tiny.gz"), images)


@pytest.mark.parametrize(
    "params, key",
    [({"label_noise": 0.5}, "label_noise"), ({"label_noise": -0.05}, "label_noise"),
     ({"label_noise": "0.1"}, "label_noise"), ({"n_train": 1}, "n_train"), ({"n_train": 11983}, "n_train")],
)
def test_bad_parameter_names_its_key(params, key):
    with pytest.raises(ConfigError, match=rf"dataset\.{key}="):
        Mnist38(**params)


@needs_files
def test_corrupt_copy_is_refused(offline):
    copy = offline / "mnist" / "train-labels-idx1-ubyte.gz"
    copy.parent.mkdir(parents=True)
    data = bytearray((FOLDER / copy.name).read_bytes())
    data[-1] ^= 0xFF
    copy.write_bytes(bytes(data))
    with pytest.raises(DataError, match="checksum mismatch .*train-labels"):
        Mnist38().load(0)


def test_missing_file_names_file_url_and_directory(tmp_path, monkeypatch, offline):
    monkeypatch.setenv("SVMREPRO_SHARED_DATA", str(tmp_path / "no_shared"))
    assert "train-images-idx3-ubyte.gz" in Mnist38().source_checksums()  # nothing offline: the canonical file
    with pytest.raises(DataError) as error:
        Mnist38().load(0)
    message = str(error.value)
    assert "train-images-idx3-ubyte.gz" in message and mnist38.TRAIN_IMAGES.url in message
    assert str(offline / "mnist") in message
