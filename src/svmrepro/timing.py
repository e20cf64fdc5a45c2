"""Wall-clock and CPU seconds of one call: how the runner and the self-benchmarks time everything.

CPU time counts this process (all its threads) and its child processes: the loky workers or
local dask workers that fit sub-SVMs when ``n_jobs`` > 1 (psutil reads their CPU times before
and after the call; a worker that ends during the call takes its time with it).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

import psutil

T = TypeVar("T")


def _children_cpu() -> dict[int, float]:
    """CPU seconds (user + system) of each live descendant process, by pid."""
    seconds = {}
    for child in psutil.Process().children(recursive=True):
        try:
            times = child.cpu_times()
        except psutil.Error:  # ended (or became unreadable) since it was listed
            continue
        seconds[child.pid] = times.user + times.system
    return seconds


def cpu_seconds() -> tuple[float, dict[int, float]]:
    """This process's CPU seconds and its descendants' (a reading for :func:`cpu_since`)."""
    return time.process_time(), _children_cpu()


def cpu_since(reading: tuple[float, dict[int, float]]) -> float:
    """CPU seconds of this process and its descendants since ``reading``."""
    own, children = reading
    now = _children_cpu()
    return time.process_time() - own + sum(cpu - children.get(pid, 0.0) for pid, cpu in now.items())


def timed(call: Callable[[], T]) -> tuple[T, float, float]:
    """``call()``, its wall-clock seconds and the CPU seconds of this process and its descendants."""
    wall, cpu = time.perf_counter(), cpu_seconds()
    out = call()
    return out, time.perf_counter() - wall, cpu_since(cpu)
