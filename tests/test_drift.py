"""The committed outputs cannot drift from their runs: every committed results/ page, table and figure (the
claims scoreboard and its claims.csv included), and the tutorial's results (docs/tutorial/results/), is rebuilt from
the committed runs CSVs into a temporary copy and must come out byte for byte the same."""

import shutil
import subprocess
from pathlib import Path

import pytest

from svmrepro.locations import CONFIG_DIRS_ENV
from svmrepro.report.figure_keys import drawn_with, libraries
from svmrepro.report.readme_times import MEASUREMENTS
from svmrepro.reproduce import main as reproduce

CHECKOUT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.slow


def committed(pattern: str, folder: str = "results") -> list[str]:
    listed = subprocess.run(["git", "ls-files", "-z", folder], cwd=CHECKOUT, check=True, capture_output=True,
                            text=True).stdout
    return sorted(name for name in listed.split("\0") if name and Path(name).match(pattern))


def drifted(names: list[str], folder: str, rebuilt: Path) -> list[str]:
    """Those of the committed files ``names`` (below ``folder``) the rebuild into ``rebuilt`` left missing or
    different."""
    copies = {name: rebuilt / Path(name).relative_to(folder) for name in names}
    return [name for name, copy in copies.items()
            if not copy.is_file() or copy.read_bytes() != (CHECKOUT / name).read_bytes()]


def copy_inputs(folder: str, rebuilt: Path, inputs: list[str]) -> None:
    for name in inputs:
        copy = rebuilt / Path(name).relative_to(folder)
        copy.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(CHECKOUT / name, copy)


def test_every_committed_output_rebuilds_from_its_runs_csv_unchanged(tmp_path):
    results = tmp_path / "results"
    (tmp_path / "experiments").symlink_to(CHECKOUT / "experiments")  # the bench README links its protocol beside it
    # the runs, the sidecars drawn from, and README's commands' times (measured, not built from runs); and the
    # figures: one whose key says it is drawn from what it would be drawn from now is kept, the others are drawn
    # (svmrepro.report.figure_keys), which spares the rebuild most of its time without changing a page
    copy_inputs("results", results, committed("*.runs.csv") + committed("*.json")
                + committed(MEASUREMENTS.as_posix()) + committed("*.png"))
    assert "results/claims.csv" in committed("*.csv"), "results/claims.csv is not committed beside the scoreboard"
    if committed("confirm/*/*.runs.csv"):  # the confirmatory phase's outputs first: the scoreboard reads them
        assert reproduce(["--from-csv", "--mode", "confirm", "--results-dir", str(results / "confirm")]) == 0
    assert reproduce(["--from-csv", "--mode", "full", "--results-dir", str(results)]) == 0
    pages = drifted(committed("*.md") + committed("*.csv"), "results", results)
    assert not pages, f"{len(pages)} committed outputs differ from a rebuild from their runs: {pages[:10]} " \
                      "(svmrepro-reproduce --from-csv --mode full rebuilds them)"
    # a figure is kept only where its key is current: one drawn again was drawn from other runs or by other code
    # (where matplotlib or Pillow is of another version than the committed figure was drawn with, it is drawn
    # again whatever it shows: those are left out)
    figures = drifted([name for name in committed("*.png") if drawn_with(CHECKOUT / name) == libraries()],
                      "results", results)
    assert not figures, f"{len(figures)} committed figures are not what the code draws from their runs now: " \
                        f"{figures[:10]} (svmrepro-reproduce --from-csv --mode confirm, then --mode full, draws them)"


def test_the_tutorials_results_rebuild_from_their_runs_csv_unchanged(tmp_path, monkeypatch):
    """docs/tutorial/results/ (``make tutorial-results``: the tutorial shows its figure) rebuilt from its runs CSV."""
    folder = "docs/tutorial/results"
    names = committed("*", folder)
    assert f"{folder}/moons/sizes.runs.csv" in names and f"{folder}/moons/sizes.png" in names, names
    results = tmp_path / "results"
    copy_inputs(folder, results, committed("*.runs.csv", folder) + committed("*.png", folder))
    monkeypatch.setenv(CONFIG_DIRS_ENV, "")  # --config-dir sets it for the process; put back afterwards
    monkeypatch.chdir(CHECKOUT)  # as make tutorial-results runs it: the pages name the study's folder from there
    assert reproduce(["--config-dir", "docs/tutorial/study/conf", "--experiment", "moons/sizes", "--from-csv",
                      "--results-dir", str(results)]) == 0
    changed = drifted([name for name in names
                       if not name.endswith(".png") or drawn_with(CHECKOUT / name) == libraries()], folder, results)
    assert not changed, f"{changed} differ from a rebuild from the runs CSV (make tutorial-results FROM_CSV=1)"
