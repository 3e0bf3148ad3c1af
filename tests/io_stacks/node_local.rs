//! The stacks on one machine with no configuration, as a new user first
//! runs them: every replica of a rank on this node, no `--config`, the
//! files written into a node-local directory (the test's tmp area, on the
//! local disk). redio must see by itself that the replicas name one file
//! and coordinate it (docs/interposition.md, "Replicas sharing a node"):
//! each process prints the plain run's lines, the files are the plain
//! run's byte for byte, and strace counts the plain run's bytes per file
//! (written once, not r times). Parallel HDF5 (MPICH and Open MPI),
//! PnetCDF, mpi4py's `MPI.File` and the MPI-IO surface under them
//! (`mpiio_surface.c`), at r=2 and r=3. Two ignored tests measure the
//! limit under `/dev/shm`, which redio never manages.

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

/// Limit (docs/io-stacks.md, Limits, "`/dev/shm` is never managed"): paths
/// under `/dev` pass through on every replica, so each replica world
/// writes the file itself: strace counts twice the plain run's bytes at
/// r=2 (the file still comes out byte-identical).
#[test]
#[ignore = "limit: /dev/shm is never managed, every replica writes (docs/io-stacks.md)"]
fn parallel_hdf5_under_dev_shm_without_configuration_mpich() {
    let exe = compile_linked(Mpi::Mpich, "stacks/h5_parallel.c", &["hdf5-mpich"]);
    let command = [exe.display().to_string()];
    command_like_plain(
        Mpi::Mpich,
        &command,
        "hdf5-mpich-devshm",
        &[2, 3],
        &[],
        Storage::DevShm,
    );
}

/// Limit, as above: with `MPI_MODE_APPEND` every replica world appends, so
/// the appended file is r times too long and replica 1 prints another
/// position than replica 0.
#[test]
#[ignore = "limit: /dev/shm is never managed, every replica writes (docs/io-stacks.md)"]
fn the_mpi_io_surface_under_dev_shm_without_configuration_mpich() {
    let exe = compile_flavour(Mpi::Mpich, "io/mpiio_surface.c", Flavour::Fortify);
    let command = [exe.display().to_string()];
    command_like_plain(
        Mpi::Mpich,
        &command,
        "mpiio-mpich-devshm",
        &[2, 3],
        &[],
        Storage::DevShm,
    );
}
