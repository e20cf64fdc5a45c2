"""The MLflow UI in a real headless browser (Debian's chromium, driven by playwright), served by
``svmrepro-ui`` over a store made by a small sweep and its report: the sweep's parent run, a child
run by its name with its ``n_sv`` and ``test_error``, and the report's picture rendered as an image;
the link ``svmrepro-ui`` prints opens the runs table (not the GenAI view) with every run a row and its
metrics as columns, the parent run shows what the sweep ran and its summary, and a run its
description, its params without Hydra's keys, and its data splits.

Only the installed chromium is used (``executable_path``): ``playwright install`` downloads
browsers, which this test never does. ``.ci/run`` installs chromium, so CI runs it.
"""

import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import psutil
import pytest
from mlflow import MlflowClient
from PIL import Image
from playwright.sync_api import sync_playwright
from stores import copy_store

from svmrepro.reproduce import main as reproduce
from test_ui import EXPERIMENT, OUTPUT, SMALL, STARTUP_S, _free_port

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed (.ci/run installs it)")

#: milliseconds the UI has to show something (a shared 2-core machine)
WAIT_MS = 60_000


def _start_ui(root: Path, uri: str) -> tuple[subprocess.Popen, str, list[str]]:
    """``svmrepro-ui`` on the store ``uri`` and a free port, as a user starts it (its errors in
    ``root/ui.log``); its process, URL and the lines it printed, once it printed them all."""
    port = _free_port()
    command = [str(Path(sys.executable).with_name("svmrepro-ui")), "--tracking-uri", uri, "--port", str(port)]
    with open(root / "ui.log", "w") as log:
        process = subprocess.Popen(command, cwd=root, stdout=subprocess.PIPE, stderr=log, text=True)
    lines: list[str] = []
    done = threading.Event()

    def read() -> None:
        for line in process.stdout:
            lines.append(line.rstrip("\n"))
            if line.startswith("Ctrl-C stops it."):
                done.set()

    threading.Thread(target=read, daemon=True).start()
    deadline = time.monotonic() + STARTUP_S
    while not done.wait(0.5):
        assert process.poll() is None, (root / "ui.log").read_text()[-3000:]
        assert time.monotonic() < deadline, f"svmrepro-ui printed no links in {STARTUP_S} s: {lines}"
    return process, f"http://127.0.0.1:{port}", lines


@pytest.fixture(scope="module")
def ui(tmp_path_factory, empty_store):
    """A 2-job sweep (``svmrepro-run -m``), its output built and logged by svmrepro-reproduce, and
    ``svmrepro-ui`` over the store; yields its URL, the experiment's id, its runs by kind (sweep,
    result, report), the folder of the built output, the store's URI, the lines svmrepro-ui printed
    and its process. At the end it is stopped by SIGTERM, as a stop ends it: its server first."""
    root = tmp_path_factory.mktemp("browser")
    uri = copy_store(empty_store, root / "mlflow.db")
    sweep = [str(Path(sys.executable).with_name("svmrepro-run")), "-m", "--quiet", f"experiment={EXPERIMENT}",
             "mode=quick", f"tracking.uri={uri}", *SMALL]
    done = subprocess.run(sweep, check=False, cwd=root, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    args = ["--experiment", EXPERIMENT, "--no-run", "--tracking-uri", uri, "--results-dir", str(root / "results")]
    assert reproduce([*args, *(f"--override={o}" for o in SMALL)]) == 0
    client = MlflowClient(uri)
    experiment_id = client.get_experiment_by_name(EXPERIMENT).experiment_id
    runs = {kind: client.search_runs([experiment_id], f"tags.`svmrepro.kind` = '{kind}'")
            for kind in ("sweep", "result", "report")}
    process, url, printed = _start_ui(root, uri)
    server = psutil.Process(process.pid).children(recursive=True)
    try:
        yield url, experiment_id, runs, root / "results" / "cross_training", uri, printed, process
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=60)
        finally:
            for left in psutil.Process(process.pid).children(recursive=True) if process.poll() is None else []:
                left.kill()
            process.kill()
    assert process.returncode == 128 + signal.SIGTERM
    assert (root / "ui.log").read_text().splitlines()[-1] == "svmrepro-ui: stopped by SIGTERM"
    assert not [p for p in server if p.is_running() and p.status() != psutil.STATUS_ZOMBIE]


