"""The MLflow UI in a real headless browser (Debian's chromium, driven by playwright) over a store
made by a small sweep and its report: the sweep's parent run, a child run by its name with its
``n_sv`` and ``test_error``, and the report's picture rendered as an image.

Only the installed chromium is used (``executable_path``): ``playwright install`` downloads
browsers, which this test never does. ``.ci/run`` installs chromium, so CI runs it.
"""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from mlflow import MlflowClient
from PIL import Image
from playwright.sync_api import sync_playwright

from svmrepro.reproduce import main as reproduce
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
        yield wait_healthy(root, url, process), experiment_id, runs, root / "results" / "cross_training"


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
    url, experiment_id, runs, outputs = ui
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
