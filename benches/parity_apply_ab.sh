#!/usr/bin/env bash
# Parity apply (the protect step at MPI_Finalize) with two builds of
# libredio.so side by side: XOR over N ranks, SIZE MiB per rank, on BASE
# (tmpfs by default), REPS interleaved runs each; prints the slowest rank's
# MB/s (the preload's info line) per build, median, and the ratio B/A.
# A build directory is laid out as REDIO_LIB_DIR expects: DIR/mpich/libredio.so.
#
# Usage: benches/parity_apply_ab.sh LIB_DIR_A LIB_DIR_B [N] [SIZE_MIB] [REPS] [BASE]
set -euo pipefail
cd "$(dirname "$0")/.."
source benches/machine.sh
source benches/parity_lib.sh
a=$1 b=$2 n=${3:-2} mib=${4:-64} reps=${5:-7} base=${6:-/dev/shm/redio-parity-ab}
redio=${REDIO:-$PWD/target/release/redio}
work=$(mktemp -d)
trap 'rm -rf "$work" "$base"' EXIT
mpicc.mpich -O2 -o "$work/hello" benches/hello.c
rm -rf "$base"
rank_files "$base" "$n" "$mib"
parity_config "$work/cfg.yaml" "$base" "$n"
apply() { # lib dir -> slowest rank's MB/s
  rm -f "$base"/rank*/*.rdp
  REDIO_LIB_DIR=$1 "$redio" run --mpi mpich -n "$n" --config "$work/cfg.yaml" -- "$work/hello" 2>&1 |
    grep -o '([0-9]* MB/s)' | tr -dc '0-9\n' | sort -n | head -1
}
ra=() rb=()
for ((i = 0; i < reps; i++)); do
  ra+=("$(apply "$a")")
  rb+=("$(apply "$b")")
done
ma=$(printf '%s\n' "${ra[@]}" | median)
mb=$(printf '%s\n' "${rb[@]}" | median)
printf 'XOR %d ranks x %d MiB on %s, %d runs each: A %s MB/s (%s), B %s MB/s (%s), B/A %.2f\n' \
  "$n" "$mib" "$base" "$reps" "$ma" "${ra[*]}" "$mb" "${rb[*]}" "$(echo "$mb / $ma" | bc -l)"
print_machine mpich
