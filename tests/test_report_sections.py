"""The page's sections as a registry (report/sections/): each a module owning its report: key, its
computation and its Markdown; adding one is adding a module. The claims section judges the runs as
the runs CSV holds them without reading it back, so the page and the scoreboard agree."""

import re
import sys
import textwrap
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from svmrepro.errors import ConfigError
import svmrepro.report.registry as report_registry
import svmrepro.report.sections as report_sections
import svmrepro.report.spec as report_spec
from svmrepro.report import build_output
from svmrepro.report.claims.scoreboard import write_scoreboard
from svmrepro.report.registry import page_sections, section_options
from svmrepro.report.spec import spec_from_config
from toy_claims import TOY_CLAIM_HEAD

NODE = {"title": "t", "x": "params.dataset.n_train", "metrics": ["fit_cpu_s"]}


def test_every_section_declares_its_place_its_key_and_its_lines():
    found = page_sections()
    assert [m.__name__.rsplit(".", 1)[-1] for m in found] == ["scatter", "surface", "paired", "ratios", "machines",
                                                              "slopes", "claims"]
    assert len({m.ORDER for m in found}) == len(found) and all(callable(m.lines) for m in found)
    assert list(section_options()) == ["scatter", "surface", "paired", "ratios", "machines", "slopes"]
    assert all(callable(module.configure) for module, _ in section_options().values())


def test_a_sections_key_is_read_into_the_spec_and_unset_keys_read_as_unset():
    spec = spec_from_config("p/t", {**NODE, "slopes": [{"y": "fit_cpu_s", "x": "params.dataset.n_train"}]})
    assert spec.slopes == (("fit_cpu_s", "params.dataset.n_train"),)
    assert (spec.ratios, spec.paired, spec.scatter, spec.surface, spec.machines) == (None, None, None, False, None)
    with pytest.raises(AttributeError):
        spec.no_such_section


NOTES = textwrap.dedent('''\
    from typing import List

    from svmrepro.report.registry import Option

    ORDER = 70
    OPTION = Option("notes", List[str], [], "a list of strings", unset=())


    def configure(where, node):
        return tuple(node.notes)


    def lines(page):
        return ["", "## Notes", "", *page.spec.notes] if page.spec.notes else []
''')


def _clear_caches():
    for cached in (report_registry.page_sections, report_registry.section_options, report_spec.report_node,
                   report_spec.expects, report_spec._strict):
        cached.cache_clear()


@pytest.fixture
def notes_section(tmp_path, monkeypatch):
    """A section module of our own, ``notes``, added beside the package's."""
    folder = tmp_path / "more_sections"
    folder.mkdir()
    (folder / "notes.py").write_text(NOTES)
    monkeypatch.setattr(report_sections, "__path__", [*report_sections.__path__, str(folder)])
    _clear_caches()
    yield
    sys.modules.pop("svmrepro.report.sections.notes", None)
    monkeypatch.undo()
    _clear_caches()


def _runs(a, b):
    rows = []
    for group, values in (("a", a), ("b", b)):
        for seed, value in enumerate(values):
            rows.append({"run_id": f"{ord(group):x}{seed:030x}", "status": "FINISHED", "tags.algorithm": group,
                         "tags.seed": seed, "tags.git_commit": "abcdef123", "params.dataset.n_train": 100,
                         "metrics.fit_cpu_s": value})
    return pd.DataFrame(rows)


def test_adding_a_section_is_adding_a_module(notes_section, tmp_path):
    spec = spec_from_config("p/t", {**NODE, "notes": ["read me"]})
    page = build_output(spec, _runs([1.0, 2.0], [1.5, 2.5]), tmp_path / "out", "quick").table_md.read_text()
    assert page.endswith("## Notes\n\nread me\n")
    with pytest.raises(ConfigError, match=r"report.notes must be a list of strings, got the number 3"):
        spec_from_config("p/t", {**NODE, "notes": 3})


def test_without_the_module_its_key_is_unknown():
    with pytest.raises(ConfigError, match="report.notes is not a report key"):
        spec_from_config("p/t", {**NODE, "notes": ["read me"]})


CLAIMS = TOY_CLAIM_HEAD + """\
    test: {kind: compare, metric: fit_cpu_s, a: a, b: b, stat: ratio, x: params.dataset.n_train}
    expect: {below: 0.6}
    partly: {below: 1.0}
  - id: slower_a
    source: Table 1
    claim: a takes about 10 s
    paper_says: 10 s
    output: toy/table1
    test: {kind: threshold, metric: fit_cpu_s, group: a, where: {params.dataset.n_train: 100}}
    expect: {between: [9, 12]}
"""


def _cells(row: str) -> list[str]:
    return [cell.strip() for cell in row.strip().strip("|").split(" | ")]


