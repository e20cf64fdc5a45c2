"""``svmrepro-reproduce``: run what is missing of each experiment's sweep, then rebuild its output.

    svmrepro-reproduce                         # every paper, quick mode
    svmrepro-reproduce cross_training --mode full
    svmrepro-reproduce cross_training --from-csv   # rebuild committed outputs, no MLflow needed
    svmrepro-reproduce cross_training --check      # which runs exist, which are missing, which claims hold
    svmrepro-reproduce cross_training --prune      # delete runs of configurations the sweeps no longer have

Per mode, a plan (``reproduce/<mode>.yaml`` in the checkout, ``svmrepro/plans`` in the wheel) says
where outputs go (below the current folder unless ``--results-dir``) and how sweeps are launched. A
sweep is ``svmrepro-run -m experiment=<paper>/<id> mode=<mode>`` in a child process started in the
current folder; finished runs are skipped by the runner, so an interrupted reproduction resumes where
it stopped. ``--config-dir DIR`` adds a folder of the user's own experiments and data sets.

An output built from MLflow is also logged there: its files become the artifacts of one run per
(experiment, mode), ``report-<mode>``, tagged ``svmrepro.kind=report``; a rebuild replaces them.
That run has none of the runner's tags (``mode``, ``config_hash``), so it is never read as a result.

``--check`` runs and writes nothing. Per output it counts the FINISHED runs, lists the
configurations of the sweep that have none (by the ``config_hash`` tag the runner gives a run),
and sets our mean of every (group, x, metric) the paper reports beside the paper's number:
``within range`` of the paper's [low, high], ``within 10 %`` of its value (or of the range's nearer
end), or ``differs``. That is arithmetic, not a verdict on the claim: timings of 1999-2004
hardware, for one, are expected to differ.

Outputs count every FINISHED run of their experiment, including runs of configurations that
were since edited out of the sweep (a changed kernel width, a removed size): ``--check`` counts
them and ``--prune`` soft-deletes them (restorable with ``mlflow runs restore``).
"""

from __future__ import annotations

import argparse
import logging
import math
import os
import subprocess
import sys
import tempfile
from dataclasses import astuple, dataclass
from functools import cache
from pathlib import Path

import pandas as pd
import yaml

from hydra.errors import HydraException
from hydra.utils import instantiate
from omegaconf import OmegaConf

from svmrepro.compose import compose_config, experiments, papers, searchpath_override, sweep_jobs
from svmrepro.locations import CONFIG_DIRS_ENV, PLANS_DIR
from svmrepro.environment import git_source
from svmrepro.errors import DataError, SvmReproError
from svmrepro.identity import config_hash
from svmrepro.report import Output, build_output, output_paths, write_not_run
from svmrepro.report.artifacts import html_page
from svmrepro.report.ratios import ratios_markdown, ratios_to
from svmrepro.report.runs import read_runs, runs_from_mlflow
from svmrepro.report.slopes import loglog_slopes, slopes_markdown
from svmrepro.report.spec import ReportSpec, spec_from_config
from svmrepro.report.tables import numeric_or_text, paper_text, read_paper, summarise, x_label
from svmrepro.tracking import RUN_NAME_TAG, Store, TrackingError, ensure_store, source_tags, tracking_uri

log = logging.getLogger("svmrepro.reproduce")
#: tags of the run holding an output's files (never the runner's tags: it is not a result)
REPORT_KIND, REPORT_MODE = "svmrepro.kind", "svmrepro.mode"
#: how close to a paper's single value (or to the nearer end of its range) counts as agreeing
TOLERANCE = 0.10
WITHIN_RANGE, WITHIN_TOLERANCE, DIFFERS, NO_RUNS = "within range", "within 10 %", "differs", "no runs"
#: the x of a log-log slope, which is fitted over all of a group's runs
SLOPE_X = "(fit)"
CLAIM_COLUMNS = ("group", "x", "metric", "ours", "runs", "paper", "rel", "verdict")
#: the self-benchmarks: building them also writes <results>/bench/README.md (write_bench_readme)
BENCH = "bench"


@dataclass(frozen=True)
class Plan:
    mode: str
    results_dir: Path
    launcher: str
    n_jobs: int


