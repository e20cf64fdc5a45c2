"""One run: plan -> load -> fit (timed) -> predict (timed) -> metrics -> MLflow.

:func:`run` is a plain function of a composed config, so tests and notebooks call it without
Hydra's command line; ``svmrepro.app`` is the thin Hydra shell around it. It takes one pass: what a
run needs before it reads data (the estimator and the data source, built and checked; its analyses; its
identity, taken once; where it is logged and how it is timed) is its :class:`RunPlan`
(:func:`plan_run`), and the execution reads the plan, never the config again for those. The sweeper
plans every job of a sweep the same way to skip, with one read of the store, the jobs whose runs
FINISHED already (:func:`finished_runs`).
"""

from __future__ import annotations

import copy
import json
import logging
import os
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from numbers import Real
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from omegaconf import DictConfig, OmegaConf, open_dict

from svmrepro.algorithms.parallel import backend_context
from svmrepro.analyses import build_analyses, run_analyses
from svmrepro.build import RunParts, build
from svmrepro.code_digest import CODE_DIGEST_TAG, code_digest
from svmrepro.data.base import Dataset
from svmrepro.environment import environment_tags, git_source
from svmrepro.errors import SvmReproError, error_line
from svmrepro.identity import RunIdentity, flatten, run_identity
from svmrepro.exclusive import SHARED, TIMING_TAG, load_1m, machine_slot, timing_tags
from svmrepro.measures import measure
from svmrepro.metrics import final_estimator
from svmrepro.placement import BACKEND_TAG, placement_tags
from svmrepro.redact import redact
from svmrepro.signals import in_sweep_worker, stop_behind
from svmrepro.solver import solver_tags
from svmrepro.store import (
    KIND_TAG, NOTE_TAG, PHASE_TAG, RESULT_KIND, RUN_KEY_TAG, choice_tags, experiment_description, experiment_name,
    mlflow_names, phase_of, process_tags, run_params, source_tags,
)
from svmrepro.surface import decision_surface, surface_settings
from svmrepro.timing import timed

if TYPE_CHECKING:
    from svmrepro.store import Store

#: idle seconds of the loky workers a run starts inside a sweep's own worker (:func:`backend_context`)
NESTED_IDLE_S = 10.0
log = logging.getLogger(__name__)

FINISHED, SKIPPED = "FINISHED", "SKIPPED"
#: an interpolation of Hydra's job config (``${hydra:runtime.choices.dataset}``), which only the job resolves
HYDRA_RESOLVER = "${hydra:"


@dataclass
class RunResult:
    status: str
    run_id: str
    run_key: str
    metrics: dict[str, float] = field(default_factory=dict)

    @property
    def validation_error(self) -> float | None:
        """``val_error`` (``val_mse`` in regression): what an optimizing sweeper minimizes. None when
        the data set has no validation split: a test error is never offered for tuning."""
        return next((self.metrics[k] for k in ("val_error", "val_mse") if k in self.metrics), None)


@dataclass(frozen=True)
class RunPlan:
    """What a run needs before it reads data, built once from its config (:func:`plan_run`)."""

    cfg: DictConfig
    #: the data source and the estimator (wrapped in the model search when ``selection`` is set), checked
    parts: RunParts
    #: the experiment's analyses of the fitted model (:mod:`svmrepro.analyses`)
    analyses: list
    #: the data source's fingerprint (its class, parameters and files' checksums), known before loading
    source_fingerprint: str
    identity: RunIdentity
    #: the MLflow experiment, ``<paper>/<id>`` (:func:`~svmrepro.store.experiment_name`)
    experiment: str
    #: the machine slot a timed run holds (:mod:`svmrepro.exclusive`); None: the default
    timing: str | None
    #: the decision surface's settings (``surface``), None when the run draws none
    surface: dict | None

    @property
    def run_key(self) -> str:
        return self.identity.run_key


