"""``svmrepro-reproduce``: run what is missing of each experiment's sweep, then rebuild its output.

    svmrepro-reproduce                         # every paper, quick mode
    svmrepro-reproduce cross_training --mode full
    svmrepro-reproduce cross_training --from-csv   # rebuild committed outputs, no MLflow needed
    svmrepro-reproduce cross_training --check      # which runs exist, which are missing, which claims hold
    svmrepro-reproduce cross_training --prune      # delete runs of configurations the sweeps no longer have

Per mode, a plan (``reproduce/<mode>.yaml`` in the checkout, ``svmrepro/plans`` in the wheel) says
where outputs go (below the current folder unless ``--results-dir``) and how sweeps are launched. A
sweep is what ``svmrepro-run -m experiment=<paper>/<id> mode=<mode>`` does; every sweep of a reproduction
runs in one child process started in the current folder (:mod:`svmrepro.sweeps`), and each output is built as
its sweep ends, while the next sweep runs. Finished runs are skipped by the runner, so an interrupted
reproduction resumes where it stopped. ``--config-dir DIR`` adds a folder of the user's own experiments and data sets.

An output built from MLflow is also logged there: its files become the artifacts of one run per
(experiment, mode), ``report-<mode>``, tagged ``svmrepro.kind=report``; a rebuild replaces them.
That run has none of the runner's tags (``mode``, ``config_hash``), so it is never read as a result.

Outputs are built in dependency order: one that includes another experiment's runs
(``report.include``) after that experiment's sweep. An output counts the runs of its sweep's
configurations only: runs of other configurations in the same MLflow experiment (edited out of the
sweep, or a user's own) are left out with one warning line, unless ``--include-extra``;
``--prune`` soft-deletes them (restorable with ``mlflow runs restore``). After the outputs, the
claims of every paper are judged and ``<results>/README.md`` is written (:mod:`svmrepro.report.claims`).
The reproduction prints "experiment k of N" with one ETA for the whole of it, and ends with a summary.

Before the first sweep (and first with ``--check``) every job of the sweeps to run is composed and built,
each output's report spec read, and every paper's claims file checked against what its outputs' sweeps can
produce (:mod:`svmrepro.preflight`): each mistake is one line naming the file and the key, and exit code 2.

``--check`` runs and writes nothing. Per output it reads the runs the build reads (those outside
the sweeps left out, with one line saying how many, unless ``--include-extra``), counts them, lists the
configurations of the sweep that have none (by the ``config_hash`` tag the runner gives a run),
counts the runs made by code that has changed since (:func:`stale_lines`), prints each of its
claims' verdicts, and sets our mean of every (group, x, metric) the paper reports beside the
paper's number (:mod:`svmrepro.report.numbers`).
"""

from __future__ import annotations

from svmrepro.stop_line import one_line_stop  # first: a Ctrl-C during the slow imports below is one line

one_line_stop("svmrepro-reproduce", __name__)

import _thread
import argparse
import copy
import hashlib
import json
import logging
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import nullcontext
from dataclasses import astuple, dataclass
from functools import cache, partial
from typing import TYPE_CHECKING
from pathlib import Path

import pandas as pd
import yaml

from hydra.errors import HydraException
from omegaconf import OmegaConf, read_write

from svmrepro import settings
from svmrepro.code_digest import code_digest, made_by
from svmrepro.data.user_code import configs_only
from svmrepro.compose import (
    compose_config, composition_cache, config_groups, experiments, papers, searchpath_override, use_config_dirs,
)
from svmrepro.locations import CONF_DIR, PLANS_DIR, check_writable
from svmrepro.environment import git_source
from svmrepro.options import unknown_options
from svmrepro.errors import DataError, SvmReproError
from svmrepro.exclusive import SHARED, jobs_at_once, machine_slot
from svmrepro.forks import ahead
from svmrepro.identity import config_hash
from svmrepro.preflight import claims_problems, reproduction_problems
from svmrepro.redact import RedactFilter
from svmrepro.report.claims.schema import claims_path, load_claims
from svmrepro.report.runs import read_runs, runs_from_mlflow
from svmrepro.report.spec import ReportSpec, spec_from_config
from svmrepro.store import (
    RUN_KEY_TAG, RUN_NAME_TAG, TRACKING_URI_ENV, TrackingError, check_userinfo, commit_column, ensure_store, run_commit, source_tags, sqlite_path, tracking_uri,
)
from svmrepro.sweep.jobs import experiment_composer, experiment_jobs
from svmrepro.sweep.progress import clock
from svmrepro.writing import symlinks_below

if TYPE_CHECKING:
    from svmrepro.report.output import Output
    from svmrepro.store import Store

# scikit-learn, matplotlib and MLflow (builds, pages, the scoreboard) are imported where they are used: a check
# that finds a mistake ends in about 2 s, not after 5 s of imports

log = logging.getLogger("svmrepro.reproduce")
#: MLflow's switch for its progress bars of artifacts (mlflow.environment_variables, not imported at start-up)
ARTIFACTS_PROGRESS_BAR_ENV = "MLFLOW_ENABLE_ARTIFACTS_PROGRESS_BAR"
#: tags of the run holding an output's files (never the runner's tags: it is not a result)
REPORT_KIND, REPORT_MODE = "svmrepro.kind", "svmrepro.mode"


