"""Work of this process shared among forks of it, on every core, each result as this process would have made it:
the compositions of a reproduction's checks (:func:`svmrepro.compose.compose_ahead`), its store's skip while its
pages are built and its cost page while its claims are judged (:func:`ahead`, :mod:`svmrepro.reproduce`).

A fork starts at once with everything this process has imported and composed (a new process would spend seconds
importing), so a few hundred milliseconds of work per item is worth sharing. Only a process with no other thread
forks: a fork inherits none of them, but would inherit a lock one of them holds. Nor does a fork use a database
connection its parent opened (an MLflow store's pool): SQLite's own rule, since both processes would then share
one connection's file and lock state; it opens its own (:func:`_own_connections`). A fork ignores Ctrl-C (its
parent stops it after its current item) and ends when its parent dies (:func:`svmrepro.signals.end_with_parent`).
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager
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


@contextmanager
def ahead(function: Callable[[Item], Result], items: Iterable[Item], cores: int) -> Iterator[Iterator[Result]]:
    """``function(item)`` of each of ``items``, in their order, started at once in one fork of this process while
    the caller goes on with its own work on another of ``cores``; the context gives their results in order, each
    waited for when it is asked for (an exception of ``function`` raised then). Where that fork cannot be
    (:func:`can_fork` of ``cores``: one core, another thread) each is computed here when it is asked for, as are
    those of a fork that died (killed from outside). Leaving the context (a stop, an error, or results not asked
    for) drops the items not started and waits for the one running."""
    items = list(items)
    if not items or not can_fork(cores):
        yield map(function, items)
        return
    pool = ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("fork"), initializer=_forked)

    def results(futures: list[Future]) -> Iterator[Result]:
        for item, future in zip(items, futures):
            try:
                yield future.result()
            except BrokenProcessPool:
                yield function(item)

    try:
        yield results([pool.submit(function, item) for item in items])
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def _forked() -> None:
    """Each fork's start: a Ctrl-C is its parent's (which stops the pool); a SIGTERM ends it, so does its parent's
    end; no database connection of its parent is used (:func:`_own_connections`)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signals.end_with_parent()
    if "sqlalchemy" in sys.modules:  # else no pool, hence no connection, was made before the fork
        _own_connections()


#: the key of a pooled connection's ``info`` naming the process that opened it (:func:`_own_connections`)
OPENED_BY = "svmrepro.opened_by"


def _own_connections() -> None:
    """In a fork: a pooled SQLAlchemy connection opened before the fork (by its parent: an MLflow store's engine
    that the fork inherited) is never handed out here (its pool's pre-ping, ``SELECT 1``, reads no table first).
    SQLAlchemy's documented pattern for pools and ``os.fork``: the inherited connection is dropped from this
    process's pool without being closed (closing it would act on the parent's) and the pool opens a new one; a
    connection opened here is marked as this process's."""
    from sqlalchemy import event, exc
    from sqlalchemy.pool import Pool

    pid = os.getpid()

    def opened(dbapi_connection, record) -> None:
        record.info[OPENED_BY] = pid

    def checked_out(dbapi_connection, record, proxy) -> None:
        if record.info.get(OPENED_BY) != pid:
            record.dbapi_connection = proxy.dbapi_connection = None
            raise exc.DisconnectionError(f"a connection opened before this process (pid {pid}) was forked")

    event.listen(Pool, "connect", opened)
    event.listen(Pool, "checkout", checked_out)
