"""A CSV or Parquet file with a label column, found from the config folder, its bytes in the fingerprint."""

import numpy as np
import pandas as pd
import pytest

from svmrepro.data import cli
from svmrepro.data.table import Table
from svmrepro.errors import ConfigError, DataError
from svmrepro.locations import CONFIG_DIRS_ENV

RNG = np.random.default_rng(0)
FRAME = pd.DataFrame({"a": RNG.standard_normal(60), "b": RNG.standard_normal(60),
                      "outcome": np.where(RNG.uniform(size=60) > 0.5, "yes", "no")})


@pytest.fixture
def conf(tmp_path, monkeypatch):
    """A user config folder with ``data/points.csv`` and ``data/points.parquet``, run from elsewhere."""
    (tmp_path / "conf" / "data").mkdir(parents=True)
    FRAME.to_csv(tmp_path / "conf" / "data" / "points.csv", index=False)
    FRAME.to_parquet(tmp_path / "conf" / "data" / "points.parquet")
    monkeypatch.setenv(CONFIG_DIRS_ENV, str(tmp_path / "conf"))
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path / "elsewhere")
    return tmp_path / "conf"


@pytest.mark.parametrize("path", ["data/points.csv", "data/points.parquet"])
def test_a_file_relative_to_the_config_folder_is_read_and_split(conf, path):
    data = Table(path=path, label="outcome", n_train=30, n_test=20, n_val=10).load(0)
    assert (data.n_train, data.n_test, data.X_val.shape) == (30, 20, (10, 2))
    whole = {tuple(row): label for row, label in zip(FRAME[["a", "b"]].to_numpy(), FRAME["outcome"])}
    assert all(whole[tuple(row)] == ("yes" if y == 1 else "no") for row, y in zip(data.X_train, data.y_train))


def test_the_features_can_be_chosen(conf):
    data = Table(path="data/points.csv", label="outcome", features=["b"], n_train=30, n_test=20).load(0)
    assert data.X_train.shape == (30, 1)


def test_the_fingerprint_holds_the_file_s_bytes_and_an_edited_file_is_refused(conf):
    source = Table(path="data/points.csv", label="outcome", n_train=30, n_test=20)
    before = source.fingerprint()
    assert Table(path="data/points.csv", label="outcome", n_train=30, n_test=20).fingerprint() == before
    FRAME.assign(a=FRAME["a"] + 1).to_csv(conf / "data" / "points.csv", index=False)
    assert Table(path="data/points.csv", label="outcome", n_train=30, n_test=20).fingerprint() != before
    with pytest.raises(DataError, match="^checksum mismatch for .*points.csv"):
        source.load(0)  # its fingerprint was of the old bytes


@pytest.mark.parametrize(("changed", "line"), [
    ({"path": "data/nothing.csv"}, "dataset.path='data/nothing.csv' is invalid: expected a file below one of: "),
    ({"path": "data/points.txt"}, "dataset.path='data/points.txt' is invalid: expected a .csv or .parquet file"),
    ({"label": "outcomes"}, "dataset.label='outcomes' is invalid: expected a column of points.csv: a, b, outcome"),
    ({"features": ["a", "c"]}, "dataset.features=['a', 'c'] is invalid: expected columns of points.csv other than "
                               "the label (not c)"),
    ({"features": "a"}, "dataset.features='a' is invalid: expected null or a list of column names"),
    ({"n_train": 50}, None),
])
def test_a_bad_value_is_one_line_naming_the_key(conf, changed, line):
    source = dict(path="data/points.csv", label="outcome", n_train=30, n_test=20)
    if line is None:  # too many rows: known when the file is read
        with pytest.raises(ConfigError, match=r"^dataset.n_train=50 is invalid: expected at most 40 .*points.csv has 60 rows"):
            Table(**{**source, **changed}).load(0)
        return
    with pytest.raises(ConfigError) as error:
        Table(**{**source, **changed})
    assert str(error.value).startswith(line) and "\n" not in str(error.value)


def test_a_column_that_is_no_number_is_one_line(conf):
    FRAME.assign(b="x").to_csv(conf / "data" / "words.csv", index=False)
    with pytest.raises(DataError, match="^.*words.csv: the features are not all numbers"):
        Table(path="data/words.csv", label="outcome", n_train=30, n_test=20).load(0)


def test_list_and_fetch_name_the_file(conf, capsys):
    (conf / "dataset").mkdir()
    (conf / "dataset" / "points.yaml").write_text(
        "_target_: svmrepro.data.table.Table\npath: data/points.parquet\nlabel: outcome\nn_train: 30\nn_test: 20\n")
    assert cli.main(["list"]) == 0 and cli.main(["fetch", "points"]) == 0
    out = capsys.readouterr().out.splitlines()
    listed = next(line for line in out if line.startswith("points "))
    assert listed.split()[1:] == [str(conf / "data" / "points.parquet"), "n_train=30", "n_test=20", "n_val=0", "yes"]
    assert out[-2:] == ["points: 30 train / 20 test rows (seed 0)", f"  {conf / 'data' / 'points.parquet'}"]
