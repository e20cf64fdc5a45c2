"""The site's generated parts: reference tables walked from svmrepro's typed schemas, each paper's
verdicts read from the committed ``results/claims.csv``, and Markdown files of the checkout
included with their links intact.

The directives walk registries, not lists: a new claim primitive (a module of
``svmrepro.report.claims.primitives``), report section (``svmrepro.report.sections``), data-set kind
(a ``DatasetSource`` subclass under ``svmrepro.data``) or setting (a field of a dataclass) appears on
the reference pages without an edit to them. A field's description is its ``#:`` comment in the
source, as Sphinx's autodoc reads it.
"""

from __future__ import annotations

import collections.abc
import csv
import dataclasses
import enum
import importlib
import inspect
import os
import pkgutil
import re
import types
import typing
from pathlib import Path

from docutils import nodes
from docutils.parsers.rst import Parser, directives
from docutils.utils import new_document
from omegaconf import MISSING
from sphinx.errors import PycodeError
from sphinx.pycode import ModuleAnalyzer
from sphinx.util.docutils import SphinxDirective

# ---------------------------------------------------------------------------------------------
# Included Markdown keeps its links

#: a relative link or image of Markdown (``](target)``) or of an HTML image (``<img src="target"``)
LINK = re.compile(r'(?P<lead>\]\(|<img src=")(?P<target>[^)"\s]+)')
SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")


def site_path(path: Path, srcdir: Path) -> Path:
    """Where the site shows the file ``path``: a paper's protocol notes (``experiments/<paper>/README.md``)
    are its page ``docs/papers/<paper>.md``; any other file is itself."""
    relative = path.relative_to(srcdir) if path.is_relative_to(srcdir) else None
    if relative and relative.parts[0] == "experiments" and relative.name == "README.md" and len(relative.parts) == 3:
        page = srcdir / "docs" / "papers" / f"{relative.parts[1]}.md"
        if page.is_file():
            return page
    return path


def relink(text: str, source: Path, shown_in: Path, srcdir: Path) -> str:
    """``text`` of the file ``source`` with its relative links made relative to the folder ``shown_in``
    and pointed at the site's page of what they name (:func:`site_path`), so a README links on the site
    where it links on GitHub; a link to nothing still fails the build."""

    def moved(match: re.Match) -> str:
        target = match["target"]
        if target.startswith(("#", "/")) or SCHEME.match(target):
            return match[0]
        path, hash_, anchor = target.partition("#")
        found = site_path(Path(os.path.normpath(source.parent / path)), srcdir)
        return f"{match['lead']}{Path(os.path.relpath(found, shown_in)).as_posix()}{hash_}{anchor}"

    return LINK.sub(moved, text)


def _relink_included(app, relative_path: Path, parent_docname: str, content: list[str]) -> None:
    if Path(relative_path).suffix == ".md":
        srcdir = Path(app.srcdir)
        content[0] = relink(content[0], srcdir / relative_path, (srcdir / app.env.docname).parent, srcdir)


def _relink_page(app, docname: str, content: list[str]) -> None:
    srcdir = Path(app.srcdir)
    page = Path(app.env.doc2path(docname))
    if page.suffix == ".md":
        content[0] = relink(content[0], page, page.parent, srcdir)


# ---------------------------------------------------------------------------------------------
# Dataclass fields as reference tables

