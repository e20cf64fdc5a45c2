"""Shell completion that knows a group's option may sit in a subfolder: ``experiment=<paper>/<id>``.

Hydra's own completion lists a group's options one folder deep, so it offers nothing after
``experiment=`` and suggests ``experiment/cross_training=`` instead, which is a different group that
the defaults list does not hold. :class:`.completion.GroupCompletion` offers, for every group of the
defaults list (``dataset``, ``experiment``, ``hydra/launcher``...), every config under its folder,
named from there (``experiment=cross_training/fig3``), and Hydra's own answer for everything else
(config keys and their values, file names, ``+group`` and ``~group``).

Hydra allows one completion plugin per shell and its ``bash`` is built in, so this one is installed
under a name of its own, and ``svmrepro-run`` hands Hydra's documented ``bash`` (and ``zsh``) to it
(:func:`.completion.as_ours`); either line installs it::

    eval "$(svmrepro-run -sc install=bash)"         # bash, or zsh after bashcompinit
    eval "$(svmrepro-run -sc install=svmrepro)"

A ``--config-dir DIR`` typed on the line adds that folder's experiments and data sets to the answers.
"""
