"""The memory a process really has (issue 46, item 12): the smallest of the machine's memory, its cgroup's
limit (v2 and v1, its own cgroup's or one above) and the address space its RLIMIT_AS leaves, read from
fake ``/proc/self/cgroup`` and ``/proc/self/mountinfo`` files given as the functions' parameters."""

from pathlib import Path

import pytest

from svmrepro.data import base
from svmrepro.data.base import check_memory
from svmrepro.data.memory import cgroup_memory_limit, memory_limit, physical_memory

GIB = 2**30
#: v1's "no limit": the largest multiple of the page size below 2**63
V1_UNLIMITED = 9223372036854771712


def _cgroups(tmp_path: Path, own: str, mounts: list[str], limits: dict[str, str]) -> tuple[Path, Path]:
    """A fake ``/proc/self/cgroup`` (``own``), ``/proc/self/mountinfo`` (``mounts``, ``{tmp}`` the test's
    folder) and limit files (path below the test's folder -> content); the two files' paths."""
    for relative, text in limits.items():
        path = tmp_path / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    cgroup, mountinfo = tmp_path / "cgroup", tmp_path / "mountinfo"
    cgroup.write_text(own)
    mountinfo.write_text("".join(line.format(tmp=str(tmp_path).replace(" ", "\\040")) + "\n" for line in mounts))
    return cgroup, mountinfo


V2_MOUNT = "41 31 0:38 / {tmp}/cg rw,nosuid,nodev,noexec,relatime shared:9 - cgroup2 cgroup2 rw,nsdelegate"
V1_MOUNT = "35 31 0:32 / {tmp}/memory rw,nosuid,nodev,noexec,relatime shared:14 - cgroup cgroup rw,memory"
V1_CPU = "32 31 0:29 / {tmp}/cpu rw,relatime shared:11 - cgroup cgroup rw,cpu,cpuacct"


def test_a_cgroup_v2_limit_is_read_from_memory_max_of_the_process_cgroup(tmp_path):
    files = _cgroups(tmp_path, "0::/user.slice/job_42\n", [V2_MOUNT],
                     {"cg/user.slice/job_42/memory.max": "2147483648\n", "cg/user.slice/memory.max": "max\n"})
    assert cgroup_memory_limit(*files) == (2 * GIB, tmp_path / "cg/user.slice/job_42/memory.max")


def test_a_cgroup_v1_limit_of_a_cgroup_above_counts_too(tmp_path):
    """SLURM puts the limit on the job; its step's cgroup, below it, says no limit."""
    files = _cgroups(tmp_path, "12:cpu,cpuacct:/slurm/job_7/step_0\n4:memory:/slurm/job_7/step_0\n0::/\n",
                     [V1_CPU, V1_MOUNT],
                     {"memory/slurm/job_7/step_0/memory.limit_in_bytes": f"{V1_UNLIMITED}\n",
                      "memory/slurm/job_7/memory.limit_in_bytes": f"{GIB}\n",
                      "memory/memory.limit_in_bytes": f"{V1_UNLIMITED}\n"})
    assert cgroup_memory_limit(*files) == (GIB, tmp_path / "memory/slurm/job_7/memory.limit_in_bytes")


def test_of_both_hierarchies_the_smaller_limit_counts(tmp_path):
    files = _cgroups(tmp_path, "4:memory:/a\n0::/b\n", [V1_MOUNT, V2_MOUNT],
                     {"memory/a/memory.limit_in_bytes": f"{3 * GIB}\n", "cg/b/memory.max": f"{5 * GIB}\n"})
    assert cgroup_memory_limit(*files) == (3 * GIB, tmp_path / "memory/a/memory.limit_in_bytes")


def test_a_container_sees_its_own_cgroup_at_the_mount_point(tmp_path):
    """Without a cgroup namespace the process's path is the host's; the mount's root is that same path."""
    mount = "35 31 0:32 /docker/abc {tmp}/memory rw,relatime - cgroup cgroup rw,memory"
    files = _cgroups(tmp_path / "with space", "4:memory:/docker/abc\n", [mount],
                     {"memory/memory.limit_in_bytes": f"{GIB}\n"})
    assert cgroup_memory_limit(*files) == (GIB, tmp_path / "with space/memory/memory.limit_in_bytes")


def test_no_limit_no_cgroup_and_no_proc_are_none(tmp_path):
    unlimited = _cgroups(tmp_path, "0::/x\n", [V2_MOUNT], {"cg/x/memory.max": "max\n"})
    assert cgroup_memory_limit(*unlimited) is None
    assert cgroup_memory_limit(tmp_path / "absent", tmp_path / "absent too") is None


def test_the_smallest_limit_is_the_one_a_generated_data_set_must_fit(tmp_path, monkeypatch):
    files = _cgroups(tmp_path, "0::/job\n", [V2_MOUNT], {"cg/job/memory.max": f"{GIB}\n"})
    limit = memory_limit(*files)
    assert physical_memory() > GIB  # else this machine's memory would be the smallest
    assert limit.bytes == GIB
    assert limit.what == f"the 1.0 GiB memory limit of this process's cgroup ({tmp_path / 'cg/job/memory.max'})"
    monkeypatch.setattr(base, "memory_limit", lambda: limit)
    rows = GIB // 2 // (8 * 11)
    with pytest.raises(base.ConfigError, match=rf"dataset\.n_train={rows} is invalid: expected at most "
                                               rf"{rows - 10} with n_test=10: gaussian_clouds fits {rows} rows of 11 "
                                               r"values in half of the 1\.0 GiB memory limit of this process's cgroup"):
        check_memory("gaussian_clouds", {"n_train": rows, "n_test": 10}, 11)
