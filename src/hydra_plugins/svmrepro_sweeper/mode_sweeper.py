"""A Hydra sweeper whose default sweep is the experiment's ``sweep.<mode>``.

An experiment declares one sweep per mode. A sweep is a grid (``{key: "a,b", seed: "range(3)"}``,
Hydra's sweep syntax per key) or a list of grids, run as their union, for configurations that
are not a Cartesian product (Table 1: each data set with its own kernel width, for two
algorithms whose parameters have different names). The command line and ``hydra.sweeper.params``
apply to every grid, a later value of a key replacing an earlier one (Hydra's rule), so ``seed=0``
narrows an experiment's seed sweep to one seed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from hydra._internal.core_plugins.basic_sweeper import BasicSweeper
from hydra.core.override_parser.overrides_parser import OverridesParser
from hydra.core.override_parser.types import Override
from omegaconf import OmegaConf


def sweep_grids(sweep) -> list[dict]:
    """A sweep node (one grid or a list of grids, OmegaConf or plain) as a list of plain grids."""
    plain = OmegaConf.to_container(sweep, resolve=True) if OmegaConf.is_config(sweep) else sweep
    if not plain:
        return [{}]
    return [dict(grid) for grid in plain] if isinstance(plain, Sequence) else [dict(plain)]


def expand(grids: list[Mapping], overrides: list[Override], parser: OverridesParser) -> list[list[str]]:
    """Every job's overrides: each grid expanded with ``overrides`` applied on top, concatenated."""
    jobs: list[list[str]] = []
    for grid in grids:
        own = parser.parse_overrides([f"{key}={value}" for key, value in grid.items()])
        jobs += BasicSweeper.split_arguments([*own, *overrides], None)[0]
    return jobs


class ModeSweeper(BasicSweeper):
    def split_arguments(self, overrides: list[Override], max_batch_size: int | None) -> list[list[list[str]]]:
        mode = getattr(self.config.mode, "value", self.config.mode)  # a Mode enum once typed
        grids = sweep_grids((self.config.get("sweep") or {}).get(mode))
        parser = OverridesParser.create(config_loader=self.hydra_context.config_loader)
        jobs = expand(grids, overrides, parser)
        return list(BasicSweeper.split_overrides_to_chunks(jobs, max_batch_size))
