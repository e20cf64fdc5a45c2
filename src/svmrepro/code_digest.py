"""The digest of the code that decides a run's numbers: part of its identity (:func:`svmrepro.identity.run_key`).

The package version never changes when an algorithm does, so it cannot tell runs of old code from
runs of new code; this digest can. It covers :data:`RESULT_SOURCES`, the package's modules that
decide what a run computes and measures. Left out, because they change what is logged, shown or
judged but never a run's numbers: ``report/`` (outputs, claims, verdicts: rebuilt from the runs at
any time), ``reproduce.py`` (which sweeps run, and in what order), the store (``svmrepro/store/``)
(where and how numbers are kept), ``app.py``, ``compose.py``, ``settings.py`` and ``identity.py``
(the config a run gets is hashed itself, in ``config_hash``), ``environment.py`` and ``exclusive.py``
(what is recorded about the machine, and when a timed run may start), the sweeper plugins; and
the two files of ``data/`` listed in :data:`EXCLUDED`.

The digest is of bytes: sorted package-relative paths and each file's sha256 (:func:`digest_of`),
so it is the same in a checkout, an editable install and an unpacked wheel, and, from git's
objects, for the tree of any commit (:func:`commit_digest`), which is how runs logged before runs
were tagged with it (``code_digest``) are placed: by their ``git_commit`` tag. A run of a
checkout with uncommitted changes (``git_dirty``) is then taken for its commit's code.
"""

from __future__ import annotations

import hashlib
import subprocess
from collections.abc import Iterable, Mapping
from functools import cache
from pathlib import Path, PurePosixPath

from svmrepro.locations import PACKAGE_DIR, source_checkout

#: the tag holding the digest of the code that made a run
CODE_DIGEST_TAG = "code_digest"
#: package-relative folders and modules whose ``.py`` files decide a run's numbers: the estimators,
#: the data sets' loaders and generators, the analyses of a fitted model, and the run itself (the
#: runner, building the parts from the config, what is measured, the metrics, the decision surface,
#: the clocks)
RESULT_SOURCES = (
    "algorithms", "analyses", "data",
    "runner.py", "build.py", "measures.py", "metrics.py", "surface.py", "timing.py",
)
#: files inside :data:`RESULT_SOURCES` that do not: ``svmrepro-data``'s listing, and where data files
#: are found and fetched (their bytes are in the run key already, as the source fingerprint)
EXCLUDED = frozenset({"data/cli.py", "data/files.py"})
#: where the package's sources are in the repository (pyproject.toml: packages in ``src``)
PACKAGE_IN_REPO = "src/svmrepro/"


def is_result_source(path: str) -> bool:
    """Whether the package-relative POSIX ``path`` is one of the files the digest covers."""
    parts = PurePosixPath(path)
    return (parts.suffix == ".py" and "__pycache__" not in parts.parts and path not in EXCLUDED
            and (path in RESULT_SOURCES or parts.parts[0] in RESULT_SOURCES))


def digest_of(files: Mapping[str, bytes]) -> str:
    """sha256 over the sorted paths, each with its content's sha256; the one rule for files and git."""
    total = hashlib.sha256()
    for path in sorted(files):
        total.update(path.encode() + b"\0" + hashlib.sha256(files[path]).digest())
    return total.hexdigest()


def folder_digest(package_dir: Path) -> str:
    """The digest of the result sources below ``package_dir`` (a package folder on disk)."""
    found = [package_dir / source for source in RESULT_SOURCES]
    found = [path for top in found for path in (top.rglob("*.py") if top.is_dir() else [top])]
    relative = (path.relative_to(package_dir).as_posix() for path in found)
    return digest_of({rel: (package_dir / rel).read_bytes() for rel in relative if is_result_source(rel)})


@cache
def code_digest() -> str:
    """The digest of the running package's result sources (read once per process)."""
    return folder_digest(PACKAGE_DIR)


def _git(checkout: Path, *args: str, given: bytes | None = None) -> bytes:
    return subprocess.run(["git", *args], cwd=checkout, input=given, capture_output=True, check=True,
                          timeout=60).stdout


@cache
def commit_digest(commit: str, checkout: Path | None = None) -> str | None:
    """The digest of the result sources in the tree of ``commit`` (from git's objects, whatever the
    work tree holds); None outside a git checkout or for a commit git does not have."""
    checkout = checkout or source_checkout()
    if checkout is None or not commit or commit == "unknown":
        return None
    try:
        listing = _git(checkout, "ls-tree", "-r", "-z", "--full-tree", f"{commit}^{{tree}}", "--",
                       *(PACKAGE_IN_REPO + source for source in RESULT_SOURCES))
    except (OSError, subprocess.SubprocessError):
        return None
    blobs = {}
    for entry in filter(None, listing.decode().split("\0")):
        meta, path = entry.split("\t", 1)
        relative = path.removeprefix(PACKAGE_IN_REPO)
        if meta.split()[1] == "blob" and is_result_source(relative):
            blobs[relative] = meta.split()[2]
    return digest_of(dict(zip(blobs, _contents(checkout, blobs.values()))))


def _contents(checkout: Path, objects: Iterable[str]) -> list[bytes]:
    """The contents of git blobs, in order, in one ``git cat-file --batch``."""
    objects = list(objects)
    out = _git(checkout, "cat-file", "--batch", given="".join(f"{o}\n" for o in objects).encode())
    contents, at = [], 0
    for _ in objects:
        header_end = out.index(b"\n", at)
        size = int(out[at:header_end].split()[2])
        contents.append(out[header_end + 1:header_end + 1 + size])
        at = header_end + 1 + size + 1  # the content is followed by a newline
    return contents


def made_by(tags: Mapping[str, object], commit: str | None) -> str | None:
    """The code digest of a run from its tags (``code_digest``), else that of its ``commit``
    (:func:`svmrepro.store.run_commit`); None when unknown."""
    own = tags.get(CODE_DIGEST_TAG)
    if isinstance(own, str) and own:
        return own
    return commit_digest(commit) if commit else None
