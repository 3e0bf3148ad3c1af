//! Fortran (`use mpi`): `tests/programs/stacks/fortran_io.f90` prints its
//! rank and world size, writes a file per rank with Fortran's own I/O and
//! one file with a collective MPI-IO write, and reads it back. MPICH's
//! Fortran layer calls `MPI_*`; Open MPI's calls `PMPI_*`, which the Open
//! MPI builds of libredio.so export for it (preload/src/exports/fortran.rs):
//! without them each replica printed the world size of the whole job.

use crate::common::{compile_flavour, Flavour, Mpi};
use crate::stacks::like_plain_and_written_once;

const PROGRAM: &str = "stacks/fortran_io.f90";

#[test]
fn fortran_files_are_the_plain_runs_and_written_once_mpich() {
    let exe = compile_flavour(Mpi::Mpich, PROGRAM, Flavour::Fortran);
    like_plain_and_written_once(Mpi::Mpich, &exe, "fortran-mpich", &[2, 3], &[]);
}

#[test]
fn fortran_files_are_the_plain_runs_and_written_once_openmpi() {
    let exe = compile_flavour(Mpi::OpenMpi, PROGRAM, Flavour::Fortran);
    like_plain_and_written_once(Mpi::OpenMpi, &exe, "fortran-openmpi", &[2, 3], &[]);
}
