"""Errors that reach the user as one clear line."""

import errno
import os
from collections.abc import Sequence
from pathlib import Path

from svmrepro.redact import redact


def first_line(error: BaseException) -> str:
    """The first line of ``error``'s message ("" for none), any URI's password masked."""
    return redact((str(error).strip().splitlines() or [""])[0])


def error_line(error: BaseException) -> str:
    """``<ExceptionType>: <first line of its message>``, any URI's password masked."""
    return f"{type(error).__name__}: {first_line(error)}"


class SvmReproError(Exception):
    """Base of every error svmrepro raises on purpose; the CLI prints it as one line."""


class ConfigError(SvmReproError, ValueError):
    """A configuration value is invalid; the message names the key, the value and what is allowed."""


class DataError(SvmReproError):
    """A data file is missing, corrupt or in the wrong format; the message names the file."""


def composition_line(error: BaseException) -> str:
    """``error_line`` of a Hydra composition error with OmegaConf's reason (Hydra puts it on a later line) appended."""
    cause = error.__cause__
    reason = first_line(cause) if cause is not None else ""
    return f"{error_line(error)} {reason}".rstrip()


#: the file system refusing a write, by errno: the machine's failure, not the code's
STORAGE_ERRNOS = {
    errno.ENOSPC: "no space left on the device",
    errno.EDQUOT: "disk quota exceeded",
    errno.EFBIG: "file too large for the file-size limit (ulimit -f)",
    errno.EIO: "input/output error on the disk",
    errno.EROFS: "read-only file system",
}
#: the same, as SQLite reports it through MLflow (SQLAlchemy's message around it)
SQLITE_STORAGE = {
    "database or disk is full": STORAGE_ERRNOS[errno.ENOSPC],
    "disk I/O error": STORAGE_ERRNOS[errno.EIO],
}


#: a file system with less free space than this is full (room for no run's artifacts)
FULL_BYTES = 1 << 20


def _free_bytes(place: str) -> float:
    """Bytes free to this user on the file system of ``place`` (its nearest existing folder); inf if unknown."""
    path = Path(place)
    while not path.exists() and path != path.parent:
        path = path.parent
    try:
        stat = os.statvfs(path)
    except OSError:
        return float("inf")
    return stat.f_bavail * stat.f_frsize


class SweepStopped(SvmReproError):
    """A job of a sweep that stopped at another job's storage failure, not started."""


def storage_failure(error: BaseException | None, store: str | None = None, places: Sequence[str] = ()) -> str | None:
    """``<cause>: <path>`` when ``error`` or an exception it came from is the file system refusing a write
    (no space, a quota, a file-size limit, an I/O error: :data:`STORAGE_ERRNOS`), else None.

    The path is the file the write was for. A write to an open file names none: then the folders of
    ``places`` (the artifact root, the job's folder) whose file system is full, else all of them. SQLite's
    own report names none either: ``store`` (the tracking URI, masked).
    """
    seen: set[int] = set()
    while error is not None and id(error) not in seen:
        seen.add(id(error))
        if isinstance(error, OSError) and error.errno in STORAGE_ERRNOS:
            cause = STORAGE_ERRNOS[error.errno]
            if error.filename:
                return redact(f"{cause}: {error.filename}")
            full = [place for place in places if _free_bytes(place) < FULL_BYTES]
            where = " or ".join(full or places)
            return redact(f"{cause}: {where} ({error_line(error)})" if where else f"{cause} ({error_line(error)})")
        for message, cause in SQLITE_STORAGE.items():
            if message in str(error):
                return redact(f"{cause}: {store}" if store else f"{cause} (SQLite: {message})")
        error = error.__cause__ or error.__context__
    return None
