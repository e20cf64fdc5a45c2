"""The documentation site builds as ``make docs`` builds it, with warnings as errors, and its
generated parts hold what the code declares: every claim primitive, report section, data-set kind
and run setting, each paper's verdicts and the committed figures. A broken internal link, in a page
or in a file a page includes, fails the build."""

import csv
import dataclasses
import importlib.util
import inspect
import re
import shutil
import subprocess
import sys
from html import unescape
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAPERS = ("cross_training", "mixture", "cascade", "potential_sv", "svr_decomposition")


def sphinx(source: Path, out: Path) -> subprocess.CompletedProcess:
    """``make docs``'s command, on ``source`` (a checkout, or a copy of its docs configuration)."""
    return subprocess.run([sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-c", str(source / "docs"),
                           str(source), str(out)], capture_output=True, text=True, cwd=source, timeout=300)


def test_the_site_builds_with_warnings_as_errors(tmp_path):
    """One build (about 20 s), its pages checked below; one test, so two pytest workers build it once."""
    built = sphinx(ROOT, tmp_path)
    assert built.returncode == 0, built.stderr
    check_paper_pages(tmp_path)
    check_reference(tmp_path)
    check_api(tmp_path)
    check_tutorial(tmp_path)
    check_laptop(tmp_path)


def page(site: Path, name: str) -> str:
    return (site / name).read_text()


def text_of(html: str) -> str:
    """The text of an HTML page, its tags dropped (a highlighted line is one run of text) and its
    whitespace collapsed."""
    return " ".join(unescape(re.sub(r"<[^>]+>", "", html)).split())


def check_paper_pages(site: Path) -> None:
    """Each paper's page shows its protocol notes, its verdicts and links every committed output page,
    whose figures are there."""
    with (ROOT / "results" / "claims.csv").open(newline="") as handle:
        verdicts = list(csv.DictReader(handle))
    for paper in PAPERS:
        html = page(site, f"docs/papers/{paper}.html")
        assert f"<h1>{paper} —" in html  # experiments/<paper>/README.md, included
        verdicts_part = html[html.index('id="verdicts"'):]
        for row in verdicts:
            if row["paper"] == paper:
                assert f"<strong>{row['verdict']}</strong>" in verdicts_part
        for output in sorted((ROOT / "results" / paper).glob("*.md")):
            assert f"results/{paper}/{output.stem}.html" in html  # each committed page is linked from it
            figure = output.with_suffix(".png")
            if figure.is_file():
                shown = site / "results" / paper / f"{output.stem}.html"
                images = re.findall(r'<img alt="[^"]*" src="([^"]+)"', shown.read_text())
                assert any((shown.parent / src).read_bytes() == figure.read_bytes() for src in images), output
    scoreboard = page(site, "results/README.html")
    assert scoreboard.count("<img ") == (ROOT / "results" / "README.md").read_text().count("<img ")
    assert "docs/index.html" in page(site, "index.html")


def check_reference(site: Path) -> None:
    """The reference lists every claim primitive, report section, run setting and data-set kind the code
    declares: they are walked, not listed."""
    from svmrepro.report.claims.primitives import kinds, primitive
    from svmrepro.report.registry import section_options
    from svmrepro.settings import RunSettings

    spec = importlib.util.spec_from_file_location("svmrepro_docs", ROOT / "docs" / "_ext" / "svmrepro_docs.py")
    extension = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(extension)

    claims = page(site, "docs/reference/claims.html")
    for kind in kinds():
        assert f'id="{kind.replace("_", "-")}"' in claims
        for field in dataclasses.fields(primitive(kind, "test").Test):
            assert f"{field.name}</span></code>" in claims
    configuration = page(site, "docs/reference/configuration.html")
    for key in section_options():
        assert f"report.{key}</span></code>" in configuration
    for field in dataclasses.fields(RunSettings):
        assert f"<code class=\"docutils literal notranslate\"><span class=\"pre\">{field.name}</span></code>" \
            in configuration
    sources = extension.dataset_sources()
    assert sources
    for source in sources:
        assert f"{source.__module__}.{source.__qualname__}" in configuration


