#!/usr/bin/env bash
# Stand-in for a cluster's submit command: run the job script ($1) in the background on this
# machine and print its id (the PID). Without a status command, snakemake waits for the job's
# finished/failed marker files.
set -euo pipefail
nohup bash "$1" > /dev/null 2>&1 &
echo $!
