"""An ``mlflow server`` subprocess on loopback, started as a user starts one, and a fresh
PostgreSQL database for its backend store: the tracking-server tests' one home for both.

PostgreSQL is the one of ``SVMREPRO_TEST_POSTGRES_URI`` (``.ci/run`` starts it on loopback and
sets it); :data:`NEEDS_POSTGRES` skips a test module without it.
"""

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
import uuid
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import pytest

POSTGRES_URI = os.environ.get("SVMREPRO_TEST_POSTGRES_URI")
NEEDS_POSTGRES = pytest.mark.skipif(
    not POSTGRES_URI,
    reason="SVMREPRO_TEST_POSTGRES_URI is not set (.ci/run starts PostgreSQL on loopback and sets it)",
)
#: seconds the server has to answer /health (its first start creates the schema)
STARTUP_TIMEOUT_S = 120
#: seconds a test's database has to be dropped once its connections are ended
DROP_TIMEOUT_S = 60
_END_OUR_CONNECTIONS = ("SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                        " WHERE datname = %s AND usename = current_user AND pid <> pg_backend_pid()")


@contextlib.contextmanager
def new_database():
    """A new database on the server of SVMREPRO_TEST_POSTGRES_URI, dropped afterwards; its libpq URI."""
    psycopg2 = pytest.importorskip("psycopg2", reason='pip install -e ".[test]"')
    name = f"svmrepro_e2e_{uuid.uuid4().hex[:12]}"
    admin = psycopg2.connect(POSTGRES_URI)
    admin.autocommit = True  # CREATE/DROP DATABASE cannot run in a transaction
    with admin.cursor() as cursor:
        cursor.execute(f'CREATE DATABASE "{name}"')
    try:
        yield urlunsplit(urlsplit(POSTGRES_URI)._replace(path=f"/{name}"))
    finally:
        try:
            _drop(admin, name)
        finally:
            admin.close()


def _drop(admin, name: str) -> None:
    """Drops a test's database, ending first the connections our role left on it. Not ``WITH (FORCE)``: on
    PostgreSQL 15 (the one .ci/run installs) it refuses ("must be a member of the role whose process is being
    terminated") when an autovacuum worker, which has no role, is in the database, as after MLflow's migrations;
    a plain DROP ends autovacuum workers itself and waits up to 5 s for the connections it cannot end."""
    from psycopg2.errors import ObjectInUse  # new_database has imported psycopg2

    deadline = time.monotonic() + DROP_TIMEOUT_S
    with admin.cursor() as cursor:
        while True:
            cursor.execute(_END_OUR_CONNECTIONS, (name,))
            try:
                cursor.execute(f'DROP DATABASE IF EXISTS "{name}"')
                return
            except ObjectInUse:  # a connection that was ending, or one opened since
                if time.monotonic() > deadline:
                    raise


def sqlalchemy_uri(database: str) -> str:
    """A libpq URI with its driver named: SQLAlchemy 2.1 reads a bare postgresql:// as psycopg 3, 2.0 as psycopg2."""
    return database.replace("postgresql://", "postgresql+psycopg2://", 1)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _wait_healthy(url: str, process: subprocess.Popen, log_path: Path) -> None:
    deadline = time.monotonic() + STARTUP_TIMEOUT_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pytest.fail(f"mlflow server exited with {process.returncode}:\n{log_path.read_text()[-3000:]}")
        try:  # /health answers without credentials, also under the basic-auth app
            with urllib.request.urlopen(f"{url}/health", timeout=10) as answer:
                if answer.read().strip() == b"OK":
                    return
        except (urllib.error.URLError, ConnectionError):
            pass
        time.sleep(0.5)
    pytest.fail(f"mlflow server not healthy after {STARTUP_TIMEOUT_S} s:\n{log_path.read_text()[-3000:]}")


def _end_group(process: subprocess.Popen) -> None:
    """SIGTERM to the server's process group, SIGKILL if it has not ended in 20 s."""
    for sig, wait_s in ((signal.SIGTERM, 20), (signal.SIGKILL, None)):
        try:
            os.killpg(process.pid, sig)
        except ProcessLookupError:
            return
        try:
            process.wait(timeout=wait_s)
            return
        except subprocess.TimeoutExpired:
            continue


@contextlib.contextmanager
def mlflow_server(store: str, root: Path, *options: str, env: dict[str, str] | None = None):
    """``mlflow server`` on backend store ``store`` with its artifacts under ``root / "artifacts"``
    and its log in ``root / "server.log"``, on a free loopback port; its URL once it answers
    /health. ``options`` are more of the command's options (``--app-name basic-auth``)."""
    log_path, port = root / "server.log", free_port()
    command = [
        sys.executable, "-m", "mlflow", "server", *options, "--backend-store-uri", store,
        "--artifacts-destination", str(root / "artifacts"), "--host", "127.0.0.1", "--port", str(port),
        "--workers", "1",
    ]
    with open(log_path, "wb") as log:  # its own process group: the end takes the server and its workers
        process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
                                   env={**os.environ, **(env or {})})
    url = f"http://127.0.0.1:{port}"
    try:
        _wait_healthy(url, process, log_path)
        yield url
    finally:
        _end_group(process)