def plan_run(cfg: DictConfig, choices: Mapping[str, str | None], fingerprints: dict[str, str] | None = None) -> RunPlan:
    """The :class:`RunPlan` of a composed config: every value checked, nothing read or fitted.

    ``fingerprints`` caches the data sources' fingerprints by their config (a sweep's jobs share a few)."""
    parts = build(cfg)
    analyses = build_analyses(cfg.get("analysis"))
    fingerprints = {} if fingerprints is None else fingerprints
    node = json.dumps(OmegaConf.to_container(cfg.dataset, resolve=True), sort_keys=True, default=str)
    if node not in fingerprints:
        fingerprints[node] = parts.source.fingerprint()
    fingerprint = fingerprints[node]
    timing = cfg.get("timing")
    return RunPlan(
        cfg=cfg,
        parts=parts,
        analyses=analyses,
        source_fingerprint=fingerprint,
        identity=run_identity(cfg, fingerprint),
        experiment=experiment_name(dict(choices)),
        timing=getattr(timing, "value", timing),
        surface=OmegaConf.to_container(cfg.surface) if cfg.get("surface") is not None else None,
    )


def finished_runs(jobs: Sequence[tuple[DictConfig, Mapping[str, str | None]]]) -> dict[int, RunResult]:
    """The jobs (by index in ``jobs``: their composed config and config-group options) whose run FINISHED
    already, each as a SKIPPED :class:`RunResult` naming that run (without its metrics): what :func:`run`
    would skip, found with one read of the store per experiment instead of one per job. A job with
    ``force=true`` is never among them. The runs of those keys
    left RUNNING by a process that is gone are marked KILLED, as :func:`run` marks them before it skips. A job
    that cannot be planned (its data files are missing, say) is not among them: it runs and fails with its reason;
    nor is one whose config reads Hydra's job node (``${hydra:...}``), which only the job itself resolves."""
    fingerprints: dict[str, str] = {}
    planned = []
    for index, (cfg, choices) in enumerate(jobs):
        if cfg.get("force"):
            continue
        job = cfg  # only read here: copied when it has Hydra's node, which is not the run's (the sweeper's configs)
        if "hydra" in cfg:
            job = copy.deepcopy(cfg)
            with open_dict(job):
                del job["hydra"]
        if HYDRA_RESOLVER in OmegaConf.to_yaml(job):  # resolved here against the sweep's Hydra node, not the job's
            continue
        try:
            planned.append((index, plan_run(job, choices, fingerprints)))
        except Exception:  # noqa: BLE001  (its data cannot be had, say: the job runs, and fails with its own line)
            continue
    if not planned:
        return {}
    from svmrepro.store import Store  # MLflow: imported once a run needs the store (a bad value is found before)

    cfg = planned[0][1].cfg
    store = Store(cfg.tracking.uri, cfg.tracking.artifact_root)
    found: dict[int, RunResult] = {}
    for experiment in dict.fromkeys(plan.experiment for _, plan in planned):
        finished = store.result_runs_by_key(experiment, FINISHED)
        wanted = {index: plan.run_key for index, plan in planned if plan.experiment == experiment}
        done = {index: RunResult(SKIPPED, finished[key][0].info.run_id, key)
                for index, key in wanted.items() if key in finished}
        found.update(done)
        if not done:
            continue
        running = store.result_runs_by_key(experiment, "RUNNING")
        for orphan in store.kill_orphans([run for key in {wanted[i] for i in done} for run in running.get(key, [])]):
            log.info("run %s marked KILLED: its process ended while it was RUNNING", orphan)
    return found


def split_diagnostics(diagnostics: Mapping) -> tuple[dict[str, float], dict[str, list[float]]]:
    """Scalars become metrics, numeric sequences step-indexed series; the rest stays in the JSON."""
    scalars, series = {}, {}
    for key, value in diagnostics.items():
        if isinstance(value, Real) and not isinstance(value, bool):
            scalars[key] = float(value)
        elif isinstance(value, (list, tuple, np.ndarray)) and all(
            isinstance(v, Real) and not isinstance(v, bool) for v in np.ravel(value)
        ):
            series[key] = [float(v) for v in np.ravel(value)]
    return scalars, series


def _selected_params(estimator) -> dict[str, object]:
    best = getattr(estimator, "best_params_", None) or {}
    return {f"selected.{k}": v for k, v in best.items()}


#: overrides that never name a run: where it is logged and how it runs (not what), the group
#: options already in the name, and the seed (always last)
UNNAMED_KEYS = ("experiment", "mode", "force", "label", "sweep_jobs", "algorithm", "dataset", "seed")
UNNAMED_PREFIXES = ("tracking.", "hydra.", "parallel.", "hydra/")


