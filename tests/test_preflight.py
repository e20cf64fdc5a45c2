"""Every mistake before compute (issue 34, point 2): ``svmrepro-reproduce`` and ``svmrepro-run -m`` compose
and build every job of the sweeps they run, and check the report spec and the claims, before the first fit;
each problem is one line naming the file and the key, exit code 2, and nothing is made in the store."""

import json
import subprocess
import sys
from pathlib import Path

import forked_cli
import pytest
from omegaconf import OmegaConf, open_dict

from svmrepro import reproduce as reproducing
from svmrepro import compose as compose_module
from svmrepro.compose import compose_config, compose_run, composition_cache
from svmrepro.sweep.jobs import JobComposer, sweep_jobs
from svmrepro.identity import config_hash
from svmrepro.locations import CONFIG_DIRS_ENV
from svmrepro.report import regenerate_command
from svmrepro.report.spec import ReportSpec

EXPERIMENT = """\
# @package _global_
defaults:
  - override /dataset: gaussian_clouds
  - override /algorithm: svc_linear
dataset:
  n_test: 50
sweep:
  quick:
    - {algorithm: svc_linear, seed: "0,1", dataset.n_train: "40,60"}
    - {algorithm: svc, seed: "0,1", algorithm.C: "1,10"}
report:
  title: my own experiment
  x: params.dataset.n_train
  metrics: [test_error]
"""
CLAIMS = """\
claims:
  - id: sv_grow
    source: Fig. 1
    claim: more points, more SVs
    paper_says: linear growth
    output: mine/fig1
    test: {kind: slope, metric: n_sv, x: params.dataset.n_train, group: svc_linear}
    expect: {above: 0.5}
"""
MISSING_LOADER = "_target_: my_missing_loaders.Moons\nn_train: 40\n"
EXPERIMENT_FILE = "conf/experiment/mine/fig1.yaml"
#: an experiment no claim reads (the claims check reads the report specs of the outputs it judges)
UNCLAIMED_FILE = "conf/experiment/mine/fig2.yaml"
MAIN = ["--config-dir", "conf", "--experiment", "mine/fig1", "--experiment", "mine/fig2"]
CLAIMS_FILE = "conf/experiments/mine/claims.yaml"
DATASET_FILE = "conf/dataset/mine.yaml"


@pytest.fixture
def folder(tmp_path, monkeypatch):
    """A user's config folder ``conf/`` in the current folder: two experiments, claims; fits forbidden."""
    monkeypatch.setenv(CONFIG_DIRS_ENV, "")  # --config-dir sets it for the process; put back afterwards
    monkeypatch.chdir(tmp_path)
    for name, text in ((EXPERIMENT_FILE, EXPERIMENT), (UNCLAIMED_FILE, EXPERIMENT), (CLAIMS_FILE, CLAIMS)):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)

    def never(*args, **kwargs):
        raise AssertionError("a sweep started after a mistake")
    monkeypatch.setattr(reproducing, "run_sweeps", never)
    # the package's papers' claims are checked by tests/test_claims_check.py; here the user's alone
    monkeypatch.setattr(reproducing, "papers", lambda: ["mine"])
    return tmp_path


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new, 1))


def _missing_loader(root: Path) -> None:
    (root / DATASET_FILE).parent.mkdir(parents=True)
    (root / DATASET_FILE).write_text(MISSING_LOADER)
    _edit(root / EXPERIMENT_FILE, "override /dataset: gaussian_clouds", "override /dataset: mine")


