#!/usr/bin/env bash
# The experiments behind `redio exec --survive` (docs/fault-tolerance.md,
# "Launching"), on plain MPICH programs without redio:
#  1. Hydra and a death by a signal: rank 0 of 4 SIGKILLed; how many of the
#     other 3 write their file 6 s later, silent or with a line printed.
#  2. UCX and a sender that vanishes mid-message: how often the receiver
#     dies of a UCX fatal error, per UCX setting.
#  3. Open MPI 5 (ULFM, the project venv's): how often a process waiting in
#     a barrier dies when two processes outside its communicator die, with
#     and without SIGPIPE ignored.
#   benches/experiments/run.sh [RUNS=12]
set -uo pipefail
cd "$(dirname "$0")"
runs=${1:-12}
work=$(mktemp -d -t redio-experiments.XXXXXX)
mpicc.mpich -O2 -o "$work/hydra_signal_death" hydra_signal_death.c
mpicc.mpich -O2 -o "$work/ucx_dead_sender" ucx_dead_sender.c
cd "$work"

echo "== 1. Hydra: rank 0 of 4 SIGKILLed 1.5 s in (mpiexec.mpich -disable-auto-cleanup)"
for talk in 0 1; do
  rm -f done.* err
  timeout 30 mpiexec.mpich -disable-auto-cleanup -n 4 ./hydra_signal_death "$talk" 2>err >/dev/null &
  sleep 1.5
  kill -KILL "$(grep -o 'pid [0-9]*' err | cut -d' ' -f2)"
  wait
  what=$([ "$talk" = 1 ] && echo "rank 1 prints a line 3 s in" || echo "silent ranks")
  echo "$what: $(ls done.* 2>/dev/null | wc -l) of 3 survivors reached their end"
done

echo "== 2. UCX: rank 0 exits in the middle of an 8 MiB message to rank 1 ($runs runs each)"
for setting in "UCX_RNDV_THRESH=auto" "UCX_RNDV_THRESH=inf" "UCX_TLS=^cma"; do
  fatal=0
  for _ in $(seq "$runs"); do
    life="0.$((RANDOM % 5 + 1))"
    out=$(timeout 30 mpiexec.mpich -disable-auto-cleanup -genv "${setting%%=*}" "${setting#*=}" \
      -n 2 ./ucx_dead_sender 8388608 "$life" 2>&1)
    grep -q "rank 1 alive" <<<"$out" || fatal=$((fatal + 1))
  done
  echo "$setting: the receiver died in $fatal of $runs runs"
done
echo "== 3. ULFM: rank 0 waits in a barrier while ranks 2 and 3 die ($runs runs each)"
venv=$(cd "$OLDPWD/../.." && pwd)/.venv/bin
if [ -x "$venv/mpicc" ]; then
  "$venv/mpicc" -o ulfm_sigpipe "$OLDPWD/ulfm_sigpipe.c"
  root=$([ "$(id -u)" = 0 ] && echo --allow-run-as-root)
  for ignore in "" ignore; do
    lost=0
    for _ in $(seq "$runs"); do
      rm -f fate.*
      timeout 60 "$venv/mpirun" --with-ft ulfm --mca mpi_ft_propagator_with_rbcast true \
        --oversubscribe $root -n 4 ./ulfm_sigpipe $ignore >/dev/null 2>&1
      grep -q done fate.0 2>/dev/null || lost=$((lost + 1))
    done
    echo "SIGPIPE ${ignore:-default}: rank 0 died in $lost of $runs runs ($(cat fate.0 2>/dev/null))"
  done
fi
rm -rf "$work"
