#!/usr/bin/env bash
# How long a rebuild of two lost members takes against one, for two builds
# side by side: SCHEME over N ranks of SIZE MiB each on BASE (tmpfs by
# default), one set; each run loses the first 1, then the first 2 ranks'
# whole directories and rebuilds them with the collective job (`redio
# parity rebuild -n N`, MPICH) and offline (`--offline`). Runs interleave
# A and B, 1 and 2 lost; every rebuild is compared with the lost files.
# Prints median wall seconds and the ratio of 2 lost to 1 lost.
#
# A build directory holds `redio` and `mpich/libredio.so` (as for
# benches/parity_ab.sh).
#
# Usage: benches/parity_lost.sh DIR_A DIR_B [N] [SIZE_MIB] [REPS] [BASE] [SCHEME]
set -euo pipefail
cd "$(dirname "$0")/.."
source benches/machine.sh
source benches/parity_lib.sh
a=$1 b=$2 n=${3:-4} mib=${4:-64} reps=${5:-5} base=${6:-/dev/shm/redio-parity-lost}
scheme=${7:-rs:2}
trap 'rm -rf "$base" "$base.orig"' EXIT
rm -rf "$base" "$base.orig"
rank_files "$base" "$n" "$mib"
dirs=()
for ((r = 0; r < n; r++)); do dirs+=("$base/rank$r"); done
"$a/redio" parity encode --offline --scheme "$scheme" --set-size "$n" "${dirs[@]}" >/dev/null
cp -a "$base" "$base.orig"
restore() {
  rm -rf "$base"
  cp -a "$base.orig" "$base"
}
declare -A res
one() { # build-dir label lost
  local d=$1 l=$2 lost=$3 t0 t1 r
  for mode in collective offline; do
    restore
    for ((r = 0; r < lost; r++)); do rm -rf "$base/rank$r"; done
    t0=$(now)
    if [ "$mode" = collective ]; then
      REDIO_LIB_DIR=$d timeout 300 "$d/redio" parity rebuild --mpi mpich -n "$n" \
        --root "$base/rank{rank}" >/dev/null
    else
      "$d/redio" parity rebuild --offline "${dirs[@]}" >/dev/null
    fi
    t1=$(now)
    diff -r "$base" "$base.orig" >/dev/null || {
      echo "$l $mode rebuild of $lost differs" >&2
      exit 1
    }
    res[$l.$mode.$lost]+="$(echo "$t1 - $t0" | bc -l) "
  done
}
for ((i = 0; i < reps; i++)); do
  for lost in 1 2; do
    one "$a" A "$lost"
    one "$b" B "$lost"
  done
done
med() { printf '%s\n' $1 | median; }
echo "$scheme, $n ranks x $mib MiB on $base, $reps interleaved runs each (wall seconds; medians):"
echo "| rebuild | build | 1 lost | 2 lost | 2 lost / 1 lost |"
echo "|---|---|---|---|---|"
for mode in collective offline; do
  for l in A B; do
    one_=$(med "${res[$l.$mode.1]}") two=$(med "${res[$l.$mode.2]}")
    printf '| %s | %s | %.3f | %.3f | %.2f |\n' "$mode" "$l" "$one_" "$two" "$(echo "$two / $one_" | bc -l)"
  done
done
for k in "${!res[@]}"; do printf '%s: %s\n' "$k" "$(printf '%.3f ' ${res[$k]})"; done | sort
echo "A = $a, B = $b"
print_machine mpich
