//! A replica that dies inside an MPI-IO call (a collective write, a lock,
//! an `fstat` ROMIO or OMPIO makes underneath) is survived: the job ends
//! with 0, the death is in the summary, and the shared files are the plain
//! run's. The coordinated operation the victim died in is run again by the
//! survivors, so it is done once.

use crate::common::{compile_flavour, Flavour, Mpi};
use crate::support::{assert_same_files, check_success, no_skip, reference, replicated, Area};

const SURFACE: &str = "io/mpiio_surface.c";

/// `REDIO_TEST_DIE=<spec>` in a run of the MPI-IO surface program at
/// `degree`; the files must be the plain run's.
fn survives(mpi: Mpi, degree: u32, spec: &str) {
    let plain = reference(mpi, SURFACE, Flavour::Fortify, &[]);
    let exe = compile_flavour(mpi, SURFACE, Flavour::Fortify);
    let name = format!(
        "mpiio-die-{}-r{degree}-{}",
        mpi.key(),
        spec.replace(':', "_")
    );
    let area = Area::new(&name, true);
    let job = replicated(
        mpi,
        &exe,
        &area,
        (degree, "block"),
        &[],
        &[("REDIO_TEST_DIE", spec)],
    );
    let what = format!("{} r={degree}, REDIO_TEST_DIE={spec}", mpi.key());
    check_success(&job, &what);
    assert!(
        job.stderr.contains("failed during operation"),
        "{what}: no fail-over was reported, so the test did not test one:\n{}",
        job.stderr
    );
    assert_same_files(
        &plain.area.shared,
        &area.shared,
        &format!("{what}: shared files"),
        &no_skip,
    );
}

#[test]
fn a_replica_dying_inside_mpi_io_is_survived_mpich() {
    // The leader of rank 0 dies in ROMIO's open of the view file, then in
    // the collective write of the strided view; a follower is SIGKILLed in
    // the same write; at r=2 the leader of rank 1 dies in an fstat ROMIO
    // makes.
    survives(Mpi::Mpich, 3, "0:1:exit:1");
    survives(Mpi::Mpich, 3, "0:3:exit:1");
    survives(Mpi::Mpich, 3, "2:3:kill");
    survives(Mpi::Mpich, 2, "1:10:exit:0");
}

/// Deaths in OMPIO's `MPI_File_open` (operations 3 and 4: the `open` and
/// the `lstat` it makes) and in its writes, r=3 and r=2. The deaths in the
/// open failed the survivors' open with `MPI_ERR_OTHER` while sharedfp/sm
/// kept its file in the session directory Open MPI removes after a death;
/// redio keeps it in the run's directory (docs/io-stacks.md).
#[test]
fn a_replica_dying_inside_mpi_io_is_survived_openmpi() {
    survives(Mpi::OpenMpi, 3, "0:3:exit:1");
    survives(Mpi::OpenMpi, 3, "0:4:exit:1");
    survives(Mpi::OpenMpi, 3, "0:6:exit:1");
    survives(Mpi::OpenMpi, 3, "3:20:kill");
    survives(Mpi::OpenMpi, 2, "0:6:exit:1");
    survives(Mpi::OpenMpi, 2, "0:8:kill");
}