CASES = {
    "algorithm typo in a sweep entry": (
        lambda root: _edit(root / EXPERIMENT_FILE, "{algorithm: svc,", "{algorithm: svcc,"),
        f"{EXPERIMENT_FILE}: sweep.quick[1].algorithm: no config 'svcc' in group algorithm; did you mean svc? "
        "(svmrepro-run --help lists its "),
    "report key typo": (
        lambda root: _edit(root / UNCLAIMED_FILE, "  title:", "  titel:"),
        f"{UNCLAIMED_FILE}: report.titel is not a report key; allowed: title, x, metrics"),
    "report column typo": (
        lambda root: _edit(root / UNCLAIMED_FILE, "x: params.dataset.n_train", "x: params.dataset.n_trian"),
        f"{UNCLAIMED_FILE}: report.x: 'params.dataset.n_trian' is not a column of the runs of mine/fig2: expected "
        "params.<key> of its config or tags.<name> the runner sets"),
    "claim key typo": (
        lambda root: _edit(root / CLAIMS_FILE, "group: svc_linear", "grup: svc_linear"),
        "{claims}: sv_grow.test.grup: not a key of a slope test; valid: "),
    "data set module missing": (
        _missing_loader,
        f"{DATASET_FILE}: _target_: 'my_missing_loaders.Moons' cannot be imported (No module named "
        "'my_missing_loaders')"),
    "negative C in a sweep value": (
        lambda root: _edit(root / EXPERIMENT_FILE, 'algorithm.C: "1,10"', 'algorithm.C: "1,-10"'),
        f"{EXPERIMENT_FILE}: sweep.quick[1].algorithm.C: -10 is invalid: The 'C' parameter of SVC must be a float "
        "in the range (0.0, inf]"),
}


@pytest.mark.parametrize("case", CASES)
def test_a_mistake_is_one_line_naming_file_and_key_before_any_fit(case, folder, capsys):
    change, expected = CASES[case]
    change(folder)
    store = folder / "mlflow.db"
    code = reproducing.main([*MAIN, "--tracking-uri", f"sqlite:///{store}"])
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.startswith("svmrepro-reproduce: error: ")]
    assert code == 2 and "Traceback" not in err and len(lines) == 1, err
    expected = expected.format(claims=(folder / CLAIMS_FILE).resolve())
    assert lines[0].removeprefix("svmrepro-reproduce: error: ").startswith(expected), lines
    assert not store.exists() and not (folder / "multirun").exists()


def test_every_mistake_is_reported_not_only_the_first(folder, capsys):
    for case in ("algorithm typo in a sweep entry", "report key typo", "claim key typo", "data set module missing"):
        CASES[case][0](folder)
    assert reproducing.main(MAIN) == 2
    lines = [line for line in capsys.readouterr().err.splitlines() if line.startswith("svmrepro-reproduce: error: ")]
    # the configs' own mistakes first (a claim's test may only break because of them), then the claims'
    assert [line.split(": ")[2:4] for line in lines] == [
        [DATASET_FILE, "_target_"],  # the jobs of the first entry
        [EXPERIMENT_FILE, "sweep.quick[1].algorithm"],
        [UNCLAIMED_FILE, "report.titel is not a report key; allowed"],
        [str((folder / CLAIMS_FILE).resolve()), "sv_grow.test.grup"]], lines


def test_svmrepro_run_m_stops_before_its_first_job(folder):
    """The same checks in the sweeper of ``svmrepro-run -m``: one line per problem, exit 2, no run."""
    _edit(folder / EXPERIMENT_FILE, "{algorithm: svc_linear,", "{algorithm: svc_lineer,")
    _edit(folder / EXPERIMENT_FILE, 'algorithm.C: "1,10"', 'algorithm.C: "1,-10"')
    store = folder / "mlflow.db"
    done = forked_cli.run(
        [sys.executable, "-m", "svmrepro", "-m", "--config-dir", str(folder / "conf"), "experiment=mine/fig1",
         f"tracking.uri=sqlite:///{store}", f"hydra.sweep.dir={folder / 'sweep'}"],
        capture_output=True, text=True, timeout=300, cwd=folder)
    lines = [line for line in done.stderr.splitlines() if line.startswith("svmrepro-run: error: ")]
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr[-3000:]
    assert [line.split(": ", 2)[2] for line in lines] == [
        f"{EXPERIMENT_FILE}: sweep.quick[0].algorithm: no config 'svc_lineer' in group algorithm; did you mean "
        "svc_linear? (svmrepro-run --help lists its " + lines[0].split(" lists its ")[1],
        f"{EXPERIMENT_FILE}: sweep.quick[1].algorithm.C: -10 is invalid: The 'C' parameter of SVC must be a float "
        "in the range (0.0, inf]. Got -10 instead."]
    from mlflow.tracking import MlflowClient
    client = MlflowClient(f"sqlite:///{store}")
    experiments = [e.experiment_id for e in client.search_experiments()]
    assert not client.search_runs(experiments, "tags.`svmrepro.kind` = 'result'")


