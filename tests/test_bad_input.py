"""Bad input at run time: one clear line, no deep traceback, nothing logged half-way.

Covered elsewhere: bad config values and unknown group options at composition
(tests/test_config.py), wrong checksums, wrong formats and missing files offline of every data
set (tests/data/), a report metric no run logged (tests/test_report.py).
"""

import importlib
import inspect
import os
import pkgutil
import re
import resource
import socket
import string
import subprocess
import sys
import time
from numbers import Integral
from pathlib import Path

import forked_cli
import pytest
from algorithm_configs import ALGORITHMS, needs_extra
from hypothesis import given, settings
from hypothesis import strategies as st
from mlflow.tracking import MlflowClient
from omegaconf import OmegaConf, open_dict
from sklearn.base import BaseEstimator
from sklearn.utils._param_validation import Interval, StrOptions, make_constraint

import svmrepro.algorithms
from svmrepro import compose
from svmrepro.algorithms.wen_lu_cascade import WenLuCascadeSVC
from svmrepro.build import build, check_estimator_params
from svmrepro.compose import compose_config
from svmrepro.data import covtype, files
from svmrepro.data.files import OFFLINE_ENV
from svmrepro.data.memory import cgroup_memory_limit, physical_memory
from svmrepro.errors import ConfigError, DataError
from svmrepro.reproduce import main as reproduce
from svmrepro.runner import run
from svmrepro.store import Store, TrackingError, probe

CHECKOUT = Path(__file__).resolve().parents[1]

BANANA = CHECKOUT.parent / "shared" / "data" / "raetsch" / "banana.mat"


def _cli(*args, timeout=120):
    started = time.monotonic()
    done = forked_cli.run([sys.executable, "-m", "svmrepro", *args], capture_output=True, text=True, timeout=timeout)
    done.seconds = time.monotonic() - started
    done.lines = [line for line in done.stderr.splitlines() if line.strip()]
    return done


@pytest.mark.parametrize(
    ("override", "missing"),
    [("dataset=no_such_data", "dataset/no_such_data"), ("algorithm=no_such_svm", "algorithm/no_such_svm"),
     ("experiment=cascade/no_such_table", "experiment/cascade/no_such_table")],
)
def test_an_unknown_name_is_refused_first_thing_and_nothing_is_logged(override, missing, tmp_path):
    done = _cli(override, f"tracking.uri=sqlite:///{tmp_path / 'mlflow.db'}")
    assert done.returncode == 2
    group, option = missing.split("/", 1)
    # one line naming the key and the option, before Hydra composes (svmrepro.options; tests/test_error_order.py)
    assert len(done.lines) == 1 and done.lines[0].startswith(
        f"svmrepro-run: error: {override}: the config group {group} has no option {option}"), done.lines
    assert "Traceback" not in done.stderr
    assert not (tmp_path / "mlflow.db").exists()


# --- sizes and seeds: refused with one line before anything is drawn or stored -------------------


