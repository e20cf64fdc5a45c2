"""A ray head lost in the middle of a run ends it in one line naming ``parallel.address``, exit 2 (issue 46, item 8).

A dask client sees its scheduler's workers and fails in :mod:`svmrepro.algorithms.cluster_sessions`. A ray driver
whose head stopped answering waits in its calls to the head instead: ray retries the head for
``gcs_rpc_server_reconnect_timeout_s`` (60 s by default) and then ends the process itself, with a fatal log and
no line of ours. :func:`watching` is the process's watch on the head during one run: a thread tries a TCP
connection to the head's address once a second, and once it has had none for ``parallel.timeout`` seconds it
interrupts the main thread as Ctrl-C does. The run unwinds as a stopped run does (recorded KILLED), and the block
ends with :class:`ClusterLost`, the one line, which ``svmrepro-run`` prints before it exits 2. Where the main thread
waits in one of ray's own calls to the head, which no signal interrupts, the watch prints the line and ends the
process itself (:func:`give_up`). Ray's own limit is set above ``parallel.timeout`` for the run
(unless the user set it), so the watch speaks first.

It lives outside ``algorithms/`` because it changes how a run ends, never what a run computes (the code digest,
:mod:`svmrepro.code_digest`), and because stopping the main thread is the process's concern, not an estimator's.
"""

from __future__ import annotations

import os
import signal
import socket
import sys
import threading
import time
from contextlib import contextmanager
from typing import Callable, Iterator
from urllib.parse import urlsplit

from svmrepro.errors import ConfigError
from svmrepro.redact import redact

#: ray's wait for a head that stopped answering, before it ends the driver (ray_config_def.h)
RAY_RECONNECT_ENV = "RAY_gcs_rpc_server_reconnect_timeout_s"
#: seconds between two tries of the head's address
PROBE_EVERY_S = 1.0
#: seconds the interrupted run has to unwind (its run recorded KILLED) before the process ends without it
UNWIND_S = 10.0


class ClusterLost(ConfigError):
    """The ray head at ``parallel.address`` stopped answering during a run."""


class _Lost(KeyboardInterrupt):
    """What the watch raises in the main thread: a ``KeyboardInterrupt``, the one exception ray's wait gives way to
    (ray raises its own ``KeyboardInterrupt`` in its place, so the watch's flag, not this class, says why)."""


def lost_line(address: str, timeout: float, key: str = "parallel.address") -> str:
    """The one line: ``key`` is the setting that gave ``address``."""
    where = redact(address)
    return (f"{key}={where}: no answer from the ray head for {timeout:g} s (parallel.timeout); "
            f"start it (ray start --head) or point {key} at a running ray cluster")


def head_of(address: str | None) -> tuple[str, int] | None:
    """The host and port a ray ``address`` names (``host:port``, ``ray://host:port``); None for ``auto``, none
    given, or one without a port (ray then finds the head itself: :func:`_live_head`)."""
    if not address or address == "auto":
        return None
    parts = urlsplit(address if "://" in address else f"//{address}")
    try:
        port = parts.port
    except ValueError:  # not a number: ray refuses it itself
        return None
    if parts.hostname is None or port is None:
        return None
    return parts.hostname, port


def _live_head() -> tuple[str, int] | None:
    """The head of the ray this process joined, once it has (``auto``); None before, or without ray."""
    ray = sys.modules.get("ray")  # never imported here: the run imports it when it joins
    if ray is None or not ray.is_initialized():
        return None
    try:
        return head_of(ray.get_runtime_context().gcs_address)
    except Exception:  # ray client mode, or ray shutting down: nothing to read
        return None


def give_up(line: str) -> None:
    """The run could not unwind: its main thread waits in a call of ray's to the head (ray asks the head for
    the cluster's resources when a fit starts its pool, and retries for ``RAY_gcs_rpc_server_reconnect_timeout_s``),
    which no signal interrupts. The one line all the same, the children stopped, exit 2 at once; the run is left
    RUNNING, and the next run of its identity marks it KILLED (its process is gone)."""
    from svmrepro.signals import stop_children

    print(f"svmrepro-run: error: {line}", file=sys.stderr, flush=True)
    stop_children()
    os._exit(2)


