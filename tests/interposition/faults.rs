//! Fault injection: flipped buffers corrected with three replicas and
//! detected with two, the `on_mismatch` policies, errno agreement under
//! every protocol, and replicas that issue different calls (divergence).

use crate::common::{compile_flavour, Flavour, Job, Mpi};
use crate::support::{
    assert_local_copies, assert_same_files, assert_stdout_matches, check_success, lines_with,
    no_skip, reference, replicated, Area, DIVERGE, FAULTS, RANKS,
};
use redio::topology::LayoutKind;

/// `io_faults` under redio with `env`, against a plain run that prints what
/// the fault must produce (`simulate`: none when redio corrects it).
fn fault_case(
    name: &str,
    degree: u32,
    env: &[(&str, &str)],
    simulate: Option<&str>,
) -> (Job, Area) {
    let mpi = Mpi::Mpich;
    let exe = compile_flavour(mpi, FAULTS, Flavour::Fortify);
    let extra: Vec<&str> = simulate.into_iter().collect();
    let plain = reference(mpi, FAULTS, Flavour::Fortify, &extra);
    let what = format!("io_faults r={degree} with {env:?}");
    let area = Area::new(&format!("faults-{name}-r{degree}"), true);
    let extra: Vec<String> = Vec::new();
    let job = replicated(mpi, &exe, &area, (degree, "block"), &extra, env);
    match simulate {
        // Whether a fault is a divergence nothing corrects depends on the
        // protocol (an errno the reader shares with the others is none).
        Some(_) if job.code == Some(75) => check_diverged(&job, &what),
        _ => check_success(&job, &what),
    }
    let expectation = match simulate {
        None => "the plain run".to_string(),
        Some(fault) => format!("a plain run where the first shared {fault}"),
    };
    assert_stdout_matches(
        &plain.job,
        &job,
        degree,
        LayoutKind::Block,
        &format!("{what} (expected: {expectation})"),
        str::to_string,
    );
    assert_same_files(
        &plain.area.shared,
        &area.shared,
        &format!("{what}: shared file (expected: as in {expectation})"),
        &no_skip,
    );
    assert_local_copies(&plain.area, &area, degree, &what, &no_skip);
    (job, area)
}

/// With r=2 a mismatch is logged with the path (and rank, offset, length).
fn assert_mismatch_logged(job: &Job, area: &Area) {
    for rank in 0..RANKS {
        let path = area.shared_file(&format!("faults.{rank}.dat"));
        let path = path.display().to_string();
        assert!(
            !lines_with(&job.stderr, &[&path]).is_empty(),
            "the mismatch on {path} must be logged with its path:\n{}",
            job.stderr
        );
    }
}

/// A run where the replicas diverged and nothing corrected it: the
/// program went on (it ignores the `EIO`), and `redio run` fails the run
/// with 75, naming the divergence (docs/fault-tolerance.md).
fn check_diverged(job: &Job, what: &str) {
    assert!(!job.timed_out(), "{what}: the job hung:\n{job:#?}");
    assert_eq!(
        job.code,
        Some(75),
        "{what}: an uncorrected divergence must fail the run:\n{job:#?}"
    );
    assert!(
        job.stderr
            .contains("diverged and nothing could correct it (every replica got EIO)"),
        "{what}: the divergence must be named:\n{}",
        job.stderr
    );
}

/// A fault redio detects but cannot correct: every replica sees what a
/// plain run where the first shared `fault` (e.g. `write:EIO`) sees, the
/// mismatch is logged with the path, and the run fails with 75.
fn detected_case(name: &str, degree: u32, env: &[(&str, &str)], fault: &str) {
    let (job, area) = fault_case(name, degree, env, Some(fault));
    assert_mismatch_logged(&job, &area);
    check_diverged(&job, name);
}

#[test]
fn flipped_write_is_corrected_with_three_replicas() {
    // Replica 0 is the writer when the replicas agree: its buffer is the
    // corrupted one, and the majority's must reach the file.
    fault_case("flip-write", 3, &[("REDIO_TEST_FLIP_WRITE", "0")], None);
}

#[test]
fn flipped_read_is_corrected_with_three_replicas() {
    fault_case("flip-read", 3, &[("REDIO_TEST_FLIP_READ", "1")], None);
}

#[test]
fn flipped_write_is_detected_with_two_replicas() {
    // Every write fails with EIO on both replicas; the program stops at the
    // first, so the shared file must stay empty.
    detected_case(
        "flip-write",
        2,
        &[("REDIO_TEST_FLIP_WRITE", "1")],
        "write:EIO",
    );
}

#[test]
fn flipped_read_is_detected_with_two_replicas() {
    // The file is written correctly; the first read fails with EIO on both.
    detected_case("flip-read", 2, &[("REDIO_TEST_FLIP_READ", "0")], "read:EIO");
}

