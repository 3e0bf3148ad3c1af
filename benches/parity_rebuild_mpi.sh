#!/usr/bin/env bash
# Collective `redio parity verify | rebuild` (an MPI job, one process per
# logical rank, MPICH): N rank directories of SIZE MiB each under BASE
# (tmpfs by default), one set. The first LOST ranks lose their whole
# directory; "rebuild" is one lost rank's data (SIZE MiB) divided by the
# wall time of the whole command (launch, every rank's CRC32 check, the
# rebuild over MPI, CRC check of the result, fsync, rename). "verify" is
# all ranks' data divided by the wall time of a healthy verify (CRC32s and
# the parity recomputed with the ring). Median MB/s of REPS runs; every
# rebuild is checked byte for byte against a copy.
# Usage: benches/parity_rebuild_mpi.sh [BASE] [REPS] [SIZE_MIB]  (after scripts/build.sh)
set -euo pipefail
cd "$(dirname "$0")/.."
source benches/machine.sh
source benches/parity_lib.sh
base=${1:-/dev/shm/redio-parity-rebuild-bench}
reps=${2:-3}
mib=${3:-64}
redio=${REDIO:-target/release/redio}


run() { # scheme ranks lost
  local scheme=$1 n=$2 lost=$3 ver=() reb=()
  rm -rf "$base" "$base.orig"; mkdir -p "$base"
  rank_files "$base" "$n" "$mib"
  "$redio" parity encode -n "$n" --root "$base/rank{rank}" --scheme "$scheme" \
    --set-size "$n" --groups 'node{rank}' >/dev/null
  cp -a "$base" "$base.orig"
  for ((i = 0; i < reps; i++)); do
    t0=$(now); "$redio" parity verify -n "$n" --root "$base/rank{rank}" >/dev/null; t1=$(now)
    ver+=("$(echo "$n * $mib * 1.048576 / ($t1 - $t0)" | bc -l)")
    for ((r = 0; r < lost; r++)); do rm -rf "$base/rank$r"; done
    t0=$(now); "$redio" parity rebuild -n "$n" --root "$base/rank{rank}" >/dev/null; t1=$(now)
    reb+=("$(echo "$mib * 1.048576 / ($t1 - $t0)" | bc -l)")
    diff -r "$base" "$base.orig" >/dev/null
  done
  printf '| %s | %d x %d MiB | %d | %.0f | %.0f |\n' "$scheme" "$n" "$mib" "$lost" \
    "$(printf '%s\n' "${ver[@]}" | median)" "$(printf '%s\n' "${reb[@]}" | median)"
  rm -rf "$base" "$base.orig"
}

echo "| scheme | ranks x size | lost | verify MB/s | rebuild MB/s (per lost rank) |"
echo "|---|---|---|---|---|"
run xor 2 1
run xor 4 1
run rs:2 3 1
run rs:2 4 1
run rs:2 4 2
print_machine mpich
