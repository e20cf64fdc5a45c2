"""Typed schema of the run settings shared by every run (seed, mode, tracking, force).

Registered in Hydra's ConfigStore as ``run_settings`` and listed first in ``conf/config.yaml``'s
defaults, so a mistyped mode, a non-integer seed or a list where a URI goes fails at composition,
with Hydra's message, before any data is read. Data sets, algorithms and measures have no schema
here: their Python signatures are their schemas.

Each top-level setting declares its role in a run's identity where it is declared (:class:`Identity`,
read by :mod:`svmrepro.identity`), so a new setting cannot be forgotten there.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields, is_dataclass
from enum import Enum
from typing import Any, Dict, Optional

from hydra.core.config_store import ConfigStore
from omegaconf import MISSING

from svmrepro.errors import ConfigError


class Mode(str, Enum):
    quick = "quick"  # small sizes, few seeds: minutes on 2 cores; results/quick/ (not committed)
    full = "full"  # the paper's settings; results/<paper>/ (committed)
    #: the full sweep again on seeds no run had (``confirm.seeds``), judged by the locked claims;
    #: results/confirm/<paper>/ (committed): the confirmatory phase (issue 48)
    confirm = "confirm"


class Timing(str, Enum):
    """How a run shares the machine (:mod:`svmrepro.exclusive`)."""

    shared = "shared"
    exclusive = "exclusive"


class Identity(str, Enum):
    """Whether a top-level setting belongs to a run's identity (:func:`svmrepro.identity.config_hash`)."""

    always = "always"  # any other value is another computation
    never = "never"  # cannot change a result: where it is logged, how it is run, swept or reported
    #: counts only when not null: it adds to what a run logs (an artifact, metrics), so a run asked
    #: for it is not mistaken for one without, and runs that never set it keep their identity
    when_set = "when_set"


def setting(identity: Identity, bounds: tuple[int, int | None] | None = None, *, estimator: bool = False,
            **kwargs) -> Any:
    """A dataclass field of :class:`RunSettings` with its identity role (and, for an integer, its
    ``bounds``: :func:`check`) as metadata. ``estimator``: the setting is an estimator's constructor
    config, whose worker counts (``n_jobs``, at any depth) change the wall time, not the model, so
    their values are left out of the identity (:func:`svmrepro.identity.config_hash`)."""
    return field(metadata={"identity": identity, "bounds": bounds, "estimator": estimator}, **kwargs)


def bounded(low: int, high: int | None = None, **kwargs) -> Any:
    """A dataclass field of an integer in ``[low, high]`` (no upper bound when None): :func:`check`."""
    return field(metadata={"bounds": (low, high)}, **kwargs)


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
    blas_threads: Optional[int] = bounded(1, default=None)
    #: seconds a run waits for the dask scheduler to answer and for a worker to join it, or for the ray
    #: head to answer (svmrepro.cluster_watch), then fails in one line naming the address
    timeout: int = bounded(1, default=60)


@dataclass
class TrackingSettings:
    #: MLflow tracking URI; None means $MLFLOW_TRACKING_URI, else the embedded <project>/mlflow.db
    uri: Optional[str] = None
    #: artifact root for experiments this project creates in an embedded store; None: beside mlflow.db
    artifact_root: Optional[str] = None
    #: log the fitted estimator as an MLflow model (mlflow.sklearn's format; the run's Models column)
    log_model: bool = False
    #: log MLflow's system metrics (CPU, memory; system/ charts) while the run fits
    system_metrics: bool = False


