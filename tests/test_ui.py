"""The MLflow UI: ``make ui`` runs ``svmrepro-ui`` on the runner's store, and a server over a store the tests filled
serves its experiments, runs, metrics and the built outputs (logged by svmrepro-reproduce)."""

import base64
import contextlib
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests
from mlflow import MlflowClient
from mlflow.entities import ViewType
from stores import copy_store

from svmrepro.compose import compose_config, compose_run
from svmrepro.sweep.jobs import sweep_jobs
from svmrepro.report.artifacts import html_page
from svmrepro.report.runs import runs_from_mlflow
from svmrepro.reproduce import main as reproduce
from svmrepro.runner import run
from svmrepro.store import tracking_uri

CHECKOUT = Path(__file__).resolve().parents[1]

EXPERIMENT = "cross_training/fig3_baseline"
OUTPUT = "fig3_baseline"
#: two seconds-long configurations of its sweep (training sizes 120 and 160)
SMALL = ["dataset.n_train=120,160", "dataset.n_test=200", "seed=0", "selection.cv.n_splits=2", "selection.param_grid.C=[1.0]"]
REPORT_RUNS = "tags.`svmrepro.kind` = 'report'"
#: seconds the server may take to answer /health (it imports all of MLflow; the machine is shared)
STARTUP_S = 120


@pytest.fixture(scope="module")
def store(tmp_path_factory, empty_store):
    """A new SQLite store (a copy of the empty one), its schema there before the server and the runs open it
    concurrently."""
    root = tmp_path_factory.mktemp("ui")
    return root, copy_store(empty_store, root / "mlflow.db")


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@contextlib.contextmanager
def serving(root: Path, uri: str) -> Iterator[tuple[str, subprocess.Popen]]:
    """``mlflow server`` on a free loopback port over the store ``uri`` (its log in ``root``), stopped
    with its workers; yields its URL and process as soon as it is started (it takes seconds to import)."""
    url = f"http://127.0.0.1:{_free_port()}"
    command = [
        sys.executable, "-m", "mlflow", "server", "--backend-store-uri", uri,
        "--default-artifact-root", str(root / "mlartifacts"), "--host", "127.0.0.1",
        "--port", url.rsplit(":", 1)[1], "--workers", "1",
    ]
    with open(root / "server.log", "w") as log:
        # no job runner (its ten huey consumers take a core from the rest of the suite; the UI needs none)
        env = {**os.environ, "MLFLOW_SERVER_ENABLE_JOB_EXECUTION": "false"}
        process = subprocess.Popen(command, cwd=root, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
                                   env=env)
    try:
        yield url, process
    finally:
        os.killpg(process.pid, signal.SIGTERM)  # its own session: uvicorn and the job runner go too
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


def wait_healthy(root: Path, url: str, process: subprocess.Popen) -> str:
    """``url`` once the server answers /health (its log's end if it died first)."""
    deadline = time.monotonic() + STARTUP_S
    while True:
        assert process.poll() is None, (root / "server.log").read_text()[-3000:]
        assert time.monotonic() < deadline, f"no /health in {STARTUP_S} s"
        try:
            if requests.get(f"{url}/health", timeout=2).ok:
                return url
        except (requests.ConnectionError, requests.Timeout):  # not listening yet, or still starting
            pass
        time.sleep(0.5)


@pytest.fixture(scope="module")
def started(store):
    """The server over the store, started early (it takes seconds to import)."""
    root, uri = store
    with serving(root, uri) as found:
        yield found


@pytest.fixture(scope="module")
def built(store, started):
    """The two runs, the output built from them, a stale file logged to its report run, and the
    output built again; returns the experiment's id and the report run's."""
    root, uri = store
    base = [f"experiment={EXPERIMENT}", "mode=quick", f"tracking.uri={uri}"]
    for job in sweep_jobs(compose_config(base).sweep.quick, dict(o.split("=", 1) for o in SMALL)):
        run(*compose_run([*base, *job]))
    args = ["--experiment", EXPERIMENT, "--no-run", "--tracking-uri", uri, "--results-dir", str(root / "results")]
    args += [f"--override={o}" for o in SMALL]
    assert reproduce(args) == 0
    client = MlflowClient(uri)
    experiment_id = client.get_experiment_by_name(EXPERIMENT).experiment_id
    (first,) = client.search_runs([experiment_id], REPORT_RUNS)
    (root / "stale.txt").write_text("a file the next build does not write")
    client.log_artifact(first.info.run_id, str(root / "stale.txt"))
    assert reproduce(args) == 0
    return experiment_id, first.info.run_id