@dataclass(frozen=True)
class Plan:
    mode: str
    results_dir: Path
    launcher: str
    n_jobs: int
    #: every experiment's ``timing`` in this mode, when the plan sets one (quick: ``shared``)
    timing: str | None = None


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
        timing=raw.get("timing"),
    )


def spec_of(experiment: str, mode: str) -> ReportSpec:
    cfg = compose_config([f"experiment={experiment}", f"mode={mode}"])
    return spec_from_config(experiment, cfg.get("report"))


def sweep_arguments(experiment: str, plan: Plan, extra: list[str]) -> list[str]:
    """``svmrepro-run`` arguments of the experiment's sweep: ``plan.n_jobs`` jobs at once or fewer when the
    experiment says so (``sweep_jobs``; one for ``timing: exclusive``, unless the plan's ``timing`` replaces
    the experiment's); ``extra`` overrides come last and win."""
    timing = [f"timing={plan.timing}"] if plan.timing else []
    cfg = compose_config([f"experiment={experiment}", f"mode={plan.mode}"])
    settings.check(cfg)
    if plan.timing:
        cfg.timing = plan.timing
    n_jobs = jobs_at_once(cfg, plan.n_jobs)
    return ["-m", f"experiment={experiment}", f"mode={plan.mode}", *timing, f"hydra/launcher={plan.launcher}",
            f"hydra.launcher.n_jobs={n_jobs}", *searchpath_override(), *extra]


def run_sweeps(chosen: list[str], plan: Plan, tracking_uri: str | None, extra: list[str]) -> Iterator[tuple[str, bool]]:
    """Each experiment's sweep, in ``chosen``'s order, all in one child process (:mod:`svmrepro.sweeps`) started
    in the current folder; yields ``(experiment, whether every job succeeded)`` as each sweep ends, so its output
    is built while the next one runs. An experiment whose sweep never ended (the child process died) is False.
    ``tracking_uri`` is passed as ``$MLFLOW_TRACKING_URI``."""
    sweeps = [(experiment, sweep_arguments(experiment, plan, extra)) for experiment in chosen]
    for experiment, arguments in sweeps:
        log.info("sweep: %s", " ".join(arguments))
    # the store reaches the child through its environment (read when tracking.uri is unset), never
    # its command line: a password in the URI would show in `ps` and in the logged command
    env = {**os.environ, TRACKING_URI_ENV: tracking_uri} if tracking_uri else None
    read_end, write_end = os.pipe()
    command = [sys.executable, "-m", "svmrepro.sweeps", "--status-fd", str(write_end), json.dumps(sweeps)]
    try:
        child = subprocess.Popen(command, env=env, pass_fds=(write_end,))
    except BaseException:
        os.close(read_end)
        raise
    finally:  # the child's copy alone: the status lines end when the child does
        os.close(write_end)
    ended = set()
    with child, os.fdopen(read_end) as status:
        try:
            for line in status:
                report = json.loads(line)
                ended.add(report["experiment"])
                yield report["experiment"], report["code"] == 0
        except BaseException:  # a stop, or an error here: the sweeps stop as svmrepro-run's do (runs KILLED)
            child.terminate()  # then waited for (the with), never left running on its own
            raise
    if child.returncode != 0 and len(ended) < len(sweeps):
        log.error("the sweeps' process ended with exit code %s; %d sweeps did not end", child.returncode,
                  len(sweeps) - len(ended))
    for experiment in chosen:
        if experiment not in ended:
            yield experiment, False


def finished_already(experiment: str, plan: Plan, args: argparse.Namespace) -> int:
    """The number of jobs of the experiment's sweep when the run of every one FINISHED already in the store
    (:func:`svmrepro.runner.finished_runs`, the sweeper's own test, one read of the store), so no sweep need
    start for it; 0 when some job is left (or the sweep has none). Each job is composed as the sweep composes
    it (the plan's ``timing``, the ``--override``s), the store is the one the sweep would log to. Only an
    existing SQLite store at MLflow's schema is read here (never made or migrated); a server, or any other
    store, is left to the sweep, which reports what is wrong with it in its own words."""
    from svmrepro.runner import finished_runs  # scikit-learn and MLflow: imported when a reproduction runs

    uri = tracking_uri(args.tracking_uri)
    path = sqlite_path(uri)
    if path is None or not path.is_file():
        return 0
    ensure_store(uri, create=False)  # a store at another schema, or damaged: refused, untouched
    # the plan's timing is not set: it is part of no run's identity. The configs are the invocation's, read-only:
    # one whose store is not this one (--tracking-uri) is read from a copy that names it
    jobs = []
    for _, cfg, choices in composed_jobs(experiment, plan.mode, sweep_overrides(args.override)):
        if tracking_uri(cfg.tracking.uri) != uri:
            cfg = copy.deepcopy(cfg)
            with read_write(cfg):
                cfg.tracking.uri = uri
        jobs.append((cfg, choices))
    return len(jobs) if jobs and len(finished_runs(jobs)) == len(jobs) else 0


