"""Work of this process shared among forks of it, on every core, each result as this process would have made it:
the compositions of a reproduction's checks (:func:`svmrepro.compose.compose_ahead`).

A fork starts at once with everything this process has imported and composed (a new process would spend seconds
importing), so a few hundred milliseconds of work per item is worth sharing. Only a process with no other thread
forks: a fork inherits none of them, but would inherit a lock one of them holds. A fork ignores Ctrl-C (its parent
stops it after its current item) and ends when its parent dies (:func:`svmrepro.signals.end_with_parent`).
"""

from __future__ import annotations

import multiprocessing
import signal
import threading
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ProcessPoolExecutor
from typing import TypeVar

from svmrepro import signals

Item = TypeVar("Item")
Result = TypeVar("Result")


def can_fork(processes: int) -> bool:
    """Whether :func:`in_forks` would share work among ``processes`` forks: more than one, a process without
    another thread, on a system that forks."""
    return processes > 1 and threading.active_count() == 1 and "fork" in multiprocessing.get_all_start_methods()


def in_forks(function: Callable[[Item], Result], items: Iterable[Item], processes: int) -> Iterator[Result]:
    """``function(item)`` of each of ``items``, in their order, computed by ``processes`` forks of this process
    (:func:`can_fork` first: the caller does the work itself when not). An exception of ``function`` is raised
    here; a stop here (Ctrl-C, SIGTERM) drops the items not started and waits for those started, one per fork."""
    pool = ProcessPoolExecutor(processes, mp_context=multiprocessing.get_context("fork"), initializer=_forked)
    try:  # one item a task: a stop waits for one at most
        yield from pool.map(function, items)
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def _forked() -> None:
    """Each fork's start: a Ctrl-C is its parent's (which stops the pool); a SIGTERM ends it, so does its parent's
    end."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signals.end_with_parent()
