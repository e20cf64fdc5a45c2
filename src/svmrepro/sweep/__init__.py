"""Sweeps: which jobs an experiment means (:mod:`.jobs`), the folder each sweep has to itself (:mod:`.folder`), their progress as they end (:mod:`.progress`) and
their failures (:mod:`.failures`).

The Hydra sweeper plugin (``hydra/sweeper: svmrepro``, :mod:`hydra_plugins.svmrepro_sweeper`) is built on
these; nothing here imports the plugin.
"""

#: the Hydra sweeper of ``hydra/sweeper: svmrepro`` (the plugin's class, named, never imported here); here, not in
#: :mod:`.jobs`, so that Hydra's scan of the plugins, at every start and every Tab of shell completion, imports no more
SWEEPER_TARGET = "hydra_plugins.svmrepro_sweeper.mode_sweeper.ModeSweeper"
