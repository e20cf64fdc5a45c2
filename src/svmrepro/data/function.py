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

``loader:`` names a function that returns data, and nothing else: a ``make_*``, ``fetch_*``, ``load_*`` or
``read_*`` function of ``sklearn.datasets`` or of svmrepro's data modules (``svmrepro.data``), or a function of
a module of the user's own in their config folders (``--config-dir``): ``loader: my_loaders.two_spirals``
reads ``<config folder>/my_loaders.py``. Any other (``os.system``, ``builtins.exec``, ``subprocess.run``, a
module of the environment that shares a config folder module's name) is refused in one line before anything
is imported or called (:func:`loader_module`). Constructing the source checks the function and its arguments
against its signature, so a typo fails in one line before any data is drawn: a run imports the module for
that; a listing or a check (:func:`~svmrepro.data.user_code.configs_only`) reads a config folder's module
from its source instead, and none of its code runs. The fingerprint holds the dotted path and the arguments
(and the split sizes); the loaded arrays' own fingerprint holds their bytes.
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from omegaconf import DictConfig, OmegaConf

from svmrepro.data.base import DatasetSource, check_param, check_rows, rng_for
from svmrepro.data.files import data_home
from svmrepro.data.split import SplitSource
from svmrepro.data.user_code import declared, folder_module, reading_configs
from svmrepro.errors import ConfigError, error_line, first_line
from svmrepro.locations import user_config_dirs

#: the (a) form, shown wherever a plain function is given where a data set goes
FORM = ("_target_: svmrepro.data.function.FromFunction, loader: <module.function>, "
        "arguments: {<its keyword arguments>}, n_train: ..., n_test: ...")


#: the modules (and their submodules) whose data functions a loader may name, and those functions' names
DATA_MODULES = ("sklearn.datasets", "svmrepro.data")
DATA_FUNCTIONS = ("make_", "fetch_", "load_", "read_")


def allowed() -> str:
    """What ``loader:`` may name, in words."""
    folders = ", ".join(map(str, user_config_dirs())) or "none given"
    names = ", ".join(f"{prefix}*" for prefix in DATA_FUNCTIONS[:-1]) + f" or {DATA_FUNCTIONS[-1]}*"
    return (f"a {names} function of {' or '.join(DATA_MODULES)}, or a function of a module in a config folder "
            f"(--config-dir: {folders})")


def loader_module(dotted: str, owner: str = "dataset.loader") -> Path | None:
    """Whether ``loader: <dotted>`` may be called, decided from its name and the files alone (nothing is imported
    or run): None for a data function of :data:`DATA_MODULES`, the module's file for a config folder's own; one
    line naming ``owner``, the loader and what is allowed for anything else."""
    module, _, name = str(dotted).rpartition(".")
    if any(module == base or module.startswith(f"{base}.") for base in DATA_MODULES):
        if name.startswith(DATA_FUNCTIONS):
            return None
        raise ConfigError(f"{owner}={dotted!r} is not allowed: {name!r} is not a data function; expected {allowed()}")
    origin = folder_module(module) if module else None
    if origin is not None:
        return origin
    if module and _exists(module):
        raise ConfigError(f"{owner}={dotted!r} is not allowed: {module} is neither a data module nor a config "
                          f"folder's; expected {allowed()}")
    why = f"No module named {module!r}" if module else "no module"
    raise ConfigError(f"{owner}={dotted!r} cannot be imported ({why}): expected {allowed()}")


def _exists(module: str) -> bool:
    """Whether the environment (not a config folder) has ``module``'s top-level package, looked up, not imported."""
    top = module.partition(".")[0]
    try:
        return importlib.util.find_spec(top) is not None and folder_module(top) is None
    except (ImportError, ValueError):
        return True  # imported already, without a spec: the environment's


def locate(dotted: str, owner: str = "dataset.loader", expected: str | None = None) -> Callable:
    """The function or class a dotted path names, imported (its module's top-level code runs) from the Python path
    or, in a run, the user's config folders; one line naming ``owner``, the path, what went wrong and
    ``expected`` (default: a module.function) otherwise."""
    if not reading_configs():  # a listing or a check imports no config folder's module
        for folder in user_config_dirs():  # appended: a module of the environment keeps its name
            if str(folder) not in sys.path:
                sys.path.append(str(folder))
        importlib.invalidate_caches()  # a module written after the first import of this process
    module, _, name = str(dotted).rpartition(".")
    folders = ", ".join(map(str, user_config_dirs())) or "none given"
    expected = "expected " + (expected or f"module.function on the Python path or in a config folder "
                                          f"(--config-dir: {folders})")
    try:
        found = getattr(importlib.import_module(module), name, None) if module else None
    except Exception as exc:  # noqa: BLE001  (the module's own code may raise anything while it is imported)
        why = first_line(exc) if isinstance(exc, ImportError) else error_line(exc)
        raise ConfigError(f"{owner}={dotted!r} cannot be imported ({why}): {expected}") from None
    if found is None:
        raise ConfigError(f"{owner}={dotted!r} cannot be imported ({module or 'no module'} has no {name!r}): {expected}")
    if not callable(found):
        raise ConfigError(f"{owner}={dotted!r} is invalid: expected a function, got {type(found).__name__}")
    return found


def source_class(target: str) -> type[DatasetSource] | None:
    """The class ``dataset._target_`` names, found as :func:`locate` finds a loader (a class of one's
    own in a config folder too); a function (``sklearn.datasets.make_moons``) or anything else but a
    data set is refused in one line showing the form to use, before it is called. None while configs are only
    read and the class is a config folder's own: it exists (:func:`~svmrepro.data.user_code.declared`), and
    the run imports it."""
    module = str(target).rpartition(".")[0]
    origin = folder_module(module) if module and reading_configs() else None
    if origin is not None:
        _declared(origin, target, "dataset._target_", f"a svmrepro DatasetSource class in {origin}")
        return None
    found = locate(target, "dataset._target_")
    if not (isinstance(found, type) and issubclass(found, DatasetSource)):
        raise ConfigError(f"dataset._target_={target} is not a svmrepro DatasetSource: a function returning (X, y) "
                          f"is a data set as {FORM}")
    return found


def _declared(origin: Path, dotted: str, owner: str, expected: str) -> set[str] | None:
    """:func:`~svmrepro.data.user_code.declared` of a config folder's module, its problems in one line."""
    module, _, name = dotted.rpartition(".")
    try:
        found, arguments = declared(origin, name)
    except (SyntaxError, ValueError, OSError) as exc:
        raise ConfigError(f"{owner}={dotted!r} cannot be imported ({error_line(exc)}): {origin}") from None
    if not found:
        raise ConfigError(f"{owner}={dotted!r} cannot be imported ({module} has no {name!r}): expected {expected}")
    return arguments


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
        accepted = self._accepted()
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
        return "data_home" in (self._accepted() or ())

    def _accepted(self) -> set[str] | None:
        """The loader's keyword arguments (None: any), once :func:`loader_module` allows it: a config folder's
        module read from its source while configs are only read, imported otherwise."""
        origin = loader_module(self.loader)
        if origin is not None and reading_configs():
            return _declared(origin, self.loader, "dataset.loader", allowed())
        return _parameters(locate(self.loader, expected=allowed()))

    def table(self, seed: int) -> tuple[np.ndarray, np.ndarray]:
        loader_module(self.loader)  # checked again before the call, whoever built the source
        function = locate(self.loader, expected=allowed())
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