def load_plan(mode: str, results_dir: Path | None = None) -> Plan:
    path = PLANS_DIR / f"{mode}.yaml"
    if not path.is_file():
        valid = sorted(p.stem for p in PLANS_DIR.glob("*.yaml"))
        raise SvmReproError(f"--mode {mode}: no plan {path}; valid modes: {', '.join(valid)}")
    raw = yaml.safe_load(path.read_text())
    return Plan(
        mode=mode,
        results_dir=results_dir or Path(raw["results_dir"]),
        launcher=raw["launcher"],
        n_jobs=int(raw["n_jobs"]),
    )


def spec_of(experiment: str, mode: str) -> ReportSpec:
    cfg = compose_config([f"experiment={experiment}", f"mode={mode}"])
    return spec_from_config(experiment, cfg.get("report"))


def run_sweep(experiment: str, plan: Plan, tracking_uri: str | None, extra: list[str]) -> bool:
    """The experiment's sweep in a child process, ``plan.n_jobs`` jobs at once or fewer when the
    experiment says so (``sweep_jobs``); ``extra`` overrides come last and win."""
    limit = compose_config([f"experiment={experiment}", f"mode={plan.mode}"]).get("sweep_jobs")
    n_jobs = min(plan.n_jobs, limit) if limit else plan.n_jobs
    command = [
        sys.executable, "-m", "svmrepro", "-m", f"experiment={experiment}", f"mode={plan.mode}",
        f"hydra/launcher={plan.launcher}", f"hydra.launcher.n_jobs={n_jobs}", *searchpath_override(), *extra,
    ]
    if tracking_uri:
        command.append(f"tracking.uri={tracking_uri}")
    log.info("sweep: %s", " ".join(command[2:]))
    return subprocess.run(command).returncode == 0


def job_configs(experiment: str, mode: str, extra: dict[str, str] | None = None):
    """(overrides, composed config) of every job of the experiment's sweep in ``mode``."""
    base = [f"experiment={experiment}", f"mode={mode}"]
    sweep = compose_config(base).sweep or {}
    for job in sweep_jobs(sweep.get(mode), extra):
        yield job, compose_config([*base, *job])


def missing_data(experiment: str, mode: str) -> str | None:
    """Why the data of some job of the sweep cannot be had (files absent and not downloadable), or None.

    Fetching is the loaders' own code, so a file that can be downloaded is downloaded here.
    """
    seen = set()
    for _, cfg in job_configs(experiment, mode):
        node = cfg.dataset
        key = OmegaConf.to_yaml(node)
        if key in seen:
            continue
        seen.add(key)
        source = instantiate(node)
        try:
            for remote in getattr(source, "remote_files", list)():
                remote.fetch()
        except DataError as exc:
            return str(exc)
    return None


def reproduce_one(experiment: str, plan: Plan, args: argparse.Namespace) -> None:
    spec = spec_of(experiment, plan.mode)
    out_dir = plan.results_dir / spec.paper_id
    reason = None if args.from_csv else missing_data(experiment, plan.mode)
    if reason:
        path = write_not_run(spec, out_dir, reason)
        log.warning("%s: not run (%s); wrote %s", experiment, reason, path)
        return
    if args.from_csv:
        runs = read_runs(output_paths(spec, out_dir).runs_csv)
    else:
        if not args.no_run and not run_sweep(experiment, plan, args.tracking_uri, args.override):
            log.error("%s: some runs failed; the output is built from the runs that finished", experiment)
        runs = gather_runs(spec, plan.mode, args.tracking_uri)
        if runs.empty:
            raise SvmReproError(f"{experiment}: no FINISHED runs in mode {plan.mode}")
    paths = build_output(spec, runs, out_dir, plan.mode)
    log.info("%s: wrote %s (+ .csv, .png, .runs.csv) from %d runs", experiment, paths.table_md, len(runs))
    if not args.from_csv:
        run_id = log_outputs(spec, paths, plan.mode, args.tracking_uri, len(runs))
        log.info("%s: logged the output to MLflow run %s", experiment, run_id)


def sweep_overrides(overrides: list[str]) -> dict[str, str]:
    """``--override`` items that change configurations (``key=value``; Hydra's own settings do not)."""
    if any("=" not in item for item in overrides):
        raise SvmReproError(f"every --override must be key=value, got {overrides}")
    pairs = dict(item.split("=", 1) for item in overrides)
    return {key: value for key, value in pairs.items() if not key.startswith("hydra")}


@cache
def sweep_hashes(experiment: str, mode: str, extra: tuple[tuple[str, str], ...] = ()) -> frozenset[str]:
    """The ``config_hash`` of every configuration of the experiment's sweep in ``mode``."""
    return frozenset(config_hash(cfg) for _, cfg in job_configs(experiment, mode, dict(extra)))