def _hydra_alone(overrides: list[str]):
    """The config and config-group options of Hydra's own composition of ``overrides``, no cache, no value
    applied by svmrepro: what ``svmrepro-run`` gets for them."""
    from hydra import compose, initialize_config_dir

    from svmrepro import settings
    from svmrepro.locations import CONF_DIR

    settings.register()
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        cfg = compose("config", overrides=[*compose_module.searchpath_override(), *overrides],
                      return_hydra_config=True)
    choices = dict(cfg.hydra.runtime.choices)
    with open_dict(cfg):
        del cfg["hydra"]
    return cfg, choices


@pytest.mark.parametrize("experiment", ["cascade/table1", "cross_training/fig1", "svr_decomposition/table1"])
def test_jobs_composed_once_per_group_options_are_those_hydra_composes(experiment):
    """:class:`JobComposer` and :func:`compose_run` (one Hydra composition per set of config-group options,
    values applied after) give every job the config, options and identity Hydra's composition of the job alone
    gives."""
    base = [f"experiment={experiment}", "mode=quick"]
    composer = JobComposer(base)
    for job in sweep_jobs(compose_config(base).sweep.quick, {"tracking.log_model": "true"}):
        (fast, fast_choices), (slow, slow_choices) = composer.compose(job), _hydra_alone([*base, *job])
        run, run_choices = compose_run([*base, *job])
        assert OmegaConf.to_yaml(fast) == OmegaConf.to_yaml(slow) == OmegaConf.to_yaml(run)
        assert fast_choices == slow_choices == run_choices
        assert config_hash(fast) == config_hash(slow)


def test_a_reproduction_composes_each_job_once_and_shares_it_read_only(monkeypatch):
    """:meth:`JobComposer.shared`: within one state of the config files, the jobs check, the data, the store's skip
    and the pages read one config per job, composed once (:func:`shared_composer`); the same config as
    :meth:`JobComposer.compose` gives, and none of them can change it for the others. A job that cannot be
    composed raises its error at every call."""
    from omegaconf.errors import ReadonlyConfigError

    from svmrepro.sweep import jobs as jobs_module

    base = ("experiment=cascade/table1", "mode=quick")
    jobs_module._shared_composer.cache_clear()  # not one an earlier test of this process composed with already
    with composition_cache():
        composer = jobs_module.shared_composer(base)
        assert jobs_module.shared_composer(base) is composer
        made = []
        real = composer.compose
        monkeypatch.setattr(composer, "compose", lambda job: made.append(job) or real(job))
        jobs = sweep_jobs(composer.shared([])[0].sweep.quick)
        shared = [composer.shared(job) for job in jobs]
        again = [composer.shared(list(job)) for job in jobs]
        assert len(made) == len(jobs) + 1
        for (cfg, choices), (same, same_choices), job in zip(shared, again, jobs):
            assert cfg is same and choices == same_choices
            fresh, fresh_choices = JobComposer(list(base)).compose(job)
            assert OmegaConf.to_yaml(cfg) == OmegaConf.to_yaml(fresh) and choices == fresh_choices
            with pytest.raises(ReadonlyConfigError):
                cfg.seed = 12345
            fresh.seed = 12345  # a composed copy is the caller's own
        for _ in range(2):
            with pytest.raises(Exception, match="no_such_key"):
                composer.shared(["no_such_key=1"])
        assert made.count(["no_such_key=1"]) == 1
    monkeypatch.setattr(jobs_module, "files_state", lambda: "another state of the files")
    assert jobs_module.shared_composer(base) is not composer