@pytest.mark.parametrize(
    ("override", "line"),
    [
        ("dataset.n_train=2.5", r"dataset\.n_train=2\.5 is invalid: expected an integer"),
        ("dataset.n_train=abc", r"dataset\.n_train='abc' is invalid: expected an integer"),
        ("dataset.std=abc", r"dataset\.std='abc' is invalid: expected a number"),
        ("seed=-1", r"seed=-1 is invalid: expected an integer in \[0, 4294967295\]"),
        # run settings with a range (svmrepro.settings.check)
        ("parallel.blas_threads=-3", r"parallel\.blas_threads=-3 is invalid: expected an integer >= 1 or null"),
        ("sweep_jobs=-1", r"sweep_jobs=-1 is invalid: expected an integer >= 1 or null"),
        # a YAML boolean where scikit-learn's Interval would take it for 1
        ("algorithm.C=true", r"algorithm\.C=true is invalid: expected a number, not a boolean"),
        # a generated data set larger than memory: refused, not allocated (which ended out of memory); the
        # memory is the machine's, or its cgroup's limit where that is smaller (svmrepro.data.memory)
        ("dataset.n_train=10000000000",
         r"dataset\.n_train=10000000000 is invalid: expected at most \d+ with n_test=10000: "
         r"gaussian_clouds fits \d+ rows of 11 values in half of (this machine's [\d.]+ GiB of memory|"
         r"the [\d.]+ GiB memory limit of this process's cgroup \(.+\))"),
        # a file's data set: its row count
        ("dataset=covtype dataset.n_train=600000",
         r"dataset\.n_train=600000 is invalid: expected at most 521012 with n_val=10000, n_test=50000: "
         r"covtype problem 2_vs_rest has 581012 rows"),
    ],
    ids=["n_train=2.5", "n_train=abc", "std=abc", "seed=-1", "blas_threads=-3", "sweep_jobs=-1", "C=true",
         "n_train>memory", "n_train>covtype"],
)
def test_a_bad_size_or_seed_is_one_line_naming_key_value_and_what_is_allowed(override, line, tmp_path):
    done = _cli(*override.split(), f"tracking.uri=sqlite:///{tmp_path / 'mlflow.db'}", f"hydra.run.dir={tmp_path}")
    assert done.returncode == 2
    assert len(done.lines) == 1 and re.fullmatch(f"svmrepro-run: error: {line}", done.lines[0]), done.stderr
    assert not (tmp_path / "mlflow.db").exists()


#: ``ulimit -v 6000000`` (KiB): the address space a run may map
ADDRESS_SPACE = 6_000_000 * 1024


def _address_space_limited():
    resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE, ADDRESS_SPACE))


def test_under_ulimit_v_a_data_set_larger_than_the_address_space_left_is_one_line(tmp_path):
    """Issue 46, item 12: 10**8 rows of 11 values (8.8 GB) fit in half of this machine's memory, not under a 6 GB
    RLIMIT_AS (which ended in a MemoryError while drawing them, the run FAILED)."""
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "svmrepro", "dataset.n_train=100000000",
         f"tracking.uri=sqlite:///{tmp_path / 'mlflow.db'}", f"hydra.run.dir={tmp_path / 'run'}"],
        capture_output=True, text=True, timeout=120, check=False, preexec_fn=_address_space_limited)
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert done.returncode == 2 and len(lines) == 1, done.stderr[-3000:]
    assert re.fullmatch(r"svmrepro-run: error: dataset\.n_train=100000000 is invalid: expected at most \d+ with "
                        r"n_test=10000: gaussian_clouds fits \d+ rows of 11 values in half of .+", lines[0]), lines
    cgroup = cgroup_memory_limit()
    if min(physical_memory(), cgroup[0] if cgroup else ADDRESS_SPACE) >= ADDRESS_SPACE:  # RLIMIT_AS is the smallest
        assert re.search(r"in half of the [\d.]+ GiB of address space left under this process's 5\.7 GiB limit "
                         r"\(ulimit -v, RLIMIT_AS\)$", lines[0]), lines
    assert not (tmp_path / "mlflow.db").exists()  # refused before the store was opened, let alone the data drawn
    assert time.monotonic() - started < 60