def outside_sweep(runs: pd.DataFrame, spec: ReportSpec, mode: str, overrides: list[str]) -> pd.DataFrame:
    """The output's own runs whose configuration its ``mode`` sweep (with ``overrides``) no longer has."""
    own = runs[runs["tags.experiment"] == spec.experiment] if not runs.empty else runs
    if own.empty:
        return own
    extra = tuple(sorted(sweep_overrides(overrides).items()))
    return own[~own["tags.config_hash"].isin(sweep_hashes(spec.experiment, mode, extra))]


def prune(chosen: list[str], plan: Plan, args: argparse.Namespace) -> int:
    """Soft-delete (MLflow's ``deleted`` lifecycle, restorable) the runs of configurations that the
    experiments' sweeps no longer have, so outputs stop counting them; tagged with the reason."""
    store = Store(args.tracking_uri)
    for experiment in chosen:
        spec = spec_of(experiment, plan.mode)
        stale = outside_sweep(runs_from_mlflow(experiment, plan.mode, args.tracking_uri), spec, plan.mode, args.override)
        for run_id in stale["run_id"]:
            store.set_tags(run_id, {"svmrepro.pruned": f"configuration not in the {plan.mode} sweep of {experiment}"})
            store.delete_run(run_id)
        print(f"{experiment} ({plan.mode}): {len(stale)} runs outside the sweep deleted", flush=True)
    return 0


def gather_runs(spec: ReportSpec, mode: str, uri: str | None) -> pd.DataFrame:
    """All FINISHED runs of an output: its experiment's and those of the experiments it includes."""
    return pd.concat([runs_from_mlflow(name, mode, uri) for name in (spec.experiment, *spec.include)], ignore_index=True)


def log_outputs(spec: ReportSpec, paths: Output, mode: str, uri: str | None, n_runs: int) -> str:
    """Log an output's files, and its page as HTML (:func:`~svmrepro.report.artifacts.html_page`: the
    MLflow UI shows it with its pictures), as the artifacts of the run ``report-<experiment>-<mode>``.

    The run is made once per (experiment, mode); a rebuild deletes its artifacts before logging
    the new files, so neither runs nor files a build no longer writes pile up.
    """
    store = Store(uri)
    experiment_id = store.experiment_id(spec.experiment)
    tags = {REPORT_KIND: "report", REPORT_MODE: mode}
    run_id = store.find_run(experiment_id, tags)
    if run_id:
        store.clear_artifacts(run_id)
    else:
        run_id = store.start_run(experiment_id, f"report-{spec.experiment}-{mode}", tags)
    store.set_tags(run_id, {"svmrepro.runs": str(n_runs), "mlflow.note.content": spec.title,
                            RUN_NAME_TAG: f"report-{spec.experiment}-{mode}",  # renames an older report-<mode>
                            **source_tags(git_source())})
    for path in astuple(paths):
        if path.is_file():
            store.log_artifact(run_id, path)
    if paths.table_md.is_file():
        with tempfile.TemporaryDirectory() as folder:
            store.log_artifact(run_id, html_page(paths.table_md, Path(folder)))
    store.terminate(run_id, "FINISHED")
    return run_id


def verdict(ours: float, value: float, low: float, high: float) -> tuple[str, float]:
    """Our mean against the paper's ``value``, or its range [``low``, ``high``] (a blank end is open).

    Returns ``within range``, ``within 10 %`` or ``differs``, and the signed distance from the
    paper's value (or the range's nearer end) relative to it, 0 inside the range.
    """
    ranged = pd.isna(value)
    low, high = (low, high) if ranged else (value, value)
    nearest = min(max(ours, -math.inf if pd.isna(low) else low), math.inf if pd.isna(high) else high)
    if ranged and nearest == ours:
        return WITHIN_RANGE, 0.0
    if nearest == 0:
        rel = 0.0 if ours == 0 else math.copysign(math.inf, ours)
    else:
        rel = (ours - nearest) / abs(nearest)
    return (WITHIN_TOLERANCE if abs(rel) <= TOLERANCE else DIFFERS), rel


def our_numbers(runs: pd.DataFrame, spec: ReportSpec, paper: pd.DataFrame) -> pd.DataFrame:
    """Our mean and run count per (group, x, metric) as the output's table has them, and each
    group's log-log slopes (x = ``(fit)``); x written as in tables (:func:`x_label`)."""
    table = summarise(runs, spec)
    parts = [table[["group", "x", "runs"]].assign(metric=m, ours=table[f"{m}_mean"]) for m in spec.metrics]
    if spec.slopes:
        slopes = loglog_slopes(runs, spec, paper).rename(columns={"slope": "metric"})
        parts.append(slopes[["group", "metric", "ours", "runs"]].assign(x=SLOPE_X))
    numbers = pd.concat(parts, ignore_index=True)
    return numbers.assign(x=numbers["x"].map(x_label))


