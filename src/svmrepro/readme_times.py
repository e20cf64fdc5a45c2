"""``make time-readme`` (``python -m svmrepro.readme_times``): time the README's first two commands.

    python -m svmrepro.readme_times                # the quick reproduction, then the tests
    python -m svmrepro.readme_times --only quick   # one of them (quick or tests); the other's row is kept
    python -m svmrepro.readme_times --block-only   # rewrite the README's block from the measurements

Each command, read from the README (:func:`svmrepro.report.readme_times.readme_commands`), runs in the
checkout as a user types it; its wall time and the CPU time of the processes it starts (user and system,
``RUSAGE_CHILDREN``: every descendant that was waited for) are written to
``results/bench/readme_commands.csv`` with the 1-minute load before and after, the machine, the date
and the commit, and the README's block of times is regenerated from that file. Time it on an idle
machine: a measurement started under a load above the cores is flagged as not idle.
"""

from __future__ import annotations

import argparse
import resource
import shlex
import subprocess
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

import pandas as pd
import psutil

from svmrepro.environment import environment_tags, git_source
from svmrepro.errors import SvmReproError
from svmrepro.locations import source_checkout
from svmrepro.report.readme_times import COLUMNS, MEASUREMENTS, NAMES, read_measurements, readme_commands, with_times
from svmrepro.writing import write_file


def children_cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def measure(name: str, command: str, checkout: Path) -> dict:
    """Run ``command`` in ``checkout`` and measure it (one row of the measurements)."""
    load_before, cpu_before, started = psutil.getloadavg()[0], children_cpu_s(), time.perf_counter()
    done = subprocess.run(shlex.split(command), cwd=checkout)
    wall, cpu = time.perf_counter() - started, children_cpu_s() - cpu_before
    if done.returncode:
        raise SvmReproError(f"`{command}` failed (exit code {done.returncode}) in {checkout}: not timed")
    return {"name": name, "command": command, "wall_s": round(wall, 1), "cpu_s": round(cpu, 1),
            "load_1m_before": round(load_before, 2), "load_1m_after": round(psutil.getloadavg()[0], 2),
            "cpu_count": psutil.cpu_count(), "cpu_model": environment_tags()["cpu_model"],
            "date": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"), "commit": git_source().get("commit", "")}


def record(row: dict, path: Path) -> None:
    """Put ``row`` into the measurements in ``path`` in place of the earlier one of its command's name."""
    kept = read_measurements(path)
    table = pd.concat([kept[kept["name"] != row["name"]], pd.DataFrame([row])], ignore_index=True)
    table["order"] = table["name"].map(NAMES.index)
    path.parent.mkdir(parents=True, exist_ok=True)
    table.sort_values("order")[list(COLUMNS)].to_csv(path, index=False)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m svmrepro.readme_times", description=__doc__.splitlines()[0])
    parser.add_argument("--only", choices=NAMES, action="append", help="time this command only (repeatable)")
    parser.add_argument("--block-only", action="store_true", help="time nothing; rewrite the README's block")
    parser.add_argument("--checkout", type=Path, default=source_checkout(),
                        help="the checkout whose README is timed (default: the one the package runs from)")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        if args.checkout is None or not (args.checkout / "README.md").is_file():
            raise SvmReproError(f"--checkout {args.checkout}: expected a checkout with a README.md")
        readme, measurements = args.checkout / "README.md", args.checkout / MEASUREMENTS
        commands = readme_commands(readme)
        with_times(readme, measurements)  # a README without its block fails before anything runs
        try:  # the block shows what is measured, also when a later command fails or is stopped
            for name in [] if args.block_only else args.only or NAMES:
                print(f"timing `{commands[name]}`...", flush=True)
                row = measure(name, commands[name], args.checkout)
                record(row, measurements)
                print(f"`{commands[name]}`: {row['wall_s']} s wall, {row['cpu_s']} s CPU", flush=True)
        finally:
            write_file(readme, with_times(readme, measurements))
    except SvmReproError as exc:
        print(f"svmrepro.readme_times: error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