def test_without_scikit_learn_intelex_svc_onedal_is_one_line_and_exit_code_2(tmp_path):
    """A sitecustomize hides sklearnex from the run's interpreter, as a platform it does not install on."""
    hide = tmp_path / "hide"
    hide.mkdir()
    (hide / "sitecustomize.py").write_text("import sys\nsys.modules['sklearnex'] = None\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(hide), os.environ.get("PYTHONPATH")]))}
    done = subprocess.run(
        [sys.executable, "-m", "svmrepro", "algorithm=svc_onedal", "dataset=gaussian_clouds",
         f"tracking.uri=sqlite:///{tmp_path / 'mlflow.db'}", f"hydra.run.dir={tmp_path}"],
        capture_output=True, text=True, timeout=120, env=env)
    assert done.returncode == 2
    assert done.stderr.strip() == ('svmrepro-run: error: algorithm._target_: sklearnex.svm.SVC needs '
                                   'scikit-learn-intelex (Linux x86-64): pip install "svmrepro[onedal]"')
    assert not (tmp_path / "mlflow.db").exists()


# --- a tracking store that cannot be reached ------------------------------------------------


@pytest.fixture
def closed_port_uri():
    """http://127.0.0.1:<a port nobody listens on>."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}"


def test_an_unreachable_server_fails_in_seconds_naming_it(closed_port_uri):
    started = time.monotonic()
    with pytest.raises(TrackingError, match=f"tracking store {closed_port_uri} cannot be reached: .*refused"):
        Store(closed_port_uri)
    assert time.monotonic() - started < 10  # MLflow's own retries take minutes


def test_a_sqlite_store_in_a_folder_that_cannot_be_made_is_refused(tmp_path):
    (tmp_path / "a_file").write_text("")
    uri = f"sqlite:///{tmp_path / 'a_file' / 'sub' / 'mlflow.db'}"
    with pytest.raises(TrackingError, match=f"tracking store {uri} cannot be reached: cannot create"):
        Store(uri)


def test_a_sqlite_store_in_a_new_folder_is_still_made(tmp_path):
    probe(f"sqlite:///{tmp_path / 'new' / 'mlflow.db'}")  # the folder, as MLflow itself would
    assert (tmp_path / "new").is_dir()


@pytest.mark.parametrize("sweep", [False, True], ids=["run", "sweep"])
def test_the_command_line_names_an_unreachable_store_in_one_line(closed_port_uri, sweep, tmp_path):
    args = ["-m", f"hydra.sweep.dir={tmp_path / 'sweep'}"] if sweep else []
    done = _cli(*args, "dataset.n_train=50", "seed=0", f"tracking.uri={closed_port_uri}")
    assert done.returncode == 2
    assert done.lines[-1].startswith(f"svmrepro-run: error: tracking store {closed_port_uri} cannot be reached")
    assert "Traceback" not in done.stderr and "Retrying" not in done.stderr + done.stdout
    assert done.seconds < 60  # start-up included; MLflow's retries alone would take minutes


# --- data files: a run whose data cannot be read logs nothing ---------------------------------


@pytest.mark.skipif(not BANANA.is_file(), reason="shared/data/raetsch/banana.mat is not present")
def test_a_run_whose_data_file_is_missing_or_truncated_logs_nothing(tmp_path, monkeypatch, store_uri):
    shared = tmp_path / "shared" / "raetsch"
    shared.mkdir(parents=True)
    monkeypatch.setenv("SVMREPRO_DATA", str(tmp_path / "home"))
    monkeypatch.setenv("SVMREPRO_SHARED_DATA", str(shared.parent))
    monkeypatch.setenv(OFFLINE_ENV, "1")
    cfg = compose_config(["dataset=banana", "algorithm=svc_linear", f"tracking.uri={store_uri}"])
    with pytest.raises(DataError, match="banana.mat") as missing:
        run(cfg, {"experiment": "test/bad_input"})
    (shared / "banana.mat").write_bytes(BANANA.read_bytes()[: BANANA.stat().st_size // 2])
    with pytest.raises(DataError, match="checksum mismatch") as truncated:
        run(cfg, {"experiment": "test/bad_input"})
    assert "\n" not in str(missing.value) + str(truncated.value)
    client = MlflowClient(store_uri)
    assert not client.search_runs([client.get_experiment_by_name("test/bad_input").experiment_id])


@pytest.fixture
def banana_home(tmp_path, monkeypatch):
    """An offline data home with an empty shared/data: raetsch/banana.mat is what the test puts there."""
    monkeypatch.setenv("SVMREPRO_DATA", str(tmp_path / "home"))
    monkeypatch.setenv("SVMREPRO_SHARED_DATA", str(tmp_path / "shared"))
    monkeypatch.setenv(OFFLINE_ENV, "1")
    (tmp_path / "shared").mkdir()
    folder = tmp_path / "home" / "raetsch"
    folder.mkdir(parents=True)
    return folder / "banana.mat"


def test_an_unreadable_data_file_is_one_line_naming_it_and_nothing_is_logged(banana_home, monkeypatch, store_uri):
    banana_home.write_bytes(b"any content: it is never read")

    def refusing_open(path, *args, **kwargs):  # what chmod 000 does to a user who is not root
        if Path(path) == banana_home:
            raise PermissionError(13, "Permission denied", str(path))
        return open(path, *args, **kwargs)

    monkeypatch.setattr(files, "open", refusing_open, raising=False)
    cfg = compose_config(["dataset=banana", "algorithm=svc_linear", f"tracking.uri={store_uri}"])
    with pytest.raises(DataError) as err:
        run(cfg, {"experiment": "test/bad_input"})
    assert str(err.value) == f"cannot read data file {banana_home}: Permission denied"
    client = MlflowClient(store_uri)
    assert not client.search_runs([client.get_experiment_by_name("test/bad_input").experiment_id])


def _banana_cli(banana_home, *args):
    store = f"tracking.uri=sqlite:///{banana_home.parent / 'mlflow.db'}"
    return _cli(*args, "dataset=banana", "algorithm=svc_linear", store)


@pytest.mark.parametrize("sweep", [False, True], ids=["run", "sweep"])
def test_a_directory_in_place_of_a_data_file_is_one_line_per_job(banana_home, sweep):
    banana_home.mkdir()  # unreadable for root too
    sweep_args = ["-m", "seed=0,1", f"hydra.sweep.dir={banana_home.parent / 'sweep'}"] if sweep else []
    done = _banana_cli(banana_home, *sweep_args, f"hydra.run.dir={banana_home.parent / 'out'}")
    message = f"cannot read data file {banana_home}: Is a directory"
    assert "Traceback" not in done.stderr + done.stdout
    if sweep:  # the failure summary: one line per job
        failures = [line for line in done.lines if line.startswith("  #")]
        assert done.returncode == 1 and len(failures) == 2
        assert all(message in line for line in failures)
    else:  # before it, only MLflow's lines about creating the new store
        assert done.returncode == 2 and done.lines[-1] == f"svmrepro-run: error: {message}"
        assert sum(str(banana_home) in line for line in done.lines) == 1


@pytest.mark.skipif(hasattr(os, "geteuid") and os.geteuid() == 0, reason="root reads a chmod 000 file")
def test_a_data_file_without_read_permission_is_one_line(banana_home):
    banana_home.write_bytes(b"unreadable")
    banana_home.chmod(0)
    done = _banana_cli(banana_home, f"hydra.run.dir={banana_home.parent / 'out'}")
    assert done.returncode == 2
    assert done.lines[-1] == f"svmrepro-run: error: cannot read data file {banana_home}: Permission denied"
    assert sum(str(banana_home) in line for line in done.lines) == 1


# --- every algorithm parameter out of its range ----------------------------------------------


def constrained_params(estimator: BaseEstimator, prefix: str = "") -> list[tuple[str, list]]:
    """(config path, constraints) of every parameter with a range or a set of options, those of the
    estimators nested in it (``estimator=SVC(...)``) included."""
    found = []
    table = getattr(estimator, "_parameter_constraints", {})
    for name, value in estimator.get_params(deep=False).items():
        if any(isinstance(c, (Interval, StrOptions)) for c in table.get(name, [])):
            found.append((f"{prefix}{name}", table[name]))
        if isinstance(value, BaseEstimator):
            found += constrained_params(value, f"{prefix}{name}.")
    return found


def _outside(interval: Interval) -> list[st.SearchStrategy]:
    """Numbers of the interval's type just past either end (anywhere past it)."""
    below, above = interval.closed in ("left", "both"), interval.closed in ("right", "both")
    if issubclass(interval.type, Integral):
        ends = [st.integers(-(10**9), int(interval.left) - below)] if interval.left is not None else []
        return ends + ([st.integers(int(interval.right) + above, 10**9)] if interval.right is not None else [])
    floats = dict(allow_nan=False, allow_infinity=False)
    ends = [st.floats(-1e9, interval.left, exclude_max=below, **floats)] if interval.left is not None else []
    return ends + ([st.floats(interval.right, 1e9, exclude_min=above, **floats)] if interval.right is not None else [])


def invalid_values(constraints: list) -> st.SearchStrategy:
    """Values no constraint of the list accepts: out-of-range numbers, unknown option names."""
    options = [s for c in constraints if isinstance(c, Interval) for s in _outside(c)]
    if any(isinstance(c, StrOptions) for c in constraints):
        options.append(st.text(string.ascii_lowercase + "_", min_size=1, max_size=12))
    checks = [make_constraint(c) for c in constraints]
    return st.one_of(options).filter(lambda value: not any(check.is_satisfied_by(value) for check in checks))


@pytest.mark.parametrize("algorithm", [pytest.param(a, marks=needs_extra(a)) for a in ALGORITHMS])
def test_an_out_of_range_algorithm_value_is_one_line_naming_it(algorithm):
    cfg = compose_config([f"algorithm={algorithm}"])
    params = constrained_params(build(cfg).estimator)
    assert params, f"{algorithm} declares no ranges or options"

    @settings(max_examples=60, deadline=None, database=None)
    @given(st.data())
    def check(data):
        path, constraints = data.draw(st.sampled_from(params), label="parameter")
        value = data.draw(invalid_values(constraints), label="value")
        bad = cfg.copy()
        with open_dict(bad):
            OmegaConf.update(bad, f"algorithm.{path}", value, force_add=True)
        with pytest.raises(ConfigError) as err:
            build(bad)
        message = str(err.value)
        assert message.startswith(f"algorithm.{path}=") and "\n" not in message

    check()


# --- n_jobs 0: refused by every estimator that takes n_jobs, before any fit (issue 46, item 13) ------------


def _takes_n_jobs() -> list[type]:
    """Every estimator class of svmrepro (its algorithms and benchmarks) whose constructor takes ``n_jobs``: a
    new one is held to the rule without being listed here."""
    names = [m.name for m in pkgutil.iter_modules(svmrepro.algorithms.__path__, "svmrepro.algorithms.")]
    found = {}
    for name in [*names, "svmrepro.bench", "svmrepro.bench_expansion"]:
        module = importlib.import_module(name)
        for _, cls in inspect.getmembers(module, inspect.isclass):
            if (issubclass(cls, BaseEstimator) and cls.__module__ == name
                    and "n_jobs" in inspect.signature(cls).parameters):
                found[cls.__name__] = cls
    return [found[name] for name in sorted(found)]


TAKES_N_JOBS = _takes_n_jobs()


def test_the_estimators_that_take_n_jobs_are_all_found():
    assert {"BaggedFirstStageSVC", "CrossTrainingSVC", "GatedSVMMixture", "GrafCascadeSVC", "ParallelSpeedup",
            "WenLuCascadeSVC", "WilsonEdit"} <= {cls.__name__ for cls in TAKES_N_JOBS}


@pytest.mark.parametrize("cls", TAKES_N_JOBS, ids=lambda cls: cls.__name__)
def test_n_jobs_0_is_refused_by_every_estimator_in_one_line_naming_the_key(cls):
    """scikit-learn's convention: None or a nonzero int; joblib refused 0 only when the fit started."""
    required = {name: WenLuCascadeSVC() for name, p in inspect.signature(cls).parameters.items()
                if p.default is inspect.Parameter.empty}
    listed = isinstance(inspect.signature(cls).parameters["n_jobs"].default, (list, tuple))  # ParallelSpeedup's
    bad = [1, 0] if listed else 0
    estimator = cls(**required, n_jobs=bad)
    with pytest.raises(ConfigError) as err:
        check_estimator_params(estimator, "algorithm")
    line = str(err.value)
    assert line.startswith(f"algorithm.n_jobs={bad!r} is invalid: The 'n_jobs' parameter of {cls.__name__} ")
    assert "\n" not in line
    for good in ([1, -1], [1, 2]) if listed else (None, 1, 2, -1, -2):
        check_estimator_params(cls(**required, n_jobs=good), "algorithm")


@pytest.mark.parametrize("sweep", [False, True], ids=["run", "sweep"])
def test_svmrepro_run_refuses_n_jobs_0_before_any_fit(sweep, tmp_path):
    args = ["-m", "seed=0,1", f"hydra.sweep.dir={tmp_path / 'sweep'}"] if sweep else [f"hydra.run.dir={tmp_path}"]
    done = _cli(*args, "algorithm=cascade_svc", "algorithm.n_jobs=0", "dataset.n_train=40",
                f"tracking.uri=sqlite:///{tmp_path / 'mlflow.db'}")
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr[-3000:]
    given = "command line algorithm.n_jobs=choice(0): 0" if sweep else "algorithm.n_jobs=0"  # the sweeper's words
    assert done.lines[-1] == (f"svmrepro-run: error: {given} is invalid: The 'n_jobs' parameter of WenLuCascadeSVC "
                              "must be an int in the range (-inf, -1], an int in the range [1, inf) or None. "
                              "Got 0 instead.")
    if not sweep:
        assert len(done.lines) == 1 and not (tmp_path / "mlflow.db").exists()


# --- folders that cannot be written: one line naming the folder, before anything runs -----------


@pytest.fixture
def read_only(tmp_path):
    """A folder nothing can be written in: read-only for a user, a read-only file system for root
    (whom permissions do not stop)."""
    folder = tmp_path / "read_only"
    folder.mkdir()
    if os.geteuid() != 0:
        folder.chmod(0o555)
        yield folder
        folder.chmod(0o755)
        return
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "ro,size=64k", "tmpfs", str(folder)]).returncode:
        pytest.skip("root, and a read-only file system cannot be mounted here")
    try:
        yield folder
    finally:
        subprocess.run(["umount", str(folder)], check=True)


