"""Every config composes, instantiates cheaply, and bad values fail with one clear line."""

import subprocess
import sys
from pathlib import Path

import forked_cli
import pytest
from algorithm_configs import ALGORITHMS, needs_extra
from hydra.errors import ConfigCompositionException
from hydra.utils import instantiate

from svmrepro.build import build
from svmrepro.compose import CONF_DIR, compose_config, experiments
from svmrepro.errors import ConfigError
from svmrepro.locations import CONFIG_DIRS_ENV, data_file

DATASETS = sorted(p.stem for p in (CONF_DIR / "dataset").glob("*.yaml"))
EXPERIMENTS = experiments()


@pytest.mark.parametrize("experiment", EXPERIMENTS)
@pytest.mark.parametrize("mode", ["quick", "full"])
def test_every_experiment_composes_with_a_sweep_and_a_report(experiment, mode):
    cfg = compose_config([f"experiment={experiment}", f"mode={mode}"])
    assert cfg.sweep[mode], f"{experiment} has no sweep for mode {mode}"
    assert cfg.report.metrics
    build(cfg)  # constructors validate every value without loading data


@pytest.mark.parametrize("dataset", DATASETS)
def test_every_dataset_config_instantiates_without_loading(dataset):
    cfg = compose_config([f"dataset={dataset}"])
    source = instantiate(cfg.dataset)
    assert len(source.fingerprint()) == 64


@pytest.mark.parametrize("algorithm", [pytest.param(a, marks=needs_extra(a)) for a in ALGORITHMS])
def test_every_algorithm_config_builds(algorithm):
    parts = build(compose_config([f"algorithm={algorithm}"]))
    assert hasattr(parts.estimator, "fit")


@pytest.mark.parametrize(
    ("override", "key"),
    [
        ("algorithm.C=-1", "algorithm.C"),
        ("algorithm.kernel=gaussian", "algorithm.kernel"),
        ("dataset.std=-2", "dataset.std"),
        ("dataset.n_train=1", "dataset.n_train"),
        # an invalid grid point is caught before the search runs
        ("selection.param_grid.C=[1.0,-3.0]", "selection.param_grid.C"),
    ],
)
def test_bad_values_name_the_key_the_value_and_what_is_allowed(override, key):
    with pytest.raises(ConfigError) as err:
        build(compose_config(["selection=grid_cv", override]))
    message = str(err.value)
    assert key in message and "\n" not in message
    assert "expected" in message or "must be" in message


@pytest.mark.parametrize(
    ("override", "message"),
    [  # the run_settings schema (svmrepro.settings): Hydra's own message, before any data is read
        ("seed=abc", "Value 'abc' of type 'str' could not be converted to Integer"),
        ("mode=fast", "Invalid value 'fast', expected one of [quick, full, confirm]"),
        ("tracking.uri=[1]", "Cannot convert 'list' to string: '[1]'"),
        ("force=maybe", "Value 'maybe' is not a valid bool"),
        ("sweep_jobs=two", "Value 'two' of type 'str' could not be converted to Integer"),
        ("parallel.backend=mpi", "Invalid value 'mpi', expected one of [loky, threading, dask, ray]"),
    ],
)
def test_a_wrong_type_is_refused_at_composition_with_hydra_s_message(override, message):
    with pytest.raises(ConfigCompositionException) as err:
        compose_config([override])
    assert message in str(err.value.__cause__ or err.value)


