"""Pre-registration: every claim matches its entry in experiments/<paper>/claims.lock.yaml (no git
history needed, so a shallow clone passes), and the lock writer refuses a change without an amendment
that says what changed."""

import subprocess

import pytest

from svmrepro.compose import papers
from svmrepro.errors import ConfigError
from svmrepro.locations import CONFIG_DIRS_ENV
from svmrepro.report.claims.lock import COMMAND, lock_path, lock_problems, read_lock, relock, write_lock
from svmrepro.report.claims.relock import main as relock_main
from svmrepro.report.claims.schema import claims_path, load_claims, parse_claims
from toy_claims import TOY_CLAIM_HEAD

CLAIMS = TOY_CLAIM_HEAD + """\
    test: {kind: compare, metric: fit_cpu_s, a: a, b: b, stat: ratio}
    expect: {below: 0.6}
    partly: {below: 1.0}
    timing: true
  - id: faster_at_500
    source: Table 1
    claim: the same at 500
    paper_says: 10 vs 39 s
    not_run: the corpus is licensed
"""
AMENDMENT = """\
    amendments:
      - commit: {commit}
        date: 2026-11-26
        changed: [{changed}]
        why: "the paper says at most 0.5"
        verdict_before: "supported: 0.55 [0.5, 0.58]"
"""


def test_every_claim_of_every_paper_matches_its_lock():
    locked = [paper for paper in papers() if claims_path(paper).is_file()]
    assert locked and all(lock_path(paper).is_file() for paper in locked), "a paper with claims has no lock"
    problems = [line for paper in locked for line in lock_problems(paper)]
    assert not problems, "\n".join(problems)
    assert all(len(entry.registered) == 40 for paper in locked for entry in read_lock(paper).values())


def git(folder, *args):
    return subprocess.run(["git", "-C", str(folder), *args], check=True, capture_output=True, text=True).stdout.strip()


@pytest.fixture
def toy(tmp_path, monkeypatch):
    """A checkout of one paper, toy, in a git repository of its own, its claims committed and locked;
    toy/table1's experiment config in a user config folder."""
    monkeypatch.chdir(tmp_path)  # experiments/toy/claims.yaml is read from the current folder first
    for name, value in {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
                        "GIT_COMMITTER_EMAIL": "t@t"}.items():
        monkeypatch.setenv(name, value)
    configs = tmp_path / "conf"
    (configs / "experiment" / "toy").mkdir(parents=True)
    (configs / "experiment" / "toy" / "table1.yaml").write_text("seed: 1\nreport: {title: Table 1}\n")
    monkeypatch.setenv(CONFIG_DIRS_ENV, str(configs))
    folder = tmp_path / "experiments" / "toy"
    folder.mkdir(parents=True)
    (folder / "claims.yaml").write_text(CLAIMS)
    git(tmp_path, "init", "-q")
    git(tmp_path, "add", "experiments")
    git(tmp_path, "commit", "-q", "-m", "claims")
    entries, refused = relock("toy")
    assert not refused
    write_lock("toy", entries)
    return tmp_path


def edit(change, extra=""):
    path = claims_path("toy")
    text = path.read_text()
    assert change[0] in text
    path.write_text(text.replace(*change) + extra)


def test_a_new_claim_is_locked_with_the_commit_that_added_it(toy):
    lock = read_lock("toy")
    assert lock["faster"].registered == git(toy, "rev-parse", "HEAD") and lock["faster"].amendments == 0
    assert lock_problems("toy") == []
    edit(("  - id: faster_at_500", "  - id: faster_at_1000\n    source: s\n    claim: c\n    paper_says: p\n"
                                   "    not_run: later\n  - id: faster_at_500"))
    assert lock_problems("toy") == [f"toy: faster_at_1000 has no lock entry: commit it, then lock it with `{COMMAND}`"]
    _, refused = relock("toy")  # "id: faster" occurs in "id: faster_at_1000": only the committed file tells
    assert refused == [f"{claims_path('toy')}: faster_at_1000: no commit adds it yet: commit the claim, then lock it"]
    git(toy, "commit", "-q", "-am", "a claim at 1000")
    entries, refused = relock("toy")
    assert not refused and entries["faster_at_1000"].registered == git(toy, "rev-parse", "HEAD")
    assert entries["faster"].registered != entries["faster_at_1000"].registered


