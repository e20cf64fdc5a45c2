import shutil

import numpy as np
import pandas as pd
import pytest

from svmrepro.data import kdd98_pva97nk
from svmrepro.data.base import REGRESSION
from svmrepro.data.files import RemoteFile, data_home, sha256_of
from svmrepro.data.kdd98_pva97nk import FEATURES, SOURCE, Kdd98Pva97nk
from svmrepro.errors import ConfigError, DataError

REAL = SOURCE.shared_path()
needs_real = pytest.mark.skipif(REAL is None, reason="shared/data/kdd98_pva97nk/KDD98_PVA97NK.csv is not present")


@needs_real
def test_real_file_preprocessed_like_laskov():
    data = Kdd98Pva97nk(n_train=5000, n_test=4686).load(seed=0)
    assert data.task == REGRESSION and data.X_train.shape == (5000, 21) and data.X_test.shape == (4686, 21)
    X, y = np.vstack([data.X_train, data.X_test]), np.concatenate([data.y_train, data.y_test])
    assert np.all(np.isfinite(X)) and X.min() == 0 and X.max() == 1
    np.testing.assert_array_equal(X.min(axis=0), 0)  # every column spans [0, 1] over the whole file
    np.testing.assert_array_equal(X.max(axis=0), 1)
    assert (y == 0).sum() == 4843 and y.max() == 1  # the non-responders' gift is 0


@needs_real
def test_features_are_the_numeric_fields_with_missing_values_as_zero():
    raw = pd.read_csv(REAL)
    numeric = set(raw.select_dtypes("number").columns)
    assert set(FEATURES) == numeric - {"ID", "TargetB", "TargetD", "DemCluster"}
    assert (raw["GiftAvgCard36"].isna() == (raw["GiftCntCard36"] == 0)).all()  # "no card gift" reads as 0


@needs_real
def test_same_seed_same_rows_other_seed_other_rows():
    source = Kdd98Pva97nk(n_train=300, n_test=200)
    data, again, other = source.load(seed=5), source.load(seed=5), source.load(seed=6)
    np.testing.assert_array_equal(data.X_train, again.X_train)
    np.testing.assert_array_equal(data.y_test, again.y_test)
    assert not np.array_equal(data.X_train, other.X_train)


@needs_real
def test_validation_rows_are_apart_and_leave_the_other_splits_in_place():
    plain = Kdd98Pva97nk(n_train=300, n_test=200).load(seed=3)
    with_val = Kdd98Pva97nk(n_train=300, n_test=200, n_val=400).load(seed=3)
    np.testing.assert_array_equal(plain.X_train, with_val.X_train)
    np.testing.assert_array_equal(plain.y_test, with_val.y_test)
    assert plain.X_val is None and with_val.X_val.shape == (400, 21)
    rows = {tuple(r) for r in np.vstack([with_val.X_train, with_val.X_test])}
    # the file has no two equal feature rows, so a shared row would be a shared index
    assert not any(tuple(r) in rows for r in with_val.X_val)


@needs_real
def test_n_features_keeps_the_first_columns_in_file_order():
    full = Kdd98Pva97nk(n_train=300, n_test=200).load(seed=1)
    first = Kdd98Pva97nk(n_train=300, n_test=200, n_features=10).load(seed=1)
    assert first.X_train.shape == (300, 10)
    np.testing.assert_array_equal(first.X_train, full.X_train[:, :10])  # each column scaled on its own


@needs_real
def test_a_verified_copy_in_the_data_home_is_used(isolated):
    target = data_home() / SOURCE.subdir / SOURCE.name
    target.parent.mkdir(parents=True)
    shutil.copyfile(REAL, target)
    assert Kdd98Pva97nk().load(seed=0).X_train.shape == (500, 21)


def test_a_changed_copy_is_refused(isolated):
    target = data_home() / SOURCE.subdir / SOURCE.name
    target.parent.mkdir(parents=True)
    target.write_text("ID,TargetB,TargetD\n1,0,\n")
    with pytest.raises(DataError, match="checksum mismatch") as err:
        Kdd98Pva97nk().load(seed=0)
    assert SOURCE.sha256 in str(err.value) and sha256_of(target) in str(err.value)


def test_missing_file_names_file_url_and_directory(isolated):
    with pytest.raises(DataError) as err:
        Kdd98Pva97nk().load(seed=0)
    message = str(err.value)
    assert SOURCE.name in message and SOURCE.url in message and str(data_home() / "kdd98_pva97nk") in message


@pytest.mark.parametrize(
    ("params", "key"),
    [
        ({"n_train": 1}, "dataset.n_train"),
        ({"n_test": 0}, "dataset.n_test"),
        ({"n_train": 9000, "n_test": 1000}, "dataset.n_train"),
        ({"n_val": -1}, "dataset.n_val"),
        ({"n_train": 5000, "n_test": 1000, "n_val": 4000}, "dataset.n_train"),
        ({"n_features": 0}, "dataset.n_features"),
        ({"n_features": 22}, "dataset.n_features"),
    ],
)
def test_bad_parameters_name_the_key(params, key):
    with pytest.raises(ConfigError, match=key.replace(".", r"\.")):
        Kdd98Pva97nk(**params)


def test_fingerprint_carries_the_file_checksum(monkeypatch):
    assert Kdd98Pva97nk().source_checksums() == {SOURCE.name: SOURCE.sha256}
    before = Kdd98Pva97nk().fingerprint()
    monkeypatch.setattr(kdd98_pva97nk, "SOURCE", RemoteFile(SOURCE.name, SOURCE.url, "0" * 64, SOURCE.subdir))
    assert Kdd98Pva97nk().fingerprint() != before