def sweeps_left(chosen: list[str], plan: Plan, args: argparse.Namespace) -> Iterator[tuple[str, bool]]:
    """:func:`run_sweeps` of the experiments of ``chosen`` with a job left; one whose every run FINISHED already
    (:func:`finished_already`) starts no sweep, its output is built from the store at once. In ``chosen``'s
    order, so an output is built after those it includes.

    Which experiments are done is found by a fork of this process (:func:`svmrepro.forks.ahead`: it starts with
    the checks' compositions) while the caller builds the outputs of those found so far; once one has a job
    left, the rest are waited for, so that every sweep left runs in the one child process."""
    import joblib  # its cores

    # imported here, not by the fork and again by this process's pages: scikit-learn and the run's modules
    # (finished_already's), MLflow's client (the pages')
    import svmrepro.runner  # noqa: F401
    import svmrepro.store.client  # noqa: F401

    swept: Iterator[tuple[str, bool]] | None = None
    done: dict[str, int] = {}
    ended: dict[str, bool] = {}
    with ahead(partial(_finished_or_none, plan=plan, args=args), chosen, joblib.cpu_count()) as found:
        try:
            for experiment in chosen:
                if experiment not in done:
                    done[experiment] = next(found)
                if done[experiment]:
                    log.info("%s: the run of each of its %d jobs FINISHED already (one read of the store): no sweep "
                             "started", experiment, done[experiment])
                    yield experiment, True
                    continue
                if swept is None:  # the first with a job left: the sweeps of all those left start now
                    done.update(zip([e for e in chosen if e not in done], found))
                    swept = run_sweeps([e for e in chosen if not done[e]], plan, args.tracking_uri, args.override)
                while experiment not in ended:
                    name, complete = next(swept)
                    ended[name] = complete
                yield experiment, ended.pop(experiment)
        finally:  # a stop: the sweeps' process ends with it (run_sweeps)
            if swept is not None:
                swept.close()


def _finished_or_none(experiment: str, plan: Plan, args: argparse.Namespace) -> int:
    """:func:`finished_already`, 0 where the store cannot be read here (the sweep finds and reports why, in its own
    words)."""
    try:
        return finished_already(experiment, plan, args)
    except Exception as exc:  # noqa: BLE001
        log.debug("%s: the store not read before the sweep: %s", experiment, exc)
        return 0


def composed_jobs(experiment: str, mode: str, extra: dict[str, str] | None = None):
    """(overrides, config, config-group options) of every job of the experiment's sweep in ``mode``, each
    composed once for the invocation and read-only (:meth:`~svmrepro.sweep.jobs.JobComposer.shared`)."""
    composer = experiment_composer(experiment, mode)
    for job in experiment_jobs(experiment, mode, extra):
        yield job, *composer.shared(job)


def missing_data(experiment: str, mode: str) -> str | None:
    """Why the data of some job of the sweep cannot be had (files absent and not downloadable), or None.

    Fetching is the loaders' own code, so a file that can be downloaded is downloaded here.
    """
    from svmrepro.build import build_source
    seen = set()
    for _, cfg, _ in composed_jobs(experiment, mode):
        node = cfg.dataset
        key = OmegaConf.to_yaml(node)
        if key in seen:
            continue
        seen.add(key)
        with configs_only():  # a config folder's module is read, never run, by the reproducing process
            source = build_source(node)
        if source is None:  # a config folder's own class: its run fetches what it needs
            continue
        try:
            for remote in getattr(source, "remote_files", list)():
                remote.fetch()
        except DataError as exc:
            return str(exc)
    return None


def runnable(experiment: str, plan: Plan, args: argparse.Namespace) -> bool:
    """Whether the experiment's data can be had; if not, its output is a page saying why."""
    from svmrepro.report.output import write_not_run
    reason = None if (args.from_csv or args.no_run) else missing_data(experiment, plan.mode)
    if reason:
        spec = spec_of(experiment, plan.mode)
        path = write_not_run(spec, plan.results_dir / spec.paper_id, reason)
        log.warning("%s: not run (%s); wrote %s", experiment, reason, path)
    return reason is None


def build_one(experiment: str, plan: Plan, args: argparse.Namespace) -> bool:
    """Build the output of ``experiment`` from its runs (MLflow's, or its runs CSV with ``--from-csv``); False
    when it has none to build from."""
    from svmrepro.report.output import build_output, output_paths
    spec = spec_of(experiment, plan.mode)
    out_dir = plan.results_dir / spec.paper_id
    if args.from_csv:
        runs_csv = output_paths(spec, out_dir).runs_csv
        if not runs_csv.is_file():
            log.warning("%s: no runs table %s: its runs have not been made in mode %s", experiment, runs_csv, plan.mode)
            return False
        runs = read_runs(runs_csv)
    else:
        runs = gather_runs(spec, plan.mode, args.tracking_uri)
        if not args.include_extra:
            runs = without_extra(runs, spec, plan.mode, args.override)
        if runs.empty:
            raise SvmReproError(f"{experiment}: no FINISHED runs in mode {plan.mode}")
    paths = build_output(spec, runs, out_dir, plan.mode)
    log.info("%s: wrote %s (+ .csv, .png, .runs.csv) from %d runs", experiment, paths.table_md, len(runs))
    if not args.from_csv:
        run_id = log_outputs(spec, paths, plan.mode, args.tracking_uri, len(runs))
        log.info("%s: logged the output to MLflow run %s", experiment, run_id)
    return True


