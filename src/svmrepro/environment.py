"""Facts about the code and the machine a run was measured on (logged as tags)."""

from __future__ import annotations

import os
import platform
import subprocess
from functools import lru_cache
from importlib.metadata import PackageNotFoundError, version

from svmrepro.locations import source_checkout
from svmrepro.redact import redact

VERSIONED_PACKAGES = ("svmrepro", "scikit-learn", "numpy", "scipy", "mlflow", "hydra-core")
#: the tags naming the machine: its processor and its number of cores (:func:`cpu_count`)
CPU_MODEL_TAG, CPU_COUNT_TAG = "cpu_model", "cpu_count"
#: a worker count meaning every core of the machine (joblib's -1), in a benchmark's list of counts
ALL_CORES = -1


def cpu_count() -> int:
    """The machine's cores as the operating system counts them: the ``cpu_count`` tag, and what a
    benchmark's "every core" means (:class:`svmrepro.bench.ParallelSpeedup`), so the two agree."""
    return os.cpu_count() or 1




def _git(*args: str) -> str | None:
    """git's answer about the checkout the package runs from; None for an installed wheel."""
    checkout = source_checkout()
    if checkout is None:
        return None
    try:
        done = subprocess.run(
            ["git", *args], cwd=checkout, capture_output=True, text=True, timeout=10, check=True
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip()


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as handle:
            for line in handle:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _package_version(name: str) -> str:
    try:
        return version(name)
    except PackageNotFoundError:
        return "not installed"


@lru_cache(maxsize=1)
def machine() -> str:
    """The machine a fit on every core runs on, as its tags name it: ``<cpu_count> x <cpu_model>``."""
    return f"{cpu_count()} x {_cpu_model()}"


@lru_cache(maxsize=1)
def environment_tags() -> dict[str, str]:
    """The machine and the package versions, and whether the checkout had uncommitted changes (its
    commit is MLflow's ``mlflow.source.git.commit``, :func:`git_source`)."""
    status = _git("status", "--porcelain", "--untracked-files=no")
    tags = {
        "git_dirty": "unknown" if status is None else str(bool(status)).lower(),
        CPU_MODEL_TAG: _cpu_model(),
        CPU_COUNT_TAG: str(cpu_count()),
        "python": platform.python_version(),
    }
    tags.update({f"version.{name}": _package_version(name) for name in VERSIONED_PACKAGES})
    return tags


@lru_cache(maxsize=1)
def git_source() -> dict[str, str]:
    """The checkout's ``commit``, ``branch`` and ``repo`` (its origin's URL), those git knows; for
    MLflow's git tags (:func:`svmrepro.store.source_tags`)."""
    found = {"commit": _git("rev-parse", "HEAD"), "branch": _git("rev-parse", "--abbrev-ref", "HEAD"),
             "repo": redact(_git("remote", "get-url", "origin") or "")}
    return {k: v for k, v in found.items() if v and v not in ("unknown", "HEAD")}
