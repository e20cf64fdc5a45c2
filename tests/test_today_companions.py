"""Every claim about time is judged again against today's solver (issue 31, point 2), on runs some sweep makes.

Each tested ``timing: true`` claim has a ``today:`` block (and no other claim has one); every group a today
test names (``today.test``, ``today.inside.test``) is a group the sweep of the output it reads runs: in full
mode always, and in quick mode wherever quick mode runs the group of the claim's own test that it replaces.
The companion outputs (``conf/experiment/<paper>/<id>_today.yaml``, and ``<id>_today_cores.yaml``: oneDAL
on the method's cores, issue 45) extend their timed output and run only oneDAL's entries, and each is read by
a today test. A ``faster_of`` side names each of its candidates. The claims are read as written (YAML), so a companion
that loses an entry, or a today test naming a group nobody runs, fails here before any compute.
"""

from functools import cache

import pytest
import yaml
from omegaconf import OmegaConf

from svmrepro.compose import CONF_DIR, compose_config, experiments, papers
from svmrepro.sweep.jobs import JobComposer, sweep_jobs
from svmrepro.report.claims.estimate import GROUP_COLUMN
from svmrepro.report.claims.schema import claims_path

MODES = ("quick", "full")
SIDES = ("a", "b", "group")
#: the suffixes of a companion output, and what the name of an algorithm config that runs oneDAL's SVC or SVR has
TODAY, CORES, ONEDAL = "_today", "_today_cores", "_onedal"
COMPANIONS = [name for name in experiments() if name.endswith((TODAY, CORES))]


def _claims(paper: str) -> list[dict]:
    path = claims_path(paper)
    return yaml.safe_load(path.read_text())["claims"] if path.is_file() else []


CLAIMS = [(paper, claim) for paper in papers() for claim in _claims(paper)]
TODAY_CLAIMS = [(paper, claim) for paper, claim in CLAIMS if "today" in claim]


def _readings(claim: dict) -> list[tuple[str, dict]]:
    """(name, the keys it replaces) of each reading against today's solver."""
    today = claim["today"]
    return [(name, part) for name, part in (("today", today.get("test")),
                                            ("inside", (today.get("inside") or {}).get("test"))) if part]


def _side(test: dict, key: str, output: str) -> tuple[str, str]:
    """(output, group) a side of a test reads: a side's own ``output``, else the test's (a one-group test's
    ``output`` key), else the claim's."""
    side, output = test[key], test.get("output", output)
    return (side.get("output", output), str(side["group"])) if isinstance(side, dict) else (output, str(side))


def _sides(test: dict, key: str, output: str) -> list[tuple[str, str]]:
    """(output, group) of each candidate a side reads (one, unless it is ``{faster_of: [...]}``)."""
    side = test[key]
    if isinstance(side, dict) and "faster_of" in side:
        return [_side({**test, key: one}, key, output) for one in side["faster_of"]]
    return [_side(test, key, output)]


def _text(value) -> str:
    try:
        return repr(float(value))
    except (TypeError, ValueError):
        return str(value)


def _value(cfg, choices: dict, column: str) -> str:
    """The value a run of this job has in ``column``, as svmrepro.runner tags and logs it."""
    if column == "tags.algorithm":
        return _text(choices.get("algorithm"))
    if column == "tags.label":
        return _text(cfg.get("label") or choices.get("dataset"))
    return _text(OmegaConf.select(cfg, column.removeprefix("params.")))


@cache
def jobs(output: str, mode: str) -> list[tuple]:
    """(config, config-group options) of every job of ``output``'s sweep in ``mode``, its included outputs' too."""
    cfg = compose_config([f"experiment={output}", f"mode={mode}"])
    found = []
    for name in [output, *cfg.report.get("include", [])]:
        base = [f"experiment={name}", f"mode={mode}"]
        composer = JobComposer(base)
        found += [composer.compose(job) for job in sweep_jobs(compose_config(base).sweep[mode])]
    return found


def swept(output: str, mode: str, column: str) -> set[str]:
    """The values of ``column`` in the runs of ``output``'s sweep in ``mode``."""
    return {_value(cfg, choices, column) for cfg, choices in jobs(output, mode)}


@pytest.mark.parametrize(("paper", "claim"), CLAIMS, ids=[f"{p}:{c['id']}" for p, c in CLAIMS])
def test_every_tested_claim_about_time_and_no_other_has_a_today_block(paper, claim):
    timed = bool(claim.get("timing")) and "not_run" not in claim
    assert ("today" in claim) == timed, f"{paper}: {claim['id']}: timing {claim.get('timing')}, today {'today' in claim}"


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(("paper", "claim"), TODAY_CLAIMS, ids=[f"{p}:{c['id']}" for p, c in TODAY_CLAIMS])
def test_every_group_a_today_test_names_is_run_by_the_sweep_of_the_output_it_reads(paper, claim, mode):
    own_column = claim["test"].get("group_column", GROUP_COLUMN)
    missing = []
    for reading, part in _readings(claim):
        column = part.get("group_column", own_column)
        for key in (k for k in SIDES if k in part):
            for output, group in _sides(part, key, claim["output"]):
                if output not in experiments():
                    continue  # a self-benchmark's runs table, not a sweep (bench/parallel_hardware)
                if mode == "quick":
                    own_output, own_group = _side(claim["test"], key, claim["output"])
                    if _text(own_group) not in swept(own_output, mode, own_column):
                        continue  # quick mode does not run the claim's own group either
                if _text(group) not in swept(output, mode, column):
                    missing.append(f"{reading}.{key}: {column} = {group} in {output}")
    assert not missing, f"{paper}: {claim['id']}: the {mode} sweep runs no {'; no '.join(missing)}"


@pytest.mark.parametrize("companion", COMPANIONS)
def test_a_companion_extends_its_output_and_runs_only_onedal(companion):
    file = yaml.safe_load((CONF_DIR / "experiment" / f"{companion}.yaml").read_text())
    assert f"/experiment/{companion.removesuffix(CORES).removesuffix(TODAY)}" in file["defaults"]
    for mode in MODES:
        algorithms = swept(companion, mode, "tags.algorithm")
        assert all(ONEDAL in a for a in algorithms), f"{companion} ({mode}) runs {sorted(algorithms)}"


def test_every_companion_is_read_by_a_today_test_or_included_by_one_that_is():
    read = {output for _, claim in TODAY_CLAIMS for _, part in _readings(claim) for key in SIDES if key in part
            for output, _ in _sides(part, key, claim["output"])}
    included = {name for output in read & set(COMPANIONS)
                for name in compose_config([f"experiment={output}"]).report.get("include", [])}
    assert set(COMPANIONS) <= read | included, sorted(set(COMPANIONS) - read - included)
