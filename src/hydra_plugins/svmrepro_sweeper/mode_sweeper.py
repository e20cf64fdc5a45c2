"""A Hydra sweeper whose default sweep is the experiment's ``sweep.<mode>``.

An experiment declares one sweep per mode (``sweep: {quick: {...}, full: {...}}``); this sweeper
expands the one for ``mode``, then ``hydra.sweeper.params``, then the command line, a later
value of a key replacing an earlier one (Hydra's rule), so ``seed=0`` on the command line
narrows an experiment's seed sweep to one seed.
"""

from __future__ import annotations

from hydra._internal.core_plugins.basic_sweeper import BasicSweeper


class ModeSweeper(BasicSweeper):
    def _parse_config(self) -> list[str]:
        mode = getattr(self.config.mode, "value", self.config.mode)  # a Mode enum once typed
        by_mode = (self.config.get("sweep") or {}).get(mode) or {}
        own = [f"{key}={value}" for key, value in by_mode.items()]
        return own + super()._parse_config()
