"""Axis and legend words for the columns a report names: ``fit_time_s`` -> "fit time (s, wall)".

A small table holds the names the experiments use (``conf/experiment/**/*.yaml``,
``report.metrics``); any other name is read from its parts: the MLflow prefix goes
(``metrics.``, ``params.dataset.``, ...), ``n_<things>`` is a count, ``_s`` seconds,
``_error`` a fraction of the examples.
"""

from __future__ import annotations

import re

#: words of the common names; a name missing here is derived by :func:`label`
LABELS = {
    "n_train": "training set size",
    "n_sv": "support vectors",
    "n_bounded_sv": "bounded SVs",
    "n_free_sv": "free SVs",
    "bounded_sv_fraction": "bounded share of the SVs",
    "n_potential_sv": "potential SVs",
    "n_sv_full": "SVs of the full SVM",
    "n_runs": "runs in the store",
    "n_hidden": "hidden units",
    "n_experts": "experts",
    "n_iter": "iterations",
    "n_features": "input dimension",
    "sv_outside_psv": "SVs outside the potential SVs",
    "future_sv_violations": "future SVs outside the potential SVs",
    "sv_asymptote_2Bn": "asymptote 2Bn (SVs)",
    "bayes_risk": "Bayes risk",
    "fit_time_s": "fit time (s, wall)",
    "fit_cpu_s": "fit CPU time (s)",
    "predict_time_s": "predict time (s, wall)",
    "critical_path_time_s": "critical path (s)",
    "time_1cpu_s": "time on 1 CPU (s)",
    "time_parallel_s": "time, experts in parallel (s)",
    "fit_s_njobs1": "fit time, 1 job (s, wall)",
    "fit_s_njobs2": "fit time, 2 jobs (s, wall)",
    "cpu_s_njobs1": "fit CPU time, 1 job (s)",
    "cpu_s_njobs2": "fit CPU time, 2 jobs (s)",
    "fit_s_serial": "fit time, n_jobs 1 (s, wall)",
    "fit_s_parallel": "fit time, in parallel (s, wall)",
    "cpu_s_serial": "fit CPU time, n_jobs 1 (s)",
    "cpu_s_parallel": "fit CPU time, in parallel (s)",
    "n_workers": "workers of the parallel fit",
    "cpu_parallel_s": "CPU time, experts in parallel (s)",
    "cpu_1cpu_s": "CPU time on 1 CPU (s)",
    "libsvm_s": "LIBSVM time (s, wall)",
    "libsvm_cpu_s": "LIBSVM CPU time (s)",
    "expansion_s": "expansion time (s, wall)",
    "expansion_cpu_s": "expansion CPU time (s)",
    "run_overhead_s": "run overhead (s, wall)",
    "test_error": "test error (fraction)",
    "train_error": "training error (fraction)",
    "val_error": "validation error (fraction)",
    "clean_test_error": "test error, clean labels (fraction)",
    "test_mse": "test MSE",
    "speedup": "speedup (×)",
    "peak_mib": "peak memory (MiB)",
    "max_rel_diff": "max relative difference",
    "same_model": "same model (1 = yes)",
    "discard_fraction": "discarded fraction",
    "filter_time_s": "filter time (s, wall)",
    "filter_iterations_per_point": "filter iterations per point",
    "coef_max_abs_diff": "max |Δ coefficient|",
    "future_coef_max_abs_diff": "max |Δ coefficient|, future data",
    "psv_fit_time_ratio": "fit time, PSV / all",
    "psv_total_time_ratio": "filter + fit time, PSV / all",
    "psv_fit_cpu_ratio": "fit CPU time, PSV / all",
    "psv_total_cpu_ratio": "filter + fit CPU time, PSV / all",
    "algorithm": "method",
    "label": "data set",
    "seed": "seed",
}

#: counts that do not start with ``n_``
COUNTS = {"sv_outside_psv", "future_sv_violations", "sv_asymptote_2Bn"}

PREFIXES = ("metrics.", "params.dataset.", "params.algorithm.", "params.", "tags.", "data.")
#: how a word of a name is written on an axis
WORDS = {"sv": "SVs", "svs": "SVs", "psv": "PSV", "mse": "MSE", "cpu": "CPU", "mib": "MiB", "lr": "learning rate"}


def short_name(column: str) -> str:
    """``params.dataset.n_train`` -> ``n_train``: the name without its MLflow prefixes."""
    for prefix in PREFIXES:
        if column.startswith(prefix):
            return short_name(column.removeprefix(prefix))
    return column


def _words(name: str) -> str:
    return " ".join(WORDS.get(word, word) for word in name.split("_") if word)


def label(column: str) -> str:
    """Words and unit of a metric or column name; no underscores in the result."""
    name = short_name(column)
    if name in LABELS:
        return LABELS[name]
    if name.endswith("_cpu_s"):
        return f"{_words(name.removesuffix('_cpu_s'))} CPU time (s)"
    if name.endswith("_time_s"):
        return f"{_words(name.removesuffix('_time_s'))} time (s, wall)"
    if is_seconds(name):
        return f"{_words(name.removesuffix('_s'))} (s)"
    if name.endswith("_error"):
        return f"{_words(name)} (fraction)"
    if re.match(r"n_.", name):
        return f"count of {_words(name.removeprefix('n_'))}"
    return _words(name)


def is_seconds(column: str) -> bool:
    """Whether the column holds seconds (its name ends in ``_s``: wall, CPU, critical path...)."""
    return short_name(column).endswith("_s")


def is_count(column: str) -> bool:
    """Whether the column counts things (support vectors, examples): drawn as whole numbers."""
    name = short_name(column)
    return name.startswith("n_") or name in COUNTS
