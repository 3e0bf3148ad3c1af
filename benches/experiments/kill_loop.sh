#!/usr/bin/env bash
# One SIGKILL trial, repeated: io_failover (tests/programs/io) under
# `redio run --mpi MPI -n 2 -r DEGREE` with READ/WRITE protocols and 8 MiB
# blocks; world rank VICTIM is SIGKILLed a random 100-350 ms after the first
# shared file appears. Counts the runs that completed (exit 0), lost a rank
# (exit 3), or hung (60 s; the stacks of the hung processes are saved with
# gdb). Extra environment (UCX_*, REDIO_LOG_LEVEL) passes through to the job.
#   benches/experiments/kill_loop.sh RUNS MPI READ WRITE DEGREE VICTIM
# Needs scripts/build.sh and one test run that compiled io_failover
# (target/tmp/redio-tests/bin/MPI/io_failover.fortify).
set -uo pipefail
runs=$1 mpi=$2 read=$3 write=$4 degree=$5 victim=$6
root=$(cd "$(dirname "$0")/../.." && pwd)
exe=$root/target/tmp/redio-tests/bin/$mpi/io_failover.fortify
work=$(mktemp -d -t redio-kill-loop.XXXXXX)
completed=0 lost=0 hung=0 other=0
for i in $(seq "$runs"); do
  d=$work/$i tag=kill-loop-$$-$i
  mkdir -p "$d/shared"
  printf 'version: 1\nshared:\n  paths: ["%s"]\nio: {read: %s, write: %s, chunk_size: 64KiB, readers: 2}\n' \
    "$d/shared" "$read" "$write" >"$d/redio.yaml"
  (REDIO_FT_TRIAL=$tag timeout 60 "$root/target/release/redio" run --mpi "$mpi" -n 2 -r "$degree" \
    --config "$d/redio.yaml" --summary "$d/summary.json" -- "$exe" "$d/shared" 8388608 \
    >"$d/out" 2>"$d/err"; echo $? >"$d/rc") &
  for _ in $(seq 3000); do [ -n "$(ls "$d/shared")" ] && break; sleep 0.002; done
  pid=""
  for p in $(pgrep -f io_failover); do
    env=$(tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null) || continue
    [ "$(cat "/proc/$p/comm" 2>/dev/null)" = redio ] && continue
    grep -qx "REDIO_FT_TRIAL=$tag" <<<"$env" &&
      grep -qE "^(PMI_RANK|OMPI_COMM_WORLD_RANK)=$victim\$" <<<"$env" && pid=$p
  done
  sleep "0.$((100 + RANDOM % 250))"
  [ -n "$pid" ] && kill -KILL "$pid"
  for _ in $(seq 250); do [ -f "$d/rc" ] && break; sleep 0.1; done
  if [ ! -f "$d/rc" ]; then
    for p in $(pgrep -f io_failover.fortify); do
      [ "$(cat "/proc/$p/comm" 2>/dev/null)" = redio ] && continue
      gdb -p "$p" -batch -ex "thread apply all bt 25" >>"$d/stacks" 2>&1
    done
  fi
  wait
  case $(cat "$d/rc") in
    0) completed=$((completed + 1)); rm -rf "$d" ;;
    3) lost=$((lost + 1)) ;;
    124) hung=$((hung + 1)); echo "run $i hung: $d" ;;
    *) other=$((other + 1)) ;;
  esac
done
cma=$(grep -l "process_vm_readv" "$work"/*/err 2>/dev/null | wc -l)
echo "$runs runs: $completed completed, $lost lost a rank, $hung hung, $other other (UCX CMA fatal in $cma of the failed ones); kept: $work"
