#!/usr/bin/env bash
# Offline encode and rebuild throughput of `redio parity … --offline`:
# N rank directories of SIZE MiB each under BASE (tmpfs by default), one
# process. Prints MB/s of protected data per operation, median of REPS runs.
# Usage: benches/parity_offline.sh [BASE] [REPS]   (after scripts/build.sh)
set -euo pipefail
cd "$(dirname "$0")/.."
source benches/machine.sh
source benches/parity_lib.sh
base=${1:-/dev/shm/redio-parity-bench}
reps=${2:-5}
redio=${REDIO:-target/release/redio}


run() { # scheme ranks size_mib
  local scheme=$1 n=$2 mib=$3 dirs=() enc=() reb=()
  rm -rf "$base"; mkdir -p "$base"
  rank_files "$base" "$n" "$mib" node
  for ((r = 0; r < n; r++)); do dirs+=("$base/node$r"); done
  for ((i = 0; i < reps; i++)); do
    rm -f "$base"/node*/*.rdp
    t0=$(now); "$redio" parity encode --offline --scheme "$scheme" --set-size "$n" "${dirs[@]}" >/dev/null; t1=$(now)
    enc+=("$(echo "$n * $mib * 1.048576 / ($t1 - $t0)" | bc -l)")
    cp "$base/node0/ckpt.dat" "$base/orig.dat"
    rm -rf "$base/node0"
    t0=$(now); "$redio" parity rebuild --offline "${dirs[@]}" >/dev/null; t1=$(now)
    reb+=("$(echo "$mib * 1.048576 / ($t1 - $t0)" | bc -l)")
    cmp -s "$base/orig.dat" "$base/node0/ckpt.dat" || { echo "rebuild differs" >&2; exit 1; }
  done
  printf '%-8s %d ranks x %4d MiB: encode %6.0f MB/s (all ranks), rebuild %6.0f MB/s (lost rank)\n' \
    "$scheme" "$n" "$mib" "$(printf '%s\n' "${enc[@]}" | median)" "$(printf '%s\n' "${reb[@]}" | median)"
}

for mib in 64 256; do
  run xor 2 $mib
  run xor 4 $mib
  run rs:2 4 $mib
done
rm -rf "$base"
print_machine mpich
