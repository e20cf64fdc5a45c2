"""The shipped algorithm configs as test parameters: one whose estimator an optional extra provides
(``sklearnex``: scikit-learn-intelex, Linux x86-64 only) is skipped where that package is not installed."""

from importlib.util import find_spec

import pytest
import yaml

from svmrepro.build import OPTIONAL_MODULES
from svmrepro.locations import CONF_DIR

#: every shipped algorithm config, by name
ALGORITHMS = sorted(p.stem for p in (CONF_DIR / "algorithm").glob("*.yaml"))


def missing_module(algorithm: str) -> str | None:
    """The optional package whose estimator the config's ``_target_`` names, or that of an algorithm
    config it builds on (a defaults entry: ``svc_onedal@estimator``, ``/algorithm/svc@estimator``), if it is
    not installed."""
    node = yaml.safe_load((CONF_DIR / "algorithm" / f"{algorithm}.yaml").read_text())
    package = node.get("_target_", "").partition(".")[0]
    if package in OPTIONAL_MODULES and find_spec(package) is None:
        return package
    named = (entry.partition("@")[0].removeprefix("/algorithm/") for entry in node.get("defaults", [])
             if isinstance(entry, str))
    return next(filter(None, (missing_module(name) for name in named if name != "_self_")), None)


def needs_extra(algorithm: str) -> list:
    """The marks of a test of ``algorithm``: a skip when the package of its estimator is not installed."""
    missing = missing_module(algorithm)
    return [pytest.mark.skip(reason=f"{missing} (an optional extra) is not installed")] if missing else []
