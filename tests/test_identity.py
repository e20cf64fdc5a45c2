from dataclasses import dataclass, fields
from pathlib import Path

import pandas as pd
import pytest
from omegaconf import OmegaConf

from svmrepro import identity
from svmrepro.code_digest import code_digest
from svmrepro.compose import compose_run, experiments
from svmrepro.sweep.jobs import sweep_jobs
from svmrepro.identity import config_hash, flatten, identity_config, run_key
from svmrepro.settings import Identity, RunSettings, identity_roles, setting

BASE = {"seed": 0, "dataset": {"n_train": 100, "std": 2.0}, "algorithm": {"C": 1.0}}


def test_config_hash_ignores_key_order():
    reordered = {"algorithm": {"C": 1.0}, "dataset": {"std": 2.0, "n_train": 100}, "seed": 0}
    assert config_hash(OmegaConf.create(BASE)) == config_hash(OmegaConf.create(reordered))


def test_config_hash_ignores_tracking_force_sweep_and_report():
    noisy = {**BASE, "tracking": {"uri": "sqlite:///x.db"}, "force": True, "sweep": {"quick": {}}, "report": {"x": "a"}}
    assert config_hash(OmegaConf.create(noisy)) == config_hash(OmegaConf.create(BASE))


def test_config_hash_changes_with_any_computational_value():
    other_seed = {**BASE, "seed": 1}
    other_c = {**BASE, "algorithm": {"C": 2.0}}
    hashes = {config_hash(OmegaConf.create(c)) for c in (BASE, other_seed, other_c)}
    assert len(hashes) == 3


def test_config_hash_resolves_interpolations():
    linked = OmegaConf.create({**BASE, "cv": {"random_state": "${seed}"}})
    literal = OmegaConf.create({**BASE, "cv": {"random_state": 0}})
    assert config_hash(linked) == config_hash(literal)


def test_run_key_depends_on_data_fingerprint_and_code():
    cfg = OmegaConf.create(BASE)
    keys = {run_key(cfg, "data-a", "code-1"), run_key(cfg, "data-b", "code-1"), run_key(cfg, "data-a", "code-2")}
    assert len(keys) == 3
    assert run_key(cfg, "data-a", "code-1") == run_key(OmegaConf.create(BASE), "data-a", "code-1")
    # the running package's code by default (svmrepro.code_digest); the package version is not in it
    assert run_key(cfg, "data-a") == run_key(cfg, "data-a", code_digest())


def test_flatten_and_identity_config():
    cfg = OmegaConf.create({**BASE, "tracking": {"uri": None}})
    assert "tracking" not in identity_config(cfg)
    assert flatten(identity_config(cfg)) == {"seed": 0, "dataset.n_train": 100, "dataset.std": 2.0, "algorithm.C": 1.0}


# ---------------------------------------------------------------------------------------------
# The identity roles moved from lists in identity.py to the schema's field metadata (issue 18):
# no run's identity may change, or every committed run would count as missing.

#: the lists identity.py had before; frozen here to compare with what the schema declares
OLD_NON_IDENTITY_KEYS = {"hydra", "tracking", "force", "label", "sweep", "sweep_jobs", "smoke", "report", "parallel"}
OLD_WHEN_SET_KEYS = {"surface", "analysis"}
#: settings added since, null unless a run sets them (a config then had no such key)
NEW_KEYS = {"measure"}
#: settings added since that never belong to an identity (how a run shares the machine)
NEW_NON_IDENTITY_KEYS = {"timing", "confirm"}  # confirm: the seeds of the confirmatory phase (issue 48)
RESULTS = Path(__file__).resolve().parents[1] / "results"


def old_identity_config(cfg) -> dict:
    plain = OmegaConf.to_container(cfg, resolve=True, enum_to_str=True)
    return {k: v for k, v in plain.items()
            if not (k in NEW_KEYS and v is None) and k not in OLD_NON_IDENTITY_KEYS | NEW_NON_IDENTITY_KEYS
            and not (k in OLD_WHEN_SET_KEYS and v is None)}


@pytest.mark.parametrize(
    ("overrides", "expected"),
    [  # config_hash computed with the old lists
        (["experiment=cross_training/fig3_baseline"], "3462a9baa5ebb58d796966f51e07eabc237823f750df4e96676af58794dc219e"),
        (["experiment=cross_training/fig3_baseline", "mode=full", "seed=3"],
         "12a2ea6aadebe3a48f77a0c94c09bb0d685f0273a713e74cb671cca8bcde4fde"),
        (["experiment=bench/regenerate", "mode=full"], "db4d0738900328a96e5e0a4ef64c07d7c598c9c774023ac654139c0939602ce0"),
        (["experiment=bench/kernel_expansion"], "cc30ae86d6235db8e36aa5d845c4fb14f9067957154a0f1e224358b1a2478889"),
        (["experiment=cascade/table1", "selection=grid_cv"],
         "6ce8b92561352bba916d56940260e4e8d6ed8985a966d61c45dee597424c54e9"),
    ],
)
def test_config_hash_of_composed_experiments_is_unchanged(overrides, expected):
    assert config_hash(compose_run(overrides)[0]) == expected