@pytest.mark.parametrize("sweep", [False, True], ids=["run", "sweep"])
def test_an_output_folder_that_cannot_be_written_is_one_line_naming_it(read_only, sweep, tmp_path):
    key = "hydra.sweep.dir" if sweep else "hydra.run.dir"
    done = _cli(*(["-m", "seed=0,1"] if sweep else []), "dataset.n_train=40", f"{key}={read_only / 'out'}",
                f"tracking.uri=sqlite:///{tmp_path / 'mlflow.db'}")
    assert done.returncode == 2
    assert len(done.lines) == 1 and done.lines[0].startswith(
        f"svmrepro-run: error: the output folder {read_only / 'out'} ({key}) cannot be written: "), done.stderr
    assert not (tmp_path / "mlflow.db").exists()  # refused before the store was opened


@pytest.mark.parametrize("where", ["results-dir", "current-folder"])
def test_a_reproduction_whose_folders_cannot_be_written_is_one_line_naming_them(read_only, where, tmp_path,
                                                                               monkeypatch, capsys):
    if where == "results-dir":
        args, line = ["--results-dir", str(read_only / "results")], f"the results folder {read_only / 'results'}"
    else:
        monkeypatch.chdir(read_only)
        args, line = ["--results-dir", str(tmp_path / "results")], f"the current folder {read_only}"
    assert reproduce(["--experiment", "cross_training/fig3_baseline", *args]) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and err[0].startswith(f"svmrepro-reproduce: error: {line} cannot be written"), err