def test_command_line_wrong_type_exits_with_hydra_s_message(tmp_path):
    run = Path(sys.executable).with_name("svmrepro-run")
    command = [str(run)] if run.is_file() else [sys.executable, "-m", "svmrepro"]
    done = subprocess.run([*command, "seed=abc"], capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert done.returncode != 0
    assert "Error merging override seed=abc" in done.stderr
    assert "Value 'abc' of type 'str' could not be converted to Integer" in done.stderr
    assert "Traceback" not in done.stderr


def test_unknown_group_option_lists_the_valid_ones():
    with pytest.raises(Exception) as err:
        compose_config(["dataset=no_such_data"])
    assert "gaussian_clouds" in str(err.value)


def test_command_line_bad_value_is_one_line_and_exit_code_2(store_uri):
    done = forked_cli.run(
        [sys.executable, "-m", "svmrepro", "algorithm=svc_linear", "algorithm.C=-1", f"tracking.uri={store_uri}"],
        capture_output=True, text=True, timeout=120,
    )
    assert done.returncode == 2
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert lines[-1].startswith("svmrepro-run: error: algorithm.C=-1")
    assert "Traceback" not in done.stderr


def onedal_line(key: str, estimator: str) -> str:
    return f'{key}._target_: sklearnex.svm.{estimator} needs scikit-learn-intelex (Linux x86-64): pip install "svmrepro[onedal]"'


def test_without_scikit_learn_intelex_its_configs_say_so_in_one_line_and_every_other_builds(monkeypatch):
    """As on a platform it does not install on: its import fails (hidden here), nothing else needs it."""
    for module in [name for name in sys.modules if name.partition(".")[0] == "sklearnex"] + ["sklearnex"]:
        monkeypatch.setitem(sys.modules, module, None)
    for algorithm, estimator in (("svc_onedal", "SVC"), ("svr_onedal", "SVR")):
        with pytest.raises(ConfigError) as err:
            build(compose_config([f"algorithm={algorithm}"]))
        assert str(err.value) == onedal_line("algorithm", estimator)
    with pytest.raises(ConfigError) as err:
        build(compose_config(["algorithm=cascade_svc", "algorithm.estimator._target_=sklearnex.svm.SVC"]))
    assert str(err.value) == onedal_line("algorithm.estimator", "SVC")
    for algorithm in (a for a in ALGORITHMS if "_onedal" not in a):  # svc_onedal, svc_onedal_2threads, ...
        assert hasattr(build(compose_config([f"algorithm={algorithm}"])).estimator, "fit"), algorithm


def test_estimators_nested_in_a_meta_estimator_are_validated_too():
    cfg = compose_config(["algorithm=svc"])
    cfg.algorithm = {
        "_target_": "sklearn.model_selection.GridSearchCV",
        "estimator": {"_target_": "sklearn.svm.SVC", "kernel": "gaussian"},
        "param_grid": {"C": [1.0]},
    }
    with pytest.raises(ConfigError, match=r"algorithm\.estimator\.kernel='gaussian' is invalid"):
        build(cfg)


def test_a_study_s_papers_folder_beside_its_config_folder_is_found_from_any_folder(tmp_path, monkeypatch):
    """``study/conf`` given as --config-dir, ``study/experiments/<paper>/`` holds its numbers and claims."""
    claims = tmp_path / "study" / "experiments" / "mine" / "claims.yaml"
    claims.parent.mkdir(parents=True)
    claims.write_text("claims: []\n")
    (tmp_path / "study" / "conf").mkdir()
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path / "elsewhere")
    monkeypatch.setenv(CONFIG_DIRS_ENV, str(tmp_path / "study" / "conf"))
    assert data_file("experiments/mine/claims.yaml") == claims


def test_a_dataset_target_that_is_a_plain_function_is_one_line_showing_the_form(store_uri):
    done = forked_cli.run([sys.executable, "-m", "svmrepro", "dataset._target_=sklearn.datasets.make_moons",
                           f"tracking.uri={store_uri}"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 2
    assert done.stderr.strip() == (
        "svmrepro-run: error: dataset._target_=sklearn.datasets.make_moons is not a svmrepro DatasetSource: "
        "a function returning (X, y) is a data set as _target_: svmrepro.data.function.FromFunction, "
        "loader: <module.function>, arguments: {<its keyword arguments>}, n_train: ..., n_test: ...")