def answers(head: tuple[str, int], timeout: float = 2.0) -> bool:
    """Whether something accepts a TCP connection at ``head`` within ``timeout`` seconds."""
    try:
        with socket.create_connection(head, timeout=timeout):
            return True
    except OSError:
        return False


def _stays_silent(address: str, timeout: float, probe: Callable[[tuple[str, int]], bool],
                  since: float | None) -> bool:
    """Whether the head at ``address`` gives no answer until ``timeout`` seconds after ``since`` (when the watch
    first had none; now if it had answers), probed as the watch probes it; False at its first answer."""
    while True:
        head = head_of(address) or _live_head()
        if head is None or probe(head):
            return False
        now = time.monotonic()
        since = now if since is None else since
        if now - since >= timeout:
            return True
        time.sleep(min(PROBE_EVERY_S, timeout - (now - since)))


@contextmanager
def watching(backend: str, address: str | None, timeout: float, key: str = "parallel.address",
             probe: Callable[[tuple[str, int]], bool] = answers) -> Iterator[None]:
    """Watch the ray head at ``address`` (the value of setting ``key``) for the block: nothing to watch for other
    backends, a ray this process starts itself, or a block outside the main thread, where no signal is handled.

    A head with no answer for ``timeout`` seconds stops the main thread; the block then raises
    :class:`ClusterLost`. So does an error of ray's own that the lost head raised in the block before the watch's
    verdict (``LocalRayletDiedError`` where the head ran the driver's raylet too): the head is then probed on until
    it has had no answer for ``timeout`` seconds (:class:`ClusterLost`) or answers (the error as it was). A Ctrl-C or
    SIGTERM meanwhile is untouched.
    """
    if backend != "ray" or address is None or threading.current_thread() is not threading.main_thread():
        yield
        return
    previous, main = signal.getsignal(signal.SIGINT), threading.get_ident()
    lost, stop, ended = threading.Event(), threading.Event(), threading.Event()
    silence = {"since": None}  # when the head last stopped answering the watch, if it has

    def on_sigint(signum, frame):
        if lost.is_set():
            if ended.is_set():  # the watch's interrupt, come as the block had ended: nothing left to stop
                return None
            raise _Lost()
        if callable(previous):
            return previous(signum, frame)
        raise KeyboardInterrupt

    def watch():
        while not stop.wait(PROBE_EVERY_S):
            head = head_of(address) or _live_head()
            if head is None or probe(head):
                silence["since"] = None
            elif silence["since"] is None:
                silence["since"] = time.monotonic()
            elif time.monotonic() - silence["since"] >= timeout:
                lost.set()
                # a signal, not _thread.interrupt_main's flag alone: a main thread blocked in a wait (a lock,
                # a socket) wakes only for one delivered to it
                signal.pthread_kill(main, signal.SIGINT)
                if not stop.wait(UNWIND_S):  # held in ray's C++ call to the head, which no signal interrupts
                    give_up(lost_line(address, timeout, key))
                return

    reconnect = os.environ.get(RAY_RECONNECT_ENV)
    if reconnect is None:  # ray's own wait longer than ours, so the watch ends the run, not ray's fatal log
        os.environ[RAY_RECONNECT_ENV] = str(int(timeout) + 60)
    signal.signal(signal.SIGINT, on_sigint)
    watcher = threading.Thread(target=watch, name="svmrepro-ray-head", daemon=True)
    watcher.start()
    try:
        yield
    except KeyboardInterrupt:
        if lost.is_set():
            raise ClusterLost(lost_line(address, timeout, key)) from None
        raise
    except Exception:
        ended.set()
        stop.set()
        watcher.join()  # the watch ended: no interrupt of its own comes while the head is probed here
        if lost.is_set() or _stays_silent(address, timeout, probe, silence["since"]):
            raise ClusterLost(lost_line(address, timeout, key)) from None
        raise
    finally:
        ended.set()
        stop.set()
        watcher.join()  # an interrupt the watch made just before is handled here, by on_sigint
        if signal.getsignal(signal.SIGINT) is on_sigint:  # not when a stop set its own (svmrepro.signals: one stop)
            signal.signal(signal.SIGINT, previous)
        if reconnect is None:
            os.environ.pop(RAY_RECONNECT_ENV, None)
