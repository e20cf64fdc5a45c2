"""A section of an output that needs runs of a group with none (a sweep whose reference runs all
failed) says so on the page in one line, and the rest of the output is built.

``no runs of svc: ratios not computed`` rather than a traceback: the section raises
:class:`NotComputed` (:func:`require_runs`), and whoever writes the page puts the line in its
place (:func:`section_text`).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable

from svmrepro.errors import SvmReproError


class NotComputed(SvmReproError):
    """A section the runs cannot give; its message is the line the page shows instead."""


def require_runs(present: Collection[str], needed: Iterable[str], section: str) -> None:
    """Raise :class:`NotComputed` naming each of the ``needed`` groups not in ``present``."""
    missing = [group for group in dict.fromkeys(needed) if group not in present]
    if missing:
        raise NotComputed(f"no runs of {', '.join(missing)}: {section} not computed")


def section_text(compute: Callable[[], str]) -> str:
    """The section ``compute`` writes, or the line saying why it could not be computed."""
    try:
        return compute()
    except NotComputed as exc:
        return str(exc)
