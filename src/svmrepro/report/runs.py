"""The tidy runs table behind every output: one row per run, MLflow's column names.

Columns are ``run_id``, ``status``, ``start_time``, ``params.<key>``, ``metrics.<name>`` and
``tags.<name>``. The same table is written beside each output as ``<id>.runs.csv``, so an output
can be rebuilt from git alone (``svmrepro-reproduce --from-csv``). A table read from MLflow also has
``artifact_uri`` (where to read a run's artifacts), which the CSV leaves out: it is a local path.

A run's numbers keep the names the runner measured (``metrics.step1.T1.n_sv``,
``metrics.data.bayes_risk``): MLflow stores them as ``step1/T1/n_sv`` (chart sections in its UI)
and data-set constants as params, and :func:`svmrepro.store.svmrepro_names` maps them back, so
report specs and the runs CSVs committed before and after that change read alike.

:func:`read_runs` checks a runs CSV before an output is built from it, and stops at the first
problem with one line naming the file, the line and what is wrong: every row a FINISHED run with
its own MLflow run id, one row per configuration (:data:`CONFIGURATION`, the rule reading from
MLflow applies: a row copied under a new run id would count twice), every cell what its column
means (:mod:`svmrepro.report.columns`: metrics finite numbers or empty, counts and times >= 0,
errors in [0, 1], seeds whole numbers, booleans ``true`` or ``false``).
"""

from __future__ import annotations

import csv
import functools
import io
import re
from pathlib import Path

import pandas as pd

from svmrepro.errors import SvmReproError
from svmrepro.report.columns import first_violation
from svmrepro.store import (
    GIT_COMMIT_TAG,
    KIND_TAG,
    NOT_RESULTS,
    PHASE_TAG,
    svmrepro_names,
)
from svmrepro.store.names import EXPLORE_PHASE
from svmrepro.writing import write_file

KEEP_PREFIXES = ("params.", "metrics.", "tags.")
KEEP_COLUMNS = ("run_id", "status", "start_time")
#: columns that only make sense next to the MLflow store they came from
STORE_COLUMNS = ("artifact_uri",)
#: tags that only repeat MLflow's bookkeeping, or name the process that ran (host, pid)
#: (and svmrepro.kind, which every result run has: result)
DROP_TAGS = ("tags.mlflow.", "tags.process.", f"tags.{KIND_TAG}")
#: MLflow's tags a runs table keeps all the same: the commit its runs were made at
KEEP_TAGS = (f"tags.{GIT_COMMIT_TAG}",)
#: an MLflow run id; every row of a runs CSV is a run with one
RUN_ID = re.compile(r"[0-9a-f]{32}")
#: what makes two runs the same configuration (the resolved config, seed included): a runs table
#: holds one run of each, the latest when read from MLflow
CONFIGURATION = "tags.config_hash"


def runs_from_mlflow(experiment: str, mode: str, uri: str | None = None) -> pd.DataFrame:
    """FINISHED runs of ``experiment`` in ``mode``; of each configuration (:data:`CONFIGURATION`), the latest."""
    from svmrepro.store import Store  # MLflow: imported to read a store, not with the CSV readers

    found = Store(uri).runs_frame(experiment, f"attributes.status = 'FINISHED' and tags.mode = '{mode}'")
    if CONFIGURATION not in found:  # only the runner's runs: not a report run, nor one logged by hand
        return pd.DataFrame(columns=list(KEEP_COLUMNS))
    found = found[found[CONFIGURATION].notna()]
    if f"tags.{KIND_TAG}" in found:  # never a sweep's parent run nor a report run
        found = found[~found[f"tags.{KIND_TAG}"].isin(NOT_RESULTS)]
    if found.empty:
        return pd.DataFrame(columns=list(KEEP_COLUMNS))
    found = found.sort_values("start_time").drop_duplicates(CONFIGURATION, keep="last")
    return tidy(svmrepro_names(found))


def tidy(frame: pd.DataFrame) -> pd.DataFrame:
    kept = [
        c for c in frame.columns
        if c in KEEP_COLUMNS + STORE_COLUMNS + KEEP_TAGS or (c.startswith(KEEP_PREFIXES) and not c.startswith(DROP_TAGS))
    ]
    out = frame[kept].copy()
    out["start_time"] = pd.to_datetime(out["start_time"], utc=True).dt.strftime("%Y-%m-%dT%H:%M:%SZ")
    out = with_phase(out)
    return out.sort_values([c for c in ("tags.algorithm", "start_time") if c in out]).reset_index(drop=True)


def write_runs(frame: pd.DataFrame, path: Path) -> str:
    """Columns in a fixed order (MLflow returns them in none), so a rebuilt CSV does not churn.

    Returns the text written, which :func:`runs_table` turns into the table :func:`read_runs` would
    read back, without reading the file."""
    first = [c for c in KEEP_COLUMNS if c in frame.columns]
    rest = sorted(c for c in frame.columns if c not in first and c not in STORE_COLUMNS)
    path.parent.mkdir(parents=True, exist_ok=True)
    text = frame[first + rest].to_csv(index=False)
    write_file(path, text)
    return text


def read_runs(path: Path) -> pd.DataFrame:
    """The runs table written by :func:`write_runs` (:func:`runs_table` of the file's text)."""
    if not path.is_file():
        raise SvmReproError(f"no runs table at {path}: run svmrepro-reproduce without --from-csv first")
    return runs_table(path, csv_text(path))


def runs_table(path: Path, text: str) -> pd.DataFrame:
    """The runs table the CSV ``text`` of the file ``path`` holds, checked first (:func:`check_rows`,
    :func:`check_configurations`, :func:`check_cells`).

    Params and tags are read as text, as MLflow holds them (``"None"``, ``"true"``), metrics as
    numbers; an empty metrics cell is NaN (the run did not log that metric).

    Read and checked once per process for each file and text: a reproduction reads a runs table for its
    page, each claim on it, the claims' companions of today and the cost page. Each caller gets a copy.
    """
    return _runs_table(str(path), text).copy()


