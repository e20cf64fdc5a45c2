"""The one line a stop prints when nothing else handled it, and an entry point's quick end: the first import of
every entry point.

It imports nothing but the standard library, so an entry point has its handler in place a few milliseconds
after Python starts; a Ctrl-C that comes before even that is Python's own traceback.
"""

from __future__ import annotations

import atexit
import gc
import os
import signal
import sys


#: the program whose imports :func:`_stop_now` stops (the entry point's, once it runs as one)
_program: str | None = None


def _stop_now(signum: int, frame) -> None:
    """Ctrl-C during an entry point's imports: its line, and the process ends as Ctrl-C ends it, at once. Not
    an exception: raised where the signal lands, a ``KeyboardInterrupt`` can be swallowed (in a ``__del__`` or a
    garbage collector's callback it is "ignored"), and the command then ran on to exit 0 (seen once in a full
    suite, under load). Nothing runs yet that a stop would leave half done."""
    print(f"{_program}: stopped by {signal.Signals(signum).name}", file=sys.stderr, flush=True)
    signal.signal(signum, signal.SIG_DFL)
    os.kill(os.getpid(), signum)


def one_line_stop(program: str, module: str) -> None:
    """A Ctrl-C (or :class:`svmrepro.signals.Interrupted`) that no code handles is one line,
    ``<program>: stopped by SIGINT``, instead of a traceback: one during an entry module's slow
    imports, before its ``main`` installs anything. ``module`` is the calling module's ``__name__``.

    Run as the entry point (``python -m``, or the console script ``program``), Ctrl-C ends the process at
    once (:func:`_stop_now`) until its ``main`` installs its own handling or calls :func:`imported`. Besides,
    as ``sys.excepthook``, which only an exception nothing caught reaches, a ``KeyboardInterrupt`` is the
    line; Python then ends the process as Ctrl-C does (killed by SIGINT: exit code 130 in a shell). Run as the
    entry point, its process also ends without collecting its heap (:func:`_end_uncollected`). Imported as a
    library (a test's process), only the excepthook."""
    global _program
    entry = module == "__main__" or os.path.basename(sys.argv[0]) == program
    if entry:
        _end_uncollected()
    if entry and signal.getsignal(signal.SIGINT) is signal.default_int_handler:  # not where Ctrl-C is ignored
        _program = program
        signal.signal(signal.SIGINT, _stop_now)
    previous = sys.excepthook

    def hook(kind, value, traceback) -> None:
        if not issubclass(kind, KeyboardInterrupt):
            previous(kind, value, traceback)
            return
        name = signal.Signals(getattr(value, "signum", signal.SIGINT)).name
        print(f"{program}: stopped by {name}", file=sys.stderr, flush=True)

    sys.excepthook = hook


def _end_uncollected() -> None:
    """The entry point's process ends without collecting its heap: :func:`gc.freeze` as the last exit handler
    (registered first, it runs after every other, which may still need the collector). Python's shutdown
    collects every object it tracks, seconds of a ``svmrepro-reproduce`` with nothing to run (its composed
    configs alone are a million objects); frozen, they are freed by their reference counts only, and a cycle
    among them is left to the end of the process. Once per process."""
    global _freeze_at_exit
    if not _freeze_at_exit:
        _freeze_at_exit = True
        atexit.register(gc.freeze)


#: whether :func:`_end_uncollected` registered :func:`gc.freeze` to run at exit
_freeze_at_exit = False


def imported() -> None:
    """The entry point's imports are over: Ctrl-C is Python's ``KeyboardInterrupt`` again, which its ``main``
    handles (its ``finally`` blocks run)."""
    if signal.getsignal(signal.SIGINT) is _stop_now:
        signal.signal(signal.SIGINT, signal.default_int_handler)