@dataclass
class RunSettings:
    #: constructor configs (``_target_`` + arguments) of conf/dataset/ and conf/algorithm/
    dataset: Dict[str, Any] = setting(Identity.always, default=MISSING)
    algorithm: Dict[str, Any] = setting(Identity.always, estimator=True, default=MISSING)
    #: what numpy's generators and scikit-learn's ``random_state`` take
    seed: int = setting(Identity.always, bounds=(0, 2**32 - 1), default=0)
    mode: Mode = setting(Identity.always, default=Mode.quick)
    #: re-run even when a FINISHED run with the same identity exists
    force: bool = setting(Identity.never, default=False)
    #: a name for the configuration, e.g. a table row ("adult_3185"); a tag
    label: Optional[str] = setting(Identity.never, default=None)
    tracking: TrackingSettings = setting(Identity.never, default_factory=TrackingSettings)
    #: the engine of the sub-fits, whose models are the same on every backend
    parallel: ParallelSettings = setting(Identity.never, default_factory=ParallelSettings)
    # The nodes below are null unless set, so they stay ``Optional[Any]``: OmegaConf cannot merge a
    # mapping into a null node typed ``Dict`` (``+analysis.audit._target_=...`` fails with an
    # AssertionError). Their readers check them: build, measure_for, the sweeper, spec_from_config,
    # surface_settings, build_analyses.
    #: grid search of the estimator's parameters, a constructor config of conf/selection/ (None: fit
    #: the configured values)
    selection: Optional[Any] = setting(Identity.always, estimator=True, default=None)
    #: what a run measures of the fitted estimator, a constructor config of conf/measure/
    #: (``+measure=regression``); None: the one the estimator and the data set's task imply
    #: (svmrepro.measures.measure_for)
    measure: Optional[Any] = setting(Identity.when_set, default=None)
    #: an experiment's sweep per mode, ``{quick: grid or list of grids, full: ...}``
    #: (``hydra.sweeper.params`` points at ``sweep.<mode>``)
    sweep: Optional[Any] = setting(Identity.never, default=None)
    #: the confirmatory phase's seeds, ``{seeds: "1000,1001,..."}``: mode ``confirm`` runs the full sweep on
    #: them (:func:`svmrepro.sweep.jobs.mode_sweep`), disjoint from every seed the experiment ran before
    confirm: Optional[Any] = setting(Identity.never, default=None)
    #: at most this many of the experiment's jobs at once under svmrepro-reproduce (timing
    #: benchmarks: 1, so runs do not share the cores); None: the plan's n_jobs
    sweep_jobs: Optional[int] = setting(Identity.never, bounds=(1, None), default=None)
    #: ``exclusive``: the experiment's claims are about time, so each of its runs holds the machine alone
    #: and svmrepro-reproduce runs its jobs one at a time (svmrepro.exclusive); ``shared``: any run
    timing: Timing = setting(Identity.never, default=Timing.shared)
    #: overrides that shrink an experiment to seconds for its smoke test (tests/test_experiments.py)
    smoke: Optional[Any] = setting(Identity.never, default=None)
    #: an experiment's regeneration spec, read by svmrepro-reproduce (see svmrepro.report.spec)
    report: Optional[Any] = setting(Identity.never, default=None)
    #: log the decision surface on 2-d data, ``{resolution: 150, points: 600}`` (svmrepro.surface,
    #: which fills in and checks the values)
    surface: Optional[Any] = setting(Identity.when_set, default=None)
    #: analyses of the fitted model, ``{name: {_target_: ...}}``, each adding diagnostics (svmrepro.analyses)
    analysis: Optional[Any] = setting(Identity.when_set, default=None)


def identity_roles(schema: type = RunSettings) -> dict[str, Identity]:
    """``{setting: its Identity}`` for every field of ``schema``; a field without a role is an error."""
    roles = {}
    for f in fields(schema):
        if "identity" not in f.metadata:
            raise TypeError(f"{schema.__name__}.{f.name} declares no identity role: use settings.setting(Identity...)")
        roles[f.name] = Identity(f.metadata["identity"])
    return roles


def estimator_settings(schema: type = RunSettings) -> frozenset[str]:
    """The settings of ``schema`` that are estimators' constructor configs (``setting(..., estimator=True)``)."""
    return frozenset(f.name for f in fields(schema) if f.metadata.get("estimator"))


def check(cfg: Any, schema: type = RunSettings, prefix: str = "") -> None:
    """Every bounded integer setting of ``cfg`` within its bounds (the schema types values, OmegaConf
    cannot bound them): :class:`~svmrepro.errors.ConfigError` naming the first one that is not."""
    for f in fields(schema):
        value, key = cfg.get(f.name), f"{prefix}{f.name}"
        if is_dataclass(f.default_factory) and value is not None:
            check(value, f.default_factory, f"{key}.")
        bounds = f.metadata.get("bounds")
        if bounds is None or value is None:
            continue
        low, high = bounds
        if value < low or (high is not None and value > high):
            expected = f"in [{low}, {high}]" if high is not None else f">= {low}"
            raise ConfigError(f"{key}={value} is invalid: expected an integer {expected}"
                              + (" or null" if f.default is None else ""))


def register() -> None:
    ConfigStore.instance().store(name="run_settings", node=RunSettings)
