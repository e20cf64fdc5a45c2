"""Where data files live, and how they get there verified.

Lookup order for a file: the data home (``$SVMREPRO_DATA``, default ``~/.cache/svmrepro``),
then the offline copies in ``shared/data`` (``$SVMREPRO_SHARED_DATA``, default the ``shared/data``
folder beside the project checkout), then a download into the data home. A download goes to a
temporary file that is renamed only after its sha256 matched, so a cache never holds a partial
or wrong file.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from svmrepro.errors import DataError
from svmrepro.locations import source_checkout

#: set to 1 to forbid downloads (tests, air-gapped machines): a missing file is then an error at once
OFFLINE_ENV = "SVMREPRO_OFFLINE"


def data_home() -> Path:
    return Path(os.environ.get("SVMREPRO_DATA", Path.home() / ".cache" / "svmrepro"))


def shared_data_dir() -> Path | None:
    """The offline copies (``$SVMREPRO_SHARED_DATA``, else ``../shared/data`` beside the checkout the
    package runs from), or None when absent."""
    checkout = source_checkout()
    default = checkout.parent / "shared" / "data" if checkout else None
    candidate = os.environ.get("SVMREPRO_SHARED_DATA") or default
    if candidate is None:
        return None
    candidate = Path(candidate)
    return candidate if candidate.is_dir() else None


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


@dataclass(frozen=True)
class RemoteFile:
    """A file a data set needs: where it comes from and what it must hash to.

    ``shared_name`` is its path below ``shared/data`` when an offline copy exists there.
    """

    name: str
    url: str
    sha256: str
    subdir: str
    shared_name: str | None = None

    def cached_path(self) -> Path:
        return data_home() / self.subdir / self.name

    def shared_path(self) -> Path | None:
        shared = shared_data_dir()
        if shared is None or self.shared_name is None:
            return None
        path = shared / self.shared_name
        return path if path.exists() else None

    def available_offline(self) -> bool:
        return self.cached_path().exists() or self.shared_path() is not None

    def fetch(self, download: bool = True) -> Path:
        """Path of a verified copy: cache, then shared/data, then (if allowed) a download. Whatever
        sits at the first of those paths is the file: one that cannot be read is an error naming
        it, not a reason to look further."""
        for path in (self.cached_path(), self.shared_path()):
            if path is not None and path.exists():
                verify(path, self.sha256)
                return path
        if not download:
            raise self._missing("it is not downloaded automatically")
        if os.environ.get(OFFLINE_ENV, "") not in ("", "0"):
            raise self._missing(f"downloads are disabled by {OFFLINE_ENV}")
        return self._download()

    def _download(self) -> Path:
        target = self.cached_path()
        try:
            with atomic_write(target, check=lambda tmp: verify(tmp, self.sha256, shown_as=self.url)) as out:
                with urllib.request.urlopen(self.url, timeout=60) as response:
                    for block in iter(lambda: response.read(1 << 20), b""):
                        out.write(block)
        except OSError as exc:
            raise self._missing(f"download failed: {exc}") from exc
        return target

    def _missing(self, why: str) -> DataError:
        return DataError(
            f"data file {self.name} is not available ({why}); download it from {self.url} "
            f"and put it in {self.cached_path().parent}"
        )


@contextmanager
def atomic_write(target: Path, check: Callable[[Path], None] | None = None) -> Iterator[BinaryIO]:
    """A binary handle on a temporary file beside ``target``, renamed onto it only when the block
    succeeded and ``check(temporary path)`` passed; readers never see a partial file."""
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".part")
    tmp = Path(name)
    try:
        with os.fdopen(fd, "wb") as handle:
            yield handle
        if check is not None:
            check(tmp)
        os.chmod(tmp, 0o644)  # mkstemp makes it private to its owner
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)


def verify(path: Path, expected: str, shown_as: str | None = None) -> None:
    """Refuse a file whose sha256 is not ``expected``, or that cannot be read, in one line naming it."""
    try:
        actual = sha256_of(path)
    except OSError as exc:  # unreadable (permissions, a directory, an I/O error): not a traceback per run
        raise DataError(f"cannot read data file {shown_as or path}: {exc.strerror or exc}") from exc
    if actual != expected:
        raise DataError(
            f"checksum mismatch for {shown_as or path}: expected sha256 {expected}, got {actual}"
        )
