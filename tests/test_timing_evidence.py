"""The committed timings obey the timing protocol (:mod:`svmrepro.exclusive`).

- Every run of a ``timing: exclusive`` experiment ran under the protocol: it recorded the load at its
  start and end and was judged ``timing_reliable`` (neither load above the cores + ``LOAD_MARGIN``).
- A page that shows seconds (a reported metric, slope or ratio in seconds,
  :func:`svmrepro.report.labels.is_seconds`) and a claim about time (``timing: true``) read the output of
  a ``timing: exclusive`` experiment.

A sweep re-run on a busy machine and committed fails here, naming the output.
"""

from functools import cache
from pathlib import Path

import pytest

from svmrepro.compose import compose_config, experiments, papers
from svmrepro.exclusive import is_exclusive
from svmrepro.report.labels import is_seconds
from svmrepro.report.claims.schema import load_claims
from svmrepro.report.runs import read_runs
from svmrepro.reproduce import spec_of

CHECKOUT = Path(__file__).resolve().parents[1]
COMMITTED = [name for name in experiments() if (CHECKOUT / "results" / f"{name}.runs.csv").is_file()]


@cache
def timed(name: str) -> bool:
    return is_exclusive(compose_config([f"experiment={name}"]))


def seconds_shown(name: str) -> list[str]:
    spec = spec_of(name, "full")
    shown = [*spec.metrics, *(y for y, _ in spec.slopes), *(spec.ratios[:1] if spec.ratios else ())]
    return [metric for metric in shown if is_seconds(metric)]


def test_the_committed_outputs_are_found():
    assert len(COMMITTED) > 30, COMMITTED


@pytest.mark.parametrize("name", COMMITTED)
def test_a_page_showing_seconds_is_of_a_timed_experiment(name):
    assert timed(name) or not seconds_shown(name), \
        f"{name} shows {seconds_shown(name)} from runs that may have shared the machine (it is not timing: exclusive)"


@pytest.mark.parametrize("name", COMMITTED)
def test_every_run_of_a_timed_experiment_ran_under_the_protocol(name):
    if not timed(name):
        pytest.skip(f"{name} is not timed")
    runs = read_runs(CHECKOUT / "results" / f"{name}.runs.csv")
    reliable = runs.get("tags.timing_reliable")
    outside = runs if reliable is None else runs[reliable.ne("true")]
    assert outside.empty, (f"{name}: {len(outside)} of {len(runs)} runs lack timing_reliable=true "
                           f"(ran before the timing protocol or on a loaded machine): re-run them alone")


def test_every_claim_about_time_reads_a_timed_experiment():
    claims = [claim for paper in papers() for claim in load_claims(paper) if claim.timing and claim.not_run is None]
    assert claims
    untimed = [f"{claim.id} reads {claim.output}" for claim in claims if not timed(claim.output)]
    assert not untimed, f"claims about time on outputs whose runs may share the machine: {untimed}"
