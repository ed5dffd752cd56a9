"""`ipcgrasp` command line."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ipcgrasp import __version__


def _cmd_data_where(args) -> int:
    from ipcgrasp.data.location import resolve_data_dir

    print(resolve_data_dir(args.data))
    return 0


def _cmd_data_fetch(args) -> int:
    from rich.progress import DownloadColumn, Progress, TransferSpeedColumn

    from ipcgrasp.data.fetch import ARCHIVE_URL, fetch_reach

    with Progress(*Progress.get_default_columns(), DownloadColumn(), TransferSpeedColumn()) as bar:
        task = bar.add_task("data.zip", total=None)
        dest = fetch_reach(Path(args.dest), progress=lambda done, total: bar.update(task, completed=done, total=total))
    print(f"unpacked the REACH layout from {ARCHIVE_URL} into {dest}")
    return 0


def _cmd_objects(args) -> int:
    from ipcgrasp.data.registry import load_registry

    registry = load_registry(args.registry)
    print(f"{'object':<16} {'mass [g]':>8}  split")
    for info in registry.values():
        print(f"{info.name:<16} {info.mass * 1000:>8.1f}  {info.split}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    from ipcgrasp.paths import RESOURCES_REACH

    parser = argparse.ArgumentParser(prog="ipcgrasp", description=__doc__)
    parser.add_argument("--version", action="version", version=f"ipcgrasp {__version__}")
    commands = parser.add_subparsers(dest="command", required=True)

    data = commands.add_parser("data", help="locate or fetch the REACH data").add_subparsers(dest="action", required=True)
    where = data.add_parser("where", help="print the data directory ipcgrasp would use")
    where.add_argument("--data", help="explicit data directory (else $IPCGRASP_DATA, ../shared/data/reach, resources/reach)")
    where.set_defaults(func=_cmd_data_where)
    fetch = data.add_parser("fetch", help="download the IPC-GraspSim data archive and unpack it")
    fetch.add_argument("--dest", default=str(RESOURCES_REACH), help="target directory (default: %(default)s)")
    fetch.set_defaults(func=_cmd_data_fetch)

    objects = commands.add_parser("objects", help="list the object registry")
    objects.add_argument("--registry", help="path of an objects.yaml (default: config/objects.yaml)")
    objects.set_defaults(func=_cmd_objects)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except (FileNotFoundError, ValueError, RuntimeError) as exc:
        print(f"ipcgrasp: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
