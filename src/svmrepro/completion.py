"""The name of svmrepro's shell completion and how ``svmrepro-run`` hands Hydra's shells to it.

Hydra allows one completion plugin per shell and its ``bash`` is built in, so svmrepro's plugin
(:mod:`hydra_plugins.svmrepro_completion`, which imports this) is installed under a name of its own,
:data:`SHELL`, and ``svmrepro-run`` rewrites Hydra's documented ``-sc install=bash`` (and ``zsh``) to it
(:func:`as_ours`) before Hydra reads its command line.
"""

from __future__ import annotations

SHELL = "svmrepro"
#: the shells of Hydra's documented ``-sc install=bash`` (zsh: the same, after bashcompinit): Hydra's built-in
#: plugin for them completes no experiment, and a second plugin may not claim them, so svmrepro-run hands
#: their install, uninstall and query to svmrepro's (:func:`as_ours`)
HYDRA_SHELLS = ("bash", "zsh")
SHELL_COMPLETION_FLAGS = ("-sc", "--shell-completion")


def as_ours(arguments: list[str]) -> list[str]:
    """``arguments`` (a command line) with a shell-completion command for a shell of Hydra's own
    (``-sc install=bash``: a flag, then the command as an override) given to this plugin (``-sc install=svmrepro``)."""
    def ours(previous: str, argument: str) -> str:
        command, equals, shell = argument.partition("=")
        return f"{command}={SHELL}" if previous in SHELL_COMPLETION_FLAGS and shell in HYDRA_SHELLS else argument

    return [ours(previous, argument) for previous, argument in zip(["", *arguments], arguments)]
