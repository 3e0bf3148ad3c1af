//! The MPI-IO surface HDF5, PnetCDF and checkpoint libraries use
//! (`tests/programs/io/mpiio_surface.c`): views over derived datatypes,
//! explicit offsets, individual and shared file pointers, collective,
//! split-collective and nonblocking transfers, size changes, the open
//! modes and their errors, delete.

use crate::common::{compile_flavour, Flavour, Mpi};
use crate::stacks::like_plain_and_written_once;

const SURFACE: &str = "io/mpiio_surface.c";

#[test]
fn the_mpi_io_surface_is_coordinated_and_written_once_mpich() {
    let exe = compile_flavour(Mpi::Mpich, SURFACE, Flavour::Fortify);
    like_plain_and_written_once(Mpi::Mpich, &exe, "mpiio-mpich", &[2, 3], &[]);
}

#[test]
fn the_mpi_io_surface_is_coordinated_and_written_once_openmpi() {
    let exe = compile_flavour(Mpi::OpenMpi, SURFACE, Flavour::Fortify);
    like_plain_and_written_once(Mpi::OpenMpi, &exe, "mpiio-openmpi", &[2, 3], &[]);
}

/// Open MPI 5's OMPIO completes nonblocking requests inside its progress
/// engine, where it also releases its region locks and posts the pieces
/// beyond 2048: redio must coordinate those calls without running that
/// progress again (`comm::io_progress`).
#[test]
fn the_mpi_io_surface_is_coordinated_and_written_once_openmpi5() {
    let exe = compile_flavour(Mpi::OpenMpi5, SURFACE, Flavour::Fortify);
    like_plain_and_written_once(Mpi::OpenMpi5, &exe, "mpiio-openmpi5", &[2, 3], &[]);
}
