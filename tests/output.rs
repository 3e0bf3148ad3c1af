//! What a user sees on stdout and stderr under redio (issue 18, "output
//! once"): by default each application line once, whole, as in a plain
//! run; with `--output all` every replica's lines, prefixed; replicas
//! whose stdout differs are reported; a death of the printing replica
//! loses no line and repeats none. Real mpiexec, MPICH and Open MPI 4.1.
//!
//! The program is `tests/programs/output.c`. Except where a test says so,
//! the job's output is read as the launcher prints it (`Launch::combined`),
//! not from per-process files.

mod common;

use common::{compile, Job, Launch, Mpi};
use std::io::Write;
use std::process::{Command, Stdio};

const RANKS: u32 = 3;

/// The lines of `text` that logical rank `rank` printed (they start with
/// `rank R `), in order.
fn lines_of(text: &str, rank: u32) -> Vec<&str> {
    let prefix = format!("rank {rank} ");
    text.lines().filter(|l| l.starts_with(&prefix)).collect()
}

/// The plain run's per-rank stdout (from per-process files).
fn plain(mpi: Mpi, args: &[&str]) -> Job {
    let exe = compile(mpi, "output");
    let job = Launch::plain(mpi, RANKS, &exe)
        .args(args.iter().copied())
        .run();
    job.assert_success();
    assert_eq!(job.ranks.len() as u32, RANKS, "{job:#?}");
    job
}

