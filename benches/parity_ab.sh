#!/usr/bin/env bash
# Two builds of redio side by side on the parity paths, interleaved run by
# run: the in-job apply (protect step at MPI_Finalize, the slowest rank's
# MB/s from the preload's info line, as benches/parity_apply_ab.sh), the
# offline encode and rebuild (`redio parity … --offline`), and the
# collective rebuild (`redio parity rebuild -n N`, an MPI job under MPICH).
# SCHEME over N ranks of SIZE MiB each on BASE (tmpfs by default); the
# rebuilds lose the first LOST ranks' whole directories. Every rebuild is
# compared byte for byte with the lost files.
#
# A build directory holds `redio` (the CLI) and `mpich/libredio.so` (the
# layout REDIO_LIB_DIR expects), e.g. copies of target/release/redio and
# target/mpich/release/libredio.so.
#
# Usage: benches/parity_ab.sh DIR_A DIR_B [N] [SIZE_MIB] [REPS] [BASE] [SCHEME] [LOST]
set -euo pipefail
cd "$(dirname "$0")/.."
source benches/machine.sh
source benches/parity_lib.sh
a=$1 b=$2 n=${3:-2} mib=${4:-64} reps=${5:-5} base=${6:-/dev/shm/redio-parity-ab}
scheme=${7:-xor} lost=${8:-1}
k=1
[[ $scheme == rs:* ]] && k=${scheme#rs:}
work=$(mktemp -d)
trap 'rm -rf "$work" "$base" "$base.orig"' EXIT
mpicc.mpich -O2 -o "$work/hello" benches/hello.c
rm -rf "$base" "$base.orig"
rank_files "$base" "$n" "$mib"
cp -a "$base" "$base.orig"
parity_config "$work/cfg.yaml" "$base" "$n" "${scheme%%:*}" "$k"
dirs=()
for ((r = 0; r < n; r++)); do dirs+=("$base/rank$r"); done
lose() {
  for ((r = 0; r < lost; r++)); do rm -rf "$base/rank$r"; done
}
check() {
  for ((r = 0; r < lost; r++)); do
    cmp -s "$base.orig/rank$r/ckpt.dat" "$base/rank$r/ckpt.dat" || {
      echo "rebuild of rank $r differs" >&2
      exit 1
    }
  done
}
secs() { echo "$2 - $1" | bc -l; }
declare -A res
one() { # build-dir label
  local d=$1 l=$2 t0 t1 mbs
  rm -f "$base"/rank*/*.rdp
  mbs=$(REDIO_LIB_DIR=$d "$d/redio" run --mpi mpich -n "$n" --config "$work/cfg.yaml" -- "$work/hello" 2>&1 |
    grep -o '([0-9]* MB/s)' | tr -dc '0-9\n' | sort -n | head -1)
  res[$l.apply]+="$mbs "
  rm -f "$base"/rank*/*.rdp
  t0=$(now); "$d/redio" parity encode --offline --scheme "$scheme" --set-size "$n" "${dirs[@]}" >/dev/null; t1=$(now)
  res[$l.encode]+="$(echo "$n * $mib * 1.048576 / $(secs "$t0" "$t1")" | bc -l) "
  lose
  t0=$(now); "$d/redio" parity rebuild --offline "${dirs[@]}" >/dev/null; t1=$(now)
  check
  res[$l.rebuild]+="$(echo "$lost * $mib * 1.048576 / $(secs "$t0" "$t1")" | bc -l) "
  lose
  t0=$(now)
  REDIO_LIB_DIR=$d timeout 300 "$d/redio" parity rebuild --mpi mpich -n "$n" --root "$base/rank{rank}" >/dev/null
  t1=$(now)
  check
  res[$l.collective]+="$(echo "$lost * $mib * 1.048576 / $(secs "$t0" "$t1")" | bc -l) "
}
for ((i = 0; i < reps; i++)); do
  one "$a" A
  one "$b" B
done
med() { printf '%s\n' $1 | median; }
echo "$scheme, $n ranks x $mib MiB on $base, $lost lost, $reps interleaved runs each (MB/s; medians):"
echo "| operation | A | B | B/A |"
echo "|---|---|---|---|"
for op in apply encode rebuild collective; do
  ma=$(med "${res[A.$op]}") mb=$(med "${res[B.$op]}")
  printf '| %s | %.0f | %.0f | %.2f |\n' "$op" "$ma" "$mb" "$(echo "$mb / $ma" | bc -l)"
done
for op in apply encode rebuild collective; do
  printf '%s: A %s; B %s\n' "$op" "$(printf '%.0f ' ${res[A.$op]})" "$(printf '%.0f ' ${res[B.$op]})"
done
echo "A = $a, B = $b"
print_machine mpich
