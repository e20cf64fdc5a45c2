from dataclasses import dataclass

import pytest

from svmrepro.data import cli
from svmrepro.locations import CONFIG_DIRS_ENV
from svmrepro.data.base import DatasetSource
from svmrepro.data.files import RemoteFile

GENERATORS = ["checkerboard", "gaussian_clouds", "separable", "toy2d", "uniform_squares", "waveform"]


@dataclass(frozen=True)
class ChecksumSource(DatasetSource):
    """A loader that reads files but says only their checksums."""

    n_train: int = 10

    name = "checksum_source"

    def source_checksums(self):
        return {"a.csv": "0" * 64}

    def load(self, seed):
        raise NotImplementedError


class RemoteSource(ChecksumSource):
    """A loader that also names its files."""

    def remote_files(self):
        return [RemoteFile("a.csv", "https://example.org/a.csv", "0" * 64, "fake", shared_name="fake/a.csv")]


@pytest.fixture
def conf_dir(tmp_path, monkeypatch):
    """A user config folder (as ``--config-dir`` adds it) whose ``dataset/`` the test fills."""
    monkeypatch.setenv(CONFIG_DIRS_ENV, str(tmp_path))
    (tmp_path / "dataset").mkdir()
    return tmp_path / "dataset"


def test_list_shows_every_generator(capsys):
    assert cli.main(["list"]) == 0
    rows = {line.split()[0]: line for line in capsys.readouterr().out.splitlines()[1:]}
    for name in GENERATORS:
        assert "generated" in rows[name] and rows[name].rstrip().endswith("yes")
    assert "n_train=400 n_test=4600" in rows["waveform"]


def test_list_keeps_going_past_a_broken_config(conf_dir, capsys):
    (conf_dir / "bad.yaml").write_text("_target_: svmrepro.data.toy2d.Toy2d\nn_train: 0\n")
    (conf_dir / "good.yaml").write_text("_target_: svmrepro.data.toy2d.Toy2d\n")
    assert cli.main(["list"]) == 0
    out = capsys.readouterr().out
    assert f"error: {conf_dir / 'bad.yaml'}: dataset.n_train=0 is invalid" in out
    assert "good" in out and "generated" in out


def test_fetch_unknown_name_lists_valid_names(capsys):
    assert cli.main(["fetch", "no_such_set"]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1
    assert "no_such_set" in err and all(name in err for name in GENERATORS)


def test_fetch_generated_set(capsys):
    assert cli.main(["fetch", "separable"]) == 0
    out = capsys.readouterr().out
    assert "200 train / 1000 test" in out and "nothing stored" in out


def test_config_error_is_one_line_exit_1(conf_dir, capsys):
    (conf_dir / "bad.yaml").write_text("_target_: svmrepro.data.waveform.Waveform\npositive_class: 5\n")
    assert cli.main(["fetch", "bad"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "dataset.positive_class=5" in err and "Traceback" not in err


def test_describe_files_by_remote_files(tmp_path, monkeypatch):
    monkeypatch.setenv("SVMREPRO_DATA", str(tmp_path))
    monkeypatch.setenv("SVMREPRO_SHARED_DATA", str(tmp_path / "shared"))
    source = RemoteSource()
    assert cli.describe(source) == ("https://example.org/a.csv", "n_train=10", "no")
    (tmp_path / "shared" / "fake").mkdir(parents=True)
    (tmp_path / "shared" / "fake" / "a.csv").write_text("x")
    assert cli.describe(source)[2] == "yes (shared/data)"
    assert cli.file_locations(source) == [str(tmp_path / "shared" / "fake" / "a.csv")]
    (tmp_path / "fake").mkdir()
    (tmp_path / "fake" / "a.csv").write_text("x")
    assert cli.describe(source)[2] == "yes (cache)"
    assert cli.file_locations(source) == [str(tmp_path / "fake" / "a.csv")]


def test_describe_files_by_checksums_only():
    assert cli.describe(ChecksumSource()) == ("files", "n_train=10", "unknown")
    assert cli.file_locations(ChecksumSource())[0].startswith("a.csv")


@pytest.mark.parametrize("command", [["list"], ["fetch", "mine"]])
def test_a_users_config_dir_adds_its_data_sets(command, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv(CONFIG_DIRS_ENV, "")  # restored after the test: --config-dir sets it for the process
    (tmp_path / "dataset").mkdir()
    (tmp_path / "dataset" / "mine.yaml").write_text("_target_: svmrepro.data.separable.Separable\n")
    assert cli.main([*command, "--config-dir", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "mine" in out and "gaussian_clouds" in out if command == ["list"] else "mine: 200 train" in out


def test_a_config_dir_without_data_sets_is_one_line_exit_2(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv(CONFIG_DIRS_ENV, "")
    assert cli.main(["list", "--config-dir", str(tmp_path / "missing")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--config-dir" in err and "dataset/<name>.yaml" in err
