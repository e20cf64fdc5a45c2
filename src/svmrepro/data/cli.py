"""``svmrepro-data``: list the configured data sets and fill the cache.

Data sets are the YAML files in ``conf/dataset/``: each is instantiated (constructors only
check parameters) and asked about itself by duck typing, so adding a data set never edits this
file. A source that has ``remote_files()`` (returning :class:`~svmrepro.data.files.RemoteFile`)
is listed with its URLs and whether every file is on disk; a data set from configuration (a
:class:`~svmrepro.data.split.SplitSource`) with its function, OpenML page or file; one that only has
non-empty ``source_checksums()`` reads files we cannot locate; anything else is generated.

``list`` reads configs only: a module of a config folder (a ``loader:``, a ``_target_``) is read from its
source and never imported (:mod:`svmrepro.data.user_code`); ``fetch`` loads the data, as a run does.
"""

from __future__ import annotations

from svmrepro.stop_line import imported, one_line_stop  # first: a Ctrl-C during the slow imports below is one line

one_line_stop("svmrepro-data", __name__)

import argparse
import sys
from pathlib import Path

from hydra.errors import InstantiationException
from hydra.utils import instantiate
from omegaconf import OmegaConf

from svmrepro.compose import use_config_dirs
from svmrepro.data.base import DatasetSource
from svmrepro.data.function import source_class
from svmrepro.data.split import SplitSource
from svmrepro.data.user_code import configs_only
from svmrepro.errors import SvmReproError
from svmrepro.locations import config_dirs


def dataset_configs() -> dict[str, Path]:
    """The ``dataset`` options by name: the package's, and those of the user's config folders."""
    return {path.stem: path for root in config_dirs() for path in sorted((root / "dataset").glob("*.yaml"))}


def build(path: Path) -> DatasetSource | None:
    """Instantiate one dataset config; an error of ours surfaces as itself, not Hydra's wrapper. None when its
    class is a config folder's own and configs are only read (:func:`source_class`)."""
    node = OmegaConf.load(path)
    if source_class(node.get("_target_")) is None:  # a plain function is refused before it is called
        return None
    try:
        return instantiate(node)
    except InstantiationException as exc:
        if isinstance(exc.__cause__, SvmReproError):
            raise exc.__cause__ from None
        raise


def describe(source: DatasetSource) -> tuple[str, str, str]:
    """(source, size, offline) columns of ``list`` for one data set."""
    size = " ".join(f"{key}={value}" for key, value in source.params().items() if key.startswith("n_"))
    remote_files = getattr(source, "remote_files", None)
    if callable(remote_files):
        files = list(remote_files())
        urls = sorted({f.url for f in files})
        origin = urls[0] + (f" (+{len(urls) - 1} more)" if len(urls) > 1 else "")
        if not all(f.available_offline() for f in files):
            return origin, size, "no"
        return origin, size, "yes (cache)" if all(f.cached_path().exists() for f in files) else "yes (shared/data)"
    if isinstance(source, SplitSource):  # a data set from configuration: a function, an OpenML id, a file
        return source.origin(), size, {True: "yes", False: "no", None: "unknown"}[source.available_offline()]
    if source.source_checksums():
        return "files", size, "unknown"
    return "generated", size, "yes"


def file_locations(source: DatasetSource) -> list[str]:
    """Where the files of a fetched data set are (generated data have none)."""
    if isinstance(source, SplitSource):
        return [where] if (where := source.stored_in()) else []
    remote_files = getattr(source, "remote_files", None)
    if callable(remote_files):
        return [str(f.cached_path() if f.cached_path().exists() else f.shared_path()) for f in remote_files()]
    return [f"{name} (under the data home or shared/data)" for name in source.source_checksums()]


def unbuilt(path: Path) -> tuple[str, str, str]:
    """(source, size, offline) of a data set whose class is a config folder's own, from its config alone."""
    node = OmegaConf.to_container(OmegaConf.load(path))
    size = " ".join(f"{key}={value}" for key, value in node.items() if key.startswith("n_"))
    return f"{node['_target_']} (config folder: built by a run)", size, "unknown"


def cmd_list() -> int:
    rows = [("name", "source", "size", "offline")]
    for name, path in dataset_configs().items():
        try:
            with configs_only():
                source = build(path)
                rows.append((name, *(describe(source) if source is not None else unbuilt(path))))
        except Exception as exc:  # noqa: BLE001  (one broken config must not hide the others)
            first_line = str(exc).partition("\n")[0]
            rows.append((name, f"error: {path}: {first_line}", "", ""))
    widths = [max(len(row[i]) for row in rows) for i in range(3)]
    for row in rows:
        print("  ".join(cell.ljust(width) for cell, width in zip(row, widths)) + "  " + row[3])
    return 0


def cmd_fetch(name: str) -> int:
    configs = dataset_configs()
    if name not in configs:
        print(f"unknown data set {name!r}; valid names: {', '.join(configs)}", file=sys.stderr)
        return 2
    source = build(configs[name])
    data = source.load(seed=0)
    print(f"{name}: {data.n_train} train / {data.n_test} test rows (seed 0)")
    locations = file_locations(source)
    for location in locations:
        print(f"  {location}")
    if not locations:
        print("  generated on demand: nothing stored")
    return 0


def main(argv: list[str] | None = None) -> int:
    imported()  # Ctrl-C a KeyboardInterrupt again: a fetch under way ends as its code says
    parser = argparse.ArgumentParser(prog="svmrepro-data", description=__doc__.splitlines()[0])
    # svmrepro-reproduce's option: a folder of the user's own configs, whose dataset/ adds to the package's
    user = argparse.ArgumentParser(add_help=False)
    user.add_argument("--config-dir", action="append", default=[], type=Path,
                      help="a folder of configs of your own (dataset/<name>.yaml) added to the package's (repeatable)")
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("list", parents=[user], help="every configured data set, its source, size and availability")
    fetch = commands.add_parser("fetch", parents=[user], help="load a data set once (seed 0) so its files are cached")
    fetch.add_argument("name", help="a conf/dataset option, e.g. gaussian_clouds")
    args = parser.parse_args(argv)
    try:
        use_config_dirs(args.config_dir)
    except SvmReproError as exc:
        print(f"svmrepro-data: error: {exc}", file=sys.stderr)
        return 2
    try:
        return cmd_list() if args.command == "list" else cmd_fetch(args.name)
    except SvmReproError as exc:
        print(f"svmrepro-data: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
