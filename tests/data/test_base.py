"""The data set contract's shared checks: the loaded data's fingerprint, config types, sizes."""

import numpy as np
import pytest
from hydra.utils import get_class
from omegaconf import OmegaConf

from svmrepro.compose import CONF_DIR
from svmrepro.data import base
from svmrepro.data.base import Dataset, array_sha256, check_memory, check_rows
from svmrepro.data.covtype import CovType
from svmrepro.data.gaussian_clouds import GaussianClouds
from svmrepro.data.memory import MemoryLimit
from svmrepro.data.waveform import Waveform
from svmrepro.errors import ConfigError

RNG = np.random.default_rng(0)
X_TRAIN, X_TEST, X_VAL = RNG.standard_normal((40, 3)), RNG.standard_normal((20, 3)), RNG.standard_normal((10, 3))
Y_TRAIN, Y_TEST, Y_VAL = np.sign(X_TRAIN[:, 0]), np.sign(X_TEST[:, 0]), np.sign(X_VAL[:, 0])


def dataset(**changed) -> Dataset:
    arrays = dict(X_train=X_TRAIN, y_train=Y_TRAIN, X_test=X_TEST, y_test=Y_TEST, X_val=X_VAL, y_val=Y_VAL)
    return Dataset("toy", **{**arrays, **changed}, source_fingerprint="source")


def test_the_fingerprint_is_the_same_for_the_same_values_in_any_memory_layout():
    assert dataset().fingerprint == dataset().fingerprint
    assert dataset(X_train=np.asfortranarray(X_TRAIN)).fingerprint == dataset().fingerprint


@pytest.mark.parametrize("name", ["X_train", "y_train", "X_test", "y_test", "X_val", "y_val"])
def test_the_fingerprint_changes_when_one_value_of_any_array_changes(name):
    array = getattr(dataset(), name).copy()
    array.flat[-1] += 0.5
    assert dataset(**{name: array}).fingerprint != dataset().fingerprint


def test_the_fingerprint_covers_the_source_the_dtype_and_the_shape():
    reference = dataset().fingerprint
    assert Dataset("toy", X_TRAIN, Y_TRAIN, X_TEST, Y_TEST, source_fingerprint="other", X_val=X_VAL,
                   y_val=Y_VAL).fingerprint != reference
    assert dataset(y_train=Y_TRAIN.astype(np.int8)).fingerprint != reference
    assert dataset(X_val=X_VAL.reshape(5, 6)).fingerprint != reference
    assert dataset(X_val=None, y_val=None).fingerprint != reference


def test_a_loaded_data_set_s_fingerprint_follows_its_arrays():
    first, again = GaussianClouds(n_train=30, n_test=10).load(0), GaussianClouds(n_train=30, n_test=10).load(0)
    assert first.fingerprint == again.fingerprint
    assert first.source_fingerprint == GaussianClouds(n_train=30, n_test=10).fingerprint()
    assert GaussianClouds(n_train=30, n_test=10).load(1).fingerprint != first.fingerprint  # same source, other draw


def test_array_sha256_names_matter():
    assert array_sha256({"a": X_TRAIN}) != array_sha256({"b": X_TRAIN})
    assert array_sha256({"a": X_TRAIN}) == array_sha256({"a": X_TRAIN.copy()})


@pytest.mark.parametrize(
    ("cls", "config", "message"),
    [
        (GaussianClouds, {"n_train": 2.5}, "dataset.n_train=2.5 is invalid: expected an integer"),
        (GaussianClouds, {"n_train": "abc"}, "dataset.n_train='abc' is invalid: expected an integer"),
        (GaussianClouds, {"n_train": True}, "dataset.n_train=True is invalid: expected an integer"),
        (GaussianClouds, {"std": "abc"}, "dataset.std='abc' is invalid: expected a number"),
        (Waveform, {"standardize": 1}, "dataset.standardize=1 is invalid: expected true or false"),
        (CovType, {"n_val": 0.5}, "dataset.n_val=0.5 is invalid: expected an integer or null"),
        (CovType, {"problem": 2}, "dataset.problem=2 is invalid: expected a string"),
    ],
)
def test_check_types_refuses_a_value_of_the_wrong_type_in_one_line(cls, config, message):
    with pytest.raises(ConfigError) as err:
        cls.check_types(config)
    assert str(err.value) == message


def test_check_types_accepts_the_right_types():
    GaussianClouds.check_types({"_target_": "x", "n_train": 5, "std": 2, "n_features": 3})
    CovType.check_types({"n_val": None, "n_train": 10, "scale": None, "problem": "6_vs_7"})


def test_check_rows_names_the_largest_key_its_room_and_the_count():
    check_rows({"n_train": 6, "n_test": 4}, 10, "toy has 10 rows")
    with pytest.raises(ConfigError) as err:
        check_rows({"n_train": 9, "n_test": 4}, 10, "toy has 10 rows")
    assert str(err.value) == "dataset.n_train=9 is invalid: expected at most 6 with n_test=4: toy has 10 rows"


def test_check_memory_counts_rows_against_half_the_memory(monkeypatch):
    # 1 GiB: 2**29 bytes of float64 rows
    monkeypatch.setattr(base, "memory_limit", lambda: MemoryLimit(2**30, "this machine's 1.0 GiB of memory"))
    rows = 2**29 // (8 * 4)
    check_memory("toy", {"n_train": rows - 10, "n_test": 10}, values_per_row=4)
    with pytest.raises(ConfigError) as err:
        check_memory("toy", {"n_train": rows, "n_test": 10}, values_per_row=4)
    assert str(err.value) == (
        f"dataset.n_train={rows} is invalid: expected at most {rows - 10} with n_test=10: "
        f"toy fits {rows} rows of 4 values in half of this machine's 1.0 GiB of memory"
    )
    monkeypatch.setattr(base, "memory_limit", lambda: None)  # unknown: no limit stated
    check_memory("toy", {"n_train": 10**15}, values_per_row=4)


def test_a_generated_data_set_too_large_for_memory_is_refused_before_drawing():
    with pytest.raises(ConfigError, match=r"^dataset\.n_train=10000000000000 is invalid: expected at most \d+ "
                                          r"with n_test=10000: gaussian_clouds fits \d+ rows of 11 values"):
        GaussianClouds(n_train=10**13)


@pytest.mark.parametrize("path", sorted((CONF_DIR / "dataset").glob("*.yaml")), ids=lambda p: p.stem)
def test_every_dataset_config_has_the_types_of_its_fields(path):
    node = OmegaConf.load(path)
    get_class(node._target_).check_types(OmegaConf.to_container(node))
