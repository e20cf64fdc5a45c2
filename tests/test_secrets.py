"""No password of a tracking URI is printed or written, and an unreachable database server fails
within seconds in one line naming its host and port (svmrepro.redact, svmrepro.store.probe).

What a run stores (params, tags, config.yaml) and a sweep's files are checked against a real
PostgreSQL server in tests/test_tracking_server.py.
"""

import io
import logging
import socket
import subprocess
import sys
import time

import forked_cli
import pytest
from hydra._internal.grammar.utils import escape_special_characters
from hypothesis import assume, given
from hypothesis import strategies as st

from svmrepro.redact import RedactFilter, redact
from svmrepro.store import TrackingError, probe

SECRET = "Pa55-w0rd/with:odd@chars"  # percent-encoded in the URI below: %2F %3A %40
ENCODED = "Pa55-w0rd%2Fwith%3Aodd%40chars"


@pytest.mark.parametrize(
    ("text", "redacted"),
    [
        ("postgresql+psycopg2://user:secret@host/db", "postgresql+psycopg2://user:***@host/db"),
        ("mysql://u:a/b:c@h:3306/d?x=1", "mysql://u:***@h:3306/d?x=1"),
        # as Hydra writes an override into hydra.yaml, overrides.yaml and its launcher's log lines
        (r"tracking.uri=postgresql\://u\:secret@h\:5432/db", r"tracking.uri=postgresql\://u\:***@h\:5432/db"),
        ("two: a://u:p@h and b://v:q@k", "two: a://u:***@h and b://v:***@k"),
        # a raw @ in the password: masked up to the last @ of the host part (urllib reads it so)
        ("postgresql://u:p@ss@w0rd@host/db", "postgresql://u:***@host/db"),
        ("mysql://u:a b#c?d%e@h/d\nnext line: x@y", "mysql://u:***@h/d\nnext line: x@y"),
        ("['seed=0', 'tracking.uri=a://u:p@q@h/db', 'label=b://v:w@k']",
         "['seed=0', 'tracking.uri=a://u:***@h/db', 'label=b://v:***@k']"),
        ("http://host:5000/path", "http://host:5000/path"),
        ("https://user@host/x", "https://user@host/x"),
        ("sqlite:////tmp/mlflow.db", "sqlite:////tmp/mlflow.db"),
    ],
)
def test_redact_masks_the_password_of_every_uri(text, redacted):
    assert redact(text) == redacted


#: any printable character (a line break ends a line, and redaction works line by line)
PASSWORDS = st.text(st.characters(exclude_categories=("Cc", "Cs")), min_size=1, max_size=40)


@given(PASSWORDS)
def test_redact_masks_a_password_of_any_characters_whole(password):
    """Raw, and as Hydra escapes an override (``override_dirname``, its launcher's log lines); only
    a password that itself holds a space and another ``scheme://`` is ambiguous."""
    assume(not (any(c.isspace() for c in password) and "//" in password))
    uri = f"postgresql+psycopg2://svmrepro:{password}@127.0.0.1:5432/runs"
    for text, masked in [
        (f"tracking.uri={uri} seed=1", "tracking.uri=postgresql+psycopg2://svmrepro:***@127.0.0.1:5432/runs seed=1"),
        (escape_special_characters(f"tracking.uri={uri}"),
         escape_special_characters("tracking.uri=postgresql+psycopg2://svmrepro:") + "***"
         + escape_special_characters("@127.0.0.1:5432/runs")),
    ]:
        assert redact(text) == masked


def test_the_log_filter_masks_messages_arguments_and_tracebacks():
    logger = logging.getLogger("test_secrets")
    handler = logging.StreamHandler(stream := io.StringIO())
    handler.addFilter(RedactFilter())
    logger.addHandler(handler)
    try:
        logger.warning("store %s", "postgresql://u:Hunter2xyz@h/db")
        try:
            raise RuntimeError("cannot open postgresql://u:Hunter2xyz@h/db")
        except RuntimeError:
            logger.exception("failed")
    finally:
        logger.removeHandler(handler)
    assert "Hunter2xyz" not in stream.getvalue()
    assert "store postgresql://u:***@h/db" in stream.getvalue()
    assert "RuntimeError: cannot open postgresql://u:***@h/db" in stream.getvalue()


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_an_unreachable_database_fails_at_once_naming_host_and_port():
    port = _closed_port()
    started = time.monotonic()
    with pytest.raises(TrackingError) as error:
        probe(f"postgresql+psycopg2://alice:{ENCODED}@127.0.0.1:{port}/runs")
    assert time.monotonic() - started < 10
    assert str(error.value).startswith(f"tracking store postgresql+psycopg2://alice:***@127.0.0.1:{port}/runs "
                                       f"cannot be reached: no connection to 127.0.0.1:{port}")
    assert ENCODED not in str(error.value)