@pytest.mark.parametrize("change, what", [
    (("expect: {below: 0.6}", "expect: {below: 0.5}"), "region"),
    (("stat: ratio", "stat: difference"), "test"),
    (("claim: b trains faster than a", "claim: b trains much faster than a"), "claim"),
    (("timing: true", "timing: false"), "timing"),
])
def test_a_changed_claim_fails_the_lock_naming_what_changed(toy, change, what):
    edit(change)
    assert lock_problems("toy") == [f"toy: faster changed since it was locked ({what}): add an amendment and "
                                    f"re-lock with `{COMMAND} toy`"]


@pytest.mark.parametrize("unlocked, locked", [
    ("seed: 1\nreport: {title: Table 1, the paper's}\n", "seed: 2\nreport: {title: Table 1}\n"),
    ("seed: 1\nsweep: {quick: {seed: 3}}\nsmoke: {n: 20}\nreport: {title: Table 1}\n",
     "seed: 1\nsweep: {quick: {seed: 3}, full: {seed: '1,2'}}\nreport: {title: Table 1}\n"),
], ids=["page title", "quick and smoke"])
def test_the_outputs_full_sweep_config_is_locked_its_page_and_quick_settings_are_not(toy, unlocked, locked):
    config = toy / "conf" / "experiment" / "toy" / "table1.yaml"
    config.write_text(unlocked)
    assert lock_problems("toy") == []
    config.write_text(locked)
    assert lock_problems("toy") == [f"toy: faster changed since it was locked (output_config): add an amendment "
                                    f"and re-lock with `{COMMAND} toy`"]


def test_the_writer_refuses_an_unamended_change_and_writes_nothing(toy, capsys):
    before = lock_path("toy").read_text()
    edit(("expect: {below: 0.6}", "expect: {below: 0.5}"))
    assert relock_main(["toy"]) == 2
    err = capsys.readouterr().err
    assert "faster: changed since it was locked (region) without a new amendment" in err
    assert lock_path("toy").read_text() == before


def test_the_writer_accepts_an_amended_change_and_records_it(toy):
    edit(("expect: {below: 0.6}", "expect: {below: 0.5}"),
         extra="")
    edit(("    timing: true\n", "    timing: true\n" + AMENDMENT.format(commit="1a2b3c4", changed="region")))
    assert [claim.amendments[0].changed for claim in load_claims("toy") if claim.id == "faster"] == [["region"]]
    assert relock_main(["toy"]) == 0
    assert read_lock("toy")["faster"].amendments == 1 and lock_problems("toy") == []
    edit(("expect: {below: 0.5}", "expect: {below: 0.4}"))  # a second change needs a second amendment
    _, refused = relock("toy")
    assert len(refused) == 1 and "without a new amendment" in refused[0]


def test_the_writer_refuses_an_amendment_that_leaves_out_what_changed(toy):
    edit(("stat: ratio", "stat: difference"))
    edit(("    timing: true\n", "    timing: true\n" + AMENDMENT.format(commit="1a2b3c4", changed="region")))
    _, refused = relock("toy")
    assert refused == [f"{claims_path('toy')}: faster: its new amendments' changed (region) leave out test, "
                       "which changed"]


def test_the_writer_refuses_to_drop_a_locked_claim(toy):
    edit(("  - id: faster_at_500\n    source: Table 1\n    claim: the same at 500\n    paper_says: 10 vs 39 s\n"
          "    not_run: the corpus is licensed\n", ""))
    _, refused = relock("toy")
    assert refused == [f"{claims_path('toy')}: faster_at_500 is locked but gone: a registered claim stays (give it "
                       "not_run: <why> and an amendment)"]


