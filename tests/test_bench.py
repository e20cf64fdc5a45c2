"""The self-benchmarks report what they measure, and are measured as benchmarks (their fit, no
error rate, nothing predicted); the runner logs its own overhead.

The numbers themselves (speedups, seconds) are never asserted: they depend on the machine.
"""

import time

import mlflow
import pytest
from algorithm_configs import missing_module
from omegaconf import OmegaConf
from sklearn.base import is_classifier
from sklearn.svm import SVC

from svmrepro import bench, measures
from svmrepro.algorithms.wen_lu_cascade import WenLuCascadeSVC
from svmrepro.algorithms.cross_training import CrossTrainingSVC
from svmrepro.algorithms.parallel import backend_context
from svmrepro.bench_expansion import KernelExpansionBenchmark
from svmrepro.compose import compose_config, compose_run
from svmrepro.sweep.jobs import sweep_jobs
from svmrepro.data.checkerboard import Checkerboard
from svmrepro.measures import measure_for
from svmrepro.environment import cpu_count
from svmrepro.report.runs import runs_from_mlflow
from svmrepro.runner import FINISHED, run

DATA = Checkerboard(n_train_per_class=150, n_test_per_class=50).load(1)
SVM = {"C": 1000.0, "gamma": 0.0005}


@pytest.mark.parametrize(
    "estimator", [WenLuCascadeSVC(SVC(**SVM)), CrossTrainingSVC(estimator=SVC(**SVM))], ids=["cascade", "cross_training"]
)
def test_parallel_speedup_reports_both_times_and_the_same_model(estimator):
    with backend_context("threading"):  # threads: the same code path as loky, without starting processes
        model = bench.ParallelSpeedup(estimator, n_jobs=[1, 2], repeats=2, random_state=0)
        model.fit(DATA.X_train, DATA.y_train)
    diag = model.diagnostics_
    assert diag["fit_s_njobs1"] > 0 and diag["fit_s_njobs2"] > 0
    assert diag["speedup"] == pytest.approx(diag["fit_s_njobs1"] / diag["fit_s_njobs2"])
    assert diag["same_model"] == 1.0
    assert len(diag["fit_s_njobs2_rounds"]) == len(diag["cpu_s_njobs2_rounds"]) == 2
    assert diag["cpu_s_njobs1"] > 0 and diag["cpu_s_njobs2"] > 0
    assert list(model.fit_times_) == [1, 2]
    # the names every machine shares, beside the per-count ones bench_parallel_cascade's claims read
    assert (diag["fit_s_serial"], diag["fit_s_parallel"]) == (diag["fit_s_njobs1"], diag["fit_s_njobs2"])
    assert (diag["cpu_s_serial"], diag["cpu_s_parallel"]) == (diag["cpu_s_njobs1"], diag["cpu_s_njobs2"])
    assert diag["n_workers"] == 2
    assert model.support_counts_["n_sv"] > 0
    assert estimator.get_params()["n_jobs"] in (None, 1)  # the estimator given is left as it was


@pytest.mark.parametrize("n_jobs", [[1], [0, 2], [1.5, 2], [2, 1], [1, -1, -1], [1, -2]])
def test_parallel_speedup_needs_two_worker_counts(n_jobs):
    with pytest.raises(ValueError, match="n_jobs"):
        bench.ParallelSpeedup(WenLuCascadeSVC(), n_jobs=n_jobs).fit(DATA.X_train, DATA.y_train)


