"""Typed schema of the run settings shared by every run (seed, mode, tracking, force).

Registered in Hydra's ConfigStore as ``run_settings`` and listed first in ``conf/config.yaml``'s
defaults, so a mistyped mode or a non-integer seed fails at composition, before any data is read.
Data sets and algorithms have no schema here: their Python signatures are their schemas.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Optional

from hydra.core.config_store import ConfigStore
from omegaconf import MISSING


class Mode(str, Enum):
    quick = "quick"  # small sizes, few seeds: minutes on 2 cores; results/quick/ (not committed)
    full = "full"  # the paper's settings; results/<paper>/ (committed)


class ParallelBackend(str, Enum):
    loky = "loky"
    threading = "threading"
    dask = "dask"
    ray = "ray"


@dataclass
class ParallelSettings:
    """Where the sub-SVMs of one run are fitted (svmrepro.algorithms.parallel.backend_context);
    not part of the run's identity: every backend fits the same models."""

    backend: ParallelBackend = ParallelBackend.loky
    #: dask scheduler (tcp://host:8786) or ray cluster (auto, ray://host:10001); None: a local one
    address: Optional[str] = None
    #: BLAS/OpenMP threads per parallel task; None: cores // workers
    blas_threads: Optional[int] = None


@dataclass
class TrackingSettings:
    #: MLflow tracking URI; None means $MLFLOW_TRACKING_URI, else the embedded <project>/mlflow.db
    uri: Optional[str] = None
    #: artifact root for experiments this project creates in an embedded store; None: beside mlflow.db
    artifact_root: Optional[str] = None


@dataclass
class RunSettings:
    #: constructor configs (``_target_`` + arguments) of conf/dataset/ and conf/algorithm/
    dataset: Any = MISSING
    algorithm: Any = MISSING
    seed: int = 0
    mode: Mode = Mode.quick
    #: re-run even when a FINISHED run with the same identity exists
    force: bool = False
    #: a name for the configuration, e.g. a table row ("adult_3185"); a tag, not part of the identity
    label: Optional[str] = None
    tracking: TrackingSettings = field(default_factory=TrackingSettings)
    parallel: ParallelSettings = field(default_factory=ParallelSettings)
    #: grid search of the estimator's parameters (None: fit the configured values)
    selection: Optional[Any] = None
    #: an experiment's sweep per mode (``hydra.sweeper.params`` points at ``sweep.<mode>``)
    sweep: Optional[Any] = None
    #: at most this many of the experiment's jobs at once under svmrepro-reproduce (timing
    #: benchmarks: 1, so runs do not share the cores); None: the plan's n_jobs
    sweep_jobs: Optional[int] = None
    #: overrides that shrink an experiment to seconds for its smoke test (tests/test_experiments.py)
    smoke: Optional[Any] = None
    #: an experiment's regeneration spec, read by svmrepro-reproduce (see svmrepro.report)
    report: Optional[Any] = None
    #: log the decision surface on 2-d data, ``{resolution: 150, points: 600}`` (svmrepro.surface)
    surface: Optional[Any] = None
    #: analyses of the fitted model, ``{name: {_target_: ...}}``, each adding diagnostics (svmrepro.analyses)
    analysis: Optional[Any] = None


def register() -> None:
    ConfigStore.instance().store(name="run_settings", node=RunSettings)
