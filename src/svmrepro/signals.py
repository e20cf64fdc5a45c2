"""SIGTERM and SIGINT (Ctrl-C) stop ``svmrepro-run`` cleanly: exit code 143 or 130, no traceback.

The process that receives the signal first forwards SIGTERM to its child processes (the joblib
workers of a sweep, the sub-SVM workers of a run) and waits up to :data:`GRACE_S` seconds for
them to end, then kills the ones left; then :class:`Interrupted` is raised in its main thread.
In a job, the runner marks the run in progress KILLED as :class:`Interrupted` goes through it,
and a worker process ends once its job has (:func:`stopping_job`). A resource tracker
(joblib's or multiprocessing's, which ignores SIGTERM and ends when its parent does) is not waited for. A fit inside
compiled code sees the signal only when it returns to Python: a worker still fitting after the
grace period is killed, and its run stays RUNNING until the same configuration runs again on
this host (``svmrepro.store.Store.mark_orphans_killed``).

A worker also ends when the process that started it dies without a signal it could forward (``kill
-9``): :func:`end_with_parent` watches the parent and stops the worker as a SIGTERM would. A
sweep's worker starts watching with its first job (:func:`stopping_job`), a sub-model worker as it
starts (the initializer of the loky pools of :func:`svmrepro.algorithms.parallel.backend_context`).
"""

from __future__ import annotations

import contextlib
import logging
import multiprocessing
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from functools import cache

import psutil

SIGNALS = (signal.SIGTERM, signal.SIGINT)
#: seconds the children have to end their jobs (mark their runs KILLED) before they are killed
GRACE_S = 10.0
#: seconds between two checks of a worker's parent (:func:`end_with_parent`)
PARENT_POLL_S = 0.5
#: the pid of the svmrepro-run (or sweeps) process, so a job knows whether it runs in a worker process
MAIN_PID_ENV = "SVMREPRO_MAIN_PID"


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


def _is_resource_tracker(process: psutil.Process) -> bool:
    """Whether ``process`` is a resource tracker of joblib's loky or of multiprocessing (its command
    line runs ``...resource_tracker``'s ``main``). A tracker ignores SIGTERM and ends once every
    process holding its pipe has, this one among them: waiting for it here would always last the
    whole grace period and then kill it, leaving its semaphores and shared memory behind."""
    try:
        return any("resource_tracker" in part for part in process.cmdline())
    except psutil.Error:  # ended meanwhile
        return False


def alive(process: psutil.Process) -> bool:
    """Whether ``process`` runs (a zombie has ended; its parent, joblib's or ours, reaps it)."""
    try:
        return process.is_running() and process.status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def stop_children(grace_s: float = GRACE_S) -> None:
    """SIGTERM to every child; SIGKILL to those still there after ``grace_s`` seconds.

    A resource tracker (:func:`_is_resource_tracker`) is left to end with this process.
    """
    pending = [child for child in psutil.Process().children() if not _is_resource_tracker(child)]
    for child in pending:
        with contextlib.suppress(psutil.NoSuchProcess):
            child.terminate()
    deadline = time.monotonic() + grace_s
    while pending and time.monotonic() < deadline:
        time.sleep(0.05)
        pending = [child for child in pending if alive(child)]
    for child in pending:
        with contextlib.suppress(psutil.NoSuchProcess):
            child.kill()


def _watch(parent_pid: int) -> None:
    while os.getppid() == parent_pid:  # a process whose parent died is re-parented
        time.sleep(PARENT_POLL_S)
    os.kill(os.getpid(), signal.SIGTERM)
    time.sleep(2 * GRACE_S)  # its own children's grace, then the run marked KILLED
    os.kill(os.getpid(), signal.SIGKILL)  # still in compiled code: the next run of the configuration marks it


def end_with_parent() -> None:
    """In a worker process (one started by multiprocessing or joblib's loky), end it once its parent
    has died, however it died: a daemon thread checks every :data:`PARENT_POLL_S` seconds, then
    sends the worker SIGTERM (in a job, the runner marks its run KILLED and :func:`stopping_job`
    ends the worker; between jobs, or in a pool of sub-models, it ends at once) and SIGKILL if it is still there ``2 * GRACE_S`` seconds later.

    A ``kill -9`` of ``svmrepro-run`` forwards nothing, and a loky worker waiting on its call queue
    or fitting never notices: without this, workers still ran 30 minutes later with the store open. Started
    once per process; nothing in a process that no multiprocessing parent started.
    """
    parent = multiprocessing.parent_process()
    if parent is not None:
        end_with(parent.pid)


def end_with(parent_pid: int) -> None:
    """In a process an svmrepro command started itself (:mod:`svmrepro.sweeps`, by svmrepro-reproduce): end it as
    :func:`end_with_parent` ends a worker once ``parent_pid`` has died, however it died (a SIGTERM or SIGKILL of
    that command alone reaches nothing else)."""
    _start_watching(parent_pid)


@cache
def _start_watching(parent_pid: int) -> None:
    threading.Thread(target=_watch, args=(parent_pid,), name="svmrepro-end-with-parent", daemon=True).start()


