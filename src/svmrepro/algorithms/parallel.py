"""Fit independent sub-models in parallel: the one place meta-estimators go through joblib.

Cross-training's first-stage SVMs, the cascade's sub-problems and the mixture's experts are
fitted with :func:`fit_each`. The workers come from joblib, so the caller picks the engine
without touching the algorithms: :func:`backend_context` routes every ``fit_each`` and
``map_each`` inside it to loky processes (joblib's default), threads, a dask.distributed cluster
or a ray cluster. Results come back in input order, so serial, parallel and distributed fits give
identical models. On loky, threading and ray only an estimator's ``n_jobs`` > 1 (or -1) makes a
call parallel; on dask every call goes to the cluster, ``n_jobs`` bounding its tasks at once.

Data flow: a fit hands the whole ``X`` and ``y`` (and ``sample_weight``) to every call, and each
task gets only its index array; the task slices ``X[rows]`` where it runs. ``X`` and ``y`` are
top-level task arguments, never captured in a closure, so joblib sends them once per call rather
than once per task, and a fit that wraps its calls in :func:`data_on_cluster` sends them to a
dask cluster once per fit, a copy on every worker (a lost worker loses no input of the others), or
to a ray cluster's object store once per fit.
A sub-model that is evaluated on the training set (the mixture's experts, cross-training's margins)
is evaluated in the task that fitted it (``fit_each(..., evaluate=)``), so it never travels back.

Each parallel task runs with a bounded BLAS/OpenMP thread pool (threadpoolctl), so ``n_jobs``
workers do not each start one thread per core: ``blas_threads`` of :func:`backend_context`, else
``cpu_count // workers`` as joblib's loky backend does for its own processes.
"""

from __future__ import annotations

import logging
import os
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack, contextmanager
from contextvars import ContextVar
from numbers import Integral
from typing import NamedTuple

import numpy as np
from joblib import effective_n_jobs, parallel_config
from sklearn.base import clone
from sklearn.utils._param_validation import Interval
from sklearn.utils.parallel import Parallel, delayed
from threadpoolctl import ThreadpoolController

from svmrepro.algorithms.cluster_sessions import (
    a_worker_within, dask_client, lost_with_a_worker, no_worker_error, ray_session, workers_left,
)
from svmrepro.signals import end_with_parent

#: joblib backends :func:`backend_context` accepts; dask needs ``dask[distributed]``, ray ``ray``
BACKENDS = ("loky", "threading", "dask", "ray")
#: the ``_parameter_constraints`` entry of every estimator's ``n_jobs``: scikit-learn's convention, None or a
#: nonzero int (-1 every core, -2 all but one); joblib refuses 0 only when a fit starts its first parallel call
N_JOBS = [Interval(Integral, None, -1, closed="right"), Interval(Integral, 1, None, closed="left"), None]
#: runs of one call on dask: a worker lost with the call's data costs a run (:func:`~svmrepro.algorithms.cluster_sessions.lost_with_a_worker`)
CLUSTER_ATTEMPTS = 3

log = logging.getLogger(__name__)

_BLAS_THREADS: ContextVar[int | None] = ContextVar("svmrepro_blas_threads", default=None)


class _Engine(NamedTuple):
    name: str
    address: str | None = None
    #: seconds to wait for a dask scheduler and its workers
    timeout: float = 60.0


#: the engine of the innermost backend_context (joblib's default outside one)
_ENGINE: ContextVar[_Engine] = ContextVar("svmrepro_engine", default=_Engine("loky"))
#: True inside data_on_cluster's block on dask: its backend serves every call of the block
_SHARING: ContextVar[bool] = ContextVar("svmrepro_sharing", default=False)
#: inside data_on_cluster's block on ray: the id of each array of the block -> its ray object reference
_IN_STORE: ContextVar[dict] = ContextVar("svmrepro_in_store", default={})


