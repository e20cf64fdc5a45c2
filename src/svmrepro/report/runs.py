"""The tidy runs table behind every output: one row per run, MLflow's column names.

Columns are ``run_id``, ``status``, ``start_time``, ``params.<key>``, ``metrics.<name>`` and
``tags.<name>``. The same table is written beside each output as ``<id>.runs.csv``, so an output
can be rebuilt from git alone (``svmrepro-reproduce --from-csv``). A table read from MLflow also has
``artifact_uri`` (where to read a run's artifacts), which the CSV leaves out: it is a local path.

A run's numbers keep the names the runner measured (``metrics.step1.T1.n_sv``,
``metrics.data.bayes_risk``): MLflow stores them as ``step1/T1/n_sv`` (chart sections in its UI)
and data-set constants as params, and :func:`svmrepro.tracking.svmrepro_names` maps them back, so
report specs and the runs CSVs committed before and after that change read alike.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from svmrepro.errors import SvmReproError
from svmrepro.tracking import KIND_TAG, NOT_RESULTS, Store, svmrepro_names

KEEP_PREFIXES = ("params.", "metrics.", "tags.")
KEEP_COLUMNS = ("run_id", "status", "start_time")
#: columns that only make sense next to the MLflow store they came from
STORE_COLUMNS = ("artifact_uri",)
#: tags that only repeat MLflow's bookkeeping, or name the process that ran (host, pid)
#: (and svmrepro.kind, which every result run has: result)
DROP_TAGS = ("tags.mlflow.", "tags.process.", f"tags.{KIND_TAG}")


def runs_from_mlflow(experiment: str, mode: str, uri: str | None = None) -> pd.DataFrame:
    """FINISHED runs of ``experiment`` in ``mode``; of identical configs, the latest only."""
    found = Store(uri).runs_frame(experiment, f"attributes.status = 'FINISHED' and tags.mode = '{mode}'")
    if "tags.config_hash" not in found:  # only the runner's runs: not a report run, nor one logged by hand
        return found.iloc[0:0]
    found = found[found["tags.config_hash"].notna()]
    if f"tags.{KIND_TAG}" in found:  # never a sweep's parent run nor a report run
        found = found[~found[f"tags.{KIND_TAG}"].isin(NOT_RESULTS)]
    if found.empty:
        return found
    found = found.sort_values("start_time").drop_duplicates("tags.config_hash", keep="last")
    return tidy(svmrepro_names(found))


def tidy(frame: pd.DataFrame) -> pd.DataFrame:
    kept = [
        c for c in frame.columns
        if c in KEEP_COLUMNS + STORE_COLUMNS or (c.startswith(KEEP_PREFIXES) and not c.startswith(DROP_TAGS))
    ]
    out = frame[kept].copy()
    out["start_time"] = pd.to_datetime(out["start_time"], utc=True).dt.strftime("%Y-%m-%dT%H:%M:%SZ")
    return out.sort_values([c for c in ("tags.algorithm", "start_time") if c in out]).reset_index(drop=True)


def write_runs(frame: pd.DataFrame, path: Path) -> None:
    """Columns in a fixed order (MLflow returns them in none), so a rebuilt CSV does not churn."""
    first = [c for c in KEEP_COLUMNS if c in frame.columns]
    rest = sorted(c for c in frame.columns if c not in first and c not in STORE_COLUMNS)
    path.parent.mkdir(parents=True, exist_ok=True)
    frame[first + rest].to_csv(path, index=False)


def read_runs(path: Path) -> pd.DataFrame:
    if not path.is_file():
        raise SvmReproError(f"no runs table at {path}: run svmrepro-reproduce without --from-csv first")
    # params and tags are text in MLflow: read them as written ("None", "true"), only metrics as numbers
    frame = pd.read_csv(path, dtype=str, keep_default_na=False)
    metrics = [c for c in frame.columns if c.startswith("metrics.")]
    frame[metrics] = frame[metrics].apply(pd.to_numeric, errors="coerce")
    return frame
