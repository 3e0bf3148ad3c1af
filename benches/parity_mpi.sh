#!/usr/bin/env bash
# Lazy parity inside an MPI job: apply (protect) throughput per rank of the
# preload's ring encode at MPI_Finalize, and rebuild throughput of the
# offline rebuild of one lost rank, for XOR and RS(k=2), 2 and 4 ranks,
# 64 and 256 MiB per rank, on tmpfs and on disk. Also prints the memory
# bound (memcpy and XOR of 64 MiB) measured in the same run. Both XOR / RS
# engines: the ring and MPI_Reduce_scatter_block (parity.engine).
#
# Usage: benches/parity_mpi.sh [DISK_DIR] [REPS]   (after scripts/build.sh)
# MPICH only; not part of the test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
source benches/machine.sh
source benches/parity_lib.sh
disk=${1:-/var/tmp/redio-parity-mpi-bench}
reps=${2:-3}
redio=$PWD/target/release/redio
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mpicc.mpich -O2 -o "$work/hello" benches/hello.c

echo "== memory bound (64 MiB, one core)"
cargo run --release -q -p redio-parity --example parity_kernel 2>/dev/null |
  sed -n '/size 64 MiB/,$p' | grep -E 'memcpy|xor/gfni|mad/gfni'

run() { # base scheme(config) rs_parity ranks mib engine
  local base=$1 scheme=$2 k=$3 n=$4 mib=$5 engine=$6 apply=() rebuild=() sent=""
  rm -rf "$base"; mkdir -p "$base"
  local dirs=()
  rank_files "$base" "$n" "$mib"
  for ((r = 0; r < n; r++)); do dirs+=("$base/rank$r"); done
  parity_config "$work/cfg.yaml" "$base" "$n" "$scheme" "$k" "$engine"
  for ((i = 0; i < reps; i++)); do
    rm -f "$base"/rank*/*.rdp
    # Per-rank MB/s from the preload's log line; the slowest rank counts.
    local out
    out=$("$redio" run --mpi mpich -n "$n" --config "$work/cfg.yaml" -- "$work/hello" 2>&1)
    apply+=("$(grep -o '([0-9]* MB/s)' <<<"$out" | tr -dc '0-9\n' | sort -n | head -1)")
    sent=$(grep -o 'sent [0-9]* received [0-9]* read [0-9]*' <<<"$out" | head -1)
    cp "$base/rank0/ckpt.dat" "$work/orig.dat"
    rm -rf "$base/rank0"; mkdir -p "$base/rank0"
    local t0 t1
    t0=$(now); "$redio" parity rebuild --offline "${dirs[@]}" >/dev/null; t1=$(now)
    rebuild+=("$(echo "$mib * 1.048576 / ($t1 - $t0)" | bc -l)")
    cmp -s "$work/orig.dat" "$base/rank0/ckpt.dat" || { echo "rebuild differs" >&2; exit 1; }
  done
  printf '%-7s %-14s %-5s %d ranks x %3d MiB: apply %5.0f MB/s per rank (slowest rank, median of %d); offline rebuild %5.0f MB/s; rank 0: %s\n' \
    "$label" "$engine" "$scheme$([ "$scheme" = rs ] && echo "($k)")" "$n" "$mib" \
    "$(printf '%s\n' "${apply[@]}" | median)" "$reps" "$(printf '%s\n' "${rebuild[@]}" | median)" "$sent"
  rm -rf "$base"
}

for place in /dev/shm/redio-parity-mpi-bench "$disk"; do
  label=$([ "${place#/dev/shm}" != "$place" ] && echo tmpfs || echo disk)
  echo "== $label: $place"
  for mib in 64 256; do
    for engine in ring reduce_scatter; do
      run "$place/data" xor 1 2 $mib $engine
      run "$place/data" xor 1 4 $mib $engine
      run "$place/data" rs 2 4 $mib $engine
    done
  done
done
print_machine mpich