def in_sweeps(runs: pd.DataFrame, spec: ReportSpec, mode: str, overrides: list[str]) -> pd.Series:
    """Which of ``runs`` are of configurations of the ``mode`` sweeps of the output's experiment and
    of those it includes: the runs an output is built from, and --check counts (unless --include-extra)."""
    extra = tuple(sorted(sweep_overrides(overrides).items()))
    wanted = frozenset().union(*(sweep_hashes(name, mode, extra) for name in (spec.experiment, *spec.include)))
    return runs["tags.config_hash"].isin(wanted)


def without_extra(runs: pd.DataFrame, spec: ReportSpec, mode: str, overrides: list[str]) -> pd.DataFrame:
    """``runs`` less those outside the sweeps (:func:`in_sweeps`), with one warning line saying how
    many were left out."""
    if runs.empty:
        return runs
    inside = in_sweeps(runs, spec, mode, overrides)
    if not inside.all():
        log.warning("%s: %d %s", spec.experiment, int((~inside).sum()), left_out_text(mode))
    return runs[inside].reset_index(drop=True)


def left_out_text(mode: str) -> str:
    return f"runs of configurations outside the {mode} sweep left out (--include-extra keeps them; --prune deletes them)"


def in_dependency_order(chosen: list[str], mode: str, add_included: bool) -> list[str]:
    """``chosen`` with every experiment after those its output includes (``report.include``);
    with ``add_included`` an included experiment not chosen is added, so its sweep runs first."""
    ordered: list[str] = []
    visiting: set[str] = set()

    def visit(name: str) -> None:
        if name in ordered:
            return
        if name in visiting:
            raise SvmReproError(f"{name}: report.include makes a cycle")
        visiting.add(name)
        for included in spec_of(name, mode).include:
            if included in chosen or add_included:
                visit(included)
        visiting.discard(name)
        ordered.append(name)

    for name in chosen:
        visit(name)
    return ordered


def sweep_overrides(overrides: list[str]) -> dict[str, str]:
    """``--override`` items that change configurations (``key=value``; Hydra's own settings do not)."""
    if any("=" not in item for item in overrides):
        raise SvmReproError(f"every --override must be key=value, got {overrides}")
    pairs = dict(item.split("=", 1) for item in overrides)
    return {key: value for key, value in pairs.items() if not key.startswith("hydra")}