fn summary_of(path: &std::path::Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// Default output: each rank's lines equal the plain run's, in order, each
/// once; the stderr lines of the application once too; redio's own lines
/// from every process still there; no divergence.
fn once_matches_the_plain_run(mpi: Mpi, configurations: &[(u32, &str)]) {
    let exe = compile(mpi, "output");
    let plain = plain(mpi, &["lines", "120"]);
    for &(degree, layout) in configurations {
        let dir = common::fresh_dir("output-once");
        let summary = dir.join("summary.json");
        let job = Launch {
            redio_args: vec!["--summary".into(), summary.display().to_string()],
            ..Launch::redio(mpi, RANKS, degree, layout, &exe)
                .args(["lines", "120"])
                .output("once")
                .combined()
                .env("REDIO_LOG_LEVEL", "debug")
        }
        .run();
        job.assert_success();
        let what = format!("{mpi:?} r={degree} {layout}");
        let mut total = 0;
        for rank in 0..RANKS {
            let expected: Vec<&str> = plain.ranks[&rank].lines().collect();
            assert_eq!(expected.len(), 120);
            assert_eq!(lines_of(&job.stdout, rank), expected, "{what}: rank {rank}");
            total += expected.len();
            let errs: Vec<&str> = job
                .stderr
                .lines()
                .filter(|l| l.starts_with(&format!("rank {rank}: err")))
                .collect();
            let expected: Vec<String> = (1..=12)
                .map(|i| format!("rank {rank}: err {}", i * 10))
                .collect();
            assert_eq!(errs, expected, "{what}: stderr of rank {rank}");
        }
        // Nothing else, and no line split: every line is one of the above.
        assert_eq!(job.stdout.lines().count(), total, "{what}:\n{}", job.stdout);
        assert!(job.stdout.ends_with('\n'));
        // redio's own lines pass from every process.
        for world in 0..RANKS * degree {
            assert!(
                job.stderr.contains(&format!("redio[world {world}")),
                "{what}: no diagnostic of world rank {world} on stderr:\n{}",
                job.stderr
            );
        }
        assert!(!job.stderr.contains("diverge"), "{what}:\n{}", job.stderr);
        assert_eq!(
            summary_of(&summary)["output_divergences"],
            serde_json::json!([]),
            "{what}"
        );
    }
}

#[test]
fn each_line_comes_once_as_in_a_plain_run_mpich() {
    once_matches_the_plain_run(Mpi::Mpich, &[(2, "block"), (3, "cyclic")]);
}

#[test]
fn each_line_comes_once_as_in_a_plain_run_openmpi() {
    once_matches_the_plain_run(Mpi::OpenMpi, &[(2, "cyclic"), (3, "block")]);
}

/// `--output all`: every replica's lines, each prefixed with its replica,
/// each replica's in the plain run's order.
fn all_prefixes_every_replica(mpi: Mpi, degree: u32, layout: &str) {
    let exe = compile(mpi, "output");
    let plain = plain(mpi, &["lines", "30"]);
    let job = Launch::redio(mpi, RANKS, degree, layout, &exe)
        .args(["lines", "30"])
        .output("all")
        .combined()
        .run();
    job.assert_success();
    let mut total = 0;
    for replica in 0..degree {
        let prefix = format!("[replica {replica}] ");
        let mine: String = job
            .stdout
            .lines()
            .filter_map(|l| l.strip_prefix(&prefix))
            .map(|l| format!("{l}\n"))
            .collect();
        for rank in 0..RANKS {
            let expected: Vec<&str> = plain.ranks[&rank].lines().collect();
            assert_eq!(
                lines_of(&mine, rank),
                expected,
                "{mpi:?} r={degree} {layout}: replica {replica} rank {rank}"
            );
            total += expected.len();
        }
        assert_eq!(
            job.stderr
                .lines()
                .filter(|l| l.starts_with(&format!("{prefix}rank ")) && l.contains(": err "))
                .count(),
            (RANKS * 3) as usize,
            "{}",
            job.stderr
        );
    }
    assert_eq!(job.stdout.lines().count(), total, "{}", job.stdout);
}

#[test]
fn output_all_gives_every_replica_prefixed_mpich() {
    all_prefixes_every_replica(Mpi::Mpich, 3, "cyclic");
}

#[test]
fn output_all_gives_every_replica_prefixed_openmpi() {
    all_prefixes_every_replica(Mpi::OpenMpi, 2, "block");
}

/// Replica 1 of rank 1 prints something else as its line 3: reported on
/// stderr and in the summary, with both versions of the line; the output
/// itself is the reference replica's.
fn diverging_replicas_are_reported(mpi: Mpi, degree: u32, layout: &str) {
    let exe = compile(mpi, "output");
    let dir = common::fresh_dir("output-diverge");
    let summary = dir.join("summary.json");
    let job = Launch {
        redio_args: vec!["--summary".into(), summary.display().to_string()],
        ..Launch::redio(mpi, RANKS, degree, layout, &exe)
            .args(["diverge"])
            .output("once")
            .combined()
    }
    .run();
    assert_eq!(job.code, Some(0), "{job:#?}");
    assert!(
        job.stderr.contains(
            "redio run: warning: replicas diverge: the stdout of rank 1 replica 1 differs from \
             replica 0 at line 3: replica 0 printed \"rank 1 line 3 of 5\", replica 1 printed \
             \"rank 1 line 3: something else\""
        ),
        "{}",
        job.stderr
    );
    assert_eq!(
        summary_of(&summary)["output_divergences"],
        serde_json::json!([{
            "rank": 1, "replica": 1, "reference": 0, "stream": "stdout", "line": 3,
            "expected": "rank 1 line 3 of 5", "found": "rank 1 line 3: something else"
        }]),
        "{mpi:?} r={degree}"
    );
    assert_eq!(job.stdout.matches("rank 1 line 3 of 5\n").count(), 1);
    assert!(!job.stdout.contains("something else"), "{}", job.stdout);
}

#[test]
fn diverging_replicas_are_reported_mpich() {
    diverging_replicas_are_reported(Mpi::Mpich, 2, "block");
}

#[test]
fn diverging_replicas_are_reported_openmpi() {
    diverging_replicas_are_reported(Mpi::OpenMpi, 3, "cyclic");
}

/// A 100000-byte line and a last line without a newline come out whole,
/// once (default), and whole in every replica's output (`--output all`).
fn long_and_unterminated_lines(mpi: Mpi, degree: u32, layout: &str) {
    let exe = compile(mpi, "output");
    let long: String = (0..100_000u32)
        .map(|i| char::from(b'a' + (i % 26) as u8))
        .collect();
    let expected = format!("{long}\nrank 0 last line without newline");
    let job = Launch::redio(mpi, RANKS, degree, layout, &exe)
        .args(["long"])
        .output("once")
        .combined()
        .run();
    job.assert_success();
    assert!(
        job.stdout == expected,
        "{mpi:?} r={degree}: {} bytes, expected {}; ends with {:?}",
        job.stdout.len(),
        expected.len(),
        &job.stdout[job.stdout.len().saturating_sub(80)..]
    );
    let job = Launch::redio(mpi, RANKS, degree, layout, &exe)
        .args(["long"])
        .run();
    job.assert_success();
    let topology = redio::topology::Topology::regular(
        RANKS * degree,
        degree,
        if layout == "cyclic" {
            redio::topology::LayoutKind::Cyclic
        } else {
            redio::topology::LayoutKind::Block
        },
    )
    .unwrap();
    for (world, out) in &job.ranks {
        let place = topology.place(*world);
        if place.rank == 0 {
            assert!(out == &expected, "world rank {world}: {} bytes", out.len());
            assert_eq!(job.replicas[world], place.replica);
        } else {
            assert!(out.is_empty(), "world rank {world}: {out}");
        }
    }
}

#[test]
fn a_long_line_and_a_last_line_without_newline_come_out_whole_once_mpich() {
    long_and_unterminated_lines(Mpi::Mpich, 2, "block");
}

#[test]
fn a_long_line_and_a_last_line_without_newline_come_out_whole_once_openmpi() {
    long_and_unterminated_lines(Mpi::OpenMpi, 3, "cyclic");
}

/// stdin, which the launcher gives world rank 0 only, reaches every
/// replica of rank 0: the output is the plain run's, once, and no replica
/// diverges (without the copy, replica 1 read nothing, or under MPICH
/// waited forever).
fn stdin_reaches_every_replica_of_rank_zero(mpi: Mpi, degree: u32) {
    let exe = compile(mpi, "output");
    let _machine = common::launch_lock();
    let mut child = Command::new("timeout")
        .args(["-k", "5", "90"])
        .arg(common::redio_bin())
        .args([
            "run",
            "--mpi",
            mpi.key(),
            "-n",
            "2",
            "-r",
            &degree.to_string(),
        ])
        .arg("--")
        .arg(&exe)
        .arg("stdin")
        .env_remove("REDIO_CONFIG")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"hello\nworld\n")
        .unwrap();
    let output = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{mpi:?}: {stderr}");
    assert_eq!(
        String::from_utf8_lossy(&output.stdout),
        "got: hello\ngot: world\n",
        "{mpi:?} r={degree}: {stderr}"
    );
    assert!(!stderr.contains("diverge"), "{stderr}");
}

