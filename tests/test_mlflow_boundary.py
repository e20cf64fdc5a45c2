"""MLflow is reached only through the svmrepro.store package (one home per concern): no other module of
src/ imports it, nor reaches into a store's MLflow client; the store's reads give what MLflow's
process-wide functions gave."""

import ast
from pathlib import Path

import mlflow
import pandas as pd

from svmrepro.bench import SYNTHETIC_EXPERIMENT, log_synthetic_runs
from svmrepro.report.runs import tidy
from svmrepro.settings import Mode, Timing
from svmrepro.store import Store, commit_column, run_commit

SRC = Path(__file__).resolve().parents[1] / "src"
#: the store package is the home (its sqlite module builds a missing SQLite store by letting MLflow
#: make its schema, and reads MLflow's own migrations to check a store's schema before MLflow opens it)
STORE = "svmrepro/store/"


def modules():
    return sorted(p for p in SRC.rglob("*.py") if p.is_file())


def imported(tree: ast.AST) -> list[str]:
    """Every module an ``import`` or ``from ... import`` names, at any depth (a function's too)."""
    names = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.append(node.module)
    return names


def test_only_the_store_package_imports_mlflow():
    offenders = []
    for path in modules():
        name = path.relative_to(SRC).as_posix()
        mlflow = [m for m in imported(ast.parse(path.read_text(), str(path))) if m.split(".")[0] == "mlflow"]
        if mlflow and not name.startswith(STORE):
            offenders.append(f"{name}: {', '.join(mlflow)}")
    assert not offenders, "import MLflow only in svmrepro.store: " + "; ".join(offenders)


def test_no_module_reaches_into_a_store_s_client():
    offenders = []
    for path in modules():
        name = path.relative_to(SRC).as_posix()
        if name.startswith(STORE):
            continue
        tree = ast.parse(path.read_text(), str(path))
        offenders += [f"{name}:{n.lineno}" for n in ast.walk(tree) if isinstance(n, ast.Attribute) and n.attr == "client"]
    assert not offenders, "use svmrepro.store.Store's methods, not its MLflow client: " + ", ".join(offenders)


def test_the_scan_sees_an_import_inside_a_function():
    source = "def f():\n    import mlflow.artifacts\n    from mlflow.entities import Metric\n"
    assert imported(ast.parse(source)) == ["mlflow.artifacts", "mlflow.entities"]


def test_the_store_s_runs_table_is_mlflow_s(store_uri):
    """Store.runs_frame lays runs out as mlflow.search_runs does (which needs the process-wide URI)."""
    store = Store(store_uri)
    experiment_id = log_synthetic_runs(store, 4)
    odd = store.start_run(experiment_id, "odd", {"mode": "full"})  # a metric of its own, and a series
    store.log_metrics(odd, {"only_here": 1.0}, {"series": [1.0, 2.0]})
    store.terminate(odd, "FINISHED")
    store.start_run(experiment_id, "running", {"mode": "full"})  # no end time
    before = mlflow.get_tracking_uri()
    try:
        mlflow.set_tracking_uri(store_uri)
        for query in ("attributes.status = 'FINISHED' and tags.mode = 'full'", ""):
            ours = store.runs_frame(SYNTHETIC_EXPERIMENT, query).sort_values("run_id", ignore_index=True)
            theirs = mlflow.search_runs(experiment_names=[SYNTHETIC_EXPERIMENT], filter_string=query)
            assert set(ours.columns) == set(theirs.columns)
            pd.testing.assert_frame_equal(ours, theirs.sort_values("run_id", ignore_index=True)[list(ours.columns)])
        assert store.runs_frame("no/such").empty
    finally:
        mlflow.set_tracking_uri(before)


