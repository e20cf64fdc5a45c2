"""Progress of a sweep as its jobs end, also when they run in joblib worker processes.

The sweeper sees a batch's results only once the whole batch has ended, so the jobs report
themselves: the sweeper starts ``<sweep dir>/progress.jsonl`` with the number of jobs and of
workers (:func:`start`), each job appends one line when it ends and gets back a progress line
computed from the whole file (:func:`record`, called by ``svmrepro.app``). One short write to a
file opened with ``O_APPEND`` is atomic on a local file system, so workers need no lock. The
status each job recorded is also how the sweeper tells a skipped job from one that ran
(:func:`statuses`): a job's return value is its validation error, for optimizing sweepers.
"""

from __future__ import annotations

import json
import os
import time
from svmrepro.writing import write_file
from collections import Counter
from datetime import timedelta
from pathlib import Path

FILE = "progress.jsonl"
DONE, SKIPPED, FAILED = "done", "skipped", "failed"
#: set (to 1) by ``svmrepro-run --quiet``: no progress line per job
QUIET_ENV = "SVMREPRO_QUIET"


def quiet() -> bool:
    return os.environ.get(QUIET_ENV, "") not in ("", "0")


def start(sweep_dir: str | Path, total: int, workers: int) -> None:
    """A new progress file for ``total`` jobs run ``workers`` at a time (a re-run starts afresh)."""
    header = {"total": total, "workers": workers, "start": time.time()}
    write_file(Path(sweep_dir) / FILE, json.dumps(header) + "\n", root=sweep_dir)


def clock(seconds: float) -> str:
    return str(timedelta(seconds=round(seconds)))


def counts_text(counts: Counter) -> str:
    return ", ".join(f"{counts[status]} {status}" for status in (DONE, SKIPPED, FAILED))


def describe(lines: list[str], now: float | None = None) -> str:
    """One line: jobs ended by status, jobs remaining, time elapsed and an estimate of the time left.

    The estimate assumes the remaining jobs run (none skipped) and take the mean time of the jobs
    that ran so far, ``workers`` at a time; there is none before a first job has run.
    """
    header, events = json.loads(lines[0]), [json.loads(line) for line in lines[1:] if line.strip()]
    counts = Counter(event["status"] for event in events)
    remaining = max(header["total"] - len(events), 0)
    ran = [event["seconds"] for event in events if event["status"] != SKIPPED]
    elapsed = (now or time.time()) - header["start"]
    if not remaining:
        left = "none left"
    elif ran:
        left = f"about {clock(remaining * sum(ran) / len(ran) / min(header['workers'], remaining))} left"
    else:
        left = "time left unknown until a job has run"
    return (
        f"progress: {len(events)}/{header['total']} jobs ended ({counts_text(counts)}, {remaining} remaining), "
        f"elapsed {clock(elapsed)}, {left}"
    )


def append(path: Path, line: str) -> None:
    """Append one line with a single write to a file opened with ``O_APPEND`` (atomic, no lock)."""
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_NOFOLLOW)
    try:
        os.write(fd, (line + "\n").encode())
    finally:
        os.close(fd)


def record(sweep_dir: str | Path, job: int, status: str, seconds: float) -> str | None:
    """Append job ``job``'s end to the sweep's progress file; the progress line after it.

    None when the sweep has no progress file (a sweep not run by the svmrepro sweeper).
    """
    path = Path(sweep_dir) / FILE
    if not path.is_file():
        return None
    append(path, json.dumps({"job": job, "status": status, "seconds": round(seconds, 3)}))
    return describe(path.read_text().splitlines())


def counts(sweep_dir: str | Path) -> tuple[int, Counter] | None:
    """The sweep's number of jobs and how many ended with each status so far; None without a
    progress file (a sweep not run by the svmrepro sweeper)."""
    path = Path(sweep_dir) / FILE
    if not path.is_file():
        return None
    return json.loads(path.read_text().splitlines()[0])["total"], Counter(statuses(sweep_dir).values())


def statuses(sweep_dir: str | Path) -> dict[int, str]:
    """The status each job recorded (``done``, ``skipped``, ``failed``), by job number."""
    lines = (Path(sweep_dir) / FILE).read_text().splitlines()[1:]
    return {event["job"]: event["status"] for event in map(json.loads, filter(str.strip, lines))}
