//! Real I/O stacks under redundancy (issue 18): programs that do their I/O
//! through MPI-IO (ROMIO in MPICH, OMPIO in Open MPI), parallel HDF5 and
//! PnetCDF, run plain and under `redio run` at r = 2 and 3: with a
//! configured shared directory, and with no configuration on a node-local
//! one (`node_local.rs`).
//!
//! redio coordinates MPI-IO where it meets the file system: the MPI
//! library's own POSIX calls on shared files run through the protocols
//! (docs/io-stacks.md). Each test checks what a user of these libraries
//! cares about:
//!
//! - every process prints what the plain run's process of its logical rank
//!   printed (counts, error classes, sizes, positions, checksums of what it
//!   read);
//! - the shared files are byte-identical to the plain run's, and no
//!   bookkeeping file of the MPI library is left behind;
//! - the bytes that reach each shared file, counted from outside with
//!   strace, are the plain run's (written once, not r times).
//!
//! The programs are in `tests/programs/io/mpiio_surface.c` (the MPI-IO
//! surface HDF5 and PnetCDF use) and `tests/programs/stacks/` (HDF5 and
//! PnetCDF from Debian's packages, installed by `scripts/setup.sh`, and a
//! Fortran program).

#[path = "../common/mod.rs"]
mod common;
#[allow(dead_code)] // shared with tests/interposition, which uses all of it
#[path = "../interposition/support.rs"]
mod support;

mod adios;
mod failover;
mod fortran;
mod hdf5;
mod mpiio;
mod node_local;
mod pnetcdf;
mod python;
mod repeat;
mod stacks;