@pytest.fixture(scope="module")
def page():
    with sync_playwright() as driver:
        # --no-sandbox: chromium refuses to start as root (a CI container) with its sandbox on
        browser = driver.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        yield browser.new_page(viewport={"width": 1600, "height": 1000})
        browser.close()


def _number(row_text: str) -> float:
    """The value of a metric row of the run page: its name, then its value."""
    return float(row_text.split()[-1])


def test_the_ui_shows_the_sweep_its_runs_and_the_report_picture(ui, page):
    url, experiment_id, runs, outputs, *_ = ui
    (parent,), (report,) = runs["sweep"], runs["report"]
    assert len(runs["result"]) == 2
    png_width = Image.open(outputs / f"{OUTPUT}.png").width

    # the runs table: the sweep's parent run, collapsed; expanded, its child runs by name
    page.goto(f"{url}/#/experiments/{experiment_id}/runs")
    parent_row = page.get_by_role("row").filter(has_text=parent.info.run_name).first
    parent_row.wait_for(timeout=WAIT_MS)
    child = min(runs["result"], key=lambda found: found.info.run_name)
    assert "n_train=120" in child.info.run_name
    assert page.get_by_role("link", name=child.info.run_name).count() == 0  # nested: hidden until expanded
    parent_row.get_by_role("button").first.click()
    page.get_by_role("link", name=child.info.run_name).first.click()

    # the child run's page: its name, its n_sv and test_error
    page.get_by_role("heading", name=child.info.run_name).wait_for(timeout=WAIT_MS)
    for metric in ("n_sv", "test_error"):
        row = page.get_by_role("row").filter(has=page.get_by_text(metric, exact=True)).first
        row.wait_for(timeout=WAIT_MS)
        assert _number(row.inner_text()) == pytest.approx(child.data.metrics[metric], rel=1e-3)

    # the report run: its HTML page shows the picture (a Markdown artifact would show its reference as text)
    page.goto(f"{url}/#/experiments/{experiment_id}/runs/{report.info.run_id}/artifacts")
    page.locator(f'[artifact-name="{OUTPUT}.html"]').click()
    picture = page.frame_locator("iframe").first.locator(f'img[alt="{OUTPUT}"]')
    picture.wait_for(timeout=WAIT_MS)
    assert picture.evaluate("img => img.complete && img.naturalWidth") == png_width
    # and the PNG itself, in MLflow's image viewer
    page.locator(f'[artifact-name="{OUTPUT}.png"]').click()
    page.wait_for_function(f"() => [...document.images].some(img => img.complete && img.naturalWidth === {png_width})",
                           timeout=WAIT_MS)


def test_svmrepro_ui_serves_the_store_with_no_job_runner_and_prints_each_experiments_link(ui):
    url, experiment_id, _, _, _, printed, process = ui
    assert printed[0] == f"svmrepro-ui: MLflow's UI on {ui[4]} at {url}, its job runner off; starting"
    assert printed[1] == f"MLflow UI: {url}/#/experiments?workflowType=machine_learning"
    assert f"  {EXPERIMENT}: {url}/#/experiments/{experiment_id}/runs?workflowType=machine_learning" \
        "&viewStateShareKey=svmrepro" in printed
    assert printed[-1] == "Ctrl-C stops it."
    commands = [" ".join(p.cmdline()) for p in psutil.Process(process.pid).children(recursive=True)]
    assert any("mlflow server" in c and "--host 127.0.0.1" in c for c in commands), commands
    assert not [c for c in commands if "huey" in c], commands  # MLflow's job runner: ten consumers otherwise