def test_plain_values_are_set_on_one_composition_as_hydra_sets_them(monkeypatch):
    """``experiment=X`` and ``experiment=X mode=full seed=3`` are one Hydra composition (the claims check asks
    for the one, the jobs check for the other); the values land as Hydra's own composition puts them, and a
    value Hydra refuses is refused with Hydra's message."""
    calls = []
    real = compose_module.compose
    monkeypatch.setattr(compose_module, "compose", lambda *a, **k: calls.append(1) or real(*a, **k))
    base = ["experiment=cascade/table1", "+hydra_plugins_never_read=1"]  # a key no other test composes
    with composition_cache():
        plain = compose_config(base)
        valued = compose_config([*base, "mode=full", "seed=3", "algorithm.C=2.5"])
        assert len(calls) == 1
        alone, _ = _hydra_alone([*base, "mode=full", "seed=3", "algorithm.C=2.5"])
        assert OmegaConf.to_yaml(valued) == OmegaConf.to_yaml(alone) != OmegaConf.to_yaml(plain)
        for bad in ("seed=abc", "no_such_key=1", "algorithm.no_such_key=1"):
            with pytest.raises(Exception) as ours:
                compose_config([*base, bad])
            with pytest.raises(Exception) as hydras:
                _hydra_alone([*base, bad])
            assert type(ours.value) is type(hydras.value) and str(ours.value) == str(hydras.value), bad
        assert len(calls) == 1


def test_a_kept_composition_gives_each_caller_its_own_copy_with_or_without_hydra_s_node():
    """One composition serves ``compose_run`` (no Hydra node), ``compose_config`` and
    ``compose_config(return_hydra_config=True)``; what one caller changes no other sees."""
    with composition_cache():
        cfg, choices = compose_run(["experiment=cascade/table1", "seed=5"])
        assert cfg.seed == 5 and "hydra" not in cfg and choices["experiment"] == "cascade/table1"
        cfg.seed, choices["dataset"] = 99, "changed"
        again, again_choices = compose_run(["experiment=cascade/table1"])
        assert again.seed != 99 and again_choices["dataset"] != "changed" and again.seed != 5
        full = compose_config(["experiment=cascade/table1", "seed=5"], return_hydra_config=True)
        assert full.seed == 5 and full.hydra.runtime.choices.experiment == "cascade/table1"
        with open_dict(full):
            del full.hydra
        assert OmegaConf.to_yaml(full) == OmegaConf.to_yaml(compose_run(["experiment=cascade/table1", "seed=5"])[0])


def test_a_config_is_composed_once_per_invocation_and_read_again_by_the_next(tmp_path, monkeypatch):
    """Inside :func:`composition_cache` (one svmrepro-reproduce invocation) a composition asked for twice is
    Hydra's once, each caller gets its own copy; outside it, and in the next invocation, a changed file is read
    again (an unchanged one is not: the composition of the same files is kept for the process)."""
    folder = tmp_path / "conf"
    path = folder / "experiment" / "mine" / "fig1.yaml"
    path.parent.mkdir(parents=True)
    path.write_text(EXPERIMENT)
    monkeypatch.setenv(CONFIG_DIRS_ENV, str(folder))
    calls = []
    real = compose_module.compose
    monkeypatch.setattr(compose_module, "compose", lambda *a, **k: calls.append(1) or real(*a, **k))
    with composition_cache():
        first = compose_config(["experiment=mine/fig1"])
        first.dataset.n_test = 7  # the caller's copy
        path.write_text(EXPERIMENT.replace("n_test: 50", "n_test: 60"))
        again = compose_config(["experiment=mine/fig1"])
        assert len(calls) == 1 and again.dataset.n_test == 50
    assert compose_config(["experiment=mine/fig1"]).dataset.n_test == 60 and len(calls) == 2
    with composition_cache():
        assert compose_config(["experiment=mine/fig1"]).dataset.n_test == 60 and len(calls) == 2
    path.write_text(EXPERIMENT.replace("n_test: 50", "n_test: 70"))
    with composition_cache():
        assert compose_config(["experiment=mine/fig1"]).dataset.n_test == 70 and len(calls) == 3


