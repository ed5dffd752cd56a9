#!/usr/bin/env bash
# A throw-away single-node SLURM on this machine, for tests (tests/workflow/test_slurm.py, .ci/run).
#
#   tests/workflow/local_slurm.sh start    # prints `export SLURM_CONF=...`: eval "$(... start)"
#   tests/workflow/local_slurm.sh status   # exit 0 when the node takes jobs
#   tests/workflow/local_slurm.sh stop     # cancels its jobs, stops its daemons, removes its directory
#
# Needs root and Debian's slurmctld, slurmd, slurm-client and munge
# (apt-get install slurmctld slurmd slurm-client munge). Everything it writes, the munge key, the
# slurm.conf, the daemons' state, pid and log files, lives in one directory,
# $LOCAL_SLURM_DIR (default ${TMPDIR:-/tmp}/ipcgrasp-local-slurm). The clients find the cluster
# through SLURM_CONF, except the `srun` that snakemake-executor-plugin-slurm-jobstep runs inside
# each job: it strips SLURM_* variables from that srun's environment, so srun reads the default
# path. Start therefore links /etc/slurm/slurm.conf to the temporary config (only when no
# /etc/slurm/slurm.conf exists: it refuses to shadow a real SLURM), and stop removes that link.
# One node (this host's name, on 127.0.0.1, all its CPUs), one default partition `compute` (the
# name profiles/slurm uses), no accounting (so `sacct` fails: use `squeue` for job states).
# Start is idempotent (a running cluster is reused); stop removes only what start created.
set -euo pipefail

DIR=${LOCAL_SLURM_DIR:-${TMPDIR:-/tmp}/ipcgrasp-local-slurm}
CTLD_PORT=${LOCAL_SLURM_CTLD_PORT:-6817}
SLURMD_PORT=${LOCAL_SLURM_SLURMD_PORT:-6818}
CONF=$DIR/slurm.conf
MARKER=$DIR/.local_slurm   # written by start: stop removes $DIR only when it holds this
ETC_CONF=/etc/slurm/slurm.conf
NODE=$(hostname -s)

say() { echo "local_slurm: $*" >&2; }
die() { say "error: $*"; exit 1; }

# pid of a daemon this script started, if it still runs as that program
running_pid() {  # pidfile program
  local pid
  [ -s "$1" ] || return 1
  pid=$(cat "$1")
  [ -r "/proc/$pid/comm" ] && [ "$(cat "/proc/$pid/comm")" = "$2" ] && echo "$pid"
}

node_ready() {  # the node is up and the controller answers
  local state
  state=$(SLURM_CONF=$CONF timeout 10 sinfo -h -n "$NODE" -o %T 2>/dev/null) || return 1
  case "$state" in idle*|mixed*|allocated*|completing*) return 0 ;; *) return 1 ;; esac
}

write_config() {
  local cpus mem_mb
  cpus=$(nproc)
  mem_mb=$(( $(awk '/^MemTotal:/ {print $2}' /proc/meminfo) / 1024 * 9 / 10 ))
  cat > "$CONF" <<EOF
# Written by tests/workflow/local_slurm.sh: a throw-away single-node SLURM for tests.
ClusterName=ipcgrasp-test
SlurmctldHost=$NODE(127.0.0.1)
SlurmctldPort=$CTLD_PORT
SlurmdPort=$SLURMD_PORT
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$DIR/munge/munge.socket
StateSaveLocation=$DIR/slurmctld
SlurmdSpoolDir=$DIR/slurmd
SlurmctldPidFile=$DIR/slurmctld.pid
SlurmdPidFile=$DIR/slurmd.pid
SlurmctldLogFile=$DIR/slurmctld.log
SlurmdLogFile=$DIR/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/backfill
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/none
MpiDefault=none
ReturnToService=2
# finished jobs stay visible to squeue for 10 min (the executor reads their final state there)
MinJobAge=600
KillWait=5
InactiveLimit=0
SlurmdTimeout=300
NodeName=$NODE NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$mem_mb State=UNKNOWN
PartitionName=compute Nodes=$NODE Default=YES MaxTime=INFINITE State=UP
EOF
}

