"""A data set from configuration: any function returning (X, y) or a Bunch, split by svmrepro."""

import numpy as np
import pytest
from omegaconf import OmegaConf

from svmrepro.data import cli
from svmrepro.data.function import FromFunction, source_class
from svmrepro.errors import ConfigError
from svmrepro.locations import CONFIG_DIRS_ENV

MOONS = dict(loader="sklearn.datasets.make_moons", arguments={"n_samples": 300, "noise": 0.3}, n_train=100, n_test=80)
#: a loader module of the user's own, in their config folder (a name no other test imports)
OWN_MODULE = """\
import numpy as np

def stripes(n_samples=200, random_state=None):
    rng = np.random.default_rng(random_state)
    X = rng.uniform(size=(n_samples, 3))
    return X, np.where(X[:, 0] > 0.5, "right", "left")
"""


def rows(X):
    return {tuple(row) for row in X}


def test_a_generator_is_split_by_the_seed_with_labels_minus_one_plus_one():
    data = FromFunction(**MOONS, n_val=30).load(0)
    assert (data.n_train, data.n_test, data.X_val.shape) == (100, 80, (30, 2))
    assert set(np.unique(data.y_train)) == {-1, 1} and data.name == "sklearn.datasets.make_moons"
    assert not rows(data.X_train) & rows(data.X_test) and not rows(data.X_val) & rows(data.X_train)
    again, other = FromFunction(**MOONS, n_val=30).load(0), FromFunction(**MOONS, n_val=30).load(1)
    assert again.fingerprint == data.fingerprint and other.fingerprint != data.fingerprint
    # the validation rows are drawn from what is left: the training and test rows stay
    assert np.array_equal(FromFunction(**MOONS).load(0).X_train, data.X_train)


def test_a_seed_draws_a_new_sample_unless_the_arguments_fix_random_state():
    fixed = {**MOONS, "arguments": {**MOONS["arguments"], "random_state": 7}}
    drawn = [rows(np.vstack([d.X_train, d.X_test])) for d in (FromFunction(**MOONS).load(s) for s in (0, 1))]
    kept = [rows(np.vstack([d.X_train, d.X_test])) for d in (FromFunction(**fixed).load(s) for s in (0, 1))]
    assert not drawn[0] & drawn[1]  # continuous noise: two samples share no row
    assert kept[0] & kept[1]  # one sample, two splits of it


def test_the_fingerprint_holds_the_loader_and_its_arguments_however_given():
    reference = FromFunction(**MOONS).fingerprint()
    as_hydra_gives_it = {**MOONS, "arguments": OmegaConf.create(MOONS["arguments"])}
    assert FromFunction(**as_hydra_gives_it).fingerprint() == reference
    assert FromFunction(**{**MOONS, "arguments": {"n_samples": 300, "noise": 0.2}}).fingerprint() != reference
    assert FromFunction(**{**MOONS, "loader": "sklearn.datasets.make_circles"}).fingerprint() != reference


def test_a_bunch_with_more_than_two_classes_has_labels_zero_to_k_minus_one():
    data = FromFunction(loader="sklearn.datasets.load_iris", n_train=100, n_test=50).load(0)
    assert set(np.unique(np.concatenate([data.y_train, data.y_test]))) == {0, 1, 2}


def test_a_regression_target_stays_a_number():
    data = FromFunction(loader="sklearn.datasets.make_friedman1", arguments={"n_samples": 200}, n_train=100,
                        n_test=50, task="regression").load(0)
    assert data.task == "regression" and data.y_train.dtype == np.float64 and np.unique(data.y_train).size == 100


@pytest.mark.parametrize(("changed", "line"), [
    ({"loader": "sklearn.datasets.make_moonz"},
     "dataset.loader='sklearn.datasets.make_moonz' cannot be imported (sklearn.datasets has no 'make_moonz')"),
    ({"loader": "no_such_module.f"}, "dataset.loader='no_such_module.f' cannot be imported (No module named"),
    ({"arguments": {"nois": 0.3}}, "dataset.arguments.nois=0.3 is invalid: expected a keyword argument of "
                                   "sklearn.datasets.make_moons: n_samples, noise, random_state, shuffle"),
    ({"arguments": [300]}, "dataset.arguments=[300] is invalid: expected a mapping"),
    ({"arguments": {"n_samples": 150}}, "dataset.n_train=100 is invalid: expected at most 70 with n_test=80, n_val=0: "
                                        "sklearn.datasets.make_moons draws arguments.n_samples=150 rows"),
    ({"n_val": -1}, "dataset.n_val=-1 is invalid: expected an integer >= 0"),
    ({"task": "ranking"}, "dataset.task='ranking' is invalid: expected one of classification, regression"),
])
def test_a_bad_value_is_one_line_naming_the_key_before_any_data_is_drawn(changed, line):
    with pytest.raises(ConfigError) as error:
        FromFunction(**{**MOONS, **changed})
    assert str(error.value).startswith(line) and "\n" not in str(error.value)