@pytest.fixture(scope="module")
def server(store, started, built):
    """The server's URL once it answers /health."""
    root, _ = store
    url, process = started
    return wait_healthy(root, url, process)


def _api(url: str, endpoint: str, **params) -> dict:
    answer = requests.get(f"{url}/api/2.0/mlflow/{endpoint}", params=params, timeout=30)
    assert answer.ok, answer.text
    return answer.json()


def _search_runs(url: str, experiment_id: str, filter_string: str) -> list[dict]:
    body = {"experiment_ids": [experiment_id], "filter": filter_string, "max_results": 100}
    answer = requests.post(f"{url}/api/2.0/mlflow/runs/search", json=body, timeout=30)
    assert answer.ok, answer.text
    return answer.json().get("runs", [])


def _output_files(root) -> dict:
    return {path.name: path for path in (root / "results" / "cross_training").glob(f"{OUTPUT}.*")}


@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
def test_make_ui_runs_svmrepro_ui_on_the_store_the_runner_uses_by_default(monkeypatch):
    """svmrepro-ui (tests/test_ui_cli.py) puts its artifacts beside the store and turns MLflow's job runner off."""
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    printed = subprocess.run(["make", "-n", "ui"], cwd=CHECKOUT, capture_output=True, text=True, check=True)
    command = printed.stdout.replace("\\\n", " ").split()
    assert Path(command[command.index("--tracking-uri") - 1]).name == "svmrepro-ui"
    assert command[command.index("--tracking-uri") + 1] == tracking_uri()
    assert command[command.index("--host") + 1] == "127.0.0.1"


def test_a_rebuild_replaces_the_report_runs_artifacts_and_it_is_no_result(store, built):
    (root, uri), (experiment_id, first_id) = store, built
    client = MlflowClient(uri)
    (report,) = client.search_runs([experiment_id], REPORT_RUNS, run_view_type=ViewType.ALL)
    assert report.info.run_id == first_id and report.info.status == "FINISHED"
    assert report.info.run_name == f"report-{EXPERIMENT}-quick" and report.data.tags["svmrepro.mode"] == "quick"
    assert report.data.tags["mlflow.source.type"] == "LOCAL" and report.data.tags["mlflow.user"]
    files = _output_files(root)
    assert {f"{OUTPUT}.md", f"{OUTPUT}.csv", f"{OUTPUT}.png", f"{OUTPUT}.runs.csv"} <= set(files)
    # stale.txt is gone; the page as HTML, its picture inside, for the UI (tests/test_browser_ui.py)
    assert {a.path for a in client.list_artifacts(first_id)} == set(files) | {f"{OUTPUT}.html"}
    logged = client.download_artifacts(first_id, f"{OUTPUT}.md", str(root / "downloaded"))
    assert open(logged).read() == files[f"{OUTPUT}.md"].read_text()
    assert len(runs_from_mlflow(EXPERIMENT, "quick", uri)) == 2


def test_a_rebuild_that_changed_nothing_logs_nothing_and_one_that_did_logs_anew(store_uri, tmp_path):
    """Issue 44, item 5: a reproduction with nothing to do does not log its outputs again; a changed file, or a
    file put into the report run by hand (a new one, or one replacing an artifact), makes the next rebuild log the
    run's artifacts anew."""
    from types import SimpleNamespace

    from svmrepro.report.output import Output
    from svmrepro.reproduce import OUTPUT_DIGEST_TAG, log_outputs

    out = tmp_path / "results"
    out.mkdir()
    paths = Output(*(out / f"page{suffix}" for suffix in (".md", ".csv", ".png", ".runs.csv", "_scatter.png",
                                                            "_points.json", "_surface.png", "_surface.json")))
    paths.table_md.write_text("# a page\n\n| a |\n|---|\n| 1 |\n")
    paths.table_csv.write_text("a\n1\n")
    spec = SimpleNamespace(experiment="mine/page", title="a page")
    client = MlflowClient(store_uri)

    def logged() -> dict[str, tuple[float, str]]:
        folder = Path(client.get_run(run_id).info.artifact_uri.removeprefix("file://"))
        return {p.name: (p.stat().st_mtime_ns, p.read_text()) for p in folder.iterdir()}

    run_id = log_outputs(spec, paths, "quick", store_uri, 2)
    first = logged()
    assert set(first) == {"page.md", "page.csv", "page.html"}
    assert log_outputs(spec, paths, "quick", store_uri, 2) == run_id
    assert logged() == first  # not even rewritten
    paths.table_csv.write_text("a\n2\n")
    assert log_outputs(spec, paths, "quick", store_uri, 2) == run_id
    assert logged()["page.csv"][1] == "a\n2\n"
    digest = client.get_run(run_id).data.tags[OUTPUT_DIGEST_TAG]
    assert log_outputs(spec, paths, "quick", store_uri, 3) == run_id  # another tag: logged anew
    assert client.get_run(run_id).data.tags[OUTPUT_DIGEST_TAG] != digest
    (tmp_path / "stray.txt").write_text("put there by hand")
    client.log_artifact(run_id, str(tmp_path / "stray.txt"))
    log_outputs(spec, paths, "quick", store_uri, 3)
    assert set(logged()) == {"page.md", "page.csv", "page.html"}
    (tmp_path / "page.csv").write_text("not the page's table\n")  # replaced by hand under the same name
    client.log_artifact(run_id, str(tmp_path / "page.csv"))
    log_outputs(spec, paths, "quick", store_uri, 3)
    assert logged()["page.csv"][1] == "a\n2\n"
    assert client.get_run(run_id).info.status == "FINISHED"
    assert len(client.search_runs([client.get_experiment_by_name("mine/page").experiment_id])) == 1


