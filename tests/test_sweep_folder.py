"""Each sweep has its output folder to itself (svmrepro.sweep.folder): sweeps started in the same second
neither share a folder nor each other's parent run, progress or failures (issue 46, item 3)."""

import subprocess
import sys

import forked_cli
import pytest
from hypothesis import given
from hypothesis import strategies as st
from mlflow.tracking import MlflowClient

from svmrepro.sweep.folder import KEY, quoted
from hydra.core.override_parser.overrides_parser import OverridesParser

#: svmrepro-run with Hydra's ${now:...} frozen, so that the sweeps below start "in the same second" for sure
FROZEN_NOW = """
import sys
import hydra._internal.hydra as hydra_main
from omegaconf import OmegaConf
from svmrepro.app import main
setup = hydra_main.setup_globals
def frozen():
    setup()
    OmegaConf.register_new_resolver("now", lambda pattern: "frozen", use_cache=True, replace=True)
hydra_main.setup_globals = frozen
sys.argv[0] = "svmrepro-run"
main()
"""


def test_sweeps_started_in_the_same_second_each_keep_their_own_folder_and_runs(tmp_path, store_uri):
    # the store is made first (store_uri): the sweeps race on their folders only
    sweeps = [subprocess.Popen([sys.executable, "-c", FROZEN_NOW, "-m", f"seed={n},{n + 10}",
                                f"tracking.uri={store_uri}"],
                               cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
              for n in range(3)]
    outputs = [sweep.communicate(timeout=300)[0] for sweep in sweeps]
    for sweep, output in zip(sweeps, outputs):
        assert sweep.returncode == 0, output[-3000:]
        assert "2 jobs in" in output and "2 done, 0 skipped, 0 failed" in output, output[-3000:]
        assert "deleted" not in output and "4/2" not in output and "6/2" not in output
    folders = sorted(path.name for path in (tmp_path / "multirun" / "frozen").iterdir())
    assert folders == ["frozen", "frozen-1", "frozen-2"]
    client = MlflowClient(store_uri)
    experiment = client.get_experiment_by_name("adhoc") or client.search_experiments()[-1]
    runs = client.search_runs([experiment.experiment_id])
    parents = [run for run in runs if run.data.tags.get("svmrepro.kind") == "sweep"]
    assert len(parents) == 3
    assert sorted(run.data.tags["sweep_dir"].rsplit("/", 1)[-1] for run in parents) == folders
    for parent in parents:
        children = [run for run in runs if run.data.tags.get("mlflow.parentRunId") == parent.info.run_id]
        assert len(children) == 2 and all(run.info.status == "FINISHED" for run in children)
        assert parent.info.status == "FINISHED"


def test_a_folder_named_on_the_command_line_is_taken_as_named(tmp_path, store_uri):
    for _ in range(2):  # twice into one folder, as Hydra does
        done = forked_cli.run([sys.executable, "-m", "svmrepro", "-m", "seed=0",
                               f"tracking.uri={store_uri}", f"hydra.sweep.dir={tmp_path / 'mine'}"],
                              cwd=tmp_path, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr[-3000:]
    assert sorted(path.name for path in tmp_path.iterdir() if path.name.startswith("mine")) == ["mine"]


@given(st.text(st.characters(exclude_categories=("Cc", "Cs")), min_size=1, max_size=30))
def test_any_folder_name_is_handed_to_the_jobs_unchanged(name):
    value = f"/tmp/{name}"
    try:
        text = quoted(value)
    except ValueError:  # only an interpolation cannot be written
        assert "${" in value
        return
    assert OverridesParser.create().parse_override(f"{KEY}={text}").value() == value


@pytest.mark.parametrize("name", ["ü 数据", "a#b[ ]", "it's", "k=v,w", "back\\slash\\"])
def test_odd_folder_names_are_quoted_for_hydra(name):
    assert OverridesParser.create().parse_override(f"{KEY}={quoted('/tmp/' + name)}").value() == "/tmp/" + name