def test_from_csv_without_its_results_folder_is_refused_naming_it(tmp_path, capsys):
    missing = tmp_path / "no_results"
    assert reproduce(["--experiment", "cross_training/fig3_baseline", "--from-csv", "--results-dir", str(missing)]) == 2
    assert capsys.readouterr().err.splitlines() == [
        f"svmrepro-reproduce: error: --from-csv: no results folder {missing}: expected the outputs' runs CSVs in it "
        "(<paper>/<id>.runs.csv); give --results-dir, or build from MLflow first"]


# --- a user's config folder with a malformed file -------------------------------------------


@pytest.mark.parametrize("program", ["svmrepro-run", "svmrepro-reproduce"])
def test_a_malformed_yaml_file_in_a_config_dir_is_one_line_naming_it(program, tmp_path, capsys):
    mine = tmp_path / "my_conf" / "experiment" / "mine"
    mine.mkdir(parents=True)
    (mine / "tiny.yaml").write_text("report:\n  title: [unclosed\n  x: : y\n")
    if program == "svmrepro-run":
        done = _cli("--config-dir", str(tmp_path / "my_conf"), "experiment=mine/tiny", f"hydra.run.dir={tmp_path}")
        code, lines = done.returncode, done.lines
    else:
        code = reproduce(["--config-dir", str(tmp_path / "my_conf"), "--experiment", "mine/tiny", "--check"])
        lines = capsys.readouterr().err.splitlines()
    assert code == 2
    assert lines == [f"{program}: error: config file {mine / 'tiny.yaml'} is not valid YAML at line 3, column 4: "
                     "expected ',' or ']', but got ':'"]


