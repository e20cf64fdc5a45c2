"""A figure is drawn again only when what it shows may have changed.

Drawing is most of what rebuilding an output costs (matplotlib lays out, measures and renders every
panel: seconds per figure), and a reproduction with nothing new to run rebuilds every output. Each
figure therefore carries, in a text chunk of its PNG (:data:`KEY`), the sha256 of everything it is
drawn from (:func:`figure_key`): the tables, points and specs its caller passes (every value in them),
the bytes of every module of ``svmrepro/report/`` (:data:`DRAWING_CODE`: the code that turns those
into a figure; any change there draws every figure again) and matplotlib's and Pillow's versions.
Code outside ``report/`` reaches a figure only through those inputs (a run's numbers, a tag's name),
which are hashed by value. A figure whose PNG holds the key of what it would be drawn from now is left
as it is (:func:`is_current`); any other, a missing one, or one that is a link, is drawn.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Mapping
from functools import cache
from pathlib import Path

import numpy as np
import pandas as pd

from svmrepro.locations import PACKAGE_DIR

#: the PNG text chunk holding what a figure was drawn from
KEY = "svmrepro-drawn-from"
#: the PNG text chunk naming the drawing libraries' versions (also in :data:`KEY`; told apart so a check of the
#: committed figures can tell "drawn from other runs or code" from "drawn by another matplotlib")
LIBRARIES = "svmrepro-drawn-with"
#: the package folder whose modules draw the figures
DRAWING_CODE = "report"


@cache
def libraries() -> str:
    """The versions of the libraries that draw and write a figure."""
    import matplotlib  # imported where a figure is drawn, not where a caller merely may draw one
    import PIL

    return f"matplotlib {matplotlib.__version__} pillow {PIL.__version__}"


@cache
def _drawing_code() -> bytes:
    """sha256 over the modules of :data:`DRAWING_CODE` (sorted paths, each with its bytes) and the drawing
    libraries' versions."""
    total = hashlib.sha256(libraries().encode())
    for path in sorted(p for p in (PACKAGE_DIR / DRAWING_CODE).rglob("*.py") if "__pycache__" not in p.parts):
        total.update(path.relative_to(PACKAGE_DIR).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return total.digest()


def _text(part: object) -> str:
    """A part of what a figure is drawn from, as text with every value in it and the same in every process: a
    table by its CSV (its index and dtypes too), an array by its bytes, a dataclass by its fields, a mapping or a
    list (a sidecar's points) as JSON of the same, a set sorted."""
    if isinstance(part, pd.DataFrame):
        return f"{part.dtypes.to_dict()!r}\n{part.to_csv()}"
    if isinstance(part, pd.Series):
        return f"{part.dtype}\n{part.to_csv()}"
    if isinstance(part, np.ndarray):
        return f"{part.dtype}{part.shape}:{part.tobytes().hex()}"
    if dataclasses.is_dataclass(part) and not isinstance(part, type):  # a spec, a verdict: field by field, not repr
        part = {"dataclass": type(part).__qualname__,
                **{field.name: getattr(part, field.name) for field in dataclasses.fields(part)}}
    if isinstance(part, Mapping):
        return json.dumps({str(key): value for key, value in part.items()}, sort_keys=True, default=_text)
    if isinstance(part, (list, tuple)):
        return json.dumps(list(part), default=_text)
    if isinstance(part, (set, frozenset)):  # in an order of its own, not the process's hash order
        return json.dumps(sorted(_text(item) for item in part))
    return repr(part)


def figure_key(*parts: object) -> str:
    """The key of a figure drawn from ``parts`` by the package's current code."""
    total = hashlib.sha256(_drawing_code())
    for part in parts:
        total.update(b"\0" + _text(part).encode())
    return total.hexdigest()


def png_metadata(key: str) -> dict[str, str]:
    """The text chunks a figure drawn under ``key`` carries (``savefig(..., metadata=)``)."""
    return {KEY: key, LIBRARIES: libraries()}


def drawn_with(path: Path) -> str | None:
    """The drawing libraries' versions a PNG figure says it was drawn with (None: no such figure)."""
    from PIL import Image

    try:
        with Image.open(path) as image:
            return image.info.get(LIBRARIES)
    except (OSError, ValueError, SyntaxError):
        return None


def is_current(path: Path, key: str) -> bool:
    """Whether ``path`` is a PNG (not a link) drawn from what ``key`` says."""
    if path.is_symlink() or not path.is_file():
        return False
    from PIL import Image

    try:
        with Image.open(path) as image:
            return image.format == "PNG" and image.info.get(KEY) == key
    except (OSError, ValueError, SyntaxError):  # not an image, or a damaged one: draw it again
        return False
