"""What ``svmrepro-ui`` serves and prints: MLflow's UI on the project's store, each experiment's runs in
its "Model training" view, every run a row of the runs table with its metrics.

MLflow 3.17's UI opens an experiment in the view its workflow switch picks ("GenAI" or "Model
training", atop its sidebar): GenAI until a user picks the other, which the browser then
remembers. An experiment's ``mlflow.experimentKind`` tag does not change that; the switch reads
``workflowType`` from the page's address first, so a link that carries
``workflowType=machine_learning`` opens the runs table.

That table shows no metric until a user picks its column (its default columns: Source, Models,
Dataset), and, sorted by date as it is, it nests a sweep's runs under the sweep's parent run: one
row until expanded. A view of the UI's own "Share" button fixes both: an experiment tag
``mlflow.sharedViewState.<key>`` holds the view's columns and sort, and a link with
``viewStateShareKey=<key>`` opens it. :func:`runs_view` sorts by run name, which lists every run
as a row (the UI nests children only under a sort by date), with the training size, the seed and
the key metrics as columns, and the sweep's summary (``mean/<metric>``,
:mod:`svmrepro.store.sweep_run`) for its parent's row. :func:`serve` sets it on each experiment once
the server answers, through the server's REST API as that button does.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import urlparse

from svmrepro.errors import SvmReproError
from svmrepro.redact import redact
from svmrepro.store.location import TrackingError, ensure_store, probe, sqlite_path, store_file
from svmrepro.store.names import RUN_NAME_TAG
from svmrepro.store.sweep_run import SUMMARY_METRICS, summary_name

#: the UI's address of the experiments and of one experiment's runs table, in its "Model training" view
EXPERIMENTS_PAGE = "{url}/#/experiments?workflowType=machine_learning"
RUNS_TABLE = "{url}/#/experiments/{experiment_id}/runs?workflowType=machine_learning"
#: svmrepro's view of a runs table, as the UI's "Share" button keeps one: an experiment tag
VIEW_KEY = "svmrepro"
VIEW_TAG = f"mlflow.sharedViewState.{VIEW_KEY}"
#: the run name's column (the UI's id of it) and its width in pixels (the UI's: 190)
RUN_NAME_COLUMN = "attributes.`Run Name`"
RUN_NAME_WIDTH = 260
#: the params shown beside the metrics: what tells the runs of one algorithm apart
VIEW_PARAMS = ("dataset.n_train", "seed")
#: MLflow's switch of its job runner (huey consumers, about 100 threads, for GenAI jobs), on by
#: default: ``mlflow.environment_variables.MLFLOW_SERVER_ENABLE_JOB_EXECUTION``. The UI of runs needs none.
JOB_EXECUTION_ENV = "MLFLOW_SERVER_ENABLE_JOB_EXECUTION"
#: seconds between two requests to a starting server, a request's limit, and what a server has to end
POLL_S, REQUEST_TIMEOUT_S, STOP_S = 0.5, 30, 10
#: the addresses that mean "every interface": the links use the loopback one
WILDCARD_HOSTS = {"0.0.0.0": "127.0.0.1", "::": "::1", "": "127.0.0.1"}


def runs_view() -> dict:
    """The shared view's state as the UI reads it: sorted by run name (no nesting), :data:`VIEW_PARAMS`,
    the key metrics and the sweep's summary as columns, in that order (a column of a metric that no
    run of the experiment has is not shown), the run name wider than the UI's own."""
    columns = [*(f"params.`{p}`" for p in VIEW_PARAMS), *(f"metrics.`{m}`" for m in SUMMARY_METRICS),
               *(f"metrics.`{summary_name(m)}`" for m in SUMMARY_METRICS)]
    return {"orderByKey": f"tags.`{RUN_NAME_TAG}`", "orderByAsc": True, "selectedColumns": columns,
            "columnOrder": [RUN_NAME_COLUMN, *columns], "columnWidths": {RUN_NAME_COLUMN: RUN_NAME_WIDTH}}


def runs_table_url(url: str, experiment_id: str, view: bool = True) -> str:
    """The experiment's runs table in the "Model training" view, in svmrepro's view when ``view``."""
    table = RUNS_TABLE.format(url=url.rstrip("/"), experiment_id=experiment_id)
    return f"{table}&viewStateShareKey={VIEW_KEY}" if view else table


def links(experiments: dict[str, str], url: str, view: bool = True) -> list[str]:
    """The lines ``svmrepro-ui`` prints: the experiments page, then each experiment's runs table by
    name (``experiments``: names by id), in svmrepro's view when ``view``."""
    lines = [f"MLflow UI: {EXPERIMENTS_PAGE.format(url=url.rstrip('/'))}",
             "Each experiment's runs" + (", a row per run with its metrics (svmrepro's view of the table):"
                                         if view else " (pick the metrics with Columns):")]
    ordered = sorted(experiments.items(), key=lambda item: item[1])
    return lines + [f"  {name}: {runs_table_url(url, experiment_id, view)}" for experiment_id, name in ordered]


