"""Sweeps against an ``mlflow server``, run as a user runs them (issue 32, item 4): runs that log one
data set at the same moment all keep it, a 6-job sweep of one data set loses no job, repeated, and a
``submitit_local`` sweep logs to the PostgreSQL-backed server and resumes. A job that fails inside
the store is named with its error in the sweep's summary.

The server tests on PostgreSQL run when ``SVMREPRO_TEST_POSTGRES_URI`` is set (``.ci/run`` sets
it), each module on a fresh database; the SQLite-backed server needs nothing.
"""

import json
import os
import subprocess
import sys
import threading
import uuid
from concurrent.futures import ThreadPoolExecutor

import forked_cli
import numpy as np
import pytest
import sqlalchemy
from mlflow.tracking import MlflowClient
from tracking_servers import NEEDS_POSTGRES, POSTGRES_URI, mlflow_server, new_database, sqlalchemy_uri

from svmrepro.store import ERROR_MESSAGE_TAG, Store
from svmrepro.store.client import DATASET_ATTEMPTS
from svmrepro.store.names import KIND_TAG, RESULT_KIND, RUN_KEY_TAG
from svmrepro.store.processes import process_tags

#: runs logging one data set at once, as the issue's 6-job sweeps did; rounds of them per store
AT_ONCE, ROUNDS = 6, 2
#: a seconds-long job: SVC on 60 points of one data set (the seed draws the data, so the
#: six jobs of a sweep differ by C, and each repetition's seed makes a data set new to the experiment)
TINY = ["dataset=gaussian_clouds", "dataset.n_train=60", "dataset.n_test=60", "dataset.n_features=4",
        "dataset.n_informative=2", "algorithm=svc"]
SIX_C = "algorithm.C=0.25,0.5,1,2,4,8"
SUMMARY = "jobs failed (the same command retries only them):"
#: these servers serve tracking alone, as the README's team server does (tests/test_tracking_server.py): MLflow's job
#: runner (its GenAI jobs, on by default with a database store) would start a runner and a consumer process per job
#: kind, about 40 s of CPU a server, that no test here reads
TRACKING_ONLY = {"MLFLOW_SERVER_ENABLE_JOB_EXECUTION": "false"}


@pytest.fixture(scope="module")
def sqlite_server(tmp_path_factory):
    """``mlflow server`` on a fresh SQLite file; (url, backend store URI)."""
    root = tmp_path_factory.mktemp("sqlite_server")
    store = f"sqlite:///{root / 'mlflow.db'}"
    with mlflow_server(store, root, env=TRACKING_ONLY) as url:
        yield url, store


@pytest.fixture(scope="module")
def postgres_server(tmp_path_factory):
    """``mlflow server`` on a fresh PostgreSQL database; (url, backend store URI)."""
    if not POSTGRES_URI:
        pytest.skip(NEEDS_POSTGRES.kwargs["reason"])
    with new_database() as database:
        store = sqlalchemy_uri(database)
        with mlflow_server(store, tmp_path_factory.mktemp("postgres_server"), env=TRACKING_ONLY) as url:
            yield url, store


def _log_at_once(stores: list[Store]) -> tuple[str, list[str], list[BaseException | None]]:
    """A run of a new experiment per store of ``stores`` (each its own MLflow client) logs the same
    data set, all released by one barrier; (experiment id, run ids, each call's error)."""
    experiment_id = stores[0].experiment_id(f"race-{uuid.uuid4().hex[:8]}")
    run_ids = [stores[0].start_run(experiment_id, f"run-{i}", {}) for i in range(AT_ONCE)]
    barrier, X, y = threading.Barrier(AT_ONCE), np.zeros((20, 3)), np.zeros(20)

    def log(i):
        barrier.wait()
        stores[i].log_dataset(run_ids[i], "clouds", "d" * 64, {"generator": "test"},
                              features={"X_train": X}, targets={"y_train": y})

    with ThreadPoolExecutor(AT_ONCE) as pool:
        calls = [pool.submit(log, i) for i in range(AT_ONCE)]
    return experiment_id, run_ids, [call.exception() for call in calls]


@pytest.mark.parametrize("server", ["sqlite_server", "postgres_server"])
def test_runs_logging_one_data_set_at_once_all_link_the_one_row(request, server):
    """Before the fix some of the six calls of most rounds failed on the data sets' unique constraint."""
    url, store = request.getfixturevalue(server)
    client, engine, stores = MlflowClient(url), sqlalchemy.create_engine(store), [Store(url) for _ in range(AT_ONCE)]
    try:
        for _ in range(ROUNDS):
            experiment_id, run_ids, errors = _log_at_once(stores)
            assert errors == [None] * AT_ONCE, [str(error).splitlines()[0] for error in errors if error]
            for run_id in run_ids:
                [linked] = client.get_run(run_id).inputs.dataset_inputs
                assert (linked.dataset.name, linked.dataset.digest) == ("clouds", "d" * 36)
            with engine.connect() as connection:
                rows = connection.execute(sqlalchemy.text("SELECT count(*) FROM datasets WHERE experiment_id = :id"),
                                          {"id": int(experiment_id)}).scalar()
            assert rows == 1
    finally:
        engine.dispose()