#[test]
fn stdin_reaches_every_replica_of_rank_zero_mpich() {
    stdin_reaches_every_replica_of_rank_zero(Mpi::Mpich, 3);
}

#[test]
fn stdin_reaches_every_replica_of_rank_zero_openmpi() {
    stdin_reaches_every_replica_of_rank_zero(Mpi::OpenMpi, 2);
}

/// The fail-over experiment (docs/fault-tolerance.md, "Output at a
/// fail-over"): replica 0 of rank 0, the printer, SIGKILLs itself right
/// after its line 7 of 20 (flushed); its replica is retired, so the
/// printer of every rank dies. The survivors take over: each rank's lines
/// come out complete, in order, none twice.
fn a_printer_death_loses_no_line(mpi: Mpi, configurations: &[(u32, &str)], trials: u32) {
    let exe = compile(mpi, "output");
    for &(degree, layout) in configurations {
        for trial in 0..trials {
            let job = Launch::redio(mpi, 2, degree, layout, &exe)
                .args(["die", "20", "7"])
                .output("once")
                .combined()
                .run();
            let what = format!("{mpi:?} r={degree} {layout} trial {trial}");
            assert_eq!(job.code, Some(0), "{what}: {job:#?}");
            assert!(
                job.stderr
                    .contains("failed: world rank 0 (replica 0, rank 0): killed by a signal"),
                "{what}: {}",
                job.stderr
            );
            for rank in 0..2 {
                let expected: Vec<String> =
                    (1..=20).map(|i| format!("rank {rank} line {i}")).collect();
                assert_eq!(
                    lines_of(&job.stdout, rank),
                    expected,
                    "{what}: rank {rank}:\n{}",
                    job.stderr
                );
            }
            assert_eq!(job.stdout.lines().count(), 40, "{what}:\n{}", job.stdout);
            // The retired and dead replicas' shorter streams are no divergence.
            assert!(!job.stderr.contains("diverge"), "{what}:\n{}", job.stderr);
        }
    }
}

