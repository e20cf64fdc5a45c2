"""A data set drawn or read by any function that returns ``(X, y)`` or a scikit-learn ``Bunch``.

scikit-learn's generators and fetchers, or a function of one's own, configured with no Python::

    _target_: svmrepro.data.function.FromFunction
    loader: sklearn.datasets.make_moons     # a dotted path: module.function
    arguments: {n_samples: 3000, noise: 0.3}   # its keyword arguments
    n_train: 500
    n_test: 1000

svmrepro draws the splits and handles the seed (:class:`~svmrepro.data.split.SplitSource`). A
function that takes ``random_state`` and is not given one in ``arguments`` gets one derived from the
run's seed, so each seed draws a new sample of a generator; given one, every seed splits the same
rows. A function that takes ``data_home`` and is not given one gets ``$SVMREPRO_DATA/sklearn``, so a
fetcher's downloads land in svmrepro's data home. A ``Bunch`` gives its ``data`` and ``target``.

A module of one's own is found in the user's config folders (``--config-dir``) as well as on the
Python path: ``loader: my_loaders.two_spirals`` reads ``<config folder>/my_loaders.py``. Constructing
the source imports the module and checks the function and its arguments against its signature, so
a typo fails in one line before any data is drawn. The fingerprint holds the dotted path and the
arguments (and the split sizes); the loaded arrays' own fingerprint holds their bytes.
"""

from __future__ import annotations

import importlib
import inspect
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import numpy as np
from omegaconf import DictConfig, OmegaConf

from svmrepro.data.base import DatasetSource, check_param, check_rows, rng_for
from svmrepro.data.files import data_home
from svmrepro.data.split import SplitSource
from svmrepro.errors import ConfigError, error_line, first_line
from svmrepro.locations import user_config_dirs

#: the (a) form, shown wherever a plain function is given where a data set goes
FORM = ("_target_: svmrepro.data.function.FromFunction, loader: <module.function>, "
        "arguments: {<its keyword arguments>}, n_train: ..., n_test: ...")


def locate(dotted: str, owner: str = "dataset.loader") -> Callable:
    """The function a dotted path names, imported from the Python path or the user's config folders;
    one line naming ``owner``, the path and what went wrong otherwise."""
    for folder in user_config_dirs():  # appended: a module of the environment keeps its name
        if str(folder) not in sys.path:
            sys.path.append(str(folder))
    importlib.invalidate_caches()  # a module written after the first import of this process
    module, _, name = str(dotted).rpartition(".")
    folders = ", ".join(map(str, user_config_dirs())) or "none given"
    expected = f"expected module.function on the Python path or in a config folder (--config-dir: {folders})"
    try:
        found = getattr(importlib.import_module(module), name, None) if module else None
    except Exception as exc:  # the module's own code may raise anything while it is imported
        why = first_line(exc) if isinstance(exc, ImportError) else error_line(exc)
        raise ConfigError(f"{owner}={dotted!r} cannot be imported ({why}): {expected}") from None
    if found is None:
        raise ConfigError(f"{owner}={dotted!r} cannot be imported ({module or 'no module'} has no {name!r}): {expected}")
    if not callable(found):
        raise ConfigError(f"{owner}={dotted!r} is invalid: expected a function, got {type(found).__name__}")
    return found


def source_class(target: str) -> type[DatasetSource]:
    """The class ``dataset._target_`` names, found as :func:`locate` finds a loader (a class of one's
    own in a config folder too); a function (``sklearn.datasets.make_moons``) or anything else but a
    data set is refused in one line showing the form to use, before it is called."""
    found = locate(target, "dataset._target_")
    if not (isinstance(found, type) and issubclass(found, DatasetSource)):
        raise ConfigError(f"dataset._target_={target} is not a svmrepro DatasetSource: a function returning (X, y) "
                          f"is a data set as {FORM}")
    return found


@dataclass(frozen=True, kw_only=True)
class FromFunction(SplitSource):
    loader: str
    arguments: Mapping = field(default_factory=dict)

    name = "function"

    def __post_init__(self):
        super().__post_init__()
        check_param("dataset", "arguments", self.arguments, isinstance(self.arguments, Mapping),
                    "a mapping of the function's keyword arguments")
        object.__setattr__(self, "arguments", _plain(self.arguments))  # a DictConfig from Hydra: hashed as a dict
        function = locate(self.loader)
        accepted = _parameters(function)
        for key in sorted(set(self.arguments) - (accepted or set(self.arguments))):
            check_param("dataset", f"arguments.{key}", self.arguments[key], False,
                        f"a keyword argument of {self.loader}: {', '.join(sorted(accepted))}")
        n_samples = self.arguments.get("n_samples")
        if isinstance(n_samples, int) and not isinstance(n_samples, bool):
            check_rows(self.sizes(), n_samples, f"{self.loader} draws arguments.n_samples={n_samples} rows")

    def origin(self) -> str:
        return self.loader

    def available_offline(self) -> bool | None:
        """A generator draws its rows here; a fetcher (it takes ``data_home``) may download them."""
        return None if self._fetches() else True

    def stored_in(self) -> str | None:
        return str(data_home() / "sklearn") if self._fetches() else None

    def _fetches(self) -> bool:
        return "data_home" in (_parameters(locate(self.loader)) or ())

    def table(self, seed: int) -> tuple[np.ndarray, np.ndarray]:
        function = locate(self.loader)
        accepted = _parameters(function) or set()
        given = dict(self.arguments)
        if "random_state" in accepted and "random_state" not in given:
            given["random_state"] = int(rng_for(seed, f"function/{self.loader}").integers(2**31 - 1))
        if "data_home" in accepted and "data_home" not in given:
            given["data_home"] = str(data_home() / "sklearn")
        result = function(**given)
        if isinstance(result, tuple) and len(result) >= 2:
            return result[0], result[1]
        if hasattr(result, "data") and hasattr(result, "target"):
            return result.data, result.target
        raise ConfigError(f"dataset.loader={self.loader!r} returned {type(result).__name__}: "
                          "expected (X, y) or a Bunch with data and target")


def _plain(arguments: Mapping) -> dict:
    """``arguments`` as plain Python values (Hydra hands a DictConfig over)."""
    return OmegaConf.to_container(arguments, resolve=True) if isinstance(arguments, DictConfig) else dict(arguments)


def _parameters(function: Callable) -> set[str] | None:
    """The keyword arguments ``function`` takes; None when it takes any (``**kwargs``) or has no signature."""
    try:
        signature = inspect.signature(function)
    except (TypeError, ValueError):
        return None
    kinds = {p.kind for p in signature.parameters.values()}
    if inspect.Parameter.VAR_KEYWORD in kinds:
        return None
    return {name for name, p in signature.parameters.items()
            if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}
