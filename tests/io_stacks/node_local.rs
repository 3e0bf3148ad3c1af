//! The stacks on one machine with no configuration, as a new user first
//! runs them: every replica of a rank on this node, no `--config`, the
//! files written into a node-local directory (the test's tmp area, on the
//! local disk). redio must see by itself that the replicas name one file
//! and coordinate it (docs/interposition.md, "Replicas sharing a node"):
//! each process prints the plain run's lines, the files are the plain
//! run's byte for byte, and strace counts the plain run's bytes per file
//! (written once, not r times). Parallel HDF5 (MPICH and Open MPI),
//! PnetCDF, mpi4py's `MPI.File` and the MPI-IO surface under them
//! (`mpiio_surface.c`), at r=2 and r=3; then HDF5 and the MPI-IO surface
//! with their files under `/dev/shm`.

use crate::common::{compile_flavour, compile_linked, repo, Flavour, Mpi};
use crate::stacks::{command_like_plain, node_local_like_plain_and_written_once, Storage};

#[test]
fn parallel_hdf5_on_a_node_local_path_without_configuration_mpich() {
    let exe = compile_linked(Mpi::Mpich, "stacks/h5_parallel.c", &["hdf5-mpich"]);
    node_local_like_plain_and_written_once(Mpi::Mpich, &exe, "hdf5-mpich-nodelocal", &[2, 3], &[]);
}

#[test]
fn pnetcdf_on_a_node_local_path_without_configuration_openmpi() {
    let exe = compile_linked(Mpi::OpenMpi, "stacks/pnetcdf_write.c", &["pnetcdf"]);
    node_local_like_plain_and_written_once(
        Mpi::OpenMpi,
        &exe,
        "pnetcdf-openmpi-nodelocal",
        &[2, 3],
        &[],
    );
}

#[test]
fn parallel_hdf5_on_a_node_local_path_without_configuration_openmpi() {
    let exe = compile_linked(Mpi::OpenMpi, "stacks/h5_parallel.c", &["hdf5-openmpi"]);
    node_local_like_plain_and_written_once(
        Mpi::OpenMpi,
        &exe,
        "hdf5-openmpi-nodelocal",
        &[2, 3],
        &[],
    );
}

/// mpi4py's `MPI.File` (Debian's build, Open MPI), as in `python.rs`.
#[test]
fn mpi4py_mpi_io_on_a_node_local_path_without_configuration_openmpi() {
    let script = repo().join("tests/programs/stacks/mpi4py_mpiio.py");
    let command = ["/usr/bin/python3".to_string(), script.display().to_string()];
    command_like_plain(
        Mpi::OpenMpi,
        &command,
        "mpi4py-openmpi-nodelocal",
        &[2, 3],
        &[],
        Storage::NodeLocal,
    );
}

/// The MPI-IO surface under the stacks (`mpiio.rs`): shared file pointers
/// (ROMIO's `.shfp` bookkeeping file beside the data file), `APPEND`,
/// `EXCL`, `DELETE_ON_CLOSE`, `MPI_File_delete` on one node-local file.
#[test]
fn the_mpi_io_surface_on_a_node_local_path_without_configuration_mpich() {
    let exe = compile_flavour(Mpi::Mpich, "io/mpiio_surface.c", Flavour::Fortify);
    node_local_like_plain_and_written_once(Mpi::Mpich, &exe, "mpiio-mpich-nodelocal", &[2, 3], &[]);
}

/// The same with Open MPI's OMPIO (its `sharedfp` lock files).
#[test]
fn the_mpi_io_surface_on_a_node_local_path_without_configuration_openmpi() {
    let exe = compile_flavour(Mpi::OpenMpi, "io/mpiio_surface.c", Flavour::Fortify);
    node_local_like_plain_and_written_once(
        Mpi::OpenMpi,
        &exe,
        "mpiio-openmpi-nodelocal",
        &[2, 3],
        &[],
    );
}

/// The files under `/dev/shm` (tmpfs): node-local like the directory
/// above, so coordinated the same way, while the MPI library's own
/// segments there pass through (docs/interposition.md, "`/dev/shm`").
/// Before, paths under `/dev` were never managed and every replica world
/// wrote the file: twice the plain run's bytes at r=2.
#[test]
fn parallel_hdf5_under_dev_shm_without_configuration_mpich() {
    let exe = compile_linked(Mpi::Mpich, "stacks/h5_parallel.c", &["hdf5-mpich"]);
    under_dev_shm(Mpi::Mpich, &exe, "hdf5-mpich-devshm");
}

/// The same with Open MPI (OMPIO; its `vader` segments are in `/dev/shm`
/// too).
#[test]
fn parallel_hdf5_under_dev_shm_without_configuration_openmpi() {
    let exe = compile_linked(Mpi::OpenMpi, "stacks/h5_parallel.c", &["hdf5-openmpi"]);
    under_dev_shm(Mpi::OpenMpi, &exe, "hdf5-openmpi-devshm");
}

/// The MPI-IO surface under `/dev/shm`: before, with `MPI_MODE_APPEND`
/// every replica world appended, so the appended file was r times too
/// long and replica 1 printed another position than replica 0.
#[test]
fn the_mpi_io_surface_under_dev_shm_without_configuration_mpich() {
    let exe = compile_flavour(Mpi::Mpich, "io/mpiio_surface.c", Flavour::Fortify);
    under_dev_shm(Mpi::Mpich, &exe, "mpiio-mpich-devshm");
}

/// The same with Open MPI's OMPIO (its `sharedfp` lock files beside the
/// data file, in `/dev/shm`).
#[test]
fn the_mpi_io_surface_under_dev_shm_without_configuration_openmpi() {
    let exe = compile_flavour(Mpi::OpenMpi, "io/mpiio_surface.c", Flavour::Fortify);
    under_dev_shm(Mpi::OpenMpi, &exe, "mpiio-openmpi-devshm");
}

/// `exe` plain and at r=2 and r=3 with no configuration, its files under
/// `/dev/shm`.
fn under_dev_shm(mpi: Mpi, exe: &std::path::Path, name: &str) {
    let command = [exe.display().to_string()];
    command_like_plain(mpi, &command, name, &[2, 3], &[], Storage::DevShm);
}
