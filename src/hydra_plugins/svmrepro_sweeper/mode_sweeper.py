"""A Hydra sweeper whose default sweep is the experiment's ``sweep.<mode>``.

An experiment declares one sweep per mode. A sweep is a grid (``{key: "a,b", seed: "range(3)"}``,
Hydra's sweep syntax per key) or a list of grids, run as their union, for configurations that
are not a Cartesian product (Table 1: each data set with its own kernel width, for two
algorithms whose parameters have different names). The command line and ``hydra.sweeper.params``
apply to every grid, a later value of a key replacing an earlier one (Hydra's rule), so ``seed=0``
narrows an experiment's seed sweep to one seed.

Unlike Hydra's BasicSweeper, a failed job does not stop the sweep: every batch runs, and the
sweep ends with a summary line, the failed jobs (overrides and error) on stderr and exit code 1.
A job whose configuration cannot be composed (a key that only some algorithms of the sweep have,
``-m algorithm=svc,cascade_svc algorithm.r=0.5``) is not started and is one of the failed jobs;
the others run. Such jobs are numbered after the launched ones. For that, ``svmrepro-run -m`` hands
a command-line key of a config group (``algorithm.r=0.5``) to the jobs as a one-value sweep
(:func:`per_job`): Hydra applies a plain override to the sweep's primary config too, whose
algorithm may lack the key, and would stop the whole sweep.
Finished runs are skipped when the same command is run again, so it retries only the failed ones.
Jobs report their progress as they end (:mod:`.progress`).
"""

from __future__ import annotations

import logging
import os
import sys
import time
from collections import Counter
from collections.abc import Collection, Mapping, Sequence
from pathlib import Path
from typing import Any

from hydra._internal.core_plugins.basic_sweeper import BasicSweeper
from hydra.core.override_parser.overrides_parser import OverridesParser
from hydra.core.override_parser.types import Override
from hydra.core.utils import JobReturn, JobStatus, filter_overrides
from omegaconf import OmegaConf

from svmrepro.redact import redact

from hydra_plugins.svmrepro_sweeper import progress

log = logging.getLogger(__name__)


def sweep_grids(sweep) -> list[dict]:
    """A sweep node (one grid or a list of grids, OmegaConf or plain) as a list of plain grids."""
    plain = OmegaConf.to_container(sweep, resolve=True) if OmegaConf.is_config(sweep) else sweep
    if not plain:
        return [{}]
    return [dict(grid) for grid in plain] if isinstance(plain, Sequence) else [dict(plain)]


def expand(grids: list[Mapping], overrides: list[Override], parser: OverridesParser) -> list[list[str]]:
    """Every job's overrides: each grid expanded with ``overrides`` applied on top, concatenated."""
    jobs: list[list[str]] = []
    for grid in grids:
        own = parser.parse_overrides([f"{key}={value}" for key, value in grid.items()])
        jobs += BasicSweeper.split_arguments([*own, *overrides], None)[0]
    return jobs


def workers(launcher_config) -> int:
    """Jobs run at a time: joblib's ``n_jobs`` (negative counts back from the cores), else 1."""
    n_jobs = (launcher_config or {}).get("n_jobs") or 1
    return max(1, n_jobs if n_jobs > 0 else (os.cpu_count() or 1) + 1 + n_jobs)


def job_status(ret: JobReturn) -> str:
    if ret.status != JobStatus.COMPLETED:
        return progress.FAILED
    return progress.SKIPPED if ret.return_value == "SKIPPED" else progress.DONE  # svmrepro.runner.SKIPPED


def error_line(error: BaseException) -> str:
    """``<ExceptionType>: <first line of its message>``."""
    return f"{type(error).__name__}: {(str(error).strip().splitlines() or [''])[0]}"


def failure_line(num: int | str, overrides: Sequence[str], reason: str) -> str:
    """``#<job> <overrides>: <reason>``, any password in a URI redacted."""
    return redact(f"#{num} {' '.join(filter_overrides(list(overrides)))}: {reason}")


def launched_failure_line(ret: JobReturn) -> str:
    num = ret.hydra_cfg.hydra.job.num if ret.hydra_cfg is not None else "?"
    return failure_line(num, ret.overrides or [], error_line(ret._return_value))  # .return_value would re-raise


def composition_line(error: BaseException) -> str:
    """``error_line`` with OmegaConf's reason (Hydra puts it on a later line) appended."""
    cause = error.__cause__
    reason = (str(cause).strip().splitlines() or [""])[0] if cause is not None else ""
    return f"{error_line(error)} {reason}".rstrip()