@pytest.mark.parametrize("amendment, words", [
    (AMENDMENT.format(commit="xyz1234", changed="region"), "amendments[0].commit"),
    (AMENDMENT.format(commit="1a2b3c4", changed="regions"), "expected a non-empty list of: claim, test, region"),
    (AMENDMENT.format(commit="1a2b3c4", changed=""), "amendments[0].changed: empty"),
    (AMENDMENT.format(commit="1a2b3c4", changed="region").replace("2026-11-26", "26.11.2026"), "expected YYYY-MM-DD"),
    (AMENDMENT.format(commit="1a2b3c4", changed="region").replace("        verdict_before: \"supported: 0.55 "
                                                                   "[0.5, 0.58]\"\n", ""), "verdict_before"),
    ("    conditions: {scale: 1/5 of the rows, colour: red}\n", "colour"),
])
def test_a_bad_amendment_or_condition_is_one_line_naming_the_key(amendment, words):
    text = CLAIMS.replace("    timing: true\n", "    timing: true\n" + amendment)
    with pytest.raises(ConfigError) as error:
        parse_claims("toy", text, "experiments/toy/claims.yaml")
    message = str(error.value)
    assert "\n" not in message and message.startswith("experiments/toy/claims.yaml") and words in message


TODAY = "    today:\n      test: {a: {output: toy/table1_today, group: svc_onedal}}\n"


def today_companion(toy, algorithm="svc_onedal"):
    (toy / "conf" / "experiment" / "toy" / "table1_today.yaml").write_text(
        f"defaults: [/experiment/toy/table1]\nsweep: {{full: {{algorithm: {algorithm}}}}}\n")


def test_a_today_block_is_registered_with_its_commit_and_leaves_the_claims_hash(toy):
    today_companion(toy)
    before = read_lock("toy")["faster"]
    edit(("    timing: true\n", "    timing: true\n" + TODAY))
    assert lock_problems("toy") == [f"toy: faster's today block has no lock entry: commit it, then lock it with "
                                    f"`{COMMAND} toy`"]
    _, refused = relock("toy")
    assert refused == [f"{claims_path('toy')}: faster: no commit adds its today block yet: commit it, then lock it"]
    git(toy, "commit", "-q", "-am", "today")
    entries, refused = relock("toy")
    assert not refused and entries["faster"].today.registered == git(toy, "rev-parse", "HEAD")
    assert (entries["faster"].registered, entries["faster"].hash, entries["faster"].parts) == (
        before.registered, before.hash, before.parts)
    assert "today" not in lock_path("toy").read_text()  # a lock without today blocks is written as before
    write_lock("toy", entries)
    assert lock_problems("toy") == [] and read_lock("toy")["faster"].today == entries["faster"].today


@pytest.mark.parametrize("change", ["block", "companion config"])
def test_a_changed_today_block_needs_an_amendment_naming_today(toy, change):
    today_companion(toy)
    edit(("    timing: true\n", "    timing: true\n" + TODAY))
    git(toy, "commit", "-q", "-am", "today")
    write_lock("toy", relock("toy")[0])
    if change == "block":
        edit(("group: svc_onedal", "group: svc_onedal_tuned"))
    else:
        today_companion(toy, "svc_onedal_tuned")
    assert lock_problems("toy") == [f"toy: faster changed since it was locked (today): add an amendment and "
                                    f"re-lock with `{COMMAND} toy`"]
    edit(("    timing: true\n", "    timing: true\n" + AMENDMENT.format(commit="1a2b3c4", changed="region")))
    assert relock("toy")[1] == [f"{claims_path('toy')}: faster: its new amendments' changed (region) leave out "
                                "today, which changed"]
    edit(("changed: [region]", "changed: [today]"))
    entries, refused = relock("toy")
    assert not refused and entries["faster"].amendments == 1 and entries["faster"].today.hash != \
        read_lock("toy")["faster"].today.hash