def test_parallel_speedup_on_every_core_names_its_times_alike_on_every_machine(monkeypatch):
    monkeypatch.setattr(bench, "cpu_count", lambda: 3)  # a 3-core machine: -1 is 3 workers
    estimator = CrossTrainingSVC(estimator=SVC(**SVM))
    with backend_context("threading"):
        model = bench.ParallelSpeedup(estimator, n_jobs=[1, -1], repeats=1, random_state=0)
        model.fit(DATA.X_train, DATA.y_train)
    diag = model.diagnostics_
    assert diag["n_workers"] == 3 and model.estimator_.n_jobs == 3
    assert diag["fit_s_serial"] == diag["fit_s_njobs1"] > 0 and diag["cpu_s_serial"] == diag["cpu_s_njobs1"] > 0
    assert diag["fit_s_parallel"] > 0 and diag["cpu_s_parallel"] > 0 and diag["same_model"] == 1.0
    assert diag["speedup"] == pytest.approx(diag["fit_s_serial"] / diag["fit_s_parallel"])
    assert not [key for key in diag if "njobs3" in key or "njobs-1" in key]  # no name that depends on the cores
    assert list(model.fit_times_) == [1, -1] and estimator.n_jobs is None  # the estimator given is left as it was


def test_parallel_speedup_of_a_fit_without_workers_is_its_serial_fit_under_both_names():
    model = bench.ParallelSpeedup(SVC(**SVM), n_jobs=[1], repeats=2).fit(DATA.X_train, DATA.y_train)
    diag = model.diagnostics_
    assert diag["fit_s_parallel"] == diag["fit_s_serial"] > 0 and diag["cpu_s_parallel"] == diag["cpu_s_serial"]
    assert (diag["n_workers"], diag["speedup"], diag["same_model"]) == (1, 1.0, 1.0)
    assert model.support_counts_["n_sv"] == model.estimator_.support_.size
    with pytest.raises(ValueError, match="SVC has no n_jobs parameter to vary: n_jobs must be \\[1\\]"):
        bench.ParallelSpeedup(SVC(), n_jobs=[1, -1]).fit(DATA.X_train, DATA.y_train)


def test_regeneration_benchmark_times_a_rebuild_and_leaves_no_files(tmp_path, monkeypatch):
    monkeypatch.setattr(bench, "scratch_dir", lambda: str(tmp_path))
    uri_before = mlflow.get_tracking_uri()
    model = bench.RegenerationBenchmark(n_runs=20, repeats=2).fit(DATA.X_train, DATA.y_train)
    diag = model.diagnostics_
    for key in ("regenerate_s", "read_runs_s", "build_output_s", "log_runs_s"):
        assert diag[key] > 0, key
    # of 2 rounds the median is the mean, so the median of the sums is the sum of the medians
    assert diag["regenerate_s"] == pytest.approx(diag["read_runs_s"] + diag["build_output_s"])
    assert diag["n_runs"] == 20
    assert list(tmp_path.iterdir()) == []
    assert mlflow.get_tracking_uri() == uri_before  # its store is reached through its own client only


def test_synthetic_runs_have_distinct_configurations():
    hashes = {bench.synthetic_run(i)[0]["config_hash"] for i in range(200)}
    assert len(hashes) == 200


def test_the_runner_logs_its_overhead_within_the_run_time(tiny_cfg, store_uri):
    started = time.perf_counter()
    result = run(tiny_cfg(), {"experiment": "test/bench", "dataset": "gaussian_clouds", "algorithm": "svc_linear"})
    total = time.perf_counter() - started
    assert result.status == FINISHED
    mlflow.set_tracking_uri(store_uri)
    row = mlflow.search_runs(experiment_names=["test/bench"]).iloc[0]
    assert 0 < row["metrics.run_overhead_s"] < total - row["metrics.fit_time_s"]


def test_kernel_expansion_benchmark_times_both_paths_on_one_model():
    model = KernelExpansionBenchmark(SVC(**SVM), n_eval=400, repeats=2, random_state=0)
    model.fit(DATA.X_train, DATA.y_train)
    diag = model.diagnostics_
    assert diag["libsvm_s"] > 0 and diag["expansion_s"] > 0
    assert diag["speedup"] == pytest.approx(diag["libsvm_s"] / diag["expansion_s"])
    assert diag["max_rel_diff"] < 1e-9
    assert diag["peak_mib"] > 0 and diag["n_eval"] == 400 and len(diag["expansion_s_rounds"]) == 2


