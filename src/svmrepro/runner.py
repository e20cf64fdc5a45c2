"""One run: load -> build -> fit (timed) -> predict (timed) -> metrics -> MLflow.

:func:`run` is a plain function of a composed config, so tests and notebooks call it without
Hydra's command line; ``svmrepro.app`` is the thin Hydra shell around it.
"""

from __future__ import annotations

import logging
import os
import time
import traceback
from collections.abc import Mapping
from dataclasses import dataclass, field
from numbers import Real

import numpy as np
from omegaconf import DictConfig, OmegaConf

from svmrepro import identity
from svmrepro.algorithms import kernel_expansion as expansion
from svmrepro.algorithms.parallel import backend_context
from svmrepro.analyses import build_analyses, run_analyses
from svmrepro.build import build
from svmrepro.data.base import REGRESSION, Dataset
from svmrepro.environment import environment_tags
from svmrepro.metrics import error_rate, final_estimator, mean_squared_error, support_counts
from svmrepro.redact import redact
from svmrepro.surface import decision_surface, surface_settings
from svmrepro.timing import timed
from svmrepro.tracking import KILLED_REASON_TAG, RUN_KEY_TAG, Store, experiment_name, process_tags

log = logging.getLogger(__name__)

FINISHED, SKIPPED = "FINISHED", "SKIPPED"


@dataclass
class RunResult:
    status: str
    run_id: str
    run_key: str
    metrics: dict[str, float] = field(default_factory=dict)


def measure(estimator, data: Dataset) -> dict[str, float]:
    """Fit ``estimator`` on the training split and score it; every number a run reports.

    Predictions go through :func:`svmrepro.algorithms.kernel_expansion.predict`, so a plain LIBSVM
    model and svmrepro's estimators are evaluated by the same blocked kernel expansions and their
    predict times compare kernel evaluations, not LIBSVM's one-row-at-a-time loop with BLAS.
    """
    _, fit_wall, fit_cpu = timed(lambda: estimator.fit(data.X_train, data.y_train))
    train_pred, train_wall, _ = timed(lambda: expansion.predict(estimator, data.X_train))
    test_pred, test_wall, test_cpu = timed(lambda: expansion.predict(estimator, data.X_test))
    metrics = {
        "n_train": data.n_train,
        "n_test": data.n_test,
        "fit_time_s": fit_wall,
        "fit_cpu_s": fit_cpu,
        "predict_time_s": test_wall,
        "predict_cpu_s": test_cpu,
        "predict_train_time_s": train_wall,
        **support_counts(estimator),
        **{f"data.{k}": v for k, v in data.info.items()},
    }
    score = mean_squared_error if data.task == REGRESSION else error_rate
    prefix = "mse" if data.task == REGRESSION else "error"
    metrics[f"train_{prefix}"] = score(data.y_train, train_pred)
    metrics[f"test_{prefix}"] = score(data.y_test, test_pred)
    if data.y_test_clean is not None:
        metrics[f"clean_test_{prefix}"] = score(data.y_test_clean, test_pred)
    if data.X_val is not None and data.y_val is not None:
        metrics[f"val_{prefix}"] = score(data.y_val, expansion.predict(estimator, data.X_val))
    if hasattr(estimator, "refit_time_"):
        metrics["refit_time_s"] = estimator.refit_time_
        metrics["search_time_s"] = fit_wall - estimator.refit_time_
    return metrics


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