def test_the_server_serves_experiments_runs_and_metrics(server, store, built):
    (_, uri), (experiment_id, report_id) = store, built
    answer = requests.post(f"{server}/api/2.0/mlflow/experiments/search", json={"max_results": 100}, timeout=30)
    assert answer.ok, answer.text
    assert {e["name"]: e["experiment_id"] for e in answer.json()["experiments"]}[EXPERIMENT] == experiment_id
    runs = _search_runs(server, experiment_id, "tags.mode = 'quick' and attributes.status = 'FINISHED'")
    assert len(runs) == 2 and report_id not in {r["info"]["run_id"] for r in runs}
    for found in runs:
        metrics = {m["key"]: m["value"] for m in found["data"]["metrics"]}
        assert {"test_error", "n_sv", "fit_time_s"} <= set(metrics)
        history = _api(server, "metrics/get-history", run_id=found["info"]["run_id"], metric_key="test_error")
        stored = MlflowClient(uri).get_run(found["info"]["run_id"]).data.metrics["test_error"]
        assert [m["value"] for m in history["metrics"]] == [pytest.approx(stored)]
    assert [r["info"]["run_id"] for r in _search_runs(server, experiment_id, REPORT_RUNS)] == [report_id]


def test_the_server_serves_the_outputs_logged_as_artifacts(server, store, built):
    (root, _), (experiment_id, report_id) = store, built
    listed = _api(server, "artifacts/list", run_id=report_id)
    files = _output_files(root)
    assert {f["path"] for f in listed["files"]} == set(files) | {f"{OUTPUT}.html"}
    figure = requests.get(f"{server}/get-artifact", params={"path": f"{OUTPUT}.png", "run_uuid": report_id}, timeout=30)
    assert figure.ok and figure.content == files[f"{OUTPUT}.png"].read_bytes()
    assert figure.content.startswith(b"\x89PNG")
    (result,) = _search_runs(server, experiment_id, "params.`dataset.n_train` = '120'")
    assert "config.yaml" in {f["path"] for f in _api(server, "artifacts/list", run_id=result["info"]["run_id"])["files"]}


def test_the_html_page_of_an_output_holds_its_table_and_its_picture(tmp_path):
    """What the report run logs for the UI, which drops a Markdown page's images (test_browser_ui.py)."""
    picture = b"\x89PNG\r\n\x1a\n" + bytes(range(40))
    (tmp_path / "fig.png").write_bytes(picture)
    (tmp_path / "fig.md").write_text(
        "# Fig. 1: a < b\n\n- mode `quick`, 2 runs\n\n| group | n_sv (ours) |\n|---|---|\n| svc | 12 ± 3 |\n\n"
        "![fig](fig.png)\n\nsee [the paper](https://example.org/?a=1&b=2)\n")
    page = html_page(tmp_path / "fig.md", tmp_path / "out").read_text()
    assert "<h1>Fig. 1: a &lt; b</h1>" in page and "<li>mode <code>quick</code>, 2 runs</li>" in page
    assert "<tr><th>group</th><th>n_sv (ours)</th></tr>" in page and "<tr><td>svc</td><td>12 ± 3</td></tr>" in page
    (embedded,) = re.findall(r'<img alt="fig" src="data:image/png;base64,([^"]+)">', page)
    assert base64.b64decode(embedded) == picture
    assert '<a href="https://example.org/?a=1&amp;b=2">the paper</a>' in page
