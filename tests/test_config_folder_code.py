"""A config folder's Python runs when a run needs it, never on a listing or a check; ``loader:`` calls only a
function that returns data (issue 46, item 7).

A cloned study's ``my_conf/my_loaders.py`` used to be imported (its top-level code run) by ``svmrepro-data list``
and ``svmrepro-reproduce --check``, and ``loader: os.system`` ran its command before failing. Here the module
writes a marker file when it is imported: the listing and the check leave none, a run does; a loader outside the
data modules and the config folder is refused in one line naming the file, the key and what is allowed, before
anything is called.
"""

import shutil
import subprocess
import sys
import uuid
from contextlib import nullcontext
from pathlib import Path
from types import SimpleNamespace

import forked_cli
import pytest

from svmrepro import reproduce as reproducing
from svmrepro.data import cli
from svmrepro.data.function import FromFunction
from svmrepro.data.user_code import configs_only, declared
from svmrepro.errors import ConfigError
from svmrepro.locations import CONFIG_DIRS_ENV

STUDY = Path(__file__).resolve().parents[1] / "docs" / "tutorial" / "study"
#: a loader module that leaves a marker when imported (named anew for each test: a process imports a module once)
MODULE = '''\
from pathlib import Path

from sklearn.datasets import make_moons

Path({marker!r}).write_text("imported")


def moons(n_samples, noise, random_state=None):
    return make_moons(n_samples=n_samples, noise=noise, random_state=random_state)
'''
ALLOWED = ("expected a make_*, fetch_*, load_* or read_* function of sklearn.datasets or svmrepro.data, or a "
           "function of a module in a config folder (--config-dir: ")


@pytest.fixture
def study(tmp_path, monkeypatch):
    """The tutorial's study, its data set drawn by ``moons`` of a module of its config folder (``study.module``)."""
    monkeypatch.setenv(CONFIG_DIRS_ENV, "")  # --config-dir sets it for the process; put back afterwards
    monkeypatch.chdir(tmp_path)
    shutil.copytree(STUDY, tmp_path / "study")
    conf = tmp_path / "study" / "conf"
    module = f"h46_loaders_{uuid.uuid4().hex}"
    (conf / f"{module}.py").write_text(MODULE.format(marker=str(tmp_path / "MARKER")))
    dataset = conf / "dataset" / "moons.yaml"
    dataset.write_text(dataset.read_text().replace("sklearn.datasets.make_moons", f"{module}.moons"))
    return SimpleNamespace(conf=conf, module=module, marker=tmp_path / "MARKER", dataset=dataset)


def test_listing_and_check_read_a_config_folder_s_module_without_running_it(study, monkeypatch, capsys):
    assert cli.main(["list", "--config-dir", str(study.conf)]) == 0
    row = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("moons "))
    assert row.split()[1:] == [f"{study.module}.moons", "n_train=100", "n_test=1000", "n_val=0", "yes"]
    monkeypatch.setattr(reproducing, "papers", lambda: ["moons"])  # the package's claims: tests/test_claims_check.py
    store = f"sqlite:///{study.conf.parents[1] / 'mlflow.db'}"
    assert reproducing.main(["--config-dir", str(study.conf), "--experiment", "moons/sizes", "--check",
                             "--tracking-uri", store]) == 0
    assert "27 missing" in capsys.readouterr().out
    shown = forked_cli.run([sys.executable, "-m", "svmrepro", "--config-dir", str(study.conf), "experiment=moons/sizes",
                            "--cfg", "job"], check=False, capture_output=True, text=True, timeout=300)
    assert shown.returncode == 0 and f"{study.module}.moons" in shown.stdout, shown.stderr[-2000:]
    assert not study.marker.exists()


def test_a_check_finds_a_typo_in_a_config_folder_loader_s_arguments_without_running_it(study, monkeypatch, capsys):
    monkeypatch.setattr(reproducing, "papers", lambda: ["moons"])
    study.dataset.write_text(study.dataset.read_text().replace("noise: 0.3", "nois: 0.3"))
    assert reproducing.main(["--config-dir", str(study.conf), "--experiment", "moons/sizes", "--check"]) == 2
    lines = [line for line in capsys.readouterr().err.splitlines() if "error" in line]
    assert lines == [(f"svmrepro-reproduce: error: {study.dataset.relative_to(study.conf.parents[1])}: arguments.nois: "
                      f"0.3 is invalid: expected a keyword argument of {study.module}.moons: n_samples, noise, "
                      "random_state")]
    assert not study.marker.exists()


def test_a_run_imports_the_config_folder_s_module(study, store_uri):
    done = forked_cli.run([sys.executable, "-m", "svmrepro", "--config-dir", str(study.conf), "experiment=moons/sizes",
                           f"tracking.uri={store_uri}"],
                          check=False, capture_output=True, text=True, timeout=300, cwd=study.conf.parents[1])
    assert done.returncode == 0 and "FINISHED" in done.stdout + done.stderr, done.stderr[-3000:]
    assert study.marker.read_text() == "imported"


