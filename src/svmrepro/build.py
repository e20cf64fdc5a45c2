"""Turn a composed config into a data source and an estimator, validating every value first.

Everything here is cheap: constructors only store parameters, so a bad value fails with one line
naming the config key, the value and what is allowed before any data is read or model fitted.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from hydra.errors import InstantiationException
from hydra.utils import instantiate
from omegaconf import DictConfig, OmegaConf
from sklearn.base import BaseEstimator, clone
from sklearn.model_selection import ParameterGrid
from sklearn.utils._param_validation import InvalidParameterError

from svmrepro import settings
from svmrepro.data.base import DatasetSource
from svmrepro.data.function import source_class
from svmrepro.errors import ConfigError, SvmReproError, first_line


@dataclass
class RunParts:
    #: None while configs are only read (a listing, a check) and the data set's class is a config folder's own
    #: (:func:`~svmrepro.data.function.source_class`): only a run imports it
    source: DatasetSource | None
    #: the configured estimator, wrapped in the model search when ``selection`` is set
    estimator: Any


def _instantiate(node: DictConfig, key: str, **kwargs):
    try:  # plain lists and dicts: scikit-learn's validation rejects OmegaConf containers
        return instantiate(node, _convert_="all", **kwargs)
    except InstantiationException as exc:
        cause = exc.__cause__
        if isinstance(cause, SvmReproError):
            raise cause from None
        if isinstance(cause, ImportError):
            raise ConfigError(_import_line(node, key, cause)) from None
        raise ConfigError(f"{key}: {cause or exc}".replace("\n", " ")) from None


#: the top-level modules an optional extra of svmrepro provides: (its distribution, where it installs, the extra)
OPTIONAL_MODULES = {"sklearnex": ("scikit-learn-intelex", "Linux x86-64", "onedal")}


def _import_line(node: DictConfig, key: str, error: ImportError) -> str:
    """``<key>._target_: cannot import <target>: <why>``, naming the ``_target_`` that failed, a nested one's too
    (Hydra's message: ``Error loading '<target>': ...``, with the import's own error as its cause); a module of
    an optional extra that is not installed (or hidden on this platform) says how to install it instead."""
    quoted = re.search(r"'([^']+)'", str(error))
    target = quoted.group(1) if quoted else "?"
    where = next((path for path, value in _targets(OmegaConf.to_container(node), key) if value == target),
                 f"{key}._target_")
    cause = error.__cause__
    optional = OPTIONAL_MODULES.get((getattr(cause, "name", None) or "").partition(".")[0])
    if isinstance(cause, ModuleNotFoundError) and optional:
        distribution, platforms, extra = optional
        return f'{where}: {target} needs {distribution} ({platforms}): pip install "svmrepro[{extra}]"'
    return f"{where}: cannot import {target}: {first_line(cause or error)}"


def _targets(tree, key: str):
    """(``<key>.<path>._target_``, value) of every ``_target_`` in a config tree."""
    if isinstance(tree, dict):
        if "_target_" in tree:
            yield f"{key}._target_", tree["_target_"]
        for name, value in tree.items():
            yield from _targets(value, f"{key}.{name}")
    elif isinstance(tree, list):
        for index, value in enumerate(tree):
            yield from _targets(value, f"{key}[{index}]")


def check_estimator_params(estimator, key: str) -> None:
    """Validate against the estimator's ``_parameter_constraints`` (scikit-learn's own table), a
    boolean where only numbers are allowed included, then every estimator nested in its parameters
    (``estimator=SVC(...)`` of meta-estimators)."""
    params = estimator.get_params(deep=False)
    if hasattr(estimator, "_validate_params"):
        try:
            estimator._validate_params()
        except InvalidParameterError as exc:
            name = str(exc).split("'")[1] if "'" in str(exc) else "?"
            raise ConfigError(f"{key}.{name}={params.get(name, '?')!r} is invalid: {exc}") from None
    table = getattr(estimator, "_parameter_constraints", {})
    for name, value in params.items():
        allowed = table.get(name, ["no_validation"])
        # scikit-learn's Interval takes a bool for 0 or 1: a YAML ``true`` where a number goes is a mistake
        if isinstance(value, bool) and not any(c in ("boolean", "verbose", "no_validation", bool, object) for c in allowed):
            raise ConfigError(f"{key}.{name}={str(value).lower()} is invalid: expected a number, not a boolean")
        if isinstance(value, BaseEstimator):
            check_estimator_params(value, f"{key}.{name}")


def _check_grid(estimator, param_grid) -> None:
    for point in ParameterGrid(dict(param_grid)):
        try:
            candidate = clone(estimator).set_params(**point)
        except ValueError as exc:
            raise ConfigError(f"selection.param_grid: {exc}".replace("\n", " ")) from None
        check_estimator_params(candidate, "selection.param_grid")


def build_source(node: DictConfig) -> DatasetSource | None:
    """The data set, its values checked against its fields' types before its constructor compares them; None
    when its class is a config folder's own and configs are only read (:attr:`RunParts.source`)."""
    cls = source_class(node.get("_target_"))
    if cls is None:
        return None
    cls.check_types(OmegaConf.to_container(node, resolve=True))
    source = _instantiate(node, "dataset")
    if not isinstance(source, DatasetSource):
        raise ConfigError(f"dataset: {type(source).__name__} is not a svmrepro DatasetSource")
    return source


def build(cfg: DictConfig) -> RunParts:
    settings.check(cfg)
    source = build_source(cfg.dataset)
    estimator = _instantiate(cfg.algorithm, "algorithm")
    params = estimator.get_params(deep=False)
    if "random_state" in params and params["random_state"] is None:
        estimator.set_params(random_state=cfg.seed)
    check_estimator_params(estimator, "algorithm")
    if cfg.get("selection"):
        _check_grid(estimator, cfg.selection.param_grid)
        estimator = _instantiate(cfg.selection, "selection")(estimator)
    return RunParts(source=source, estimator=estimator)
