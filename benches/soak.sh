#!/usr/bin/env bash
# The fail-over soak: N trials (tests/fault_tolerance.rs,
# soak_random_signals_on_every_mpi: every read and write protocol, r=2 and
# r=3, master and non-master victims, each trial on a random MPI of MPIS
# with a random fatal signal of SIGNALS, sent at a random moment of the
# victim's I/O), with a busy loop on every core, as on a shared CI machine.
#
#   benches/soak.sh [TRIALS=500] [MPIS=mpich,openmpi,openmpi5] [SIGNALS=9,15,2,11,7,6]
#
# (after scripts/build.sh). SIGNALS are numbers: SIGKILL, SIGTERM, SIGINT,
# SIGSEGV, SIGBUS, SIGABRT by default. Prints the trial counts per signal
# and MPI and every failure; exit status 0 only if none failed.
set -euo pipefail
cd "$(dirname "$0")/.."
source benches/machine.sh
trials=${1:-500}
mpis=${2:-mpich,openmpi,openmpi5}
signals=${3:-9,15,2,11,7,6}
hogs=()
for _ in $(seq "$(nproc)"); do
  (while :; do :; done) &
  hogs+=($!)
done
trap 'kill "${hogs[@]}" 2>/dev/null || true' EXIT
log=$(mktemp -t redio-soak.XXXXXX)
echo "soak: $trials trials on $mpis with signals $signals and $(nproc) busy loops; log: $log"
status=0
REDIO_FT_SOAK_TRIALS=$trials REDIO_FT_SOAK_MPIS=$mpis REDIO_FT_SOAK_SIGNALS=$signals \
  cargo test --release --locked -p redio --test fault_tolerance \
  soak_random_signals_on_every_mpi -- --ignored --nocapture >"$log" 2>&1 || status=$?
grep -E "^signal trials:|^fault trials: REDIO_FT_SEED" "$log" || true
grep -B1 -A1 "^  failed:" "$log" | cut -c1-300 | head -60 || true
print_machine "$mpis"
exit "$status"
