"""Run identity: what makes two runs the same computation.

``config_hash`` covers the resolved config except the keys that cannot change a result
(tracking, force, the sweep and report specs, Hydra's own node); key order is irrelevant. Keys
that add to what a run logs (``surface``, ``analysis``, ``measure``) count only when set, so a run
asked for one is not mistaken for an earlier run without it, while the hashes of runs that never
set it stay the same. Each setting's role is declared on its field of
:class:`svmrepro.settings.RunSettings` (:class:`~svmrepro.settings.Identity`); a key outside the
schema counts.
``run_key`` adds the data set fingerprint and the digest of the code that decides a run's numbers
(:mod:`svmrepro.code_digest`; the package version, never bumped when an algorithm changes, is not
in it). A FINISHED run with the same ``run_key`` is not executed again: after a change to that
code, the same sweep runs again.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping

from omegaconf import DictConfig, OmegaConf

from svmrepro.code_digest import code_digest
from svmrepro.settings import Identity, identity_roles

_ROLES = identity_roles()
#: top-level keys that never change what a run computes, and Hydra's own node (not a setting)
NON_IDENTITY_KEYS = frozenset({"hydra", *(key for key, role in _ROLES.items() if role is Identity.never)})
#: top-level keys that belong to the identity only when they are not null (what they add is logged)
WHEN_SET_KEYS = frozenset(key for key, role in _ROLES.items() if role is Identity.when_set)


def identity_config(cfg: DictConfig | Mapping) -> dict:
    """The resolved config as plain containers, without the non-identity keys."""
    plain = OmegaConf.to_container(cfg, resolve=True, enum_to_str=True) if isinstance(cfg, DictConfig) else dict(cfg)
    return {
        k: v for k, v in plain.items()
        if k not in NON_IDENTITY_KEYS and not (k in WHEN_SET_KEYS and v is None)
    }


def _digest(obj) -> str:
    text = json.dumps(obj, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()


def config_hash(cfg: DictConfig | Mapping) -> str:
    return _digest(identity_config(cfg))


def run_key(cfg: DictConfig | Mapping, dataset_fingerprint: str, code: str | None = None) -> str:
    """``code``: the code digest, by default the running package's (:func:`~svmrepro.code_digest.code_digest`)."""
    return _digest({"config": config_hash(cfg), "data": dataset_fingerprint, "code": code or code_digest()})


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
