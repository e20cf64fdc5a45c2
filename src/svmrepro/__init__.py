"""svmrepro: reproductions of five papers on cheaper kernel SVMs, as scikit-learn estimators."""

import os
import sys

if os.name != "posix":  # fcntl's locks, process groups and POSIX signals: said at once, not at the first run
    raise ImportError(f"svmrepro runs on POSIX systems only (Linux, macOS), not on {sys.platform}")

from importlib.metadata import PackageNotFoundError, version  # noqa: E402 (after the platform's check)

try:
    __version__ = version("svmrepro")
except PackageNotFoundError:  # running from a source tree that was not installed
    __version__ = "0+unknown"
