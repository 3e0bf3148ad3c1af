//! The limits of the file system and of the process (issue 44): what a
//! plain run does at them, every replica must do at the same call, and
//! nothing redio adds may move them.
//!
//! - `io_longpath.c`: a shared file whose path is `PATH_MAX - 1` bytes long
//!   (created, written, read, stat'ed, renamed, unlinked). Before, a path
//!   longer than 512 bytes failed every call with `EIO` at r ≥ 2: the
//!   announcement cut it to 512 bytes and compared the cut copies with the
//!   whole one, a "divergence" of identical calls.
//! - `io_fdlimit.c`: a program that sets its soft descriptor limit to 1024
//!   (as `ulimit -Sn 1024` would) and opens shared files until an open
//!   fails. Every replica must open as many as the plain run and fail the
//!   same call with `EMFILE`. Before, redio's own descriptors (the link's
//!   sockets) counted against the limit, the replicas ran out at different
//!   opens, and the job ended with exit 75 (a divergence at
//!   `MPI_Finalize`).

use crate::common::{compile_flavour, Flavour, Mpi};
use crate::matrix::replicas_match_plain;
use crate::support::{
    assert_same_files, check_success, first_difference, reference, replicated, Area, RANKS,
};
use redio::topology::{LayoutKind, Topology};

const LONG_PATH: &str = "io/io_longpath.c";

/// r = 2, block layout.
const R2: [(u32, &str, LayoutKind); 1] = [(2, "block", LayoutKind::Block)];

/// Every call on a path of `PATH_MAX - 1` bytes returns on every replica
/// what it returned in the plain run, under MPICH at r = 2 and 3.
#[test]
fn a_path_of_path_max_bytes_works_replicated_mpich() {
    let runs = [R2[0], (3, "block", LayoutKind::Block)];
    replicas_match_plain(Mpi::Mpich, LONG_PATH, Flavour::O0, &runs);
}

/// The same under Open MPI 4.1, r = 2.
#[test]
fn a_path_of_path_max_bytes_works_replicated_openmpi() {
    replicas_match_plain(Mpi::OpenMpi, LONG_PATH, Flavour::O0, &R2);
}

const FD_LIMIT: &str = "io/io_fdlimit.c";

/// How many more or fewer files than the plain run a replica may open:
/// the MPI library's own descriptors differ with the number of processes
/// (measured with MPICH 4.0: plain runs of `io_fdlimit` open 994 to 996
/// files per rank at `-n 2`, 990 to 996 at `-n 4`). redio's own
/// descriptors are not in this margin: they sit above the limit (checked
/// below by their count there).
const MPI_MARGIN: i64 = 8;

/// The count in "… opened N files, then open: -1 EMFILE".
fn opened(line: &str) -> i64 {
    let count = line
        .split("opened ")
        .nth(1)
        .and_then(|rest| rest.split(' ').next());
    count
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no count in {line:?}"))
}

/// `io_fdlimit` with a soft limit of 1024 under `mpi` at r = 2: the job
/// exits 0; every replica of a rank prints the same lines (the same count
/// of files opened, `EMFILE` at the same call); each prints what the plain
/// run's process of its rank printed, except the count, which may differ
/// only by the MPI library's own descriptors, and the count of
/// descriptors above the limit, where redio keeps its own (the plain run
/// has none there).
fn at_the_descriptor_limit_like_plain(mpi: Mpi) {
    // The program's default limit is 1024.
    let plain = reference(mpi, FD_LIMIT, Flavour::O0, &[]);
    let exe = compile_flavour(mpi, FD_LIMIT, Flavour::O0);
    let what = format!("io_fdlimit 1024 under {mpi:?}, r=2");
    let area = Area::new(&format!("{}-fdlimit-r2", mpi.key()), true);
    let job = replicated(mpi, &exe, &area, (2, "block"), &[], &[]);
    check_success(&job, &what);
    let topology = Topology::regular(2 * RANKS, 2, LayoutKind::Block).unwrap();
    for (world, out) in &job.ranks {
        let rank = topology.place(*world).rank;
        let replica_0 = &job.ranks[&rank];
        assert_eq!(
            out,
            replica_0,
            "{what}: world rank {world} and replica 0 of rank {rank} must fail the same \
             open:\n{}",
            first_difference(replica_0, out)
        );
        let expected = &plain.job.ranks[&rank];
        let (mine, theirs): (Vec<&str>, Vec<&str>) =
            (out.lines().collect(), expected.lines().collect());
        assert_eq!(
            mine.len(),
            theirs.len(),
            "{what}: {out}\nplain:\n{expected}"
        );
        for (line, plain_line) in mine.iter().zip(&theirs) {
            if line.contains("opened") {
                assert!(
                    line.ends_with("then open: -1 EMFILE"),
                    "{what}: world rank {world}: {line}"
                );
                let (n, plain_n) = (opened(line), opened(plain_line));
                assert!(
                    (n - plain_n).abs() <= MPI_MARGIN,
                    "{what}: world rank {world} opened {n} files, the plain run {plain_n}"
                );
            } else if line.starts_with("descriptors at or above the limit") {
                assert_eq!(*plain_line, "descriptors at or above the limit: 0");
                assert_ne!(
                    *line, "descriptors at or above the limit: 0",
                    "{what}: world rank {world}: redio's own descriptors must sit above \
                     the limit"
                );
            } else {
                assert_eq!(line, plain_line, "{what}: world rank {world}");
            }
        }
    }
    assert_same_files(
        &plain.area.shared,
        &area.shared,
        &format!("{what}: shared files"),
        &|name: &str| name.starts_with("fd.") && !name.ends_with(".again"),
    );
}

#[test]
fn at_the_descriptor_limit_every_replica_opens_what_the_plain_run_opens_mpich() {
    at_the_descriptor_limit_like_plain(Mpi::Mpich);
}

#[test]
fn at_the_descriptor_limit_every_replica_opens_what_the_plain_run_opens_openmpi() {
    at_the_descriptor_limit_like_plain(Mpi::OpenMpi);
}