def test_a_source_class_of_a_config_folder_is_listed_unimported_and_built_by_a_run(tmp_path, monkeypatch, capsys):
    module, marker = f"h46_sources_{uuid.uuid4().hex}", tmp_path / "MARKER"
    (tmp_path / "dataset").mkdir()
    (tmp_path / f"{module}.py").write_text(
        f"from dataclasses import dataclass\nfrom pathlib import Path\n\n"
        "from svmrepro.data.gaussian_clouds import GaussianClouds\n\n"
        f"Path({str(marker)!r}).write_text('imported')\n\n\n"
        "@dataclass(frozen=True)\nclass Mine(GaussianClouds):\n    name = 'mine'\n")
    (tmp_path / "dataset" / "mine.yaml").write_text(f"_target_: {module}.Mine\nn_train: 20\nn_test: 10\n")
    (tmp_path / "dataset" / "typo.yaml").write_text(f"_target_: {module}.Mien\nn_train: 20\nn_test: 10\n")
    monkeypatch.setenv(CONFIG_DIRS_ENV, "")
    assert cli.main(["list", "--config-dir", str(tmp_path)]) == 0
    rows = {line.split()[0]: line for line in capsys.readouterr().out.splitlines()[1:]}
    assert rows["mine"].split()[1:] == [f"{module}.Mine", "(config", "folder:", "built", "by", "a", "run)",
                                        "n_train=20", "n_test=10", "unknown"]
    assert f"dataset._target_='{module}.Mien' cannot be imported ({module} has no 'Mien')" in rows["typo"]
    assert not marker.exists()
    assert cli.build(tmp_path / "dataset" / "mine.yaml").load(0).n_train == 20  # a run's build imports it
    assert marker.read_text() == "imported"


#: (loader, arguments) that would run a command or code; each writes ``{marker}`` if it is ever called
HOSTILE = {
    "os.system": ("os.system", {"command": "touch {marker}"}),
    "builtins.exec": ("builtins.exec", {}),
    "subprocess.run": ("subprocess.run", {"args": ["touch", "{marker}"]}),
    "a data module's writer": ("sklearn.datasets.dump_svmlight_file", {"X": [[1.0]], "y": [1], "f": "{marker}"}),
    "os in the config folder": ("os.system", {"command": "touch {marker}"}),
}


@pytest.mark.parametrize("case", HOSTILE)
def test_a_loader_that_is_not_a_data_function_is_refused_before_it_is_called(case, tmp_path, monkeypatch, capsys):
    loader, arguments = HOSTILE[case]
    marker = tmp_path / "PWNED"
    arguments = {key: str(value).format(marker=marker) if isinstance(value, str) else
                 [str(v).format(marker=marker) for v in value] if isinstance(value, list) else value
                 for key, value in arguments.items()}
    conf = tmp_path / "conf"
    (conf / "dataset").mkdir(parents=True)
    if case == "os in the config folder":  # a config folder's module may not take the environment's name
        (conf / "os.py").write_text(f"def system(command):\n    open({str(marker)!r}, 'w')\n")
    path = conf / "dataset" / "evil.yaml"
    path.write_text(f"_target_: svmrepro.data.function.FromFunction\nloader: {loader}\narguments: {arguments}\n"
                    "n_train: 10\nn_test: 10\n")
    monkeypatch.setenv(CONFIG_DIRS_ENV, "")
    assert cli.main(["list", "--config-dir", str(conf)]) == 0
    row = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("evil "))
    assert f"error: {path}: dataset.loader={loader!r} is not allowed: " in row and ALLOWED in row
    for only_reading in (True, False):  # a listing, a check, and a run's build
        with pytest.raises(ConfigError) as error, configs_only() if only_reading else nullcontext():
            FromFunction(loader=loader, arguments=arguments, n_train=10, n_test=10)
        assert "\n" not in str(error.value) and ALLOWED in str(error.value)
    assert not marker.exists()


def test_a_single_run_refuses_the_loader_in_one_line_before_the_store_is_made(tmp_path):
    conf = tmp_path / "conf"
    (conf / "dataset").mkdir(parents=True)
    (conf / "dataset" / "evil.yaml").write_text("_target_: svmrepro.data.function.FromFunction\nloader: os.system\n"
                                                f"arguments: {{command: touch {tmp_path / 'PWNED'}}}\n"
                                                "n_train: 10\nn_test: 10\n")
    done = forked_cli.run([sys.executable, "-m", "svmrepro", "--config-dir", str(conf), "dataset=evil",
                           f"tracking.uri=sqlite:///{tmp_path / 'mlflow.db'}"],
                          check=False, capture_output=True, text=True, timeout=300, cwd=tmp_path)
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2 and len(lines) == 1, done.stderr[-3000:]
    assert lines[0].startswith("svmrepro-run: error: dataset.loader='os.system' is not allowed: ")
    assert ALLOWED in lines[0]
    assert not (tmp_path / "PWNED").exists() and not (tmp_path / "mlflow.db").exists()


@pytest.mark.parametrize(("source", "found", "arguments"), [
    ("def f(a, b=1, *, c):\n    pass\n", True, {"a", "b", "c"}),
    ("def f(a, **kw):\n    pass\n", True, None),
    ("import functools\n\n@functools.cache\ndef f(a):\n    pass\n", True, None),
    ("from sklearn.datasets import make_moons as f\n", True, None),
    ("try:\n    from x import f\nexcept ImportError:\n    def f(a):\n        pass\n", True, None),
    ("if True:\n    f = 1\n", True, None),
    ("def g():\n    f = 1\n", False, None),
    ("from x import *\n", True, None),
    ("class C:\n    def f(self):\n        pass\n", False, None),
])
def test_a_module_s_functions_are_read_from_its_source(tmp_path, source, found, arguments):
    (tmp_path / "m.py").write_text(source)
    assert declared(tmp_path / "m.py", "f") == (found, arguments)
