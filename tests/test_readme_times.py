"""README's times of its first two commands: generated from their measurements, measured as run."""

import shlex
import sys
from pathlib import Path

import pandas as pd
import pytest

from svmrepro.readme_times import main as time_readme
from svmrepro.report.readme_times import END, MEASUREMENTS, START, read_measurements, readme_commands, with_times

CHECKOUT = Path(__file__).resolve().parents[1]
README = CHECKOUT / "README.md"
#: a command that spends about 0.3 s of CPU in a child process
BUSY = f"{shlex.quote(sys.executable)} -c 'import time; t = time.process_time(); [0 for _ in iter(lambda: time.process_time() - t > 0.3, True)]'"


def test_the_readme_block_is_what_the_committed_measurements_make():
    assert README.read_text() == with_times(README, CHECKOUT / MEASUREMENTS), "regenerate it: make time-readme"


def test_the_measured_commands_are_the_readmes_first_two():
    commands = readme_commands(README)
    assert commands == {"quick": "make reproduce", "tests": "make test"}
    for row in read_measurements(CHECKOUT / MEASUREMENTS).itertuples():
        assert row.command == commands[row.name]


def checkout(folder: Path, first: str = BUSY, second: str = "true") -> Path:
    (folder / "README.md").write_text(f"# t\n\n```bash\n{first}   # the quick one\n\n{second}  # tests\n```\n\n"
                                      f"{START}\nhand-written\n{END}\n\nmore\n")
    return folder / "README.md"


def test_nothing_measured_reads_not_measured_yet(tmp_path):
    text = with_times(checkout(tmp_path), tmp_path / MEASUREMENTS)
    assert text.count("| not measured yet |") == 2 and "hand-written" not in text
    assert text.startswith("# t\n") and text.endswith(f"{END}\n\nmore\n")


def test_a_measurement_shows_its_times_and_whether_the_machine_was_idle(tmp_path):
    readme = checkout(tmp_path, "make reproduce", "make test")
    row = {"command": "make reproduce", "wall_s": 575.0, "cpu_s": 1008.4, "load_1m_after": 1.9, "cpu_count": 2,
           "cpu_model": "AMD EPYC", "date": "2026-11-26T18:00:00Z", "commit": "0123456789abcdef"}
    (tmp_path / MEASUREMENTS).parent.mkdir(parents=True)
    pd.DataFrame([{**row, "name": "quick", "load_1m_before": 0.05},
                  {**row, "name": "tests", "command": "make test-old", "load_1m_before": 3.4}]).to_csv(
        tmp_path / MEASUREMENTS, index=False)
    text = with_times(readme, tmp_path / MEASUREMENTS)
    assert "| `make reproduce` | 0:09:35 | 0:16:48 | AMD EPYC (2 cores) | 0.05 / 1.90 | 2026-11-26, 0123456 |" in text
    assert "| `make test` | not measured yet |" in text  # its measurement is of a command the README no longer has

    pd.read_csv(tmp_path / MEASUREMENTS).assign(load_1m_before=3.4).to_csv(tmp_path / MEASUREMENTS, index=False)
    assert "0:09:35 (not idle: 1-minute load 3.40 above 2 cores)" in with_times(readme, tmp_path / MEASUREMENTS)


def test_timing_one_command_measures_its_childrens_cpu_and_keeps_the_others_row(tmp_path):
    checkout(tmp_path)
    assert time_readme(["--checkout", str(tmp_path), "--only", "quick"]) == 0
    quick = read_measurements(tmp_path / MEASUREMENTS).set_index("name").loc["quick"]
    assert quick["command"] == shlex.join(shlex.split(BUSY))
    assert 0.3 <= quick["cpu_s"] <= quick["wall_s"] + 0.2 and quick["cpu_count"] >= 1 and len(quick["commit"]) == 40
    text = (tmp_path / "README.md").read_text()
    assert f"| `{quick['command']}` | 0:00:0" in text and "| `true` | not measured yet |" in text

    assert time_readme(["--checkout", str(tmp_path), "--only", "tests"]) == 0
    measured = read_measurements(tmp_path / MEASUREMENTS)
    assert list(measured["name"]) == ["quick", "tests"] and measured["cpu_s"].iloc[0] == quick["cpu_s"]
    assert "not measured yet" not in (tmp_path / "README.md").read_text()


@pytest.mark.parametrize("readme, expected", [
    ("```bash\nfalse\ntrue\n```\n" + f"{START}\n{END}\n", "`false` failed (exit code 1)"),
    ("```bash\ntrue\ntrue\n```\n", f"expected one {START} line"),
    ("```bash\ntrue\n```\n" + f"{START}\n{END}\n", "expected its first ```bash block to hold 2 commands"),
])
def test_a_failed_command_or_a_readme_without_its_block_is_one_line_and_no_row(tmp_path, capsys, readme, expected):
    (tmp_path / "README.md").write_text(readme)
    assert time_readme(["--checkout", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and expected in err
    assert not (tmp_path / MEASUREMENTS).exists()
