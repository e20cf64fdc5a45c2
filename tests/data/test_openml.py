"""An OpenML data set by id: cached under $SVMREPRO_DATA, one line when offline and not cached."""

import numpy as np
import pandas as pd
import pytest
from sklearn.utils import Bunch

from svmrepro.data import openml
from svmrepro.data.openml import OpenML
from svmrepro.errors import ConfigError, DataError


def test_offline_and_not_cached_is_one_line_naming_the_id(offline):
    with pytest.raises(DataError) as error:
        OpenML(data_id=1590, n_train=100, n_test=100).load(0)
    assert str(error.value) == (f"OpenML data set 1590 is not in {offline / 'openml'} and downloads are disabled by "
                                "SVMREPRO_OFFLINE: run once online (svmrepro-data fetch <name>)")


def test_what_openml_returns_is_one_hot_encoded_and_split(offline, monkeypatch):
    asked = {}

    def fetch_openml(**kwargs):
        asked.update(kwargs)
        data = pd.DataFrame({"x": np.arange(40.0), "colour": pd.Categorical(["red", "blue"] * 20)})
        return Bunch(data=data, target=pd.Series(["a", "b", "b", "a"] * 10))

    monkeypatch.setattr(openml, "fetch_openml", fetch_openml)
    monkeypatch.setattr(OpenML, "available_offline", lambda self: True)
    data = OpenML(data_id=31, n_train=20, n_test=10).load(0)
    assert asked["data_id"] == 31 and asked["data_home"] == str(offline / "openml")
    assert data.X_train.shape == (20, 3) and set(np.unique(data.y_train)) == {-1, 1}
    assert data.name == "https://www.openml.org/d/31"


def test_the_id_and_the_target_make_the_fingerprint():
    reference = OpenML(data_id=31).fingerprint()
    assert OpenML(data_id=31).fingerprint() == reference
    assert OpenML(data_id=32).fingerprint() != reference and OpenML(data_id=31, target="class").fingerprint() != reference


def test_a_bad_id_is_one_line():
    with pytest.raises(ConfigError, match=r"^dataset.data_id=0 is invalid: expected an OpenML data set id"):
        OpenML(data_id=0)
