"""A hand-edited runs CSV is checked against what its columns mean before an output is built from
it (``svmrepro-reproduce --from-csv``): one row per configuration, counts, errors and times in
their ranges, seeds and booleans typed; each refusal one line naming the file, the column and the
line (issue 33)."""

import csv
import io
import re
from pathlib import Path

import pytest

from svmrepro.errors import SvmReproError
from svmrepro.report.columns import RULES
from svmrepro.report.runs import CONFIGURATION, read_runs

CHECKOUT = Path(__file__).resolve().parents[1]
#: committed runs whose verdict "fewer SVs" a counted-twice row flipped
TABLE4 = CHECKOUT / "results" / "cascade" / "table4.runs.csv"


def _records(path: Path) -> list[list[str]]:
    return list(csv.reader(io.StringIO(path.read_text(), newline="")))


def _write(path: Path, records: list[list[str]]) -> Path:
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerows(records)
    path.write_text(out.getvalue())
    return path


def _edited(tmp_path: Path, column: str, value: str, row: int = 2) -> Path:
    """cascade Table 4's runs with the cell of ``column`` in data row ``row`` (file line row + 1) set to ``value``."""
    records = _records(TABLE4)
    records[row][records[0].index(column)] = value
    return _write(tmp_path / "table4.runs.csv", records)


def test_a_configuration_copied_under_a_new_run_id_is_refused_naming_both_rows(tmp_path):
    records = _records(TABLE4)
    copy = list(records[3])
    copy[0] = "f" * 32
    path = _write(tmp_path / "table4.runs.csv", [*records, copy])
    with pytest.raises(SvmReproError) as exc:
        read_runs(path)
    config = records[3][records[0].index(CONFIGURATION)]
    assert str(exc.value) == (
        f"{path}: line 4 (run {records[3][0]}), line {len(records) + 1} (run {'f' * 32}) are one configuration "
        f"({CONFIGURATION} {config}); a runs table holds one FINISHED run per configuration: keep one of those rows")


@pytest.mark.parametrize(
    ("column", "value", "expected"),
    [
        ("metrics.n_sv", "-5", "a count >= 0"),
        ("metrics.step1.T2.n_train", "-1", "a count >= 0"),
        ("metrics.n_iter", "-3", "a count >= 0"),
        ("metrics.test_error", "1.5", "an error rate in [0, 1]"),
        ("metrics.train_error", "-0.1", "an error rate in [0, 1]"),
        ("metrics.fit_time_s", "-2", "a time in seconds >= 0"),
        ("metrics.step3.Tfinal.fit_cpu_s", "-0.5", "a time in seconds >= 0"),
        ("metrics.n_sv", "nan", "a finite number (an empty cell means the run did not log it)"),
        ("metrics.speedup", "inf", "a finite number"),
        ("tags.seed", "x", "a seed, a whole number >= 0"),
        ("tags.seed", "", "a seed, a whole number >= 0"),
        ("params.seed", "1.5", "a seed, a whole number >= 0"),
        ("tags.timing_reliable", "maybe", "true or false"),
        ("tags.git_dirty", "yes", "true, false or unknown"),
    ],
)
def test_a_cell_against_its_columns_meaning_is_one_line_naming_file_line_and_column(tmp_path, column, value,
                                                                                      expected):
    path = _edited(tmp_path, column, value)
    with pytest.raises(SvmReproError) as exc:
        read_runs(path)
    message = str(exc.value)
    assert "\n" not in message
    assert message.startswith(f"{path}, line 3: {column} = {value!r} is not {expected}")


@pytest.mark.parametrize(("column", "value"), [
    ("metrics.n_sv", "0"), ("metrics.test_error", "1"), ("metrics.test_error", "0.0"), ("metrics.fit_time_s", ""),
    ("metrics.speedup", "-0.5"),  # no rule bounds a ratio
    ("tags.timing_reliable", "false"), ("tags.timing_reliable", ""), ("tags.git_dirty", "unknown"),
])
def test_values_within_their_meaning_are_read(tmp_path, column, value):
    assert len(read_runs(_edited(tmp_path, column, value))) == len(_records(TABLE4)) - 1


@pytest.mark.parametrize(
    ("column", "kinds"),
    [
        ("metrics.n_sv", {"number", "count"}),
        ("metrics.step1.T1.n_sv", {"number", "count"}),
        ("metrics.final_n_pos", {"number", "count"}),
        ("metrics.ipm_iterations", {"number", "count"}),
        ("metrics.kernel_evaluations", {"number", "count"}),
        ("metrics.subproblem_steps", {"number", "count"}),
        ("metrics.val_error", {"number", "error"}),
        ("metrics.critical_path_cpu_s", {"number", "time"}),
        ("metrics.train_mse", {"number"}),
        ("metrics.sv_asymptote_2Bn", {"number"}),
        ("metrics.fit_s_njobs1_rounds", {"number"}),
        ("metrics.final_grid_validation_errors", {"number"}),
        ("params.seed", {"seed"}),
        ("params.dataset.n_train", set()),  # a param: text, as MLflow holds it
        ("tags.algorithm", set()),
    ],
)
def test_each_column_is_checked_by_the_rules_its_name_declares(column, kinds):
    names = {"a finite number": "number", "a count": "count", "an error rate": "error", "a time": "time",
             "a seed": "seed"}
    found = {kind for rule in RULES if rule.applies_to(column)
             for start, kind in names.items() if rule.expected.startswith(start)}
    assert found == kinds


def test_from_csv_refuses_a_duplicated_row_in_one_line(tmp_path, caplog):
    """The issue's case: the copy flipped Table 4's "fewer SVs" to inconclusive; now the output is not built."""
    from svmrepro.reproduce import main as reproduce

    results = tmp_path / "results" / "cascade"
    results.mkdir(parents=True)
    records = _records(TABLE4)
    copy = list(records[1])
    copy[0] = "e" * 32
    _write(results / "table4.runs.csv", [*records, copy])
    assert reproduce(["--experiment", "cascade/table4", "--from-csv", "--mode", "full",
                      "--results-dir", str(tmp_path / "results")]) == 1
    assert not (results / "table4.md").exists()
    error = next(record.getMessage() for record in caplog.records if record.levelname == "ERROR")
    assert re.fullmatch(rf"{re.escape(str(results / 'table4.runs.csv'))}: line 2 \(run {records[1][0]}\), line 14 "
                        rf"\(run e{{32}}\) are one configuration .*: keep one of those rows", error)