def claims(ours: pd.DataFrame, paper: pd.DataFrame) -> pd.DataFrame:
    """Every paper number beside our mean at its (group, x, metric), with :func:`verdict`; a number
    with a blank x beside our mean at each x. A number we have no runs for gets one row ``no runs``."""
    rows = []
    for _, number in paper.iterrows():
        at = (ours["group"] == str(number["group"])) & (ours["metric"] == number["metric"]) & ours["ours"].notna()
        if pd.notna(number["x"]):
            at &= ours["x"] == x_label(number["x"])
        said = {"metric": number["metric"], "paper": paper_text(number)}
        if not at.any():
            rows.append({**said, "group": number["group"], "x": x_label(number["x"]) if pd.notna(number["x"]) else "",
                         "runs": 0, "verdict": NO_RUNS})
        for _, mine in ours[at].iterrows():
            word, rel = verdict(mine["ours"], number["value"], number["low"], number["high"])
            rows.append({**said, "group": mine["group"], "x": mine["x"], "ours": mine["ours"], "runs": mine["runs"],
                         "rel": rel, "verdict": word})
    return pd.DataFrame(rows, columns=CLAIM_COLUMNS)


def claims_lines(spec: ReportSpec, runs: pd.DataFrame) -> list[str]:
    """The claims part of a check: counts per verdict, then the compared numbers as a table."""
    paper_path = spec.paper_path()
    if paper_path is None:
        return ["claims: the report names no paper numbers"]
    if runs.empty:
        return [f"claims: no runs to set beside {spec.paper}"]
    paper = read_paper(paper_path)
    try:
        found = claims(our_numbers(runs, spec, paper), paper)
    except SvmReproError as exc:
        return [f"claims: cannot compare: {exc}"]
    compared = found[found["verdict"] != NO_RUNS]
    counts = ", ".join(f"{n} {word}" for word, n in compared["verdict"].value_counts().items())
    head = f"claims vs {spec.paper}: {counts or 'none compared'}; without runs of ours: {len(found) - len(compared)}"
    if compared.empty:
        return [head]
    shown = pd.DataFrame({
        "group": compared["group"], "x": compared["x"], "metric": compared["metric"],
        "ours (runs)": [f"{m:.4g} ({n})" for m, n in zip(compared["ours"], compared["runs"])],
        "paper": compared["paper"], "rel": [f"{r:+.0%}" if r else "" for r in compared["rel"]], "verdict": compared["verdict"],
    })
    return [head, *("  " + line for line in shown.to_string(index=False).splitlines())]


def missing_lines(jobs: list[list[str]]) -> list[str]:
    """Jobs without a FINISHED run, one line per configuration with the seeds it lacks."""
    seeds: dict[str, list[str]] = {}
    for job in jobs:
        rest = " ".join(o for o in job if not o.startswith("seed=")) or "(the experiment as configured)"
        seeds.setdefault(rest, []).extend(o.removeprefix("seed=") for o in job if o.startswith("seed="))
    return [f"missing: {rest}" + (f" (seed {', '.join(s)})" if s else "") for rest, s in seeds.items()]


def checked_runs(spec: ReportSpec, plan: Plan, args: argparse.Namespace) -> pd.DataFrame:
    """The runs the output would be built from, read without writing anything (a SQLite store
    that does not exist is not opened: opening it would create it)."""
    if args.from_csv:
        path = output_paths(spec, plan.results_dir / spec.paper_id).runs_csv
        return read_runs(path) if path.is_file() else pd.DataFrame()
    uri = tracking_uri(args.tracking_uri)
    if not ensure_store(uri, create=False):
        return pd.DataFrame()
    return gather_runs(spec, plan.mode, uri)


def finished_counts(experiment: str, mode: str, args: argparse.Namespace) -> dict[str, int]:
    """FINISHED runs per run key of the experiment in the store (none read from a CSV)."""
    uri = tracking_uri(args.tracking_uri)
    if args.from_csv or not ensure_store(uri, create=False):
        return {}
    return Store(uri).finished_key_counts(experiment, mode)


