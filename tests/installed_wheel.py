"""The wheel of this checkout installed in a fresh virtualenv, and commands run from it
(:func:`build_wheel` and :func:`install_wheel` back the session fixtures ``built`` and ``venv`` of
``tests/conftest.py``).

The wheel is built from a copy of this checkout and installed without its dependencies; the
dependencies come from the test venv's site-packages, added after the fresh venv's own (a plain
path, so the test venv's editable install of svmrepro is not seen).
"""

import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

CHECKOUT = Path(__file__).resolve().parents[1]


def source_copy(folder: Path) -> Path:
    """The checkout's files (tracked, or new and not ignored) copied to ``folder``, links as links:
    setuptools builds in the source tree, and the checkout is left as it is."""
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=CHECKOUT,
                            check=True, capture_output=True, text=True).stdout
    for name in filter(None, listed.split("\0")):
        source = CHECKOUT / name
        if source.is_symlink() or source.is_file():
            (folder / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, folder / name, follow_symlinks=False)
    return folder


def build_wheel(root: Path) -> tuple[Path, str]:
    """The wheel of this checkout, built below ``root``, and what its build printed (verbose, so the
    backend's warnings show; byte-compiling left on, as a user's build has it)."""
    source = source_copy(root / "source")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    done = subprocess.run([sys.executable, "-m", "pip", "wheel", "--verbose", "--no-deps", "-w", str(root / "dist"),
                           str(source)], check=True, capture_output=True, text=True, env=env)
    (wheel,) = (root / "dist").glob("svmrepro-*.whl")
    return wheel, done.stdout + done.stderr


def install_wheel(wheel: Path, root: Path) -> Path:
    """A fresh virtualenv below ``root`` with ``wheel`` installed; its bin folder."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(root / "venv")], check=True)
    python = root / "venv" / "bin" / "python"
    subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "--quiet", "--no-deps",
                    str(wheel)], check=True, capture_output=True)
    own = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                         check=True, capture_output=True, text=True).stdout.strip()
    (Path(own) / "zz_test_dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return root / "venv" / "bin"


def call(venv: Path, folder: Path, *command: str) -> subprocess.CompletedProcess:
    """``command`` run from ``folder`` with the venv's scripts first on the PATH, no PYTHONPATH."""
    env = {k: v for k, v in os.environ.items() if k not in ("MLFLOW_TRACKING_URI", "PYTHONPATH")}
    env["PATH"] = f"{venv}{os.pathsep}{env['PATH']}"
    return subprocess.run([str(venv / command[0]), *command[1:]], cwd=folder, env=env, capture_output=True,
                          text=True, timeout=600)
