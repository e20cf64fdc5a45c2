"""Registration status is computed from git, not asserted (issue 48, item 1): the lock's ``defined``, ``data``
and ``blind`` of every claim are what git history gives, and ``claims.csv`` shows the lock's ``blind``."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pandas as pd
import pytest

from svmrepro.report.claims.blind import has_history, registration, runs_csv
from svmrepro.report.claims.lock import read_lock
from svmrepro.report.claims.schema import load_claims

CHECKOUT = Path(__file__).resolve().parents[1]
PAPERS = ("cascade", "cross_training", "mixture", "potential_sv", "svr_decomposition")


def _tested():
    return [claim for paper in PAPERS for claim in load_claims(paper) if claim.not_run is None]


@pytest.mark.skipif(not has_history(), reason="a shallow clone: the lock's registrations stand (computed where "
                                              "the history is there)")
@pytest.mark.parametrize("claim", _tested(), ids=lambda c: f"{c.paper}/{c.id}")
def test_the_lock_holds_the_registration_git_gives(claim):
    entry = read_lock(claim.paper)[claim.id]
    found = registration(claim)
    assert found is not None, f"{claim.paper}/{claim.id}: git has no commit of it"
    assert (entry.defined, entry.data, entry.blind) == (found.defined, found.data, found.blind), \
        f"{claim.paper}/{claim.id}: rewrite the lock with python -m svmrepro.report.claims.relock {claim.paper}"


@pytest.mark.skipif(not has_history(), reason="a shallow clone")
def test_blind_means_the_claim_came_before_every_runs_csv_it_reads():
    """Recomputed with plain git: a blind claim's defining commit precedes the first commit of each runs CSV."""
    def git(*args):
        return subprocess.run(["git", "-C", str(CHECKOUT), *args], capture_output=True, text=True)

    for claim in _tested():
        entry = read_lock(claim.paper)[claim.id]
        for output, first in (entry.data or {}).items():
            added = git("log", "--diff-filter=A", "--format=%H", "--", runs_csv(output)).stdout.split()
            assert first == added[-1], (claim.id, output)
            before = entry.defined != first and git("merge-base", "--is-ancestor", entry.defined, first).returncode == 0
            if entry.blind:
                assert before, (claim.id, output)
        if not entry.blind:
            assert any(entry.defined == first or git("merge-base", "--is-ancestor", entry.defined, first).returncode
                       for first in (entry.data or {}).values()), claim.id


def test_claims_csv_shows_the_locks_blind():
    table = pd.read_csv(CHECKOUT / "results" / "claims.csv")
    for claim in _tested():
        row = table[(table.paper == claim.paper) & (table.id == claim.id)].iloc[0]
        assert bool(row.blind) == bool(read_lock(claim.paper)[claim.id].blind), (claim.paper, claim.id)
