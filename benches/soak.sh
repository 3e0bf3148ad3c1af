#!/usr/bin/env bash
# The fail-over soak: N SIGKILL trials (tests/fault_tolerance.rs,
# signal_trials: every read and write protocol, r=2 and r=3, master and
# non-master victims, killed at a random moment of their I/O) on one MPI,
# with a busy loop on every core, as on a shared CI machine.
#
#   benches/soak.sh [TRIALS=500] [MPI=mpich]    (after scripts/build.sh)
#
# Prints the trial counts and every failure; exit status 0 only if none.
set -euo pipefail
cd "$(dirname "$0")/.."
source benches/machine.sh
trials=${1:-500}
mpi=${2:-mpich}
hogs=()
for _ in $(seq "$(nproc)"); do
  (while :; do :; done) &
  hogs+=($!)
done
trap 'kill "${hogs[@]}" 2>/dev/null || true' EXIT
log=$(mktemp -t redio-soak.XXXXXX)
echo "soak: $trials SIGKILL trials on $mpi with $(nproc) busy loops; log: $log"
status=0
REDIO_FT_KILL_TRIALS=$trials cargo test --release --locked -p redio --test fault_tolerance \
  "survivors_finish_after_sigkill_at_a_random_moment_$mpi" -- --nocapture >"$log" 2>&1 || status=$?
grep -E "^signal trials:|^fault trials: REDIO_FT_SEED" "$log" || true
grep -B1 -A1 "^  failed:" "$log" | cut -c1-300 | head -60 || true
print_machine "$mpi"
exit "$status"
