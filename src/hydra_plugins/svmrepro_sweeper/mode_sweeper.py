"""The svmrepro sweeper (``hydra/sweeper: svmrepro``): its default sweep is the experiment's ``sweep.<mode>``.

A Hydra sweeper plugin on the public :class:`hydra.plugins.sweeper.Sweeper` API, registered in
Hydra's ConfigStore as option ``svmrepro`` of group ``hydra/sweeper`` (:mod:`.config`) and
selected by ``conf/config.yaml``; ``hydra/sweeper=basic`` (Hydra's BasicSweeper: the command
line's sweep only) or an optimizing sweeper (``hydra/sweeper=optuna``) can replace it.

It only plugs svmrepro into Hydra: what jobs a sweep means (its grids, how the command line and
``hydra.sweeper.params`` apply to them) is :mod:`svmrepro.sweep.jobs`'s, the checks before the first job
:mod:`svmrepro.preflight`'s, progress and failures :mod:`svmrepro.sweep.progress`' and
:mod:`svmrepro.sweep.failures`'. This module imports svmrepro; svmrepro never imports it.

Unlike Hydra's BasicSweeper, a failed job does not stop the sweep: every batch runs, and the
sweep ends with a summary line, the failed jobs (overrides and error) on stderr and exit code 1.
Each failed job's line is recorded by a Hydra callback where the job ran
(:class:`svmrepro.sweep.failures.RecordFailures`). Before the first job starts, every job is composed and
built: a mistake (an option that does not exist, a bad value, a data set whose module does not import, a
report spec that does not read) ends the sweep in one line each naming the file and the key, exit code 2. A
job whose configuration lacks a key given on the command line that others have (``-m
algorithm=svc,cascade_svc algorithm.r=0.5``) is not started and is one of the failed jobs; the others
run. Such jobs are numbered after the launched ones. For that, ``svmrepro-run -m`` hands
a command-line key of a config group (``algorithm.r=0.5``) to the jobs as a one-value sweep
(:func:`svmrepro.sweep.jobs.per_job`): Hydra applies a plain override to the sweep's primary config too,
whose algorithm may lack the key, and would stop the whole sweep.
Finished runs are skipped when the same command is run again, so it retries only the failed ones.
Jobs report their progress and status as they end (:mod:`svmrepro.sweep.progress`).
"""

from __future__ import annotations

import logging
import os
import sys
import time
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

from hydra.core.override_parser.overrides_parser import OverridesParser
from hydra.core.plugins import Plugins
from hydra.core.utils import JobReturn, JobStatus
from hydra.plugins.sweeper import Sweeper
from hydra.types import HydraContext, TaskFunction
from omegaconf import DictConfig, OmegaConf

from svmrepro import signals
from svmrepro.cluster_watch import ClusterLost, watching
from svmrepro.errors import error_line, storage_failure
from svmrepro.redact import redact
from svmrepro.sweep import failures, progress
from svmrepro.sweep.failures import failure_line
from svmrepro.writing import write_file

log = logging.getLogger(__name__)


def batches(jobs: list[list[str]], size: int | None) -> Iterator[list[list[str]]]:
    """``jobs`` in runs of ``size`` (None or -1: one batch)."""
    size = len(jobs) if size in (None, -1) else size
    for start in range(0, len(jobs), max(size, 1)):
        yield jobs[start : start + size]


def workers(launcher_config) -> int:
    """Jobs run at a time: joblib's ``n_jobs`` (negative counts back from the cores), else 1."""
    n_jobs = (launcher_config or {}).get("n_jobs") or 1
    return max(1, n_jobs if n_jobs > 0 else (os.cpu_count() or 1) + 1 + n_jobs)