start() {
  [ "$(id -u)" = 0 ] || die "must run as root (munged runs as the munge user, slurmctld/slurmd as root)"
  local cmd
  for cmd in munged slurmctld slurmd sbatch squeue sinfo scontrol; do
    command -v "$cmd" >/dev/null || die "$cmd not found: apt-get install slurmctld slurmd slurm-client munge"
  done
  id munge >/dev/null 2>&1 || die "no munge user: apt-get install munge"

  if [ -f "$MARKER" ] && running_pid "$DIR/slurmctld.pid" slurmctld >/dev/null \
      && running_pid "$DIR/slurmd.pid" slurmd >/dev/null && node_ready; then
    say "already running ($DIR)"
    echo "export SLURM_CONF=$CONF"
    return
  fi
  if [ -e "$DIR" ] && [ ! -f "$MARKER" ]; then
    die "$DIR exists and was not made by this script; set LOCAL_SLURM_DIR elsewhere"
  fi
  [ -e "$DIR" ] && { say "cleaning up a half-started cluster in $DIR"; stop; }
  # a link to this config left by a start whose directory was since deleted is ours to replace
  [ "$(readlink "$ETC_CONF" 2>/dev/null)" = "$CONF" ] && [ ! -e "$CONF" ] && rm -f "$ETC_CONF"
  if [ -e "$ETC_CONF" ] || [ -L "$ETC_CONF" ]; then
    die "$ETC_CONF exists (a SLURM configured on this machine?): use that cluster, or move it away"
  fi

  mkdir -p "$DIR" && chmod 755 "$DIR" && touch "$MARKER"
  mkdir -p "$DIR/munge" "$DIR/slurmctld" "$DIR/slurmd"
  chown munge: "$DIR/munge" && chmod 755 "$DIR/munge"
  dd if=/dev/urandom of="$DIR/munge/munge.key" bs=1024 count=1 status=none
  chown munge: "$DIR/munge/munge.key" && chmod 400 "$DIR/munge/munge.key"
  write_config
  ln -s "$CONF" "$ETC_CONF"

  runuser -u munge -- munged --key-file="$DIR/munge/munge.key" --socket="$DIR/munge/munge.socket" \
    --pid-file="$DIR/munge/munged.pid" --log-file="$DIR/munge/munged.log" --seed-file="$DIR/munge/munged.seed" \
    || die "munged did not start: $(tail -3 "$DIR/munge/munged.log" 2>/dev/null)"
  SLURM_CONF=$CONF slurmctld -f "$CONF" || die "slurmctld did not start: $(tail -5 "$DIR/slurmctld.log" 2>/dev/null)"
  SLURM_CONF=$CONF slurmd -f "$CONF" -N "$NODE" || die "slurmd did not start: $(tail -5 "$DIR/slurmd.log" 2>/dev/null)"

  local i
  for i in $(seq 60); do
    node_ready && break
    [ "$i" = 60 ] && die "the node is not up after 30 s: $(tail -5 "$DIR/slurmctld.log" "$DIR/slurmd.log" 2>/dev/null)"
    sleep 0.5
  done
  say "running: node $NODE ($(nproc) CPUs), partition compute, state in $DIR"
  echo "export SLURM_CONF=$CONF"
}

stop() {
  [ -e "$DIR" ] || { say "nothing to stop (no $DIR)"; return 0; }
  [ -f "$MARKER" ] || { say "left $DIR alone: not made by this script"; return 0; }
  local jobs pid name i
  if running_pid "$DIR/slurmctld.pid" slurmctld >/dev/null; then
    jobs=$(SLURM_CONF=$CONF timeout 10 squeue -h -t PENDING,RUNNING,CONFIGURING,COMPLETING -o %i 2>/dev/null || true)
    if [ -n "$jobs" ]; then
      say "cancelling jobs $(echo $jobs)"
      # shellcheck disable=SC2086
      SLURM_CONF=$CONF scancel $jobs 2>/dev/null || true
      for i in $(seq 20); do
        [ -z "$(SLURM_CONF=$CONF timeout 10 squeue -h -t RUNNING,COMPLETING -o %i 2>/dev/null)" ] && break
        sleep 0.5
      done
    fi
  fi
  for name in slurmd slurmctld munge/munged; do
    pid=$(running_pid "$DIR/$name.pid" "${name#munge/}") || continue
    kill "$pid"
    for i in $(seq 40); do [ -d "/proc/$pid" ] || break; sleep 0.25; done
    [ -d "/proc/$pid" ] && kill -9 "$pid"
  done
  [ "$(readlink "$ETC_CONF" 2>/dev/null)" = "$CONF" ] && rm -f "$ETC_CONF"
  rm -rf "$DIR"
  say "stopped, removed $DIR"
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  status) node_ready && say "running ($CONF)" || { say "not running"; exit 1; } ;;
  *) echo "usage: $0 start|stop|status" >&2; exit 2 ;;
esac
