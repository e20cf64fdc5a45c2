"""Where the store is, and whether it can be used: fail at once, in one line, rather than
halfway through a run.

The embedded default is a SQLite store ``mlflow.db`` in the current folder, with artifacts in
``mlartifacts`` beside it. A SQLite store is made whole or not at all, and checked (its schema,
its pages) before MLflow opens it (:func:`ensure_store`, :mod:`svmrepro.store.sqlite`), so any
number of processes may start at once on a missing store and none writes to a damaged one. An
in-memory SQLite store is refused: it ends with its process, keeping nothing.

A store that cannot be reached fails at once with its URI (:func:`probe`): MLflow itself retries
an unreachable server for minutes. An artifact folder that cannot be made or written is refused
before an experiment or a run is made with it (:func:`check_artifact_location`): an experiment
keeps its artifact location for good.
"""

from __future__ import annotations

import os
import re
import socket
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from svmrepro.errors import SvmReproError
from svmrepro.locations import check_writable, default_store_uri
from svmrepro.redact import redact
from svmrepro.store import sqlite
from svmrepro.store.names import ADHOC_EXPERIMENT

#: seconds a tracking server has to answer the probe
PROBE_TIMEOUT_S = 5.0
#: default port of each SQLAlchemy dialect MLflow can keep its runs in
DATABASE_PORTS = {"postgresql": 5432, "mysql": 3306, "mssql": 1433}


#: the environment variable MLflow and svmrepro read a store's URI from when none is configured
TRACKING_URI_ENV = "MLFLOW_TRACKING_URI"


class TrackingError(SvmReproError):
    """The tracking store cannot be reached or opened; the message names its URI."""


def tracking_uri(configured: str | None = None) -> str:
    """``tracking.uri``, else ``$MLFLOW_TRACKING_URI``, else ``./mlflow.db``."""
    if configured:
        return configured
    return os.environ.get(TRACKING_URI_ENV) or default_store_uri()


def experiment_description(cfg: Any) -> str | None:
    """An experiment's description in the MLflow UI: the title of its report (``report.title``), if it has one."""
    report = cfg.get("report") if cfg is not None else None
    title = report.get("title") if hasattr(report, "get") else None
    return str(title) if title else None


def experiment_name(choices: dict[str, Any]) -> str:
    """One MLflow experiment per ``<paper>/<id>`` (the ``experiment`` option chosen)."""
    return choices.get("experiment") or ADHOC_EXPERIMENT


def sqlite_path(uri: str) -> Path | None:
    """The file of a ``sqlite:///<path>`` URI (relative or, with a fourth slash, absolute)."""
    if not uri.startswith("sqlite:///"):
        return None
    return Path(uri[len("sqlite:///") :].split("?", 1)[0])


def in_memory(uri: str) -> bool:
    """Whether ``uri`` is an in-memory SQLite database (``sqlite://``, ``sqlite:///:memory:``,
    ``file::memory:`` or ``mode=memory``), which SQLAlchemy gives each connection afresh."""
    parsed = urlparse(uri)
    if parsed.scheme.split("+", 1)[0] != "sqlite":
        return False
    name = parsed.path.removeprefix("/")
    return name in ("", ":memory:") or name.startswith("file::memory:") or "mode=memory" in parsed.query


def store_file(uri: str) -> Path | None:
    """The file of a SQLite store; None for any other store."""
    path = sqlite_path(uri)
    return path if path is not None and not in_memory(uri) else None


def check_userinfo(uri: str) -> None:
    """Refuse, in one line showing ``uri`` masked, a password (or user name) holding a raw ``@`` or space.

    Parsers split such a URI differently (SQLAlchemy ends the password at the first ``@``, urllib at the
    last ``@`` of the host part, ``requests`` sends the tail as a host name), so the password's tail would
    reach every retry message of the client library. The host part is the text after ``scheme://`` up to
    the first ``/ ? #`` (``sqlite:///a@b.db`` has none). The line has no ``@`` of its own: the masking of a
    printed line runs to its last one."""
    authority = re.split(r"[/?#]", uri.partition("://")[2], maxsplit=1)[0]
    userinfo = authority.rpartition("@")[0]
    if "@" in userinfo or any(c.isspace() for c in userinfo):
        raise TrackingError(
            f"tracking.uri={redact(uri)}: the password holds a raw at sign or space, which connection "
            "libraries read as the end of the password; percent-encode it (an at sign is %40, a space %20: "
            "python -c \"import urllib.parse; print(urllib.parse.quote(input(), safe=''))\")")


