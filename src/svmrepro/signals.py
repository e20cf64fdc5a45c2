"""SIGTERM and SIGINT (Ctrl-C) stop ``svmrepro-run`` cleanly: exit code 143 or 130, no traceback.

The process that receives the signal first forwards SIGTERM to its child processes (the joblib
workers of a sweep, the sub-SVM workers of a run) and waits up to :data:`GRACE_S` seconds for
them to end, then kills the ones left; then :class:`Interrupted` is raised in its main thread.
In a job, the runner marks the run in progress KILLED as :class:`Interrupted` goes through it,
and a worker process ends once its job has (:func:`stopping_job`). A child that ignores SIGTERM
(joblib's resource tracker, which ends when its parent does) is not waited for. A fit inside
compiled code sees the signal only when it returns to Python: a worker still fitting after the
grace period is killed, and its run stays RUNNING until the same configuration runs again on
this host (``svmrepro.tracking.Store.mark_orphans_killed``).
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

SIGNALS = (signal.SIGTERM, signal.SIGINT)
#: seconds the children have to end their jobs (mark their runs KILLED) before they are killed
GRACE_S = 10.0


class Interrupted(KeyboardInterrupt):
    """A SIGTERM or SIGINT: what was running stops; the process exits with 128 + the signal."""

    def __init__(self, signum: int):
        super().__init__(signal.Signals(signum).name)
        self.signum = signum

    def __reduce__(self):  # joblib sends it between processes
        return type(self), (self.signum,)

    @property
    def exit_code(self) -> int:
        return 128 + self.signum


def one_line_stop(program: str) -> None:
    """A Ctrl-C (or :class:`Interrupted`) that no code handles is one line, ``<program>: stopped by
    SIGINT``, instead of a traceback: one during an entry module's slow imports, before its ``main``
    installs anything. Set as ``sys.excepthook``, which only an exception nothing caught reaches;
    Python then ends the process as Ctrl-C does (killed by SIGINT: exit code 130 in a shell)."""
    previous = sys.excepthook

    def hook(kind, value, traceback) -> None:
        if not issubclass(kind, KeyboardInterrupt):
            previous(kind, value, traceback)
            return
        name = str(value) if isinstance(value, Interrupted) else signal.SIGINT.name
        print(f"{program}: stopped by {name}", file=sys.stderr, flush=True)

    sys.excepthook = hook


def _children() -> list[int]:
    """Pids of this process's children that do not ignore SIGTERM (Linux's /proc; none elsewhere)."""
    me, found = str(os.getpid()), []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            if stat.read_text().rsplit(")", 1)[1].split()[1] != me:  # fields after the name: state, ppid
                continue
            ignored = next(line for line in (stat.parent / "status").read_text().splitlines()
                           if line.startswith("SigIgn:"))
        except (OSError, IndexError, StopIteration):
            continue  # ended meanwhile
        if not int(ignored.split()[1], 16) >> (signal.SIGTERM - 1) & 1:
            found.append(int(stat.parent.name))
    return found


def _alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie has ended; its parent, joblib's or ours, reaps it)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


def stop_children(grace_s: float = GRACE_S) -> None:
    """SIGTERM to every child; SIGKILL to those still there after ``grace_s`` seconds."""
    pending = _children()
    for pid in pending:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + grace_s
    while pending and time.monotonic() < deadline:
        time.sleep(0.05)
        pending = [pid for pid in pending if _alive(pid)]
    for pid in pending:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


def _ignore(signum: int, frame) -> None:
    """Not SIG_IGN: a signal already pending when it is set would raise OSError ("ignored due to race")."""


def _handle(signum: int, frame) -> None:
    for sig in SIGNALS:  # one stop: a second Ctrl-C must not interrupt the stopping
        signal.signal(sig, _ignore)
    stop_children()
    raise Interrupted(signum)


def install() -> None:
    """From now on SIGTERM and SIGINT raise :class:`Interrupted` in the main thread (children stopped first)."""
    for sig in SIGNALS:
        signal.signal(sig, _handle)


def exit_on_signal(line: Callable[[Interrupted], str]) -> None:
    """From now on SIGTERM and SIGINT stop the children, print ``line(the stop)`` and end the process
    with 128 + the signal at once: for a process that is ending, where an exception would be lost
    (Python's shutdown waits for joblib's worker threads; an exception raised there is "ignored" and
    the process exits 0). A stop already under way is left to finish."""

    def _exit(signum: int, frame) -> None:
        for sig in SIGNALS:
            signal.signal(sig, _ignore)
        stop_children()
        print(line(Interrupted(signum)), file=sys.stderr, flush=True)
        os._exit(128 + signum)

    for sig in SIGNALS:
        if signal.getsignal(sig) is not _ignore:
            signal.signal(sig, _exit)


@contextlib.contextmanager
def stopping_job(in_worker: bool) -> Iterator[None]:
    """Around one job: a signal raises :class:`Interrupted` in it (the runner marks its run KILLED).

    In a worker process (a joblib worker, not the ``svmrepro-run`` process) the worker then ends
    with 128 + the signal, so the process that stops it sees it end; between jobs the signals
    end a worker at once (their default action), without a traceback.
    """
    install()
    try:
        yield
    except Interrupted as stop:
        if not in_worker:
            raise
        logging.shutdown()  # flush the job's log lines (the run's KILLED line among them)
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(stop.exit_code)
    finally:
        if in_worker:
            for sig in SIGNALS:
                signal.signal(sig, signal.SIG_DFL)