@pytest.mark.parametrize("experiment", experiments())
def test_the_schema_keeps_every_experiment_s_identity(experiment):
    cfg = compose_run([f"experiment={experiment}"])[0]
    assert identity_config(cfg) == old_identity_config(cfg)


@pytest.mark.parametrize("experiment", ["bench/regenerate", "bench/kernel_expansion", "mixture/fig1"])
def test_committed_runs_keep_their_config_hash(experiment):
    committed = set(pd.read_csv(RESULTS / f"{experiment}.runs.csv")["tags.config_hash"])
    base = [f"experiment={experiment}", "mode=full"]
    sweep = compose_run(base)[0].sweep.full
    ours = {config_hash(compose_run([*base, *job])[0]) for job in sweep_jobs(sweep)}
    assert committed <= ours


def test_every_setting_declares_its_role_and_the_key_sets_come_from_the_schema():
    roles = identity_roles()
    assert set(roles) == {f.name for f in fields(RunSettings)}
    assert identity.NON_IDENTITY_KEYS == {"hydra"} | {k for k, r in roles.items() if r is Identity.never}
    assert identity.WHEN_SET_KEYS == {k for k, r in roles.items() if r is Identity.when_set}
    # the settings whose n_jobs worker counts are left out: the estimators' constructor configs
    assert identity.ESTIMATOR_KEYS == {"algorithm", "selection"}


def test_a_setting_without_a_role_is_refused():
    @dataclass
    class Settings:
        seed: int = setting(Identity.always, default=0)
        verbose: bool = False

    with pytest.raises(TypeError, match="Settings.verbose declares no identity role"):
        identity_roles(Settings)


def test_a_when_set_key_counts_only_when_set():
    chosen = {**BASE, "measure": {"_target_": "svmrepro.measures.benchmark", "_partial_": True}}
    assert config_hash(OmegaConf.create({**BASE, "measure": None})) == config_hash(OmegaConf.create(BASE))
    assert config_hash(OmegaConf.create(chosen)) != config_hash(OmegaConf.create(BASE))


# ---------------------------------------------------------------------------------------------
# How many workers a fit used is not what it computed (issue 32): n_jobs changes the wall time only.

NESTED = {**BASE, "algorithm": {"C": 1.0, "n_jobs": 1, "estimator": {"C": 1.0, "n_jobs": 1}},
          "selection": {"cv": 3, "n_jobs": 1}}


def _with(tree: dict, **changes) -> dict:
    """``tree`` with the dotted keys of ``changes`` set (``algorithm__estimator__n_jobs=-1``)."""
    out = OmegaConf.create(tree)
    for dotted, value in changes.items():
        OmegaConf.update(out, dotted.replace("__", "."), value)
    return OmegaConf.to_container(out)


@pytest.mark.parametrize("changes", [
    {"algorithm__n_jobs": 2},
    {"algorithm__n_jobs": -1, "algorithm__estimator__n_jobs": 4},
    {"algorithm__estimator__n_jobs": None},
    {"selection__n_jobs": -1},
])
def test_worker_counts_are_not_part_of_the_identity(changes):
    parallel = _with(NESTED, **changes)
    assert config_hash(parallel) == config_hash(NESTED)
    assert run_key(parallel, "data", "code") == run_key(NESTED, "data", "code")
    # the run still logs what it used: its params are the identity config as given
    assert flatten(identity_config(parallel)).items() >= {k.replace("__", "."): v for k, v in changes.items()}.items()


def test_what_a_run_computes_still_counts_beside_its_worker_counts():
    assert config_hash(_with(NESTED, algorithm__n_jobs=2, algorithm__C=2.0)) != config_hash(NESTED)
    assert config_hash(_with(NESTED, algorithm__estimator__C=2.0)) != config_hash(NESTED)
    # n_jobs outside an estimator's config is not a worker count of ours
    assert config_hash({**NESTED, "dataset": {"n_jobs": 2}}) != config_hash({**NESTED, "dataset": {"n_jobs": 1}})
    # a benchmark's list of worker counts is what it measures (svmrepro.bench.ParallelSpeedup)
    assert config_hash(_with(NESTED, algorithm__n_jobs=[1, 2])) != config_hash(_with(NESTED, algorithm__n_jobs=[1, 4]))