def run(cfg: DictConfig, choices: Mapping[str, str | None] | None = None) -> RunResult:
    """Execute one configured run, or skip it when an identical run already FINISHED.

    The run key is claimed in the store before the FINISHED lookup and held until the run ends,
    so a process starting the same run meanwhile waits, then skips it.

    ``choices`` are the config-group options picked (``experiment``, ``dataset``,
    ``algorithm``); they name the MLflow experiment and tag the run.
    """
    started = time.perf_counter()  # for run_overhead_s, logged last
    choices = dict(choices or {})
    parts = build(cfg)
    analyses = build_analyses(cfg.get("analysis"))
    fingerprint = parts.source.fingerprint()
    plain = identity.identity_config(cfg)
    key = identity.run_key(plain, fingerprint)
    store = Store(cfg.tracking.uri, cfg.tracking.artifact_root)
    exp_name = experiment_name(choices)
    exp_id = store.experiment_id(exp_name)
    # identical runs started at once: one holds the key and fits, the others wait, then skip
    with store.claim(key):
        for orphan in store.mark_orphans_killed(exp_id, key):
            log.info("run %s marked KILLED: its process ended while it was RUNNING", orphan)
        done = store.finished_run_id(exp_id, key)
        if done and not cfg.force:
            log.info("skip: run %s already FINISHED with identity %s", done, key[:12])
            return RunResult(SKIPPED, done, key)

        # before the run exists: a data error logs nothing
        data, load_s, _ = timed(lambda: parts.source.load(int(cfg.seed)))
        surface_cfg = OmegaConf.to_container(cfg.surface) if cfg.get("surface") is not None else None
        surface = surface_settings(surface_cfg, data)
        algorithm = choices.get("algorithm") or type(final_estimator(parts.estimator)).__name__
        dataset = choices.get("dataset") or parts.source.name
        tags = {
            **environment_tags(),
            **process_tags(),  # a run left RUNNING by a killed process is found by these
            "paper": exp_name.split("/")[0],
            "experiment": exp_name,
            "dataset": dataset,
            "algorithm": algorithm,
            "seed": str(cfg.seed),
            "parallel_backend": cfg.parallel.backend.value,  # timings depend on it, results do not
            "mode": plain["mode"],
            "config_hash": identity.config_hash(plain),
            # the arrays the estimator sees; run_key holds the verified source files' (known before loading)
            "data_fingerprint": data.fingerprint,
            "source_fingerprint": fingerprint,
            RUN_KEY_TAG: key,
            "label": cfg.label or dataset,
            # timings are only comparable on an otherwise idle machine: record how busy it was
            "load_avg_1m": f"{os.getloadavg()[0]:.2f}",
            # every config-group option picked, e.g. choice.selection=grid_cv
            **{f"choice.{group}": option for group, option in choices.items() if option and "hydra" not in group},
        }
        run_id = store.start_run(exp_id, f"{algorithm}-{dataset}-seed{cfg.seed}", tags)
        try:
            store.log_params(run_id, identity.flatten(plain))
            store.log_text(run_id, redact(OmegaConf.to_yaml(cfg, resolve=True)), "config.yaml")
            with backend_context(**OmegaConf.to_container(cfg.parallel, enum_to_str=True)):
                metrics, compute_s, _ = timed(lambda: measure(parts.estimator, data))
            fitted = final_estimator(parts.estimator)
            diagnostics = dict(getattr(fitted, "diagnostics_", None) or {})
            if analyses:  # the experiment's analyses of the fitted model (svmrepro.analyses)
                extra, analyses_s, _ = timed(lambda: run_analyses(analyses, fitted, data.X_train, data.y_train))
                compute_s += analyses_s
                diagnostics.update(extra)
            scalars, series = split_diagnostics(diagnostics)
            metrics.update(scalars)
            store.log_params(run_id, _selected_params(parts.estimator))
            store.log_metrics(run_id, metrics, series)
            if diagnostics:
                store.log_json(run_id, diagnostics, "diagnostics.json")
            if surface is not None:
                grid, surface_s, _ = timed(lambda: decision_surface(parts.estimator, data, surface, int(cfg.seed)))
                compute_s += surface_s
                store.log_json(run_id, grid, "surface.json")
            # the framework's cost of this run: wall time since run() started outside loading, fitting,
            # predicting, the analyses and the surface. It is logged before terminate, so the terminating
            # call (and Hydra's composition, which precedes run()) are not in it.
            overhead = time.perf_counter() - started - load_s - compute_s
            store.log_metrics(run_id, {"run_overhead_s": overhead}, {})
        except KeyboardInterrupt as stop:  # Ctrl-C, or SIGTERM (svmrepro.signals.Interrupted): stopped, not failed
            reason = f"{stop or 'SIGINT'} received by process {os.getpid()} while the run was RUNNING"
            store.set_tags(run_id, {KILLED_REASON_TAG: reason})
            store.terminate(run_id, "KILLED")
            log.info("run %s KILLED: %s", run_id, reason)
            raise
        except BaseException:
            store.log_text(run_id, traceback.format_exc(), "traceback.txt")
            store.terminate(run_id, "FAILED")
            raise
        store.terminate(run_id, FINISHED)
        log.info(
            "run %s FINISHED: %s", run_id,
            ", ".join(f"{k}={metrics[k]:.4g}" for k in ("n_sv", "test_error", "fit_time_s") if k in metrics),
        )
        return RunResult(FINISHED, run_id, key, metrics)