def _sweep(work, *arguments) -> subprocess.CompletedProcess:
    """``svmrepro-run -m`` of :data:`TINY` with ``arguments``, run in folder ``work``."""
    command = [sys.executable, "-m", "svmrepro", "-m", *TINY, *arguments]
    return forked_cli.run(command, capture_output=True, text=True, timeout=300, cwd=work)


def _result_runs(store: str, seed: int):
    """The result runs of seed ``seed`` (the sweep's parent runs left out)."""
    client = MlflowClient(store)
    query = f"tags.`svmrepro.kind` = 'result' and tags.seed = '{seed}'"
    return client.search_runs([client.get_experiment_by_name("adhoc").experiment_id], query, max_results=100)


@NEEDS_POSTGRES
@pytest.mark.parametrize("seed", [0, 1])
def test_a_six_job_sweep_of_one_data_set_loses_no_job(postgres_server, tmp_path, seed):
    """Six jobs, three at a time, of one data set new to the experiment each time (its seed), all
    logging to the PostgreSQL-backed server: every job FINISHED with the data set as its input."""
    url, _ = postgres_server
    done = _sweep(tmp_path, SIX_C, f"seed={seed}", "hydra/launcher=parallel", "hydra.launcher.n_jobs=3",
                  f"tracking.uri={url}", f"hydra.sweep.dir={tmp_path / 'sweep'}")
    assert done.returncode == 0, done.stderr[-3000:]
    assert "6 done, 0 skipped, 0 failed" in done.stdout + done.stderr
    runs = _result_runs(url, seed)
    assert len(runs) == 6 and {run.info.status for run in runs} == {"FINISHED"}
    assert len({run.data.tags["data_fingerprint"] for run in runs}) == 1  # one data set
    for run in runs:  # its training set (its test set is an input of its own, in the context "testing")
        [linked] = [i for i in run.inputs.dataset_inputs if i.tags[0].value == "training"]
        assert linked.dataset.digest == run.data.tags["data_fingerprint"][:36]


@NEEDS_POSTGRES
def test_a_submitit_local_sweep_logs_to_the_server_and_resumes(postgres_server, tmp_path):
    """hydra-submitit-launcher's own local launcher: each job its own process, as on a SLURM node."""
    url, _ = postgres_server
    arguments = ["algorithm.C=1,2", "seed=7", "hydra/launcher=submitit_local", f"tracking.uri={url}"]
    first = _sweep(tmp_path, *arguments, f"hydra.sweep.dir={tmp_path / 'first'}")
    assert first.returncode == 0, first.stderr[-3000:]
    assert "2 done, 0 skipped, 0 failed" in first.stdout + first.stderr
    runs = _result_runs(url, 7)
    assert len(runs) == 2 and {run.info.status for run in runs} == {"FINISHED"}
    assert all(len(run.inputs.dataset_inputs) == 2 for run in runs)  # the training and the test set
    again = _sweep(tmp_path, *arguments, f"hydra.sweep.dir={tmp_path / 'again'}")
    assert again.returncode == 0, again.stderr[-3000:]
    assert "0 done, 2 skipped, 0 failed" in again.stdout + again.stderr
    assert sorted(run.info.run_id for run in _result_runs(url, 7)) == sorted(run.info.run_id for run in runs)


#: ``sitecustomize`` of the failing store's jobs: every ``log_inputs`` answers as a server whose
#: PostgreSQL refused the data set's row, and is counted
FAILING_STORE = '''
import os
from mlflow.exceptions import RestException
from mlflow.tracking import MlflowClient

def log_inputs(self, run_id, datasets=None, models=None):
    with open(os.environ["LOG_INPUTS_CALLS"], "a") as calls:
        calls.write(run_id + "\\n")
    raise RestException({"error_code": "BAD_REQUEST", "message": '(psycopg2.errors.UniqueViolation) duplicate key '
                         'value violates unique constraint "dataset_pk"\\nDETAIL:  Key (experiment_id, name, digest)'})

MlflowClient.log_inputs = log_inputs
'''