@cache
def sweep_hashes(experiment: str, mode: str, extra: tuple[tuple[str, str], ...] = ()) -> frozenset[str]:
    """The ``config_hash`` of every configuration of the experiment's sweep in ``mode``."""
    return frozenset(config_hash(cfg) for _, cfg, _ in composed_jobs(experiment, mode, dict(extra)))


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
    from svmrepro.store import Store

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
    the new files, so neither runs nor files a build no longer writes pile up. A rebuild whose files and tags
    are those the run holds already (:func:`logged_already`) logs nothing: a reproduction with nothing to do
    rewrites no artifact.
    """
    from svmrepro.report.artifacts import html_page
    from svmrepro.store import Store

    store = Store(uri)
    experiment_id = store.experiment_id(spec.experiment)
    tags = {REPORT_KIND: "report", REPORT_MODE: mode}
    run_id = store.find_run(experiment_id, tags)
    logged = {"svmrepro.runs": str(n_runs), "mlflow.note.content": spec.title,
              RUN_NAME_TAG: f"report-{spec.experiment}-{mode}",  # renames an older report-<mode>
              **source_tags(git_source())}
    with tempfile.TemporaryDirectory() as folder:
        files = [path for path in astuple(paths) if path.is_file()]
        if paths.table_md.is_file():
            files.append(html_page(paths.table_md, Path(folder)))
        logged[OUTPUT_DIGEST_TAG] = output_digest(files, logged)
        if run_id and logged_already(store, run_id, logged[OUTPUT_DIGEST_TAG], files):
            return run_id
        if run_id:
            store.clear_artifacts(run_id)
        else:
            run_id = store.start_run(experiment_id, f"report-{spec.experiment}-{mode}", tags)
        store.set_tags(run_id, logged)
        for path in files:
            store.log_artifact(run_id, path)
    store.terminate(run_id, "FINISHED")
    return run_id


#: the report run's tag that says what it logged: :func:`output_digest` of its artifacts and tags
OUTPUT_DIGEST_TAG = "svmrepro.output_digest"


def output_digest(files: list[Path], tags: dict[str, str]) -> str:
    """sha256 over the tags a report run gets and the name and content of each file it logs: equal digests,
    equal run."""
    total = hashlib.sha256()
    for key in sorted(tags):
        total.update(f"{key}\0{tags[key]}\0".encode())
    for path in files:
        total.update(f"{path.name}\0".encode())
        total.update(hashlib.sha256(path.read_bytes()).digest())
    return total.hexdigest()


def logged_already(store: Store, run_id: str, digest: str, files: list[Path]) -> bool:
    """Whether report run ``run_id`` ended FINISHED with :func:`output_digest` ``digest`` and holds exactly
    ``files`` as its artifacts, each of the same size: a rebuild that changed nothing logs nothing again; a file
    added to the run by hand, one missing or one of another size makes it log anew."""
    status, tags = store.status_and_tags(run_id)
    return (status == "FINISHED" and tags.get(OUTPUT_DIGEST_TAG) == digest
            and store.artifact_sizes(run_id) == {path.name: path.stat().st_size for path in files})


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
    from svmrepro.report.output import output_paths
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
    from svmrepro.store import Store

    return Store(uri).finished_key_counts(experiment, mode)


def duplicate_lines(counts: dict[str, int]) -> list[str]:
    """Run keys with more than one FINISHED run: the output reads only the latest of each."""
    extra = [n for n in counts.values() if n > 1]
    if not extra:
        return []
    return [f"duplicates: {len(extra)} configurations have more than one FINISHED run "
            f"({sum(extra)} runs; the output uses the latest of each)"]


def stale_lines(runs: pd.DataFrame) -> list[str]:
    """Runs made by code that has changed since (:mod:`svmrepro.code_digest`), and runs whose code
    cannot be told (no ``code_digest`` tag, and a commit git does not have here)."""
    if runs.empty:
        return []
    tags = runs.filter(like="tags.").rename(columns=lambda name: name.removeprefix("tags."))
    made = pd.Series([made_by(row, run_commit(row)) for row in tags.to_dict("records")], index=runs.index)
    commits = commit_column(runs).fillna("unknown").str[:8]
    stale, unknown = made.notna() & (made != code_digest()), made.isna()
    lines = []
    if stale.any():
        lines.append(f"stale: {int(stale.sum())} runs (code changed since {', '.join(sorted(set(commits[stale])))}; "
                     "the sweep runs them again)")
    if unknown.any():
        lines.append(f"code unknown: {int(unknown.sum())} runs (no code_digest tag, and commit "
                     f"{', '.join(sorted(set(commits[unknown])))} is not in a git checkout here)")
    return lines


def check_one(experiment: str, plan: Plan, args: argparse.Namespace) -> str:
    """What exists and what is missing of one output's sweep, and its claims, as text."""
    from svmrepro.report.claims.scoreboard import RunsTables
    from svmrepro.report.claims.verdict import judge
    from svmrepro.report.numbers import distance_lines
    spec = spec_of(experiment, plan.mode)
    extra = sweep_overrides(args.override)
    expected = {config_hash(cfg): job for job, cfg, _ in composed_jobs(experiment, plan.mode, extra)}
    runs = checked_runs(spec, plan, args)
    # the runs the build reads: a CSV holds them already; from MLflow, without those outside the sweeps
    left_out = 0
    if not (args.from_csv or args.include_extra or runs.empty):
        inside = in_sweeps(runs, spec, plan.mode, args.override)
        left_out, runs = int((~inside).sum()), runs[inside].reset_index(drop=True)
    own = runs[runs["tags.experiment"] == experiment] if not runs.empty else runs
    have = set(own["tags.config_hash"]) if not own.empty else set()
    missing = [job for key, job in expected.items() if key not in have]
    kept = set(own[f"tags.{RUN_KEY_TAG}"]) if f"tags.{RUN_KEY_TAG}" in own else set()
    counts = {key: n for key, n in finished_counts(experiment, plan.mode, args).items() if key in kept}
    lines = [
        f"{sum(counts.values()) or len(own)} FINISHED runs; the {plan.mode} sweep has {len(expected)} configurations: "
        f"{len(expected) - len(missing)} done, {len(missing)} missing",
        *missing_lines(missing),
        *duplicate_lines(counts),
        *stale_lines(own),
    ]
    if left_out:
        lines.append(f"{left_out} {left_out_text(plan.mode)}")
    if have - set(expected):
        lines.append(f"{len(have - set(expected))} runs of configurations outside the sweep "
                     "(they count in the output; --prune deletes them)")
    if len(runs) > len(own):
        lines.append(f"{len(runs) - len(own)} runs of {', '.join(spec.include)} shown beside them")
    lines += [f"claim {v.claim.id} ({v.claim.source}): {v.verdict}: {v.reason}; ours: {v.ours()}"
              for v in (judge(claim, RunsTables(plan.results_dir, {experiment: runs}))
                        for claim in load_claims(spec.paper_id) if claim.output == experiment)]
    lines += distance_lines(spec, runs)
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
            stop_if_stopped(exc)
            print(f"== {experiment} ({plan.mode})\n  cannot check: {exc}", flush=True)
            failed = True
    return 1 if failed else 0


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="svmrepro-reproduce", description=__doc__.split("\n")[0])
    parser.add_argument("papers", nargs="*",
                        help=f"paper ids or <paper>/<id> experiments (default: all of {', '.join(papers())})")
    parser.add_argument("--mode", default="quick", help="quick (default), full or confirm (full on fresh seeds)")
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
    parser.add_argument("--include-extra", action="store_true",
                        help="count runs of configurations outside the sweep (a user's own) in the outputs")
    parser.add_argument("--check", action="store_true",
                        help="list existing and missing runs, each claim's verdict and how our numbers stand to "
                             "the paper's; run nothing")
    parser.add_argument("--prune", action="store_true",
                        help="delete (restorably) the runs of configurations the sweeps no longer have; run nothing")
    args = parser.parse_args(argv)
    args.tracking_uri = store_of_overrides(args)
    return args


