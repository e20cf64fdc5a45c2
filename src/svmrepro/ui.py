"""``svmrepro-ui``: MLflow's UI on the project's store, with a link to each experiment's runs.

    svmrepro-ui                                       # ./mlflow.db, or $MLFLOW_TRACKING_URI's store
    svmrepro-ui --tracking-uri sqlite:///study/mlflow.db --port 5001
    svmrepro-ui --host 0.0.0.0 -- --allowed-hosts 'myhost:5000'   # after --: options of mlflow server

It runs ``mlflow server`` on the store (a SQLite store's artifacts: the ``mlartifacts`` folder beside
it), on 127.0.0.1 (this machine only) unless ``--host`` says otherwise, with one worker and MLflow's
job runner off. Once the server answers it prints the link of each experiment's runs table: MLflow's
"Model training" view (not its GenAI view), every run a row with its metrics (:mod:`svmrepro.store.ui`).
Ctrl-C stops it (exit code 130). A store that is not there, a tracking server's URI or a port in use
is one line and exit code 2, before any server starts.
"""

from __future__ import annotations

from svmrepro.stop_line import imported, one_line_stop  # first: a Ctrl-C during the slow imports below is one line

one_line_stop("svmrepro-ui", __name__)

import argparse
import os
import sys

from svmrepro import signals
from svmrepro.errors import SvmReproError
from svmrepro.redact import redact
from svmrepro.store.location import TRACKING_URI_ENV, tracking_uri
from svmrepro.store.ui import Server, check_port, check_store, serve

PROGRAM = "svmrepro-ui"
DESCRIPTION = "MLflow's UI on the project's store, with a link to each experiment's runs."


def _whole(lowest: int, highest: int):
    def number(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            value = None
        if value is None or not lowest <= value <= highest:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number from {lowest} to {highest}")
        return value

    return number


def parse(argv: list[str]) -> Server:
    """The server ``argv`` asks for (argparse's line and exit code 2 for a bad option). The store:
    ``--tracking-uri``, else ``$MLFLOW_TRACKING_URI``, else ``mlflow.db`` in the current folder."""
    cut = argv.index("--") if "--" in argv else len(argv)
    parser = argparse.ArgumentParser(prog=PROGRAM, description=DESCRIPTION,
                                     epilog="Options after -- go to mlflow server as they are (mlflow server --help).")
    parser.add_argument("--tracking-uri", help=f"the store (default: ${TRACKING_URI_ENV}, else mlflow.db in "
                                               "the current folder)")
    parser.add_argument("--host", default="127.0.0.1",
                        help="the interface it listens on (default: 127.0.0.1, this machine only)")
    parser.add_argument("--port", type=_whole(1, 65535), default=5000, help="its port (default: 5000)")
    parser.add_argument("--workers", type=_whole(1, 64), default=1, help="server processes (default: 1)")
    args = parser.parse_args(argv[:cut])
    return Server(tracking_uri(args.tracking_uri), args.host, args.port, args.workers, tuple(argv[cut + 1:]))


def main(argv: list[str] | None = None) -> int:
    imported()  # Ctrl-C a KeyboardInterrupt again: the store's check is not cut short
    server = parse(sys.argv[1:] if argv is None else argv)
    try:
        check_store(server.uri)
        check_port(server.host, server.port)
    except SvmReproError as exc:
        print(redact(f"{PROGRAM}: error: {exc}"), file=sys.stderr)
        return 2
    try:  # from the handlers on, a stop is its line and 128 + the signal
        signals.install()  # a stop ends the server first
        print(redact(f"{PROGRAM}: MLflow's UI on {server.uri} at {server.url}, its job runner off; starting"),
              flush=True)
        return serve(server, dict(os.environ), lambda text: print(text, flush=True))
    except signals.Interrupted as stop:
        print(f"{PROGRAM}: stopped by {stop}", file=sys.stderr)
        return stop.exit_code
    except SvmReproError as exc:
        print(redact(f"{PROGRAM}: error: {exc}"), file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
