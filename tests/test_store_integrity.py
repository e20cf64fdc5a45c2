"""A damaged SQLite store is never written to: a run, a sweep, ``--check`` and a build refuse it in
one line naming the file and the commands that rebuild it, and leave its bytes as they were.

Before: 8 KiB of 0xFF in the middle of ``mlflow.db`` and ``svmrepro-run`` exited 0 having added a
run to it; with zeroed pages the run crashed (134 lines) after making an experiment and a run.
"""

import hashlib
import shutil
import subprocess
import sys
from pathlib import Path

import forked_cli
import pytest

from svmrepro.bench import log_synthetic_runs
from svmrepro.reproduce import main as reproduce
from svmrepro.store import Store, TrackingError, sqlite

PAGE = 4096


@pytest.fixture(scope="module")
def whole_store(tmp_path_factory) -> Path:
    """A store that holds runs (made once; each test damages a copy of its own)."""
    db = tmp_path_factory.mktemp("whole") / "mlflow.db"
    log_synthetic_runs(Store(f"sqlite:///{db}"), 5)
    return db


def _overwrite(db: Path, data: bytes) -> None:
    """Write ``data`` over whole pages in the middle of ``db``."""
    with db.open("r+b") as handle:
        handle.seek(db.stat().st_size // 2 // PAGE * PAGE)
        handle.write(data)


@pytest.fixture(params=[b"\xff" * 8192, b"\x00" * 4 * PAGE], ids=["0xff", "zeroed-pages"])
def damaged(request, whole_store, tmp_path) -> Path:
    db = tmp_path / "store" / "mlflow.db"
    db.parent.mkdir()
    shutil.copy(whole_store, db)
    _overwrite(db, request.param)
    return db


def _digest(db: Path) -> str:
    return hashlib.sha256(db.read_bytes()).hexdigest()


def test_a_damaged_store_is_refused_with_its_repair_and_left_as_it_is(damaged):
    before = _digest(damaged)
    with pytest.raises(TrackingError) as caught:
        Store(f"sqlite:///{damaged}")
    message = str(caught.value)
    assert "\n" not in message and f"{damaged} is damaged" in message
    assert f"cp {damaged} {damaged}.bak && sqlite3 {damaged}.bak .dump" in message
    assert _digest(damaged) == before


def test_svmrepro_run_refuses_a_damaged_store_in_one_line(damaged, tmp_path):
    before = _digest(damaged)
    done = forked_cli.run([sys.executable, "-m", "svmrepro", "dataset=gaussian_clouds", "dataset.n_train=60",
                           "dataset.n_test=50", "algorithm=svc_linear", f"tracking.uri=sqlite:///{damaged}",
                           f"hydra.run.dir={tmp_path / 'out'}"], capture_output=True, text=True, timeout=300)
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("svmrepro-run: error: tracking store ") and "is damaged" in lines[0]
    assert _digest(damaged) == before  # no experiment, no run


def test_check_refuses_a_damaged_store_in_one_line(damaged, tmp_path, capsys):
    before = _digest(damaged)
    code = reproduce(["--check", "--experiment", "cascade/table1", "--mode", "quick",
                      "--tracking-uri", f"sqlite:///{damaged}", "--results-dir", str(tmp_path / "results")])
    captured = capsys.readouterr()
    assert code == 2
    assert captured.err.strip().count("\n") == 0 and "is damaged" in captured.err and not captured.out
    assert _digest(damaged) == before


@pytest.mark.skipif(not shutil.which("sqlite3"), reason="the sqlite3 shell (Debian's package sqlite3)")
def test_the_repair_in_the_message_rebuilds_a_store_that_opens(damaged):
    with pytest.raises(TrackingError) as caught:
        Store(f"sqlite:///{damaged}")
    command = str(caught.value).split("to rebuild it: ", 1)[1].split(", check the runs in ", 1)[0]
    subprocess.run(command, shell=True, check=True, capture_output=True)
    rebuilt = damaged.with_name("mlflow.rebuilt.db")
    Store(f"sqlite:///{rebuilt}")  # whole, at MLflow's schema
    assert (damaged.parent / "mlflow.db.bak").read_bytes() == damaged.read_bytes()


def test_a_whole_store_is_checked_once_per_process(whole_store, tmp_path, monkeypatch):
    db = tmp_path / "mlflow.db"
    shutil.copy(whole_store, db)
    opened = []
    connect = sqlite._connect
    monkeypatch.setattr(sqlite, "_connect", lambda path: opened.append(path) or connect(path))
    for _ in range(3):
        assert sqlite.damage(db, f"sqlite:///{db}") is None
    assert len(opened) == 1
