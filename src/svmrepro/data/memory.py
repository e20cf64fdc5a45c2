"""The memory this process may really use: the smallest of the machine's memory, its cgroup's limit and
the address space its ``ulimit -v`` leaves.

The machine's memory (``sysconf``) is not what a process in a container, a SLURM job or a systemd unit may
take: its cgroup has a limit of its own (v2: ``memory.max``; v1: ``memory/memory.limit_in_bytes``), set on
its cgroup or on one above it. A process started under ``ulimit -v`` (RLIMIT_AS) may map only that much
address space, of which what it has mapped already (the interpreter, numpy, scikit-learn, MLflow: a GiB or
more) is used up. A generated data set is checked against the smallest (:func:`svmrepro.data.base.check_memory`),
so a size that cannot fit is one line before its arrays are drawn, not a MemoryError after.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

import psutil

try:
    import resource
except ImportError:  # no RLIMIT_AS to read (svmrepro itself runs on POSIX only)
    resource = None

PROC_CGROUP = Path("/proc/self/cgroup")
PROC_MOUNTINFO = Path("/proc/self/mountinfo")
#: the file of a cgroup's hard memory limit, by the version of its hierarchy's file system
LIMIT_FILES = {"cgroup2": "memory.max", "cgroup": "memory.limit_in_bytes"}
GIB = 2**30


@dataclass(frozen=True)
class MemoryLimit:
    """Bytes this process may use, and what they are, in the words of a refusal line."""

    bytes: int
    what: str


def physical_memory() -> int | None:
    """Bytes of memory of this machine; None where ``sysconf`` cannot tell."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (AttributeError, ValueError, OSError):
        return None


def _unescaped(field: str) -> str:
    """A path of ``/proc/self/mountinfo``, where a space, tab, newline or backslash is written in octal."""
    return re.sub(r"\\([0-7]{3})", lambda match: chr(int(match.group(1), 8)), field)


def _memory_mounts(mountinfo: Path) -> list[tuple[str, str, Path]]:
    """(file system, root inside the hierarchy, mount point) of each mounted cgroup hierarchy with the memory
    controller: the v2 one (``cgroup2``, every controller) and a v1 ``memory`` one."""
    found = []
    for line in mountinfo.read_text().splitlines():
        fields = line.split()
        if "-" not in fields:
            continue
        rest = fields[fields.index("-") + 1:]
        if len(fields) < 5 or len(rest) < 3:
            continue
        kind, options = rest[0], rest[2].split(",")
        if kind == "cgroup2" or (kind == "cgroup" and "memory" in options):
            found.append((kind, _unescaped(fields[3]), Path(_unescaped(fields[4]))))
    return found


def _own_cgroups(cgroup: Path) -> dict[str, str]:
    """This process's cgroup path in each hierarchy with memory: ``cgroup2`` (the ``0::`` line) and ``cgroup``
    (the v1 line listing the ``memory`` controller)."""
    found = {}
    for line in cgroup.read_text().splitlines():
        number, controllers, path = (line.split(":", 2) + ["", ""])[:3]
        if number == "0" and controllers == "":
            found["cgroup2"] = path
        elif "memory" in controllers.split(","):
            found["cgroup"] = path
    return found


def _limit(path: Path) -> int | None:
    """The number in a limit file; None for none (v2's ``max``) or a file that cannot be read."""
    try:
        text = path.read_text().strip()
    except OSError:
        return None
    return int(text) if text.isdigit() else None


def cgroup_memory_limit(cgroup: Path = PROC_CGROUP, mountinfo: Path = PROC_MOUNTINFO) -> tuple[int, Path] | None:
    """The smallest hard memory limit of this process's cgroups and every cgroup above them, v2 and v1, with
    the file it is read from; None without one (a limit of v1's "no limit", near 2**63, is larger than
    any machine's memory, so it never comes out smallest). ``cgroup`` and ``mountinfo`` are read as
    ``/proc/self/cgroup`` and ``/proc/self/mountinfo`` are."""
    try:
        own, mounts = _own_cgroups(cgroup), _memory_mounts(mountinfo)
    except OSError:  # no /proc: not Linux
        return None
    limits = []
    for kind, root, mount in mounts:
        path = own.get(kind)
        if path is None:
            continue
        # the cgroup's folder below the mount point; outside the mounted part (no cgroup namespace in a
        # container), the mount point is as far as this process sees
        inside = Path(path).relative_to(root) if Path(path).is_relative_to(root) else Path()
        for depth in range(len(inside.parts), -1, -1):
            limit_file = mount.joinpath(*inside.parts[:depth], LIMIT_FILES[kind])
            value = _limit(limit_file)
            if value is not None:
                limits.append((value, limit_file))
    return min(limits, default=None)


def address_space_left() -> tuple[int, int] | None:
    """(bytes of address space this process may still map, its RLIMIT_AS); None without a limit."""
    if resource is None or not hasattr(resource, "RLIMIT_AS"):
        return None
    soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    if soft == resource.RLIM_INFINITY:
        return None
    return max(soft - psutil.Process().memory_info().vms, 0), soft


def memory_limit(cgroup: Path = PROC_CGROUP, mountinfo: Path = PROC_MOUNTINFO) -> MemoryLimit | None:
    """The smallest of this machine's memory, its cgroup's limit (:func:`cgroup_memory_limit`, read from
    ``cgroup`` and ``mountinfo``) and the address space its RLIMIT_AS leaves; None when none is known."""
    found = []
    if (machine := physical_memory()) is not None:
        found.append(MemoryLimit(machine, f"this machine's {machine / GIB:.1f} GiB of memory"))
    if (limited := cgroup_memory_limit(cgroup, mountinfo)) is not None:
        value, path = limited
        found.append(MemoryLimit(value, f"the {value / GIB:.1f} GiB memory limit of this process's cgroup ({path})"))
    if (left := address_space_left()) is not None:
        room, soft = left
        found.append(MemoryLimit(room, f"the {room / GIB:.1f} GiB of address space left under this process's "
                                       f"{soft / GIB:.1f} GiB limit (ulimit -v, RLIMIT_AS)"))
    return min(found, key=lambda limit: limit.bytes, default=None)
