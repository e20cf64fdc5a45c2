"""results/bench/cost.md: CPU and wall time per output and per paper, from the runs tables (that the
committed page is what the committed runs make, tests/test_drift.py checks with every page)."""

import csv
import shutil
from pathlib import Path

import pandas as pd
import pytest

from svmrepro.compose import experiments

from svmrepro.report.cost import CPU_COLUMNS, WALL_COLUMNS, write_cost
from svmrepro.reproduce import main as reproduce

CHECKOUT = Path(__file__).resolve().parents[1]
#: fig3's table shows fig3_baseline's runs too (report.include); fig4 of the mixture is one untimed run
TABLES = ("cross_training/fig3", "cross_training/fig3_baseline", "mixture/fig4")


def summed(path: Path, experiment: str, columns: tuple[str, ...]) -> float:
    with path.open(newline="") as handle:
        rows = [row for row in csv.DictReader(handle) if row["tags.experiment"] == experiment]
    return sum(float(row[c]) for row in rows for c in columns if row.get(c))


@pytest.fixture
def results(tmp_path) -> Path:
    for table in TABLES:
        target = tmp_path / f"{table}.runs.csv"
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(CHECKOUT / "results" / f"{table}.runs.csv", target)
    return tmp_path


def test_each_run_counts_once_with_its_cpu_and_wall_and_the_wall_a_rerun_takes(results):
    page = write_cost(results, "full", 2)
    costs = pd.read_csv(page.with_suffix(".csv")).set_index("output")
    baseline_csv = results / "cross_training" / "fig3_baseline.runs.csv"
    baseline = costs.loc["cross_training/fig3_baseline"]
    assert baseline["runs"] == 70  # not 140: fig3's table shows the same runs
    assert baseline["cpu_s"] == pytest.approx(summed(baseline_csv, "cross_training/fig3_baseline", CPU_COLUMNS), abs=0.1)
    assert baseline["wall_s"] == pytest.approx(summed(baseline_csv, "cross_training/fig3_baseline", WALL_COLUMNS), abs=0.1)
    assert baseline["timing"] == "exclusive" and baseline["jobs_at_once"] == 1
    assert baseline["rerun_wall_s"] == baseline["wall_s"]  # timed: one run at a time
    shared = costs.loc["mixture/fig4"]
    assert shared["timing"] == "shared" and shared["jobs_at_once"] == 2
    assert shared["rerun_wall_s"] == pytest.approx(shared["wall_s"] / 2, abs=0.1)
    assert shared["runs_without_predict_cpu"] == 1
    assert costs.loc["cascade/table1", "runs"] == 0  # every output listed, with the command that makes its runs
    assert costs.loc["cascade/table1", "command"] == "svmrepro-reproduce --experiment cascade/table1 --mode full"

    text = page.read_text()
    # the paper's total: fig3's 70 and the baseline's 70; every output counted, those without runs too
    assert f"| cross_training | {len(experiments('cross_training'))} | 140 |" in text
    assert f"| **all** | {len(experiments())} | 141 |" in text and "`svmrepro-reproduce cross_training --mode full`" in text
    assert "| cascade/table1 | 0 |" in text and "no runs yet" in text


def test_a_table_that_cannot_be_read_is_left_out_in_one_line(results):
    (results / "mixture" / "fig4.runs.csv").write_text("run_id,status\nnot-an-id,FINISHED\n")
    text = write_cost(results, "full", 2).read_text()
    left_out = [line for line in text.splitlines() if line.startswith("- Left out: ")]
    assert len(left_out) == 1 and "fig4.runs.csv" in left_out[0]
    assert f"| mixture | {len(experiments('mixture'))} | 0 |" in text


def test_a_rebuild_from_the_runs_tables_writes_the_cost_page(results):
    args = ["--experiment", "mixture/fig4", "--from-csv", "--mode", "full", "--results-dir", str(results)]
    assert reproduce(args) == 0
    assert "| mixture/fig4 | 1 |" in (results / "bench" / "cost.md").read_text()

