"""Self-benchmarks of svmrepro as estimators, so a benchmark is an experiment like any other.

A ratio is only meaningful when both of its terms are measured in the same process, on the same
machine, at the same time: each benchmark here measures its terms inside one ``fit``, ``repeats``
times in turn (so a change of load hits every term alike), and reports the medians in
``diagnostics_``, which the runner logs as metrics beside the CPU model and load average tags
(``conf/experiment/bench/``, ``experiments/bench/README.md``). A benchmark predicts nothing: it is a
:class:`~svmrepro.measures.BenchmarkMixin`, which a run measures by
:func:`svmrepro.measures.benchmark` (its fit, no error rate).

- :class:`ParallelSpeedup`: fit time of a meta-estimator with ``n_jobs`` = 1 and 2, or 1 and every
  core of the machine (its sub-SVMs serial and in parallel), and whether both give the same model.
- :class:`RegenerationBenchmark`: the time to rebuild an output (table, figure, runs CSV) from
  ``n_runs`` runs in an MLflow store.

This module is not under ``svmrepro.algorithms``: the regeneration benchmark measures the
framework itself, so it creates an MLflow store and calls the report code, which algorithms never
do. The overhead of one run is measured by the runner (``run_overhead_s``), not here.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from collections.abc import Callable
from numbers import Integral
from pathlib import Path
from statistics import median

import numpy as np
from sklearn.base import BaseEstimator, MetaEstimatorMixin, _fit_context, clone
from sklearn.utils._param_validation import HasMethods, Interval, InvalidParameterError
from sklearn.utils.validation import check_random_state

from svmrepro.environment import ALL_CORES, cpu_count, environment_tags
from svmrepro.measures import BenchmarkMixin
from svmrepro.metrics import support_counts
from svmrepro.placement import BACKEND_TAG
from svmrepro.report import build_output
from svmrepro.report.runs import runs_from_mlflow
from svmrepro.report.spec import ReportSpec
from svmrepro.timing import timed
from svmrepro.store import RUN_KEY_TAG, Store, process_tags


def median_over_repeats(measure: Callable[[], dict[str, float]], repeats: int) -> tuple[dict, dict]:
    """Call ``measure`` (one round of every timing, in a fixed order) ``repeats`` times.

    Returns the median of each timing and the list of its values, round by round.
    """
    rounds = [measure() for _ in range(repeats)]
    values = {key: [r[key] for r in rounds] for key in rounds[0]}
    return {key: median(v) for key, v in values.items()}, values


# ---------------------------------------------------------------------------------------------
# Parallel efficiency of the sub-SVM stage


def same_model(a, b, X) -> bool:
    """Whether two fitted models are the same: equal support (when they have one), equal
    predictions and decision values on ``X`` (to 1e-9 relative)."""
    if hasattr(a, "support_") and not np.array_equal(a.support_, b.support_):
        return False
    if not np.array_equal(a.predict(X), b.predict(X)):
        return False
    if hasattr(a, "decision_function"):
        return bool(np.allclose(a.decision_function(X), b.decision_function(X), rtol=1e-9, atol=1e-12))
    return True


class ParallelSpeedup(BenchmarkMixin, MetaEstimatorMixin, BaseEstimator):
    """Fit time of ``estimator`` with each of ``n_jobs`` (its sub-fits serial, then in parallel).

    Each round fits a clone with every ``n_jobs`` value in turn; after ``repeats`` rounds the
    median fit time per value is kept. All clones get the same ``random_state``, so every fit
    draws the same subsets and the models can be compared.

    Parameters
    ----------
    estimator : estimator
        E.g. :class:`~svmrepro.algorithms.wen_lu_cascade.WenLuCascadeSVC` or
        :class:`~svmrepro.algorithms.cross_training.CrossTrainingSVC`, with an ``n_jobs`` parameter;
        or one without (LIBSVM's ``SVC``, which fits on one thread whatever the cores), with
        ``n_jobs=[1]``: its one fit is both its serial and its parallel fit.
    n_jobs : list of int >= 1 or -1, default=(1, 2)
        Values compared, in this order, each at most once, 1 first (the serial fit); the last is the
        parallel fit, and the speedup is the time of the first over the last. -1 (:data:`ALL_CORES`)
        is every core of the machine (:func:`svmrepro.environment.cpu_count`, its ``cpu_count`` tag).
    repeats : int >= 1, default=3
        Rounds; the first parallel fit of a process also starts the joblib workers, so an odd
        number >= 3 keeps that start-up out of the median.
    random_state : int, RandomState or None
        Draws the one seed every clone gets (when ``estimator`` has a ``random_state`` left None).

    Attributes
    ----------
    estimator_ : the model fitted with the last ``n_jobs`` value in the last round
    fit_times_ : dict ``{n_jobs value: [seconds per round]}``
    support_counts_ : dict, those of ``estimator_``
    diagnostics_ : dict
        Wall seconds ``fit_s_<fit>`` and CPU seconds ``cpu_s_<fit>`` (the fit's worker processes
        included: :func:`svmrepro.timing.timed`), medians over the rounds, with ``<fit>``
        ``serial`` (the first value) and ``parallel`` (the last): names that are the same on
        every machine, so runs made on 2 and on 64 cores share their columns; and ``njobs<k>`` for
        each explicit value k (e.g. ``fit_s_njobs2``). ``n_workers`` (the last value, -1 resolved;
        1 for an estimator without ``n_jobs``), ``speedup`` (serial / parallel, in wall time),
        ``same_model`` (1 when every value gave the model of the first, else 0), ``repeats``; the
        series ``fit_s_<fit>_rounds`` and ``cpu_s_<fit>_rounds``.
    """

    _parameter_constraints: dict = {
        "estimator": [HasMethods(["fit", "predict", "set_params"])],
        "n_jobs": ["array-like"],
        "repeats": [Interval(Integral, 1, None, closed="left")],
        "random_state": ["random_state"],
    }

    def __init__(self, estimator, *, n_jobs=(1, 2), repeats=3, random_state=None):
        self.estimator = estimator
        self.n_jobs = n_jobs
        self.repeats = repeats
        self.random_state = random_state

    def _validate_params(self) -> None:
        """scikit-learn's table, then the list ``n_jobs`` (:meth:`_check_n_jobs`), whose values no constraint
        of the table can say: a wrong list is refused where every parameter is, before any fit."""
        super()._validate_params()
        self._check_n_jobs()

    def _check_n_jobs(self) -> list[int]:
        """The values of ``n_jobs``; a wrong list is an InvalidParameterError naming ``'n_jobs'``, as
        scikit-learn's own are (so the run's checks name the config key)."""
        values = list(self.n_jobs)
        valid = all(isinstance(k, Integral) and (k >= 1 or k == ALL_CORES) for k in values)
        varies = "n_jobs" in self.estimator.get_params()
        problem = None
        if not valid or len(set(values)) != len(values) or values[:1] != [1]:
            problem = (f" must list distinct integers >= 1 or {ALL_CORES} (every core), 1 (the serial fit) first, "
                       f"e.g. [1, 2] or [1, {ALL_CORES}]; got {self.n_jobs!r}")
        elif not varies and values != [1]:
            problem = (f": {type(self.estimator).__name__} has no n_jobs parameter to vary: "
                       f"n_jobs must be [1] (its one fit is its serial and its parallel fit)")
        elif varies and len(values) < 2:
            problem = f" must list at least two worker counts, e.g. [1, {ALL_CORES}]; got {self.n_jobs!r}"
        if problem:
            raise InvalidParameterError(f"The 'n_jobs' parameter of {type(self).__name__}{problem}")
        return values

    @_fit_context(prefer_skip_nested_validation=False)
    def fit(self, X, y):
        values = self._check_n_jobs()
        counts = [cpu_count() if k == ALL_CORES else int(k) for k in values]
        settings = [{"n_jobs": k} for k in counts] if "n_jobs" in self.estimator.get_params() else [{}]
        if self.estimator.get_params().get("random_state", 0) is None:
            seed = int(check_random_state(self.random_state).randint(np.iinfo(np.int32).max))
            settings = [{**each, "random_state": seed} for each in settings]
        # the timings of each position in ``values`` under each of its names
        names = {"serial": 0, **{f"njobs{k}": i for i, k in enumerate(values) if k != ALL_CORES},
                 "parallel": len(values) - 1}
        models = {}

        def one_round() -> dict[str, float]:
            times = {}
            for i, setting in enumerate(settings):
                models[i], times[f"fit_s_{i}"], times[f"cpu_s_{i}"] = timed(
                    lambda: clone(self.estimator).set_params(**setting).fit(X, y)
                )
            return times

        medians, rounds = median_over_repeats(one_round, self.repeats)
        named = {f"{kind}_s_{name}": f"{kind}_s_{i}" for name, i in names.items() for kind in ("fit", "cpu")}
        self.estimator_ = models[len(values) - 1]
        self.fit_times_ = {k: rounds[f"fit_s_{i}"] for i, k in enumerate(values)}
        self.support_counts_ = support_counts(self.estimator_)
        self.diagnostics_ = {
            **{name: medians[position] for name, position in named.items()},
            "n_workers": counts[-1],
            "speedup": medians[named["fit_s_serial"]] / medians[named["fit_s_parallel"]],
            "same_model": float(all(same_model(models[0], models[i], X) for i in range(1, len(settings)))),
            "repeats": self.repeats,
            **{f"{name}_rounds": rounds[position] for name, position in named.items()},
        }
        return self


# ---------------------------------------------------------------------------------------------
# Regeneration of an output from many runs

#: the MLflow experiment and mode of the synthetic runs, in a store of their own
SYNTHETIC_EXPERIMENT, SYNTHETIC_MODE = "bench/synthetic", "full"
SYNTHETIC_ALGORITHMS = ("svc", "cascade_svc", "cross_training", "gated_svm_mixture")
SYNTHETIC_SIZES = (500, 1000, 2000, 5000, 10000)
#: a typical output: four groups over five sizes, three metrics, ratios and log-log slopes
SYNTHETIC_SPEC = ReportSpec(
    experiment=SYNTHETIC_EXPERIMENT,
    title="Synthetic runs (regeneration benchmark)",
    x="params.dataset.n_train",
    metrics=("fit_time_s", "n_sv", "test_error"),
    logx=True,
    logy=("fit_time_s",),
    options={"ratios": ("fit_time_s", "svc"), "slopes": (("fit_time_s", "params.dataset.n_train"),)},
)


def _digest(*parts) -> str:
    return hashlib.sha256(repr(parts).encode()).hexdigest()


def synthetic_run(index: int) -> tuple[dict[str, str], dict[str, object], dict[str, float]]:
    """Tags, params and metrics of run ``index``, shaped like the runner's (svmrepro.runner.run):
    an algorithm and a training size out of a grid, a seed per pass over the grid, plausible
    numbers drawn from ``index``. No two indices share a configuration (``config_hash``)."""
    grid = len(SYNTHETIC_ALGORITHMS) * len(SYNTHETIC_SIZES)
    algorithm = SYNTHETIC_ALGORITHMS[index % len(SYNTHETIC_ALGORITHMS)]
    n = SYNTHETIC_SIZES[index % grid // len(SYNTHETIC_ALGORITHMS)]
    seed = index // grid
    rng = np.random.default_rng(index)
    config = _digest(algorithm, n, seed)
    tags = {
        **environment_tags(), **process_tags(),
        "paper": SYNTHETIC_EXPERIMENT.split("/")[0], "experiment": SYNTHETIC_EXPERIMENT,
        "dataset": "gaussian_clouds", "algorithm": algorithm, "seed": str(seed), BACKEND_TAG: "loky",
        "mode": SYNTHETIC_MODE, "config_hash": config, "data_fingerprint": _digest(n, seed),
        RUN_KEY_TAG: _digest(config, n, seed), "label": "gaussian_clouds", "load_avg_1m": "0.00",
    }
    params = {
        "dataset.n_train": n,
        "dataset.n_test": 10000, "dataset.n_features": 10, "dataset.n_informative": 5, "dataset.std": 2.0,
        "algorithm.kernel": "rbf", "algorithm.C": 1.0,
        "algorithm.gamma": "scale", "algorithm.tol": 0.001, "algorithm.cache_size": 500, "seed": seed,
        "mode": SYNTHETIC_MODE, "selection": None, "surface": None,
    }
    n_sv = int(n * rng.uniform(0.1, 0.5))
    fit = 1e-7 * n**2 * (1 + SYNTHETIC_ALGORITHMS.index(algorithm)) * rng.lognormal(0, 0.1)
    metrics = {
        "n_train": n, "n_test": 10000, "n_sv": n_sv, "n_bounded_sv": n_sv // 2, "n_free_sv": n_sv - n_sv // 2,
        "train_error": rng.uniform(0.05, 0.15), "test_error": rng.uniform(0.1, 0.2), "fit_time_s": fit,
        "fit_cpu_s": fit, "predict_time_s": 1e-6 * n_sv * 10, "predict_train_time_s": 1e-6 * n_sv * n / 1000,
        "data.bayes_risk": 0.1, "run_overhead_s": rng.uniform(0.1, 0.3),
    }
    return tags, params, metrics


def log_synthetic_runs(store: Store, n_runs: int) -> str:
    """Log :func:`synthetic_run` 0..n_runs-1 as FINISHED runs, by the store's calls the runner
    makes; the experiment id."""
    experiment_id = store.experiment_id(SYNTHETIC_EXPERIMENT)
    for index in range(n_runs):
        tags, params, metrics = synthetic_run(index)
        run_id = store.start_run(experiment_id, f"synthetic-{index}", tags)
        store.log_params(run_id, params)
        store.log_metrics(run_id, metrics, {})
        store.terminate(run_id, "FINISHED")
    return experiment_id


def scratch_dir() -> str | None:
    """Where the temporary store goes: memory (/dev/shm) when there is one, else the default
    temporary folder. Only the setup's speed depends on it: each SQLite commit waits for the disk
    (measured when a run took three commits: about 90 ms a run on disk against 20 ms in memory),
    while the timed reads come from the page cache either way once the file has been read."""
    shm = "/dev/shm"
    return shm if os.path.isdir(shm) and os.access(shm, os.W_OK | os.X_OK) else None


class RegenerationBenchmark(BenchmarkMixin, BaseEstimator):
    """Seconds to rebuild an output from ``n_runs`` MLflow runs (issue target: <= 10 s for 1000).

    ``fit`` logs ``n_runs`` synthetic runs (:func:`synthetic_run`) into a new SQLite store in a
    temporary folder, then ``repeats`` times reads them back as the runs table
    (:func:`~svmrepro.report.runs.runs_from_mlflow`) and builds :data:`SYNTHETIC_SPEC`'s output
    from it (:func:`~svmrepro.report.build_output`: table, figure, runs CSV, ratios, slopes) in
    that folder, which is deleted at the end. ``X`` and ``y`` are not used: the run's data set only
    feeds the runner.

    Parameters
    ----------
    n_runs : int >= 1, default=1000
    repeats : int >= 1, default=3

    Attributes
    ----------
    diagnostics_ : dict
        ``regenerate_s`` (median of read + build), ``read_runs_s``, ``build_output_s`` (medians),
        ``log_runs_s`` (seconds to log the runs: setup, not part of the target), ``n_runs``,
        ``repeats``; ``regenerate_s_rounds`` (series).
    """

    _parameter_constraints: dict = {
        "n_runs": [Interval(Integral, 1, None, closed="left")],
        "repeats": [Interval(Integral, 1, None, closed="left")],
    }

    def __init__(self, *, n_runs=1000, repeats=3):
        self.n_runs = n_runs
        self.repeats = repeats

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X=None, y=None):
        with tempfile.TemporaryDirectory(prefix="svmrepro-bench-", dir=scratch_dir()) as folder:
            self.diagnostics_ = self._measure(Path(folder))
        return self

    def _measure(self, folder: Path) -> dict:
        uri = f"sqlite:///{folder / 'mlflow.db'}"
        _, log_s, _ = timed(lambda: log_synthetic_runs(Store(uri), self.n_runs))

        def one_round() -> dict[str, float]:
            runs, read_s, _ = timed(lambda: runs_from_mlflow(SYNTHETIC_EXPERIMENT, SYNTHETIC_MODE, uri))
            if len(runs) != self.n_runs:
                raise RuntimeError(f"read {len(runs)} of the {self.n_runs} runs logged")
            # each round rebuilds the same files, as svmrepro-reproduce does
            _, build_s, _ = timed(lambda: build_output(SYNTHETIC_SPEC, runs, folder / "out", SYNTHETIC_MODE))
            return {"read_runs_s": read_s, "build_output_s": build_s, "regenerate_s": read_s + build_s}

        medians, rounds = median_over_repeats(one_round, self.repeats)
        return {**medians, "log_runs_s": log_s, "n_runs": self.n_runs, "repeats": self.repeats,
                "regenerate_s_rounds": rounds["regenerate_s"]}