def type_text(hint) -> str:
    """A field's type as a YAML writer reads it."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        kept = [arg for arg in args if arg is not type(None)]
        return " or ".join(type_text(arg) for arg in kept) + (" or null" if len(kept) < len(args) else "")
    if origin in (list, tuple):
        return f"list of {type_text(args[0])}" if args else "list"
    if origin in (dict, collections.abc.Mapping) or hint in (dict, collections.abc.Mapping):
        return "mapping"
    if hint is typing.Any:
        return "any"
    if inspect.isclass(hint) and issubclass(hint, enum.Enum):
        return " | ".join(f"``{member.value}``" for member in hint)
    if dataclasses.is_dataclass(hint):
        return f"mapping ({hint.__name__})"
    return {str: "string", int: "integer", float: "number", bool: "true or false"}.get(hint, getattr(
        hint, "__name__", str(hint)))


def default_text(field: dataclasses.Field) -> str:
    """A field's default as YAML writes it; ``required`` for a field without one (or OmegaConf's ``???``)."""
    if field.default is not dataclasses.MISSING:
        value = field.default
    elif field.default_factory is not dataclasses.MISSING:
        value = field.default_factory()
    else:
        return "required"
    if value == MISSING:
        return "required"
    if dataclasses.is_dataclass(value):
        return "its fields' defaults"
    if isinstance(value, enum.Enum):
        value = value.value
    if value is None or isinstance(value, bool):
        value = {None: "null", True: "true", False: "false"}[value]
    return f"``{value}``" if value != "" else '``""``'


def field_docs(cls: type) -> dict[str, str]:
    """Each field's ``#:`` comment, from ``cls`` and the classes it extends."""
    found: dict[str, str] = {}
    for klass in reversed(cls.__mro__):
        if klass.__module__ in ("builtins", "abc", "typing"):
            continue
        try:
            attrs = ModuleAnalyzer.for_module(klass.__module__).find_attr_docs()
        except PycodeError:  # a module without source to read
            continue
        for (owner, name), lines in attrs.items():
            if owner == klass.__qualname__:
                found[name] = literal_addresses(" ".join(line.strip() for line in lines if line.strip()))
    return found


#: an address written in a comment (``tcp://host:8786``, ``ray://host:10001``): an example, not a link to follow
ADDRESS = re.compile(r"(?<![`\w])([a-z][a-z0-9+.-]*://[^\s,;)`]+)")


def literal_addresses(text: str) -> str:
    """``text`` with every address in it set as code: reST would make each one a link, to a host that is an example."""
    return ADDRESS.sub(r"``\1``", text)


def field_notes(field: dataclasses.Field) -> str:
    """What a field's metadata says: its identity role (run settings), its bounds, what it expects."""
    notes = []
    if "expects" in field.metadata:
        notes.append(f"expects {field.metadata['expects']}")
    if field.metadata.get("identity") is not None:
        notes.append(f"identity: ``{field.metadata['identity'].value}``")
    bounds = field.metadata.get("bounds")
    if bounds:
        notes.append(f"from {bounds[0]}" + (f" to {bounds[1]}" if bounds[1] is not None else ""))
    return "; ".join(notes)


def cell(text: str) -> list[str]:
    return (text or " ").splitlines() or [" "]


def fields_table(cls: type, prefix: str = "", skip: tuple[str, ...] = ()) -> tuple[list[str], dict[type, list[str]]]:
    """reST lines of a list-table of ``cls``'s fields (key, type, default, description), and each
    dataclass its fields hold with the names of those fields, to be tabled after it."""
    hints = typing.get_type_hints(cls)
    docs = field_docs(cls)
    lines = [".. list-table::", "   :header-rows: 1", "   :widths: 18 18 14 50", "",
             "   * - key", "     - type", "     - default", "     - what it holds"]
    nested: dict[type, list[str]] = {}
    for field in dataclasses.fields(cls):
        if field.name in skip:
            continue
        hint = hints[field.name]
        for inner in (arg for arg in (typing.get_args(hint) or (hint,)) if dataclasses.is_dataclass(arg)):
            nested.setdefault(inner, []).append(field.name)
        description = "; ".join(part for part in (docs.get(field.name, ""), field_notes(field)) if part)
        lines.append(f"   * - ``{prefix}{field.name}``")
        for value in (type_text(hint), default_text(field), description):
            first, *rest = (value or " ").splitlines()
            lines += [f"     - {first}", *(f"       {line}" for line in rest)]
    return lines + [""], nested


def dataclass_tables(cls: type, prefix: str = "", skip: tuple[str, ...] = ()) -> list[str]:
    """``cls``'s table, then one per dataclass a field of it holds (``tracking.``, both sides ``(a|b).``)."""
    lines, nested = fields_table(cls, prefix, skip)
    for inner, names in nested.items():
        lines += [f"``{prefix}{'``, ``'.join(names)}`` ({inner.__name__}):", ""]
        lines += dataclass_tables(inner, f"{prefix}{names[0]}." if len(names) == 1 else f"{prefix}({'|'.join(names)}).")
    return lines


