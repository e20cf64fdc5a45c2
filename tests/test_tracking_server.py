"""Team tracking: a 2-job joblib sweep logs to an ``mlflow server`` with a PostgreSQL backend store,
a shared artifact root and MLflow's basic-auth app (README, "Team tracking server"), and every run
reads back through the REST API; an anonymous request is refused. A sweep that logs straight to
PostgreSQL with the password in ``tracking.uri``, a reproduction with it in ``--tracking-uri`` and
a run that fails leave the password nowhere: not in the runs' params, tags or artifacts, not in
Hydra's files or the results, not on the console, not in their child processes' command lines.

Runs when ``SVMREPRO_TEST_POSTGRES_URI`` names a PostgreSQL database whose user may create
databases (``.ci/run`` starts PostgreSQL on loopback and sets it); each session gets a fresh
database, dropped afterwards.
"""

import base64
import contextlib
import json
import os
import subprocess
import sys
import time
import urllib.error
import urllib.request
import uuid
from unittest import mock
from urllib.parse import quote, urlsplit

import forked_cli
import psutil
import pytest
from mlflow.tracking import MlflowClient
from test_end_to_end import EXPERIMENT, NARROWED, _sweep
from tracking_servers import NEEDS_POSTGRES, POSTGRES_URI, mlflow_server, new_database, sqlalchemy_uri

pytestmark = NEEDS_POSTGRES
METRICS = {"n_train", "n_test", "n_sv", "train_error", "test_error", "fit_time_s", "fit_cpu_s", "predict_time_s"}
#: the basic-auth app's admin, created at its first start; the sweep logs as this user
ADMIN, ADMIN_PASSWORD = "admin", f"admin-{uuid.uuid4().hex}"


@pytest.fixture(scope="module")
def database():
    """The server's database."""
    with new_database() as uri:
        yield uri


def _auth(user: str | None) -> dict[str, str]:
    if user is None:
        return {}
    return {"Authorization": "Basic " + base64.b64encode(f"{user}:{ADMIN_PASSWORD}".encode()).decode()}


def _get(url: str, user: str | None = ADMIN) -> bytes:
    with urllib.request.urlopen(urllib.request.Request(url, headers=_auth(user)), timeout=10) as answer:
        return answer.read()


def _post(url: str, body: dict, user: str | None = ADMIN) -> dict:
    headers = {"Content-Type": "application/json", **_auth(user)}
    request = urllib.request.Request(url, data=json.dumps(body).encode(), headers=headers, method="POST")
    with urllib.request.urlopen(request, timeout=10) as answer:
        return json.loads(answer.read())


@pytest.fixture(scope="module")
def server(database, tmp_path_factory):
    """``mlflow server --app-name basic-auth`` on PostgreSQL with a shared artifact root; (url, artifact root)."""
    root = tmp_path_factory.mktemp("tracking_server")
    # the README's auth config: users in their own database, the admin created at the first start
    (root / "basic_auth.ini").write_text(
        f"[mlflow]\ndefault_permission = READ\ndatabase_uri = sqlite:///{root / 'basic_auth.db'}\n"
        f"admin_username = {ADMIN}\nadmin_password = {ADMIN_PASSWORD}\n"
        "authorization_function = mlflow.server.auth:authenticate_request_basic_auth\n"
    )
    env = {"MLFLOW_AUTH_CONFIG_PATH": str(root / "basic_auth.ini"), "MLFLOW_FLASK_SERVER_SECRET_KEY": uuid.uuid4().hex,
           "MLFLOW_SERVER_ENABLE_JOB_EXECUTION": "false"}  # the README's environment of the server
    with mlflow_server(sqlalchemy_uri(database), root, "--app-name", "basic-auth", env=env) as url:
        yield url, root / "artifacts"


@pytest.fixture(scope="module")
def runs(server, tmp_path_factory):
    """The sweep's result runs as the REST API returns them (its parent run, tagged ``svmrepro.kind=sweep``,
    left out)."""
    url, _ = server
    credentials = {"MLFLOW_TRACKING_USERNAME": ADMIN, "MLFLOW_TRACKING_PASSWORD": ADMIN_PASSWORD}
    with mock.patch.dict(os.environ, credentials):  # MLflow's client authenticates with them
        _sweep(url, tmp_path_factory.mktemp("sweep"))
    experiment = json.loads(_get(f"{url}/api/2.0/mlflow/experiments/get-by-name?experiment_name={quote(EXPERIMENT)}"))
    found = _post(f"{url}/api/2.0/mlflow/runs/search", {"experiment_ids": [experiment["experiment"]["experiment_id"]],
                                                        "filter": "tags.`svmrepro.kind` = 'result'"})
    return found.get("runs", [])