#[test]
fn every_voting_write_protocol_corrects_at_three_and_detects_at_two() {
    for write in ["distributed", "distributed-separate"] {
        let env = |flip| [("REDIO_IO_WRITE", write), ("REDIO_TEST_FLIP_WRITE", flip)];
        fault_case(&format!("flip-write-{write}"), 3, &env("0"), None);
        detected_case(&format!("flip-write-{write}"), 2, &env("1"), "write:EIO");
    }
}

#[test]
fn extended_simple_read_with_two_readers_detects_a_flipped_read() {
    // Two readers of three cannot outvote each other: detected, not corrected.
    let env = [
        ("REDIO_IO_READ", "extended-simple"),
        ("REDIO_IO_READERS", "2"),
        ("REDIO_TEST_FLIP_READ", "1"),
    ];
    detected_case("flip-read-extended", 3, &env, "read:EIO");
}

#[test]
fn on_mismatch_error_refuses_even_a_majority() {
    let env = [
        ("REDIO_VOTING_ON_MISMATCH", "error"),
        ("REDIO_TEST_FLIP_READ", "1"),
    ];
    let (job, _) = fault_case("policy-error", 3, &env, Some("read:EIO"));
    assert!(
        job.stderr.contains("EIO returned (on_mismatch: error)"),
        "the report must name the policy:\n{}",
        job.stderr
    );
}

#[test]
fn on_mismatch_warn_goes_on_with_replica_zero_at_two() {
    // Replica 1's buffer is flipped; with warn, replica 0's data reach the
    // file and nothing fails.
    let env = [
        ("REDIO_VOTING_ON_MISMATCH", "warn"),
        ("REDIO_TEST_FLIP_WRITE", "1"),
    ];
    let (job, _) = fault_case("policy-warn", 2, &env, None);
    assert!(
        job.stderr
            .contains("continued with replica 0's data (on_mismatch: warn)"),
        "the report must say what was used:\n{}",
        job.stderr
    );
}

#[test]
fn on_mismatch_abort_ends_the_job() {
    let mpi = Mpi::Mpich;
    let exe = compile_flavour(mpi, FAULTS, Flavour::Fortify);
    let area = Area::new("policy-abort-r2", true);
    let env = [
        ("REDIO_VOTING_ON_MISMATCH", "abort"),
        ("REDIO_TEST_FLIP_WRITE", "1"),
    ];
    let job = replicated(mpi, &exe, &area, (2, "block"), &[], &env);
    assert_ne!(job.code, Some(0), "the job must fail:\n{job:#?}");
    assert!(
        job.stderr.contains("on_mismatch is abort: ending the job"),
        "the abort must be explained:\n{}",
        job.stderr
    );
}

/// `io_diverge` under redio at `degree` replicas in the area `name`, with
/// the variable `env` set.
fn diverge_case(name: &str, degree: u32, env: (&str, &str)) -> (Job, Area) {
    let mpi = Mpi::Mpich;
    let exe = compile_flavour(mpi, DIVERGE, Flavour::O0);
    let area = Area::new(name, true);
    let job = replicated(mpi, &exe, &area, (degree, "block"), &[], &[env]);
    (job, area)
}

/// Replicas that issue different calls: detected before any protocol runs
/// and reported with both sides' calls. At r=2 every replica gets EIO and
/// they go on in step afterwards (the run then fails with 75); at r=3 the
/// odd replica is outvoted and retires, and the other two run the call and
/// finish.
#[test]
fn diverging_replicas_are_detected_and_reported_mpich() {
    for (degree, read) in [(2, "simple"), (3, "chunked-chained")] {
        let (job, area) = diverge_case(
            &format!("diverge-r{degree}"),
            degree,
            ("REDIO_IO_READ", read),
        );
        let what = format!("io_diverge r={degree} read {read}");
        if degree == 2 {
            check_diverged(&job, &what);
        } else {
            check_success(&job, &what);
        }
        for (world, out) in &job.ranks {
            let replica = world / RANKS;
            let expected = match (degree, replica) {
                (2, _) => "shared diverging step: -1 EIO",
                (_, 1) => continue,
                _ => "shared diverging step: 100",
            };
            assert!(
                out.contains(expected),
                "{what}: world rank {world} must print {expected:?}:\n{out}"
            );
            assert!(
                out.contains("shared read block: 4096 crc"),
                "{what}: world rank {world} must go on in step:\n{out}"
            );
        }
        if degree == 3 {
            for world in [RANKS, RANKS + 1] {
                let out = job.ranks.get(&world).cloned().unwrap_or_default();
                assert!(
                    !out.contains("read block"),
                    "{what}: outvoted world rank {world} must have retired:\n{out}"
                );
            }
        }
        let mut reported = 0;
        for rank in 0..RANKS {
            let path = area.shared_file(&format!("diverge.{rank}.dat"));
            let path = path.display().to_string();
            let lines = lines_with(
                &job.stderr,
                &[
                    "divergence",
                    &format!("replica 0 write({path}, offset 0, 100 bytes)"),
                    &format!("replica 1 read({path}, offset 0, 100 bytes)"),
                ],
            );
            // At r=3 the outvoted replica retires as a unit: its process of
            // the other rank may be retired before it reaches its own
            // diverging call (the replica-mate's retirement came first).
            let retired_first = degree == 3
                && job.stderr.contains(&format!(
                    "rank {rank} replica 1]: warning: world rank {} (replica 1, rank {}) died: \
                     replica 1 is retired",
                    RANKS + (1 - rank),
                    1 - rank
                ));
            reported += usize::from(!lines.is_empty());
            assert!(
                !lines.is_empty() || retired_first,
                "{what}: the divergence of rank {rank} must be reported with both calls:\n{}",
                job.stderr
            );
        }
        assert!(
            reported > 0,
            "{what}: a divergence must be reported:\n{}",
            job.stderr
        );
    }
}

