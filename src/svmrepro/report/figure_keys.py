"""A figure is drawn again only when what it shows may have changed.

Drawing is most of what rebuilding an output costs (matplotlib lays out, measures and renders every
panel: seconds per figure), and a reproduction with nothing new to run rebuilds every output. Each
figure therefore carries, in a text chunk of its PNG (:data:`KEY`), the sha256 of everything it is
drawn from (:func:`figure_key`): the tables, points and specs its caller passes (every value in them, a
float to :data:`KEPT_BITS` bits of its significand: see :func:`_kept`),
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
#: the bits of a float's 52-bit significand a key keeps (a relative 2**-27, about 8 significant digits): the same
#: runs give floats that differ in their last bits from one CPU to another (numpy's and OpenBLAS's kernels for
#: AVX2 and AVX-512 round differently), far below what a figure can show
KEPT_BITS = 26
_DROPPED = np.uint64(52 - KEPT_BITS)


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


def _kept(values: np.ndarray) -> np.ndarray:
    """Float64 ``values`` rounded to the nearest float with only :data:`KEPT_BITS` significand bits (a carry goes
    into the exponent; infinities and NaNs stay what they are), so that two machines' last-bit differences give one
    key. Two floats still differ in their key when they differ by more than a relative 2**-27 or so."""
    bits = np.ascontiguousarray(values, dtype=np.float64).view(np.uint64)  # a scalar as an array of one
    half, low = np.uint64(1) << (_DROPPED - np.uint64(1)), (np.uint64(1) << _DROPPED) - np.uint64(1)
    finite = np.isfinite(bits.view(np.float64))
    return np.where(finite, (bits + half) & ~low, bits).view(np.float64)


def _floats_kept(part: object) -> object:
    """``part`` with every float in it (a scalar, or one nested in lists, tuples and mappings) as :func:`_kept`."""
    if isinstance(part, (float, np.floating)):
        return _kept(np.float64(part)).item()
    if isinstance(part, Mapping):
        return {key: _floats_kept(value) for key, value in part.items()}
    if isinstance(part, (list, tuple)):
        return [_floats_kept(item) for item in part]
    return part


def _is_float(dtype) -> bool:
    return isinstance(dtype, np.dtype) and dtype.kind == "f"


def _with_floats_kept(table: pd.DataFrame | pd.Series) -> pd.DataFrame | pd.Series:
    """``table`` with its float columns (numpy's float dtypes) passed through :func:`_kept`."""
    if isinstance(table, pd.Series):
        return pd.Series(_kept(table.to_numpy()), index=table.index, name=table.name) if _is_float(table.dtype) \
            else table
    floats = [name for name, dtype in table.dtypes.items() if _is_float(dtype)]
    if not floats:
        return table
    kept = table.copy()
    for name in floats:
        kept[name] = _kept(table[name].to_numpy())
    return kept


def _text(part: object) -> str:
    """A part of what a figure is drawn from, as text with every value in it (floats as :func:`_kept`) and the
    same in every process and on every CPU: a table by its CSV (its index and dtypes too), an array by its bytes,
    a dataclass by its fields, a mapping or a list (a sidecar's points) as JSON of the same, a set sorted."""
    if isinstance(part, pd.DataFrame):
        return f"{part.dtypes.to_dict()!r}\n{_with_floats_kept(part).to_csv()}"
    if isinstance(part, pd.Series):
        return f"{part.dtype}\n{_with_floats_kept(part).to_csv()}"
    if isinstance(part, np.ndarray):
        values = _kept(part).astype(part.dtype) if _is_float(part.dtype) else part
        return f"{part.dtype}{part.shape}:{values.tobytes().hex()}"
    if dataclasses.is_dataclass(part) and not isinstance(part, type):  # a spec, a verdict: field by field, not repr
        part = {"dataclass": type(part).__qualname__,
                **{field.name: getattr(part, field.name) for field in dataclasses.fields(part)}}
    if isinstance(part, Mapping):
        return json.dumps({str(key): _floats_kept(value) for key, value in part.items()}, sort_keys=True,
                          default=_text)
    if isinstance(part, (list, tuple)):
        return json.dumps(_floats_kept(list(part)), default=_text)
    if isinstance(part, (set, frozenset)):  # in an order of its own, not the process's hash order
        return json.dumps(sorted(_text(item) for item in part))
    return repr(_floats_kept(part))


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