def per_job(arguments: list[str], groups: Collection[str]) -> list[str]:
    """``arguments`` with each plain ``<group>.<key>=<value>`` override written ``<group>.<key>=choice(<value>)``.

    A one-value sweep is applied to each job, not to the primary config of the sweep. Flags,
    ``+``/``~`` overrides, sweeps, and values with an interpolation (``choice`` would make it a
    literal) are left as they are.
    """
    parser = OverridesParser.create()
    rewritten = []
    for argument in arguments:
        try:
            override = None if argument.startswith("-") else parser.parse_override(argument)
        except Exception:  # not an override (a flag's value), or a bad one Hydra reports itself
            override = None
        if (override is None or override.is_sweep_override() or override.is_add() or override.is_delete()
                or override.is_force_add() or override.package is not None
                or override.key_or_group.split(".", 1)[0] not in groups or "." not in override.key_or_group):
            rewritten.append(argument)
            continue
        value = argument.split("=", 1)[1] or "''"
        rewritten.append(argument if "${" in value else f"{override.key_or_group}=choice({value})")
    return rewritten


class ModeSweeper(BasicSweeper):
    def split_arguments(self, overrides: list[Override], max_batch_size: int | None) -> list[list[list[str]]]:
        mode = getattr(self.config.mode, "value", self.config.mode)  # a Mode enum once typed
        grids = sweep_grids((self.config.get("sweep") or {}).get(mode))
        parser = OverridesParser.create(config_loader=self.hydra_context.config_loader)
        jobs = expand(grids, overrides, parser)
        return list(BasicSweeper.split_overrides_to_chunks(jobs, max_batch_size))

    def composable(self, jobs: list[list[str]]) -> tuple[list[list[str]], list[tuple[list[str], str]]]:
        """The jobs whose configuration composes, and the others with why not (one line)."""
        ok, bad = [], []
        for overrides in jobs:
            try:
                self.hydra_context.config_loader.load_sweep_config(master_config=self.config,
                                                                   sweep_overrides=list(overrides))
            except Exception as exc:  # a key this job's configuration lacks, an unknown option, a bad value
                bad.append((overrides, composition_line(exc)))
            else:
                ok.append(overrides)
        return ok, bad

    def sweep(self, arguments: list[str]) -> Any:
        """BasicSweeper.sweep, with every batch run whatever failed, progress, and a summary."""
        parser = OverridesParser.create(config_loader=self.hydra_context.config_loader)
        jobs = [job for batch in self.split_arguments(parser.parse_overrides([*self._parse_config(), *arguments]),
                                                      None) for job in batch]
        total = len(jobs)
        jobs, unstarted = self.composable(jobs)
        unstarted_lines = [failure_line(len(jobs) + i, overrides, reason)
                           for i, (overrides, reason) in enumerate(unstarted)]
        for line in unstarted_lines:
            log.warning("job not started: %s", line)
        self.overrides = list(BasicSweeper.split_overrides_to_chunks(jobs, self.max_batch_size)) if jobs else []
        sweep_dir = Path(self.config.hydra.sweep.dir)
        sweep_dir.mkdir(parents=True, exist_ok=True)
        (sweep_dir / "multirun.yaml").write_text(redact(OmegaConf.to_yaml(self.config)))
        progress.start(sweep_dir, len(jobs), workers(self.config.hydra.get("launcher")))
        started, returns = time.perf_counter(), []
        while not self.is_done():
            batch = self.get_job_batch()
            try:
                returns.append(self.launcher.launch(batch, initial_job_idx=sum(map(len, returns))))
            except Exception as exc:  # a worker process died (out of memory?): joblib gives up the batch
                print(f"svmrepro-run: the sweep stopped: {error_line(exc)}\n  the runs that finished are kept; "
                      "the same command runs the rest", file=sys.stderr)
                sys.exit(1)
        ended = [ret for batch in returns for ret in batch]
        counts = Counter(job_status(ret) for ret in ended) + Counter({progress.FAILED: len(unstarted)})
        log.info("sweep ended: %d jobs in %s: %s", total, progress.clock(time.perf_counter() - started),
                 progress.counts_text(counts))
        failed = [launched_failure_line(ret) for ret in ended if ret.status != JobStatus.COMPLETED] + unstarted_lines
        if failed:
            print(f"svmrepro-run: {len(failed)} of {total} jobs failed (the same command retries only them):",
                  *failed, sep="\n  ", file=sys.stderr)
            sys.exit(1)
        return returns
