#!/usr/bin/env bash
# Installs redio under PREFIX (default /usr/local):
#   PREFIX/bin/redio
#   PREFIX/lib/redio/{mpich,openmpi,openmpi5}/libredio.so
# (the installed CLI finds Open MPI 5 itself through REDIO_OPENMPI5_HOME)
#   PREFIX/include/redio.h
# The installed CLI finds its libraries relative to itself.
# REDIO_NO_BUILD=1 installs what scripts/build.sh already built.
set -euo pipefail
cd "$(dirname "$0")/.."
prefix=${1:-/usr/local}

[[ "${REDIO_NO_BUILD:-}" == 1 ]] || scripts/build.sh
install -D -m 755 target/release/redio "$prefix/bin/redio"
for mpi in mpich openmpi openmpi5; do
  install -D -m 755 "target/$mpi/release/libredio.so" "$prefix/lib/redio/$mpi/libredio.so"
done
install -D -m 644 include/redio.h "$prefix/include/redio.h"
echo "installed redio in $prefix"