/// A replica one coordinated call off (an extra write, or a read skipped)
/// meets the others' `MPI_Finalize` with a call of its own at the end. At
/// r=2 the job ends with exit code 75 and the divergence on record; at
/// r=3 the odd replica is outvoted and the job completes. Never a hang.
#[test]
fn a_replica_one_call_off_ends_the_job_instead_of_hanging_mpich() {
    for mode in ["extra", "skip"] {
        for degree in [2, 3] {
            let (job, _) = diverge_case(
                &format!("diverge-{mode}-r{degree}"),
                degree,
                ("IO_DIVERGE_MODE", mode),
            );
            let what = format!("io_diverge {mode} r={degree}");
            assert!(!job.timed_out(), "{what}: the job hung:\n{job:#?}");
            assert!(
                job.stderr.contains("divergence"),
                "{what}: the divergence must be reported:\n{}",
                job.stderr
            );
            if degree == 2 {
                assert_eq!(job.code, Some(75), "{what}: exit code:\n{job:#?}");
                assert!(
                    job.stderr.contains(
                        "at MPI_Finalize, with no majority to outvote a replica: ending the job"
                    ),
                    "{what}: the end must be explained:\n{}",
                    job.stderr
                );
            } else {
                check_success(&job, &what);
                for world in [0, 1, 2 * RANKS, 2 * RANKS + 1] {
                    let out = job.ranks.get(&world).cloned().unwrap_or_default();
                    assert!(
                        out.contains("shared close: 0"),
                        "{what}: world rank {world} must finish:\n{out}"
                    );
                }
            }
        }
    }
}

/// A read error on replica 0 (the master of the transfer protocols) gives
/// every replica the same result under every read protocol: the errno,
/// or the majority's data where Simple Read can outvote it.
#[test]
fn a_read_error_is_the_same_everywhere_under_every_read_protocol() {
    let cases = [
        ("simple", 2, Some("read:EIO")),
        ("simple", 3, None),
        ("extended-simple", 3, Some("read:EIO")),
        ("read-distribute", 2, Some("read:EIO")),
        ("chained", 3, Some("read:EIO")),
        ("chunked-chained", 2, Some("read:EIO")),
        ("distributed-chunked", 3, Some("read:EIO")),
        ("auto", 2, Some("read:EIO")),
    ];
    for (read, degree, outcome) in cases {
        let env = [("REDIO_IO_READ", read), ("REDIO_TEST_READ_ERRNO", "0:5")];
        fault_case(&format!("read-errno-{read}"), degree, &env, outcome);
    }
}

/// ENOSPC on the writer (replica 0) reaches every replica under every
/// write protocol that writes once.
#[test]
fn a_write_error_is_the_same_everywhere_under_every_write_protocol() {
    for write in ["distributed", "distributed-separate", "auto"] {
        for degree in [2, 3] {
            let env = [
                ("REDIO_IO_WRITE", write),
                ("REDIO_TEST_WRITE_ERRNO", "0:28"),
            ];
            fault_case(
                &format!("enospc-{write}"),
                degree,
                &env,
                Some("write:ENOSPC"),
            );
        }
    }
}

#[test]
fn write_error_on_the_writer_reaches_every_replica() {
    for degree in [2, 3] {
        fault_case(
            "enospc-writer",
            degree,
            &[("REDIO_TEST_WRITE_ERRNO", "0:28")],
            Some("write:ENOSPC"),
        );
    }
}

#[test]
fn write_error_on_a_replica_that_does_not_write_is_not_seen() {
    // Under Simple Write only replica 0 writes when the replicas agree.
    fault_case(
        "enospc-other",
        2,
        &[("REDIO_TEST_WRITE_ERRNO", "1:28")],
        None,
    );
}