#: a config file in Latin-1: "café" with its é (0xe9) at byte offset 20, on line 2
LATIN1 = "report:\n  title: café\n".encode("latin-1")
NOT_UTF8 = "is not valid UTF-8 at byte offset 20 (line 2): byte 0xe9, invalid continuation byte; save it as UTF-8"


@pytest.mark.parametrize("program", ["svmrepro-run", "svmrepro-reproduce", "svmrepro-data"])
def test_a_config_file_that_is_not_utf8_is_one_line_naming_it_and_the_byte(program, tmp_path, capsys):
    """Issue 46, item 13: a UnicodeDecodeError of 25 lines before."""
    mine = tmp_path / "my_conf" / "experiment" / "mine"
    mine.mkdir(parents=True)
    (mine / "tiny.yaml").write_bytes(LATIN1)
    if program == "svmrepro-run":
        done = _cli("--config-dir", str(tmp_path / "my_conf"), "experiment=mine/tiny", f"hydra.run.dir={tmp_path}")
        code, lines = done.returncode, done.lines
    elif program == "svmrepro-reproduce":
        code = reproduce(["--config-dir", str(tmp_path / "my_conf"), "--experiment", "mine/tiny", "--check"])
        lines = capsys.readouterr().err.splitlines()
    else:
        from svmrepro.data.cli import main as data_cli

        code = data_cli(["list", "--config-dir", str(tmp_path / "my_conf")])
        lines = capsys.readouterr().err.splitlines()
    assert code == 2
    assert lines == [f"{program}: error: config file {mine / 'tiny.yaml'} {NOT_UTF8}"]