def test_both_jobs_finish_on_the_server_with_their_metrics(runs):
    assert len(runs) == 2
    assert {run["info"]["status"] for run in runs} == {"FINISHED"}
    n_train = []
    for run in runs:
        metrics = {metric["key"]: metric["value"] for metric in run["data"]["metrics"]}
        assert METRICS <= set(metrics), METRICS - set(metrics)
        n_train.append(metrics["n_train"])
    assert sorted(n_train) == [150, 200]


def test_each_run_has_its_config_in_the_shared_artifact_root(server, runs):
    url, artifacts = server
    for run in runs:
        info = run["info"]
        params = {param["key"]: param["value"] for param in run["data"]["params"]}
        listed = json.loads(_get(f"{url}/api/2.0/mlflow/artifacts/list?run_id={info['run_id']}"))
        assert "config.yaml" in {entry["path"] for entry in listed.get("files", [])}
        config = _get(f"{url}/get-artifact?path=config.yaml&run_uuid={info['run_id']}").decode()
        assert f"n_train: {params['dataset.n_train']}" in config
        # the server keeps it under --artifacts-destination, where the team's file share would be
        on_disk = artifacts / info["experiment_id"] / info["run_id"] / "artifacts" / "config.yaml"
        assert on_disk.read_text() == config


def test_the_server_keeps_the_runs_in_postgresql(database, runs):
    import psycopg2

    with psycopg2.connect(database) as connection, connection.cursor() as cursor:
        cursor.execute("SELECT run_uuid, status FROM runs")
        stored = dict(cursor.fetchall())
    connection.close()
    # the two jobs' runs and the sweep's parent run, all ended
    assert len(stored) == 3 and set(stored.values()) == {"FINISHED"}
    assert {run["info"]["run_id"] for run in runs} < set(stored)


@pytest.mark.parametrize(
    ("method", "path", "body"),
    [
        ("GET", "/api/2.0/mlflow/experiments/search?max_results=10", None),
        ("POST", "/api/2.0/mlflow/runs/delete", "run_id"),
    ],
    ids=["read", "delete"],
)
def test_the_server_refuses_anonymous_requests(server, runs, method, path, body):
    url, _ = server
    data = json.dumps({"run_id": runs[0]["info"]["run_id"]}).encode() if body else None
    request = urllib.request.Request(f"{url}{path}", data=data, method=method,
                                     headers={"Content-Type": "application/json"})
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(request, timeout=10)
    assert refused.value.code == 401
    assert {run["info"]["lifecycle_stage"] for run in runs} == {"active"}
    assert _post(f"{url}/api/2.0/mlflow/runs/search", {"experiment_ids": [runs[0]["info"]["experiment_id"]]})["runs"]


def _watched(command: list[str], cwd, console) -> tuple[int, str, list[str]]:
    """Run ``command``; (exit code, its stdout and stderr, the command lines of its descendants,
    read every 0.1 s while it ran)."""
    with open(console, "w+") as out:
        process = forked_cli.start(command, cwd=cwd, stdout=out, stderr=subprocess.STDOUT)
        seen, deadline = set(), time.monotonic() + 300
        while process.poll() is None and time.monotonic() < deadline:
            for child in psutil.Process(process.pid).children(recursive=True):
                with contextlib.suppress(psutil.Error):  # ended since it was listed
                    seen.add(" ".join(child.cmdline()))
            time.sleep(0.1)
        if process.poll() is None:
            process.kill()
        process.wait()
        out.seek(0)
        return process.returncode, out.read(), sorted(seen)