@contextmanager
def backend_context(
    backend: str = "loky", *, address: str | None = None, blas_threads: int | None = None, timeout: float = 60.0,
    idle_worker_timeout: float | None = None,
) -> Iterator[None]:
    """Run the parallel sub-fits inside the ``with`` block on ``backend``.

    Parameters
    ----------
    backend : {"loky", "threading", "dask", "ray"}
        joblib backend. ``dask`` connects a ``distributed.Client`` to ``address``
        (``tcp://host:8786``); without one it uses the current default client, or starts a
        local cluster (one thread per worker, its HTTP server on a free loopback port) for the
        duration of the block.
        ``ray`` registers ray's joblib backend and joins the cluster at ``address`` (``auto``,
        ``ray://host:10001``), or starts a local one.
    address : str or None
        Scheduler of the dask or ray cluster; unused by loky and threading.
    blas_threads : int >= 1 or None
        BLAS/OpenMP threads per parallel task; None: ``cpu_count // workers``.
    timeout : float
        Seconds to wait for the dask scheduler at ``address`` to answer and for one of its workers
        to be there, when the block starts and whenever a fit sends its data; then a
        :class:`~svmrepro.errors.ConfigError` in one line names the address and what to do.
    idle_worker_timeout : float or None
        loky only: seconds an idle worker lives (None: joblib's 300). A block that runs inside a
        worker of a sweep's own loky pool gives a short one: that worker, when loky restarts it (as
        it does a worker whose memory grew), waits for its own workers to end before it exits, and
        they end only when idle that long.

    A worker lost in the middle of a fit costs only time on dask: each task carries its own rows,
    so the scheduler reruns the lost worker's tasks on the others, which hold the fit's data
    (:func:`data_on_cluster`); a call whose last copy of the data went with the worker runs again
    with the data sent again (:func:`_run_all`).

    The engine changes where and how fast sub-models are fitted, never which models are fitted.
    """
    if backend not in BACKENDS:
        raise ValueError(f"parallel backend {backend!r} is not one of {', '.join(BACKENDS)}")
    if blas_threads is not None and blas_threads < 1:
        raise ValueError(f"blas_threads={blas_threads!r} must be an integer >= 1 or None")
    with ExitStack() as stack:
        if backend == "dask":
            stack.enter_context(dask_client(address, timeout))
        elif backend == "ray":
            stack.enter_context(ray_session(address))
        # a loky worker ends when the process that started it dies, even by SIGKILL, idle or fitting
        idle = {} if idle_worker_timeout is None else {"idle_worker_timeout": idle_worker_timeout}
        options = {
            "loky": {"initializer": end_with_parent, **idle},
            # joblib's own wait when a call finds no worker, as long as ours
            "dask": {"wait_for_workers_timeout": timeout},
        }.get(backend, {})
        stack.enter_context(parallel_config(backend=backend, **options))
        stack.callback(_BLAS_THREADS.reset, _BLAS_THREADS.set(blas_threads))
        stack.callback(_ENGINE.reset, _ENGINE.set(_Engine(backend, address, timeout)))
        yield


@contextmanager
def data_on_cluster(*arrays) -> Iterator[None]:
    """Send ``arrays`` (a fit's X, y, sample_weight; None skipped) to the dask workers once for the block.

    Every :func:`fit_each` and :func:`map_each` inside the block that passes these same objects
    uses the workers' copies: joblib's dask backend scatters its ``scatter`` list to every worker
    (broadcast) when the block starts, and swaps those objects for their futures, by identity,
    wherever they are top-level task arguments. Without the block, joblib would scatter them again
    at every call, each to one worker only, so losing that worker would fail the call. A fit
    wraps its whole work in one block; the calls inside a block open none of their own.

    On ray the arrays go to ray's object store once for the block (``ray.put``), and the tasks
    get their references, which the worker reads from its node's store (:func:`_call_limited`):
    ray's joblib backend would pickle them into every task (with joblib 1.6 it puts no argument
    in the store itself). On loky and threading the block changes nothing: loky memory-maps large
    arrays for each call, and threads share them.
    """
    shared = [array for array in arrays if array is not None]
    engine = _ENGINE.get()
    if engine.name == "ray" and shared and not _IN_STORE.get():
        import ray

        token = _IN_STORE.set({id(array): ray.put(array) for array in shared})
        try:
            yield
        finally:
            _IN_STORE.reset(token)
        return
    if engine.name != "dask" or _SHARING.get() or not shared:
        yield
        return
    try:  # the scatter waits for a worker as long as the client's timeout (backend_context's)
        config = parallel_config(backend="dask", scatter=shared, wait_for_workers_timeout=engine.timeout)
    except TimeoutError:
        raise no_worker_error(engine.address, engine.timeout) from None
    with config:
        token = _SHARING.set(True)
        try:
            yield
        finally:
            _SHARING.reset(token)


