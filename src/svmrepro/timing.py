"""Wall-clock and CPU seconds of one call: how the runner and the self-benchmarks time everything."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def timed(call: Callable[[], T]) -> tuple[T, float, float]:
    """``call()``, its wall-clock seconds and this process's CPU seconds (all threads)."""
    wall, cpu = time.perf_counter(), time.process_time()
    out = call()
    return out, time.perf_counter() - wall, time.process_time() - cpu
