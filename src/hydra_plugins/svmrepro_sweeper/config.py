"""The svmrepro sweeper's config, option ``svmrepro`` of Hydra's ``hydra/sweeper`` group.

Hydra imports every module of a ``hydra_plugins`` package when it looks for plugins, so this
registration is in place before any config is composed, as Hydra's own sweeper plugins do it.
"""

from dataclasses import dataclass
from typing import Optional

from hydra.core.config_store import ConfigStore

from svmrepro.sweep import SWEEPER_TARGET


@dataclass
class ModeSweeperConf:
    """``hydra.sweeper`` of the svmrepro sweeper; its keys mean what BasicSweeper's do."""

    _target_: str = SWEEPER_TARGET
    #: jobs handed to the launcher at once; None: all
    max_batch_size: Optional[int] = None
    #: more overrides, applied to every grid as the command line's are
    params: Optional[dict[str, str]] = None


ConfigStore.instance().store(group="hydra/sweeper", name="svmrepro", node=ModeSweeperConf, provider="svmrepro")
