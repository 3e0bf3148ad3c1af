#!/usr/bin/env bash
# benches/io_loop.c's reads with a page-aligned buffer (its default) against
# plain malloc (REDIO_BENCH_ALLOC=malloc), interleaved run by run: one
# process under `redio run -r 1` with the None read protocol (MPICH),
# reading TOTAL MiB from BASE (tmpfs by default; the page cache holds the
# file) in blocks of each size. Prints MB/s medians and aligned/malloc.
#
# Usage: benches/io_loop_alloc.sh [BASE] [REPS] [TOTAL_MIB] [BLOCKS...]
#        (after scripts/build.sh; BLOCKS in bytes, default 64 KiB 1 MiB 16 MiB)
set -euo pipefail
cd "$(dirname "$0")/.."
source benches/machine.sh
source benches/parity_lib.sh
base=${1:-/dev/shm/redio-io-loop-alloc}
reps=${2:-7}
mib=${3:-256}
shift $(($# < 3 ? $# : 3))
blocks=("$@")
[ ${#blocks[@]} -gt 0 ] || blocks=(65536 1048576 16777216)
redio=${REDIO:-$PWD/target/release/redio}
work=$(mktemp -d)
trap 'rm -rf "$work" "$base"' EXIT
mpicc.mpich -O2 -o "$work/io_loop" benches/io_loop.c
mkdir -p "$base"
cat >"$work/cfg.yaml" <<YAML
version: 1
shared:
  paths: ["$base"]
io:
  read: none
  write: none
YAML
total=$((mib << 20))
loop() { # alloc mode block -> seconds
  REDIO_BENCH_ALLOC=$1 "$redio" run --mpi mpich -n 1 -r 1 --config "$work/cfg.yaml" -- \
    "$work/io_loop" "$2" "$base" "$3" "$total" 2>/dev/null | awk '/^seconds/ {print $2}'
}
loop aligned write 1048576 >/dev/null
echo "| block | aligned MB/s | malloc MB/s | aligned/malloc |"
echo "|---|---|---|---|"
for block in "${blocks[@]}"; do
  al=() ma=()
  for ((i = 0; i < reps; i++)); do
    al+=("$(echo "$total / 1000000 / $(loop aligned read "$block")" | bc -l)")
    ma+=("$(echo "$total / 1000000 / $(loop malloc read "$block")" | bc -l)")
  done
  a=$(printf '%s\n' "${al[@]}" | median) m=$(printf '%s\n' "${ma[@]}" | median)
  printf '| %d | %.0f | %.0f | %.2f |\n' "$block" "$a" "$m" "$(echo "$a / $m" | bc -l)"
done
echo "(None r=1 reads of $mib MiB, $reps interleaved runs each, MPICH)"
print_machine mpich
