"""Tab completion: every experiment as ``experiment=<paper>/<id>``, every group's options, config keys.

Asked as the shell asks (``svmrepro-run -sc query=svmrepro`` with ``COMP_LINE``), through the installed
bash function, and of the plugin directly.
"""

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import forked_cli
import pytest
from hydra import initialize_config_dir
from hydra.core.global_hydra import GlobalHydra

from hydra_plugins.svmrepro_completion.completion import GroupCompletion
from svmrepro import settings
from svmrepro.compose import CONF_DIR, compose_config, experiments

GROUPS = ["dataset", "algorithm", "selection"]
#: what a run needs and completion does not: imported when a run runs (svmrepro.app.job)
HEAVY = ["sklearn", "mlflow", "pandas", "matplotlib", "numba", "svmrepro.runner", "svmrepro.algorithms"]


def complete(line):
    """The plugin's suggestions for ``line`` (the command line after ``svmrepro-run``)."""
    settings.register()
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        return GroupCompletion(GlobalHydra.instance().config_loader()).complete_line("config", line)


def test_the_query_offers_every_experiment_and_each_composes():
    # Hydra refuses every -sc query when two plugins claim one shell: this one must not claim bash
    line = "svmrepro-run experiment="
    env = {**os.environ, "COMP_LINE": line, "COMP_POINT": str(len(line))}
    done = forked_cli.run([sys.executable, "-m", "svmrepro", "-sc", "query=svmrepro"], env=env,
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    offered = done.stdout.split()
    assert offered == [f"experiment={name}" for name in experiments()]
    for override in offered:
        cfg = compose_config([override])
        assert cfg.report.metrics, override


def query(line: str, shell: str = "svmrepro", cwd: Path | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "COMP_LINE": line, "COMP_POINT": str(len(line))}
    return forked_cli.run([sys.executable, "-m", "svmrepro", "-sc", f"query={shell}"], env=env, cwd=cwd,
                          capture_output=True, text=True, timeout=120, check=False)


def test_the_command_line_imports_no_run_machinery():
    script = f"import sys, svmrepro.app; print(' '.join(m for m in {HEAVY!r} if m in sys.modules))"
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=True)
    assert done.stdout.split() == []


def test_the_query_answers_without_loading_the_run_machinery():
    """What keeps a Tab press quick is what the query loads: none of the run machinery (:data:`HEAVY`) is
    imported while it answers (its CPU time is a benchmark's to measure, not a unit test's: the brief keeps
    speed targets out of timed unit tests; the wall time is bounded loosely, against a query that waits on a
    lock or the network)."""
    line = "svmrepro-run experiment=cross_training/"
    env = {**os.environ, "COMP_LINE": line, "COMP_POINT": str(len(line))}
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-X", "importtime", "-m", "svmrepro", "-sc", "query=svmrepro"], env=env,
                          capture_output=True, text=True, timeout=120, check=False)
    elapsed = time.perf_counter() - started
    assert done.returncode == 0 and "experiment=cross_training/fig3_baseline" in done.stdout.split(), done.stderr
    imported = {row.rsplit("|", 1)[-1].strip() for row in done.stderr.splitlines() if row.startswith("import time:")}
    assert not [m for m in HEAVY if m in imported], sorted(m for m in HEAVY if m in imported)
    assert elapsed < 30, f"the completion query took {elapsed:.1f} s of wall time"


def test_a_config_dir_on_the_line_adds_its_experiments_and_data_sets(tmp_path):
    (tmp_path / "mine" / "experiment" / "study").mkdir(parents=True)
    (tmp_path / "mine" / "experiment" / "study" / "tiny.yaml").write_text("# @package _global_\n")
    (tmp_path / "mine" / "dataset").mkdir()
    (tmp_path / "mine" / "dataset" / "moons.yaml").write_text("_target_: svmrepro.data.separable.Separable\n")
    assert complete(f"--config-dir {tmp_path / 'mine'} experiment=st") == ["experiment=study/tiny"]
    assert complete(f"-cd {tmp_path / 'mine'} -m dataset=mo") == ["dataset=moons"]
    assert complete("experiment=st") == []  # not without the folder
    assert complete("--config-dir ") == complete("-cd mi") == []  # a folder: the shell's file names (-o default)
    done = query("svmrepro-run --config-dir mine dataset=", cwd=tmp_path)  # relative to the shell's folder
    assert done.returncode == 0 and "dataset=moons" in done.stdout.split() and "dataset=covtype" in done.stdout.split()


@pytest.mark.parametrize("shell", ["bash", "zsh"])
def test_hydras_documented_install_installs_this_completion(shell):
    def sc(command):
        return forked_cli.run([sys.executable, "-m", "svmrepro", "-sc", command], capture_output=True, text=True,
                              timeout=120, check=True).stdout

    assert sc(f"install={shell}") == sc("install=svmrepro") and "_svmrepro_complete" in sc(f"install={shell}")
    assert query("svmrepro-run experiment=cross_training/fig3_s", shell=shell).stdout.split() == [
        "experiment=cross_training/fig3_spread"]


