"""The suite's fixtures; first, each pytest-xdist worker's share of the cores for BLAS and OpenMP."""

import fcntl
import json
import os
import signal
import tempfile
from pathlib import Path

#: the variables that size a process's BLAS and OpenMP thread pools, read when their libraries load
THREAD_VARS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")

if os.environ.get("PYTEST_XDIST_WORKER_COUNT"):
    # In a pytest-xdist worker, BLAS and OpenMP get the worker's share of the cores, as scikit-learn's own
    # conftest gives them, here (set before this module imports numpy, when the libraries read them) and in every
    # process the tests start. Each pool would otherwise take every core: two workers run four threads on two
    # cores, whose idle threads spin on the CPU the other worker needs. A count the user set is kept. Set in the
    # environment, not by threadpoolctl: a limit the main thread holds would make it the owner of OpenBLAS, and
    # the tasks' own limits (svmrepro.algorithms.parallel) would not apply (tests/test_engines.py tests them).
    _share = str(max(1, (os.cpu_count() or 1) // int(os.environ["PYTEST_XDIST_WORKER_COUNT"])))
    for _name in THREAD_VARS:
        os.environ.setdefault(_name, _share)

import pytest

from installed_wheel import build_wheel, install_wheel
from stores import copy_store

from svmrepro.compose import compose_config
from svmrepro.exclusive import LOCK_ENV


def pytest_configure(config):
    """Ctrl-C reaches the processes the tests start as a terminal sends it, however the suite was started: a shell
    starts a background job (``make test &``, ``nohup``) with SIGINT ignored, which every process it starts
    inherits, so Python would leave Ctrl-C ignored in them and the tests of Ctrl-C would wait for nothing. A
    handler here (not an ignore) is reset to the default in each child at its exec."""
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.fixture(scope="session")
def empty_store(tmp_path_factory) -> Path:
    """An empty embedded MLflow store at this MLflow's schema, made once for the run's test processes
    (:func:`made_once`): MLflow builds a new SQLite store in seconds (its tables, then each of its migrations),
    which every test needing a store of its own would otherwise wait for. Only read: tests copy it
    (tests/stores.py)."""
    from svmrepro.store import ensure_store

    def make(folder: Path) -> str:
        ensure_store(f"sqlite:///{folder / 'mlflow.db'}")
        return str(folder / "mlflow.db")

    return Path(made_once(tmp_path_factory, "empty_store", make))


@pytest.fixture
def store_uri(tmp_path, empty_store):
    """A fresh embedded MLflow store (SQLite) for one test: a copy of :func:`empty_store`."""
    return copy_store(empty_store, tmp_path / "mlflow.db")


@pytest.fixture
def tiny_cfg(store_uri):
    """A seconds-long run: linear SVC on 120 Gaussian-cloud points, logged to the test's store."""

    def make(*overrides):
        return compose_config(
            [
                "dataset=gaussian_clouds", "dataset.n_train=120", "dataset.n_test=200",
                "algorithm=svc_linear", f"tracking.uri={store_uri}", *overrides,
            ]
        )

    return make


@pytest.fixture(autouse=True, scope="session")
def own_timing_lock(tmp_path_factory):
    """Each pytest worker's runs hold a machine slot of their own (svmrepro.exclusive), so a timed
    experiment's run in one worker does not wait for the other worker's tests."""
    os.environ[LOCK_ENV] = str(tmp_path_factory.mktemp("timing") / "timing.lock")


def made_once(tmp_path_factory, name: str, make):
    """What ``make(folder)`` returned (kept as JSON), made once for the whole run: pytest-xdist's workers share
    the folder above their own temporary folders, and the first of them to need it makes it in a new folder
    there while the others wait on a lock, then read it. A make that failed is made again by the next."""
    base = tmp_path_factory.getbasetemp()
    root = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
    record = root / f"{name}.json"
    with open(root / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not record.is_file():
            record.write_text(json.dumps(make(Path(tempfile.mkdtemp(prefix=f"{name}-", dir=root)))))
        return json.loads(record.read_text())


@pytest.fixture(scope="session")
def built(tmp_path_factory):
    """The wheel of this checkout and what its build printed, built once for every test that reads or
    installs it (tests/installed_wheel.py), in any of the run's test processes."""
    wheel, printed = made_once(tmp_path_factory, "wheel", lambda folder: [str(p) for p in build_wheel(folder)])
    return Path(wheel), printed


@pytest.fixture(scope="session")
def venv(built, tmp_path_factory):
    """The bin folder of a fresh virtualenv with the wheel of this checkout installed, one for the run's test
    processes: the tests only read it (tests/test_own_study.py checks that a command leaves its package as it
    was)."""
    return Path(made_once(tmp_path_factory, "venv", lambda folder: str(install_wheel(built[0], folder))))