def test_the_regenerate_line_names_the_users_config_folders(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    spec = ReportSpec(experiment="mine/fig1", title="t", x="params.seed", metrics=("test_error",))
    monkeypatch.setenv(CONFIG_DIRS_ENV, "")
    assert regenerate_command(spec, "quick") == "svmrepro-reproduce mine --mode quick"
    monkeypatch.setenv(CONFIG_DIRS_ENV, str(tmp_path / "conf"))
    assert regenerate_command(spec, "quick") == "svmrepro-reproduce mine --config-dir conf --mode quick"


AHEAD_SCRIPT = r"""
import json, os, sys
from omegaconf import OmegaConf
from svmrepro import compose, preflight
from svmrepro.compose import _COMPOSED, compose_ahead, compose_config, composition_cache

names = ["cascade/table1", "mixture/table1", "cascade/table4"]
out = {}
with composition_cache():
    bases = [[f"experiment={name}", "mode=quick"] for name in names]
    out["below_the_minimum"] = compose_ahead(bases, 2)
    compose.AHEAD_MIN = 2
    out["one_process"] = compose_ahead(bases, 1)
    out["ahead"] = compose_ahead([*bases, ["experiment=no_such/experiment"]], 2)
    out["again"] = compose_ahead(bases, 2)
    ahead = {key: (OmegaConf.to_yaml(c.full), OmegaConf.to_yaml(c.bare), c.choices,
                   OmegaConf.is_struct(c.full), OmegaConf.is_readonly(c.bare)) for key, c in _COMPOSED.items()}
    _COMPOSED.clear()
    for base in bases:
        compose_config(base, return_hydra_config=True)
    out["same"] = ahead == {key: (OmegaConf.to_yaml(c.full), OmegaConf.to_yaml(c.bare), c.choices,
                                  OmegaConf.is_struct(c.full), OmegaConf.is_readonly(c.bare))
                            for key, c in _COMPOSED.items()}
    try:
        compose_config(["experiment=no_such/experiment"])
    except Exception as exc:
        out["error"] = type(exc).__name__
    _COMPOSED.clear()
    real, record = compose._compose, sys.argv[1]

    def recorded(*args):
        with open(record, "a") as file:  # by whichever process composes
            file.write(f"{os.getpid()}\n")
        return real(*args)

    compose._compose = recorded
    preflight._compose_ahead(names, "quick", {})
    with open(record) as file:
        made = file.read().split()
    out["forks"] = len(made) > len(names) and str(os.getpid()) not in made
    os.unlink(record)
    problems = preflight.reproduction_problems(names, "quick", {}, jobs=True, included=False)
    out["after"] = (problems, os.path.exists(record))
print(json.dumps(out))
"""


def test_a_reproduction_s_compositions_are_made_ahead_by_forks_as_they_would_be_here(tmp_path):
    """:func:`compose_ahead` (a reproduction's checks, :func:`svmrepro.preflight.reproduction_problems`): every
    configuration the checks will compose is composed first, shared among forks of the process, and kept
    exactly as composing it here keeps it (with and without Hydra's node, the options, the flags); a list that
    does not compose is left to its caller, who meets Hydra's error; too few lists, or one process, compose
    nothing ahead. Run in a process of its own: it forks only a process without another thread (a pytest-xdist
    worker has some)."""
    done = subprocess.run([sys.executable, "-c", AHEAD_SCRIPT, str(tmp_path / "composed_by")], capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert out["below_the_minimum"] == 0 and out["one_process"] == 0
    assert out["ahead"] == 3 and out["again"] == 0 and out["same"]
    assert out["error"] in ("MissingConfigException", "ConfigCompositionException")
    assert out["forks"], "the compositions ahead were made in this process, not in its forks"
    assert out["after"] == [[], False], "the checks composed again what was composed ahead"