def test_a_partial_experiment_name_completes_within_its_paper():
    assert complete("-m experiment=cross_training/fi") == [
        f"experiment={name}" for name in experiments("cross_training") if name.startswith("cross_training/fi")
    ]


@pytest.mark.parametrize("group", GROUPS)
def test_every_option_of_a_group_is_offered(group):
    files = sorted(p.stem for p in (CONF_DIR / group).glob("*.yaml"))
    assert complete(f"{group}=") == [f"{group}={name}" for name in files]


def test_hydra_groups_are_offered_with_their_options():
    assert {"hydra/launcher=", "hydra/sweeper="} <= set(complete("hydra/"))
    launchers = complete("hydra/launcher=")
    ours = sorted(p.stem for p in (CONF_DIR / "hydra" / "launcher").glob("*.yaml"))
    assert {f"hydra/launcher={name}" for name in [*ours, "basic", "joblib"]} <= set(launchers)
    compose_config(["hydra/launcher=joblib"], return_hydra_config=True)
    sweepers = complete("hydra/sweeper=")
    assert "hydra/sweeper=basic" in sweepers
    # a folder holding the options of a group that one sweeper chooses (Optuna's sampler/) is no sweeper
    assert not [word for word in sweepers if "/" in word.partition("=")[2]], sweepers


def test_a_group_that_an_option_chooses_is_offered_once_that_option_is_chosen():
    pytest.importorskip("hydra_plugins.hydra_optuna_sweeper")
    assert complete("-m hydra/sweeper=optuna hydra/sweeper/s") == ["hydra/sweeper/sampler="]
    assert "hydra/sweeper/sampler=tpe" in complete("-m hydra/sweeper=optuna hydra/sweeper/sampler=")


def test_a_group_name_completes_to_its_override_not_to_a_subfolder():
    assert complete("exp") == ["experiment="]
    # experiment/<paper> is a folder of the experiment group, not a group of the defaults list
    assert complete("experiment/") == []
    offered = complete("")
    assert {f"{group}=" for group in [*GROUPS, "experiment", "hydra/launcher"]} <= set(offered)
    assert not [word for word in offered if word.startswith("experiment/")]


def test_keys_and_their_values_complete_as_in_hydra():
    assert "dataset.n_train=" in complete("dataset.n_")
    assert complete("dataset.n_train=") == ["dataset.n_train=1000"]
    # the keys of the config the earlier words compose
    assert "dataset.n_test=" in complete("experiment=cross_training/fig3_baseline dataset.n_t")


def test_a_sweep_completes_its_last_value():
    assert complete("-m algorithm=svc,full_q") == ["algorithm=svc,full_qp_svr"]
    assert "experiment=cascade/table1,cascade/table4" in complete("-m experiment=cascade/table1,cascade/t")


@pytest.mark.skipif(shutil.which("bash") is None, reason="no bash")
def test_the_installed_bash_function_fills_in_the_part_after_the_equals_sign():
    """Bash splits ``experiment=cross`` at ``=`` (COMP_WORDBREAKS) and replaces what follows it."""
    program = Path(sys.executable).with_name("svmrepro-run")
    if not program.exists():
        pytest.skip("svmrepro-run is not installed next to the interpreter")
    script = f"""
        eval "$({program} -sc install=bash)"
        COMP_LINE="{program} experiment=cross_training/fig3_s"; COMP_POINT=${{#COMP_LINE}}
        COMP_WORDS=({program} experiment = cross_training/fig3_s); COMP_CWORD=3
        _svmrepro_complete; echo "${{COMPREPLY[@]}}"
        COMP_LINE="{program} experiment="; COMP_POINT=${{#COMP_LINE}}
        COMP_WORDS=({program} experiment =); COMP_CWORD=2
        _svmrepro_complete; echo "${{#COMPREPLY[@]}} ${{COMPREPLY[0]}}"
        complete -p svmrepro-run
    """
    done = subprocess.run(["bash", "-c", script], capture_output=True, text=True, timeout=300, check=False)
    lines = done.stdout.splitlines()
    assert done.returncode == 0 and len(lines) == 3, done.stdout + done.stderr
    assert lines[0] == "cross_training/fig3_spread"
    assert lines[1] == f"{len(experiments())} {experiments()[0]}"
    assert "-F _svmrepro_complete svmrepro-run" in lines[2]


def test_help_lists_every_paper_and_says_how_an_experiment_is_named():
    done = forked_cli.run([sys.executable, "-m", "svmrepro", "--help"], capture_output=True, text=True, timeout=120,
                          check=False)
    assert done.returncode == 0, done.stderr
    assert "experiment=<paper>/<id>" in done.stdout
    for paper in {name.split("/")[0] for name in experiments()}:
        assert f"\nexperiment/{paper}: " in done.stdout
    assert "-sc install=bash" in done.stdout