def test_a_password_in_the_tracking_uri_is_stored_printed_and_shown_nowhere(tmp_path):
    """A sweep straight to PostgreSQL, the password in ``tracking.uri``, then ``svmrepro-reproduce
    --tracking-uri`` of an experiment (its sweep in a child process, its output logged to MLflow):
    both run, and no file they wrote (Hydra's multirun.yaml and .hydra/*.yaml, the job logs, the
    runs' artifacts, the results), no param, tag or artifact of any run, no console line and no
    command line of their child processes (joblib workers, the reproduction's sweep) holds the
    password. The commands started here hold it: the user typed it there."""
    password = urlsplit(POSTGRES_URI).password
    assert password
    work, console = tmp_path / "work", tmp_path / "console"
    work.mkdir()
    with new_database() as database:
        store = sqlalchemy_uri(database)
        sweep = [
            sys.executable, "-m", "svmrepro", "-m", "dataset.n_train=40,60", "dataset.n_test=40",
            "algorithm=svc_linear", "hydra/launcher=parallel", "hydra.launcher.n_jobs=2", f"tracking.uri={store}",
            f"tracking.artifact_root={work / 'artifacts'}", f"hydra.sweep.dir={work / 'sweep'}",
        ]
        code, swept, sweep_children = _watched(sweep, work, console)
        assert code == 0, swept[-3000:]
        reproduce = [sys.executable, "-m", "svmrepro.reproduce", "--experiment", EXPERIMENT, "--tracking-uri", store,
                     "--results-dir", str(work / "results"), *NARROWED]
        code, reproduced, reproduce_children = _watched(reproduce, work, console)
        assert code == 0, reproduced[-3000:]
        client = MlflowClient(store)
        runs = client.search_runs([e.experiment_id for e in client.search_experiments()])
    assert f"{urlsplit(store).username}:***@" in swept  # the store is named, masked
    assert any(f"experiment={EXPERIMENT}" in line for line in reproduce_children)  # its sweep was watched
    assert any("loky" in line or "joblib" in line for line in sweep_children)  # and the workers
    for text in [swept, reproduced, *sweep_children, *reproduce_children]:
        assert password not in text
    written = [path for path in work.rglob("*") if path.is_file()]
    assert {".hydra/hydra.yaml", "multirun.yaml", "config.yaml", f"{EXPERIMENT.split('/')[1]}.md"} <= {
        path.relative_to(path.parents[1]).as_posix() if path.parent.name == ".hydra" else path.name for path in written
    }
    assert [path for path in written if password.encode() in path.read_bytes()] == []
    # every run: the sweeps' parents, their jobs, the output's report run; their artifacts are files above
    assert {run.data.tags.get("svmrepro.kind") for run in runs} == {"sweep", "result", "report"}
    for run in runs:
        assert run.info.status == "FINISHED"
        assert password not in json.dumps([run.data.params, run.data.tags])
        assert urlsplit(run.info.artifact_uri).path.startswith(str(work))


def test_a_run_that_fails_unexpectedly_prints_its_error_without_the_password(tmp_path):
    """A single run whose fit raises (not a bad value svmrepro checks): Hydra would print "Error executing
    job with overrides: [...]" with the URI in clear; svmrepro-run prints the traceback and one line, masked."""
    password = urlsplit(POSTGRES_URI).password
    with new_database() as database:
        store = sqlalchemy_uri(database)
        command = [sys.executable, "-m", "svmrepro", "dataset.n_train=40", "algorithm=svc", "algorithm.kernel=precomputed",
                   f"tracking.uri={store}", f"hydra.run.dir={tmp_path / 'run'}"]
        done = forked_cli.run(command, capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert done.returncode == 1, done.stderr[-3000:]
    assert done.stderr.splitlines()[-1].startswith("svmrepro-run: error: the run failed: ValueError: Precomputed matrix")
    assert "Error executing job" not in done.stderr and "ValueError" in done.stdout  # the traceback, logged
    for text in [done.stdout, done.stderr, *(p.read_text() for p in tmp_path.rglob("*") if p.is_file())]:
        assert password not in text


def test_a_test_database_is_dropped_though_a_connection_of_ours_is_still_open_on_it():
    """new_database's drop ends our role's connections itself (a plain DROP, which also ends an autovacuum
    worker, where ``WITH (FORCE)`` refused one on CI's PostgreSQL 15): a connection left open does not keep
    the database."""
    psycopg2 = pytest.importorskip("psycopg2")
    with new_database() as uri:
        name = urlsplit(uri).path.lstrip("/")
        left_open = psycopg2.connect(uri)
    try:
        with contextlib.closing(psycopg2.connect(POSTGRES_URI)) as admin, admin.cursor() as cursor:
            cursor.execute("SELECT count(*) FROM pg_database WHERE datname = %s", (name,))
            assert cursor.fetchone() == (0,)
        with pytest.raises(psycopg2.OperationalError):  # ended by the drop
            with left_open.cursor() as cursor:
                cursor.execute("SELECT 1")
    finally:
        left_open.close()
