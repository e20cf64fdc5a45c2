"""A SQLite store made whole or not at all, a broken one reported instead of migrated, and one run
per identity: processes killed while MLflow builds a new store, processes starting at once on a
missing store, identical runs started at once, and ``--check`` on broken and duplicated stores.

The processes are real: a child imports svmrepro, says ``ready``, waits for ``go`` on its stdin and
then opens the store, so the test's clock starts when the store's creation does.
"""

import hashlib
import os
import random
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import mlflow.store.db_migrations
import pytest
from alembic.script import ScriptDirectory
from mlflow.tracking import MlflowClient
from test_faults import identical_runs_at_once

from svmrepro.compose import compose_config, compose_run
from svmrepro.sweep.jobs import sweep_jobs
from svmrepro.reproduce import main as reproduce
from svmrepro.runner import FINISHED, run
from svmrepro.store import Store, TrackingError
from svmrepro.store import sqlite as sqlite_store

HEAD = ScriptDirectory(os.path.dirname(mlflow.store.db_migrations.__file__)).get_current_head()
#: a child that opens the store at argv[1] on "go" and, with argv[2], logs one run to it
OPEN_STORE = """
import sys
import alembic.command, mlflow.store.tracking.sqlalchemy_store  # imported before "ready": seconds
from svmrepro.store import Store
print("ready", flush=True)
sys.stdin.readline()
store = Store(sys.argv[1])
if len(sys.argv) > 2:
    run_id = store.start_run(store.experiment_id("adhoc"), sys.argv[2], {})
    store.terminate(run_id, "FINISHED")
print("done", flush=True)
"""