def test_a_job_failing_in_the_store_is_named_with_its_error(tmp_path, monkeypatch):
    """The issue's summary said "no error recorded" for the job the race failed (the sweep folder was
    looked for under a time resolved anew in the job). A store that keeps refusing is tried
    :data:`DATASET_ATTEMPTS` times, then the run ends FAILED and the summary names the error."""
    injected = tmp_path / "failing_store"
    injected.mkdir()
    (injected / "sitecustomize.py").write_text(FAILING_STORE)
    calls = tmp_path / "log_inputs_calls"
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(injected), os.environ.get("PYTHONPATH")])))
    monkeypatch.setenv("LOG_INPUTS_CALLS", str(calls))
    store = f"sqlite:///{tmp_path / 'mlflow.db'}"
    # the sweep folder Hydra's default names: by the time, to the microsecond, as in the sweeps
    done = _sweep(tmp_path, "seed=0", "hydra/launcher=parallel", f"tracking.uri={store}",
                  "hydra.sweep.dir=sweeps/${now:%H-%M-%S-%f}")
    assert done.returncode == 1, done.stderr[-3000:]
    error = 'RestException: BAD_REQUEST: (psycopg2.errors.UniqueViolation) duplicate key value violates unique ' \
            'constraint "dataset_pk"'
    [line] = done.stderr[done.stderr.index(SUMMARY):].splitlines()[1:]
    assert line.strip().startswith("#0 ") and line.endswith(f": {error}")
    [run] = _result_runs(store, 0)
    assert run.info.status == "FAILED" and run.data.tags[ERROR_MESSAGE_TAG].startswith("BAD_REQUEST: (psycopg2")
    assert calls.read_text().splitlines() == [run.info.run_id] * DATASET_ATTEMPTS
    [sweep_dir] = (tmp_path / "sweeps").iterdir()
    assert [json.loads(event)["line"] for event in (sweep_dir / "failures.jsonl").read_text().splitlines()] == [
        line.strip()]


def test_identical_runs_started_at_once_on_a_server_fit_once(sqlite_server, tmp_path):
    """Six ``svmrepro-run`` of one configuration (a 2-s fit) at once against an ``mlflow server``, which
    has no claim as a SQLite file has (issue 46, item 4): one fits, the five others skip it."""
    from test_faults import identical_runs_at_once

    url, _ = sqlite_server
    codes, outputs = identical_runs_at_once(tmp_path, url, 6, "seed=3", "label=at_once")
    shown = "\n=====\n".join(outputs)  # each process's output, one after another
    assert codes == [0] * 6, shown
    assert sum(" FINISHED: " in out for out in outputs) == 1, shown
    assert sum("skip: run" in out for out in outputs) == 5, shown
    client = MlflowClient(url)
    runs = client.search_runs([client.get_experiment_by_name("adhoc").experiment_id],
                              filter_string="tags.label = 'at_once'")
    assert [run.info.status for run in runs] == ["FINISHED"]


def _keyed_run(client: MlflowClient, experiment_id: str, key: str, **kwargs) -> str:
    """A RUNNING result run of run key ``key`` held by this (live) process."""
    tags = {RUN_KEY_TAG: key, KIND_TAG: RESULT_KIND, **process_tags()}
    return client.create_run(experiment_id, tags=tags, **kwargs).info.run_id


def test_a_run_first_at_its_first_look_yields_to_an_earlier_run_seen_at_its_second(sqlite_server):
    """The race of the six at once: run B asked for before run A but seen after A looked. A looks again after
    the settle time (Store.first_of_key), sees B first, and yields to it; B, first at both looks, fits."""
    url, _ = sqlite_server
    store, client, key = Store(url), MlflowClient(url), uuid.uuid4().hex
    experiment_id = store.experiment_id(f"settle-{key[:8]}")
    a = _keyed_run(client, experiment_id, key)
    a_started = client.get_run(a).info.start_time
    with ThreadPoolExecutor(1) as pool:
        looked = pool.submit(store.first_of_key, experiment_id, key, a)
        b = _keyed_run(client, experiment_id, key, start_time=a_started - 1000)  # within A's settle time
        yielded_to = looked.result(timeout=60)
    assert yielded_to is not None and yielded_to.info.run_id == b
    assert store.first_of_key(experiment_id, key, b) is None


def test_a_wait_for_a_run_that_yielded_in_turn_follows_to_the_run_it_yielded_to(sqlite_server):
    """C waited for A; A then yielded to B and deleted its run (as svmrepro.runner does): C's wait ends with
    B's end, not with A's deleted run still RUNNING."""
    url, _ = sqlite_server
    store, client, key = Store(url), MlflowClient(url), uuid.uuid4().hex
    experiment_id = store.experiment_id(f"follow-{key[:8]}")
    a = _keyed_run(client, experiment_id, key)
    b = _keyed_run(client, experiment_id, key, start_time=client.get_run(a).info.start_time - 1000)
    store.delete_run(a)
    with ThreadPoolExecutor(1) as pool:
        waited = pool.submit(store.wait_until_ended, a, 0.1)
        client.set_terminated(b, "FINISHED")
        ended = waited.result(timeout=60)
    assert ended.info.run_id == b and ended.info.status == "FINISHED"
