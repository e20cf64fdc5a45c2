"""Facts about the code and the machine a run was measured on (logged as tags)."""

from __future__ import annotations

import os
import platform
import subprocess
from functools import lru_cache
from importlib.metadata import PackageNotFoundError, version

from svmrepro.data.files import PROJECT_ROOT

VERSIONED_PACKAGES = ("svmrepro", "scikit-learn", "numpy", "scipy", "mlflow", "hydra-core")


def _git(*args: str) -> str | None:
    try:
        done = subprocess.run(
            ["git", *args], cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=10, check=True
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
def environment_tags() -> dict[str, str]:
    commit = _git("rev-parse", "HEAD")
    status = _git("status", "--porcelain", "--untracked-files=no")
    tags = {
        "git_commit": commit or "unknown",
        "git_dirty": "unknown" if status is None else str(bool(status)).lower(),
        "cpu_model": _cpu_model(),
        "cpu_count": str(os.cpu_count()),
        "python": platform.python_version(),
    }
    tags.update({f"version.{name}": _package_version(name) for name in VERSIONED_PACKAGES})
    return tags
