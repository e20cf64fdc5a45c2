"""The timing protocol: an experiment whose claims are about time runs its jobs alone on the machine.

An experiment says so in its config (``timing: exclusive``). Every run of ours holds a slot of the
machine from before it loads its data until it ends: a timed run holds it exclusively (it waits until
no other run of ours is running and keeps new ones waiting), any other run shares it
(:func:`machine_slot`, a ``flock`` on one file per user, freed by the kernel however the process
ends). ``svmrepro-reproduce`` runs such an experiment's sweep one job at a time.

The lock is the user's own (:func:`lock_path`): another user's untimed runs never wait behind ours,
nor ours behind theirs. Each holder of the slot records who it is beside the lock (:func:`holders`:
user, host, pid, the run's experiment, since when), so a run that waits says for whom. Another
user's load is not held off by the lock; the load rule below catches it.

Every run records the slot it held (``timing``: exclusive or shared), the 1-minute load at its start
(``load_avg_1m``) and end (``load_avg_1m_end``) and whether its timings count (``timing_reliable``:
neither load above the cores + :data:`LOAD_MARGIN`); a claim about time that reads an unreliable run, or
one that shared the machine, is inconclusive (:mod:`svmrepro.report.claims.verdict`), its accuracy and SV
counts still count. A plan may run every experiment shared (``timing: shared`` in
``reproduce/quick.yaml``: quick mode's times are not evidence, so it does not pay for exclusivity).
"""

from __future__ import annotations

import fcntl
import getpass
import json
import logging
import os
import socket
import stat
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from datetime import datetime, timezone
from pathlib import Path

import psutil

from svmrepro.errors import SvmReproError

log = logging.getLogger(__name__)

EXCLUSIVE, SHARED = "exclusive", "shared"
#: the run's tag of the slot it held: ``exclusive`` (alone on the machine) or ``shared``
TIMING_TAG = "timing"
#: the lock file (set it to share one among users or machines' containers, or to isolate tests)
LOCK_ENV = "SVMREPRO_TIMING_LOCK"
#: load above the cores by more than this makes a run's timings unreliable
LOAD_MARGIN = 0.5


def is_exclusive(cfg) -> bool:
    """Whether a composed config (:class:`~svmrepro.settings.RunSettings`) asks for ``timing: exclusive``."""
    return getattr(cfg.timing, "value", cfg.timing) == EXCLUSIVE


def jobs_at_once(cfg, n_jobs: int) -> int:
    """How many jobs of a composed config's sweep ``svmrepro-reproduce`` runs at once with a plan of
    ``n_jobs``: one when it is timed (``timing: exclusive``), else at most its ``sweep_jobs``."""
    limit = 1 if is_exclusive(cfg) else cfg.get("sweep_jobs")
    return min(n_jobs, limit) if limit else n_jobs


def lock_path() -> Path:
    """``$SVMREPRO_TIMING_LOCK``, else the user's own file (the uid in its name) in the user's runtime
    folder (``$XDG_RUNTIME_DIR``) or, without one, in a folder of the temporary folder that only this user
    can write (:func:`private_folder`): another user of a shared ``/tmp`` cannot plant the lock or a holder."""
    if os.environ.get(LOCK_ENV):
        return Path(os.environ[LOCK_ENV])
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    folder = Path(runtime) if runtime else private_folder()
    return folder / f"svmrepro-timing-{os.getuid()}.lock"


def private_folder() -> Path:
    """``<tmp>/svmrepro-<uid>``, created closed to others (0700); one that exists is used only when it is a
    real folder of this user that no one else may write, else one line names it (issue 46, item 5)."""
    folder = Path(tempfile.gettempdir()) / f"svmrepro-{os.getuid()}"
    try:
        folder.mkdir(mode=0o700)
    except FileExistsError:
        pass
    info = os.lstat(folder)
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid() or info.st_mode & 0o022:
        kind = "a folder" if stat.S_ISDIR(info.st_mode) else "not a folder"
        raise SvmReproError(f"{folder}: {kind} of uid {info.st_uid} with mode {stat.S_IMODE(info.st_mode):o}, where "
                            f"svmrepro keeps this user's timing lock (uid {os.getuid()}, writable by no one else "
                            f"expected): remove it, or set XDG_RUNTIME_DIR or {LOCK_ENV}")
    return folder


def holders_dir(path: Path) -> Path:
    """Where the holders of the lock ``path`` record themselves: one JSON file per process."""
    return path.with_name(f"{path.name}.holders")


def holders(path: Path | None = None) -> list[dict]:
    """The records of the processes holding the slot now, oldest first (a record left by a process
    that has ended, killed before it could remove it, is skipped)."""
    folder = holders_dir(path or lock_path())
    found = []
    for record in folder.glob("*.json") if folder.is_dir() else ():
        with suppress(OSError, ValueError):
            holder = json.loads(record.read_text())
            if holder["host"] != socket.gethostname() or psutil.pid_exists(holder["pid"]):
                found.append(holder)
    return sorted(found, key=lambda holder: holder["since"])


def holder_text(holder: dict) -> str:
    """A holder record in words; each field shown as text of at most 80 printable characters, never raw."""
    shown = {key: _shown(holder.get(key)) for key in ("timing", "user", "experiment", "pid", "host", "since")}
    return (f"{shown['timing']} run of {shown['user']} ({shown['experiment'] or 'a run'}, pid {shown['pid']} "
            f"on {shown['host']}) since {shown['since']}")


def _shown(value) -> str:
    text = "" if value is None else str(value)
    text = "".join(c if c.isprintable() else "?" for c in text)
    return text if len(text) <= 80 else text[:77] + "..."


def waiting_line(timing: str, path: Path) -> str:
    """One line: what a run waits for, whose runs hold the slot and since when."""
    waited = "every other svmrepro run to end" if timing == EXCLUSIVE else "a timed run to end"
    blocking = [h for h in holders(path) if timing == EXCLUSIVE or h["timing"] == EXCLUSIVE]
    if not blocking:
        return f"waiting for {waited} ({path})"
    more = f" and {len(blocking) - 1} more" if len(blocking) > 1 else ""
    return f"waiting for {waited}: the {holder_text(blocking[0])}{more} ({path})"


@contextmanager
def recorded(path: Path, timing: str, experiment: str) -> Iterator[None]:
    """This process's record beside the lock while it holds the slot (a record that cannot be
    written only leaves waiting runs without a name to print)."""
    record = holders_dir(path) / f"{socket.gethostname()}-{os.getpid()}.json"
    holder = {"user": getpass.getuser(), "host": socket.gethostname(), "pid": os.getpid(), "timing": timing,
              "experiment": experiment, "since": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")}
    try:
        record.parent.mkdir(parents=True, exist_ok=True)
        record.write_text(json.dumps(holder))
    except OSError as exc:
        log.debug("the timing lock's holder was not recorded: %s", exc)
    try:
        yield
    finally:
        record.unlink(missing_ok=True)


@contextmanager
def machine_slot(timing: str, experiment: str = "") -> Iterator[None]:
    """Hold the machine for one run of ``experiment``: exclusively when ``timing`` is :data:`EXCLUSIVE`, else shared."""
    path = lock_path()
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
    flag = fcntl.LOCK_EX if timing == EXCLUSIVE else fcntl.LOCK_SH
    try:
        try:
            fcntl.flock(fd, flag | fcntl.LOCK_NB)
        except BlockingIOError:
            log.info("%s", waiting_line(timing, path))
            fcntl.flock(fd, flag)
        with recorded(path, timing, experiment):
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
