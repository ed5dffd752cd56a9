"""`python -m ipcgrasp.study.configfiles [snakemake arguments]`: read every `--configfile` /
`--configfiles` of a snakemake command line through `documents.load_yaml` before snakemake
reads them (`./run.sh study` runs it first).

Snakemake's own reader keeps a repeated key's last value, and it merges the files key by key
before the workflow starts: a YAML alias bomb of nested mappings keeps it busy for hours before
workflow/rules/common.smk, which checks the files again, runs. Exit status 2 with the file, the
key and the fix on stderr; 0 when every file reads.
"""

from __future__ import annotations

import argparse
import sys

from ipcgrasp.documents import DocumentError, load_yaml


def config_files(argv: list[str]) -> list[str]:
    """The config files a snakemake command line names (`--configfile`, `--configfiles`)."""
    parser = argparse.ArgumentParser(add_help=False, allow_abbrev=False)
    parser.add_argument("--configfile", "--configfiles", nargs="+", action="extend", default=[])
    return parser.parse_known_args(argv)[0].configfile


def main(argv: list[str] | None = None) -> int:
    try:
        for path in config_files(sys.argv[1:] if argv is None else argv):
            load_yaml(path)
    except (DocumentError, OSError) as exc:
        print(f"config file {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
