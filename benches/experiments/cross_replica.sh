#!/usr/bin/env bash
# Per-rank survival (issue 41): runs cross_replica.c (what the survivors of
# a death can still do with MPI: see its header) under MPICH, Open MPI 4.1
# and Open MPI 5, with the launch flags redio uses for jobs that survive
# deaths (src/cli/flavour.rs), plain and with the collective in flight
# ("coll"). Prints each survivor's lines, sorted. Needs scripts/setup.sh.
#   benches/experiments/cross_replica.sh [mpich|openmpi|openmpi5 ...]
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d -t redio-cross-replica.XXXXXX)
ompi5=${REDIO_OPENMPI5_HOME:-$root/.venv}
as_root=()
[ "$(id -u)" -eq 0 ] && as_root=(--allow-run-as-root)
mpis=("$@")
[ ${#mpis[@]} -eq 0 ] && mpis=(mpich openmpi openmpi5)
for mpi in "${mpis[@]}"; do
  for mode in p2p coll; do
    death=kill
    case $mpi in
      mpich)
        mpicc.mpich -O1 -o "$work/x.$mpi" "$root/benches/experiments/cross_replica.c"
        launch=(mpiexec.mpich -disable-auto-cleanup -n 4)
        death=exit ;;
      openmpi)
        mpicc.openmpi -O1 -o "$work/x.$mpi" "$root/benches/experiments/cross_replica.c"
        launch=(mpirun.openmpi --oversubscribe "${as_root[@]}" --enable-recovery
                --mca orte_abort_on_non_zero_status 0 --mca orte_allowed_exit_without_sync 1 -n 4) ;;
      openmpi5)
        "$ompi5/bin/mpicc" -O1 -o "$work/x.$mpi" "$root/benches/experiments/cross_replica.c"
        launch=("$ompi5/bin/mpirun" --with-ft ulfm --mca mpi_ft_propagator_with_rbcast true
                --prtemca state_base_error_non_zero_exit 0 --oversubscribe "${as_root[@]}" -n 4) ;;
      *) echo "unknown MPI $mpi" >&2; exit 2 ;;
    esac
    echo "== $mpi, $mode"
    start=$(date +%s.%N)
    timeout 90 "${launch[@]}" "$work/x.$mpi" "$mode" "$death" >"$work/out" 2>"$work/err"
    rc=$?
    sort -s -k2,2n "$work/out" | grep '^rank'
    printf 'launcher exit %d after %.1f s' "$rc" "$(echo "$(date +%s.%N) - $start" | bc)"
    [ "$rc" -eq 124 ] && printf ' (TIMEOUT: a survivor hung)'
    echo
  done
done
rm -rf "$work"
