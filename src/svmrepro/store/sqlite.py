"""The SQLite MLflow store as a file: made whole or not at all, checked before MLflow opens it,
and the per-run claims beside it.

MLflow makes a new SQLite store in many steps (its initial tables, then one alembic migration
after another), not in one transaction, and continues or repeats them on any later open. A
process killed in between leaves a file that every later open fails on ("duplicate column
name", ``_alembic_tmp_*`` tables), and several processes opening a missing store at once race on
those steps. So a missing store is built by one process at a time (an exclusive ``flock`` on
``<db>.lock``) into a temporary file beside it, which is renamed into place once MLflow has
finished: the store's path holds no file or a whole one. An existing file is read (never written)
first; one that is not at MLflow's schema is reported with its repair instead of being migrated.

An existing store is written to only once SQLite's ``PRAGMA quick_check`` finds it whole
(:func:`damage`): a damaged file (a disk fault, a copy cut short, bytes overwritten) accepts
writes that spread the damage, or fails halfway through a run. It is reported with a
backup-and-rebuild command and left as it is. ``quick_check`` reads every page but skips the
index-to-table cross-checks of ``integrity_check``, so it costs a fraction of a second for a store of
thousands of runs, and is done once per process and file.

A claim (:func:`claim`) is an exclusive ``flock`` on ``<db>.claims/<run key>``: the kernel ends
it when its process ends, however it ends, so a claim whose owner died is free at once.
"""

from __future__ import annotations

import fcntl
import os
import re
import socket
import sqlite3
from collections.abc import Callable, Iterator
from contextlib import closing, contextmanager
from functools import cache
from pathlib import Path

LOCK_SUFFIX, CLAIMS_SUFFIX, BUILDING_INFIX = ".lock", ".claims", ".building-"
#: tables alembic makes while it rebuilds a table; left behind by an interrupted migration
ALEMBIC_TMP = "_alembic_tmp_"
#: seconds a read waits for a writer's lock (MLflow's own writers wait 20 s)
READ_TIMEOUT_S = 30.0
#: what every SQLite database file starts with
SQLITE_HEADER = b"SQLite format 3\x00"
#: the files found whole by :func:`damage` in this process
_whole: set[Path] = set()


#: a migration file's own revision and the one it follows, as alembic writes them into the files it generates
_REVISION = re.compile(r'^(down_revision|revision) = (None|"[0-9a-f]+")$', re.MULTILINE)


@cache
def _migrations():
    """MLflow's alembic migrations (imported here: alembic costs a third of a second to import, and
    most processes never need it)."""
    import mlflow.store.db_migrations
    from alembic.script import ScriptDirectory

    return ScriptDirectory(os.path.dirname(mlflow.store.db_migrations.__file__))


def revisions_in(versions: Path) -> tuple[frozenset[str], str] | None:
    """The revisions of the alembic migration files in the folder ``versions`` and their head, read from the files'
    text; None when a file is not as alembic writes it (naming its revision and the one it follows) or when the
    revisions do not form one chain with one head."""
    own, follows = set(), set()
    for path in versions.glob("*.py"):
        if path.name == "__init__.py":
            continue
        found = dict(match.groups() for match in _REVISION.finditer(path.read_text(encoding="utf-8")))
        if found.keys() != {"revision", "down_revision"} or found["revision"] == "None":
            return None
        own.add(found["revision"].strip('"'))
        if found["down_revision"] != "None":
            follows.add(found["down_revision"].strip('"'))
    heads = own - follows
    return (frozenset(own), heads.pop()) if len(heads) == 1 and follows <= own else None


@cache
def _revisions() -> tuple[frozenset[str], str] | None:
    """MLflow's migrations read by :func:`revisions_in`: alembic's own reading (:func:`_migrations`) executes every
    one of them, about half a second in every process that opens a store, and decides only where this one cannot."""
    import mlflow.store.db_migrations

    return revisions_in(Path(mlflow.store.db_migrations.__file__).parent / "versions")


def schema_head() -> str:
    """The alembic revision of the schema this MLflow writes (its migrations' head)."""
    read = _revisions()
    return read[1] if read else _migrations().get_current_head()