def test_more_rows_asked_than_the_function_returns_is_one_line_when_loaded():
    source = FromFunction(loader="sklearn.datasets.load_iris", n_train=100, n_test=100)
    with pytest.raises(ConfigError, match=r"^dataset.n_train=100 is invalid: expected at most 50 .*load_iris has 150 rows"):
        source.load(0)


def test_a_function_as_the_target_is_refused_showing_the_form_to_use():
    with pytest.raises(ConfigError) as error:
        source_class("sklearn.datasets.make_moons")
    assert str(error.value).startswith("dataset._target_=sklearn.datasets.make_moons is not a svmrepro DatasetSource")
    assert "_target_: svmrepro.data.function.FromFunction, loader: <module.function>" in str(error.value)


def test_a_loader_module_in_the_config_folder_is_found_without_pythonpath(tmp_path, monkeypatch):
    (tmp_path / "h1_own_stripes.py").write_text(OWN_MODULE)
    source = dict(loader="h1_own_stripes.stripes", n_train=50, n_test=50)
    with pytest.raises(ConfigError, match="--config-dir: none given"):
        FromFunction(**source)
    monkeypatch.setenv(CONFIG_DIRS_ENV, str(tmp_path))
    data = FromFunction(**source).load(0)
    assert set(np.unique(data.y_train)) == {-1, 1}  # "left" -1, "right" +1
    assert np.array_equal(data.y_train, np.where(data.X_train[:, 0] > 0.5, 1, -1))


def test_a_loader_module_that_fails_on_import_is_one_line(tmp_path, monkeypatch):
    (tmp_path / "h1_own_broken.py").write_text("import numpy as np\nX = np.zeroes(3)\n")
    monkeypatch.setenv(CONFIG_DIRS_ENV, str(tmp_path))
    with pytest.raises(ConfigError, match=r"^dataset.loader='h1_own_broken.load' cannot be imported \(AttributeError: "
                                          r"module 'numpy' has no attribute 'zeroes'"):
        FromFunction(loader="h1_own_broken.load", n_train=50, n_test=50)


def test_list_shows_a_function_data_set_of_a_config_folder(tmp_path, capsys, monkeypatch):
    (tmp_path / "dataset").mkdir()
    (tmp_path / "dataset" / "moons.yaml").write_text(
        "_target_: svmrepro.data.function.FromFunction\nloader: sklearn.datasets.make_moons\n"
        "arguments: {n_samples: 300}\nn_train: 100\nn_test: 80\n")
    (tmp_path / "dataset" / "plain.yaml").write_text("_target_: sklearn.datasets.make_moons\n")
    monkeypatch.setenv(CONFIG_DIRS_ENV, "")  # restored after the test: the option sets it
    assert cli.main(["list", "--config-dir", str(tmp_path)]) == 0
    rows = {line.split()[0]: line for line in capsys.readouterr().out.splitlines()[1:]}
    assert rows["moons"].split()[1:] == ["sklearn.datasets.make_moons", "n_train=100", "n_test=80", "n_val=0", "yes"]
    assert (f"error: {tmp_path / 'dataset' / 'plain.yaml'}: dataset._target_=sklearn.datasets.make_moons is not a "
            "svmrepro DatasetSource") in rows["plain"]


def test_a_source_class_of_the_config_folder_is_found_without_pythonpath(tmp_path, monkeypatch):
    (tmp_path / "h1_own_sources.py").write_text(
        "from dataclasses import dataclass\nfrom svmrepro.data.gaussian_clouds import GaussianClouds\n\n\n"
        "@dataclass(frozen=True)\nclass Mine(GaussianClouds):\n    name = 'mine'\n")
    (tmp_path / "dataset").mkdir()
    (tmp_path / "dataset" / "mine.yaml").write_text("_target_: h1_own_sources.Mine\nn_train: 20\nn_test: 10\n")
    monkeypatch.setenv(CONFIG_DIRS_ENV, str(tmp_path))
    source = cli.build(tmp_path / "dataset" / "mine.yaml")
    assert type(source).__name__ == "Mine" and source.load(0).n_train == 20
