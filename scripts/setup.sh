#!/usr/bin/env bash
# Installs what a fresh Debian 12 machine lacks to build and test redio.
# Idempotent: it installs only missing packages, so a second run takes a
# fraction of a second.
set -euo pipefail

packages=(
  mpich libmpich-dev            # MPICH 4.0 and its headers/mpicc
  openmpi-bin libopenmpi-dev    # Open MPI 4.1 and its headers/mpicc
  libclang-dev                  # bindgen (generates the MPI bindings)
  gcc g++ make pkg-config       # C/C++ test programs, the C shim
  procps                        # pgrep/pkill in tests
  strace                        # counts the bytes that reach shared files (tests/interposition.rs)
)

missing=()
for package in "${packages[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$package" 2>/dev/null || true)
  [[ "$status" == "install ok installed" ]] || missing+=("$package")
done

if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  sudo=""
  [[ $(id -u) -eq 0 ]] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
else
  echo "setup: all system packages present"
fi

if ! command -v cargo >/dev/null; then
  echo "setup: cargo not found; install a Rust toolchain (rustup) first" >&2
  exit 1
fi
