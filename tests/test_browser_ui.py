"""The MLflow UI in a real headless browser (Debian's chromium, driven by playwright) over a store
made by a small sweep and its report: the sweep's parent run, a child run by its name with its
``n_sv`` and ``test_error``, and the report's picture rendered as an image; the link ``make ui``
prints opens the runs table (not the GenAI view), the parent run shows what the sweep ran and its
summary, and a run its description, its params without Hydra's keys, and its data splits.

Only the installed chromium is used (``executable_path``): ``playwright install`` downloads
browsers, which this test never does. ``.ci/run`` installs chromium, so CI runs it.
"""

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from mlflow import MlflowClient
from PIL import Image
from playwright.sync_api import sync_playwright

from svmrepro.reproduce import main as reproduce
from svmrepro.store import Store
from svmrepro.store.ui import links
from test_ui import EXPERIMENT, OUTPUT, SMALL, serving, wait_healthy

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed (.ci/run installs it)")

#: milliseconds the UI has to show something (a shared 2-core machine)
WAIT_MS = 60_000


@pytest.fixture(scope="module")
def ui(tmp_path_factory):
    """A 2-job sweep (``svmrepro-run -m``), its output built and logged by svmrepro-reproduce, and the
    MLflow server over the store; yields its URL, the experiment's id, its runs by kind (sweep, result,
    report) and the folder of the built output."""
    root = tmp_path_factory.mktemp("browser")
    uri = f"sqlite:///{root / 'mlflow.db'}"
    MlflowClient(uri).search_experiments()  # the schema made before the server and the sweep open it
    with serving(root, uri) as (url, process):
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
        yield wait_healthy(root, url, process), experiment_id, runs, root / "results" / "cross_training", uri


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
    url, experiment_id, runs, outputs, _ = ui
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


def test_the_link_make_ui_prints_opens_the_runs_table(ui, page):
    """MLflow 3.17 opens an experiment in its GenAI view ("Observability", "Training runs") unless
    the address asks for "Model training": the printed link does."""
    url, experiment_id, runs, _, uri = ui
    (parent,) = runs["sweep"]
    printed = links(Store(uri), url)
    (link,) = [line.split(": ", 1)[1] for line in printed if line.strip().startswith(f"{EXPERIMENT}: ")]
    assert f"/experiments/{experiment_id}/runs" in link
    page.goto(link)
    page.get_by_role("row").filter(has_text=parent.info.run_name).first.wait_for(timeout=WAIT_MS)
    # the experiment's description: its report's title
    page.get_by_text("Fig. 3 (LIBSVM curve)").first.wait_for(timeout=WAIT_MS)
    for genai in ("Observability", "Training runs"):
        assert page.get_by_text(genai, exact=True).count() == 0, genai


def test_a_sweeps_parent_run_shows_what_it_ran_and_its_summary(ui, page):
    url, experiment_id, runs, _, _ = ui
    (parent,) = runs["sweep"]
    page.goto(f"{url}/#/experiments/{experiment_id}/runs/{parent.info.run_id}")
    page.get_by_role("heading", name=parent.info.run_name).wait_for(timeout=WAIT_MS)
    for name, value in (("experiment", EXPERIMENT), ("mode", "quick"), ("sweep.dataset.n_train", "500,1000,2000")):
        row = page.get_by_role("row").filter(has=page.get_by_text(name, exact=True)).first
        row.wait_for(timeout=WAIT_MS)
        assert row.inner_text().split()[-1] == value
    page.get_by_text("jobs/done", exact=True).first.wait_for(timeout=WAIT_MS)
    assert "Mode.quick" not in page.inner_text("body")
    page.goto(f"{url}/#/experiments/{experiment_id}/runs/{parent.info.run_id}/artifacts")
    page.locator('[artifact-name="sweep_summary.json"]').click()
    page.get_by_text('"done": 2').first.wait_for(timeout=WAIT_MS)


def test_a_runs_page_shows_its_description_its_settings_and_each_data_split(ui, page):
    url, experiment_id, runs, _, _ = ui
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