def test_a_config_file_of_svmrepros_own_folder_that_is_not_utf8_is_one_line_too(tmp_path, monkeypatch):
    """svmrepro's ``conf/`` (a checkout's, edited in place) is read before Hydra composes too: by svmrepro-run
    (its own process, the package's folder replaced before svmrepro is imported) and by every command that
    takes --config-dir (svmrepro-reproduce, svmrepro-data: :func:`svmrepro.compose.use_config_dirs`)."""
    conf = tmp_path / "conf"
    (conf / "dataset").mkdir(parents=True)
    (conf / "dataset" / "mine.yaml").write_bytes(LATIN1)
    replaced = (f"import sys; from pathlib import Path; import svmrepro.locations as where; "
                f"where.CONF_DIR = Path({str(conf)!r}); from svmrepro.app import main; "
                f"sys.argv = ['svmrepro-run', 'hydra.run.dir={tmp_path / 'run'}']; main()")
    done = subprocess.run([sys.executable, "-c", replaced], capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 2
    assert done.stderr.splitlines() == [f"svmrepro-run: error: config file {conf / 'dataset' / 'mine.yaml'} {NOT_UTF8}"]
    monkeypatch.setattr(compose, "CONF_DIR", conf)
    with pytest.raises(ConfigError) as err:
        compose.use_config_dirs([])
    assert str(err.value) == f"config file {conf / 'dataset' / 'mine.yaml'} {NOT_UTF8}"


def test_a_directory_where_the_covtype_cache_belongs_is_one_line_naming_it(tmp_path, monkeypatch):
    """Refused before the parse (seconds), whose table could not be kept there anyway."""
    monkeypatch.setenv("SVMREPRO_DATA", str(tmp_path))
    cache = tmp_path / "covtype" / f"covtype-{covtype.CONTENT_SHA256[:16]}.npy"
    cache.mkdir(parents=True)
    monkeypatch.setattr(covtype, "parse", None)  # never reached
    with pytest.raises(DataError) as err:
        covtype.load_table()
    assert str(err.value) == f"covtype cache {cache} is not a file: remove it (svmrepro writes the parsed table there)"


# --- a full disk ------------------------------------------------------------------------------


@pytest.fixture
def small_disk(tmp_path):
    """A 250 KiB file system: room for a job's files and one run's artifacts, not for four."""
    folder = tmp_path / "small_disk"
    folder.mkdir()
    if os.geteuid() != 0 or subprocess.run(["mount", "-t", "tmpfs", "-o", "size=250k", "tmpfs", str(folder)]).returncode:
        pytest.skip("a small file system needs root (mount -t tmpfs)")
    try:
        yield folder
    finally:
        subprocess.run(["umount", str(folder)], check=True)


def test_a_full_disk_stops_the_sweep_in_one_line_naming_the_path_and_the_finished_runs_are_kept(small_disk, tmp_path):
    """Issue 46, item 10: the first job whose write is refused stops the sweep (the jobs after it never start),
    one line names the cause and the path, the sweep run ends FAILED and the runs that finished are whole."""
    store = f"sqlite:///{tmp_path / 'mlflow.db'}"
    done = _cli("-m", "seed=range(6)", "dataset=checkerboard", "+surface.resolution=100", f"tracking.uri={store}",
                f"tracking.artifact_root={small_disk / 'artifacts'}", f"hydra.sweep.dir={small_disk / 'sweep'}")
    output = done.stdout + done.stderr
    assert done.returncode == 1
    assert "Traceback" not in output and "Logging error" not in output, output[-3000:]
    failed = [line for line in output.splitlines() if re.search(r"job \d failed", line)]
    disk = re.escape(str(small_disk))
    where = rf"no space left on the device: {disk}/\S+( or {disk}/\S+)? \(OSError: \[Errno 28\] No space left on device\)"
    assert failed and all(re.search(rf"failed: {where}$", line) for line in failed), failed
    stop = re.fullmatch(rf"svmrepro-run: the sweep stopped( at job \d)?: {where}", done.lines[-2])
    assert stop and done.lines[-1].strip().endswith("the same command runs the rest"), done.lines[-3:]
    client = MlflowClient(store)
    experiment = client.get_experiment_by_name("adhoc").experiment_id
    runs = client.search_runs([experiment], "tags.`svmrepro.kind` != 'sweep'")
    finished = [run for run in runs if run.info.status == "FINISHED"]
    assert sum(" FINISHED: " in line for line in output.splitlines()) == len(finished) >= 1
    assert all("test_error" in run.data.metrics for run in finished)
    assert len(runs) < 6, "jobs started after the sweep stopped"
    (sweep,) = client.search_runs([experiment], "tags.`svmrepro.kind` = 'sweep'")
    assert sweep.info.status == "FAILED"


def test_a_refused_write_is_named_by_its_cause_and_path_whatever_reports_it():
    """The causes item 10 names (a full disk, a quota, ``ulimit -f``, an I/O error), as an OSError deep in a
    chain or as SQLite's message through MLflow; any other error is not the storage's."""
    import errno

    from svmrepro.errors import storage_failure

    def chained(inner, outer):
        try:
            try:
                raise inner
            except Exception as cause:
                raise outer from cause
        except Exception as error:
            return error

    big = OSError(errno.EFBIG, "File too large", "/s/artifacts/model.pkl")
    assert storage_failure(chained(big, RuntimeError("log_artifact failed"))) == (
        "file too large for the file-size limit (ulimit -f): /s/artifacts/model.pkl")
    assert storage_failure(OSError(errno.EDQUOT, "Disk quota exceeded", "/q/f")) == "disk quota exceeded: /q/f"
    sqlite = RuntimeError("(raised as a result of Query-invoked autoflush; ...) (sqlite3.OperationalError) disk I/O error")
    assert storage_failure(sqlite, "sqlite:////s/mlflow.db") == "input/output error on the disk: sqlite:////s/mlflow.db"
    assert storage_failure(OSError(errno.ENOSPC, "No space left on device")) == (
        "no space left on the device (OSError: [Errno 28] No space left on device)")
    assert storage_failure(OSError(errno.ENOSPC, "No space left on device"), places=["/no/such/a", "/no/such/b"]) == (
        "no space left on the device: /no/such/a or /no/such/b (OSError: [Errno 28] No space left on device)")
    assert storage_failure(OSError(errno.ENOENT, "No such file", "/x")) is None
    assert storage_failure(ValueError("bad C")) is None
