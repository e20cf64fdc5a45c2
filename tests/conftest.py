import os
import signal
from pathlib import Path

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
    """An empty embedded MLflow store at this MLflow's schema, made once per test process: MLflow builds a new
    SQLite store in seconds (its tables, then each of its migrations), which every test needing a store of its
    own would otherwise wait for."""
    from svmrepro.store import ensure_store

    path = tmp_path_factory.mktemp("empty_store") / "mlflow.db"
    ensure_store(f"sqlite:///{path}")
    return path


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


@pytest.fixture(scope="session")
def built(tmp_path_factory):
    """The wheel of this checkout and what its build printed, built once for every test that reads or
    installs it (tests/installed_wheel.py)."""
    return build_wheel(tmp_path_factory.mktemp("wheel"))


@pytest.fixture(scope="session")
def venv(built, tmp_path_factory):
    """The bin folder of a fresh virtualenv with the wheel of this checkout installed."""
    return install_wheel(built[0], tmp_path_factory.mktemp("venv"))
