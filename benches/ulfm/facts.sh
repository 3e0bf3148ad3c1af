#!/usr/bin/env bash
# Re-measures the "Open MPI 5 / ULFM facts" of docs/fault-tolerance.md with
# the project venv's Open MPI 5 (scripts/setup.sh). Every mpirun is bounded
# by a timeout (rc 124 = hung). Takes a few minutes.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
home=${REDIO_OPENMPI5_HOME:-$here/../../.venv}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$home/bin/mpicc" -O2 -o "$work/facts" "$here/facts.c"
"$home/bin/mpicc" -O1 -o "$work/busy" "$here/busy.c"
"$home/bin/mpicc" -O2 -o "$work/create_group" "$here/create_group.c"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
detector=(--mca mpi_ft_detector true --mca mpi_ft_detector_period 0.3 --mca mpi_ft_detector_timeout 1)
run() {
  local start=$SECONDS
  timeout 40 "$home/bin/mpirun" --with-ft ulfm --oversubscribe "$@" >"$work/out" 2>&1
  local rc=$?
  echo "  rc=$rc wall=$((SECONDS - start))s :: $(grep -aE 'after|finalize|alive|inherit|barrier' "$work/out" | sort | tr '\n' '|')"
}
for n in 4 6; do
  for how in kill exit0 segv; do
    for test in irecv coll fatal; do
      for end in finalize exit0; do
        echo "== n=$n victim=$how test=$test end=$end (no detector)"
        run -n "$n" "$work/facts" 2 "$how" "$test" "$end"
      done
    done
  done
  echo "== n=$n victim=exit (_exit(1)), no detector"
  run -n "$n" "$work/facts" 2 exit irecv leave1
  echo "== n=$n victim=exit (_exit(1)) with detector period 0.3 timeout 1"
  run "${detector[@]}" -n "$n" "$work/facts" 2 exit irecv leave1
done
echo "== busy rank, detector in the main thread (period 0.5, timeout 2)"
run --mca mpi_ft_detector true --mca mpi_ft_detector_period 0.5 --mca mpi_ft_detector_timeout 2 -n 4 "$work/busy"
echo "== busy rank, detector thread"
run --mca mpi_ft_detector true --mca mpi_ft_detector_thread true --mca mpi_ft_detector_period 0.5 --mca mpi_ft_detector_timeout 2 -n 4 "$work/busy"
for how in revoke kill; do
  echo "== MPI_Comm_create_group whose partner never joins; tried to free it: $how"
  timeout 20 "$home/bin/mpirun" --with-ft ulfm --oversubscribe -n 3 "$work/create_group" "$how" >"$work/out" 2>&1
  echo "  rc=$? (124 = still blocked) :: $(grep -a 'returned\|revoked' "$work/out" | tr '\n' '|')"
done
