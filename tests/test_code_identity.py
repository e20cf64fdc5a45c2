"""The code that decides a run's numbers is in its identity (issue 33): changed code runs again, and
``--check`` lists the committed runs made by code that has changed since."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from mlflow import MlflowClient

from svmrepro import code_digest as digests
from svmrepro.code_digest import CODE_DIGEST_TAG, PACKAGE_IN_REPO, RESULT_SOURCES, code_digest, commit_digest, \
    folder_digest
from svmrepro.locations import PACKAGE_DIR
from svmrepro.reproduce import main as reproduce
from svmrepro.runner import FINISHED, SKIPPED, run

RESULTS = Path(__file__).resolve().parents[1] / "results"
CHOICES = {"experiment": "test/code", "dataset": "gaussian_clouds", "algorithm": "svc_linear"}


def _copy_package(target: Path) -> Path:
    """The result sources and the report package (which the digest leaves out) of the running package."""
    for source in (*RESULT_SOURCES, "report"):
        if (PACKAGE_DIR / source).is_dir():
            shutil.copytree(PACKAGE_DIR / source, target / source, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            target.mkdir(parents=True, exist_ok=True)
            shutil.copy(PACKAGE_DIR / source, target / source)
    return target


def _touch(path: Path) -> None:
    path.write_bytes(path.read_bytes() + b"\n# changed\n")


def test_the_digest_changes_with_an_algorithm_and_not_with_the_report(tmp_path):
    package = _copy_package(tmp_path / "svmrepro")
    assert folder_digest(package) == code_digest()
    _touch(package / "report" / "tables.py")
    _touch(package / "data" / "cli.py")
    assert folder_digest(package) == code_digest()
    _touch(package / "algorithms" / "cascade.py")
    assert folder_digest(package) != code_digest()


def test_the_digest_is_the_same_in_every_process():
    script = "from svmrepro.code_digest import code_digest; print(code_digest())"
    env = {**os.environ, "PYTHONPATH": str(PACKAGE_DIR.parent)}
    seen = {subprocess.run([sys.executable, "-c", script], env={**env, "PYTHONHASHSEED": seed}, capture_output=True,
                           text=True, check=True).stdout.strip() for seed in ("1", "2")}
    assert seen == {code_digest()}


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=repo, check=True,
                          capture_output=True, text=True).stdout.strip()


def test_the_digest_of_a_commit_equals_the_digest_of_its_files(tmp_path):
    repo = tmp_path / "repo"
    package = _copy_package(repo / PACKAGE_IN_REPO)
    _git(repo, "init", "-q")
    _git(repo, "add", ".")
    _git(repo, "commit", "-q", "-m", "one")
    first = _git(repo, "rev-parse", "HEAD")
    _touch(package / "algorithms" / "cascade.py")
    (package / "analyses" / "new.py").write_text("x = 1\n")
    _git(repo, "add", ".")
    _git(repo, "commit", "-q", "-m", "two")
    second = _git(repo, "rev-parse", "HEAD")
    assert commit_digest(second, repo) == folder_digest(package)
    assert commit_digest(first, repo) == code_digest() != folder_digest(package)
    assert commit_digest("f" * 40, repo) is None  # a commit git does not have: unknown, not guessed


@pytest.fixture
def changed_algorithm(tmp_path, monkeypatch):
    """The running package with one algorithm module's bytes changed (a copy), from the next digest on."""
    package = _copy_package(tmp_path / "changed" / "svmrepro")
    _touch(package / "algorithms" / "cascade.py")

    def change():
        monkeypatch.setattr(digests, "PACKAGE_DIR", package)
        code_digest.cache_clear()

    yield change
    monkeypatch.undo()
    code_digest.cache_clear()


def test_a_run_of_changed_code_runs_again_instead_of_being_skipped(tiny_cfg, changed_algorithm):
    first = run(tiny_cfg(), CHOICES)
    assert run(tiny_cfg(), CHOICES).status == SKIPPED
    before = code_digest()
    changed_algorithm()
    again = run(tiny_cfg(), CHOICES)
    assert again.status == FINISHED and again.run_id != first.run_id and again.run_key != first.run_key
    assert run(tiny_cfg(), CHOICES).status == SKIPPED
    client = MlflowClient(tiny_cfg().tracking.uri)
    assert client.get_run(first.run_id).data.tags[CODE_DIGEST_TAG] == before
    assert client.get_run(again.run_id).data.tags[CODE_DIGEST_TAG] == code_digest() != before


def test_check_lists_the_runs_of_changed_code_and_those_whose_code_is_unknown(tmp_path, capsys):
    """Four committed runs: one of today's code, one tagged with other code, one logged before the
    tag at a commit of this checkout (its code read from git), one at a commit git does not have."""
    experiment = "mixture/fig2_corners"
    runs = pd.read_csv(RESULTS / f"{experiment}.runs.csv", dtype=str)
    assert len(runs) == 4 and runs["tags.git_commit"].nunique() == 1
    commit = runs["tags.git_commit"][0][:8]
    runs[f"tags.{CODE_DIGEST_TAG}"] = [code_digest(), "0" * 64, None, None]
    runs.loc[3, "tags.git_commit"] = "f" * 40
    (tmp_path / "mixture").mkdir()
    runs.to_csv(tmp_path / f"{experiment}.runs.csv", index=False)
    args = ["--check", "--from-csv", "--mode", "full", "--results-dir", str(tmp_path), "--experiment", experiment]
    assert reproduce(args) == 0
    out = capsys.readouterr().out
    assert f"  stale: 2 runs (code changed since {commit}; the sweep runs them again)" in out.splitlines()
    assert "  code unknown: 1 runs (no code_digest tag, and commit ffffffff is not in a git checkout here)" \
        in out.splitlines()
