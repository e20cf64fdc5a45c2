"""The one line a stop prints when nothing else handled it: the first import of every entry point.

It imports nothing but the standard library's ``signal`` and ``sys``, so an entry point has its
handler in place a few milliseconds after Python starts; a Ctrl-C that comes before even that is
Python's own traceback.
"""

from __future__ import annotations

import signal
import sys


def one_line_stop(program: str) -> None:
    """A Ctrl-C (or :class:`svmrepro.signals.Interrupted`) that no code handles is one line,
    ``<program>: stopped by SIGINT``, instead of a traceback: one during an entry module's slow
    imports, before its ``main`` installs anything. Set as ``sys.excepthook``, which only an exception
    nothing caught reaches; Python then ends the process as Ctrl-C does (killed by SIGINT: exit code
    130 in a shell)."""
    previous = sys.excepthook

    def hook(kind, value, traceback) -> None:
        if not issubclass(kind, KeyboardInterrupt):
            previous(kind, value, traceback)
            return
        name = signal.Signals(getattr(value, "signum", signal.SIGINT)).name
        print(f"{program}: stopped by {name}", file=sys.stderr, flush=True)

    sys.excepthook = hook
