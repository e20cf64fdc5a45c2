"""The committed outputs cannot drift from their runs: every committed results/ page and table (the
claims scoreboard and its claims.csv included) is rebuilt from the committed runs CSVs into a temporary copy and must
come out byte for byte the same."""

import shutil
import subprocess
from pathlib import Path

import pytest

from svmrepro.report.readme_times import MEASUREMENTS
from svmrepro.reproduce import main as reproduce

CHECKOUT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.slow


def committed(pattern: str) -> list[str]:
    listed = subprocess.run(["git", "ls-files", "-z", "results"], cwd=CHECKOUT, check=True, capture_output=True,
                            text=True).stdout
    return sorted(name for name in listed.split("\0") if name and Path(name).match(pattern))


def test_every_committed_output_rebuilds_from_its_runs_csv_unchanged(tmp_path):
    results = tmp_path / "results"
    (tmp_path / "experiments").symlink_to(CHECKOUT / "experiments")  # the bench README links its protocol beside it
    # the runs, the sidecars drawn from, and README's commands' times (measured, not built from runs); and the
    # figures: one whose key says it is drawn from what it would be drawn from now is kept, the others are drawn
    # (svmrepro.report.figure_keys), which spares the rebuild most of its time without changing a page
    for name in (committed("*.runs.csv") + committed("*.json") + committed(MEASUREMENTS.as_posix())
                 + committed("*.png")):
        copy = results / Path(name).relative_to("results")
        copy.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(CHECKOUT / name, copy)
    assert "results/claims.csv" in committed("*.csv"), "results/claims.csv is not committed beside the scoreboard"
    if committed("confirm/*/*.runs.csv"):  # the confirmatory phase's outputs first: the scoreboard reads them
        assert reproduce(["--from-csv", "--mode", "confirm", "--results-dir", str(results / "confirm")]) == 0
    assert reproduce(["--from-csv", "--mode", "full", "--results-dir", str(results)]) == 0
    drifted = [name for name in committed("*.md") + committed("*.csv")
               if not (results / Path(name).relative_to("results")).is_file()
               or (results / Path(name).relative_to("results")).read_bytes() != (CHECKOUT / name).read_bytes()]
    assert not drifted, f"{len(drifted)} committed outputs differ from a rebuild from their runs: {drifted[:10]} " \
                        "(svmrepro-reproduce --from-csv --mode full rebuilds them)"
