"""Stores for tests: a copy of the empty store each pytest process makes once (``empty_store`` in
``tests/conftest.py``), for the tests whose processes need a store and not its creation."""

import sqlite3
from contextlib import closing
from pathlib import Path


def copy_store(empty: Path, path: Path) -> str:
    """A copy of the empty store ``empty`` at ``path``, made with SQLite's backup (a consistent copy whatever
    its journal holds); its URI. Each process making a new store would spend seconds on MLflow's migrations."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with closing(sqlite3.connect(empty)) as source, closing(sqlite3.connect(path)) as copy:
        source.backup(copy)
    return f"sqlite:///{path}"