def store_of_overrides(args: argparse.Namespace) -> str | None:
    """The store: ``--tracking-uri``, or a ``--override tracking.uri=...``, which is taken out of the
    overrides so that the sweeps get it in their environment (never on a command line, where a password
    shows in ``ps``) and the outputs are built from the same store the sweeps logged to."""
    given = [item for item in args.override if item.lstrip("+~").split("=", 1)[0] == "tracking.uri"]
    args.override = [item for item in args.override if item not in given]
    uris = {item.split("=", 1)[1] for item in given if "=" in item} | ({args.tracking_uri} if args.tracking_uri else set())
    if len(uris) > 1:
        raise SvmReproError("--tracking-uri and --override tracking.uri=... name different stores: give one")
    return next(iter(uris), None)


def check_folders(plan: Plan, args: argparse.Namespace) -> None:
    """Before anything runs: ``--from-csv`` has a results folder to read, and the folders a
    reproduction writes (the results; for sweeps the current folder, where they write ``multirun/``)
    can be written. ``--check`` and ``--prune`` write no file."""
    if args.from_csv and not plan.results_dir.is_dir():
        raise SvmReproError(f"--from-csv: no results folder {plan.results_dir.resolve()}: expected the outputs' runs "
                            "CSVs in it (<paper>/<id>.runs.csv); give --results-dir, or build from MLflow first")
    if args.check or args.prune:
        return
    links = symlinks_below(plan.results_dir)
    if links:
        more = f" (and {len(links) - 1} more)" if len(links) > 1 else ""
        raise SvmReproError(f"{links[0]}: a symlink in the results folder{more} (to {os.readlink(links[0])}): "
                            "svmrepro never writes through a link; remove it or give --results-dir another folder")
    writable(plan.results_dir, "the results folder")
    if not (args.from_csv or args.no_run):
        writable(Path.cwd(), "the current folder", " (the sweeps write multirun/ there)")


def writable(folder: Path, what: str, why: str = "") -> None:
    try:
        check_writable(folder)
    except OSError as exc:
        raise SvmReproError(f"{what} {folder.resolve()} cannot be written{why}: {exc.strerror or exc}") from None


def runs_dirs(plan: Plan) -> list[Path]:
    """Where the outputs' runs tables may be: this plan's results folder, then every plan's (the full
    mode's are committed); the claims check reads the metrics the runs log from them."""
    others = (load_plan(path.stem).results_dir for path in sorted(PLANS_DIR.glob("*.yaml")))
    return list(dict.fromkeys([plan.results_dir, *others]))


def own_papers() -> list[str]:
    """The papers of the user's config folders (``--config-dir``): a study's own, not the package's five."""
    package = {p.name for p in (CONF_DIR / "experiment").iterdir() if p.is_dir()}
    return [paper for paper in papers() if paper not in package]


def scope(args: argparse.Namespace) -> list[str]:
    """The papers a reproduction is about: with a config folder of one's own, that study's papers and any
    named on the command line; else every paper. Its scoreboard, cost page, log lines and counts hold
    these only: the package's five papers appear in a study's pages when asked for."""
    own = own_papers()
    if not own:
        return papers()
    named = {name.split("/")[0] for name in [*args.papers, *args.experiment]}
    return [paper for paper in papers() if paper in own or paper in named]


def selected_experiments(args: argparse.Namespace) -> list[str]:
    known = experiments()
    for name in [*args.papers, *args.experiment]:
        if name not in known and name not in papers():
            raise SvmReproError(f"unknown paper or experiment {name!r}; valid: {', '.join(papers() + known)}")
    names = [*args.papers, *args.experiment] or scope(args)
    return list(dict.fromkeys(e for name in names for e in (experiments(name) if name in papers() else [name])))


def mistakes(chosen: list[str], plan: Plan, args: argparse.Namespace) -> list[str]:
    """Before the first sweep (:mod:`svmrepro.preflight`): every claim the scoreboard will judge, the
    report spec of each output, and every job of the sweeps that will run; one line per problem."""
    # the cause first: an option no config folder has (a typo) before the sweeps and claims it breaks
    options = unknown_options(args.override, config_groups())
    if options:
        return [f"--override {line}" for line in options]
    problems = reproduction_problems(chosen, plan.mode, sweep_overrides(args.override), runs_dirs=runs_dirs(plan),
                                     jobs=not (args.from_csv or args.no_run), included=not args.from_csv)
    count, claims = claims_problems(scope(args), runs_dirs(plan))
    if not claims:
        log.info("claims: %d checked against what their outputs' sweeps produce", count)
    return list(dict.fromkeys(problems + claims))  # a report spec's problem is the claims check's too


