"""``svmrepro-ui`` without a browser (tests/test_browser_ui.py starts it for real): the server its options
ask for, the stores and ports it refuses before any server starts, what it prints and sets through a
server's REST API (a fake one here), and the summary a sweep's parent run carries for its row."""

import json
import socket
import sys
import threading
import tomllib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from svmrepro.store import PrepareStore, Store
from svmrepro.store.sweep_run import summary_metrics
from svmrepro.store.ui import VIEW_TAG, Server, check_port, printed, runs_view
from svmrepro.ui import main, parse

URI_ENV = "MLFLOW_TRACKING_URI"


def test_by_default_it_serves_the_current_folders_store_on_loopback_with_the_job_runner_off(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv(URI_ENV, raising=False)
    server = parse([])
    assert server == Server(f"sqlite:///{tmp_path / 'mlflow.db'}", "127.0.0.1", 5000, 1, ())
    assert server.url == "http://127.0.0.1:5000"
    assert server.command() == [
        sys.executable, "-m", "mlflow", "server", "--backend-store-uri", server.uri,
        "--default-artifact-root", str(tmp_path / "mlartifacts"),  # where svmrepro's Store puts artifacts
        "--host", "127.0.0.1", "--port", "5000", "--workers", "1"]
    env = server.env({"PATH": "/bin", "MLFLOW_SERVER_ENABLE_JOB_EXECUTION": "true"})
    assert env == {"PATH": "/bin", "MLFLOW_SERVER_ENABLE_JOB_EXECUTION": "false"}


def test_the_store_comes_from_the_option_else_the_environment(tmp_path, monkeypatch):
    monkeypatch.setenv(URI_ENV, "postgresql://svmrepro@db/runs")
    assert parse([]).uri == "postgresql://svmrepro@db/runs"
    assert "--default-artifact-root" not in parse([]).command()  # a database's experiments keep their own
    assert parse(["--tracking-uri", f"sqlite:///{tmp_path}/a.db"]).uri == f"sqlite:///{tmp_path}/a.db"


def test_host_port_workers_and_the_options_after_the_double_dash(monkeypatch):
    monkeypatch.delenv(URI_ENV, raising=False)
    extra = ["--allowed-hosts", "box:5001"]
    server = parse(["--host", "0.0.0.0", "--port", "5001", "--workers", "2", "--", *extra])
    assert (server.host, server.port, server.workers, server.options) == ("0.0.0.0", 5001, 2, tuple(extra))
    assert server.command()[-8:] == ["--host", "0.0.0.0", "--port", "5001", "--workers", "2", *extra]
    assert server.url == "http://127.0.0.1:5001"  # every interface: this machine's link is the loopback one
    assert Server("sqlite:///x.db", "::", 5002).url == "http://[::1]:5002"


@pytest.mark.parametrize(("option", "value"), [("--port", "0"), ("--port", "http"), ("--workers", "0")])
def test_a_bad_number_is_argparses_line_and_exit_code_2(option, value, capsys):
    with pytest.raises(SystemExit) as stop:
        parse([option, value])
    assert stop.value.code == 2
    assert capsys.readouterr().err.splitlines()[-1] == (
        f"svmrepro-ui: error: argument {option}: {value!r} is not a whole number from 1 to "
        f"{65535 if option == '--port' else 64}")


def test_no_server_starts_for_a_missing_store_a_tracking_server_or_a_damaged_file(tmp_path, capsys):
    missing = tmp_path / "study" / "mlflow.db"
    assert main(["--tracking-uri", f"sqlite:///{missing}"]) == 2
    assert capsys.readouterr().err == (
        f"svmrepro-ui: error: no MLflow store at {missing}: svmrepro-run and svmrepro-reproduce make it as they "
        "log their first run (in the current folder); or name one with --tracking-uri\n")
    assert not missing.parent.exists()  # looking made no store, nor its folder
    assert main(["--tracking-uri", "http://user:secret@box:5000"]) == 2
    assert capsys.readouterr().err == ("svmrepro-ui: error: tracking URI http://user:***@box:5000 is an MLflow server, "
                                       "which serves its own UI: open http://user:***@box:5000 in a browser\n")
    missing.parent.mkdir()
    missing.write_bytes(b"not a database" * 100)
    assert main(["--tracking-uri", f"sqlite:///{missing}"]) == 2
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith("svmrepro-ui: error: ") and str(missing) in line


def test_a_port_another_program_listens_on_is_refused(store_uri, capsys):
    with socket.create_server(("127.0.0.1", 0)) as taken:
        taken.listen()
        port = taken.getsockname()[1]
        with pytest.raises(Exception, match=f"cannot listen on 127.0.0.1:{port}: .*--port <another>"):
            check_port("127.0.0.1", port)
        assert main(["--tracking-uri", store_uri, "--port", str(port)]) == 2
    assert capsys.readouterr().err.startswith(f"svmrepro-ui: error: cannot listen on 127.0.0.1:{port}: ")


def test_the_view_lists_every_run_by_name_with_its_metrics_size_and_seed():
    view = runs_view()
    assert view["orderByKey"] == "tags.`mlflow.runName`"  # any sort but by date: the UI nests no run
    assert view["selectedColumns"][:4] == [
        "params.`dataset.n_train`", "params.`seed`", "metrics.`test_error`", "metrics.`test_mse`"]
    assert {"metrics.`n_sv`", "metrics.`fit_time_s`", "metrics.`mean/test_error`"} <= set(view["selectedColumns"])
    assert view["columnOrder"] == ["attributes.`Run Name`", *view["selectedColumns"]]
    assert view["columnWidths"]["attributes.`Run Name`"] > 190  # the UI's own width cuts names before the seed


class FakeMlflow(BaseHTTPRequestHandler):
    """The two endpoints of MLflow's REST API that svmrepro-ui calls; ``refuse`` makes setting a tag fail."""

    experiments: list = []
    calls: list = []
    refuse = False

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).calls.append((self.path, body))
        if self.path.endswith("experiments/search"):
            answer, status = {"experiments": self.experiments}, 200
        elif self.path.endswith("runs/search"):  # a run in each experiment but MLflow's "Default" (id 0)
            answer, status = {"runs": [{"info": {}}] if body["experiment_ids"] != ["0"] else []}, 200
        else:
            answer, status = {}, 403 if self.refuse else 200
        data = json.dumps(answer).encode()
        self.send_response(status)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


