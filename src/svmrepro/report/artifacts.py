"""JSON a run logged as an artifact, and the sidecar file that keeps it beside the runs CSV.

Building from MLflow reads each run's artifact (the runs table has ``artifact_uri``) and rewrites
the sidecar; ``--from-csv`` reads the sidecar, so a picture drawn from artifacts is redrawn
without a store.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pandas as pd

from svmrepro.errors import SvmReproError


def load_json_artifact(artifact_uri: str, name: str) -> dict | None:
    """The run's artifact ``name`` as a dict; ``None`` when the run has none."""
    import mlflow  # only a build from MLflow needs it

    try:
        return mlflow.artifacts.load_dict(f"{artifact_uri}/{name}")
    except Exception:  # noqa: BLE001  (a missing artifact raises one of several MLflow/OS types)
        return None


def collect(runs: pd.DataFrame, read: Callable[[str], dict | None], sidecar: Path) -> dict[str, dict]:
    """``{run_id: read(artifact_uri)}`` of the runs that have it, from MLflow or from ``sidecar``."""
    if "artifact_uri" in runs:
        found = {run: read(uri) for run, uri in zip(runs["run_id"], runs["artifact_uri"])}
        return {run: value for run, value in found.items() if value is not None}
    if not sidecar.is_file():
        raise SvmReproError(f"no {sidecar.name} beside the runs CSV: build the output from MLflow first")
    stored = json.loads(sidecar.read_text())
    return {run: stored[run] for run in runs["run_id"] if run in stored}


def write_sidecar(values: dict[str, dict], sidecar: Path) -> None:
    sidecar.parent.mkdir(parents=True, exist_ok=True)
    sidecar.write_text(json.dumps(values, sort_keys=True, separators=(",", ":")) + "\n")
