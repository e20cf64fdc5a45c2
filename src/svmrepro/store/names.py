"""How svmrepro names things in MLflow: its tags and run kinds, MLflow's system tags, and metric
names as MLflow shows them (``stage1/n_sv``) and as the runner measured them (``stage1.n_sv``).

Each tag name is spelled here once; every module that reads or writes one imports it.
"""

from __future__ import annotations

import getpass
import os
import sys
from collections.abc import Mapping
from enum import Enum

import pandas as pd

RUN_KEY_TAG = "run_key"
ADHOC_EXPERIMENT = "adhoc"
#: which process runs a run (the runs table of a report need not keep them: tags.process.*)
HOST_TAG, PID_TAG, PROCESS_START_TAG = "process.host", "process.pid", "process.start"
KILLED_REASON_TAG = "killed_reason"
#: why a run FAILED: the exception's class and the first line of its message (the whole traceback
#: is the run's traceback.txt)
ERROR_TYPE_TAG, ERROR_MESSAGE_TAG = "error_type", "error_message"
#: what a run is: a result of the runner, the parent run of a sweep, or the files of a built output.
#: Reads of results (:meth:`Store.finished_run_id`, the runs tables of reports) skip the other two.
KIND_TAG, RESULT_KIND, SWEEP_KIND, REPORT_KIND = "svmrepro.kind", "result", "sweep", "report"
NOT_RESULTS = (SWEEP_KIND, REPORT_KIND)
#: MLflow's system tags, as its Tracking documentation ("System Tags") names them (the constants in
#: mlflow.utils.mlflow_tags are not in MLflow's public API reference)
SOURCE_NAME_TAG, SOURCE_TYPE_TAG, USER_TAG = "mlflow.source.name", "mlflow.source.type", "mlflow.user"
GIT_COMMIT_TAG, GIT_BRANCH_TAG, GIT_REPO_TAG = "mlflow.source.git.commit", "mlflow.source.git.branch", "mlflow.source.git.repoURL"
PARENT_RUN_TAG, RUN_NAME_TAG = "mlflow.parentRunId", "mlflow.runName"
#: a run's or an experiment's description (the UI's "Description"), and a dataset input's context
NOTE_TAG, DATASET_CONTEXT_TAG = "mlflow.note.content", "mlflow.data.context"
#: the kind of an experiment as MLflow records it: "Machine learning", not "GenAI apps & agents" (MLflow 3.17's
#: UI picks its view by its workflow switch instead, which the links of :mod:`svmrepro.store.ui` set)
EXPERIMENT_KIND_TAG, EXPERIMENT_KIND = "mlflow.experimentKind", "custom_model_development"
#: the commit a run was made at: MLflow's git tag, or (runs logged before issue 34, committed runs
#: CSVs) svmrepro's own duplicate of it, read where MLflow's is missing and no longer written
LEGACY_GIT_COMMIT_TAG = "git_commit"


#: Hydra's instructions to ``instantiate`` (what to build, how), not settings of a run: never params
#: (the run's identity, :mod:`svmrepro.identity`, still holds them)
HYDRA_PRIVATE_KEYS = frozenset({"_target_", "_partial_", "_convert_", "_recursive_", "_args_"})



def as_text(value: object) -> str:
    """A param's or tag's value as MLflow keeps it: an Enum by its value (``quick``, not ``Mode.quick``)."""
    return str(value.value if isinstance(value, Enum) else value)

def run_params(flat: Mapping[str, object]) -> dict[str, object]:
    """A run's flattened config (``algorithm.C``) as its params: Hydra's private keys left out."""
    return {k: v for k, v in flat.items() if k.rsplit(".", 1)[-1] not in HYDRA_PRIVATE_KEYS}


#: the config groups a run has a tag of its own for (``tags.dataset``), so no ``choice.<group>`` tag
TAGGED_GROUPS = frozenset({"experiment", "dataset", "algorithm"})


