#!/usr/bin/env bash
# The whole test suite, from a fresh clone: install, build, lint, test.
# This is the README's test command; .ci/run calls it.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/setup.sh
scripts/slurm.sh install   # Debian's Slurm for tests/slurm.rs (the demo needs none)
scripts/build.sh

echo "== format and lints"
cargo fmt --all -- --check
cargo clippy --locked --all-targets -p redio -p redio-aligned -p redio-core -p redio-protocols -p redio-parity -- -D warnings
for mpi in mpich openmpi openmpi5; do
  REDIO_MPI=$mpi CARGO_TARGET_DIR=target/$mpi cargo clippy --locked --release --all-targets -p redio-preload -- -D warnings
done
echo "== layers of libredio.so (imports run downward only)"
python3 scripts/check_layers.py

echo "== tests"
# Test binaries run one after the other; inside one, MPI jobs are serialised
# by the harness. Every mpiexec runs under timeout(1). The four fuzz targets
# (tests/fuzz_parsers.rs) run 60 s each, two at a time: about two minutes.
export REDIO_FUZZ_SECONDS="${REDIO_FUZZ_SECONDS:-60}"
# `redio run` keeps its run directory in TMPDIR after a job that had a
# failure, for diagnosis, and most fault-tolerance tests stage one: about
# 200 directories a suite. They go into a directory of the suite's own,
# removed when the suite passes and named when it fails. It stays short
# (Open MPI's socket paths live under it).
suite_tmp=$(mktemp -d "${TMPDIR:-/tmp}/redio-suite.XXXXXX")
keep_or_remove_suite_tmp() {
  local status=$?
  if [ "$status" -eq 0 ]; then
    rm -rf "$suite_tmp"
  else
    echo "test: the run directories of this suite are kept in $suite_tmp" >&2
  fi
  exit "$status"
}
trap keep_or_remove_suite_tmp EXIT
export TMPDIR=$suite_tmp
cargo test --locked -p redio -p redio-aligned -p redio-core -p redio-protocols -p redio-parity
# The preload's unit tests need no MPI job; MPICH's handles are integers, so
# the test binary links without libmpi.
REDIO_MPI=mpich CARGO_TARGET_DIR=target/mpich cargo test --locked --release -p redio-preload