def probe(uri: str) -> None:
    """Fail in seconds, naming ``uri`` (its password masked), when the store cannot be reached.

    A server gets one request without retries (any HTTP answer will do: it is there); a database
    server (``postgresql://``, ``mysql://``, ...) one TCP connection to its host and port (MLflow
    would retry it for minutes); a SQLite or file store needs a folder that exists or can be
    made, and that this process may write. An in-memory SQLite store is refused: the runs logged
    to it would be gone when the run ends.
    """
    check_userinfo(uri)
    if in_memory(uri):
        raise TrackingError(f"tracking.uri={redact(uri)} keeps nothing: an in-memory SQLite store ends with "
                            "its process; give a file (tracking.uri=sqlite:///mlflow.db) or a server")
    fail = f"tracking store {redact(uri)} cannot be reached"
    parsed = urlparse(uri)
    scheme = parsed.scheme
    if scheme in ("http", "https"):
        try:
            urllib.request.urlopen(f"{uri.rstrip('/')}/health", timeout=PROBE_TIMEOUT_S).close()
        except urllib.error.HTTPError:
            pass
        except (urllib.error.URLError, OSError) as exc:
            raise TrackingError(f"{fail}: {getattr(exc, 'reason', exc)}") from None
        return
    dialect = scheme.split("+", 1)[0]
    if dialect in DATABASE_PORTS:
        try:
            host, port = parsed.hostname, parsed.port or DATABASE_PORTS[dialect]
        except ValueError as exc:  # a port that is not a number
            raise TrackingError(f"{fail}: {exc}") from None
        if host:  # none: a local socket, which MLflow reaches its own way
            try:
                socket.create_connection((host, port), timeout=PROBE_TIMEOUT_S).close()
            except OSError as exc:
                raise TrackingError(f"{fail}: no connection to {host}:{port} ({exc.strerror or exc})") from None
        return
    path = sqlite_path(uri) if scheme == "sqlite" else Path(parsed.path) if scheme in ("file", "") else None
    if path is None or not path.name:  # a store MLflow reaches its own way
        return
    folder = path.parent if scheme == "sqlite" else path
    problem = _unwritable(folder)
    if problem:
        raise TrackingError(f"{fail}: {problem}")


def _unwritable(folder: Path) -> str | None:
    """Why this process cannot make ``folder`` or write in it; None when it can (made now if missing)."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        return f"cannot create {folder}: {exc.strerror or exc}"
    try:
        check_writable(folder)
    except OSError as exc:
        return f"{folder} is not writable: {exc.strerror or exc}"
    return None


def local_folder(location: str | None) -> Path | None:
    """The folder of an artifact location on this machine (a path or a ``file:`` URI); None for
    a remote one (``s3://``, ``mlflow-artifacts:``, ...), which its server checks."""
    if not location:
        return None
    parsed = urlparse(location)
    if parsed.scheme == "file":
        return Path(urllib.request.url2pathname(parsed.path))
    return Path(location) if parsed.scheme == "" else None


def check_artifact_location(location: str | None, what: str, fix: str = "") -> None:
    """Refuse, naming ``what`` (a setting or an experiment) and how to ``fix`` it, an artifact
    location on this machine that cannot be made or written."""
    folder = local_folder(location)
    problem = _unwritable(folder) if folder is not None else None
    if problem:
        raise TrackingError(redact(f"{what}: {problem}" + (f"; {fix}" if fix else "")))


def ensure_store(uri: str, create: bool = True) -> bool:
    """Whether the store ``uri`` has anything to read, after making a missing SQLite store whole
    (when ``create``; a read-only caller passes False and gets False for a missing file).

    An existing SQLite file that is damaged or not at MLflow's schema (half-built by an
    interrupted creation, half-migrated, or older) is never handed to MLflow, which would write
    to it or migrate it: a :class:`TrackingError` says what it is and how to repair it. Other
    stores are left to MLflow.
    """
    path = store_file(uri)
    if path is None:
        return True
    if not create and not sqlite.exists(path):
        return False
    found = sqlite.ensure(path, uri)
    if found:
        raise TrackingError(found)
    return True
