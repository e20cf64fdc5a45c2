"""The README's block of its two first commands' times, generated from their measurements
(``results/bench/readme_commands.csv``, :mod:`svmrepro.readme_times` makes them); never edited.

The commands are read from the README itself (the first two lines of its first ``bash`` block), so
the times shown are of the commands shown: a measurement of another command (the README changed
since) is not shown, it reads "not measured yet", as does every command when nothing is measured.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pandas as pd

from svmrepro.errors import SvmReproError
from svmrepro.sweep.progress import clock

#: the names of the README's first two commands, in their order (``--only quick``)
NAMES = ("quick", "tests")
#: what encloses the generated block in the README
START, END = "<!-- readme-times -->", "<!-- /readme-times -->"
#: the measurements, below the checkout
MEASUREMENTS = Path("results") / "bench" / "readme_commands.csv"
COLUMNS = ("name", "command", "wall_s", "cpu_s", "load_1m_before", "load_1m_after", "cpu_count", "cpu_model",
           "date", "commit")
FIRST_BLOCK = re.compile(r"```bash\n(.*?)```", re.S)


def readme_commands(readme: Path) -> dict[str, str]:
    """``{name: command}`` of the README's first two commands (:data:`NAMES`), comments left out."""
    block = FIRST_BLOCK.search(readme.read_text())
    lines = [shlex.join(words) for line in (block.group(1).splitlines() if block else [])
             if (words := shlex.split(line, comments=True))]
    if len(lines) < len(NAMES):
        raise SvmReproError(f"{readme}: expected its first ```bash block to hold {len(NAMES)} commands "
                            f"(the quick reproduction, the tests), found {len(lines)}")
    return dict(zip(NAMES, lines))


def read_measurements(path: Path) -> pd.DataFrame:
    """The measurements in ``path``; none when it does not exist (nothing measured yet)."""
    if not path.is_file():
        return pd.DataFrame(columns=COLUMNS)
    found = pd.read_csv(path, dtype={"commit": str, "date": str})
    missing = [c for c in COLUMNS if c not in found]
    if missing:
        raise SvmReproError(f"{path}: expected the columns {', '.join(COLUMNS)}; missing {', '.join(missing)}")
    return found


def idle_note(row: pd.Series) -> str:
    """Why a measurement is not of an idle machine: the load when it started above the cores. The
    load after is the command's own (a reproduction keeps the cores busy), so it is shown, not judged."""
    if row["load_1m_before"] > row["cpu_count"]:
        return f" (not idle: 1-minute load {row['load_1m_before']:.2f} above {row['cpu_count']} cores)"
    return ""


def times_block(commands: dict[str, str], measured: pd.DataFrame) -> str:
    """The block between :data:`START` and :data:`END`: one row per command, its latest measurement."""
    lines = [START, "",
             "Measured in this checkout with `.venv` already installed, by `make time-readme` "
             f"(`{MEASUREMENTS.as_posix()}`; `ONLY=quick` or `ONLY=tests` times one):", "",
             "| command | wall | CPU (its processes) | machine | 1-minute load before / after | date, commit |",
             "|---|---|---|---|---|---|"]
    by_command = measured.drop_duplicates("command", keep="last").set_index("command")
    for command in commands.values():
        if command not in by_command.index:
            lines.append(f"| `{command}` | not measured yet | | | | |")
            continue
        row = by_command.loc[command]
        lines.append(f"| `{command}` | {clock(row['wall_s'])}{idle_note(row)} | {clock(row['cpu_s'])} | "
                     f"{row['cpu_model']} ({row['cpu_count']} cores) | "
                     f"{row['load_1m_before']:.2f} / {row['load_1m_after']:.2f} | {row['date'][:10]}, {row['commit'][:7]} |")
    return "\n".join([*lines, "", END])


def with_times(readme: Path, measurements: Path) -> str:
    """The README's text with its block regenerated from ``measurements``."""
    text = readme.read_text()
    if text.count(START) != 1 or text.count(END) != 1 or text.index(START) > text.index(END):
        raise SvmReproError(f"{readme}: expected one {START} line, then one {END} line, around the commands' times")
    before, rest = text.split(START)
    after = rest.split(END)[1]
    return before + times_block(readme_commands(readme), read_measurements(measurements)) + after