def choice_tags(choices: Mapping[str, str | None]) -> dict[str, str]:
    """Every other config-group option picked, e.g. ``choice.selection=grid_cv`` (Hydra's own groups left out)."""
    return {f"choice.{group}": option for group, option in choices.items()
            if option and "hydra" not in group and group not in TAGGED_GROUPS}


def run_commit(tags: Mapping[str, object]) -> str | None:
    """The commit a run's ``tags`` (without the ``tags.`` prefix) say it was made at, if any."""
    for name in (GIT_COMMIT_TAG, LEGACY_GIT_COMMIT_TAG):
        value = tags.get(name)
        if isinstance(value, str) and value:
            return value
    return None


def commit_column(runs: pd.DataFrame) -> pd.Series:
    """Each run's commit (:func:`run_commit`) in a runs table (``tags.<name>`` columns); NaN where it has none."""
    columns = [f"tags.{name}" for name in (GIT_COMMIT_TAG, LEGACY_GIT_COMMIT_TAG) if f"tags.{name}" in runs]
    found = pd.Series(float("nan"), index=runs.index, dtype=object)
    for column in columns:
        found = found.where(found.notna(), runs[column])
    return found


def is_result(tags: dict[str, str]) -> bool:
    """Whether a run with these tags is a result (runs older than the kind tag are)."""
    return tags.get(KIND_TAG, RESULT_KIND) not in NOT_RESULTS


def source_tags(git: dict[str, str] | None = None) -> dict[str, str]:
    """MLflow's Source and User columns (the command that ran, LOCAL) and its git tags from ``git``
    (``commit``, ``branch``, ``repo``, those known)."""
    try:
        user = getpass.getuser()
    except (KeyError, OSError):  # no name for this uid (a container)
        user = str(os.getuid())
    tags = {SOURCE_NAME_TAG: sys.argv[0] if sys.argv and sys.argv[0] else "python", SOURCE_TYPE_TAG: "LOCAL",
            USER_TAG: user}
    names = {"commit": GIT_COMMIT_TAG, "branch": GIT_BRANCH_TAG, "repo": GIT_REPO_TAG}
    tags.update({names[k]: v for k, v in (git or {}).items() if k in names and v and v != "unknown"})
    return tags


def mlflow_names(metrics: dict[str, float]) -> tuple[dict[str, float], dict[str, float]]:
    """``(metrics, params)`` as logged: a data-set constant (``data.<key>``) is a param, and a
    dotted name (``stage1.n_sv``) is written with ``/`` (``stage1/n_sv``), which the MLflow UI
    groups into chart sections. :func:`svmrepro_names` undoes it for the runs tables of reports."""
    params = {k: v for k, v in metrics.items() if k.startswith("data.")}
    return {k.replace(".", "/"): v for k, v in metrics.items() if k not in params}, params


def svmrepro_names(frame: pd.DataFrame) -> pd.DataFrame:
    """A runs table from MLflow (``mlflow.search_runs``) with the names the runner measured:
    ``metrics.stage1/n_sv`` -> ``metrics.stage1.n_sv`` and the param ``params.data.<key>`` ->
    the number ``metrics.data.<key>``, so a report spec and a runs CSV (old or new) name them alike."""
    renamed = {c: "metrics." + c.removeprefix("metrics.").replace("/", ".") for c in frame.columns
               if c.startswith("metrics.") and "/" in c}
    constants = [c for c in frame.columns if c.startswith("params.data.")]
    renamed.update({c: "metrics." + c.removeprefix("params.") for c in constants})
    out = frame.assign(**{c: pd.to_numeric(frame[c], errors="coerce") for c in constants})
    return out.rename(columns=renamed)


#: the phase of a result run: ``confirm`` for a run of the confirmatory phase (mode ``confirm``: the full sweep
#: on fresh seeds after the claims were locked), ``explore`` for any other (issue 48)
PHASE_TAG = "phase"
EXPLORE_PHASE, CONFIRM_PHASE = "explore", "confirm"


def phase_of(mode: str) -> str:
    """The phase of a run of ``mode``."""
    return CONFIRM_PHASE if as_text(mode) == CONFIRM_PHASE else EXPLORE_PHASE