def test_the_store_finds_clears_and_deletes_a_report_run(store_uri, tmp_path):
    store = Store(store_uri)
    experiment_id = store.experiment_id("test/report")
    tags = {"svmrepro.report": "report", "svmrepro.report_mode": "quick"}
    assert store.find_run(experiment_id, tags) is None
    run_id = store.start_run(experiment_id, "report-quick", tags)
    assert store.find_run(experiment_id, tags) == run_id
    (tmp_path / "table.md").write_text("| a |\n")
    store.log_artifact(run_id, tmp_path / "table.md")
    assert [f.path for f in store.client.list_artifacts(run_id)] == ["table.md"]
    store.clear_artifacts(run_id)
    assert store.client.list_artifacts(run_id) == []
    store.delete_run(run_id)
    assert store.client.get_run(run_id).info.lifecycle_stage == "deleted"
    assert store.find_run(experiment_id, tags) is None


# --- MLflow as its users expect it (issue 34) -------------------------------------------------

def test_an_enum_is_logged_by_its_value(store_uri):
    """``Mode.quick`` reads ``quick`` in a tag, a param and a new run's tags, never ``Mode.quick``."""
    store = Store(store_uri)
    run_id = store.start_run(store.experiment_id("test/enum"), "r", {"mode": Mode.quick})
    store.set_tags(run_id, {"timing": Timing.exclusive})
    store.log_params(run_id, {"mode": Mode.full})
    found = store.client.get_run(run_id).data
    assert (found.tags["mode"], found.tags["timing"], found.params["mode"]) == ("quick", "exclusive", "full")


def test_an_experiment_is_one_of_machine_learning_described_by_its_title(store_uri):
    """MLflow's UI opens a "Machine learning" experiment on its runs table; an experiment made before
    (no kind, no description) gets both once, and a description set by hand is kept."""
    store = Store(store_uri)
    made = store.client.get_experiment(store.experiment_id("test/new", "Fig. 1: a title"))
    assert made.tags == {"mlflow.experimentKind": "custom_model_development", "mlflow.note.content": "Fig. 1: a title"}
    older = store.client.create_experiment("test/older")
    assert store.experiment_id("test/older", "Its title") == older
    assert store.client.get_experiment(older).tags["mlflow.note.content"] == "Its title"
    assert store.client.get_experiment(older).tags["mlflow.experimentKind"] == "custom_model_development"
    store.client.set_experiment_tag(older, "mlflow.note.content", "written by hand")
    store.experiment_id("test/older", "Its title")
    assert store.client.get_experiment(older).tags["mlflow.note.content"] == "written by hand"
    assert "mlflow.note.content" not in store.client.get_experiment(store.experiment_id("adhoc")).tags


def test_a_runs_commit_is_mlflows_tag_or_in_older_runs_svmrepros():
    """New runs carry MLflow's ``mlflow.source.git.commit`` alone; runs CSVs committed before hold
    ``git_commit``; a table may mix both."""
    assert run_commit({"mlflow.source.git.commit": "abc", "git_commit": "old"}) == "abc"
    assert run_commit({"git_commit": "old"}) == "old" and run_commit({}) is None
    runs = pd.DataFrame({"tags.mlflow.source.git.commit": ["abc", None, None], "tags.git_commit": [None, "old", None]})
    assert commit_column(runs).tolist()[:2] == ["abc", "old"] and pd.isna(commit_column(runs)[2])
    assert commit_column(pd.DataFrame({"run_id": ["r"]})).isna().all()


def test_a_runs_table_keeps_mlflows_commit_and_no_other_mlflow_tag():
    frame = pd.DataFrame({"run_id": ["r"], "status": ["FINISHED"], "start_time": ["2026-01-01"],
                          "metrics.n_sv": [1.0], "tags.mlflow.source.git.commit": ["abc"],
                          "tags.mlflow.user": ["me"], "tags.mlflow.note.content": ["a run"]})
    # and the run's phase, ``explore`` for a run logged before runs carried it (issue 48)
    assert [c for c in tidy(frame).columns if c.startswith("tags.mlflow.")] == ["tags.mlflow.source.git.commit"]
    assert tidy(frame)["tags.phase"].tolist() == ["explore"]