def resolve(dotted: str):
    module, _, name = dotted.rpartition(".")
    return getattr(importlib.import_module(module), name)


def docstring(obj) -> list[str]:
    """``obj``'s own docstring as lines (none for the signature a dataclass gets when it has none)."""
    text = obj.__doc__ or ""
    if inspect.isclass(obj) and text.startswith(f"{obj.__name__}("):
        return []
    return inspect.cleandoc(text).splitlines() + [""]


def parsed_rst(directive: SphinxDirective, lines: list[str]) -> list[nodes.Node]:
    """``lines`` parsed as reST (the docstrings' language) wherever the directive stands, in a MyST page
    too, with Sphinx's roles (``:doc:``) resolved for the page; titles make sections below the page's."""
    source = directive.get_source_info()[0]
    document = new_document(source, directive.state.document.settings)
    Parser().parse("\n".join(lines), document)
    return document.children


class GeneratedDirective(SphinxDirective):
    """A directive whose content is reST lines it generates."""

    def lines(self) -> list[str]:
        raise NotImplementedError

    def run(self) -> list[nodes.Node]:
        return parsed_rst(self, self.lines())


class DataclassFields(GeneratedDirective):
    """``.. svmrepro-fields:: svmrepro.settings.RunSettings``: the dataclass's fields, and those of the
    dataclasses they hold (``:prefix:``: the key path they sit under; ``:skip:`` keys to leave out)."""

    required_arguments = 1
    option_spec = {"prefix": directives.unchanged, "skip": directives.unchanged}

    def lines(self) -> list[str]:
        skip = tuple(self.options.get("skip", "").split())
        return dataclass_tables(resolve(self.arguments[0]), self.options.get("prefix", ""), skip)


def heading(title: str) -> list[str]:
    return [title, "-" * len(title), ""]


class ClaimPrimitives(GeneratedDirective):
    """``.. svmrepro-claim-primitives::``: every module of the primitives registry, its docstring and
    its ``Test``'s keys (those of ``Selection`` are on the page once, above)."""

    def lines(self) -> list[str]:
        from svmrepro.report.claims.primitives import kinds, primitive
        from svmrepro.report.claims.selection import Selection

        shared = {f.name for f in dataclasses.fields(Selection)} - {"x"}
        lines = []
        for kind in kinds():
            module = primitive(kind, "docs")
            lines += heading(f"``{kind}``") + docstring(module)
            lines += dataclass_tables(module.Test, skip=tuple(sorted(shared)))
        return lines


class ReportSections(GeneratedDirective):
    """``.. svmrepro-report-sections::``: every section module with a key of the ``report:`` node:
    its key, what the key expects, its docstring, and its node's fields."""

    def lines(self) -> list[str]:
        from svmrepro.report.registry import section_options

        lines = []
        for key, (module, option) in section_options().items():
            lines += heading(f"``report.{key}``")
            lines += [f"Expects ``{option.expects}``.", ""] + docstring(module)
            for node, listed in held_nodes(option.kind):
                lines += dataclass_tables(node, f"{key}[]." if listed else f"{key}.")
        return lines


def held_nodes(kind) -> list[tuple[type, bool]]:
    """The dataclasses a section's key holds (``Optional[RatiosNode]``, ``List[SlopeNode]``), each with
    whether it comes as a list."""
    if dataclasses.is_dataclass(kind):
        return [(kind, False)]
    if typing.get_origin(kind) in (list, tuple):
        return [(inner, True) for inner in typing.get_args(kind) if dataclasses.is_dataclass(inner)]
    return [found for arg in typing.get_args(kind) for found in held_nodes(arg)]