def run_name(algorithm: str, dataset: str, seed: object, overrides: Sequence[str] = ()) -> str:
    """``<algorithm>-<dataset>-<key>=<value>-...-seed=<seed>``: a job's overrides, those that change
    what it computes, by the last part of their key (the whole key where two share it), e.g.
    ``svc-gaussian_clouds-n_train=120-seed=0``."""
    pairs = []
    for override in overrides:
        key, _, value = override.lstrip("+~").partition("=")
        if key and key not in UNNAMED_KEYS and not key.startswith(UNNAMED_PREFIXES):
            pairs.append((key, value))
    short = [key.rsplit(".", 1)[-1] for key, _ in pairs]
    named = [f"{s if short.count(s) == 1 else key}={value}" for s, (key, value) in zip(short, pairs)]
    return "-".join([algorithm, dataset, *named, f"seed={seed}"])


#: MLflow's dataset-input context of each split of a data set (:attr:`Dataset.X_train`, ...)
SPLIT_CONTEXTS = {"train": "training", "val": "validation", "test": "testing"}


def run_description(algorithm: str, dataset: str, data: Dataset, seed: object) -> str:
    """The run's description in the MLflow UI, e.g. ``svc_linear on gaussian_clouds: 500 training,
    10000 test examples of 10 features, seed 0.``"""
    sizes = [f"{len(getattr(data, f'X_{split}'))} {context}" for split, context in
             (("train", "training"), ("val", "validation"), ("test", "test")) if getattr(data, f"X_{split}") is not None]
    return f"{algorithm} on {dataset}: {', '.join(sizes)} examples of {data.X_train.shape[1]} features, seed {seed}."


def log_dataset(store: Store, run_id: str, source, data: Dataset, fingerprint: str) -> None:
    """The data set as the run's MLflow dataset inputs, one per split in its context (training,
    validation, testing): source = its file (or files) or its generator with its parameters; the
    training set's digest = ``fingerprint`` (the arrays', as :attr:`Dataset.fingerprint` gives
    it), the others' MLflow's own of their arrays."""
    files = getattr(source, "remote_files", list)()
    origin: str | dict[str, str]
    if len(files) == 1:
        origin = files[0].url
    else:
        origin = {"generator": f"{type(source).__module__}.{type(source).__qualname__}",
                  **{k: str(v) for k, v in source.params().items()},
                  **({"files": " ".join(f.url for f in files)} if files else {})}
    for split, context in SPLIT_CONTEXTS.items():
        features = getattr(data, f"X_{split}")
        if features is not None:
            store.log_dataset(run_id, data.name, fingerprint if split == "train" else None, origin,
                              features=features, targets=getattr(data, f"y_{split}"), context=context)


def log_job_files(store: Store, run_id: str, job_files: Sequence[Path]) -> None:
    """The Hydra job's files (its ``.hydra/`` folder, its log) under the run's ``job/`` artifacts,
    those that exist. Their passwords are masked already (:mod:`svmrepro.redact`)."""
    for path in map(Path, job_files):
        if path.is_dir():
            store.log_artifacts(run_id, path, f"job/{path.name}")
        elif path.is_file():
            store.log_artifact(run_id, path, "job")


def log_model(store: Store, experiment_id: str, run_id: str, estimator, input_example) -> None:
    """The fitted estimator as the run's MLflow model (``tracking.log_model=true``). A model that
    cannot be logged is warned about: the run's results are whole without it, so it stays FINISHED."""
    try:
        store.log_model(experiment_id, run_id, estimator, input_example=input_example)
    except Exception as exc:  # noqa: BLE001  (serializing an estimator can fail in many ways)
        log.warning("run %s: its model was not logged (%s); its results are kept", run_id, error_line(exc))