@pytest.fixture
def fake_server():
    view = json.dumps(runs_view(), sort_keys=True)
    FakeMlflow.experiments = [
        {"experiment_id": "2", "name": "mine/moons", "tags": []},
        {"experiment_id": "1", "name": "cascade/table1", "tags": [{"key": VIEW_TAG, "value": view}]}]
    FakeMlflow.calls, FakeMlflow.refuse = [], False
    server = ThreadingHTTPServer(("127.0.0.1", 0), FakeMlflow)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


def test_it_sets_the_view_where_it_is_missing_and_prints_each_experiments_link(fake_server):
    lines = printed(fake_server)
    runs = f"{fake_server}/#/experiments/{{}}/runs?workflowType=machine_learning&viewStateShareKey=svmrepro"
    assert lines == [
        f"MLflow UI: {fake_server}/#/experiments?workflowType=machine_learning",
        "Each experiment's runs, a row per run with its metrics (svmrepro's view of the table):",
        f"  cascade/table1: {runs.format(1)}", f"  mine/moons: {runs.format(2)}", "Ctrl-C stops it."]
    (set_tag,) = [body for path, body in FakeMlflow.calls if path.endswith("set-experiment-tag")]
    assert set_tag == {"experiment_id": "2", "key": VIEW_TAG, "value": json.dumps(runs_view(), sort_keys=True)}


def test_an_experiment_with_no_run_gets_no_link_but_is_named(fake_server):
    FakeMlflow.experiments.append({"experiment_id": "0", "name": "Default", "tags": []})
    lines = printed(fake_server)
    assert [line.split(":")[0] for line in lines[2:]] == ["  cascade/table1", "  mine/moons", "  (no runs yet",
                                                         "Ctrl-C stops it."]
    assert lines[4] == "  (no runs yet: Default)"
    FakeMlflow.experiments = [{"experiment_id": "0", "name": "Default", "tags": []}]  # a new store: its one experiment
    assert [line.split(":")[0] for line in printed(fake_server)[2:]] == ["  Default", "Ctrl-C stops it."]


def test_a_store_it_may_not_write_gets_the_plain_tables_links(fake_server):
    FakeMlflow.refuse = True
    lines = printed(fake_server)
    assert lines[1] == "Each experiment's runs (pick the metrics with Columns):"
    assert lines[2] == f"  cascade/table1: {fake_server}/#/experiments/1/runs?workflowType=machine_learning"
    assert lines[-2] == "  (no view set: Forbidden)" and lines[-1] == "Ctrl-C stops it."


def test_a_sweeps_summary_is_the_mean_of_each_key_metric_over_the_runs_that_have_it():
    runs = pd.DataFrame({"metrics.test_error": [0.1, 0.3, np.nan], "metrics.n_sv": [10.0, 20.0, 30.0],
                         "metrics.fit_time_s": [np.nan] * 3, "metrics.train_error": [0.0, 0.1, 0.2]})
    assert summary_metrics(runs) == {"mean/test_error": pytest.approx(0.2), "mean/n_sv": 20.0}
    assert summary_metrics(pd.DataFrame()) == {}


def test_a_sweeps_parent_run_ends_with_the_means_over_its_finished_runs(store_uri, tmp_path):
    store = Store(store_uri)
    experiment_id = store.experiment_id("test/ui")
    parent = store.start_run(experiment_id, "sweep", {"svmrepro.kind": "sweep"})
    for status, test_error, n_sv in (("FINISHED", 0.1, 10), ("FINISHED", 0.2, 30), ("FAILED", 0.9, 90)):
        child = store.start_run(experiment_id, "job", {}, parent_run_id=parent)
        store.log_metrics(child, {"test_error": test_error, "n_sv": n_sv}, {})
        store.terminate(child, status)
    callback = PrepareStore()
    callback._sweep = (store, experiment_id, parent, tmp_path, {})  # a sweep folder without failures.jsonl
    callback._close(at_exit=False)
    metrics = store.run_metrics(parent)
    assert metrics["mean/test_error"] == pytest.approx(0.15) and metrics["mean/n_sv"] == 20
    assert "mean/fit_time_s" not in metrics


def test_the_wheel_installs_the_command():
    scripts = tomllib.loads((Path(__file__).resolve().parents[1] / "pyproject.toml").read_text())["project"]["scripts"]
    assert scripts["svmrepro-ui"] == "svmrepro.ui:main"
