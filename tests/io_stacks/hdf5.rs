//! Parallel HDF5 (Debian's 1.10, the mpio driver over MPI-IO):
//! `tests/programs/stacks/h5_parallel.c` writes a 2-D dataset with a
//! collective hyperslab write, a chunked one independently, an attribute,
//! and reads them back.

use crate::common::{compile_linked, Mpi};
use crate::stacks::like_plain_and_written_once;

const PROGRAM: &str = "stacks/h5_parallel.c";

#[test]
fn parallel_hdf5_files_are_the_plain_runs_and_written_once_mpich() {
    let exe = compile_linked(Mpi::Mpich, PROGRAM, &["hdf5-mpich"]);
    like_plain_and_written_once(Mpi::Mpich, &exe, "hdf5-mpich", &[2, 3], &[]);
}

#[test]
fn parallel_hdf5_files_are_the_plain_runs_and_written_once_openmpi() {
    let exe = compile_linked(Mpi::OpenMpi, PROGRAM, &["hdf5-openmpi"]);
    like_plain_and_written_once(Mpi::OpenMpi, &exe, "hdf5-openmpi", &[2, 3], &[]);
}
