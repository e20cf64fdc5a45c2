"""``python -m svmrepro.report.claims.relock [paper ...]``: (re)write each paper's
``experiments/<paper>/claims.lock.yaml`` (:mod:`.lock`). Nothing is written when a claim cannot be
locked (changed without an amendment, not committed yet, dropped): one line per claim says why,
exit code 2. A module of its own, so that ``-m`` runs it without the report package importing it first.
"""

from __future__ import annotations

import argparse
import sys

from svmrepro.compose import papers
from svmrepro.errors import SvmReproError
from svmrepro.report.claims.lock import COMMAND, relock, write_lock
from svmrepro.report.claims.schema import claims_path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog=COMMAND, description="(re)write each paper's claims.lock.yaml")
    parser.add_argument("papers", nargs="*", help="papers to lock (default: every paper with a claims file)")
    args = parser.parse_args(argv)
    chosen = args.papers or [paper for paper in papers() if claims_path(paper).is_file()]
    for paper in chosen:
        if not claims_path(paper).is_file():
            print(f"{COMMAND}: error: {paper}: no claims file {claims_path(paper)}", file=sys.stderr)
            return 2
    try:
        results = {paper: relock(paper) for paper in chosen}
    except SvmReproError as exc:
        print(f"{COMMAND}: error: {exc}", file=sys.stderr)
        return 2
    refused = [line for _, lines in results.values() for line in lines]
    for line in refused:
        print(f"{COMMAND}: refused: {line}", file=sys.stderr)
    if refused:
        print(f"{COMMAND}: nothing written", file=sys.stderr)
        return 2
    for paper, (entries, _) in results.items():
        print(f"{write_lock(paper, entries)}: {len(entries)} claims locked", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
