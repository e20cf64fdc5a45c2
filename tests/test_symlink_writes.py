"""Nothing is written through a symlink or outside the folder written into (issue 46, item 1): a cloned study whose
``results/quick/today.md`` links to ``~/.bashrc`` gets one line naming the link, and the file it points at is
left as it was."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from svmrepro.errors import SvmReproError
from svmrepro.reproduce import main as reproduce
from svmrepro.writing import SymlinkInTheWay, symlinks_below, write_file

CHECKOUT = Path(__file__).resolve().parents[1]


def test_a_page_is_written_whole_and_as_a_regular_file(tmp_path):
    page = write_file(tmp_path / "results" / "paper" / "page.md", "new\n", root=tmp_path)
    assert page.read_text() == "new\n" and not page.is_symlink()
    write_file(page, lambda out: out.write(b"bytes"), root=tmp_path)
    assert page.read_bytes() == b"bytes"
    assert sorted(p.name for p in page.parent.iterdir()) == ["page.md"]  # no temporary file left


def test_a_symlink_where_a_page_goes_is_refused_and_its_target_untouched(tmp_path):
    secret = tmp_path / "home" / ".bashrc"
    secret.parent.mkdir()
    secret.write_text("export PATH=...\n")
    study = tmp_path / "study"
    (study / "results").mkdir(parents=True)
    (study / "results" / "today.md").symlink_to(secret)
    with pytest.raises(SymlinkInTheWay, match=r"results/today\.md: a symlink \(to .*\.bashrc\)"):
        write_file(study / "results" / "today.md", "report\n", root=study)
    assert secret.read_text() == "export PATH=...\n"


def test_the_hydra_files_masked_for_a_password_are_rewritten_whole_and_never_through_a_link(tmp_path):
    from omegaconf import OmegaConf

    from svmrepro.redact_files import RedactHydraFiles

    job = tmp_path / "job"
    (job / ".hydra").mkdir(parents=True)
    (job / ".hydra" / "overrides.yaml").write_text("- tracking.uri=postgresql://u:s3cret@db/x\n")
    outside = tmp_path / "outside.yaml"
    outside.write_text("uri: postgresql://u:s3cret@db/x\n")
    (job / ".hydra" / "config.yaml").symlink_to(outside)
    config = OmegaConf.create({"hydra": {"output_subdir": ".hydra", "runtime": {"output_dir": str(job)}}})
    with pytest.raises(SymlinkInTheWay, match=r"\.hydra/config\.yaml: a symlink"):
        RedactHydraFiles().on_job_start(config)
    assert outside.read_text() == "uri: postgresql://u:s3cret@db/x\n"  # the link's target untouched
    (job / ".hydra" / "config.yaml").unlink()
    RedactHydraFiles().on_job_start(config)
    assert (job / ".hydra" / "overrides.yaml").read_text() == "- tracking.uri=postgresql://u:***@db/x\n"
    assert sorted(p.name for p in (job / ".hydra").iterdir()) == ["overrides.yaml"]  # no temporary file left


def test_a_symlinked_folder_below_the_root_is_refused(tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (tmp_path / "study" / "results").mkdir(parents=True)
    (tmp_path / "study" / "results" / "cascade").symlink_to(elsewhere, target_is_directory=True)
    with pytest.raises(SymlinkInTheWay, match="results/cascade: a symlink"):
        write_file(tmp_path / "study" / "results" / "cascade" / "table1.md", "x", root=tmp_path / "study")
    assert list(elsewhere.iterdir()) == []
    with pytest.raises(SvmReproError, match="outside"):
        write_file(tmp_path / "other.md", "x", root=tmp_path / "study")


def test_a_reproduction_into_a_results_folder_holding_a_symlink_stops_in_one_line_before_building(
        tmp_path, monkeypatch, capsys):
    secret = tmp_path / "outside.txt"
    secret.write_text("keep me\n")
    results = tmp_path / "results"
    (results / "cross_training").mkdir(parents=True)
    for name in ("fig3", "fig3_baseline"):
        source = CHECKOUT / "results" / "cross_training" / f"{name}.runs.csv"
        (results / "cross_training" / source.name).write_bytes(source.read_bytes())
    (results / "today.md").symlink_to(secret)
    monkeypatch.chdir(tmp_path)
    code = reproduce(["--experiment", "cross_training/fig3", "--from-csv", "--mode", "full",
                      "--results-dir", str(results)])
    err = capsys.readouterr().err.strip().splitlines()
    assert code != 0 and len(err) == 1, err
    assert "today.md: a symlink in the results folder" in err[0] and "outside.txt" in err[0]
    assert secret.read_text() == "keep me\n"
    assert not (results / "cross_training" / "fig3.md").exists()  # refused before any output was built
    assert symlinks_below(results) == [results / "today.md"]
    assert os.readlink(results / "today.md") == str(secret)
