"""Where svmrepro reads its package data, and where it writes.

Read from the installed package (``importlib.resources``), so a wheel runs from any folder: the Hydra
configs (``conf/``), the papers' numbers and protocol notes (``experiments/``) and the plans of
``svmrepro-reproduce`` (``plans/``). In a checkout these are the top-level ``conf/``, ``experiments/``
and ``reproduce/`` folders, linked into ``src/svmrepro``.

Written to the current folder, as Hydra writes ``outputs/`` and ``multirun/`` there: the embedded
MLflow store (``./mlflow.db``, artifacts in ``./mlartifacts``) and the reproduction's ``results/``.

A user's own configs (an experiment of theirs, a data set) live in a folder of theirs that is added to
the search path: ``svmrepro-run --config-dir DIR`` (Hydra's option) or ``svmrepro-reproduce
--config-dir DIR``; their options then sit beside the package's, without touching the package. Their
paper's numbers and claims (``experiments/<paper>/``) are read from the current folder, ``DIR`` or the
folder that holds ``DIR`` (:func:`data_file`); their loader modules are imported from ``DIR`` by a run
(:func:`svmrepro.data.function.locate`), and only read by a listing or a check (:mod:`svmrepro.data.user_code`).
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
from collections.abc import Iterable
from importlib.resources import files
from pathlib import Path

#: the installed package's folder; its data folders are plain files on disk (a wheel is unpacked)
PACKAGE_DIR = Path(str(files("svmrepro")))
CONF_DIR = PACKAGE_DIR / "conf"
PLANS_DIR = PACKAGE_DIR / "plans"
#: extra config folders, ``os.pathsep``-separated: set by ``svmrepro-reproduce --config-dir`` for the
#: compositions of its own process (its sweeps get them as ``hydra.searchpath``)
CONFIG_DIRS_ENV = "SVMREPRO_CONFIG_DIRS"


def user_config_dirs() -> list[Path]:
    """The user's config folders, from ``$SVMREPRO_CONFIG_DIRS`` as :func:`config_dirs_value` writes it (a
    value set by hand: one folder, or several separated by ``os.pathsep``)."""
    value = os.environ.get(CONFIG_DIRS_ENV, "")
    paths = json.loads(value) if value.startswith("[") else value.split(os.pathsep)
    return [Path(p).resolve() for p in paths if p]


def config_dirs_value(dirs: Iterable[Path]) -> str:
    """``$SVMREPRO_CONFIG_DIRS`` for ``dirs``: a JSON list, so that a folder's path may hold any character a
    file system allows (``os.pathsep`` too)."""
    return json.dumps([str(Path(folder).resolve()) for folder in dirs])


def config_dir_option(arguments: list[str]) -> Path | None:
    """The folder of Hydra's ``--config-dir``/``-cd`` option in ``arguments`` (a command line), if given; an
    option without its folder is None here, and Hydra's parser says what is missing."""
    parser = argparse.ArgumentParser(add_help=False, allow_abbrev=False)
    parser.add_argument("--config-dir", "-cd", type=Path, nargs="?")
    return parser.parse_known_args(arguments)[0].config_dir


def config_dirs() -> list[Path]:
    """The package's configs, then the user's folders (Hydra's search path, in this order)."""
    return [CONF_DIR, *user_config_dirs()]


def config_file(relative: str) -> str | None:
    """A config file (``experiment/<paper>/<id>.yaml``, ``dataset/<name>.yaml``) as Hydra finds it in
    :func:`config_dirs`, named as a user opens it: relative to the current folder when it is below it;
    None when no folder has it."""
    for root in config_dirs():
        path = root / relative
        if path.is_file():
            path = path.resolve()
            return str(path.relative_to(Path.cwd()) if path.is_relative_to(Path.cwd()) else path)
    return None


def data_file(relative: str | Path) -> Path:
    """A file a report spec or a paper's claims name (``experiments/<paper>/table1.csv``,
    ``experiments/<paper>/claims.yaml``): the current folder's, a user config folder's or the folder
    beside it's own copy if there is one, else the package's. Beside it: a study laid out like the
    checkout (``study/conf/`` given as ``--config-dir``, ``study/experiments/``) is found from any folder."""
    dirs = user_config_dirs()
    for base in (Path.cwd(), *dirs, *(folder.parent for folder in dirs)):
        if (base / relative).is_file():
            return base / relative
    return PACKAGE_DIR / relative


def source_checkout() -> Path | None:
    """The git checkout the package runs from (an editable install), None for an installed wheel."""
    root = Path(__file__).resolve().parents[2]
    return root if (root / "pyproject.toml").is_file() and (root / "src" / "svmrepro").is_dir() else None


def default_store_uri() -> str:
    """The embedded MLflow store of the current folder."""
    return f"sqlite:///{Path.cwd() / 'mlflow.db'}"


def check_writable(folder: Path) -> None:
    """Make ``folder`` if missing and write a file in it (a permission, a read-only file system, a
    file in its place): the OSError of the first thing that fails, before any real work."""
    folder.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryFile(dir=folder):
        pass
