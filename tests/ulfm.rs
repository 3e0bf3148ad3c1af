//! ULFM under Open MPI 5 (`mpirun --with-ft ulfm`): a real process dies,
//! and the survivors run libredio.so's ULFM wrappers (`comm/mpix.rs`, `ft/ulfm_probe.rs`)
//! on the real `MPI_COMM_WORLD` through the test hook
//! `REDIO_TEST_ULFM_PROBE`: detect the failure on a pending receive, name
//! the failed rank, revoke, shrink, agree.

mod common;

use common::{compile, Launch, Mpi};

/// Runs 2 ranks x 2 replicas under `redio run --mpi openmpi5`; world rank 2
/// dies `how` (`kill`, `exit0`) right after start-up. Returns the probe
/// line of each survivor.
fn probe(how: &str) -> Vec<String> {
    let exe = compile(Mpi::OpenMpi5, "p2p");
    let job = Launch::redio(Mpi::OpenMpi5, 2, 2, "block", &exe)
        .env("REDIO_TEST_ULFM_PROBE", &format!("2:{how}"))
        .timeout(60)
        .run();
    assert!(!job.timed_out(), "{job:#?}");
    assert_eq!(job.code, Some(0), "{job:#?}");
    let lines: Vec<String> = job
        .stderr
        .lines()
        .filter(|line| line.contains("ulfm probe: "))
        .map(str::to_string)
        .collect();
    assert_eq!(lines.len(), 3, "one line per survivor:\n{}", job.stderr);
    lines
}

fn check_survivors(how: &str) {
    let lines = probe(how);
    // The first to notice sees the failure; the others may see the revoke.
    assert!(
        lines
            .iter()
            .any(|line| line.contains("MPIX_ERR_PROC_FAILED after ")),
        "{lines:#?}"
    );
    for line in lines {
        assert!(
            (line.contains("MPIX_ERR_PROC_FAILED after ")
                || line.contains("MPIX_ERR_REVOKED after "))
                && line
                    .contains("failed Ok([2]); revoked Ok(true); shrunk to 3; agree rc 0 flag 5"),
            "{how}: {line}"
        );
        let seconds: f64 = line
            .split("after ")
            .nth(1)
            .and_then(|rest| rest.split(' ').next())
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| panic!("no detection time in {line}"));
        assert!(seconds < 2.0, "{how}: detected after {seconds} s: {line}");
    }
}

#[test]
fn survivors_of_a_sigkill_revoke_shrink_and_agree() {
    check_survivors("kill");
}

#[test]
fn survivors_of_an_exit_revoke_shrink_and_agree() {
    check_survivors("exit0");
}
