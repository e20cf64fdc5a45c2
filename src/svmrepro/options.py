"""Config-group options on a command line, checked before Hydra composes anything.

Hydra answers ``algorithm=cros_training`` with a block of every option of the group and no hint; here a
misspelled option is one line naming the key, the value, the closest options ("did you mean") and where the
options come from, before any config is composed (``svmrepro-run``, ``svmrepro-reproduce --override``). Only
the options are checked: a wrong key or value inside a group is the preflight's (:mod:`svmrepro.preflight`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from difflib import get_close_matches
from pathlib import Path

from svmrepro.locations import config_dirs

#: Hydra's sweep syntax around a list of options: ``choice(a,b)`` or a bare ``a,b``
_CHOICE = re.compile(r"^choice\((?P<inner>.*)\)$")


def group_options(group: str, extra: Iterable[Path] = ()) -> list[str]:
    """The options of config group ``group`` (``experiment``: ``<paper>/<id>``) in every config folder (and the
    folders ``extra``: a command line's ``hydra.searchpath``)."""
    roots = [*config_dirs(), *extra]
    found = {path.relative_to(root / group).with_suffix("").as_posix()
             for root in roots if (root / group).is_dir() for path in (root / group).rglob("*.yaml")}
    return sorted(found)


def searchpath_folders(arguments: Iterable[str]) -> list[Path] | None:
    """The ``file://`` folders of a ``hydra.searchpath=[...]`` override; None when it names a package
    (``pkg://``), whose options cannot be listed here."""
    folders: list[Path] = []
    for argument in arguments:
        key, _, value = argument.partition("=")
        if key.lstrip("+~") != "hydra.searchpath":
            continue
        for entry in re.findall(r"[a-z]+://[^,\]]+", value):
            if not entry.startswith("file://"):
                return None
            folders.append(Path(entry.removeprefix("file://").strip("'\"")))
    return folders


def suggestion(wanted: str, valid: Iterable[str]) -> str:
    """``; did you mean x?`` for the closest of ``valid`` (empty when none is close)."""
    close = get_close_matches(wanted, list(valid), n=1, cutoff=0.6)
    return f"; did you mean {close[0]}?" if close else ""


def option_hint(option: str, valid: Iterable[str]) -> str:
    """What follows "no option ``option``" of a config group whose options are ``valid``: the closest ("did you
    mean"), then every option when there are few or none is close, else where to find them all."""
    valid = list(valid)
    hint = suggestion(option, valid)
    listed = f"valid: {', '.join(valid)}" if len(valid) <= 8 or not hint else \
        f"svmrepro-run --help lists its {len(valid)} options"
    return f"{hint} ({listed})"


def _values(value: str) -> list[str]:
    """The options an override's value names: one, a list ``a,b`` or ``choice(a,b)``; none for Hydra's other
    sweeps (``glob(...)``, ``range(...)``), an interpolation or null."""
    value = value.strip().strip("'\"")
    inner = _CHOICE.match(value)
    if inner:
        value = inner.group("inner")
    if not value or value in ("null", "None") or "(" in value or "$" in value:
        return []
    return [part.strip().strip("'\"") for part in value.split(",") if part.strip()]


def unknown_options(arguments: Iterable[str], groups: Iterable[str]) -> list[str]:
    """One line per option of a config group (``groups``) on the command line ``arguments`` that no config
    folder has: the key, the value, the closest option and the count of valid ones."""
    arguments = list(arguments)
    extra = searchpath_folders(arguments)
    if extra is None:  # a package on Hydra's search path: Hydra itself says what is missing
        return []
    groups, lines = set(groups), []
    for argument in arguments:
        if argument.startswith("-") or "=" not in argument:
            continue
        key, value = argument.split("=", 1)
        key = key.lstrip("+~")
        if key not in groups:
            continue
        valid = group_options(key, extra)
        for option in _values(value):
            if option not in valid:
                lines.append(f"{key}={option}: the config group {key} has no option {option}"
                             f"{option_hint(option, valid)}")
    return lines
