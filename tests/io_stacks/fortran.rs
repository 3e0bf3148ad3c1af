//! Fortran: `tests/programs/stacks/fortran_io.F90` prints its rank and
//! world size, writes a file per rank with Fortran's own I/O and one file
//! with a collective MPI-IO write, and reads it back; built with `use mpi`
//! and with `use mpi_f08`. MPICH's `use mpi` bindings call `MPI_*`; Open
//! MPI's bindings and MPICH's `mpi_f08` call `PMPI_*`, which libredio.so
//! exports for them (preload/src/exports/fortran.rs): without those
//! entries each replica printed the world size of the whole job.

use crate::common::{compile_flavour, Flavour, Mpi};
use crate::stacks::like_plain_and_written_once;

const PROGRAM: &str = "stacks/fortran_io.F90";

/// The program built for `mpi` in `flavour`, run plain and at r=2 and 3.
fn like_plain(mpi: Mpi, flavour: Flavour) {
    let exe = compile_flavour(mpi, PROGRAM, flavour);
    let name = format!("fortran-{}-{}", flavour.key(), mpi.key());
    like_plain_and_written_once(mpi, &exe, &name, &[2, 3], &[]);
}

#[test]
fn fortran_files_are_the_plain_runs_and_written_once_mpich() {
    like_plain(Mpi::Mpich, Flavour::Fortran);
}

#[test]
fn fortran_files_are_the_plain_runs_and_written_once_openmpi() {
    like_plain(Mpi::OpenMpi, Flavour::Fortran);
}

#[test]
fn fortran_mpi_f08_files_are_the_plain_runs_and_written_once_mpich() {
    like_plain(Mpi::Mpich, Flavour::FortranF08);
}

#[test]
fn fortran_mpi_f08_files_are_the_plain_runs_and_written_once_openmpi() {
    like_plain(Mpi::OpenMpi, Flavour::FortranF08);
}
