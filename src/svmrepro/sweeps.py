"""Several experiments' sweeps in one process, one after another: how svmrepro-reproduce runs its sweeps.

    python -m svmrepro.sweeps --status-fd FD '[["<paper>/<id>", ["-m", "experiment=<paper>/<id>", ...]], ...]'

Each sweep is what ``svmrepro-run`` does with the same arguments (:func:`svmrepro.app.run_hydra`: svmrepro's
sweeper, the plan's launcher, every job's run logged to MLflow), with its own exit code. One process for all of
them pays Python's start, the imports and the start of joblib's worker processes once rather than per experiment:
loky keeps its workers between sweeps (:func:`joblib.Parallel` reuses its executor, resized when a sweep runs
fewer jobs at once). A sweep that fails, or ends with a mistake (exit code 2), does not stop the next one. As
each sweep ends, one JSON line ``{"experiment": ..., "code": ...}`` is written to the file descriptor
``FD``, so the caller can build that output while the next sweep runs.

SIGTERM and SIGINT stop it as they stop svmrepro-run (:mod:`svmrepro.signals`): the workers end, the runs in
progress are marked KILLED, one line and exit code 128 + the signal; the sweeps not begun are not run. So does
the end of the process that started it (svmrepro-reproduce), whatever ended it (:func:`svmrepro.signals.end_with`).
"""

from __future__ import annotations

from svmrepro.stop_line import one_line_stop  # first: a Ctrl-C during the slow imports below is one line

one_line_stop("svmrepro-run", __name__)

import argparse
import json
import os
import sys
from typing import TextIO

from svmrepro import signals
from svmrepro.app import MAIN_PID_ENV, run_hydra, stop_line


def exit_code(stop: SystemExit) -> int:
    """The exit code ``sys.exit(code)`` gives the process: None is 0, an int itself, anything else (a message) 1."""
    return 0 if stop.code is None else stop.code if isinstance(stop.code, int) else 1


def run_sweeps(sweeps: list[tuple[str, list[str]]], status: TextIO) -> None:
    """Run each ``(experiment, svmrepro-run arguments)`` in turn, writing its exit code to ``status`` as it ends."""
    for experiment, arguments in sweeps:
        try:
            run_hydra(arguments)
            code = 0
        except SystemExit as stop:
            code = exit_code(stop)
        print(json.dumps({"experiment": experiment, "code": code}), file=status, flush=True)
        signals.release()  # a sweep that failed before its run closed leaves its end's hold (signals.hold)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m svmrepro.sweeps", description=__doc__.split("\n")[0])
    parser.add_argument("--status-fd", type=int, required=True, help="where each sweep's exit code is written")
    parser.add_argument("sweeps", type=json.loads, help="a JSON list of [experiment, svmrepro-run arguments]")
    args = parser.parse_args(argv)
    try:  # from the handlers on, a stop is its line and 128 + the signal (not an uncaught Interrupted's exit 1)
        signals.install()
        signals.end_with(os.getppid())  # svmrepro-reproduce: gone, however, its sweeps stop
        os.environ[MAIN_PID_ENV] = str(os.getpid())
        with os.fdopen(args.status_fd, "w") as status:
            run_sweeps(args.sweeps, status)
    except signals.Interrupted as stop:
        print(stop_line(stop), file=sys.stderr)
        sys.exit(stop.exit_code)
    finally:  # a stop while the workers shut down still exits 128 + the signal
        signals.exit_on_signal(stop_line)


if __name__ == "__main__":
    main()
