"""Errors that reach the user as one clear line."""


class SvmReproError(Exception):
    """Base of every error svmrepro raises on purpose; the CLI prints it as one line."""


class ConfigError(SvmReproError, ValueError):
    """A configuration value is invalid; the message names the key, the value and what is allowed."""


class DataError(SvmReproError):
    """A data file is missing, corrupt or in the wrong format; the message names the file."""