def check_api(site: Path) -> None:
    """The API page documents each public estimator of ``svmrepro.algorithms`` (walked from its ``__all__``) from
    its docstring: its signature, parameters, fitted attributes and the example with its import line."""
    import svmrepro.algorithms as algorithms

    api = page(site, "docs/reference/api.html")
    starts = sorted((api.index(f'id="svmrepro.algorithms.{name}"'), name) for name in algorithms.__all__)
    for (start, name), (end, _) in zip(starts, [*starts[1:], (len(api), "")]):
        shown = text_of(api[start:end])
        assert "Parameters:" in shown or not inspect.signature(getattr(algorithms, name)).parameters, name
        assert "Variables:" in shown and "Examples" in shown, name
        assert f"from svmrepro.algorithms import {name}" in shown or \
            re.search(rf"from svmrepro.algorithms import [\w, ]*\b{name}\b", shown), name


def check_tutorial(site: Path) -> None:
    """The tutorial shows the files of docs/tutorial/study/ (tests/test_own_study.py runs them) as they are."""
    source = (ROOT / "docs" / "tutorial" / "own-study.md").read_text()
    included = re.findall(r"```\{literalinclude\} (\S+)", source)
    assert included and all(path.startswith("study/") for path in included)
    shown = text_of(page(site, "docs/tutorial/own-study.html"))
    for path in included:
        assert " ".join((ROOT / "docs" / "tutorial" / path).read_text().split()) in shown, path


#: a 1366x768 laptop's screen
LAPTOP = {"width": 1366, "height": 768}


def check_laptop(site: Path) -> None:
    """On a 1366x768 screen (chromium, where installed: .ci/run installs it) the scoreboard, the paper pages and the
    tutorial keep the sidebar beside the text, nothing makes the page wider than the window (a wide table scrolls
    inside its box) and every image loads; a page's figure is as wide as the text and links to its file."""
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        return
    from playwright.sync_api import sync_playwright

    pages = ["results/README.html", *(f"docs/papers/{paper}.html" for paper in PAPERS), "docs/tutorial/own-study.html",
             "results/cascade/table1.html"]
    with sync_playwright() as driver:
        browser = driver.chromium.launch(executable_path=chromium, args=["--no-sandbox"])  # root: no sandbox
        try:
            view = browser.new_page(viewport=LAPTOP)
            for name in pages:
                view.goto((site / name).as_uri(), wait_until="load")
                sidebar = view.locator("div.sphinxsidebar").bounding_box()
                text = view.locator("div.body").bounding_box()
                beside = sidebar and text and (sidebar["x"] + sidebar["width"] <= text["x"] + 1
                                               or sidebar["x"] >= text["x"] + text["width"] - 1)
                assert beside and sidebar["y"] < 200, \
                    f"{name}: the sidebar is not beside the text at 1366 px ({sidebar}, text {text})"
                wide = view.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")
                assert wide <= 0, f"{name}: the page is {wide} px wider than a 1366-px window"
                broken = view.evaluate("Array.from(document.images).filter(i => !(i.complete && i.naturalWidth > 0))"
                                       ".map(i => i.getAttribute('src'))")
                assert not broken, f"{name}: images not loaded: {broken}"
            figure = view.locator("div.body a.reference img").first  # results/cascade/table1's figure
            assert figure.bounding_box()["width"] >= 0.9 * view.locator("div.body").bounding_box()["width"]  # its padding aside
        finally:
            browser.close()


BROKEN = {
    "a page": ("[elsewhere](nowhere.md)", ""),
    "an anchor": ("[elsewhere](#no-such-heading)", ""),
    "an included file": ("```{include} ../notes/included.md\n```", "[elsewhere](../docs/nowhere.md)\n"),
}


def write_site(source: Path, text: str, included: str) -> None:
    (source / "notes" / "included.md").write_text(included)
    (source / "docs" / "index.md").write_text(f"# Home\n\n## A heading\n\n{text}\n")


@pytest.mark.parametrize("where", BROKEN)
def test_a_broken_internal_link_fails_the_build(tmp_path, where):
    """A copy of the site's configuration with one page; the same page with the link mended builds."""
    source = tmp_path / "checkout"
    shutil.copytree(ROOT / "docs", source / "docs", ignore=shutil.ignore_patterns("*.md", "*.rst", "*.png"))
    (source / "results").mkdir()
    (source / "notes").mkdir()
    text, included = BROKEN[where]
    write_site(source, text, included)
    built = sphinx(source, tmp_path / "broken")
    assert built.returncode != 0
    assert "nowhere.md" in built.stderr or "no-such-heading" in built.stderr, built.stderr

    mend = {"nowhere.md": "index.md", "#no-such-heading": "#a-heading"}
    write_site(source, *(re.sub("|".join(mend), lambda m: mend[m[0]], part) for part in (text, included)))
    mended = sphinx(source, tmp_path / "mended")
    assert mended.returncode == 0, mended.stderr
