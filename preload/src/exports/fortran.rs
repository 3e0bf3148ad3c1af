//! The `PMPI_*` entry points that Fortran bindings call.
//!
//! Open MPI's Fortran bindings (`libmpi_mpifh`, which the `mpi` and
//! `mpi_f08` modules call in turn) and MPICH's `mpi_f08` bindings call the
//! C library's `PMPI_*` functions directly, past every `MPI_*` wrapper: a
//! Fortran program's `MPI_INIT` would skip redio's start-up and its
//! `MPI_COMM_WORLD` would hold every process of the job (measured before
//! these entries: a Fortran program printed `MPI_Comm_size` 4 under `redio
//! run --mpi openmpi -n 2 -r 2`, and "rank 2 of 4" with `use mpi_f08`
//! under `--mpi mpich`). So libredio.so exports one `PMPI_X` per wrapper,
//! generated with them (`preload/build/wrappers.rs`): a call from the
//! application goes on to redio's `MPI_X`, which translates
//! `MPI_COMM_WORLD` as for C; a call made while the thread is already
//! inside MPI is the library's own (ROMIO calls `PMPI_*` through its PLT)
//! and goes straight to the implementation, or, in MPICH builds, to the
//! polled waits and collectives of `exports::library_waits`. MPICH's
//! `mpif.h` and `use mpi` bindings call `MPI_*` and never come here.

#[allow(non_snake_case, clippy::all, missing_docs, unused_imports)]
mod entries {
    use crate::comm::ffi::*;
    include!(concat!(env!("OUT_DIR"), "/mpi_fortran_entries.rs"));
}
