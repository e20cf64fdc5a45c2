"""A wrong report spec or runs CSV stops with one line naming the file, the key or line, and what is wrong."""

import csv
import io
import re
from pathlib import Path

import pytest

from svmrepro.compose import compose_config, experiments
from svmrepro.errors import ConfigError, SvmReproError
from svmrepro.locations import CONFIG_DIRS_ENV
from svmrepro.report.runs import read_runs
from svmrepro.report.spec import ReportSpec, experiment_file, spec_from_config

CHECKOUT = Path(__file__).resolve().parents[1]
GOOD = {"title": "t", "x": "params.n", "metrics": ["test_error", "n_sv"]}
#: an experiment of the package, so the messages name its file
EXPERIMENT = "cascade/table4"


def one_line(exc: pytest.ExceptionInfo) -> str:
    message = str(exc.value)
    assert "\n" not in message
    return message


# ---------------------------------------------------------------------------------------------
# report: nodes


@pytest.mark.parametrize("experiment", experiments())
def test_the_report_of_every_experiment_parses(experiment):
    spec = spec_from_config(experiment, compose_config([f"experiment={experiment}"]).report)
    assert isinstance(spec, ReportSpec) and spec.metrics and all(isinstance(m, str) for m in spec.metrics)


def test_messages_name_the_experiment_file_or_else_the_experiment():
    assert Path(experiment_file(EXPERIMENT)).resolve() == CHECKOUT / "conf" / "experiment" / "cascade" / "table4.yaml"
    assert experiment_file("nobody/nothing") == "nobody/nothing"


@pytest.mark.parametrize(
    ("node", "message"),
    [
        ({"metrics": "test_error"}, "report.metrics must be a list of metric names, got the string 'test_error'"),
        ({"logy": "n_sv"}, "report.logy must be a list of metric names, got the string 'n_sv'"),
        ({"deviations": "one line"}, "report.deviations must be a list of strings, one per difference, got the string"),
        ({"include": "cascade/table1"}, "report.include must be a list of experiments <paper>/<id>, got the string"),
        # an unquoted "- key: value" entry of a YAML list is a mapping, not the sentence it looks like
        ({"deviations": ["ok", {"time": "3 s"}]}, "report.deviations must be a list of strings"),
        ({"metrics": []}, "report.metrics must be a list of metric names, got the list []"),
        ({"metrics": None}, "report.metrics must be a list of metric names, got null"),
        ({"title": ["a", "b"]}, "report.title must be a title string, got the list ['a', 'b']"),
        ({"logx": "yes"}, "report.logx must be true or false, got the string 'yes'"),
        ({"surface": 1}, "report.surface must be true or false, got the number 1"),
        ({"ratios": "test_error"}, "report.ratios must be {metric: <metric>, to: <group>}, got the string"),
        ({"ratios": {"metric": "test_error", "to": "svc", "of": "x"}},
         "report.ratios must be {metric: <metric>, to: <group>}, got the mapping "
         "{'metric': 'test_error', 'to': 'svc', 'of': 'x'} (no key 'of')"),
        ({"ratios": {"metric": "test_error"}}, "report.ratios.to is missing; report.ratios must be"),
        ({"slopes": [{"y": "n_sv"}]}, "report.slopes[0].x is missing"),
        ({"slopes": ["n_sv"]}, "report.slopes must be a list of {y: <metric>, x: <column>}, got the list"),
        ({"paired": {"metric": "test_error", "a": "svc"}}, "report.paired.b is missing"),
        ({"scatter": {"sets": "o"}}, "report.scatter must be {key: <diagnostics key>, sets:"),
        ({"colour": "red"}, "report.colour is not a report key; allowed: title, x, metrics"),
        ({"paper": "experiments/x/nope.csv"}, "report.paper: no file experiments/x/nope.csv"),
    ],
)
def test_a_wrong_report_node_is_one_line_naming_the_file_and_the_key(node, message):
    with pytest.raises(ConfigError) as exc:
        spec_from_config(EXPERIMENT, {**GOOD, **node})
    line = one_line(exc)
    assert line.startswith(f"{experiment_file(EXPERIMENT)}: report") and message in line


def test_a_required_key_that_is_missing_is_named():
    with pytest.raises(ConfigError, match="report.x is missing"):
        spec_from_config(EXPERIMENT, {"title": "t", "metrics": ["n_sv"]})


@pytest.mark.parametrize(
    ("report", "shown"), [("just a title", "the string 'just a title'"), (["t"], "the list ['t']")]
)
def test_a_report_that_is_not_a_mapping_is_one_line(report, shown):
    with pytest.raises(ConfigError) as exc:
        spec_from_config(EXPERIMENT, report)
    assert one_line(exc).endswith(f"report must be a mapping of report keys (title, x, metrics, ...), got {shown}")


def test_group_names_may_be_numbers_and_become_text():
    spec = spec_from_config(EXPERIMENT, {**GOOD, "ratios": {"metric": "n_sv", "to": 10}})
    assert spec.ratios == ("n_sv", "10")


def test_a_user_experiment_file_is_named_in_its_error(tmp_path, monkeypatch):
    folder = tmp_path / "experiment" / "mine"
    folder.mkdir(parents=True)
    (folder / "bad.yaml").write_text("# @package _global_\nreport:\n  title: t\n  x: params.n\n  metrics: test_error\n")
    monkeypatch.setenv(CONFIG_DIRS_ENV, str(tmp_path))
    with pytest.raises(ConfigError) as exc:
        spec_from_config("mine/bad", compose_config(["experiment=mine/bad"]).report)
    assert one_line(exc) == (f"{folder / 'bad.yaml'}: report.metrics must be a list of metric names, "
                             "got the string 'test_error'")


