from omegaconf import OmegaConf

from svmrepro.identity import config_hash, flatten, identity_config, run_key

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


def test_run_key_depends_on_data_fingerprint_and_version():
    cfg = OmegaConf.create(BASE)
    keys = {run_key(cfg, "data-a", "1.0"), run_key(cfg, "data-b", "1.0"), run_key(cfg, "data-a", "1.1")}
    assert len(keys) == 3
    assert run_key(cfg, "data-a", "1.0") == run_key(OmegaConf.create(BASE), "data-a", "1.0")


def test_flatten_and_identity_config():
    cfg = OmegaConf.create({**BASE, "tracking": {"uri": None}})
    assert "tracking" not in identity_config(cfg)
    assert flatten(identity_config(cfg)) == {"seed": 0, "dataset.n_train": 100, "dataset.std": 2.0, "algorithm.C": 1.0}