def main(argv: list[str] | None = None) -> int:
    """``svmrepro-reproduce``: each config composed once for the whole invocation (its checks, its data, its
    sweeps' arguments, its pages: :func:`~svmrepro.compose.composition_cache`). A Ctrl-C is one line and
    exit code 130 wherever it lands, even inside a library that turns it into an error of its own; a SIGTERM one
    line and 143. Either stops the sweeps' process first (:func:`run_sweeps`)."""
    _STOPS.clear()
    previous = {sig: signal.signal(sig, _record_stop) for sig in (signal.SIGINT, signal.SIGTERM)}
    unraisable, sys.unraisablehook = sys.unraisablehook, _stop_again(sys.unraisablehook)
    try:
        with composition_cache():
            code = reproduce_command(argv)
        stop_if_stopped()  # a Ctrl-C that a library caught and went on from is the stop all the same
        return code
    except BaseException as exc:  # noqa: BLE001  (a KeyboardInterrupt, or an error raised while handling one)
        if interruption(exc) is None and not _STOPS:
            raise
        if _STOPS and _STOPS[0] == signal.SIGTERM:  # one line, exit 143
            print(f"svmrepro-reproduce: stopped by {signal.SIGTERM.name}", file=sys.stderr, flush=True)
            raise SystemExit(128 + signal.SIGTERM) from None
        raise KeyboardInterrupt(_STOPS[0] if _STOPS else "SIGINT") from None  # one line (stop_line), exit 130
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        sys.unraisablehook = unraisable


#: seconds after which a stop raised where it could not pass is given again (:func:`_stop_again`)
RESTOP_S = 0.05
#: the Ctrl-Cs and SIGTERMs this process received (:func:`_record_stop`)
_STOPS: list[int] = []


def _record_stop(signum: int, frame) -> None:
    """Python's own Ctrl-C (a KeyboardInterrupt where it lands; a SIGTERM too), remembered: a library that turns it
    into an error of its own (Hydra, OmegaConf) cannot make it pass for a mistake in the configs
    (:func:`stop_if_stopped`)."""
    _STOPS.append(signum)
    raise KeyboardInterrupt


def _stop_again(hook):
    """``sys.unraisablehook``: a stop that :func:`_record_stop` raised where no exception can pass (a finalizer, a
    callback of a compiled library: "Exception ignored in ...", and the rebuild ran on) is raised again in the main
    thread once this hook has returned: the signal is given again by a timer's thread :data:`RESTOP_S` later (given
    at once, its handler would raise inside this hook, where it is ignored too); any other unraisable exception
    goes to ``hook``."""
    def handle(unraisable) -> None:
        if _STOPS and isinstance(unraisable.exc_value, KeyboardInterrupt):
            timer = threading.Timer(RESTOP_S, _thread.interrupt_main, args=(_STOPS[-1],))
            timer.daemon = True
            timer.start()
            return
        hook(unraisable)

    return handle


def interruption(exc: BaseException | None) -> KeyboardInterrupt | None:
    """The KeyboardInterrupt ``exc`` is, or was raised while handling; None when it is not a stop."""
    seen = set()
    while exc is not None and id(exc) not in seen:
        if isinstance(exc, KeyboardInterrupt):
            return exc
        seen.add(id(exc))
        exc = exc.__cause__ or exc.__context__
    return None


def stop_if_stopped(exc: BaseException | None = None) -> None:
    """Before an error is reported: a Ctrl-C received meanwhile (or behind ``exc``) is the stop it is."""
    if _STOPS or interruption(exc) is not None:
        raise KeyboardInterrupt("SIGINT")


def reproduce_command(argv: list[str] | None) -> int:
    logging.basicConfig(level=logging.INFO, format="[%(asctime)s][%(name)s] %(message)s")
    # no progress bar of MLflow's among the log lines (reading a run's artifact draws one), nor the thread it
    # starts, which would keep this process from forking (svmrepro.forks); a user's own setting is kept
    os.environ.setdefault(ARTIFACTS_PROGRESS_BAR_ENV, "false")
    for handler in logging.getLogger().handlers:  # a URI's password masked in every line
        if not any(isinstance(f, RedactFilter) for f in handler.filters):
            handler.addFilter(RedactFilter())
    try:
        args = parse_args(argv)
        check_userinfo(tracking_uri(args.tracking_uri))  # before any store or retrying client sees it
        use_config_dirs(args.config_dir)
        plan = load_plan(args.mode, args.results_dir)
        chosen = selected_experiments(args)
        check_folders(plan, args)
        problems = [] if args.prune else mistakes(chosen, plan, args)
        stop_if_stopped()  # a Ctrl-C during the checks that a library caught and went on from (OmegaConf's merge
        # of a claim, whose half-built node's cleanup fails and whose error the claims file is merged again for)
    except (SvmReproError, HydraException) as exc:
        stop_if_stopped(exc)
        print(f"svmrepro-reproduce: error: {exc}", file=sys.stderr)
        return 2
    if problems:
        stop_if_stopped()
        print(*(f"svmrepro-reproduce: error: {line}" for line in problems), sep="\n", file=sys.stderr)
        return 2
    if args.check:
        return check(chosen, plan, args)
    if args.prune:
        return prune(chosen, plan, args)
    try:
        ordered = in_dependency_order(chosen, plan.mode, add_included=not args.from_csv)
    except (SvmReproError, HydraException) as exc:
        stop_if_stopped(exc)
        print(f"svmrepro-reproduce: error: {exc}", file=sys.stderr)
        return 2
    return reproduce(ordered, plan, args)