/// The same with 100-byte lines in a 4096-byte stdio buffer the
/// application never flushes: the pipe gets blocks that end in the middle
/// of a line, and the victim's last block dies with it (a plain run would
/// lose those lines). The printer's unfinished last line is not printed;
/// the survivor prints it whole, and the lines the victim never wrote.
///
/// Open MPI's launcher reads each process's stdout in chunks of up to 4096
/// bytes (`ORTE_IOF_BASE_MSG_MAX`) and passes each chunk on whole, so when
/// more than that waits (the launcher starved on a loaded machine) a chunk
/// ends inside a line and another process's chunk can follow it, with or
/// without redio: a clean-clone run once printed `rank 0 line 43 000…` cut
/// after 4095 bytes of rank 0's stream, then rank 1's line 1. Under Open MPI the test therefore
/// reads each process's stream from its own file (`--output-filename`) and
/// joins the streams of a rank's replicas, printer first.
fn a_printer_death_with_unflushed_output(mpi: Mpi, degree: u32, layout: &str) {
    let exe = compile(mpi, "output");
    let launch = Launch::redio(mpi, 2, degree, layout, &exe)
        .args(["die", "200", "120", "buffered"])
        .output("once");
    let per_process = mpi == Mpi::OpenMpi;
    let job = if per_process {
        launch
    } else {
        launch.combined()
    }
    .run();
    assert_eq!(job.code, Some(0), "{job:#?}");
    for rank in 0..2 {
        let expected: Vec<String> = (1..=200)
            .map(|i| format!("rank {rank} line {i} {i:080}"))
            .collect();
        let stream = if per_process {
            replicas_joined(&job, rank)
        } else {
            job.stdout.clone()
        };
        assert_eq!(lines_of(&stream, rank), expected, "{mpi:?} rank {rank}");
        if per_process {
            let count = stream.lines().count();
            assert_eq!(count, 200, "{mpi:?} rank {rank}:\n{stream}");
        }
    }
    if !per_process {
        assert_eq!(job.stdout.lines().count(), 400, "{}", job.stdout);
    }
    assert!(!job.stderr.contains("diverge"), "{}", job.stderr);
}

/// The stdout of every process that printed lines of logical rank `rank`,
/// joined in the order of their first line: the printer's, then the
/// survivor's that took over.
fn replicas_joined(job: &Job, rank: u32) -> String {
    let first_line = |text: &str| -> Option<u32> {
        let line = lines_of(text, rank).into_iter().next()?;
        line.split(' ').nth(3)?.parse().ok()
    };
    let mut streams: Vec<(u32, &String)> = job
        .ranks
        .values()
        .filter_map(|text| Some((first_line(text)?, text)))
        .collect();
    streams.sort();
    streams.iter().map(|(_, text)| text.as_str()).collect()
}

#[test]
fn a_printer_death_with_unflushed_output_loses_no_line_mpich() {
    a_printer_death_with_unflushed_output(Mpi::Mpich, 2, "block");
    a_printer_death_with_unflushed_output(Mpi::Mpich, 3, "cyclic");
}

#[test]
fn a_printer_death_with_unflushed_output_loses_no_line_openmpi() {
    a_printer_death_with_unflushed_output(Mpi::OpenMpi, 2, "cyclic");
}

#[test]
fn a_printer_death_loses_no_line_and_repeats_none_mpich() {
    a_printer_death_loses_no_line(Mpi::Mpich, &[(2, "block"), (3, "cyclic")], 2);
}

#[test]
fn a_printer_death_loses_no_line_and_repeats_none_openmpi() {
    a_printer_death_loses_no_line(Mpi::OpenMpi, &[(2, "cyclic"), (3, "block")], 2);
}

/// A follower that crashes: its last stderr line, which the printer never
/// printed, is shown once, marked with its replica; the output is whole.
fn a_crashing_follower_shows_its_message(mpi: Mpi) {
    let exe = compile(mpi, "output");
    let job = Launch::redio(mpi, 2, 2, "block", &exe)
        .args(["crash"])
        .output("once")
        .combined()
        .run();
    assert_eq!(job.code, Some(0), "{job:#?}");
    assert_eq!(
        job.stderr
            .matches("[replica 1] rank 0: replica 1 crashes here\n")
            .count(),
        1,
        "{mpi:?}:\n{}",
        job.stderr
    );
    for rank in 0..2 {
        let expected: Vec<String> = (1..=3).map(|i| format!("rank {rank} line {i}")).collect();
        assert_eq!(lines_of(&job.stdout, rank), expected, "{mpi:?}");
    }
    assert_eq!(job.stdout.lines().count(), 6, "{}", job.stdout);
}

#[test]
fn a_crashing_follower_shows_its_message_mpich() {
    a_crashing_follower_shows_its_message(Mpi::Mpich);
}

#[test]
fn a_crashing_follower_shows_its_message_openmpi() {
    a_crashing_follower_shows_its_message(Mpi::OpenMpi);
}
