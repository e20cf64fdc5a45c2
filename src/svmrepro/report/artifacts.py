"""JSON a run logged as an artifact, the sidecar file that keeps it beside the runs CSV, and the
HTML page of an output for the MLflow UI.

Building from MLflow reads each run's artifact (the runs table has ``artifact_uri``) and rewrites
the sidecar; ``--from-csv`` reads the sidecar, so a picture drawn from artifacts is redrawn
without a store.

The MLflow UI (3.x) renders a Markdown artifact but drops its images unless they are absolute
``http(s)`` URLs (a relative ``fig.png``, a ``get-artifact?...`` link and a ``data:`` URI all show
as text or as a blank; tests/test_browser_ui.py), while it shows an HTML artifact in a frame. So the
report run also gets :func:`html_page`: the output's page with its pictures inside it.
"""

from __future__ import annotations

import base64
import html
import json
import os
import re
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from urllib.parse import unquote, urlparse

import pandas as pd

from svmrepro.errors import SvmReproError
from svmrepro.writing import write_file


def collect(runs: pd.DataFrame, read: Callable[[str], dict | None], sidecar: Path) -> dict[str, dict]:
    """``{run_id: read(artifact_uri)}`` of the runs that have it, from MLflow or from ``sidecar``."""
    if "artifact_uri" in runs:
        found = {run: read(uri) for run, uri in zip(runs["run_id"], runs["artifact_uri"])}
        return {run: value for run, value in found.items() if value is not None}
    if not sidecar.is_file():
        raise SvmReproError(f"no {sidecar.name} beside the runs CSV: build the output from MLflow first")
    stored = json.loads(sidecar.read_text())
    return {run: stored[run] for run in runs["run_id"] if run in stored}


def artifact_folder(artifact_uris: Iterable[str]) -> str:
    """Where the runs' artifacts are: the folder holding all of them when they are local files
    (``file://``), else the first run's artifact URI (a tracking server's)."""
    uris = list(artifact_uris)
    parsed = [urlparse(uri) for uri in uris]
    if all(part.scheme == "file" for part in parsed):
        return os.path.commonpath([unquote(part.path) for part in parsed])
    return uris[0]


def write_sidecar(values: dict[str, dict], sidecar: Path) -> None:
    sidecar.parent.mkdir(parents=True, exist_ok=True)
    write_file(sidecar, json.dumps(values, sort_keys=True, separators=(",", ":")) + "\n")


IMAGE = re.compile(r"!\[(?P<alt>[^\]]*)\]\((?P<src>[^)\s]+)\)")
LINK = re.compile(r"\[(?P<text>[^\]]+)\]\((?P<href>[^)\s]+)\)")
STYLE = ("body{font-family:sans-serif;max-width:72em;margin:1em auto}table{border-collapse:collapse}"
         "td,th{border:1px solid #ccc;padding:2px 6px;text-align:right}img{max-width:100%}")


def _inline(text: str, folder: Path) -> str:
    """One line of our Markdown: images (embedded when the file is in ``folder``), links, `code`."""
    parts, last = [], 0
    for found in IMAGE.finditer(text):
        parts.append(_text(text[last:found.start()]))
        path = folder / found["src"]
        src = (f"data:image/png;base64,{base64.b64encode(path.read_bytes()).decode()}"
               if path.suffix == ".png" and path.is_file() else found["src"])
        parts.append(f'<img alt="{html.escape(found["alt"])}" src="{html.escape(src)}">')
        last = found.end()
    return "".join(parts) + _text(text[last:])


def _text(text: str) -> str:
    out = html.escape(text, quote=False)
    out = re.sub(r"`([^`]+)`", r"<code>\1</code>", out)
    out = re.sub(r"\*\*([^*]+)\*\*", r"<b>\1</b>", out)
    return LINK.sub(lambda m: f'<a href="{m["href"].replace(chr(34), "&quot;")}">{m["text"]}</a>', out)  # escaped above


def _kind(line: str) -> str:
    if line.startswith("#"):
        return "heading"
    if line.startswith("- "):
        return "list"
    return "table" if line.startswith("|") else "text" if line.strip() else ""


def _blocks(lines: list[str]) -> Iterator[tuple[str, list[str]]]:
    """Runs of lines of one kind: heading, list, table, text (blank lines separate)."""
    block: list[str] = []
    for line in lines:
        if block and (_kind(line) != _kind(block[0]) or _kind(line) == "heading"):
            yield _kind(block[0]), block
            block = []
        if _kind(line):
            block.append(line)
    if block:
        yield _kind(block[0]), block


def _cells(row: str) -> list[str]:
    return [cell.strip() for cell in row.strip().strip("|").split("|")]


def html_page(markdown: Path, out_dir: Path) -> Path:
    """``<out_dir>/<stem>.html``: the Markdown page an output wrote (headings, lists, tables, links
    and images, all it uses), its PNG pictures embedded, so the page is whole in one artifact."""
    body = []
    for kind, block in _blocks(markdown.read_text().splitlines()):
        if kind == "heading":
            level = min(len(block[0]) - len(block[0].lstrip("#")), 6)
            body.append(f"<h{level}>{_text(block[0].lstrip('#').strip())}</h{level}>")
        elif kind == "list":
            body.append("<ul>" + "".join(f"<li>{_inline(line[2:], markdown.parent)}</li>" for line in block) + "</ul>")
        elif kind == "table":
            rows = [_cells(line) for line in block if not set(line) <= set("|-: ")]
            head = "".join(f"<th>{_text(cell)}</th>" for cell in rows[0])
            cells = "".join("<tr>" + "".join(f"<td>{_text(c)}</td>" for c in row) + "</tr>" for row in rows[1:])
            body.append(f"<table><thead><tr>{head}</tr></thead><tbody>{cells}</tbody></table>")
        else:
            body.append("<p>" + "<br>".join(_inline(line, markdown.parent) for line in block) + "</p>")
    title = html.escape(markdown.stem)
    page = (f'<!DOCTYPE html>\n<html><head><meta charset="utf-8"><title>{title}</title><style>{STYLE}</style>'
            f"</head><body>\n" + "\n".join(body) + "\n</body></html>\n")
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / f"{markdown.stem}.html"
    write_file(path, page)
    return path