def dataset_sources() -> list[type]:
    """Every concrete ``DatasetSource`` subclass defined in a module of ``svmrepro.data``."""
    import svmrepro.data
    from svmrepro.data.base import DatasetSource

    found = []
    for info in sorted(pkgutil.iter_modules(svmrepro.data.__path__), key=lambda m: m.name):
        module = importlib.import_module(f"svmrepro.data.{info.name}")
        for _, cls in inspect.getmembers(module, inspect.isclass):
            if (issubclass(cls, DatasetSource) and cls.__module__ == module.__name__ and not inspect.isabstract(cls)
                    and dataclasses.is_dataclass(cls)):
                found.append(cls)
    return found


class DatasetSources(GeneratedDirective):
    """``.. svmrepro-dataset-sources::``: each data-set kind, its docstring and its fields (the keys of
    a ``conf/dataset/<name>.yaml`` that names it as ``_target_``)."""

    def lines(self) -> list[str]:
        lines = []
        for cls in dataset_sources():
            target = f"{cls.__module__}.{cls.__qualname__}"
            lines += heading(f"``{target}``")
            name = getattr(cls, "name", None)
            if isinstance(name, str):
                fixed = "task" not in {f.name for f in dataclasses.fields(cls)}  # else the config says
                lines += [f"Option ``dataset={name}``" + (f"; task: {cls.task}." if fixed else "."), ""]
            lines += docstring(cls) + dataclass_tables(cls, "dataset.")
        return lines


# ---------------------------------------------------------------------------------------------
# A paper's verdicts, from the committed scoreboard

def escaped(text: str) -> str:
    """Text of a claim as reST shows it verbatim."""
    return re.sub(r"([\\\\`*_|])", r"\\\1", text)


class Verdicts(SphinxDirective):
    """``.. svmrepro-verdicts:: cascade``: the paper's rows of ``results/claims.csv`` (what
    ``svmrepro-reproduce --mode full`` wrote) with each claim's words and a link to its output's page."""

    required_arguments = 1

    def run(self) -> list[nodes.Node]:
        from svmrepro.report.claims.schema import load_claims

        paper = self.arguments[0]
        srcdir = Path(self.env.srcdir)
        scoreboard = srcdir / "results" / "claims.csv"
        self.env.note_dependency(str(scoreboard))
        claims = {claim.id: claim for claim in load_claims(paper)}
        with scoreboard.open(newline="") as handle:
            rows = [row for row in csv.DictReader(handle) if row["paper"] == paper]
        if not rows:
            raise self.error(f"{scoreboard}: no claim of the paper {paper!r}")
        lines = [".. list-table::", "   :header-rows: 1", "   :widths: 40 18 30 12", "",
                 "   * - claim", "     - verdict", "     - ours (95 % interval)", "     - output"]
        for row in rows:
            claim = claims[row["id"]]
            ours = "—"
            if row["estimate"]:
                interval = f" [{float(row['low']):.3g}, {float(row['high']):.3g}]" if row["low"] else ""
                ours = f"{row['statistic']} = {float(row['estimate']):.3g}{interval}"
            page = srcdir / "results" / f"{claim.output}.md" if claim.output else None
            output = f":doc:`{claim.output} </results/{claim.output}>`" if page and page.is_file() else (
                claim.output or "—")
            lines += [f"   * - {escaped(claim.source)}: {escaped(claim.claim)}", f"     - **{row['verdict']}**",
                      f"     - {escaped(ours)}", f"     - {output}"]
        return parsed_rst(self, lines)


def _full_width_figures(app, doctree) -> None:
    """Every figure of a page (an image of its own size, not in a link) as wide as the text, linked to its file at
    full size: Sphinx links an image to its file when it has a width (``html_scaled_image_link``)."""
    for image in doctree.findall(nodes.image):
        if not any(key in image for key in ("scale", "width", "height")) and not isinstance(image.parent,
                                                                                           nodes.reference):
            image["width"] = "100%"


def setup(app):
    app.connect("include-read", _relink_included)
    app.connect("doctree-read", _full_width_figures)
    app.connect("source-read", _relink_page)
    app.add_directive("svmrepro-fields", DataclassFields)
    app.add_directive("svmrepro-claim-primitives", ClaimPrimitives)
    app.add_directive("svmrepro-report-sections", ReportSections)
    app.add_directive("svmrepro-dataset-sources", DatasetSources)
    app.add_directive("svmrepro-verdicts", Verdicts)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