# ---------------------------------------------------------------------------------------------
# runs CSVs

HEADER = ["run_id", "status", "start_time", "params.n", "metrics.n_sv", "metrics.test_error", "tags.algorithm"]
ROWS = [
    ["a" * 32, "FINISHED", "2024-01-01T00:00:00Z", "100", "10", "0.1", "svc"],
    ["b" * 32, "FINISHED", "2024-01-01T00:01:00Z", "200", "", "0.2", "svc"],  # n_sv not logged: allowed
]


def runs_csv(path: Path, rows=ROWS, header=HEADER) -> Path:
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerows([header, *rows])
    path.write_text(out.getvalue())
    return path


def test_a_good_runs_csv_reads_with_metrics_as_numbers_and_empty_cells_as_nan(tmp_path):
    runs = read_runs(runs_csv(tmp_path / "t.runs.csv"))
    assert runs["metrics.test_error"].tolist() == [0.1, 0.2] and runs["metrics.n_sv"].isna().tolist() == [False, True]
    assert runs["params.n"].tolist() == ["100", "200"]


def with_cell(row: int, column: str, value: str) -> list[list[str]]:
    rows = [list(r) for r in ROWS]
    rows[row][HEADER.index(column)] = value
    return rows


@pytest.mark.parametrize(
    ("rows", "message"),
    [
        (with_cell(1, "metrics.test_error", "nan"), "line 3: metrics.test_error = 'nan' is not a finite number"),
        (with_cell(0, "metrics.n_sv", "inf"), "line 2: metrics.n_sv = 'inf' is not a finite number"),
        (with_cell(1, "metrics.n_sv", "-inf"), "line 3: metrics.n_sv = '-inf' is not a finite number"),
        (with_cell(0, "metrics.test_error", "0.1 %"), "line 2: metrics.test_error = '0.1 %' is not a finite number"),
        (with_cell(1, "status", "FAILED"), "line 3: status 'FAILED'; a runs table holds FINISHED runs only"),
        (with_cell(1, "run_id", ""), "line 3: run_id '' is not an MLflow run id (32 hex digits)"),
        (with_cell(0, "run_id", "total"), "line 2: run_id 'total' is not an MLflow run id"),
        (with_cell(1, "run_id", "a" * 32), f"line 3: run_id {'a' * 32} repeats line 2"),
        ([*ROWS, ["garbage", "row"]], "line 4: 2 fields, the header has 7"),
        ([ROWS[0], [], ROWS[1]], "line 3: a blank line"),
    ],
)
def test_a_bad_row_is_one_line_naming_the_file_and_the_line(tmp_path, rows, message):
    path = runs_csv(tmp_path / "t.runs.csv", rows)
    with pytest.raises(SvmReproError) as exc:
        read_runs(path)
    assert one_line(exc).startswith(f"{path}, {message}")


def test_the_line_is_the_files_line_even_after_a_quoted_line_break(tmp_path):
    rows = [with_cell(0, "tags.algorithm", "two\nlines")[0], with_cell(1, "metrics.n_sv", "nan")[1]]
    with pytest.raises(SvmReproError, match=r", line 4: metrics.n_sv = 'nan'"):
        read_runs(runs_csv(tmp_path / "t.runs.csv", rows))


@pytest.mark.parametrize(
    ("header", "message"),
    [
        ([c for c in HEADER if c != "status"], "line 1 (header): no status column"),
        (["x", *HEADER[1:]], "line 1 (header): column 'x' is not one of run_id, status, start_time"),
        ([*HEADER[:-1], "metrics.n_sv"], "line 1 (header): column 'metrics.n_sv' appears twice"),
    ],
)
def test_a_bad_header_is_one_line(tmp_path, header, message):
    path = runs_csv(tmp_path / "t.runs.csv", header=header, rows=[r[: len(header)] for r in ROWS])
    with pytest.raises(SvmReproError) as exc:
        read_runs(path)
    assert one_line(exc).startswith(f"{path}, {message}")


def test_a_table_without_metrics_is_refused(tmp_path):
    path = runs_csv(tmp_path / "t.runs.csv", header=["run_id", "status"], rows=[r[:2] for r in ROWS])
    with pytest.raises(SvmReproError, match=re.escape(f"{path}, line 1 (header): no metrics.* column")):
        read_runs(path)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"", ": empty file, not a runs table"),
        (b"\n  \n", ": empty file, not a runs table"),
        (",".join(HEADER).encode() + b"\n", ": no runs below the header"),
        (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", ", line 1: byte 0x89 is not UTF-8 text: not a runs table"),
        (b"run_id,status\n\x00\x01\x02", ", line 2: a NUL byte, so a binary file and not a runs table"),
        (",".join(HEADER).encode() + b'\n"' + b"a" * 32 + b',FINISHED\n', ", line 2: not CSV (unexpected end of data)"),
    ],
)
def test_a_file_that_is_not_a_runs_table_is_one_line(tmp_path, content, message):
    path = tmp_path / "t.runs.csv"
    path.write_bytes(content)
    with pytest.raises(SvmReproError) as exc:
        read_runs(path)
    assert one_line(exc) == f"{path}{message}"


def test_every_committed_runs_csv_passes():
    committed = sorted((CHECKOUT / "results").rglob("*.runs.csv"))
    assert committed
    for path in committed:
        assert len(read_runs(path)) > 0
