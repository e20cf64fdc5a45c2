"""The shipped algorithm configs as test parameters: one whose estimator an optional extra provides
(``sklearnex``: scikit-learn-intelex, Linux x86-64 only) is skipped where that package is not installed."""

from importlib.util import find_spec

import pytest
import yaml

from svmrepro.build import OPTIONAL_MODULES
from svmrepro.locations import CONF_DIR

#: every shipped algorithm config, by name
ALGORITHMS = sorted(p.stem for p in (CONF_DIR / "algorithm").glob("*.yaml"))


def _targets(node) -> list[str]:
    """Every ``_target_`` in a config node, nested ones included."""
    if isinstance(node, dict):
        return [*([node["_target_"]] if "_target_" in node else []), *(t for v in node.values() for t in _targets(v))]
    return [t for v in node for t in _targets(v)] if isinstance(node, list) else []


def targets(algorithm: str) -> list[str]:
    """The ``_target_`` of the config, of the estimators nested in it, and of the configs its defaults list
    brings in (``cascade_svc_onedal`` takes oneDAL's SVC from ``svc_onedal@estimator``)."""
    config = yaml.safe_load((CONF_DIR / "algorithm" / f"{algorithm}.yaml").read_text()) or {}
    included = [entry.split("@")[0].removeprefix("/algorithm/") for entry in config.pop("defaults", [])
                if isinstance(entry, str) and entry != "_self_"]
    return _targets(config) + [t for name in included for t in targets(name)]


def missing_module(algorithm: str) -> str | None:
    """The optional package whose estimator the config names (at any depth), if it is not installed."""
    packages = {target.partition(".")[0] for target in targets(algorithm)}
    return next((p for p in sorted(packages) if p in OPTIONAL_MODULES and find_spec(p) is None), None)


def needs_extra(algorithm: str) -> list:
    """The marks of a test of ``algorithm``: a skip when the package of its estimator is not installed."""
    missing = missing_module(algorithm)
    return [pytest.mark.skip(reason=f"{missing} (an optional extra) is not installed")] if missing else []
