"""Failed jobs of a sweep, each recorded by a Hydra callback in the process that ran it.

The svmrepro sweeper starts ``<sweep dir>/failures.jsonl`` (:func:`start`); :class:`RecordFailures`,
listed in ``hydra.callbacks``, appends one line per failed job when the job ends
(``Callback.on_job_end``, in the joblib worker that ran it), so the reasons are kept even if the
sweep itself is killed, and the sweeper prints them once the sweep is over (:func:`read`). A failed
job the callback did not record (a config without it) the sweeper records from the error the
launcher returned (:func:`returned_line`); a job that never started it records itself
(:func:`record`). The error is read through ``JobReturn``'s public ``return_value``, which
re-raises it, not through the private field that holds it. Under any other sweeper (no file) the
callback does nothing.

A job that fails because the file system refused a write (:func:`svmrepro.errors.storage_failure`)
stops the sweep (:func:`stop`): the jobs not started yet end at once, and the sweeper ends it with one
line naming the cause and the path.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from hydra.core.utils import JobReturn, JobStatus, filter_overrides
from hydra.experimental.callback import Callback
from omegaconf import DictConfig

from svmrepro.sweep import progress
from svmrepro.errors import error_line
from svmrepro.redact import redact
from svmrepro.writing import write_file

FILE = "failures.jsonl"
#: made empty in the sweep's folder when a job's write was refused: the rest of the sweep does not start
STOPPED = "stopped"


def failure_line(num: int | str, overrides: Sequence[str], reason: str) -> str:
    """``#<job> <overrides>: <reason>``, any password in a URI redacted."""
    return redact(f"#{num} {' '.join(filter_overrides(list(overrides)))}: {reason}")


def job_error(job_return: JobReturn) -> BaseException:
    """The exception a failed job raised, as ``return_value`` re-raises it.

    ``return_value`` also writes "Error executing job with overrides" to stderr: the sweeper lists
    the failure at the end instead, so that line is dropped.
    """
    try:
        with contextlib.redirect_stderr(io.StringIO()):
            _ = job_return.return_value  # re-raises the job's exception
    except Exception as error:  # the job's own exception
        return error
    raise ValueError(f"job {job_return.overrides} did not fail")


def returned_line(job_return: JobReturn) -> str:
    """A failed job's line from the error its ``JobReturn`` carries back to the sweeper."""
    return failure_line(job_return.hydra_cfg.hydra.job.num, job_return.overrides or [],
                        error_line(job_error(job_return)))


def start(sweep_dir: str | Path) -> None:
    write_file(Path(sweep_dir) / FILE, "", root=sweep_dir)
    (Path(sweep_dir) / STOPPED).unlink(missing_ok=True)


def stop(sweep_dir: str | Path) -> None:
    """Stop the sweep: each job not started yet ends at once (:func:`stopped`). An empty file, which a full
    disk still takes (no data block); never through a symlink."""
    with contextlib.suppress(OSError):
        os.close(os.open(Path(sweep_dir) / STOPPED, os.O_CREAT | os.O_WRONLY | os.O_NOFOLLOW, 0o644))


def stopped(sweep_dir: str | Path) -> bool:
    """Whether a job of the sweep stopped it (:func:`stop`)."""
    return (Path(sweep_dir) / STOPPED).exists()


def record(sweep_dir: str | Path, num: int, line: str) -> None:
    """Append job ``num``'s failure line to the sweep's file."""
    progress.append(Path(sweep_dir) / FILE, json.dumps({"job": num, "line": line}))


def read(sweep_dir: str | Path) -> dict[int, str]:
    """Each failed job's line (:func:`failure_line`), by job number."""
    lines = (Path(sweep_dir) / FILE).read_text().splitlines()
    return {event["job"]: event["line"] for event in map(json.loads, filter(str.strip, lines))}


class RecordFailures(Callback):
    """Hydra callback: append a failed job's line to its sweep's ``failures.jsonl``."""

    def on_job_end(self, config: DictConfig, job_return: JobReturn, **kwargs: Any) -> None:
        if job_return.status != JobStatus.FAILED or job_return.hydra_cfg is None:
            return
        # the sweep's folder from ``config``, which holds the values the sweep resolved (Hydra copies
        # its resolver cache into each job's config): ``job_return.hydra_cfg`` resolves the default
        # ``${now:...}`` anew, to the folder of the second the job ended in
        sweep_dir = Path(config.hydra.sweep.dir)
        if not (sweep_dir / FILE).is_file():  # a single run, or a sweep of another sweeper
            return
        record(sweep_dir, job_return.hydra_cfg.hydra.job.num, returned_line(job_return))
