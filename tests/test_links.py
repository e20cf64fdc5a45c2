"""Every relative link in the project's Markdown files points at a file that exists."""

import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
#: ``[text](target)`` and ``![alt](target)``; the target ends at the first space or ``)``
LINK = re.compile(r"\]\(([^)\s]+)\)")


def markdown_files() -> list[str]:
    listed = subprocess.run(["git", "ls-files", "*.md"], cwd=ROOT, capture_output=True, text=True, check=False)
    return sorted(listed.stdout.split()) or sorted(str(p.relative_to(ROOT)) for p in ROOT.rglob("*.md"))


def relative_targets(text: str) -> list[str]:
    """The link targets of ``text`` that name a file of the repository (no URL, no in-page anchor)."""
    return [t for t in LINK.findall(text) if not re.match(r"[a-z][a-z0-9+.-]*:", t) and not t.startswith("#")]


def test_relative_targets_keep_files_and_drop_urls_and_anchors():
    text = "[a](b.md) [c](https://x.org/y.md) ![d](img/e.png) [f](#g) [h](mailto:i@j) [k](l.md#m)"
    assert relative_targets(text) == ["b.md", "img/e.png", "l.md#m"]


def resolved(source: Path, target: str) -> Path:
    """The file a link of ``source`` points to; a target starting with "/" is read from the repository's
    root, as GitHub and the docs site (docs/conf.py) read it."""
    path = target.split("#")[0]
    return ROOT / path[1:] if path.startswith("/") else source.parent / path


@pytest.mark.parametrize("markdown", markdown_files())
def test_every_relative_link_resolves(markdown):
    source = ROOT / markdown
    missing = [t for t in relative_targets(source.read_text()) if not resolved(source, t).exists()]
    assert not missing, f"{markdown} links to missing files: {missing}"
