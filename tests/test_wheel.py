"""The wheel runs outside the checkout: its configs, papers' numbers and plans are package data,
and what it writes (the store, ``multirun/``, results) lands in the folder it is run from. The
wheel is the session fixture ``venv`` (tests/installed_wheel.py).
"""

import re
import zipfile
from email.parser import Parser

import pytest

from installed_wheel import CHECKOUT, call
from svmrepro.code_digest import code_digest

EXPERIMENT = "cross_training/fig3_baseline"
#: two seconds-long jobs of its sweep (training sizes 120 and 160)
SMALL = ["dataset.n_train=120,160", "dataset.n_test=200", "seed=0", "selection.cv.n_splits=2",
         "selection.param_grid.C=[1.0]"]
#: an experiment of the user's own, in a config folder outside the package
USER_EXPERIMENT = """\
# @package _global_
defaults:
  - override /dataset: gaussian_clouds
  - override /algorithm: svc_linear
dataset:
  n_train: 150
  n_test: 100
sweep:
  quick: {seed: "0,1"}
report:
  title: my own experiment
  x: params.seed
  metrics: [test_error]
"""

#: a Python warning the build backend prints (``BuildBackendWarning: ...``) or a distutils-style
#: ``warning: ...`` line; pip's own ``WARNING:`` lines about this machine's index are not the build's
BUILD_WARNING = re.compile(r"\w+Warning: |\bwarning: ")

pytestmark = pytest.mark.slow


def test_the_wheel_builds_without_a_warning(built):
    warnings = [line.strip() for line in built[1].splitlines() if BUILD_WARNING.search(line)]
    assert not warnings, "\n".join(warnings)


def test_the_wheel_holds_its_license_typing_marker_claims_and_metadata(built):
    with zipfile.ZipFile(built[0]) as wheel:
        names = set(wheel.namelist())
        (info,) = {name.split("/")[0] for name in names if name.endswith(".dist-info/METADATA")}
        metadata = Parser().parsestr(wheel.read(f"{info}/METADATA").decode())
        license_text = wheel.read(f"{info}/licenses/LICENSE").decode()
    assert "BSD 3-Clause License" in license_text and "the svmrepro authors" in license_text
    assert "svmrepro/py.typed" in names
    assert "svmrepro/experiments/cascade/claims.yaml" in names  # the papers' claims are read from the package
    assert metadata["License-Expression"] == "BSD-3-Clause" and metadata.get_all("License-File") == ["LICENSE"]
    required = {re.match(r"[\w.-]+", dependency)[0].lower() for dependency in metadata.get_all("Requires-Dist")
                if "extra ==" not in dependency}
    assert {"pyyaml", "threadpoolctl", "alembic"} <= required
    assert "Operating System :: POSIX" in metadata.get_all("Classifier")


def test_the_wheel_imports_svmrepro_from_itself(venv, tmp_path):
    done = call(venv, tmp_path, "python", "-c", "import svmrepro, sys; print(svmrepro.__file__)")
    assert done.returncode == 0, done.stderr
    assert str(venv.parent) in done.stdout and str(CHECKOUT) not in done.stdout


def test_a_sweep_and_the_check_run_from_any_folder_and_write_there(venv, tmp_path):
    sweep = call(venv, tmp_path, "svmrepro-run", "-m", f"experiment={EXPERIMENT}", *SMALL)
    assert sweep.returncode == 0, sweep.stderr[-3000:]
    assert (tmp_path / "mlflow.db").is_file() and list((tmp_path / "multirun").rglob("progress.jsonl"))
    # the same narrowing, so the check counts the runs its build would read (the sweep's own)
    narrowed = [argument for override in SMALL for argument in ("--override", override)]
    check = call(venv, tmp_path, "svmrepro-reproduce", "--experiment", EXPERIMENT, *narrowed, "--check")
    assert check.returncode == 0, check.stderr[-3000:]
    out = check.stdout + check.stderr
    assert f"== {EXPERIMENT} (quick)" in out and "2 FINISHED runs" in out  # the sweep's runs, from ./mlflow.db
    assert "Traceback" not in out and "cannot check" not in out


def test_the_data_sets_are_listed_from_any_folder(venv, tmp_path):
    listed = call(venv, tmp_path, "svmrepro-data", "list")
    assert listed.returncode == 0, listed.stderr
    assert "gaussian_clouds" in listed.stdout and "covtype" in listed.stdout


def test_a_users_config_folder_adds_an_experiment_without_touching_the_package(venv, tmp_path):
    mine = tmp_path / "my_conf" / "experiment" / "mine"
    mine.mkdir(parents=True)
    (mine / "tiny.yaml").write_text(USER_EXPERIMENT)
    one = call(venv, tmp_path, "svmrepro-run", "--config-dir", str(tmp_path / "my_conf"), "experiment=mine/tiny")
    assert one.returncode == 0, one.stderr[-3000:]
    built = call(venv, tmp_path, "svmrepro-reproduce", "--config-dir", "my_conf", "--experiment", "mine/tiny")
    assert built.returncode == 0, built.stderr[-3000:]
    page = (tmp_path / "results" / "quick" / "mine" / "tiny.md").read_text()
    assert "my own experiment" in page and "2 runs" in page  # seed 0 was run above, seed 1 by the sweep
    unknown = call(venv, tmp_path, "svmrepro-reproduce", "--experiment", "mine/tiny", "--check")
    assert unknown.returncode == 2 and "mine/tiny" in unknown.stderr  # without --config-dir it is not known


def test_the_installed_wheel_has_the_checkout_s_digest_and_no_commit_s(venv, tmp_path):
    """The wheel's files give the digest of the files it was built from; outside a checkout no commit's
    code can be read (a run without the tag is then ``code unknown``)."""
    script = ("from svmrepro.code_digest import code_digest, commit_digest; "
              "print(code_digest(), commit_digest('HEAD'))")
    done = call(venv, tmp_path, "python", "-c", script)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == [code_digest(), "None"]
