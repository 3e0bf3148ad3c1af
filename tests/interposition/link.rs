//! The replica link's fallback: when a member of a replica set cannot
//! build redio's TCP connections (a firewall, a port policy), the whole set
//! keeps the link on MPI, each member says why, and the job's output and
//! files are the plain run's.

use crate::common::{compile_flavour, Flavour, Mpi};
use crate::support::{
    assert_like_plain, check_success, lines_with, reference, replicated, Area, POSIX,
};
use redio::topology::LayoutKind;

#[test]
fn a_replica_set_that_cannot_connect_keeps_the_mpi_link_mpich() {
    let mpi = Mpi::Mpich;
    let exe = compile_flavour(mpi, POSIX, Flavour::O0);
    let plain = reference(mpi, POSIX, Flavour::O0, &[]);
    let area = Area::new("link-fallback", true);
    // Read & Distribute: the data every follower reads crosses the link.
    let config = std::fs::read_to_string(&area.config).unwrap();
    assert!(config.contains("read: simple"), "{config}");
    std::fs::write(
        &area.config,
        config.replace("read: simple", "read: read-distribute"),
    )
    .unwrap();
    // World rank 1 cannot listen: its set (logical rank 1: world ranks 1
    // and 3, block layout) stays on MPI; rank 0's set connects.
    let job = replicated(
        mpi,
        &exe,
        &area,
        (2, "block"),
        &[],
        &[("REDIO_TEST_LINK_NO_LISTEN", "1")],
    );
    let what = "io_posix at r=2, rank 1's set on the MPI link";
    check_success(&job, what);
    assert_like_plain(&plain, &job, &area, 2, LayoutKind::Block, what);
    let warnings = lines_with(&job.stderr, &["the replica link stays on MPI"]);
    assert_eq!(
        warnings.len(),
        2,
        "{what}: one warning per member of rank 1's set:\n{}",
        job.stderr
    );
    assert!(
        lines_with(&job.stderr, &["stays on MPI", "listening failed"]).len() == 1
            && lines_with(&job.stderr, &["stays on MPI", "a member could not listen"]).len() == 1,
        "{what}: the member that failed and its partner say why:\n{}",
        job.stderr
    );
}