def _children(*argvs: list[str]) -> list[subprocess.Popen]:
    """Start one OPEN_STORE child per argv and return them once all are ready (not yet told go)."""
    children = [subprocess.Popen([sys.executable, "-c", OPEN_STORE, *argv], stdin=subprocess.PIPE,
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for argv in argvs]
    for child in children:
        assert child.stdout.readline().strip() == "ready", child.stderr.read()
    return children


def _go(child: subprocess.Popen) -> None:
    child.stdin.write("go\n")
    child.stdin.flush()


def _whole(db: Path) -> bool:
    """The store passes SQLite's integrity check, is at MLflow's schema (read without writing)
    and MLflow searches it."""
    with sqlite3.connect(f"{db.as_uri()}?mode=ro", uri=True) as con:
        assert con.execute("pragma integrity_check").fetchall() == [("ok",)]
        tables = {name for (name,) in con.execute("select name from sqlite_master where type = 'table'")}
        assert not [t for t in tables if t.startswith("_alembic_tmp_")], tables
        assert con.execute("select version_num from alembic_version").fetchall() == [(HEAD,)]
    MlflowClient(f"sqlite:///{db}").search_runs(["0"])
    return True


def test_a_creation_killed_at_any_moment_leaves_no_store_or_a_whole_one(tmp_path):
    """Six creations at once, each SIGKILLed 0-1.5 s after it started (one alone takes 1-3 s here)."""
    rng = random.Random(16)
    dbs = [tmp_path / f"s{i}" / "mlflow.db" for i in range(6)]
    children = _children(*[[f"sqlite:///{db}"] for db in dbs])
    for child in children:
        _go(child)
    started = time.monotonic()
    for child, at in sorted(zip(children, (rng.uniform(0, 1.5) for _ in dbs)), key=lambda pair: pair[1]):
        time.sleep(max(0.0, started + at - time.monotonic()))
        child.send_signal(signal.SIGKILL)
    for child in children:
        child.wait()
    outcome = {"absent": 0, "whole": 0}
    for db in dbs:
        if db.exists():
            assert _whole(db), db
            outcome["whole"] += 1
        else:
            outcome["absent"] += 1
    print(f"creations killed: {len(dbs)}; {outcome}")
    # a store left absent is made by the next process (removing the killed creation's leftovers)
    absent = next((db for db in dbs if not db.exists()), None)
    if absent is not None:
        Store(f"sqlite:///{absent}")
        assert _whole(absent)
        assert sorted(p.name for p in absent.parent.iterdir()) == ["mlflow.db", "mlflow.db.lock"]


def test_processes_starting_at_once_on_a_missing_store_all_succeed(tmp_path):
    db = tmp_path / "new" / "mlflow.db"
    children = _children(*[[f"sqlite:///{db}", f"run{i}"] for i in range(4)])
    for child in children:
        _go(child)
    for child in children:
        out, err = child.communicate(timeout=120)
        assert child.returncode == 0 and out.strip() == "done", err[-2000:]
    assert _whole(db)
    client = MlflowClient(f"sqlite:///{db}")
    runs = client.search_runs([client.get_experiment_by_name("adhoc").experiment_id])
    assert sorted(r.info.run_name for r in runs) == [f"run{i}" for i in range(4)]


@pytest.fixture(scope="module")
def half_built(tmp_path_factory) -> Path:
    """A store as an interrupted creation leaves it: MLflow creating it (straight, as before the
    fix) is SIGKILLed once its alembic revision is recorded and not yet the last one."""
    db = tmp_path_factory.mktemp("half") / "mlflow.db"
    code = f"from mlflow.tracking import MlflowClient; MlflowClient('sqlite:///{db}')"
    child = subprocess.Popen([sys.executable, "-c", code], stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    try:
        while time.monotonic() < deadline and child.poll() is None:
            try:
                with sqlite3.connect(f"{db.as_uri()}?mode=ro", uri=True, timeout=0.1) as con:
                    found = con.execute("select version_num from alembic_version").fetchall()
                if found and found[0][0] != HEAD:
                    break
            except sqlite3.Error:
                pass
            time.sleep(0.005)
    finally:
        child.kill()
        child.wait()
    with sqlite3.connect(db) as con:
        assert con.execute("select version_num from alembic_version").fetchone()[0] != HEAD
    return db


def _copy(db: Path, to: Path) -> Path:
    to.mkdir(parents=True, exist_ok=True)
    (to / "mlflow.db").write_bytes(db.read_bytes())
    return to / "mlflow.db"


def test_a_half_built_store_is_reported_with_its_repair_and_left_as_it_is(half_built, tmp_path):
    db = _copy(half_built, tmp_path)
    before = hashlib.sha256(db.read_bytes()).hexdigest()
    with pytest.raises(TrackingError) as caught:
        Store(f"sqlite:///{db}")
    message = str(caught.value)
    assert "\n" not in message and "half-built" in message and f"remove {db} (it holds no runs)" in message
    assert hashlib.sha256(db.read_bytes()).hexdigest() == before


def test_check_on_a_half_built_store_says_so_in_one_line_and_alters_nothing(half_built, tmp_path, capsys):
    """Before: MLflow, opened to read, went on with the migrations (an ALTER TABLE, then "duplicate
    column name") and every experiment printed an error."""
    db = _copy(half_built, tmp_path)
    before = hashlib.sha256(db.read_bytes()).hexdigest()
    code = reproduce(["cross_training", "--check", "--tracking-uri", f"sqlite:///{db}",
                      "--results-dir", str(tmp_path / "results")])
    captured = capsys.readouterr()
    assert code == 2
    assert captured.err.strip().count("\n") == 0 and f"remove {db}" in captured.err
    assert hashlib.sha256(db.read_bytes()).hexdigest() == before


def test_a_store_of_another_mlflow_schema_with_runs_is_told_what_to_do(tmp_path):
    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    store = Store(uri)
    store.terminate(store.start_run(store.experiment_id("adhoc"), "kept", {}), "FINISHED")
    older = ScriptDirectory(os.path.dirname(mlflow.store.db_migrations.__file__)).get_revision(HEAD).down_revision
    with sqlite3.connect(tmp_path / "mlflow.db") as con:
        con.execute("update alembic_version set version_num = ?", (older,))
    with pytest.raises(TrackingError, match=rf"schema {older}, this MLflow needs {HEAD}: .*`mlflow db upgrade {uri}`"):
        Store(uri)
    with sqlite3.connect(tmp_path / "mlflow.db") as con:  # as a newer MLflow leaves it
        con.execute("update alembic_version set version_num = 'ffffffffffff'")
    with pytest.raises(TrackingError, match="schema ffffffffffff, which this MLflow does not know"):
        Store(uri)


def test_the_schema_read_from_mlflows_migration_files_is_alembics(tmp_path, monkeypatch):
    """A store is checked against MLflow's schema head read from the migration files' text (alembic executes every
    one of them, half a second per process): the same revisions and head as alembic's, and alembic's answer where a
    file is not as alembic writes it."""
    migrations = ScriptDirectory(os.path.dirname(mlflow.store.db_migrations.__file__))
    read = sqlite_store.revisions_in(Path(mlflow.store.db_migrations.__file__).parent / "versions")
    assert read == ({script.revision for script in migrations.walk_revisions()}, HEAD)
    assert sqlite_store.schema_head() == HEAD
    (tmp_path / "a1.py").write_text('revision = "a1"\ndown_revision = None\n')
    (tmp_path / "b2.py").write_text('revision = "b2"\ndown_revision = "a1"\n')
    assert sqlite_store.revisions_in(tmp_path) == ({"a1", "b2"}, "b2")
    (tmp_path / "c3.py").write_text('revision = "c3"\ndown_revision = "a1"\n')  # a second head
    assert sqlite_store.revisions_in(tmp_path) is None
    (tmp_path / "c3.py").write_text('revision = "c3"\ndown_revision = ("a1", "b2")\n')  # a merge: not read here
    assert sqlite_store.revisions_in(tmp_path) is None
    monkeypatch.setattr(sqlite_store, "_revisions", lambda: None)  # alembic decides
    assert sqlite_store.schema_head() == HEAD and sqlite_store._known(HEAD) and not sqlite_store._known("ffffffffffff")


# one run per identity


def test_identical_runs_started_at_once_fit_once(tmp_path):
    """Three ``svmrepro-run`` processes of the same configuration (a 2-s fit) on a new store: one
    fits, the others wait for its claim, then skip it."""
    codes, outputs = identical_runs_at_once(tmp_path, f"sqlite:///{tmp_path / 'mlflow.db'}", 3, "seed=1")
    assert codes == [0] * 3, outputs
    assert sum(" FINISHED: " in out for out in outputs) == 1
    assert sum("skip: run" in out for out in outputs) == 2
    client = MlflowClient(f"sqlite:///{tmp_path / 'mlflow.db'}")
    runs = client.search_runs([client.get_experiment_by_name("adhoc").experiment_id])
    assert [r.info.status for r in runs] == [FINISHED]


HOLD = """
import sys, time
from svmrepro.store import Store
with Store(sys.argv[1]).claim("k" * 64):
    print("held", flush=True)
    time.sleep(60)
"""


def test_a_claim_whose_owner_died_is_taken_over(store_uri):
    store = Store(store_uri)
    owner = subprocess.Popen([sys.executable, "-c", HOLD, store_uri], stdout=subprocess.PIPE, text=True)
    try:
        assert owner.stdout.readline().strip() == "held"
        got = threading.Event()

        def take():
            with store.claim("k" * 64):
                got.set()

        taker = threading.Thread(target=take, daemon=True)
        taker.start()
        assert not got.wait(0.5)  # a live owner's claim holds
    finally:
        owner.kill()
        owner.wait()
    assert got.wait(5)  # the kernel ended the dead owner's lock
    taker.join(5)


def test_check_reports_duplicates(tmp_path, store_uri, capsys):
    experiment = "cross_training/fig3_baseline"
    small = ["dataset.n_train=120", "dataset.n_test=200", "seed=0", "selection.cv.n_splits=2",
             "selection.param_grid.C=[1.0]"]
    base = [f"experiment={experiment}", "mode=quick", f"tracking.uri={store_uri}"]
    job = sweep_jobs(compose_config(base).sweep.quick, dict(o.split("=", 1) for o in small))[0]
    run(*compose_run([*base, *job]))
    run(*compose_run([*base, *job, "force=true"]))  # the second FINISHED run of the same identity
    code = reproduce(["--experiment", experiment, "--check", "--tracking-uri", store_uri,
                      "--results-dir", str(tmp_path / "results"), *[f"--override={o}" for o in small]])
    out = capsys.readouterr().out
    assert code == 0
    assert "2 FINISHED runs; the quick sweep has 1 configurations: 1 done, 0 missing" in out
    assert "duplicates: 1 configurations have more than one FINISHED run (2 runs" in out


def test_an_sql_error_mlflow_raises_again_is_not_also_logged_with_its_traceback(tmp_path, caplog):
    """A write the database refuses (here: a full disk) raises, once, in the caller's words; MLflow's
    own record of it (a traceback, once per retry) is dropped."""
    folder = tmp_path / "store"
    folder.mkdir()
    if os.geteuid() != 0 or subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", str(folder)]).returncode:
        pytest.skip("a small file system needs root (mount -t tmpfs)")
    try:
        store = Store(f"sqlite:///{folder / 'mlflow.db'}", str(tmp_path / "artifacts"))
        run_id = store.start_run(store.experiment_id("adhoc"), "r", {})
        # unbuffered: a write the full disk cut short leaves nothing for the file's close to write (and fail on)
        with open(folder / "filler", "wb", buffering=0) as filler, pytest.raises(OSError):
            while True:  # the disk fills up
                filler.write(b"\0" * 65536)
        with pytest.raises(Exception, match="full"):
            store.log_params(run_id, {f"p{i}": "x" * 1000 for i in range(1000)})
    finally:
        subprocess.run(["umount", "--lazy", str(folder)], check=True)  # the store's connections are still open
    assert not [r for r in caplog.records if r.name.startswith("mlflow") and r.exc_info], caplog.text
