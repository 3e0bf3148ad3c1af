//! Several ranks write disjoint regions of one shared file under
//! `write: distributed-separate` (`tests/programs/shared_writers.c`).

use crate::common::{compile, fresh_dir, redio_bin, Job, Launch, Mpi};
use crate::support::{assert_same_files, check_success, no_skip};
use crate::{assert_stdout_like_plain, write_config};
use redio::join::{index_path, lock_part, part_path, rank_part_path, Record};
use std::os::unix::fs::FileExt;
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};

const TIMEOUT: u32 = 180;
/// MiB each rank writes.
const MIB: u32 = 3;
/// Runs of each case: the lost data showed in 3 of 12 runs.
const REPEATS: u32 = 3;

/// A fresh `shared/` directory and a configuration declaring it shared,
/// written with Distributed Separate Write.
fn area(name: &str) -> (PathBuf, PathBuf) {
    let root = fresh_dir(&format!("parts/{name}")).canonicalize().unwrap();
    let shared = root.join("shared");
    std::fs::create_dir_all(&shared).unwrap();
    let config = root.join("redio.yaml");
    write_config(&config, &shared, "{write: distributed-separate}");
    (shared, config)
}

fn plain(mpi: Mpi, ranks: u32, shared: &Path, extra: &[&str]) -> Job {
    let exe = compile(mpi, "shared_writers");
    let job = Launch::plain(mpi, ranks, &exe)
        .args([shared.display().to_string(), MIB.to_string()])
        .args(extra.iter().copied())
        .timeout(TIMEOUT)
        .run();
    check_success(&job, &format!("plain run of shared_writers, {ranks} ranks"));
    job
}

fn replicated(
    mpi: Mpi,
    ranks: u32,
    degree: u32,
    shared: &Path,
    config: &Path,
    extra: &[&str],
) -> Job {
    let exe = compile(mpi, "shared_writers");
    Launch::redio(mpi, ranks, degree, "block", &exe)
        .config(config)
        .args([shared.display().to_string(), MIB.to_string()])
        .args(extra.iter().copied())
        .timeout(TIMEOUT)
        .run()
}

fn several_ranks_write_one_file(mpi: Mpi) {
    for (ranks, degree) in [(3, 2), (2, 3)] {
        let (plain_shared, _) = area(&format!("{}-plain-{ranks}", mpi.key()));
        let reference = plain(mpi, ranks, &plain_shared, &[]);
        for run in 0..REPEATS {
            let what = format!(
                "{} ranks x r={degree} under {}, distributed-separate, run {run}",
                ranks,
                mpi.key()
            );
            let (shared, config) = area(&format!("{}-{ranks}x{degree}-{run}", mpi.key()));
            let job = replicated(mpi, ranks, degree, &shared, &config, &[]);
            check_success(&job, &what);
            assert!(
                !job.stderr.contains("left by an earlier run"),
                "{what}: a rank took live parts of this run for an earlier run's:\n{}",
                job.stderr
            );
            assert!(
                job.stderr.contains("coordinated shared-file operations")
                    && !job.stderr.contains(" 0 coordinated shared-file operations"),
                "{what}: the writes must be coordinated:\n{}",
                job.stderr
            );
            assert_stdout_like_plain(&reference, &job, ranks, degree, &what);
            // The same names (no part left behind) and the same bytes.
            assert_same_files(&plain_shared, &shared, &what, &no_skip);
        }
    }
}

#[test]
fn several_ranks_write_one_file_with_distributed_separate_mpich() {
    several_ranks_write_one_file(Mpi::Mpich);
}

#[test]
fn several_ranks_write_one_file_with_distributed_separate_openmpi() {
    several_ranks_write_one_file(Mpi::OpenMpi);
}

/// Writes a part file and its index: `pieces` are (seq, bytes, offset).
fn make_part(part: &Path, pieces: &[(u64, &[u8], u64)]) {
    let file = std::fs::File::create(part).unwrap();
    let mut index = Vec::new();
    for &(seq, data, offset) in pieces {
        file.write_all_at(data, offset).unwrap();
        let len = data.len() as u64;
        index.extend_from_slice(&Record { seq, offset, len }.encode());
    }
    std::fs::write(index_path(part), index).unwrap();
}

/// The `rank …` lines of a process's output (rank 0's whole-file line
/// differs when an earlier run's tail is joined).
fn region_lines(out: &str) -> Vec<&str> {
    out.lines().filter(|l| l.starts_with("rank ")).collect()
}