def test_the_link_svmrepro_ui_prints_opens_every_run_with_its_metrics(ui, page):
    """MLflow 3.17 opens an experiment in its GenAI view ("Observability", "Training runs") unless
    the address asks for "Model training", shows no metric column until one is picked, and nests a
    sweep's runs under its parent run: the printed link opens svmrepro's view, every run a row with
    its metrics, size and seed, the sweep's row with its summary."""
    url, experiment_id, runs, _, _, printed, _ = ui
    (parent,) = runs["sweep"]
    (link,) = [line.split(": ", 1)[1] for line in printed if line.strip().startswith(f"{EXPERIMENT}: ")]
    page.set_viewport_size({"width": 2400, "height": 1000})  # the grid draws only the columns in view
    try:
        page.goto(link)

        def cells(run) -> dict[str, str]:
            """The run's row: its cells by column, the run name's part of the row and the rest are two rows."""
            named = page.locator(".ag-pinned-left-cols-container [role=row]").filter(has_text=run.info.run_name)
            named.first.wait_for(timeout=WAIT_MS)
            index = named.first.get_attribute("row-index")
            row = page.locator(f".ag-center-cols-container [role=row][row-index='{index}']")
            row.locator("[col-id]").first.wait_for(timeout=WAIT_MS)
            return {cell.get_attribute("col-id"): cell.inner_text() for cell in row.locator("[col-id]").all()}

        for child in runs["result"]:  # not nested: in view without expanding the sweep
            found = cells(child)
            for metric in ("test_error", "n_sv", "fit_time_s"):
                assert float(found[f"metrics.`{metric}`"]) == pytest.approx(child.data.metrics[metric], rel=1e-3)
            assert found["params.`seed`"] == "0"
            assert found["params.`dataset.n_train`"] == child.data.params["dataset.n_train"]
        summary = cells(parent)
        assert float(summary["metrics.`mean/test_error`"]) == pytest.approx(parent.data.metrics["mean/test_error"])
        for column in ("test_error", "n_sv", "fit_time_s", "dataset.n_train", "seed"):
            assert page.get_by_role("columnheader", name=column, exact=True).count() >= 1, column
        # the experiment's description: its report's title; and no GenAI view
        page.get_by_text("Fig. 3 (LIBSVM curve)").first.wait_for(timeout=WAIT_MS)
        for genai in ("Observability", "Training runs"):
            assert page.get_by_text(genai, exact=True).count() == 0, genai
    finally:
        page.set_viewport_size({"width": 1600, "height": 1000})


def test_a_sweeps_parent_run_shows_what_it_ran_and_its_summary(ui, page):
    url, experiment_id, runs, *_ = ui
    (parent,) = runs["sweep"]
    for metric in ("test_error", "n_sv", "fit_time_s"):  # the mean over the runs it made
        mean = sum(child.data.metrics[metric] for child in runs["result"]) / len(runs["result"])
        assert parent.data.metrics[f"mean/{metric}"] == pytest.approx(mean)
    page.goto(f"{url}/#/experiments/{experiment_id}/runs/{parent.info.run_id}")
    page.get_by_role("heading", name=parent.info.run_name).wait_for(timeout=WAIT_MS)
    for name, value in (("experiment", EXPERIMENT), ("mode", "quick"), ("sweep.dataset.n_train", "500,1000,2000")):
        row = page.get_by_role("row").filter(has=page.get_by_text(name, exact=True)).first
        row.wait_for(timeout=WAIT_MS)
        assert row.inner_text().split()[-1] == value
    for metric in ("jobs/done", "mean/test_error"):
        page.get_by_text(metric, exact=True).first.wait_for(timeout=WAIT_MS)
    assert "Mode.quick" not in page.inner_text("body")
    page.goto(f"{url}/#/experiments/{experiment_id}/runs/{parent.info.run_id}/artifacts")
    page.locator('[artifact-name="sweep_summary.json"]').click()
    page.get_by_text('"done": 2').first.wait_for(timeout=WAIT_MS)


def test_a_runs_page_shows_its_description_its_settings_and_each_data_split(ui, page):
    url, experiment_id, runs, *_ = ui
    child = min(runs["result"], key=lambda found: found.info.run_name)
    page.goto(f"{url}/#/experiments/{experiment_id}/runs/{child.info.run_id}")
    page.get_by_text(child.data.tags["mlflow.note.content"], exact=True).first.wait_for(timeout=WAIT_MS)
    assert child.data.tags["mlflow.note.content"].startswith("svc_linear on gaussian_clouds: 120 training")
    page.get_by_role("row").filter(has=page.get_by_text("dataset.n_train", exact=True)).first.wait_for(timeout=WAIT_MS)
    body = page.inner_text("body")
    assert "_target_" not in body and "Mode.quick" not in body
    # the training set shown, the test set one click away, each in its context
    page.get_by_text(re.compile("^training$", re.IGNORECASE)).first.wait_for(timeout=WAIT_MS)
    page.get_by_text("+1", exact=True).first.click()
    page.get_by_text(re.compile("^testing$", re.IGNORECASE)).first.wait_for(timeout=WAIT_MS)
