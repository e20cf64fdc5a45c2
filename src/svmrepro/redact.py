"""Passwords out of everything svmrepro writes or prints.

A tracking URI may carry a password (``postgresql+psycopg2://user:secret@host/db``). The URI is
needed to connect, so it stays in the config a run is given, but every copy that is written or
shown has the password replaced by ``***``: Hydra's ``.hydra/*.yaml`` files of each job
(:class:`svmrepro.redact_files.RedactHydraFiles`, a Hydra callback), the sweep's ``multirun.yaml``, the run's
``config.yaml`` artifact, log records (:class:`RedactFilter`, on Hydra's logging handlers) and
the one-line errors.
"""

from __future__ import annotations

import logging
import re

MASK = "***"
_SCHEME = r"[A-Za-z][A-Za-z0-9+.\-]*\\?://"
#: ``scheme://user:password@``, also as Hydra writes an override (``scheme\://user\:password@``).
#: The password runs to the LAST ``@`` of the line before the next URI: URL parsers read a raw
#: ``@`` differently (SQLAlchemy stops at the first, urllib's ``urlsplit`` at the last of the
#: host part), so every character up to the last one is masked, whatever the password holds
#: (``@ : / # % ?``, spaces). A line is the limit: a masked file keeps its other lines.
_USERINFO_PASSWORD = re.compile(
    rf"(?P<head>\b{_SCHEME}[^\s:/@\\]*\\?:)(?:(?!\s\S*{_SCHEME}).)+(?=@)"
)


def redact(text: str) -> str:
    """``text`` with the password of every ``scheme://user:password@host`` replaced by ``***``."""
    return _USERINFO_PASSWORD.sub(rf"\g<head>{MASK}", text)


class RedactFilter(logging.Filter):
    """A logging filter that redacts a record's message and traceback (``filters:`` of a handler)."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        if redact(message) != message:
            record.msg, record.args = redact(message), None
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = redact(record.exc_text)
        return True