fn earlier_runs(mpi: Mpi) {
    let (ranks, degree) = (2u32, 2u32);
    let end = u64::from(ranks * MIB) << 20;
    let (plain_shared, _) = area(&format!("{}-stale-plain", mpi.key()));
    let reference = plain(mpi, ranks, &plain_shared, &["keep"]);
    let plain_file = std::fs::read(plain_shared.join("shared.dat")).unwrap();

    let (shared, config) = area(&format!("{}-stale", mpi.key()));
    let file = shared.join("shared.dat");
    // Left by a redio that named parts by replica only: its piece is
    // overwritten by this run's rank 0.
    let legacy = part_path(&file, 0);
    make_part(&legacy, &[(3, &[b'L'; 4096], 0)]);
    // Left by an earlier run (rank 0, replica 1): a tail only it wrote.
    let earlier = rank_part_path(&file, 0xaa, 0, 1);
    make_part(&earlier, &[(1, &[b'T'; 100], end)]);
    // Held by a job still running (this test holds the part's lock).
    let live = rank_part_path(&file, 0xbb, 1, 0);
    make_part(&live, &[(1, &[b'H'; 50], end + 100)]);
    let holder = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(&live)
        .unwrap();
    assert!(lock_part(holder.as_raw_fd()).unwrap());

    // 1. Opened without O_TRUNC: the earlier parts are joined in place
    //    before this run writes; the held part is left alone.
    let what = format!(
        "{}: parts of earlier runs, file opened without O_TRUNC",
        mpi.key()
    );
    let job = replicated(mpi, ranks, degree, &shared, &config, &["keep"]);
    check_success(&job, &what);
    for (&world, out) in &job.ranks {
        assert_eq!(
            region_lines(out),
            region_lines(&reference.ranks[&(world % ranks)]),
            "{what}: world rank {world}"
        );
    }
    assert!(
        job.stderr.contains("joined 2 parts left by an earlier run"),
        "{what}: the leader reports the join:\n{}",
        job.stderr
    );
    let mut expected = plain_file.clone();
    expected.extend_from_slice(&[b'T'; 100]);
    let got = std::fs::read(&file).unwrap();
    assert!(
        got == expected,
        "{what}: the file must be the plain run's plus the earlier run's tail \
         ({} bytes, got {})",
        expected.len(),
        got.len()
    );
    assert!(!legacy.exists() && !index_path(&legacy).exists(), "{what}");
    assert!(
        !earlier.exists() && !index_path(&earlier).exists(),
        "{what}"
    );
    assert!(
        live.exists() && index_path(&live).exists(),
        "{what}: a held part is not touched"
    );

    // 2. Opened with O_TRUNC: earlier parts are dropped; the held one stays.
    let what = format!(
        "{}: parts of earlier runs, file opened with O_TRUNC",
        mpi.key()
    );
    make_part(&legacy, &[(3, &[b'L'; 4096], 0)]);
    make_part(&earlier, &[(1, &[b'T'; 100], end)]);
    let job = replicated(mpi, ranks, degree, &shared, &config, &[]);
    check_success(&job, &what);
    assert_stdout_like_plain(&reference, &job, ranks, degree, &what);
    assert!(
        std::fs::read(&file).unwrap() == plain_file,
        "{what}: the file must be the plain run's"
    );
    assert!(!legacy.exists() && !earlier.exists(), "{what}: dropped");
    assert!(live.exists(), "{what}: a held part is not touched");

    // 3. `redio join` refuses while the part is held, and joins it after.
    let join = || {
        std::process::Command::new(redio_bin())
            .arg("join")
            .arg(&file)
            .output()
            .unwrap()
    };
    let refused = join();
    assert!(!refused.status.success());
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(stderr.contains("held by a running job"), "{stderr}");
    assert!(
        std::fs::read(&file).unwrap() == plain_file,
        "nothing written"
    );
    drop(holder);
    let joined = join();
    assert!(
        joined.status.success(),
        "{}",
        String::from_utf8_lossy(&joined.stderr)
    );
    let got = std::fs::read(&file).unwrap();
    assert_eq!(got.len() as u64, end + 150);
    assert!(got[..plain_file.len()] == plain_file[..]);
    assert!(got[plain_file.len() + 100..].iter().all(|&b| b == b'H'));
    assert!(!live.exists() && !index_path(&live).exists());
}

#[test]
fn parts_of_earlier_runs_are_joined_or_dropped_and_held_ones_left_alone_mpich() {
    earlier_runs(Mpi::Mpich);
}

#[test]
fn parts_of_earlier_runs_are_joined_or_dropped_and_held_ones_left_alone_openmpi() {
    earlier_runs(Mpi::OpenMpi);
}
