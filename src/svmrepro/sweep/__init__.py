"""Sweeps: which jobs an experiment means (:mod:`.jobs`), their progress as they end (:mod:`.progress`) and
their failures (:mod:`.failures`).

The Hydra sweeper plugin (``hydra/sweeper: svmrepro``, :mod:`hydra_plugins.svmrepro_sweeper`) is built on
these; nothing here imports the plugin.
"""
