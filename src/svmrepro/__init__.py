"""svmrepro: reproductions of five papers on cheaper kernel SVMs, as scikit-learn estimators."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("svmrepro")
except PackageNotFoundError:  # running from a source tree that was not installed
    __version__ = "0+unknown"