@dataclass(frozen=True)
class Server:
    """``mlflow server`` on the store ``uri``, on ``host``:``port`` with ``workers`` processes, its job
    runner off; ``options``: more of its options, as given after ``--``."""

    uri: str
    host: str = "127.0.0.1"
    port: int = 5000
    workers: int = 1
    options: tuple[str, ...] = ()

    @property
    def url(self) -> str:
        """Where this machine reaches it (the loopback address for a server on every interface)."""
        host = WILDCARD_HOSTS.get(self.host, self.host)
        return f"http://{f'[{host}]' if ':' in host else host}:{self.port}"

    def command(self) -> list[str]:
        """The server's command line. A SQLite store's artifacts are the ``mlartifacts`` folder beside
        it (where :class:`svmrepro.store.Store` puts a new experiment's), as its runs were logged."""
        path = sqlite_path(self.uri)
        artifacts = ["--default-artifact-root", str(path.resolve().parent / "mlartifacts")] if path else []
        return [sys.executable, "-m", "mlflow", "server", "--backend-store-uri", self.uri, *artifacts,
                "--host", self.host, "--port", str(self.port), "--workers", str(self.workers), *self.options]

    def env(self, environ: dict[str, str]) -> dict[str, str]:
        return {**environ, JOB_EXECUTION_ENV: "false"}


def check_store(uri: str) -> None:
    """Refuse, in one line, a store the UI cannot serve: a tracking server (it serves its own UI), a
    SQLite file that is not there or not whole, an in-memory or unreachable store."""
    if urlparse(uri).scheme in ("http", "https"):
        raise TrackingError(f"tracking URI {redact(uri)} is an MLflow server, which serves its own UI: "
                            f"open {redact(uri)} in a browser")
    path = store_file(uri)
    if path is None:
        probe(uri)
    elif not ensure_store(uri, create=False):  # looking makes no file, nor its folder
        raise TrackingError(f"no MLflow store at {path}: svmrepro-run and svmrepro-reproduce make it as they log "
                            "their first run (in the current folder); or name one with --tracking-uri")


def check_port(host: str, port: int) -> None:
    """Refuse a port another process listens on (another UI): the links would open that one."""
    try:
        family = socket.getaddrinfo(host or None, port, type=socket.SOCK_STREAM)[0][0]
        socket.create_server((host, port), family=family).close()
    except OSError as exc:
        raise SvmReproError(f"cannot listen on {host}:{port}: {exc.strerror or exc}; "
                            "another program (another UI?) has it: --port <another>") from None


def _request(url: str, endpoint: str, body: dict) -> dict:
    request = urllib.request.Request(f"{url}/api/2.0/mlflow/{endpoint}", data=json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json"}, method="POST")
    with urllib.request.urlopen(request, timeout=REQUEST_TIMEOUT_S) as answer:
        return json.loads(answer.read() or b"{}")


def answers(url: str) -> bool:
    """Whether the server at ``url`` answers ``/health``."""
    try:
        with urllib.request.urlopen(f"{url}/health", timeout=REQUEST_TIMEOUT_S) as answer:
            return answer.status == 200
    except (urllib.error.URLError, OSError):  # not listening yet, or still starting
        return False


def experiments(url: str) -> list[dict]:
    """Every active experiment the server at ``url`` serves, as its REST API gives them (id, name, tags)."""
    found, token = [], None
    while True:
        page = _request(url, "experiments/search", {"max_results": 1000, **({"page_token": token} if token else {})})
        found += page.get("experiments", [])
        token = page.get("next_page_token")
        if not token:
            return found


def has_runs(url: str, experiment: dict) -> bool:
    """Whether the experiment (as :func:`experiments` gives it) holds a run: MLflow's "Default" one, made with
    every store, usually holds none. True when the server does not say."""
    try:
        page = _request(url, "runs/search", {"experiment_ids": [experiment["experiment_id"]], "max_results": 1})
    except (urllib.error.URLError, OSError):
        return True
    return bool(page.get("runs"))


def share_views(url: str, found: list[dict]) -> None:
    """Set svmrepro's view (:func:`runs_view`) on each experiment of ``found`` that has another or none."""
    view = json.dumps(runs_view(), sort_keys=True)
    for experiment in found:
        if {t["key"]: t["value"] for t in experiment.get("tags", [])}.get(VIEW_TAG) != view:
            _request(url, "experiments/set-experiment-tag",
                     {"experiment_id": experiment["experiment_id"], "key": VIEW_TAG, "value": view})


def printed(url: str) -> list[str]:
    """What ``svmrepro-ui`` prints once the server at ``url`` answers: :func:`links`, in svmrepro's view
    once it is set; without it (a store this user may not write), or without the experiments, and why."""
    found, view, why = [], False, None
    try:
        found = experiments(url)
        share_views(url, found)
        view = True
    except (urllib.error.URLError, OSError) as exc:
        why = f"  ({'no view set' if found else 'no experiments listed'}: {getattr(exc, 'reason', exc)})"
    shown = [e for e in found if has_runs(url, e)] or found  # an empty store: its experiments all the same
    empty = sorted(e["name"] for e in found if e not in shown)
    return [*links({e["experiment_id"]: e["name"] for e in shown}, url, view),
            *([f"  (no runs yet: {', '.join(empty)})"] if empty else []), *([why] if why else []), "Ctrl-C stops it."]


def serve(server: Server, environ: dict[str, str], say: Callable[[str], None]) -> int:
    """Start ``server``, print :func:`printed` once it answers, and wait for its end; its exit code.

    A stop (Ctrl-C, SIGTERM) goes through: :func:`svmrepro.signals.install` has stopped the server
    by then; any other exception stops it here."""
    # its log to stderr: stdout holds the lines printed here alone, the links among them
    process = subprocess.Popen(server.command(), env=server.env(environ), stdout=sys.stderr.fileno())
    try:
        while not answers(server.url):
            if process.poll() is not None:
                raise SvmReproError(f"the MLflow server ended (exit code {process.returncode}) before it "
                                    "answered; its lines are above")
            time.sleep(POLL_S)
        say("\n".join(printed(server.url)))
        return process.wait()
    finally:
        if process.poll() is None:
            process.terminate()
            try:
                process.wait(timeout=STOP_S)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
