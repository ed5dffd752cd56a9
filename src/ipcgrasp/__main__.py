"""`python -m ipcgrasp`: the `ipcgrasp` command line."""

import sys

from ipcgrasp.cli import main

sys.exit(main())
