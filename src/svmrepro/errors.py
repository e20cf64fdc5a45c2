"""Errors that reach the user as one clear line."""

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
