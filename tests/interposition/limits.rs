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
//!   sockets) counted against the limit and the replicas ran out at
//!   different opens: a follower fell back to a placeholder, the next
//!   calls diverged and failed with `EIO` (MPICH: "opened 994 files, then
//!   open: -1 EIO"; the issue saw such a job end with exit 75).
//! - `io_fullfs.c`: rank 0 writes to a file on a 2 MiB file system of its
//!   own (a tmpfs mounted for the test) until a write fails, under
//!   Distributed Separate Write. Every replica must see the failing write
//!   fail with `ENOSPC` as the plain run does, `fsync` and `close` succeed,
//!   and every byte a write acknowledged must be in the file, with no part
//!   file left behind. Before, the writes filled the hidden part files, and
//!   the join at `fsync` found no room for a second copy: `fsync` and
//!   `close` failed with `EIO`, the file had 0 bytes and the data stayed in
//!   the parts.

use crate::common::{compile_flavour, Flavour, Launch, Mpi};
use crate::matrix::replicas_match_plain;
use crate::support::{
    assert_same_files, check_success, first_difference, reference, replicated, Area, RANKS, TIMEOUT,
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

const FULL_FS: &str = "io/io_fullfs.c";

/// A tmpfs of `size` mounted on `dir` for one test, unmounted when dropped.
struct Mounted(std::path::PathBuf);

impl Mounted {
    fn tmpfs(dir: &std::path::Path, size: &str) -> Mounted {
        let status = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(dir)
            .status()
            .expect("cannot run mount");
        assert!(
            status.success(),
            "mount -t tmpfs on {} failed (root?)",
            dir.display()
        );
        Mounted(dir.to_path_buf())
    }
}

impl Drop for Mounted {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount").arg(&self.0).status();
    }
}

/// The lines of rank 0's log about the outcome (all but the block count).
fn outcome_lines(out: &str) -> Vec<&str> {
    out.lines()
        .filter(|l| !l.starts_with("blocks written"))
        .collect()
}

/// The count in "blocks written: N".
fn blocks_written(out: &str) -> i64 {
    out.lines()
        .find_map(|l| l.strip_prefix("blocks written: "))
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no block count in {out:?}"))
}

/// Distributed Separate Write on a full file system under `mpi`, r = 2:
/// the failing write fails with `ENOSPC` on every replica as in the plain
/// run, nothing that succeeded lies (`fsync`, `close`, every acknowledged
/// byte in the file), and no part file is left behind.
fn full_file_system_like_plain(mpi: Mpi) {
    let exe = compile_flavour(mpi, FULL_FS, Flavour::O0);
    let plain_area = Area::new(&format!("{}-fullfs-plain", mpi.key()), false);
    let plain = {
        let _fs = Mounted::tmpfs(&plain_area.shared, "2m");
        Launch::plain(mpi, RANKS, &exe)
            .args(plain_area.args())
            .timeout(TIMEOUT)
            .run()
    };
    check_success(&plain, "plain io_fullfs");
    let expected = outcome_lines(&plain.ranks[&0]);
    assert!(
        expected.contains(&"shared the first failing write: -1 ENOSPC"),
        "the plain run must fill the file system:\n{plain:#?}"
    );
    let area = Area::new(&format!("{}-fullfs-dsw-r2", mpi.key()), true);
    let yaml = std::fs::read_to_string(&area.config)
        .unwrap()
        .replace("write: simple", "write: distributed-separate");
    std::fs::write(&area.config, yaml).unwrap();
    let what = &format!("io_fullfs under distributed-separate, {mpi:?}, r=2");
    let (job, left) = {
        let _fs = Mounted::tmpfs(&area.shared, "2m");
        let job = replicated(mpi, &exe, &area, (2, "block"), &[], &[]);
        let mut left: Vec<String> = std::fs::read_dir(&area.shared)
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        left.sort();
        (job, left)
    };
    check_success(&job, what);
    let plain_blocks = blocks_written(&plain.ranks[&0]);
    for world in [0, RANKS] {
        let out = &job.ranks[&world];
        assert_eq!(
            outcome_lines(out),
            expected,
            "{what}: world rank {world} (rank 0) must see what the plain run saw:\n{}",
            job.stderr
        );
        let blocks = blocks_written(out);
        assert!(
            blocks <= plain_blocks,
            "{what}: world rank {world} wrote {blocks} blocks, more than fit ({plain_blocks})"
        );
    }
    assert_eq!(
        job.ranks[&0], job.ranks[&RANKS],
        "{what}: both replicas of rank 0 must fail the same write"
    );
    assert_eq!(left, ["full.dat"], "{what}: files left on the file system");
}

#[test]
fn a_full_file_system_fails_the_write_on_every_replica_like_plain_mpich() {
    full_file_system_like_plain(Mpi::Mpich);
}

#[test]
fn a_full_file_system_fails_the_write_on_every_replica_like_plain_openmpi() {
    full_file_system_like_plain(Mpi::OpenMpi);
}
