"""``svmrepro-reproduce --config-dir`` takes any path a file system allows (issue 46, item 11).

The folder reaches Hydra as ``hydra.searchpath=[...]`` (this process's compositions and the sweeps' command
lines), where a comma split it in two, and a quote, brackets, ``#``, ``=`` or a letter outside ASCII stopped the
override parser; and it reaches this process's compositions through ``$SVMREPRO_CONFIG_DIRS``, where an
``os.pathsep`` split it. Each folder is now quoted for Hydra's grammar (:func:`svmrepro.compose.quoted`) and
written as a JSON list there. One composition per name keeps the test cheap: the sweeps get the same override.
"""

import shutil
from pathlib import Path

import pytest
from hydra.core.override_parser.overrides_parser import OverridesParser

from svmrepro import reproduce as reproducing
from svmrepro.compose import compose_config, searchpath_override, use_config_dirs
from svmrepro.locations import CONFIG_DIRS_ENV, user_config_dirs

STUDY_CONF = Path(__file__).resolve().parents[1] / "docs" / "tutorial" / "study" / "conf"
NAMES = ["ü", "数据", "a#b", "[ ]", "it's", "k=v", "a,b", "c:d", "back\\slash", "sp ace", "$HOME"]


@pytest.mark.parametrize("name", NAMES)
def test_a_config_folder_with_any_name_is_composed(name, tmp_path, monkeypatch):
    monkeypatch.setenv(CONFIG_DIRS_ENV, "")  # use_config_dirs sets it for the process; put back afterwards
    folder = tmp_path / name / "conf"
    shutil.copytree(STUDY_CONF, folder)
    use_config_dirs([folder])
    assert user_config_dirs() == [folder]
    (override,) = searchpath_override()
    assert OverridesParser.create().parse_override(override).value() == [f"file://{folder}"]
    cfg = compose_config(["experiment=moons/sizes", "mode=quick"])
    assert cfg.dataset.loader == "sklearn.datasets.make_moons" and cfg.report.title.startswith("Two moons")


def test_a_folder_hydra_cannot_name_is_one_line(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv(CONFIG_DIRS_ENV, "")
    folder = tmp_path / "${oops}" / "conf"
    shutil.copytree(STUDY_CONF, folder)
    assert reproducing.main(["--config-dir", str(folder), "--check"]) == 2
    assert capsys.readouterr().err.splitlines() == [
        (f"svmrepro-reproduce: error: --config-dir {folder}: a '${{' in its path is an interpolation to Hydra, "
         "which has no way to write it in an override: rename the folder")]
