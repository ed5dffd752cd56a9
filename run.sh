#!/usr/bin/env bash
# Set up the environment (.venv/, reused when present) and run one job:
#   ./run.sh install only the environment: .venv/ with ipcgrasp and its test extras, the
#                    simulator's kernels compiled (`ipcgrasp compile`)
#   ./run.sh study   the default study on the bundled data (snakemake --cores 2 --rerun-incomplete:
#                    after Ctrl-C the same command reruns the interrupted jobs and carries on)
#   ./run.sh test    the test suite
# Extra arguments go to snakemake / pytest.
set -euo pipefail
cd "$(dirname "$0")"
job=${1:-}
shift || true
case "$job" in
  install|study|test) ;;
  *) echo "usage: ./run.sh install|study|test [args...]" >&2; exit 2 ;;  # before installing anything
esac
PYTHON=${PYTHON:-python3.11}
command -v "$PYTHON" >/dev/null || PYTHON=python3

stamp=.venv/.installed
if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ]; then
  [ -x .venv/bin/python ] || "$PYTHON" -m venv .venv
  .venv/bin/python -m pip install --quiet --upgrade pip
  # --no-compile: Python compiles the modules it imports on first use, pip would compile every one (18 s)
  .venv/bin/python -m pip install --quiet --no-compile -e '.[test]'
  # numba compiles the simulator's kernels now, once, instead of in the first trial
  .venv/bin/ipcgrasp compile || echo "run.sh: ipcgrasp compile failed; the kernels compile on first use" >&2
  touch "$stamp"
fi

case "$job" in
  install) echo "run.sh: the environment is ready in .venv/ (.venv/bin/ipcgrasp --help)" ;;
  study) .venv/bin/python -m ipcgrasp.study.configfiles "$@"  # its config files, checked before snakemake reads them
         exec .venv/bin/snakemake --cores 2 --rerun-incomplete "$@" ;;
  test)  exec .venv/bin/python -m pytest "$@" ;;
esac