def test_kernel_expansion_benchmark_refuses_a_model_it_cannot_expand():
    with pytest.raises(ValueError, match="not a binary LIBSVM model"):
        KernelExpansionBenchmark(SVC(kernel="precomputed")).fit(DATA.X_train @ DATA.X_train.T, DATA.y_train)


@pytest.mark.parametrize(
    "benchmark", [bench.RegenerationBenchmark(), KernelExpansionBenchmark(SVC()), bench.ParallelSpeedup(WenLuCascadeSVC())],
    ids=["regenerate", "kernel_expansion", "parallel"],
)
def test_a_benchmark_does_not_pose_as_a_classifier(benchmark):
    assert not is_classifier(benchmark)
    assert not hasattr(benchmark, "predict") and not hasattr(benchmark, "decision_function")
    assert measure_for(None, benchmark, DATA) is measures.benchmark


def test_a_benchmark_run_logs_its_timings_and_no_error_rate(tiny_cfg, monkeypatch, tmp_path):
    monkeypatch.setattr(bench, "scratch_dir", lambda: str(tmp_path))
    cfg = tiny_cfg("algorithm=bench_regenerate", "algorithm.n_runs=5", "algorithm.repeats=1")
    result = run(cfg, {"experiment": "test/bench", "dataset": "gaussian_clouds", "algorithm": "bench_regenerate"})
    assert result.status == FINISHED
    assert {"regenerate_s", "read_runs_s", "build_output_s", "n_runs", "fit_time_s", "n_train"} <= set(result.metrics)
    assert not [name for name in result.metrics if "error" in name or "predict" in name or name.startswith("data.")]


#: bench/parallel_hardware's groups and metrics, which the claims about parallel speed read
HARDWARE = "bench/parallel_hardware"
HARDWARE_GROUPS = {"bench_hardware_svc", "bench_hardware_svc_onedal", "bench_hardware_cascade",
                   "bench_hardware_cross_training", "bench_hardware_mixture"}
HARDWARE_METRICS = ["fit_s_serial", "cpu_s_serial", "fit_s_parallel", "cpu_s_parallel", "n_workers", "test_error",
                    "n_sv"]


@pytest.mark.skipif(missing_module("bench_hardware_svc_onedal") is not None,
                    reason="scikit-learn-intelex (an optional extra) is not installed")
def test_the_hardware_benchmark_fits_every_method_serially_and_on_every_core(store_uri):
    base = [f"experiment={HARDWARE}", "mode=full", f"tracking.uri={store_uri}"]
    cfg = compose_config(base)
    full = [dict(item.split("=", 1) for item in job) for job in sweep_jobs(cfg.sweep.full)]
    assert {job["algorithm"] for job in full} == HARDWARE_GROUPS and len(full) == 5 * 2 * 3
    assert {job["dataset.n_train"] for job in full} == {"20000", "40000"}
    assert {job["seed"] for job in full} == {"0", "1", "2"}
    jobs = sweep_jobs(cfg.sweep.full, OmegaConf.to_container(cfg.smoke))  # the full sweep at the smoke's size
    for job in jobs:
        assert run(*compose_run([*base, *job])).status == FINISHED
    runs = runs_from_mlflow(HARDWARE, "full", store_uri).set_index("tags.algorithm")
    assert set(runs.index) == HARDWARE_GROUPS
    logged = runs[[f"metrics.{name}" for name in HARDWARE_METRICS]]
    assert logged.notna().all().all() and (logged.drop(columns="metrics.test_error") > 0).all().all()
    workers = runs["metrics.n_workers"]
    assert workers["bench_hardware_svc"] == 1 and (workers.drop("bench_hardware_svc") == cpu_count()).all()
    svc = runs.loc["bench_hardware_svc"]
    assert svc["metrics.fit_s_parallel"] == svc["metrics.fit_s_serial"]  # its one fit, under both names