def _known(revision: str) -> bool:
    read = _revisions()
    if read:
        return revision in read[0]
    try:
        return _migrations().get_revision(revision) is not None
    except Exception:  # alembic: a revision none of this MLflow's migrations has
        return False


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    """An exclusive ``flock`` on ``path`` (made if missing), held until the block ends or the process does."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # releases the lock


def _connect(path: Path) -> sqlite3.Connection:
    # mode=rw never creates the file; only SELECTs and PRAGMA checks run (a hot journal of a killed
    # writer is rolled back by SQLite, as any reader does)
    return sqlite3.connect(f"{path.resolve().as_uri()}?mode=rw", uri=True, timeout=READ_TIMEOUT_S)


def _read(path: Path) -> dict[str, object]:
    """Tables, alembic revision and run count of the SQLite file ``path``, read only."""
    with closing(_connect(path)) as con:
        tables = {row[0] for row in con.execute("select name from sqlite_master where type = 'table'")}
        revision = None
        if "alembic_version" in tables:
            row = con.execute("select version_num from alembic_version").fetchone()
            revision = row[0] if row else None
        runs = con.execute("select count(*) from runs").fetchone()[0] if "runs" in tables else 0
    return {"tables": tables, "revision": revision, "runs": runs}


def _is_sqlite(path: Path) -> bool:
    try:
        with path.open("rb") as handle:
            return handle.read(len(SQLITE_HEADER)) == SQLITE_HEADER
    except OSError:
        return False


def _repair(path: Path) -> str:
    """The commands that back up the damaged store ``path`` and rebuild beside it what SQLite can
    still read of it: the ``sqlite3`` shell's ``.dump`` (Debian's package ``sqlite3``), whose
    closing ROLLBACK after a read error becomes a COMMIT. (The shell's ``.recover`` fails on any
    file in Debian 12's SQLite 3.40.1: "SQL logic error".)"""
    rebuilt = path.with_name(f"{path.stem}.rebuilt{path.suffix}")
    return (f"cp {path} {path}.bak && sqlite3 {path}.bak .dump | sed 's/^ROLLBACK; -- due to errors$/COMMIT;/' "
            f"| sqlite3 {rebuilt}, check the runs in {rebuilt}, then move it to {path}")


def damage(path: Path, uri: str) -> str | None:
    """One line saying that the existing SQLite file ``path`` is damaged and how to rebuild it;
    None when ``PRAGMA quick_check`` finds it whole (remembered for the rest of the process)."""
    if path.resolve() in _whole:
        return None
    try:
        with closing(_connect(path)) as con:
            found = [row[0] for row in con.execute("pragma quick_check")]
    except sqlite3.DatabaseError as exc:
        found = [str(exc)]
    if found == ["ok"]:
        _whole.add(path.resolve())
        return None
    first = " ".join(found[0].split())  # a fault's text may span lines ("*** in database main ***\nPage 5: ...")
    return (f"tracking store {uri}: {path} is damaged (SQLite's quick_check: {first}"
            f"{f'; {len(found) - 1} more faults' if len(found) > 1 else ''}), so nothing is written to it; "
            f"to rebuild it: {_repair(path)}")


def problem(path: Path, uri: str) -> str | None:
    """What is wrong with the existing store file ``path`` and how to repair it, in one line;
    None for a whole store at MLflow's schema, or for a file with no tables yet."""
    try:
        found = _read(path)
    except sqlite3.DatabaseError as exc:
        if _is_sqlite(path):  # a database whose pages cannot be read
            return damage(path, uri)
        return f"tracking store {uri}: {path} cannot be read as a SQLite database ({exc})"
    if found["tables"] and (damaged := damage(path, uri)):
        return damaged
    tables, revision, runs = found["tables"], found["revision"], found["runs"]
    if not tables or (revision == schema_head() and not any(t.startswith(ALEMBIC_TMP) for t in tables)):
        return None
    if runs == 0:
        return (f"tracking store {uri} is half-built (its creation was interrupted): "
                f"remove {path} (it holds no runs) and start again")
    if revision and not _known(revision):
        return (f"tracking store {uri} has MLflow schema {revision}, which this MLflow does not know: "
                f"open it with the (newer) MLflow that made it")
    if revision and not any(t.startswith(ALEMBIC_TMP) for t in tables):
        return (f"tracking store {uri} has MLflow schema {revision}, this MLflow needs {schema_head()}: "
                f"back up {path}, then run `mlflow db upgrade {uri}`")
    return (f"tracking store {uri} was left half-migrated (revision {revision}) with {runs} runs in it: "
            f"back up {path}, then run `mlflow db upgrade {uri}`, or restore it from a backup")


def exists(path: Path) -> bool:
    """Whether ``path`` is a file with tables (or not a SQLite database at all, for
    :func:`problem` to report); an empty file is what a plain SQLite open of a missing store makes."""
    try:
        return path.is_file() and bool(_read(path)["tables"])
    except sqlite3.DatabaseError:
        return True


def ensure(path: Path, uri: str) -> str | None:
    """Make the store ``path`` whole before MLflow opens it: built atomically when missing, else
    checked. Returns :func:`problem` of an existing file (None when whole)."""
    if not exists(path):
        with _locked(path.with_name(path.name + LOCK_SUFFIX)):
            if not exists(path):  # nobody built it while we waited
                for stale in path.parent.glob(f".{path.name}{BUILDING_INFIX}*"):  # left by a killed builder
                    stale.unlink(missing_ok=True)
                building = path.with_name(f".{path.name}{BUILDING_INFIX}{os.getpid()}")
                from mlflow.tracking import MlflowClient  # MLflow only when a store is made

                MlflowClient(tracking_uri=f"sqlite:///{building}")  # MLflow makes its schema and migrates it
                os.replace(building, path)
                return None
    return problem(path, uri)


def _holder(path: Path) -> str:
    try:
        return path.read_text().strip() or "another process"
    except OSError:
        return "another process"


@contextmanager
def claim(path: Path, key: str, waiting: Callable[[str], None]) -> Iterator[None]:
    """Hold run key ``key`` of the store ``path`` for the block; while another live process
    holds it, call ``waiting`` with who holds it and wait until it lets go or dies.

    The claim's file is removed on release. A waiter may then hold a lock on the removed file:
    it checks that the path still names the file it locked, and tries again if not.
    """
    file = path.with_name(path.name + CLAIMS_SUFFIX) / key
    file.parent.mkdir(parents=True, exist_ok=True)
    while True:
        fd = os.open(file, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            waiting(_holder(file))
            fcntl.flock(fd, fcntl.LOCK_EX)
        try:
            if os.stat(file).st_ino == os.fstat(fd).st_ino:
                break
        except FileNotFoundError:
            pass
        os.close(fd)
    try:
        os.ftruncate(fd, 0)
        os.write(fd, f"process {os.getpid()} on {socket.gethostname()}\n".encode())
        yield
    finally:
        file.unlink(missing_ok=True)  # before the lock ends: no waiter may lock a file still there
        os.close(fd)
