"""svmrepro: reproductions of five papers on cheaper kernel SVMs, as scikit-learn estimators."""

import os
import sys

if os.name != "posix":  # fcntl's locks, process groups and POSIX signals: said at once, not at the first run
    raise ImportError(f"svmrepro runs on POSIX systems only (Linux, macOS), not on {sys.platform}")


def __getattr__(name: str) -> str:
    """``svmrepro.__version__``, read from the installed metadata when asked: importlib.metadata takes
    tens of milliseconds, which every entry point would otherwise spend before its Ctrl-C handler is
    in place (:mod:`svmrepro.stop_line`)."""
    if name != "__version__":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("svmrepro")
    except PackageNotFoundError:  # running from a source tree that was not installed
        return "0+unknown"
