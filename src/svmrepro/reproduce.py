"""``svmrepro-reproduce``: run what is missing of each experiment's sweep, then rebuild its output.

    svmrepro-reproduce                         # every paper, quick mode
    svmrepro-reproduce cross_training --mode full
    svmrepro-reproduce cross_training --from-csv   # rebuild committed outputs, no MLflow needed

Per mode, ``reproduce/<mode>.yaml`` says where outputs go and how sweeps are launched. A sweep
is ``svmrepro-run -m experiment=<paper>/<id> mode=<mode>`` in a child process; finished runs are
skipped by the runner, so an interrupted reproduction resumes where it stopped.
"""

from __future__ import annotations

import argparse
import logging
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import yaml

from hydra.utils import instantiate
from omegaconf import OmegaConf

from svmrepro.compose import compose_config, experiments, papers, sweep_jobs
from svmrepro.data.files import PROJECT_ROOT
from svmrepro.errors import DataError, SvmReproError
from svmrepro.report import build_output, output_paths, write_not_run
from svmrepro.report.runs import read_runs, runs_from_mlflow
from svmrepro.report.spec import ReportSpec, spec_from_config

log = logging.getLogger("svmrepro.reproduce")
PLANS = PROJECT_ROOT / "reproduce"


@dataclass(frozen=True)
class Plan:
    mode: str
    results_dir: Path
    launcher: str
    n_jobs: int


def load_plan(mode: str, results_dir: Path | None = None) -> Plan:
    path = PLANS / f"{mode}.yaml"
    if not path.is_file():
        valid = sorted(p.stem for p in PLANS.glob("*.yaml"))
        raise SvmReproError(f"--mode {mode}: no plan {path}; valid modes: {', '.join(valid)}")
    raw = yaml.safe_load(path.read_text())
    return Plan(
        mode=mode,
        results_dir=results_dir or PROJECT_ROOT / raw["results_dir"],
        launcher=raw["launcher"],
        n_jobs=int(raw["n_jobs"]),
    )


def spec_of(experiment: str, mode: str) -> ReportSpec:
    cfg = compose_config([f"experiment={experiment}", f"mode={mode}"])
    return spec_from_config(experiment, cfg.get("report"))


def run_sweep(experiment: str, plan: Plan, tracking_uri: str | None, extra: list[str]) -> bool:
    command = [
        sys.executable, "-m", "svmrepro", "-m", f"experiment={experiment}", f"mode={plan.mode}",
        f"hydra/launcher={plan.launcher}", f"hydra.launcher.n_jobs={plan.n_jobs}", *extra,
    ]
    if tracking_uri:
        command.append(f"tracking.uri={tracking_uri}")
    log.info("sweep: %s", " ".join(command[2:]))
    return subprocess.run(command, cwd=PROJECT_ROOT).returncode == 0


def missing_data(experiment: str, mode: str) -> str | None:
    """Why the data of some job of the sweep cannot be had (files absent and not downloadable), or None.

    Fetching is the loaders' own code, so a file that can be downloaded is downloaded here.
    """
    base = [f"experiment={experiment}", f"mode={mode}"]
    seen = set()
    for job in sweep_jobs(compose_config(base).sweep[mode]):
        node = compose_config([*base, *job]).dataset
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
        runs = pd.concat(
            [runs_from_mlflow(name, plan.mode, args.tracking_uri) for name in (experiment, *spec.include)],
            ignore_index=True,
        )
        if runs.empty:
            raise SvmReproError(f"{experiment}: no FINISHED runs in mode {plan.mode}")
    paths = build_output(spec, runs, out_dir, PROJECT_ROOT, plan.mode)
    log.info("%s: wrote %s (+ .csv, .png, .runs.csv) from %d runs", experiment, paths.table_md, len(runs))


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="svmrepro-reproduce", description=__doc__.split("\n")[0])
    parser.add_argument("papers", nargs="*", help=f"paper ids (default: all of {', '.join(papers())})")
    parser.add_argument("--mode", default="quick", help="quick (default) or full")
    parser.add_argument("--experiment", action="append", default=[], help="only <paper>/<id> (repeatable)")
    parser.add_argument("--from-csv", action="store_true", help="rebuild outputs from their runs CSV")
    parser.add_argument("--no-run", action="store_true", help="build outputs from MLflow without sweeping")
    parser.add_argument("--tracking-uri", default=None, help="MLflow store (default: the project's mlflow.db)")
    parser.add_argument("--results-dir", type=Path, default=None, help="write outputs below this folder")
    parser.add_argument("--override", action="append", default=[], help="extra Hydra override for sweeps")
    return parser.parse_args(argv)


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
        plan = load_plan(args.mode, args.results_dir)
        chosen = selected_experiments(args)
    except SvmReproError as exc:
        print(f"svmrepro-reproduce: error: {exc}", file=sys.stderr)
        return 2
    failed = []
    for experiment in chosen:
        try:
            reproduce_one(experiment, plan, args)
        except SvmReproError as exc:
            log.error("%s", exc)
            failed.append(experiment)
    if failed:
        print(f"svmrepro-reproduce: {len(failed)} output(s) not built: {', '.join(failed)}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