@functools.lru_cache(maxsize=128)
def _runs_table(name: str, text: str) -> pd.DataFrame:
    path = Path(name)
    records = csv_records(path, text)
    header = records[0][1]
    check_header(path, header)
    check_rows(path, header, records[1:])
    frame = pd.DataFrame([fields for _, fields in records[1:]], columns=header)
    lines = [line for line, _ in records[1:]]
    check_configurations(path, frame, lines)
    check_cells(path, frame, lines)
    metrics = [c for c in header if c.startswith("metrics.")]
    frame[metrics] = frame[metrics].apply(pd.to_numeric, errors="coerce")
    return frame


#: the runs table's column of each run's phase (issue 48)
PHASE_COLUMN = f"tags.{PHASE_TAG}"


def with_phase(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with every run's phase (``tags.phase``): a run logged before runs were tagged with it was
    made before the claims' lock, so it is ``explore``."""
    if frame.empty and PHASE_COLUMN not in frame:
        return frame
    if PHASE_COLUMN not in frame:
        frame = frame.assign(**{PHASE_COLUMN: EXPLORE_PHASE})
    else:
        frame[PHASE_COLUMN] = frame[PHASE_COLUMN].replace("", pd.NA).fillna(EXPLORE_PHASE)
    return frame


def csv_text(path: Path) -> str:
    """The text of the file ``path``; a file that is empty or not UTF-8 text stops here."""
    data = path.read_bytes()
    if not data.strip():
        raise SvmReproError(f"{path}: empty file, not a runs table")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        byte = data[exc.start]
        raise SvmReproError(f"{path}, line {line}: byte {byte:#04x} is not UTF-8 text: not a runs table") from None


def csv_records(path: Path, text: str) -> list[tuple[int, list[str]]]:
    """(first line, fields) of every record of the CSV ``text`` of the file ``path``, the header
    first; text that is binary or not CSV stops here."""
    if "\0" in text:
        line = text[: text.index("\0")].count("\n") + 1
        raise SvmReproError(f"{path}, line {line}: a NUL byte, so a binary file and not a runs table")
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    records, line = [], 1
    try:
        for fields in reader:
            records.append((line, fields))
            line = reader.line_num + 1
    except csv.Error as exc:
        raise SvmReproError(f"{path}, line {line}: not CSV ({exc})") from None
    return records


def check_header(path: Path, header: list[str]) -> None:
    """Only runs-table columns, each once: run_id, status and at least one ``metrics.*``."""
    where = f"{path}, line 1 (header)"
    for column in header:
        if column not in KEEP_COLUMNS and not column.startswith(KEEP_PREFIXES):
            raise SvmReproError(f"{where}: column {column!r} is not one of run_id, status, start_time, "
                                f"params.*, metrics.*, tags.*: not a runs table")
    twice = sorted({c for c in header if header.count(c) > 1})
    if twice:
        raise SvmReproError(f"{where}: column {twice[0]!r} appears twice")
    for column in ("run_id", "status"):
        if column not in header:
            raise SvmReproError(f"{where}: no {column} column")
    if not any(c.startswith("metrics.") for c in header):
        raise SvmReproError(f"{where}: no metrics.* column")


def check_rows(path: Path, header: list[str], rows: list[tuple[int, list[str]]]) -> None:
    """Every row a FINISHED MLflow run of its own, with a field per column."""
    if not rows:
        raise SvmReproError(f"{path}: no runs below the header")
    run_id, status = header.index("run_id"), header.index("status")
    seen: dict[str, int] = {}
    for line, fields in rows:
        where = f"{path}, line {line}"
        if not fields:
            raise SvmReproError(f"{where}: a blank line; a runs table has one run per line")
        if len(fields) != len(header):
            raise SvmReproError(f"{where}: {len(fields)} fields, the header has {len(header)}")
        if not RUN_ID.fullmatch(fields[run_id]):
            raise SvmReproError(f"{where}: run_id {fields[run_id]!r} is not an MLflow run id (32 hex digits)")
        if fields[run_id] in seen:
            raise SvmReproError(f"{where}: run_id {fields[run_id]} repeats line {seen[fields[run_id]]}")
        seen[fields[run_id]] = line
        if fields[status] != "FINISHED":
            raise SvmReproError(f"{where}: status {fields[status]!r}; a runs table holds FINISHED runs only")


def check_configurations(path: Path, text: pd.DataFrame, lines: list[int]) -> None:
    """One row per configuration: a second row of one (a row copied under a new run id) would count twice."""
    if CONFIGURATION not in text:  # a table not made by the runner's runs
        return
    repeated = text[text[CONFIGURATION].duplicated(keep=False)]
    if repeated.empty:
        return
    first = repeated[repeated[CONFIGURATION] == repeated[CONFIGURATION].iloc[0]]
    rows = ", ".join(f"line {lines[row]} (run {text.at[row, 'run_id']})" for row in first.index)
    raise SvmReproError(f"{path}: {rows} are one configuration ({CONFIGURATION} {first[CONFIGURATION].iloc[0]}); "
                        "a runs table holds one FINISHED run per configuration: keep one of those rows")


def check_cells(path: Path, text: pd.DataFrame, lines: list[int]) -> None:
    """Every cell what its column means (:data:`svmrepro.report.columns.RULES`), the first that is not named."""
    found = first_violation(text)
    if found is not None:
        row, column, rule = found
        raise SvmReproError(f"{path}, line {lines[row]}: {column} = {text.at[row, column]!r} is not {rule.expected}")