def progress_line(done: int, total: int, started: float) -> str:
    """``experiment k of N``, the time so far and one ETA for the whole reproduction (the mean time of
    the experiments done so far, times those left)."""
    elapsed = time.monotonic() - started
    eta = f", about {clock(elapsed / done * (total - done))} left" if done else ""
    return f"experiment {done + 1} of {total} ({clock(elapsed)} so far{eta})"


def reproduce(ordered: list[str], plan: Plan, args: argparse.Namespace) -> int:
    """Sweep what is missing of each experiment (all sweeps in one process: :func:`run_sweeps`) and build each
    output as its sweep ends, then the outputs of the whole reproduction (:func:`write_summaries`); a summary at
    the end. An output that fails to build does not stop the others."""
    from svmrepro.report.claims.verdict import VERDICTS

    started = time.monotonic()
    built, failed = [], []
    not_run = [experiment for experiment in ordered if not runnable(experiment, plan, args)]
    chosen = [experiment for experiment in ordered if experiment not in not_run]
    sweeping = not (args.from_csv or args.no_run)
    swept = sweeps_left(chosen, plan, args) if sweeping else ((e, True) for e in chosen)
    for index, (experiment, complete) in enumerate(swept):
        log.info("%s: %s", progress_line(index, len(chosen), started), experiment)
        if not complete:
            log.error("%s: some runs failed; the output is built from the runs that finished", experiment)
        try:
            # built while the next sweep runs: a shared slot of the machine, so a timed run never has a page
            # build beside it (it waits for the build, or the build for it: svmrepro.exclusive)
            with machine_slot(SHARED, f"building {experiment}") if sweeping else nullcontext():
                (built if build_one(experiment, plan, args) else not_run).append(experiment)
        except SvmReproError as exc:
            stop_if_stopped(exc)
            log.error("%s", exc)
            failed.append(experiment)
    counts = write_summaries(ordered, plan, args, failed)
    print(f"svmrepro-reproduce: {len(built)} of {len(ordered)} outputs written in {clock(time.monotonic() - started)}"
          + (f", {len(not_run)} not run ({', '.join(not_run)})" if not_run else "")
          + ("; findings: " + ", ".join(f"{counts.get(v, 0)} {v}" for v in VERDICTS) if counts is not None else ""),
          flush=True)
    if failed:
        print(f"svmrepro-reproduce: {len(failed)} output(s) not built: {', '.join(failed)}", file=sys.stderr)
    return 1 if failed else 0


def write_summaries(ordered: list[str], plan: Plan, args: argparse.Namespace, failed: list[str]) -> Counter | None:
    """The outputs of the whole reproduction, written once after every output's own: the bench README, where
    the runs' time went (``bench/cost.md``), the claims scoreboard (``<results>/README.md``, ``claims.csv``) and
    the claims about time against today's solver (``today.md``). The first two read the runs tables alone and are
    written by a fork of this process (:func:`svmrepro.forks.ahead`) while the claims are judged here. Returns the
    verdicts' counts (None when no paper has claims); what fails is appended to ``failed``."""
    import joblib  # its cores (scikit-learn has imported it by now)

    from svmrepro.report.claims.scoreboard import judge_papers, write_scoreboard
    from svmrepro.report.claims.today_page import write_today_page

    with_claims = [paper for paper in scope(args) if claims_path(paper).is_file()]
    written, counts = [], None
    with ahead(partial(_runs_pages, plan=plan, args=args), [ordered], joblib.cpu_count()) as pages:
        try:
            if with_claims:
                judged = judge_papers(with_claims, plan.results_dir)  # once, for both pages
                scoreboard, counts = write_scoreboard(with_claims, plan.results_dir, plan.mode, judged)
                written += [scoreboard, write_today_page(with_claims, plan.results_dir, plan.mode, judged)]
        except SvmReproError as exc:
            stop_if_stopped(exc)
            log.error("claims: %s", exc)
            failed.append("claims scoreboard")
            counts = Counter()
        written = [*next(pages), *written]
    for path in written:
        log.info("wrote %s", path)
    return counts


def _runs_pages(ordered: list[str], plan: Plan, args: argparse.Namespace) -> list[Path]:
    """The summaries read from the runs tables alone: the bench README (when a benchmark was reproduced) and
    where the runs' time went (``bench/cost.md``)."""
    from svmrepro.report.bench_readme import BENCH, write_bench_readme
    from svmrepro.report.cost import write_cost

    written = []
    if any(e.split("/")[0] == BENCH for e in ordered):
        written.append(write_bench_readme(plan.results_dir, plan.mode, args.override, spec_of))
    return [*written, write_cost(plan.results_dir, plan.mode, plan.n_jobs, scope(args))]


if __name__ == "__main__":
    sys.exit(main())
