#!/usr/bin/env bash
# SIGKILL of `redio exec` itself, the supervisor, not the application
# (docs/fault-tolerance.md, "Limits"). Each trial runs marked_sleeper.c
# under `redio run -n 2 -r 2` (20 s of barriers), waits until all 4
# processes are past start-up (their marker files), then SIGKILLs the
# supervisor of one random process and prints how the job ended: its exit
# code and the summary's `completed`.
#   benches/experiments/kill_supervisor.sh RUNS MPI   # MPI: mpich, openmpi, openmpi5
# Needs scripts/build.sh.
set -uo pipefail
runs=$1 mpi=$2
root=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d -t redio-kill-supervisor.XXXXXX)
case $mpi in
  mpich) cc=mpicc.mpich ;;
  openmpi) cc=mpicc.openmpi ;;
  openmpi5) cc=${REDIO_OPENMPI5_HOME:-$root/.venv}/bin/mpicc ;;
  *) echo "MPI: mpich, openmpi or openmpi5" >&2; exit 2 ;;
esac
$cc -O2 -o "$work/marked_sleeper" "$root/benches/experiments/marked_sleeper.c"
completed=0
for i in $(seq "$runs"); do
  d=$work/$i
  mkdir -p "$d"
  timeout 120 "$root/target/release/redio" run --mpi "$mpi" -n 2 -r 2 \
    --summary "$d/summary.json" -- "$work/marked_sleeper" "$d" >"$d/out" 2>"$d/err" &
  job=$!
  for _ in $(seq 600); do
    [ "$(ls "$d" | grep -c '^started\.')" -ge 4 ] && break
    sleep 0.1
  done
  app=$(ls "$d" | grep '^started\.' | shuf -n 1 | cut -d. -f2)
  supervisor=$(ps -o ppid= -p "$app" | tr -d ' ')
  kill -9 "$supervisor"
  wait "$job"
  rc=$?
  done_=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['completed'])" "$d/summary.json" 2>/dev/null)
  [ "$done_" = True ] && completed=$((completed + 1))
  echo "trial $i: supervisor $supervisor (of $app) killed; exit code $rc, completed $done_"
done
echo "$mpi: $completed of $runs jobs completed on the survivors ($work)"
