//! A copy per replica (one server per replica): `remap` sends each replica
//! of a shared path to its own storage. A C program writes one file per
//! rank under `redio run`, and every replica's copy is checked byte by
//! byte: each replica creates (and truncates) its own copy, even a replica
//! whose storage held nothing or a stale, longer file; `none` gives every
//! copy all the data; Distributed Write spreads the data so that every
//! byte is in exactly one copy and the others have a hole there.

mod common;

use common::{compile, fresh_dir, Job, Launch, Mpi};
use std::path::{Path, PathBuf};

/// Bytes per file: several chunks and an odd tail.
const SIZE: usize = 7 * CHUNK + 3;
/// `io.chunk_size`.
const CHUNK: usize = 4096;
/// Bytes per write call: not a multiple of the chunk.
const BLOCK: usize = 10_000;
const RANKS: u32 = 2;

/// Byte `i` of rank `rank`'s file, as `per_replica.c` writes it (never 0).
fn expected(rank: u32, i: usize) -> u8 {
    1 + ((i * 131 + i / 251 + rank as usize) % 255) as u8
}

/// Runs the program at `degree` with write protocol `write` and open mode
/// `mode`; before the run, `stale` writes a longer file of 0xEE bytes into
/// the copies of the replicas it names. Returns the copies directory.
fn run(name: &str, degree: u32, write: &str, mode: &str, stale: &[u32]) -> PathBuf {
    let (copies, job) = launch(name, degree, write, mode, stale, None);
    job.assert_success();
    assert!(
        !job.stderr.contains("placeholder"),
        "{name}: a replica could not open its own copy:\n{}",
        job.stderr
    );
    copies
}

/// [`run`] without the checks, and with the storage directory of replica
/// `missing` not created.
fn launch(
    name: &str,
    degree: u32,
    write: &str,
    mode: &str,
    stale: &[u32],
    missing: Option<u32>,
) -> (PathBuf, Job) {
    let root = fresh_dir(&format!("per-replica-{name}"));
    let app = root.join("app");
    let copies = root.join("copies");
    std::fs::create_dir_all(&app).unwrap();
    for replica in (0..degree).filter(|&r| Some(r) != missing) {
        std::fs::create_dir_all(copies.join(format!("r{replica}"))).unwrap();
    }
    for &replica in stale {
        for rank in 0..RANKS {
            let path = copy_path(&copies, replica, rank);
            std::fs::write(path, vec![0xEE; 2 * SIZE]).unwrap();
        }
    }
    let config = root.join("redio.yaml");
    std::fs::write(
        &config,
        format!(
            "version: 1\nshared:\n  paths: [\"{a}\", \"{c}\"]\nremap:\n  - prefix: \"{a}\"\n    \
             to: \"{c}/r{{replica}}\"\nio:\n  write: {write}\n  chunk_size: {CHUNK}\n",
            a = app.display(),
            c = copies.display()
        ),
    )
    .unwrap();
    let exe = compile(Mpi::Mpich, "per_replica");
    let job = Launch::redio(Mpi::Mpich, RANKS, degree, "block", &exe)
        .config(&config)
        .args([
            app.display().to_string(),
            SIZE.to_string(),
            BLOCK.to_string(),
            mode.to_string(),
        ])
        .timeout(60)
        .run();
    (copies, job)
}

fn copy_path(copies: &Path, replica: u32, rank: u32) -> PathBuf {
    copies.join(format!("r{replica}/copy.{rank}"))
}

/// Every replica's copy of every rank's file: it exists, is no longer than
/// the data, and holds each byte either correctly or as a hole (0). Returns
/// per rank and offset how many copies hold the byte.
fn holders(name: &str, copies: &Path, degree: u32) -> Vec<Vec<u32>> {
    let mut count = vec![vec![0u32; SIZE]; RANKS as usize];
    for replica in 0..degree {
        for rank in 0..RANKS {
            let path = copy_path(copies, replica, rank);
            let bytes =
                std::fs::read(&path).unwrap_or_else(|e| panic!("{name}: {}: {e}", path.display()));
            assert!(
                bytes.len() <= SIZE,
                "{name}: {} is {} bytes, longer than the {SIZE} written (stale data kept)",
                path.display(),
                bytes.len()
            );
            for (i, &b) in bytes.iter().enumerate() {
                if b == expected(rank, i) {
                    count[rank as usize][i] += 1;
                } else {
                    assert_eq!(
                        b,
                        0,
                        "{name}: {} byte {i} is {b:#x}, neither the data nor a hole",
                        path.display()
                    );
                }
            }
        }
    }
    count
}

#[test]
fn none_gives_every_replica_a_full_copy_and_truncates_stale_ones() {
    for degree in [2, 3] {
        let name = format!("none-r{degree}");
        let copies = run(&name, degree, "none", "trunc", &[degree - 1]);
        for (rank, counts) in holders(&name, &copies, degree).iter().enumerate() {
            let short = counts.iter().filter(|&&c| c != degree).count();
            assert_eq!(
                short, 0,
                "{name}: rank {rank}: {short} bytes not in every copy"
            );
        }
    }
}

#[test]
fn distributed_write_puts_every_byte_in_exactly_one_replicas_copy() {
    for degree in [2, 3] {
        for mode in ["trunc", "excl"] {
            let name = format!("distributed-r{degree}-{mode}");
            // A stale copy on the last replica: O_EXCL succeeded on the
            // leader, so the file is new, and no stale byte may remain.
            let copies = run(&name, degree, "distributed", mode, &[degree - 1]);
            for (rank, counts) in holders(&name, &copies, degree).iter().enumerate() {
                let wrong = counts.iter().filter(|&&c| c != 1).count();
                assert_eq!(
                    wrong, 0,
                    "{name}: rank {rank}: {wrong} bytes not in exactly one copy"
                );
            }
            // Spread: every replica's copy holds some of the data.
            for replica in 0..degree {
                let bytes = std::fs::read(copy_path(&copies, replica, 0)).unwrap();
                assert!(
                    bytes.iter().any(|&b| b != 0),
                    "{name}: replica {replica}'s copy holds no data"
                );
            }
        }
    }
}

/// A replica whose storage lacks the directory cannot create its copy:
/// the open fails with ENOENT on every replica (its share of the data
/// would otherwise be lost), as the program reports from each of them.
#[test]
fn an_open_that_fails_on_one_replicas_storage_fails_on_every_replica() {
    let degree = 2;
    let (copies, job) = launch("missing", degree, "distributed", "trunc", &[], Some(1));
    assert_eq!(
        job.code,
        Some(3),
        "the program should see its open fail:\n{}",
        job.stderr
    );
    let app = copies.parent().unwrap().join("app");
    for rank in 0..RANKS {
        let line = format!(
            "open {}: No such file or directory",
            app.join(format!("copy.{rank}")).display()
        );
        let seen = job.stderr.matches(&line).count();
        assert_eq!(
            seen, degree as usize,
            "every replica of rank {rank} should report `{line}`:\n{}",
            job.stderr
        );
    }
}
