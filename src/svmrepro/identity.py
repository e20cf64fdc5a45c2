"""Run identity: what makes two runs the same computation.

``config_hash`` covers the resolved config except the keys that cannot change a result
(tracking, force, the sweep and report specs, Hydra's own node); key order is irrelevant. Keys
that add to what a run logs (``surface``, ``analysis``, ``measure``) count only when set, so a run
asked for one is not mistaken for an earlier run without it, while the hashes of runs that never
set it stay the same. Each setting's role is declared on its field of
:class:`svmrepro.settings.RunSettings` (:class:`~svmrepro.settings.Identity`); a key outside the
schema counts.

How many workers a run's sub-fits used is not in its identity: every ``n_jobs`` worker count (an
integer or null) inside the estimators' configs (``algorithm``, ``selection``; at any depth, as
meta-estimators nest their base estimator's: ``algorithm.estimator.n_jobs``) counts as 1, the value
the shipped configs hold, so their committed runs keep their hashes. The sub-fits' results come back
in input order, so a serial and a parallel fit give the same model (tests/test_engines.py); only the
wall time differs. The run logs the value it used (the ``algorithm.n_jobs`` param, the
``parallel.*`` tags of :mod:`svmrepro.placement`). To time a FINISHED run again with another
``n_jobs``, run it with ``force=true``: a new run of the same identity beside the first. A list of
worker counts (``ParallelSpeedup.n_jobs``, the fits a benchmark times and names its metrics after)
is what the run measures, and counts as it is, its "every core" (-1) as the machine it runs on
(:func:`svmrepro.environment.machine`: cores and processor): the same sweep run on 2 and on 64
cores makes runs of two configurations, which one store and one runs table hold side by side
(``bench/parallel_hardware``).
A number is taken in the type the experiment's own sweep writes that key's numbers in
(:func:`as_the_sweep_writes`): ``algorithm.C=10`` on the command line is the run the sweep made
with ``10.0``, one identity and one logged param. The shipped sweeps write each key's numbers in one
type, so the runs they made keep their hashes (each job of the committed outputs' sweeps checked).
``run_key`` adds the data set fingerprint and the digest of the code that decides a run's numbers
(:mod:`svmrepro.code_digest`; the package version, never bumped when an algorithm changes, is not
in it). A FINISHED run with the same ``run_key`` is not executed again: after a change to that
code, the same sweep runs again.
"""

from __future__ import annotations

import copy
import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache

from omegaconf import DictConfig, OmegaConf

from svmrepro.code_digest import code_digest
from svmrepro.environment import ALL_CORES, machine
from svmrepro.settings import Identity, estimator_settings, identity_roles
from svmrepro.sweep.jobs import number_types

_ROLES = identity_roles()
#: top-level keys that never change what a run computes, and Hydra's own node (not a setting)
NON_IDENTITY_KEYS = frozenset({"hydra", *(key for key, role in _ROLES.items() if role is Identity.never)})
#: top-level keys that belong to the identity only when they are not null (what they add is logged)
WHEN_SET_KEYS = frozenset(key for key, role in _ROLES.items() if role is Identity.when_set)
#: top-level keys holding estimators' constructor configs, whose worker counts are not identity
ESTIMATOR_KEYS = estimator_settings()
#: the setting holding the experiment's sweeps, whose spelling of each number is the identity's
SWEEP_KEY = "sweep"
#: scikit-learn's (and joblib's) name for how many workers a fit uses
WORKERS_KEY = "n_jobs"


def identity_config(cfg: DictConfig | Mapping) -> dict:
    """The resolved config as plain containers, without the non-identity keys, each number the config's
    own sweep gives a key in that sweep's type (:func:`as_the_sweep_writes`)."""
    plain = OmegaConf.to_container(cfg, resolve=True, enum_to_str=True) if isinstance(cfg, DictConfig) else dict(cfg)
    plain = as_the_sweep_writes(plain, _number_types(json.dumps(plain.get(SWEEP_KEY), sort_keys=True)))
    return {
        k: v for k, v in plain.items()
        if k not in NON_IDENTITY_KEYS and not (k in WHEN_SET_KEYS and v is None)
    }


@cache  # the sweep is the same for every run of an experiment
def _number_types(sweep: str) -> dict[str, type]:
    return number_types(json.loads(sweep))


def as_the_sweep_writes(plain: dict, types: Mapping[str, type]) -> dict:
    """``plain`` with the number at each dotted key of ``types`` in that type when it is the same value
    (``algorithm.C=10`` on the command line is the sweep's ``10.0``): one value, one identity, one
    param. The shipped sweeps write each key's numbers in one type, so their runs keep their hashes."""
    out = copy.deepcopy(plain)
    for dotted, wanted in types.items():
        *path, last = dotted.split(".")
        node = out
        for key in path:
            node = node.get(key) if isinstance(node, dict) else None
        value = node.get(last) if isinstance(node, dict) else None
        if (isinstance(value, (int, float)) and not isinstance(value, bool) and type(value) is not wanted
                and wanted(value) == value):
            node[last] = wanted(value)
    return out


def _one_worker(tree):
    """``tree`` with the value of every ``n_jobs`` worker count (an integer or null) replaced by 1,
    and every core (-1) in a list of worker counts by the machine's name."""
    if isinstance(tree, Mapping):
        return {key: _workers(value) if key == WORKERS_KEY else _one_worker(value) for key, value in tree.items()}
    if isinstance(tree, list):
        return [_one_worker(value) for value in tree]
    return tree


def _workers(value):
    if _is_worker_count(value):
        return 1
    if isinstance(value, list):
        return [machine() if count == ALL_CORES else count for count in value]
    return _one_worker(value)


def _is_worker_count(value) -> bool:
    return value is None or (isinstance(value, int) and not isinstance(value, bool))


def _digest(obj) -> str:
    text = json.dumps(obj, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()


def config_hash(cfg: DictConfig | Mapping) -> str:
    """The digest of :func:`identity_config` with the estimators' worker counts left out (as 1)."""
    return _hash_of(identity_config(cfg))


def _hash_of(plain: Mapping) -> str:
    """:func:`config_hash` of an :func:`identity_config` already taken."""
    return _digest({key: _one_worker(value) if key in ESTIMATOR_KEYS else value for key, value in plain.items()})


def run_key(cfg: DictConfig | Mapping, dataset_fingerprint: str, code: str | None = None) -> str:
    """``code``: the code digest, by default the running package's (:func:`~svmrepro.code_digest.code_digest`)."""
    return run_identity(cfg, dataset_fingerprint, code).run_key


@dataclass(frozen=True)
class RunIdentity:
    """A run's identity, taken once (:func:`run_identity`): the config that counts (:func:`identity_config`),
    its digest (``config_hash``, a tag) and the run key (with the data and the code)."""

    config: dict
    config_hash: str
    run_key: str


def run_identity(cfg: DictConfig | Mapping, dataset_fingerprint: str, code: str | None = None) -> RunIdentity:
    """The :class:`RunIdentity` of ``cfg`` on the data set whose source has ``dataset_fingerprint``."""
    plain = identity_config(cfg)
    digest = _hash_of(plain)
    key = _digest({"config": digest, "data": dataset_fingerprint, "code": code or code_digest()})
    return RunIdentity(plain, digest, key)


def flatten(tree: Mapping, prefix: str = "") -> dict[str, object]:
    """``{"a": {"b": 1}}`` -> ``{"a.b": 1}``; lists stay values."""
    flat: dict[str, object] = {}
    for key, value in tree.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping):
            flat.update(flatten(value, prefix=f"{name}."))
        else:
            flat[name] = value
    return flat