def run(cfg: DictConfig, choices: Mapping[str, str | None] | None = None, overrides: Sequence[str] = (),
        parent_run_id: str | None = None, job_files: Sequence[Path] = ()) -> RunResult:
    """Execute one configured run, or skip it when an identical run already FINISHED.

    The run key is claimed in the store before the FINISHED lookup and held until the run ends,
    so a process starting the same run meanwhile waits, then skips it.

    ``choices`` are the config-group options picked (``experiment``, ``dataset``,
    ``algorithm``); they name the MLflow experiment and tag the run. ``overrides`` (Hydra's
    ``key=value`` of the job) put the swept values in the run's name (:func:`run_name`); with
    ``parent_run_id`` (a sweep's, :class:`svmrepro.store.PrepareStore`) the run is nested under it.
    ``job_files`` (Hydra's job folder ``.hydra/`` and log file) are logged with it (:func:`log_job_files`).
    """
    started = time.perf_counter()  # for run_overhead_s, logged last
    choices = dict(choices or {})
    plan = plan_run(cfg, choices)
    parts, analyses, key, plain = plan.parts, plan.analyses, plan.run_key, plan.identity.config
    from svmrepro.store import Store  # MLflow: imported once a run needs the store (a bad value is found before)

    store = Store(cfg.tracking.uri, cfg.tracking.artifact_root)
    exp_name = plan.experiment
    exp_id = store.experiment_id(exp_name, experiment_description(cfg))
    # identical runs started at once: one holds the key and fits, the others wait, then skip
    with store.claim(key):
        for orphan in store.mark_orphans_killed(exp_id, key):
            log.info("run %s marked KILLED: its process ended while it was RUNNING", orphan)
        done = store.finished_run_id(exp_id, key)
        if done and not cfg.force:
            log.info("skip: run %s already FINISHED with identity %s", done, key[:12])
            return RunResult(SKIPPED, done, key, store.run_metrics(done))
        # a timed experiment's run alone on the machine, any other run beside others (svmrepro.exclusive)
        timing = plan.timing
        with machine_slot(timing, exp_name):
            # before the run exists: a data error logs nothing
            data, load_s, _ = timed(lambda: parts.source.load(int(cfg.seed)))
            surface = surface_settings(plan.surface, data)
            algorithm = choices.get("algorithm") or type(final_estimator(parts.estimator)).__name__
            dataset = choices.get("dataset") or parts.source.name
            tags = {
                **environment_tags(),
                **source_tags(git_source()),  # MLflow's Source, User and git columns
                KIND_TAG: RESULT_KIND,
                **process_tags(),  # a run left RUNNING by a killed process is found by these
                "paper": exp_name.split("/")[0],
                "experiment": exp_name,
                "dataset": dataset,
                "algorithm": algorithm,
                **solver_tags(parts.estimator),  # LIBSVM or oneDAL, and its version: what a timing is read against
                "seed": str(cfg.seed),
                BACKEND_TAG: cfg.parallel.backend.value,  # timings depend on it, results do not
                "mode": plain["mode"],
                # explore: the runs the claims were written beside; confirm: runs made after their lock (issue 48)
                PHASE_TAG: phase_of(plain["mode"]),
                "config_hash": plan.identity.config_hash,
                # the arrays the estimator sees; run_key holds the verified source files' (known before loading)
                "data_fingerprint": data.fingerprint,
                "source_fingerprint": plan.source_fingerprint,
                RUN_KEY_TAG: key,
                CODE_DIGEST_TAG: code_digest(),  # the code that decided its numbers (in run_key too)
                "label": cfg.label or dataset,
                # timings are only comparable on an otherwise idle machine: record how busy it was
                "load_avg_1m": f"{load_1m():.2f}",
                TIMING_TAG: timing or SHARED,  # the slot it held: alone (exclusive) or beside other runs
                **choice_tags(choices),
                NOTE_TAG: run_description(algorithm, dataset, data, cfg.seed),
            }
            name = store.unique_run_name(exp_id, run_name(algorithm, dataset, cfg.seed, overrides), key)
            try:
                run_id = store.start_run(exp_id, name, tags, parent_run_id=parent_run_id)
            except KeyboardInterrupt as stop:  # MLflow may have made the run before its id came back
                reason = f"{stop or 'SIGINT'} received by process {os.getpid()} while the run was being created"
                for made in store.own_running_runs(exp_id, key):
                    store.kill(made, reason)
                    log.info("run %s KILLED: %s", made, reason)
                raise
            # a server has no claim: of runs of one identity created at once, the first fits (Store.first_of_key)
            if not cfg.force and (first := store.first_of_key(exp_id, key, run_id)) is not None:
                store.delete_run(run_id)  # nothing logged to it yet
                log.info("run key %s is being run by run %s: waiting for it", key[:12], first.info.run_id)
                ended = store.wait_until_ended(first.info.run_id)
                if ended.info.status != FINISHED:
                    raise SvmReproError(f"run {ended.info.run_id} of the same identity ({key[:12]}) ended "
                                        f"{ended.info.status} while this one waited for it: the same command runs it")
                log.info("skip: run %s already FINISHED with identity %s", ended.info.run_id, key[:12])
                return RunResult(SKIPPED, ended.info.run_id, key, store.run_metrics(ended.info.run_id))
            try:
                store.log_params(run_id, run_params(flatten(plain)))
                store.log_text(run_id, redact(OmegaConf.to_yaml(cfg, resolve=True)), "config.yaml")
                log_dataset(store, run_id, parts.source, data, tags["data_fingerprint"])
                with backend_context(**OmegaConf.to_container(cfg.parallel, enum_to_str=True),
                                     idle_worker_timeout=NESTED_IDLE_S if in_sweep_worker() else None), \
                        store.system_metrics(run_id, bool(cfg.tracking.get("system_metrics", False))):
                    # where the sub-fits run, read from the engine now it is up (svmrepro.placement)
                    store.set_tags(run_id, placement_tags(cfg.parallel.backend.value, plain["algorithm"].get("n_jobs")))
                    metrics, compute_s, _ = timed(lambda: measure(parts.estimator, data, cfg.get("measure")))
                fitted = final_estimator(parts.estimator)
                diagnostics = dict(getattr(fitted, "diagnostics_", None) or {})
                if analyses:  # the experiment's analyses of the fitted model (svmrepro.analyses)
                    extra, analyses_s, _ = timed(lambda: run_analyses(analyses, fitted, data.X_train, data.y_train))
                    compute_s += analyses_s
                    diagnostics.update(extra)
                scalars, series = split_diagnostics(diagnostics)
                metrics.update(scalars)
                # stage1/n_sv; the data set's constants (data.<key>) are params, not charts
                logged, constants = mlflow_names({**metrics, **{f"data.{k}": v for k, v in data.info.items()}})
                store.log_params(run_id, {**_selected_params(parts.estimator), **constants})
                store.log_metrics(run_id, logged, mlflow_names(series)[0])
                if diagnostics:
                    store.log_json(run_id, diagnostics, "diagnostics.json")
                if surface is not None:
                    grid, surface_s, _ = timed(lambda: decision_surface(parts.estimator, data, surface, int(cfg.seed)))
                    compute_s += surface_s
                    store.log_json(run_id, grid, "surface.json")
                if cfg.tracking.get("log_model", False):
                    log_model(store, exp_id, run_id, parts.estimator, data.X_train[:5])
                # the framework's cost of this run: wall time since run() started outside loading, fitting,
                # predicting, the analyses and the surface. It is logged before terminate, so the terminating
                # call (and Hydra's composition, which precedes run()) are not in it.
                overhead = time.perf_counter() - started - load_s - compute_s
                store.log_metrics(run_id, {"run_overhead_s": overhead}, {})
                store.set_tags(run_id, timing_tags(float(tags["load_avg_1m"]), load_1m()))
                log_job_files(store, run_id, job_files)
                store.terminate(run_id, FINISHED)
            except BaseException as error:
                # Ctrl-C, SIGTERM (svmrepro.signals.Interrupted), or what a library made of one: stopped, not failed
                stop = error if isinstance(error, KeyboardInterrupt) else stop_behind(error)
                if stop is None:
                    store.fail(run_id, error)
                    raise
                reason = f"{stop or 'SIGINT'} received by process {os.getpid()} while the run was RUNNING"
                store.kill(run_id, reason)
                log.info("run %s KILLED: %s", run_id, reason)
                if stop is error:
                    raise
                raise stop from error
            log.info(
                "run %s FINISHED: %s", run_id,
                ", ".join(f"{k}={metrics[k]:.4g}" for k in ("n_sv", "test_error", "fit_time_s") if k in metrics),
            )
            return RunResult(FINISHED, run_id, key, metrics)