def test_a_benchmark_on_every_core_is_a_configuration_of_each_machine(monkeypatch):
    """bench/parallel_hardware run on 2 and on 64 cores: two configurations, so one store and one runs
    table keep both machines' runs, and the second machine's sweep is not skipped as already FINISHED."""
    every_core, two = _with(NESTED, algorithm__n_jobs=[1, -1]), _with(NESTED, algorithm__n_jobs=[1, 2])
    hashes = {}
    for name in ("2 x AMD EPYC", "64 x AMD EPYC", "64 x Intel Xeon"):
        monkeypatch.setattr(identity, "machine", lambda name=name: name)
        hashes[name] = (config_hash(every_core), config_hash(two))
    assert len({every for every, _ in hashes.values()}) == 3
    assert len({fixed for _, fixed in hashes.values()}) == 1  # an explicit count is the same everywhere


def test_a_run_with_more_workers_after_a_finished_one_is_skipped(tiny_cfg):
    from svmrepro.runner import FINISHED, SKIPPED, run

    choices = {"experiment": "test/identity", "dataset": "gaussian_clouds", "algorithm": "cross_training"}
    common = ("algorithm=cross_training", "algorithm.n_subsets=2", "dataset.n_train=200")
    first = run(tiny_cfg(*common, "algorithm.n_jobs=1"), choices)
    again = run(tiny_cfg(*common, "algorithm.n_jobs=2"), choices)
    assert (first.status, again.status) == (FINISHED, SKIPPED) and again.run_id == first.run_id
    other = run(tiny_cfg(*common, "algorithm.n_jobs=2", "algorithm.estimator.C=2.0"), choices)
    assert other.status == FINISHED and other.run_key != first.run_key
    retimed = run(tiny_cfg(*common, "algorithm.n_jobs=2", "force=true"), choices)
    assert retimed.status == FINISHED and retimed.run_key == first.run_key and retimed.run_id != first.run_id


# ---------------------------------------------------------------------------------------------
# One identity per value (issue 34): algorithm.C=10 on the command line is the run the sweep made
# with 10.0, in its hash and its logged param.

SWEPT = ["experiment=mixture/fig1", "seed=0"]  # its svc entry: algorithm.C: 10.0, algorithm.gamma: 1.0


def test_a_number_given_as_an_int_is_the_sweep_s_float():
    by_hand = compose_run([*SWEPT, "algorithm=svc", "algorithm.C=10", "algorithm.gamma=1"])[0]
    swept = compose_run([*SWEPT, "algorithm=svc", "algorithm.C=10.0", "algorithm.gamma=1.0"])[0]
    assert by_hand.algorithm.C == 10 and isinstance(by_hand.algorithm.C, int)  # as Hydra reads it
    assert config_hash(by_hand) == config_hash(swept)
    assert run_key(by_hand, "data", "code") == run_key(swept, "data", "code")
    params = flatten(identity_config(by_hand))
    assert params == flatten(identity_config(swept)) and params["algorithm.C"] == 10.0
    # another value is another run
    assert config_hash(compose_run([*SWEPT, "algorithm=svc", "algorithm.C=10.5", "algorithm.gamma=1"])[0]) \
        != config_hash(swept)


def test_a_one_grid_sweep_narrowed_on_the_command_line_keeps_its_spelling():
    sweep = compose_run(["experiment=svr_decomposition/regime"])[0].sweep
    assert sweep_jobs(sweep.full, {"algorithm.gamma": "3,10", "label": "x"})[:2] == [
        ["label=x", "dataset.n_train=500", "algorithm.epsilon=0.02", "algorithm.gamma=3.0", "seed=0"],
        ["label=x", "dataset.n_train=500", "algorithm.epsilon=0.02", "algorithm.gamma=10.0", "seed=0"]]
    [job] = sweep_jobs(sweep.quick, {"algorithm.gamma": "30"})
    assert job[1:] == ["dataset.n_train=500", "algorithm.epsilon=0.05", "algorithm.gamma=30.0", "seed=0"]


@pytest.mark.parametrize("experiment", experiments())
def test_numbers_as_the_sweep_writes_them_leave_the_sweep_s_own_runs_as_they_were(experiment):
    """The hash of a job of the full sweep is what it was before numbers were spelled as the sweep
    writes them (all 1244 jobs of the committed outputs checked once, in the report of issue 34)."""
    sweep = compose_run([f"experiment={experiment}"])[0].sweep
    cfg = compose_run([f"experiment={experiment}", "mode=full", *sweep_jobs(sweep.full)[-1]])[0]
    assert identity_config(cfg) == old_identity_config(cfg)