def _ignore(signum: int, frame) -> None:
    """Not SIG_IGN: a signal already pending when it is set would raise OSError ("ignored due to race")."""


#: in the main thread: how many :func:`held` sections are open, and the signal that arrived in one
_held_depth = 0
_held_signal: int | None = None
#: the holds of :func:`hold` open now (each one of the depth's counts)
_holds: set[str] = set()
#: what :func:`hold` holds for: the end of a sweep, until its run is closed
SWEEP_END = "sweep end"
#: ... and Hydra's start, until the job function or the sweeper starts: a stop inside OmegaConf's building of a
#: node leaves it half-built, the error raised from it (not the stop) reaches Hydra, which prints it with its
#: traceback and exits 1, a Ctrl-C that passes for a mistake in the configs
START = "start"


#: the signal of the stop this process raised (:func:`_stop`), once it has
_raised: int | None = None


def _stop(signum: int) -> None:
    global _raised
    for sig in SIGNALS:  # one stop: a second Ctrl-C must not interrupt the stopping
        signal.signal(sig, _ignore)
    stop_children()
    _raised = signum
    raise Interrupted(signum)


def stop_behind(error: BaseException) -> Interrupted | None:
    """The stop ``error`` stands for: :class:`Interrupted` itself, or any error raised once this process was
    stopped, which the stop caused: a library that catches the ``KeyboardInterrupt`` where it landed and raises
    an error of its own (a C extension's import: "ImportError: initialization failed"; OmegaConf: a half-built
    node's ``AttributeError``) must not make a Ctrl-C pass for a failed run. None when no stop was raised."""
    if isinstance(error, Interrupted):
        return error
    return None if _raised is None else Interrupted(_raised)


def _handle(signum: int, frame) -> None:
    global _held_signal
    if _held_depth:  # in a store call: the stop waits for its end (held)
        _held_signal = _held_signal or signum
        return
    _stop(signum)


@contextlib.contextmanager
def held() -> Iterator[None]:
    """Around one call to the MLflow store, or one composition of a config: a signal arriving in it stops the
    process once the call has returned (or raised), not inside it.

    :class:`Interrupted` raised inside SQLAlchemy's fetch of a result makes it drop the connection
    as an exit exception and then log "Error closing cursor" with a traceback at ERROR level (the
    cursor's database is closed by then): a Ctrl-C that hit a worker logging its run's params printed
    that traceback. Raised inside OmegaConf, it leaves a node half-built and an ``AttributeError`` of
    OmegaConf's takes its place. A store call lasts milliseconds (seconds when SQLite is locked), a
    composition tens of milliseconds; the stop then goes on as from :func:`install`. Only the main thread,
    where Python runs signal handlers, holds.
    """
    global _held_depth, _held_signal
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    _held_depth += 1
    try:
        yield
    finally:
        _held_depth -= 1
        if not _held_depth and _held_signal is not None:
            signum, _held_signal = _held_signal, None
            _stop(signum)


def hold(what: str = SWEEP_END) -> None:
    """From now on a signal waits for :func:`release` (or :func:`released`) of ``what``, as in :func:`held`:
    for the end of a sweep (:data:`SWEEP_END`), from its last log line until its run is closed, which a stop
    would leave RUNNING (and the next sweep would mark a finished sweep KILLED); for Hydra's start
    (:data:`START`). Main thread only; a second hold of ``what`` before its release is none."""
    global _held_depth
    if threading.current_thread() is threading.main_thread() and what not in _holds:
        _holds.add(what)
        _held_depth += 1


def release(what: str = SWEEP_END) -> None:
    """End the hold of :func:`hold`; a signal that came meanwhile stops the process now (outside any :func:`held`)."""
    stop = released(what)
    if stop is not None:
        _stop(stop.signum)


def released(what: str = SWEEP_END) -> Interrupted | None:
    """End the hold of ``what`` (:func:`hold`; a :func:`held` section still open keeps its own); the stop a signal
    that came meanwhile asks for once nothing holds it (not raised), else None."""
    global _held_depth, _held_signal
    if threading.current_thread() is not threading.main_thread() or what not in _holds:
        return None
    _holds.discard(what)
    _held_depth -= 1
    if _held_depth or _held_signal is None:
        return None
    signum, _held_signal = _held_signal, None
    return Interrupted(signum)


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


def in_sweep_worker() -> bool:
    """Whether this process is a worker of a sweep's launcher (its jobs run elsewhere than in the process
    that started the sweep)."""
    main = os.environ.get(MAIN_PID_ENV)
    return main is not None and main != str(os.getpid())


@contextlib.contextmanager
def stopping_job(in_worker: bool) -> Iterator[None]:
    """Around one job: a signal raises :class:`Interrupted` in it (the runner marks its run KILLED).

    In a worker process (a joblib worker, not the ``svmrepro-run`` process) the worker then ends
    with 128 + the signal, so the process that stops it sees it end; between jobs the signals
    end a worker at once (their default action), without a traceback.
    """
    try:  # from the handlers on: a stop landing before the job starts ends a worker as one landing in it does
        install()
        if in_worker:
            end_with_parent()
        try:
            yield
        except Exception as error:
            if (stop := stop_behind(error)) is None:
                raise
            raise stop from error
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
