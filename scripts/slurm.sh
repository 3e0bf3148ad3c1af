#!/usr/bin/env bash
# A real Slurm on this one machine, for redio's tests and for trying redio
# under a batch system: munged, slurmctld and one slurmd per emulated node
# (n1, n2; Debian's Slurm is built with MULTIPLE_SLURMD). Facts behind the
# settings: ../shared/design/slurm-notes.md and docs/slurm.md.
#
#   scripts/slurm.sh install  # Debian's slurm-wlm and munge, if missing (scripts/setup.sh)
#   scripts/slurm.sh start    # install if missing, configure, start what is not running
#   scripts/slurm.sh stop     # stop the daemons this script started (by their pid files)
#   scripts/slurm.sh status   # sinfo
#   scripts/slurm.sh lose N   # lose node N: SIGKILL every process on it, stop its slurmd,
#                             # empty its node-local directory (`start` brings a replacement)
#
# Everything lives under $REDIO_SLURM_DIR (default /run/redio-slurm): the
# configuration (clients need SLURM_CONF=$REDIO_SLURM_DIR/slurm.conf), state,
# logs, pid files, and each node's own node-local directory
# (nodes/<name>/local). Ports 17817 (slurmctld) and 17001.. (slurmd) keep
# clear of a real Slurm's defaults; /etc/slurm is not touched. munged is
# Debian's, with the key its package made; it is started only if not running.
set -euo pipefail

dir=${REDIO_SLURM_DIR:-/run/redio-slurm}
nodes=(n1 n2)
host=$(hostname -s)
conf=$dir/slurm.conf

install_slurm() {
  local missing=() package status sudo=""
  for package in slurm-wlm munge; do
    status=$(dpkg-query -W -f='${Status}' "$package" 2>/dev/null || true)
    [[ "$status" == "install ok installed" ]] || missing+=("$package")
  done
  if ((${#missing[@]})); then
    echo "slurm: installing ${missing[*]}"
    [[ $(id -u) -eq 0 ]] || sudo="sudo"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends \
      -o DPkg::Lock::Timeout=300 "${missing[@]}" >/dev/null
  fi
}

write_config() {
  mkdir -p "$dir/state" "$dir/log" "$dir/run"
  local port=17001 node lines=""
  for node in "${nodes[@]}"; do
    mkdir -p "$dir/spool/$node" "$dir/nodes/$node/local"
    # More CPUs than the machine has, so that N*r processes fit on a node
    # (config_overrides keeps the node from going INVAL for it).
    lines+="NodeName=$node NodeHostname=$host NodeAddr=127.0.0.1 Port=$port CPUs=16 RealMemory=1000 State=UNKNOWN"$'\n'
    port=$((port + 1))
  done
  cat >"$conf.new" <<EOF
# Written by redio's scripts/slurm.sh; rewritten at every start.
ClusterName=redio
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=17817
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool/%n
SlurmctldPidFile=$dir/run/slurmctld.pid
SlurmdPidFile=$dir/run/slurmd-%n.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd-%n.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
MpiDefault=none
SwitchType=switch/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SlurmdParameters=config_overrides
ReturnToService=2
KillWait=5
InactiveLimit=0
MinJobAge=600
SlurmctldTimeout=30
SlurmdTimeout=30
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
$lines
PartitionName=debug Nodes=$(IFS=,; echo "${nodes[*]}") Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES
EOF
  mv "$conf.new" "$conf"
}

running() { [[ -f "$1" ]] && kill -0 "$(cat "$1")" 2>/dev/null; }

start() {
  install_slurm
  write_config
  if ! pgrep -x munged >/dev/null; then
    mkdir -p /run/munge && chown munge:munge /run/munge
    runuser -u munge -- /usr/sbin/munged
  fi
  if ! running "$dir/run/slurmctld.pid"; then
    # -i: ignore state a previous node list left behind.
    slurmctld -f "$conf" -i
  fi
  local node
  for node in "${nodes[@]}"; do
    running "$dir/run/slurmd-$node.pid" || slurmd -f "$conf" -N "$node"
  done
  # Ready when every node answers and is idle (at most 60 s).
  local tries=0
  until [[ $(SLURM_CONF=$conf sinfo -h -N -o '%N %t' 2>/dev/null | grep -c ' idle') -eq ${#nodes[@]} ]]; do
    tries=$((tries + 1))
    if ((tries > 120)); then
      echo "slurm: nodes not idle after 60 s:" >&2
      SLURM_CONF=$conf sinfo -N >&2 || true
      exit 1
    fi
    # A node that was down (a lost node's test) comes back on its own with
    # ReturnToService=2 once its slurmd answers; resume it if it was drained.
    if ((tries % 20 == 0)); then
      SLURM_CONF=$conf scontrol update nodename="$(IFS=,; echo "${nodes[*]}")" state=resume 2>/dev/null || true
    fi
    sleep 0.5
  done
  echo "export SLURM_CONF=$conf"
}

stop() {
  local pidfile
  for pidfile in "$dir"/run/slurmd-*.pid "$dir/run/slurmctld.pid"; do
    [[ -f "$pidfile" ]] || continue
    running "$pidfile" && kill "$(cat "$pidfile")"
    rm -f "$pidfile"
  done
}

# Every process of node $1 at once: the task trees Slurm started there
# (each task's environment names the node; MPI launchers' proxies and
# daemons are such tasks, the application processes their descendants)
# and their slurmstepd; then the node's slurmd, and its node-local files.
lose() {
  local node=$1 roots pids=() pid
  roots=$(grep -l -a -z -x "SLURMD_NODENAME=$node" /proc/[0-9]*/environ 2>/dev/null |
    cut -d/ -f3 || true)
  # Descendants, by walking the parent links of every process.
  local table
  table=$(ps -e -o pid=,ppid=,comm=)
  local frontier=($roots)
  while ((${#frontier[@]})); do
    pids+=("${frontier[@]}")
    local next=()
    for pid in "${frontier[@]}"; do
      next+=($(awk -v p="$pid" '$2 == p {print $1}' <<<"$table"))
    done
    frontier=("${next[@]}")
  done
  # The slurmstepd above each task root.
  for pid in $roots; do
    local parent
    parent=$(awk -v p="$pid" '$1 == p {print $2}' <<<"$table")
    [[ -n "$parent" ]] && awk -v p="$parent" '$1 == p && $3 == "slurmstepd" {found=1} END {exit !found}' <<<"$table" &&
      pids+=("$parent")
  done
  if ((${#pids[@]})); then
    kill -9 "${pids[@]}" 2>/dev/null || true
  fi
  if running "$dir/run/slurmd-$node.pid"; then
    kill -9 "$(cat "$dir/run/slurmd-$node.pid")"
  fi
  rm -f "$dir/run/slurmd-$node.pid"
  rm -rf "${dir:?}/nodes/$node/local"
  mkdir -p "$dir/nodes/$node/local"
  echo "slurm: lost node $node: killed ${#pids[@]} processes (${pids[*]}), its slurmd, its node-local files"
}

case ${1:-start} in
  lose) lose "${2:?usage: $0 lose NODE}" ;;
  install) install_slurm ;;
  start) start ;;
  stop) stop ;;
  status) SLURM_CONF=$conf sinfo -N ;;
  *) echo "usage: $0 install|start|stop|status|lose NODE" >&2; exit 2 ;;
esac
