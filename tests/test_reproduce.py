"""svmrepro-reproduce's own decisions: which experiments, and outputs whose data is missing."""

from svmrepro.reproduce import main as reproduce


def test_an_output_whose_data_is_missing_says_not_run_and_why(tmp_path, monkeypatch, store_uri):
    monkeypatch.setenv("SVMREPRO_DATA", str(tmp_path / "empty_home"))
    monkeypatch.setenv("SVMREPRO_OFFLINE", "1")
    code = reproduce(
        ["--experiment", "svr_decomposition/table1", "--results-dir", str(tmp_path), "--tracking-uri", store_uri]
    )
    assert code == 0
    page = (tmp_path / "svr_decomposition" / "table1.md").read_text()
    assert "**not run**" in page and "cup98lrn.zip" in page
    assert not (tmp_path / "svr_decomposition" / "table1.runs.csv").exists()


def test_unknown_paper_lists_the_valid_ones(capsys):
    assert reproduce(["no_such_paper"]) == 2
    assert "cross_training" in capsys.readouterr().err