def duplicate_lines(counts: dict[str, int]) -> list[str]:
    """Run keys with more than one FINISHED run: the output reads only the latest of each."""
    extra = [n for n in counts.values() if n > 1]
    if not extra:
        return []
    return [f"duplicates: {len(extra)} configurations have more than one FINISHED run "
            f"({sum(extra)} runs; the output uses the latest of each)"]


def check_one(experiment: str, plan: Plan, args: argparse.Namespace) -> str:
    """What exists and what is missing of one output's sweep, and its claims, as text."""
    spec = spec_of(experiment, plan.mode)
    extra = sweep_overrides(args.override)
    expected = {config_hash(cfg): job for job, cfg in job_configs(experiment, plan.mode, extra)}
    runs = checked_runs(spec, plan, args)
    own = runs[runs["tags.experiment"] == experiment] if not runs.empty else runs
    have = set(own["tags.config_hash"]) if not own.empty else set()
    missing = [job for key, job in expected.items() if key not in have]
    counts = finished_counts(experiment, plan.mode, args)
    lines = [
        f"{sum(counts.values()) or len(own)} FINISHED runs; the {plan.mode} sweep has {len(expected)} configurations: "
        f"{len(expected) - len(missing)} done, {len(missing)} missing",
        *missing_lines(missing),
        *duplicate_lines(counts),
    ]
    if have - set(expected):
        lines.append(f"{len(have - set(expected))} runs of configurations outside the sweep "
                     "(they count in the output; --prune deletes them)")
    if len(runs) > len(own):
        lines.append(f"{len(runs) - len(own)} runs of {', '.join(spec.include)} shown beside them")
    lines += claims_lines(spec, runs)
    return "\n".join([f"== {experiment} ({plan.mode})", *("  " + line for line in lines)])


def check(chosen: list[str], plan: Plan, args: argparse.Namespace) -> int:
    """Print :func:`check_one` of every output; 1 if one could not be checked, 2 (after one
    line with the repair) if the store is half-built or at another MLflow schema."""
    if not args.from_csv:
        try:  # read only: a broken store is reported, never migrated
            ensure_store(tracking_uri(args.tracking_uri), create=False)
        except TrackingError as exc:
            print(f"svmrepro-reproduce: error: {exc}", file=sys.stderr, flush=True)
            return 2
    failed = False
    for experiment in chosen:
        try:
            print(check_one(experiment, plan, args), flush=True)
        except (SvmReproError, HydraException) as exc:
            print(f"== {experiment} ({plan.mode})\n  cannot check: {exc}", flush=True)
            failed = True
    return 1 if failed else 0


def key_numbers(runs: pd.DataFrame, spec: ReportSpec) -> list[str]:
    """An output's key numbers: its ratios and log-log slopes when its report has them, else the
    median over runs of its first metric per group and x."""
    blocks = [ratios_markdown(ratios_to(summarise(runs, spec), spec), spec)] if spec.ratios else []
    if spec.slopes:
        blocks.append(slopes_markdown(loglog_slopes(runs, spec, None)))
    if blocks:
        return blocks
    metric = spec.metrics[0]
    by = [runs[spec.group].astype(str), numeric_or_text(runs[spec.x])]
    found = runs.groupby(by)[f"metrics.{metric}"].agg(["size", "median"])
    lines = [f"| {spec.group.split('.')[-1]} | {spec.x_label or spec.x} | runs | median {metric} |", "|---|---|---|---|"]
    lines += [f"| {group} | {x_label(x)} | {n} | {m:.4g} |" for (group, x), n, m in found.itertuples()]
    return ["\n".join(lines)]