class ModeSweeper(Sweeper):
    """The sweeper of ``hydra/sweeper: svmrepro`` (:class:`.config.ModeSweeperConf`): the mode's sweep,
    every job launched whatever failed, failures listed at the end."""

    def __init__(self, max_batch_size: int | None = None, params: Mapping[str, str] | None = None) -> None:
        self.max_batch_size = max_batch_size
        self.params = dict(params or {})
        self.hydra_context: HydraContext | None = None
        self.config: DictConfig | None = None
        self.launcher = None

    def setup(self, *, hydra_context: HydraContext, task_function: TaskFunction, config: DictConfig) -> None:
        signals.release(signals.START)  # Hydra has composed the sweep's config (svmrepro.app.run_hydra)
        self.hydra_context = hydra_context
        self.config = config
        self.launcher = Plugins.instance().instantiate_launcher(
            hydra_context=hydra_context, task_function=task_function, config=config)

    def jobs(self, arguments: list[str]) -> list[list[str]]:
        """Every job's overrides: the mode's sweep, with ``params`` and ``arguments`` on each grid."""
        from svmrepro.sweep.jobs import expand, mode_sweep, sweep_grids  # here: Hydra imports every plugin at each start

        mode = getattr(self.config.mode, "value", self.config.mode)  # a Mode enum once typed
        grids = sweep_grids(mode_sweep(self.config, mode))
        parser = OverridesParser.create(config_loader=self.hydra_context.config_loader)
        params = parser.parse_overrides([f"{key}={value}" for key, value in self.params.items()])
        groups = {group for group in OmegaConf.select(self.config, "hydra.runtime.choices", default={})
                  if not group.startswith("hydra")}
        return expand(grids, params, parser, parser.parse_overrides(arguments), groups)

    def compose(self, overrides: list[str]) -> tuple[DictConfig, dict]:
        """A job's config, as its launcher will compose it, and its config-group options."""
        with signals.held():  # a stop inside OmegaConf would pass for a mistake in the configs
            cfg = self.hydra_context.config_loader.load_sweep_config(master_config=self.config,
                                                                     sweep_overrides=list(overrides))
        return cfg, dict(cfg.hydra.runtime.choices)

    def checked(self, arguments: list[str], jobs: list[list[str]]):
        """The jobs to run (:class:`svmrepro.preflight.Checked`: their overrides and configs, and those a
        command-line key does not fit with why, one line); any other mistake ends the sweep before a job
        starts, one line each, exit code 2."""
        from svmrepro.preflight import check_sweep  # here: Hydra imports every plugin at each start
        from svmrepro.sweep.jobs import JobComposer

        given = [*(f"{key}={value}" for key, value in self.params.items()), *arguments]
        # Hydra composes once per set of config-group options, each job's values applied to a copy
        checked = check_sweep(self.config, jobs, JobComposer(compose=self.compose).compose, given)
        if checked.problems:
            print(*(redact(f"svmrepro-run: error: {line}") for line in checked.problems), sep="\n", file=sys.stderr)
            sys.exit(2)
        return checked

    @staticmethod
    def log_progress(sweep_dir: Path, cfg: DictConfig) -> None:
        """The sweep run's job counts after the skipped jobs (:func:`svmrepro.store.log_progress`)."""
        from svmrepro.store import log_progress

        log_progress(sweep_dir, cfg.tracking.uri, cfg.tracking.artifact_root)

    @staticmethod
    def finished(checked) -> dict:
        """The runnable jobs whose run FINISHED already (:func:`svmrepro.runner.finished_runs`), by index."""
        from svmrepro.runner import finished_runs  # here: scikit-learn and MLflow take seconds to import

        return finished_runs(checked.configs)

    def sweep(self, arguments: list[str]) -> list[Sequence[JobReturn]]:
        """Run every batch whatever failed, with progress; a summary, and the failures on stderr."""
        from svmrepro.sweep.jobs import NoEntryFits  # here: Hydra imports every plugin at each start

        try:
            jobs = self.jobs(arguments)
        except NoEntryFits as exc:  # before any job, like every bad value: one line, exit 2
            experiment = OmegaConf.select(self.config, "hydra.runtime.choices.experiment")
            mode = getattr(self.config.mode, "value", self.config.mode)
            print(f"svmrepro-run: error: the {mode} sweep of {experiment}: {exc}", file=sys.stderr)
            sys.exit(2)
        total = len(jobs)
        checked = self.checked(arguments, jobs)
        finished = self.finished(checked)  # skipped in bulk: one read of the store, no job launched for them
        runnable = checked.runnable
        jobs = [job for index, job in enumerate(runnable) if index not in finished]
        sweep_dir = Path(self.config.hydra.sweep.dir)
        sweep_dir.mkdir(parents=True, exist_ok=True)
        write_file(sweep_dir / "multirun.yaml", redact(OmegaConf.to_yaml(self.config)), root=sweep_dir)
        progress.start(sweep_dir, len(runnable), workers(self.config.hydra.get("launcher")))
        failures.start(sweep_dir)
        # jobs are numbered: launched ones first, then the skipped, then those never started
        for num, index in enumerate(sorted(finished), start=len(jobs)):
            log.info("skip: run %s already FINISHED with identity %s", finished[index].run_id,
                     finished[index].run_key[:12])
            line = progress.record(sweep_dir, num, progress.SKIPPED, 0.0)
            if line and not progress.quiet():
                log.info(line)
        if finished:
            self.log_progress(sweep_dir, checked.configs[0][0])
        for num, (overrides, reason) in enumerate(checked.unstarted, start=len(runnable)):
            line = failure_line(num, overrides, reason)
            log.warning("job not started: %s", line)
            failures.record(sweep_dir, num, line)
        from svmrepro.sweep.workers import watching_parent  # joblib: imported when a sweep runs

        started, returns = time.perf_counter(), []
        for batch in batches(jobs, self.max_batch_size):
            try:
                # a worker killed with this process ends as it starts, not at its first job; jobs sent to a ray head
                # that stops answering end the sweep in one line (svmrepro.cluster_watch)
                with watching_parent(), self.ray_head_watched():
                    returns.append(self.launcher.launch(batch, initial_job_idx=sum(map(len, returns))))
            except ClusterLost as exc:
                print(f"svmrepro-run: error: {exc}", file=sys.stderr)
                sys.exit(2)
            except Exception as exc:  # a worker process died (out of memory?), or a write of the launcher's was refused
                cause = storage_failure(exc, redact(str(self.config.tracking.uri)), [str(sweep_dir)])
                print(f"svmrepro-run: the sweep stopped: {cause or error_line(exc)}\n  the runs that finished are "
                      "kept; the same command runs the rest", file=sys.stderr)
                sys.exit(1)
            if failures.stopped(sweep_dir):
                break
        ended = [ret for batch in returns for ret in batch]
        if failures.stopped(sweep_dir):
            self.stop_on_storage(ended, len(jobs))
        failed = self.failure_lines(ended, sweep_dir)
        recorded = progress.statuses(sweep_dir)
        counts = Counter(progress.SKIPPED if recorded.get(self.job_num(ret)) == progress.SKIPPED else progress.DONE
                         for ret in ended if ret.status == JobStatus.COMPLETED)
        counts[progress.SKIPPED] += len(finished)
        counts[progress.FAILED] = len(failed)
        signals.hold()  # a stop from now waits until the sweep run is closed (SweepRun releases it)
        log.info("sweep ended: %d jobs in %s: %s", total, progress.clock(time.perf_counter() - started),
                 progress.counts_text(counts))
        if failed:
            print(f"svmrepro-run: {len(failed)} of {total} jobs failed (the same command retries only them):",
                  *failed, sep="\n  ", file=sys.stderr)
            sys.exit(1)
        return returns

    def ray_head_watched(self):
        """The watch on the ray head the launcher sends the jobs to (``hydra/launcher=ray_cluster`` with
        ``hydra.launcher.ray.init.address``), bounded by ``parallel.timeout``; nothing for other launchers, or a
        ray the launcher starts itself."""
        launcher = self.config.hydra.get("launcher") or {}
        address = OmegaConf.select(launcher, "ray.init.address") if "ray" in str(launcher.get("_target_")) else None
        return watching("ray", address, self.config.parallel.timeout, key="hydra.launcher.ray.init.address")

    def stop_on_storage(self, ended: list[JobReturn], launched: int) -> None:
        """A job's write was refused (:func:`svmrepro.sweep.failures.stop`): one line naming the cause and the
        path, exit 1; the sweep run is closed FAILED at exit, the runs that finished kept."""
        store = redact(str(self.config.tracking.uri))
        refused = sorted(((self.job_num(ret), storage_failure(failures.job_error(ret), store)) for ret in ended
                          if ret.status != JobStatus.COMPLETED), key=lambda pair: (pair[0] is None, pair[0] or 0))
        num, cause = next(((num, cause) for num, cause in refused if cause), (None, "a job's write was refused"))
        done = sum(ret.status == JobStatus.COMPLETED for ret in ended)
        at = "" if num is None else f" at job {num}"
        print(f"svmrepro-run: the sweep stopped{at}: {cause}\n  {done} of {launched} jobs ended before it "
              "and their runs are kept; once the storage takes writes again, the same command runs the rest", file=sys.stderr)
        sys.exit(1)

    @staticmethod
    def job_num(ret: JobReturn) -> int | None:
        return ret.hydra_cfg.hydra.job.num if ret.hydra_cfg is not None else None

    def failure_lines(self, ended: list[JobReturn], sweep_dir: Path) -> list[str]:
        """A line per failed job, by job number: the one recorded where it ran, else one recorded now
        from the error the launcher returned; the jobs that never started are recorded already."""
        recorded = failures.read(sweep_dir)
        for ret in ended:
            if ret.status != JobStatus.COMPLETED and self.job_num(ret) not in recorded:
                recorded[self.job_num(ret)] = failures.returned_line(ret)
                failures.record(sweep_dir, self.job_num(ret), recorded[self.job_num(ret)])
        return [recorded[num] for num in sorted(recorded)]
