#!/usr/bin/env bash
# The paper's comparisons on the emulated cluster: for each kind (nfs,
# sshfs) and topology (one server, a server per replica), start the
# cluster, run `redio bench` through every replica's own mount, and stop it.
# Results: target/bench-emulated/<kind>-<topology>/results.{csv,json,md},
# bench-{read,write}.png, and the calibration line at the top of run.log.
#
# Usage (as root, after scripts/setup.sh and scripts/build.sh):
#   benches/emulated_sweep.sh [KINDS] [TOPOLOGIES] [extra redio bench arguments...]
#   e.g. benches/emulated_sweep.sh "nfs sshfs" "shared separate" --reps 5 --blocks 64KiB,1MiB,16MiB
# Environment: RATE (link cap, default 400mbit), DEGREES (default 1,2,3;
# the cluster gets as many client mounts as the highest), TOTAL (bytes per
# run, default 64MiB; a larger block moves one block), ROOT, and REDIO (the
# redio executable, default target/release/redio: point it at a copy to
# keep rebuilding while a long sweep runs).
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
kinds=${1:-"nfs sshfs"}
topologies=${2:-"shared separate"}
shift $(( $# > 2 ? 2 : $# ))
rate=${RATE:-400mbit}
root=${ROOT:-/tmp/redio-sweep}
degrees=${DEGREES:-1,2,3}
total=${TOTAL:-64MiB}
redio=${REDIO:-$repo/target/release/redio}
replicas=$(tr ',' '\n' <<<"$degrees" | sort -n | tail -n1)
cluster="$repo/cluster/redio-cluster"
export REDIO_PYTHON=${REDIO_PYTHON:-$repo/.venv/bin/python}
trap '"$cluster" down --root "$root" >/dev/null 2>&1 || true' EXIT
for kind in $kinds; do
  for topology in $topologies; do
    out="$repo/target/bench-emulated/$kind-$topology"
    mkdir -p "$out"
    "$cluster" up --root "$root" --kind "$kind" --topology "$topology" --replicas "$replicas" --rate "$rate"
    "$redio" bench --dir /redio-bench --replica-dir "$root/replica{replica}" \
      --kind "$kind" --topology "$topology" \
      --read simple,read-distribute,chunked-chained,distributed-chunked,auto \
      --write simple,distributed,distributed-separate,auto \
      --degrees "$degrees" --total "$total" --out "$out" --plot "$@" 2>"$out/progress.log" | tee "$out/run.log"
    "$cluster" down --root "$root"
  done
done