def write_bench_readme(plan: Plan, args: argparse.Namespace) -> Path:
    """``<results>/bench/README.md``: per self-benchmark its title, key numbers (:func:`key_numbers`)
    and machine, read from the runs table written beside its output; regenerated, never edited."""
    out_dir = (plan.results_dir / BENCH).resolve()
    options = [*(f"--override {o}" for o in args.override), *(["--from-csv"] if args.from_csv else [])]
    command = " ".join(["svmrepro-reproduce", BENCH, "--mode", plan.mode, *options])
    protocol = "experiments/bench/README.md"
    beside = out_dir.parent.parent / protocol  # <checkout>/results/bench -> <checkout>/experiments
    if beside.is_file():  # a relative link, never a path of the machine that built it
        protocol = f"[{protocol}]({os.path.relpath(beside, out_dir)})"
    lines = [f"# Self-benchmarks ({plan.mode} mode)", "",
             f"Latest figures, written by `{command}` from each output's runs table; what each benchmark "
             f"measures, its target and how to run it: {protocol}.", ""]
    for experiment in experiments(BENCH):
        spec = spec_of(experiment, plan.mode)
        paths = output_paths(spec, out_dir)
        if not paths.runs_csv.is_file():
            lines += [f"## {spec.title}", "", "not built yet", ""]
            continue
        runs = read_runs(paths.runs_csv)
        load = pd.to_numeric(runs.get("tags.load_avg_1m", pd.Series(dtype=str)), errors="coerce")
        lines += [
            f"## [{spec.title}]({paths.table_md.name})", "",
            f"- runs: {len(runs)}, the latest started {runs['start_time'].max()}; machine: "
            + ", ".join(sorted(set(runs["tags.cpu_model"] + " (" + runs["tags.cpu_count"] + " cores)"))),
            f"- 1-minute load average when the runs started: median {load.median():.2f}, max {load.max():.2f}", "",
            *(block + "\n" for block in key_numbers(runs, spec)),
        ]
    path = out_dir / "README.md"
    out_dir.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines))
    return path


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="svmrepro-reproduce", description=__doc__.split("\n")[0])
    parser.add_argument("papers", nargs="*", help=f"paper ids (default: all of {', '.join(papers())})")
    parser.add_argument("--mode", default="quick", help="quick (default) or full")
    parser.add_argument("--experiment", action="append", default=[], help="only <paper>/<id> (repeatable)")
    parser.add_argument("--from-csv", action="store_true", help="rebuild outputs from their runs CSV")
    parser.add_argument("--no-run", action="store_true", help="build outputs from MLflow without sweeping")
    parser.add_argument("--tracking-uri", default=None, help="MLflow store (default: ./mlflow.db)")
    parser.add_argument("--results-dir", type=Path, default=None,
                        help="write outputs below this folder (default: the plan's, below the current folder)")
    parser.add_argument("--config-dir", action="append", default=[], type=Path,
                        help="a folder of configs of your own (experiment/<paper>/<id>.yaml, dataset/...) added "
                             "to the package's (repeatable)")
    parser.add_argument("--override", action="append", default=[], help="extra Hydra override for sweeps")
    parser.add_argument("--check", action="store_true",
                        help="list existing and missing runs and how our numbers stand to the paper's; run nothing")
    parser.add_argument("--prune", action="store_true",
                        help="delete (restorably) the runs of configurations the sweeps no longer have; run nothing")
    return parser.parse_args(argv)


def use_config_dirs(dirs: list[Path]) -> None:
    """The user's config folders, for this process's compositions and (as ``hydra.searchpath``) its sweeps."""
    for folder in dirs:
        if not (folder / "experiment").is_dir() and not (folder / "dataset").is_dir():
            raise SvmReproError(f"--config-dir {folder}: expected a folder with experiment/<paper>/<id>.yaml "
                                "or dataset/<name>.yaml files")
    if dirs:
        os.environ[CONFIG_DIRS_ENV] = os.pathsep.join(str(folder.resolve()) for folder in dirs)


def selected_experiments(args: argparse.Namespace) -> list[str]:
    known = experiments()
    for name in [*args.papers, *args.experiment]:
        if name not in known and name not in papers():
            raise SvmReproError(f"unknown paper or experiment {name!r}; valid: {', '.join(papers() + known)}")
    if args.experiment:
        return args.experiment
    return [e for p in (args.papers or papers()) for e in experiments(p)]


def main(argv: list[str] | None = None) -> int:
    logging.basicConfig(level=logging.INFO, format="[%(asctime)s][%(name)s] %(message)s")
    try:
        args = parse_args(argv)
        use_config_dirs(args.config_dir)
        plan = load_plan(args.mode, args.results_dir)
        chosen = selected_experiments(args)
    except SvmReproError as exc:
        print(f"svmrepro-reproduce: error: {exc}", file=sys.stderr)
        return 2
    if args.check:
        return check(chosen, plan, args)
    if args.prune:
        return prune(chosen, plan, args)
    failed = []
    for experiment in chosen:
        try:
            reproduce_one(experiment, plan, args)
        except SvmReproError as exc:
            log.error("%s", exc)
            failed.append(experiment)
    if any(e.split("/")[0] == BENCH for e in chosen):
        log.info("wrote %s", write_bench_readme(plan, args))
    if failed:
        print(f"svmrepro-reproduce: {len(failed)} output(s) not built: {', '.join(failed)}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
