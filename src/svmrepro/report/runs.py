"""The tidy runs table behind every output: one row per run, MLflow's column names.

Columns are ``run_id``, ``status``, ``start_time``, ``params.<key>``, ``metrics.<name>`` and
``tags.<name>``. The same table is written beside each output as ``<id>.runs.csv``, so an output
can be rebuilt from git alone (``svmrepro-reproduce --from-csv``). A table read from MLflow also has
``artifact_uri`` (where to read a run's artifacts), which the CSV leaves out: it is a local path.
"""

from __future__ import annotations

from pathlib import Path

import mlflow
import pandas as pd

from svmrepro.errors import SvmReproError
from svmrepro.tracking import ensure_store, retry_locked, tracking_uri

KEEP_PREFIXES = ("params.", "metrics.", "tags.")
KEEP_COLUMNS = ("run_id", "status", "start_time")
#: columns that only make sense next to the MLflow store they came from
STORE_COLUMNS = ("artifact_uri",)
#: tags that only repeat MLflow's bookkeeping, or name the process that ran (host, pid)
DROP_TAGS = ("tags.mlflow.", "tags.process.")


def runs_from_mlflow(experiment: str, mode: str, uri: str | None = None) -> pd.DataFrame:
    """FINISHED runs of ``experiment`` in ``mode``; of identical configs, the latest only."""
    uri = tracking_uri(uri)
    ensure_store(uri)  # a SQLite store is made whole, or reported, before MLflow opens it
    mlflow.set_tracking_uri(uri)
    found = retry_locked(
        lambda: mlflow.search_runs(
            experiment_names=[experiment],
            filter_string=f"attributes.status = 'FINISHED' and tags.mode = '{mode}'",
            output_format="pandas",
        )
    )
    if "tags.config_hash" not in found:  # only the runner's runs: not a report run, nor one logged by hand
        return found.iloc[0:0]
    found = found[found["tags.config_hash"].notna()]
    if found.empty:
        return found
    found = found.sort_values("start_time").drop_duplicates("tags.config_hash", keep="last")
    return tidy(found)


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
