"""The timing protocol: an experiment whose claims are about time runs its jobs alone on the machine.

An experiment says so in its config (``timing: exclusive``). Every run of ours holds a slot of the
machine from before it loads its data until it ends: a timed run holds it exclusively (it waits until
no other run of ours is running and keeps new ones waiting), any other run shares it
(:func:`machine_slot`, a ``flock`` on one file per machine, freed by the kernel however the process
ends). ``svmrepro-reproduce`` runs such an experiment's sweep one job at a time.

Every run records the 1-minute load at its start (``load_avg_1m``) and end (``load_avg_1m_end``) and
whether its timings count (``timing_reliable``: neither load above the cores + :data:`LOAD_MARGIN`);
a claim about time that reads an unreliable run is inconclusive
(:mod:`svmrepro.report.claims.verdict`), its accuracy and SV counts still count.
"""

from __future__ import annotations

import fcntl
import logging
import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

log = logging.getLogger(__name__)

EXCLUSIVE, SHARED = "exclusive", "shared"
#: the machine-wide lock file (set it to share one among machines' containers, or to isolate tests)
LOCK_ENV = "SVMREPRO_TIMING_LOCK"
#: load above the cores by more than this makes a run's timings unreliable
LOAD_MARGIN = 0.5


def is_exclusive(cfg) -> bool:
    """Whether a composed config (:class:`~svmrepro.settings.RunSettings`) asks for ``timing: exclusive``."""
    return getattr(cfg.timing, "value", cfg.timing) == EXCLUSIVE


def lock_path() -> Path:
    return Path(os.environ.get(LOCK_ENV) or Path(tempfile.gettempdir()) / "svmrepro-timing.lock")


@contextmanager
def machine_slot(timing: str) -> Iterator[None]:
    """Hold the machine for one run: exclusively when ``timing`` is :data:`EXCLUSIVE`, else shared."""
    path = lock_path()
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
    flag = fcntl.LOCK_EX if timing == EXCLUSIVE else fcntl.LOCK_SH
    try:
        try:
            fcntl.flock(fd, flag | fcntl.LOCK_NB)
        except BlockingIOError:
            waited = "every other svmrepro run to end" if timing == EXCLUSIVE else "a timed run to end"
            log.info("waiting for %s (%s)", waited, path)
            fcntl.flock(fd, flag)
        yield
    finally:
        os.close(fd)


def load_1m() -> float:
    return os.getloadavg()[0]


def timing_tags(load_start: float, load_end: float, cores: int | None = None) -> dict[str, str]:
    """The tags a run gets when it ends: the load then, and whether its timings count."""
    cores = cores or os.cpu_count() or 1
    reliable = max(load_start, load_end) <= cores + LOAD_MARGIN
    return {"load_avg_1m_end": f"{load_end:.2f}", "timing_reliable": str(reliable).lower()}