def test_the_page_judges_claims_without_reading_the_runs_csv_back_and_agrees_with_the_scoreboard(
        tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # experiments/toy/claims.yaml is read from the current folder first
    (tmp_path / "experiments" / "toy").mkdir(parents=True)
    (tmp_path / "experiments" / "toy" / "claims.yaml").write_text(CLAIMS)
    # in memory the seeds and sizes are numbers, in the CSV text: the claims must read them as the CSV has them
    runs = _runs([10.0, 12.0, 9.0, 11.0], [5.5, 5.9, 4.2, 5.8])
    results = tmp_path / "results"
    spec = spec_from_config("toy/table1", NODE)

    read_back = []
    real_read_bytes = Path.read_bytes
    monkeypatch.setattr(Path, "read_bytes", lambda self: read_back.append(self.name) or real_read_bytes(self))
    page = build_output(spec, runs, results / "toy", "quick").table_md.read_text()
    assert not [name for name in read_back if name.endswith(".runs.csv")]
    monkeypatch.undo()
    monkeypatch.chdir(tmp_path)

    write_scoreboard(["toy"], results, "quick")
    board = (results / "toy" / "claims.md").read_text()  # the paper's page of the scoreboard
    on_page = [_cells(line) for line in page.splitlines() if line.startswith("| Table 1: ")]
    on_board = [_cells(line) for line in board.splitlines() if line.startswith("| Table 1: ")]
    assert len(on_page) == len(on_board) == 2
    for (claim, _, ours, verdict, *_), board_row in zip(on_page, on_board):
        assert claim in board_row and ours in board_row and verdict in board_row
        assert np.isfinite(float(ours.split(" = ")[1].split()[0]))


def test_the_written_runs_parse_to_the_table_read_runs_reads_back(tmp_path):
    from svmrepro.report.runs import read_runs, runs_table, write_runs

    path = tmp_path / "t.runs.csv"
    runs = _runs([1.0, np.nan], [2.5, 3.0]).assign(**{"params.cv": [None, True, False, "x"]})
    in_memory = runs_table(path, write_runs(runs, path))
    pd.testing.assert_frame_equal(in_memory, read_runs(path))
    assert in_memory["tags.seed"].tolist() == ["0", "1", "0", "1"] and in_memory["metrics.fit_cpu_s"].dtype == float


# ---------------------------------------------------------------------------------------------
# report.machines: a block per machine (bench/parallel_hardware run on 2 and on 64 cores)

MACHINES = {**NODE, "metrics": ["test_error"],
            "machines": {"metrics": ["fit_s_parallel", "n_workers"], "figure": "fit_s_parallel",
                         "relative": {"metric": "fit_s_parallel", "to": ["onedal", "svc"]}}}
#: fit_s_parallel per machine and group: the cascade pays against one SVC on 64 cores only
WALL = {("64", "Big Iron"): {"svc": 10.0, "onedal": 1.0, "cascade": 4.0},
        ("2", "AMD EPYC"): {"svc": 10.0, "onedal": 5.0, "cascade": 30.0}}


def _machine_runs():
    rows = []
    for (cores, model), walls in WALL.items():
        for group, wall in walls.items():
            for n, seed in ((1000, 0), (1000, 1), (2000, 0)):
                rows.append({"run_id": f"{len(rows):032x}", "status": "FINISHED", "tags.algorithm": group,
                             "tags.cpu_count": cores, "tags.cpu_model": model, "tags.seed": seed,
                             "params.dataset.n_train": n, "metrics.test_error": 0.2,
                             "metrics.fit_s_parallel": wall * n / 1000 * (1 + seed / 10),
                             "metrics.n_workers": 1 if group == "svc" else int(cores)})
    return pd.DataFrame(rows)


def _block(page: str, title: str) -> dict[tuple[str, str], list[str]]:
    """The rows of the table under ``### <title>``, by (group, x)."""
    block = page.split(f"### {title}\n", 1)[1].strip().split("\n\n")[0]
    return {(cells[0], cells[1]): cells[3:] for cells in map(_cells, block.splitlines()[2:])}


def test_the_machines_section_gives_each_machine_its_own_block(tmp_path):
    spec = spec_from_config("p/t", MACHINES)
    paths = build_output(spec, _machine_runs(), tmp_path, "full")
    page = paths.table_md.read_text()
    assert page.index("### 2 cores: AMD EPYC") < page.index("### 64 cores: Big Iron")  # fewest cores first
    small, large = _block(page, "2 cores: AMD EPYC"), _block(page, "64 cores: Big Iron")
    assert len(small) == len(large) == 6
    # fit_s_parallel (mean ± std over seeds), n_workers, / onedal, / svc: each machine's own numbers
    assert small[("cascade", "1000")] == ["31.5 ± 2.1", "2 ± 0", "6", "3"]
    assert large[("cascade", "1000")] == ["4.2 ± 0.28", "64 ± 0", "4", "0.4"]
    assert large[("svc", "2000")] == ["20", "1", "10", "1"]
    assert paths.figure.with_name("t.machines.png").is_file()


def test_a_machine_without_a_reference_group_says_so_and_keeps_its_block(tmp_path):
    runs = _machine_runs()
    runs = runs[~((runs["tags.cpu_count"] == "64") & (runs["tags.algorithm"] == "onedal"))]
    page = build_output(spec_from_config("p/t", MACHINES), runs, tmp_path, "full").table_md.read_text()
    assert _block(page, "64 cores: Big Iron")[("cascade", "2000")] == ["8", "64", "—", "0.4"]
    assert "no runs of onedal: ratio not computed" in page.split("### 64 cores")[1]


@pytest.mark.parametrize(("machines", "message"), [
    ({"metrics": ["n_workers"], "figure": "fit_s_parallel"},
     "report.machines.figure is 'fit_s_parallel', which is not in report.machines.metrics"),
    ({"metrics": ["n_workers"], "relative": {"metric": "n_workers", "to": []}},
     "report.machines.relative.to must list"),
    ({"metrics": []}, "report.machines.metrics must list"),
])
def test_a_wrong_machines_node_is_one_line(machines, message):
    with pytest.raises(ConfigError, match=re.escape(message)):
        spec_from_config("p/t", {**NODE, "machines": machines})