def test_a_database_that_does_not_answer_fails_within_10_s():
    """A server that never accepts: a listening socket whose backlog is full drops the probe's
    connection request, so the probe waits for its time-out."""
    with socket.socket() as server, socket.socket() as first:
        server.bind(("127.0.0.1", 0))
        server.listen(0)
        port = server.getsockname()[1]
        first.connect(("127.0.0.1", port))  # fills the backlog: nothing accepts
        started = time.monotonic()
        with pytest.raises(TrackingError, match=f"no connection to 127.0.0.1:{port}"):
            probe(f"postgresql://alice:Hunter2xyz@127.0.0.1:{port}/runs")
    assert time.monotonic() - started < 10


@pytest.mark.parametrize("multirun", [False, True], ids=["run", "sweep"])
def test_an_unreachable_store_is_one_line_without_the_password(tmp_path, multirun):
    port = _closed_port()
    command = [sys.executable, "-m", "svmrepro", *(["-m", "seed=0,1"] if multirun else []),
               f"tracking.uri=postgresql+psycopg2://alice:{ENCODED}@127.0.0.1:{port}/runs",
               f"hydra.run.dir={tmp_path / 'run'}", f"hydra.sweep.dir={tmp_path / 'sweep'}"]
    started = time.monotonic()
    done = forked_cli.run(command, capture_output=True, text=True, timeout=120, cwd=tmp_path)
    seconds = time.monotonic() - started
    assert done.returncode == 2, done.stderr[-3000:]
    assert done.stderr.strip().splitlines()[-1] == (
        f"svmrepro-run: error: tracking store postgresql+psycopg2://alice:***@127.0.0.1:{port}/runs cannot be "
        f"reached: no connection to 127.0.0.1:{port} (Connection refused)"
    )
    assert "Traceback" not in done.stderr and seconds < 60  # Python and Hydra's start-up included
    written = [path for path in tmp_path.rglob("*") if path.is_file()]
    if not multirun:  # Hydra wrote the run's .hydra/*.yaml before the run met the store
        assert {path.name for path in written} >= {"config.yaml", "hydra.yaml", "overrides.yaml"}
    for text in [done.stdout, done.stderr, *(path.read_text() for path in written)]:
        assert ENCODED not in text and SECRET not in text


#: a password with a raw @: MLflow's client would send its tail as the host name and print it in each retry
RAW_AT_PASSWORD = "s3cr3tHEAD@TAILSECRET"


@pytest.mark.parametrize("command", ["run", "reproduce"])
def test_a_raw_at_in_the_password_is_refused_at_once_in_one_masked_line(tmp_path, command):
    uri = f"http://alice:{RAW_AT_PASSWORD}@127.0.0.1:{_closed_port()}"
    if command == "run":
        argv = [sys.executable, "-m", "svmrepro", "seed=0", f"tracking.uri={uri}", f"hydra.run.dir={tmp_path / 'run'}"]
    else:
        argv = [sys.executable, "-m", "svmrepro.reproduce", "--mode", "quick", "--tracking-uri", uri,
                "--results-dir", str(tmp_path / "results")]
    started = time.monotonic()
    done = forked_cli.run(argv, capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert done.returncode == 2, done.stderr[-3000:]
    assert time.monotonic() - started < 60  # MLflow's retries took 107 s
    last = done.stderr.strip().splitlines()[-1]
    assert "http://alice:***@127.0.0.1" in last and "%40" in last, last
    assert "Traceback" not in done.stderr
    written = [path.read_text(errors="replace") for path in tmp_path.rglob("*") if path.is_file()]
    for text in [done.stdout, done.stderr, *written]:
        assert "TAILSECRET" not in text and "s3cr3tHEAD" not in text
