"""Every page, table and figure svmrepro writes goes through :func:`write_file` (issue 46, item 1).

A study folder is untrusted input: a ``results/quick/today.md`` that is a symlink to ``~/.bashrc`` must not be
overwritten. So the writer

- refuses a path whose last part is a symlink, and any symlinked folder between ``root`` (the folder the
  user named; the current folder when the path is under it) and the file: one line naming it;
- writes to a temporary file in the same folder and replaces the target with :func:`os.replace`, so a reader
  (or a stop) sees the old file or the new one, never half of one.

:func:`symlinks_below` finds the links in a results folder before any sweep starts, so a reproduction stops in
one line rather than after hours of fitting.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import IO

from svmrepro.errors import SvmReproError


class SymlinkInTheWay(SvmReproError):
    """A symlink where svmrepro would write: it is never followed."""


def _root_of(path: Path, root: Path | None) -> Path | None:
    if root is not None:
        return Path(os.path.abspath(root))
    cwd = Path.cwd()
    return cwd if path.is_relative_to(cwd) else None


def check_path(path: Path | str, root: Path | str | None = None) -> Path:
    """``path`` made absolute (without resolving links), after checking that neither it nor a folder between
    ``root`` and it is a symlink."""
    path = Path(os.path.abspath(path))
    base = _root_of(path, Path(root) if root is not None else None)
    if base is not None and not path.is_relative_to(base):
        raise SvmReproError(f"{path}: outside {base}, the folder svmrepro writes into; refusing to write there")
    parts = path.relative_to(base).parts if base is not None else (path.name,)
    current = base if base is not None else path.parent
    for part in parts:
        current = current / part
        if current.is_symlink():
            raise SymlinkInTheWay(f"{current}: a symlink (to {os.readlink(current)}), where svmrepro writes "
                                  f"{path.name}; it never writes through a link: remove it or name another folder")
    return path


def write_file(path: Path | str, data: str | bytes | Callable[[IO], None], root: Path | str | None = None,
               encoding: str = "utf-8") -> Path:
    """Write ``data`` (text, bytes, or a function that writes to a binary file handle) to ``path``, atomically
    and never through a symlink (:func:`check_path`); the path written."""
    path = check_path(path, root)
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "wb") as out:
            if callable(data):
                data(out)
            else:
                out.write(data.encode(encoding) if isinstance(data, str) else data)
        os.chmod(temporary, 0o666 & ~_umask())
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    return path


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def symlinks_below(folder: Path | str) -> list[Path]:
    """The symlinks in ``folder`` and below it (links are listed, never followed); empty when it is missing."""
    folder = Path(folder)
    if folder.is_symlink():
        return [folder]
    found = []
    for parent, dirs, files in os.walk(folder, followlinks=False):
        for name in [*dirs, *files]:
            if (Path(parent) / name).is_symlink():
                found.append(Path(parent) / name)
    return sorted(found)