def _task_threads(n_jobs: int | None) -> int | None:
    """BLAS threads for each task of a parallel call, None for a serial one (left as it is)."""
    workers = effective_n_jobs(n_jobs)
    if workers == 1:
        return None
    chosen = _BLAS_THREADS.get()
    return chosen if chosen is not None else max(1, (os.cpu_count() or 1) // workers)


def _pools(user_api: str) -> ThreadpoolController:
    # select(): a limiter restores every pool of its controller when it ends, so each limits
    # (and restores) the pools of its own API only
    return ThreadpoolController().select(user_api=user_api)


_BLAS_LOCK = threading.Lock()
_blas = {"tasks": 0, "limiter": None}


@contextmanager
def _blas_limited(threads: int):
    """Limit BLAS and OpenMP pools while one task runs.

    BLAS pools are per process, and tasks of the threading backend (or of in-process dask
    workers) overlap: the first task to start sets the BLAS limit and the last to end restores
    the original one. OpenMP's limit is per thread, so each task sets and restores its own.
    """
    with _BLAS_LOCK:
        if _blas["tasks"] == 0:
            _blas["limiter"] = _pools("blas").limit(limits=threads)
        _blas["tasks"] += 1
    try:
        with _pools("openmp").limit(limits=threads):
            yield
    finally:
        with _BLAS_LOCK:
            _blas["tasks"] -= 1
            if _blas["tasks"] == 0:
                _blas["limiter"].restore_original_limits()


def _from_store(value):
    """``value``, or the array it refers to when it is a ray object reference (:func:`data_on_cluster`)."""
    ray = sys.modules.get("ray")  # a task holding a reference runs in a ray worker, where ray is imported
    return ray.get(value) if ray is not None and isinstance(value, ray.ObjectRef) else value


def _call_limited(threads: int | None, function: Callable, args: tuple, *shared):
    shared = tuple(_from_store(value) for value in shared)
    if threads is None:
        return function(*args, *shared)
    with _blas_limited(threads):
        return function(*args, *shared)


def _run_all(function: Callable, arguments: Sequence[tuple], shared: tuple, n_jobs: int | None) -> list:
    """``[function(*args, *shared) for args in arguments]`` on the active joblib backend, in input order.

    ``shared`` (X, y, ...) are top-level arguments of every task, so joblib's dask backend sends
    each once (see :func:`data_on_cluster`). Each task's own ``args`` travel inside a tuple, which
    joblib never scatters: they go with the task, so a worker lost mid-call holds no input of
    another task. A call whose data went with a lost dask worker runs again, its data sent again
    (:data:`CLUSTER_ATTEMPTS` runs in all): the results are the same, only later.
    """
    threads = _task_threads(n_jobs)
    in_store = _IN_STORE.get()
    shared = tuple(in_store.get(id(value), value) for value in shared)

    def call():
        return Parallel(n_jobs=n_jobs)(delayed(_call_limited)(threads, function, args, *shared) for args in arguments)

    for attempt in range(1, CLUSTER_ATTEMPTS + 1):
        try:
            if attempt == 1:
                return call()
            # a new dask backend for the call: the data sent again, a copy to every worker left
            with parallel_config(backend="dask", scatter=[value for value in shared if value is not None],
                                 wait_for_workers_timeout=_ENGINE.get().timeout):
                return call()
        except Exception as error:
            engine = _ENGINE.get()
            if engine.name != "dask" or not lost_with_a_worker(error):
                raise
            if not a_worker_within(engine.timeout):  # every worker gone: the one line, as when none was there
                raise no_worker_error(engine.address, engine.timeout) from None
            if attempt == CLUSTER_ATTEMPTS:
                raise
            log.warning("a dask worker was lost with data of this call (%s): the call runs again on the %d "
                        "workers left (attempt %d of %d)", type(error).__name__, workers_left(), attempt + 1,
                        CLUSTER_ATTEMPTS)
    raise AssertionError("unreachable")


def task_cpu_time() -> float:
    """CPU seconds of the running task so far: the process's when the task has it to itself.

    A task on this process's main thread is alone in its process (a serial call, or a task in a
    loky or ray worker process), so the process's CPU time counts its BLAS threads too. A task on
    another thread (joblib's threading backend, a dask worker) shares its process with other
    tasks: only its own thread's CPU time is counted (its BLAS threads are then left out).
    """
    if threading.current_thread() is threading.main_thread():
        return time.process_time()
    return time.thread_time()


def timed_task(function: Callable, *args) -> tuple[object, float, float]:
    """``function(*args)``, its wall-clock seconds and its CPU seconds (:func:`task_cpu_time`)."""
    wall, cpu = time.perf_counter(), task_cpu_time()
    out = function(*args)
    return out, time.perf_counter() - wall, task_cpu_time() - cpu


class SubFits(NamedTuple):
    """What :func:`fit_each` returns, each list in the order of its ``rows``."""

    models: list
    #: each fit's wall-clock and CPU seconds (:func:`task_cpu_time`, measured where it ran)
    wall_s: list[float]
    cpu_s: list[float]
    #: ``evaluate(model, X)`` of each model and its wall and CPU seconds (all None without ``evaluate``)
    values: list
    value_wall_s: list[float | None]
    value_cpu_s: list[float | None]


def _fit_rows(estimator, rows, evaluate, X, y, sample_weight):
    """Fit ``estimator`` on ``rows`` of the shared arrays (all rows for None), sliced where the
    task runs, then ``evaluate`` it there; each step timed (:func:`timed_task`)."""
    if rows is not None:
        X_rows, y_rows, weight = X[rows], y[rows], None if sample_weight is None else sample_weight[rows]
    else:
        X_rows, y_rows, weight = X, y, sample_weight
    fitted = timed_task(_fit, estimator, X_rows, y_rows, weight)
    return fitted + ((None, None, None) if evaluate is None else timed_task(evaluate, fitted[0], X))


def _fit(estimator, X, y, sample_weight):
    return estimator.fit(X, y) if sample_weight is None else estimator.fit(X, y, sample_weight=sample_weight)


def fit_each(
    estimator,
    X,
    y: np.ndarray,
    rows: Sequence[np.ndarray | None],
    n_jobs: int | None = None,
    sample_weight: np.ndarray | None = None,
    evaluate: Callable | None = None,
) -> SubFits:
    """Fit a clone of ``estimator`` on ``(X[r], y[r])`` (with ``sample_weight[r]``) for each ``r`` of ``rows``.

    ``X``, ``y`` and ``sample_weight`` go to the workers whole, once (see :func:`data_on_cluster`);
    each task gets its index array (None: all rows) and slices where it runs. ``evaluate(model,
    X)``, if given, runs in the same task right after the fit (e.g. the model's decision values on
    the whole ``X``): a sub-model that is evaluated on the training set is not sent back to the
    cluster for it.
    """
    with data_on_cluster(X, y, sample_weight):
        done = _run_all(_fit_rows, [(clone(estimator), r, evaluate) for r in rows], (X, y, sample_weight), n_jobs)
    return SubFits(*(list(column) for column in zip(*done))) if done else SubFits(*([] for _ in SubFits._fields))


def fit_one(estimator, X, y, rows: np.ndarray | None = None, sample_weight=None):
    """A clone of ``estimator`` fitted on ``rows`` of ``(X, y)`` (all for None; with
    ``sample_weight``), its fit's wall seconds and its fit's CPU seconds."""
    fits = fit_each(estimator, X, y, [rows], sample_weight=sample_weight)
    return fits.models[0], fits.wall_s[0], fits.cpu_s[0]


def map_each(function: Callable, items: Sequence, X, n_jobs: int | None = None) -> list:
    """``[function(item, X) for item in items]``, in parallel, in input order (e.g. decision values
    of each sub-model on the whole training set); ``X`` goes to the workers as :func:`fit_each`'s does."""
    if n_jobs in (None, 1) or len(items) < 2:
        return [function(item, X) for item in items]
    with data_on_cluster(X):
        return _run_all(function, [(item,) for item in items], (X,), n_jobs)
