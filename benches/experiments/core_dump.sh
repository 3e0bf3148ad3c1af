#!/usr/bin/env bash
# Does a crashing replica leave a core dump? (docs/fault-tolerance.md,
# "Limits"). segv_rank0.c SIGSEGVs on world rank 0; it runs with
# `ulimit -c unlimited` in its own directory, plainly and under `redio run
# -n 2 -r 2` with `on_replica_failure: continue` (the default) and
# `abort`, and the script prints whether a `core` file appeared. Needs
# scripts/build.sh and a core_pattern that writes `core` into the working
# directory (Debian's default).
#   benches/experiments/core_dump.sh MPI   # mpich or openmpi
set -uo pipefail
mpi=$1
root=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d -t redio-core-dump.XXXXXX)
case $mpi in
  mpich) cc=mpicc.mpich launcher=(mpiexec.mpich -n 2) ;;
  openmpi) cc=mpicc.openmpi launcher=(mpirun.openmpi --oversubscribe --allow-run-as-root -n 2) ;;
  *) echo "MPI: mpich or openmpi" >&2; exit 2 ;;
esac
$cc -O0 -o "$work/segv_rank0" "$root/benches/experiments/segv_rank0.c"
printf 'version: 1\nfaults:\n  on_replica_failure: abort\n' >"$work/abort.yaml"
ulimit -c unlimited
run() {
  local name=$1
  shift
  mkdir -p "$work/$name"
  (cd "$work/$name" && timeout 120 "$@" >out 2>err)
  local rc=$?
  local core=no
  [ -e "$work/$name/core" ] && core=yes
  echo "$name: exit code $rc, core dump: $core"
}
echo "core_pattern: $(cat /proc/sys/kernel/core_pattern)"
run plain "${launcher[@]}" "$work/segv_rank0"
run redio-continue "$root/target/release/redio" run --mpi "$mpi" -n 2 -r 2 -- "$work/segv_rank0"
run redio-abort "$root/target/release/redio" run --mpi "$mpi" -n 2 -r 2 \
  --config "$work/abort.yaml" -- "$work/segv_rank0"
echo "($work)"
