"""The completion plugin: Hydra's query, with a group's options searched through its subfolders."""

from __future__ import annotations

import os
import sys
from collections.abc import Collection, Mapping

from hydra.core.object_type import ObjectType
from hydra.errors import ConfigCompositionException
from hydra.plugins.completion_plugin import CompletionPlugin
from hydra.types import RunMode
from omegaconf import DictConfig

from svmrepro.completion import SHELL
from svmrepro.locations import config_dir_option

FUNCTION = "_svmrepro_complete"
CONFIG_DIR_FLAGS = ("-cd", "--config-dir")

# Bash splits a word at '=' (COMP_WORDBREAKS) and replaces only what follows it, while a suggestion is a
# whole override: each is cut to the part right of the last break, so the shell's settings stay as they
# are. Under zsh's bashcompinit the word is not split, the cut is empty and the suggestion is used whole.
INSTALL = """\
{function}() {{
    local line=${{COMP_LINE:0:COMP_POINT}}
    local word=${{line##*[[:space:]]}}
    local tail=${{COMP_WORDS[COMP_CWORD]}}
    [[ $tail == [=:] ]] && tail=""
    local head=${{word%"$tail"}}
    local choices choice
    choices=$(COMP_LINE=$COMP_LINE COMP_POINT=$COMP_POINT "${{COMP_WORDS[0]}}" -sc query={shell} 2>/dev/null)
    COMPREPLY=()
    for choice in $(compgen -W "$choices" -- "$word"); do
        COMPREPLY+=("${{choice#"$head"}}")
    done
}}
complete -o nospace -o default -F {function} {executable}
"""


class GroupCompletion(CompletionPlugin):
    """Hydra's completion, where a group of the defaults list offers every config under its folder.

    ``experiment=cr`` gives ``experiment=cross_training/fig1 ...``; ``algorithm=svc,svc_l`` (a sweep)
    gives ``algorithm=svc,svc_linear``; ``exp`` gives ``experiment=``. A subfolder that is a group on its
    own is not searched: one of the defaults list (``hydra/launcher`` under ``hydra``), or one that an
    option of the parent chooses (``hydra/sweeper/sampler``, chosen by ``hydra/sweeper=optuna``).

    ``_query`` and ``_get_matches`` are the base class's protected helpers (Hydra's own completion of
    keys, values, file names, ``+group`` and ``~group``), tested on the hydra-core versions allowed.
    """

    @staticmethod
    def provides() -> str:
        return SHELL

    @staticmethod
    def help(command: str) -> str:
        assert command in ("install", "uninstall")
        note = ("bash, or zsh after bashcompinit (-sc install=bash is the same); experiment=<paper>/<id>, every "
                "group's options, and those of a --config-dir on the line\n    ")
        return (note if command == "install" else "") + f'eval "$({{}} -sc {command}={SHELL})"'

    def install(self) -> None:
        print(INSTALL.format(function=FUNCTION, shell=SHELL, executable=_executable()))

    def uninstall(self) -> None:
        print(f"complete -r {_executable()} 2>/dev/null; unset -f {FUNCTION}")

    def query(self, config_name: str | None) -> None:
        line = os.environ["COMP_LINE"]
        point = int(os.environ.get("COMP_POINT") or len(line))
        print(" ".join(self.complete_line(config_name, self.strip_python_or_app_name(line[:point]))))

    def complete_line(self, config_name: str | None, line: str) -> list[str]:
        """The suggestions for the last word of ``line`` (the command line without the program)."""
        words = line.split()
        word = "" if not words or line[-1].isspace() else words.pop()
        if words and words[-1] in CONFIG_DIR_FLAGS:  # a folder: none offered, so the shell offers its file names
            return []
        # the query runs as `svmrepro-run -sc query=...`, so a --config-dir typed on the line is not in Hydra's
        # search path: it is added as hydra.searchpath, in front, where it is no word being completed
        searchpath = _searchpath(words)
        line = " ".join([*searchpath, line])
        if word[:1] in ("+", "~"):  # adding or deleting a group: Hydra's own answer
            return self._query(config_name, line)
        overrides = [*searchpath, *(w for w in words if not w.startswith("-") and ("=" in w or w.startswith("~")))]
        run_mode = RunMode.MULTIRUN if {"-m", "--multirun"} & set(words) else RunMode.RUN
        config = self._load(config_name, overrides, run_mode)
        groups = set(config.hydra.runtime.choices) if config is not None else set()

        key, equals, value = word.partition("=")
        if equals and key in groups:
            done, comma, typed = value.rpartition(",")
            options = self._options(key, groups, config_name, overrides)
            return sorted(f"{key}={done}{comma}{option}" for option in options if option.startswith(typed))
        if equals:  # a key's value or a file name
            return self._query(config_name, line)
        keys = self._get_matches(config, word) if config is not None else []
        return sorted(set(keys) | {f"{group}=" for group in groups if group.startswith(word)})

    def _load(self, config_name: str | None, overrides: list[str], run_mode: RunMode) -> DictConfig | None:
        # the words typed so far may not compose (a half-typed value): then the primary config alone
        for attempt in (overrides, []):
            try:
                return self.config_loader.load_configuration(config_name, attempt, run_mode)
            except ConfigCompositionException:
                continue
        return None

    def _options(self, group: str, groups: Collection[str], config_name: str | None,
                 overrides: list[str]) -> list[str]:
        """Every config under ``group``'s folder, named from there (``cross_training/fig3``)."""
        def listing(path: str, kind: ObjectType) -> list[str]:
            return self.config_loader.get_group_options(path, kind, config_name, overrides)

        options = listing(group, ObjectType.CONFIG)
        folders = [f"{group}/{folder}" for folder in listing(group, ObjectType.GROUP)]
        nested = self._chosen_by(group, options) if folders else set()
        for folder in folders:
            if folder not in groups and folder not in nested:
                name = folder.rsplit("/", 1)[1]
                options += [f"{name}/{option}" for option in self._options(folder, groups, config_name, overrides)]
        return options

    def _chosen_by(self, group: str, options: list[str]) -> set[str]:
        """The groups the options of ``group`` choose in their own defaults lists: a folder of the group
        that holds another group's options (``hydra/sweeper/sampler``, chosen by ``hydra/sweeper/optuna``)."""
        chosen = set()
        for option in options:
            path = f"{group}/{option}"
            source = next((source for source in self.config_loader.get_sources() if source.is_config(path)), None)
            defaults = source.load_config(path).config.get("defaults") if source is not None else None
            for entry in defaults or []:
                for key in entry.keys() if isinstance(entry, Mapping) else []:  # {group: option}; a name is a config
                    name = str(key).split()[-1].split("@")[0]  # "override /dataset", "optional db@pkg"
                    if not name.startswith("/"):  # relative to the option's own group
                        chosen.add(f"{group}/{name}")
        return chosen


def _searchpath(words: list[str]) -> list[str]:
    """``hydra.searchpath=[file://DIR]`` for the ``--config-dir DIR`` of ``words``, if there is one."""
    folder = config_dir_option(words)
    return [f"hydra.searchpath=[file://{folder.resolve()}]"] if folder is not None and folder.is_dir() else []


def _executable() -> str:
    return os.path.basename(sys.argv[0])
