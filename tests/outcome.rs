//! The outcome of `redio run` (issue 16): exit codes that tell the truth and
//! a summary that matches what happened, with every MPI.
//!
//! `tests/programs/outcome.c` ends a job in one of several ways
//! (`OUTCOME_MODE`); each test checks `redio run`'s exit code and the JSON
//! summary (`--summary`), including every process's recorded end. Nothing
//! here depends on timing: a process to be killed waits (up to 120 s) until
//! the test has killed it, and the test waits for the files that say so.

mod common;

use common::{compile, fresh_dir, Job, Launch, Mpi};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Seconds a job may take before it counts as hung.
const TIMEOUT: u32 = 90;

/// A job of 2 ranks x 2 replicas of outcome.c in `mode`, with its summary.
fn run(mpi: Mpi, name: &str, mode: &str, env: &[(&str, &str)]) -> (Job, Value) {
    run_shape(mpi, name, mode, env, (2, 2))
}

/// [`run`] with `(ranks, replicas)`.
fn run_shape(
    mpi: Mpi,
    name: &str,
    mode: &str,
    env: &[(&str, &str)],
    (ranks, degree): (u32, u32),
) -> (Job, Value) {
    let dir = fresh_dir(&format!("outcome/{name}-{}", mpi.key()));
    let summary = dir.join("summary.json");
    let exe = compile(mpi, "outcome");
    let mut launch = Launch::redio(mpi, ranks, degree, "block", &exe)
        .env("OUTCOME_MODE", mode)
        .env("OUTCOME_DIR", &dir.display().to_string())
        .timeout(TIMEOUT);
    for (name, value) in env {
        launch = launch.env(name, value);
    }
    launch.redio_args = vec!["--summary".into(), summary.display().to_string()];
    let job = launch.run();
    assert!(!job.timed_out(), "the job hung:\n{job:#?}");
    (job, read_summary(&summary))
}

fn read_summary(path: &Path) -> Value {
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("no summary at {}: {e}", path.display()));
    serde_json::from_str(&text).unwrap()
}

/// World ranks listed in `summary[key]`.
fn world_ranks(summary: &Value, key: &str) -> Vec<u64> {
    summary[key]
        .as_array()
        .unwrap_or_else(|| panic!("no {key} in {summary:#}"))
        .iter()
        .map(|p| p["world_rank"].as_u64().unwrap())
        .collect()
}

/// `(end, status)` of every process, by world rank.
fn ends(summary: &Value) -> Vec<(String, Option<i64>)> {
    summary["processes"]
        .as_array()
        .unwrap_or_else(|| panic!("no processes in {summary:#}"))
        .iter()
        .map(|p| (p["end"].as_str().unwrap().to_string(), p["status"].as_i64()))
        .collect()
}

fn exited(status: i64) -> (String, Option<i64>) {
    ("exit".to_string(), Some(status))
}

/// The application's status is the job's, also where the launcher
/// swallows it (Open MPI 4.1 with `--enable-recovery` exits 0).
fn status_after_finalize(mpi: Mpi) {
    // `redio run` makes its run directory in TMPDIR: a short one of this
    // test's own (Open MPI's socket paths under it must stay short).
    let tmp = PathBuf::from(format!(
        "/tmp/redio-outcome-{}-{}",
        mpi.key(),
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&tmp);
    std::fs::create_dir_all(&tmp).unwrap();
    let tmpdir = tmp.display().to_string();
    let run_dirs = || -> Vec<String> {
        let names = std::fs::read_dir(&tmp).unwrap().flatten();
        names
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|name| name.starts_with("redio-run-"))
            .collect()
    };
    let status = |code: &'static str| [("OUTCOME_STATUS", code), ("TMPDIR", tmpdir.as_str())];

    let (job, summary) = run(mpi, "status-0", "status", &status("0"));
    assert_eq!(job.code, Some(0), "{job:#?}");
    assert_eq!(ends(&summary), vec![exited(0); 4], "{summary:#}");
    assert!(!job.stderr.contains("PMIX ERROR"), "{}", job.stderr);
    // A clean run leaves nothing behind, `--summary` or not.
    assert_eq!(
        run_dirs(),
        Vec::<String>::new(),
        "a clean run kept its run directory"
    );

    let (job, summary) = run(mpi, "status-5", "status", &status("5"));
    // A failed one keeps it, for diagnosis.
    assert_eq!(
        run_dirs().len(),
        1,
        "a failed run must keep its run directory"
    );
    let _ = std::fs::remove_dir_all(&tmp);
    assert_eq!(job.code, Some(5), "{job:#?}");
    assert_eq!(summary["exit_code"], 5);
    assert_eq!(summary["completed"], true);
    assert_eq!(summary["failed"], serde_json::json!([]), "{summary:#}");
    // Logical rank 0 is world ranks 0 and 2 (block layout).
    let mut non_zero = world_ranks(&summary, "exited_non_zero");
    non_zero.sort_unstable(); // listed in the order they exited
    assert_eq!(non_zero, [0, 2]);
    assert_eq!(
        ends(&summary),
        [exited(5), exited(0), exited(5), exited(0)],
        "{summary:#}"
    );
    assert!(
        job.stderr
            .contains("world rank 0 (replica 0, rank 0) exited with status 5 after MPI_Finalize"),
        "{}",
        job.stderr
    );
    assert!(!job.stderr.contains("PMIX ERROR"), "{}", job.stderr);
}

#[test]
fn the_application_s_status_is_the_job_s_mpich() {
    status_after_finalize(Mpi::Mpich);
}

#[test]
fn the_application_s_status_is_the_job_s_openmpi() {
    status_after_finalize(Mpi::OpenMpi);
}

#[test]
fn the_application_s_status_is_the_job_s_openmpi5() {
    status_after_finalize(Mpi::OpenMpi5);
}

/// A replica SIGKILLed inside `MPI_Finalize`, once every process passed
/// redio's barrier there (where no wait of redio's sees it), 3 times: the
/// survivors finish, their code after `MPI_Finalize` runs (logical rank 0
/// returns 5 there, and outcome.c checks `MPI_Finalized`), and the job's
/// status is the application's. While redio still called the real
/// `PMPI_Finalize`, survivors hung in it (MPICH: 2 runs of 3).
fn death_inside_finalize(mpi: Mpi) {
    for attempt in 0..3 {
        // World rank 1 is replica 0 of logical rank 1 (block layout).
        let (job, summary) = run(
            mpi,
            &format!("die-in-finalize-{attempt}"),
            "status",
            &[("OUTCOME_STATUS", "5"), ("REDIO_TEST_DIE_IN_FINALIZE", "1")],
        );
        assert!(
            job.stderr.contains("REDIO_TEST_DIE_IN_FINALIZE: dying"),
            "the victim must die in MPI_Finalize:\n{job:#?}"
        );
        assert_eq!(job.code, Some(5), "{job:#?}");
        // A survived death, whichever side of the barrier it fell on.
        assert_eq!(world_ranks(&summary, "failed"), [1], "{summary:#}");
        let ends = ends(&summary);
        assert_eq!(ends[1].0, "killed", "{summary:#}");
        assert_eq!(
            [&ends[0], &ends[2], &ends[3]],
            [&exited(5), &exited(5), &exited(0)],
            "{summary:#}"
        );
    }
}

#[test]
fn a_death_inside_mpi_finalize_is_survived_mpich() {
    death_inside_finalize(Mpi::Mpich);
}

#[test]
fn a_death_inside_mpi_finalize_is_survived_openmpi() {
    death_inside_finalize(Mpi::OpenMpi);
}

#[test]
fn a_death_inside_mpi_finalize_is_survived_openmpi5() {
    death_inside_finalize(Mpi::OpenMpi5);
}

/// Returning without `MPI_Finalize` is not a completed job.
fn no_finalize(mpi: Mpi) {
    let (job, summary) = run(mpi, "no-finalize", "no-finalize", &[]);
    assert_ne!(job.code, Some(0), "{job:#?}");
    assert_eq!(summary["completed"], false, "{summary:#}");
    assert_eq!(summary["unfinished_ranks"], serde_json::json!([0, 1]));
    assert_eq!(world_ranks(&summary, "failed"), [0, 1, 2, 3], "{summary:#}");
    assert_eq!(ends(&summary), vec![exited(0); 4], "{summary:#}");
}

#[test]
fn returning_without_finalize_fails_mpich() {
    no_finalize(Mpi::Mpich);
}

#[test]
fn returning_without_finalize_fails_openmpi() {
    no_finalize(Mpi::OpenMpi);
}

/// Both replicas of logical rank 1 crash outside any coordinated
/// operation: both are in `failed`, the rank is lost.
fn crash_of_a_rank(mpi: Mpi) {
    let (job, summary) = run(mpi, "segv", "segv", &[]);
    assert_eq!(job.code, Some(3), "{job:#?}");
    assert_eq!(summary["completed"], false, "{summary:#}");
    let failed = world_ranks(&summary, "failed");
    assert!(
        failed.contains(&1) && failed.contains(&3),
        "both replicas of rank 1 (world ranks 1 and 3) crashed: {summary:#}"
    );
    let ends = ends(&summary);
    for w in [1, 3] {
        // MPICH: redio turns the signal into an exit (128 + 11); Open MPI:
        // the signal kills the process, which leaves no exit record.
        assert!(
            ends[w] == ("signal".to_string(), Some(139)) || ends[w] == ("killed".to_string(), None),
            "world rank {w}: {ends:?}"
        );
    }
    assert_eq!(
        summary["exited_non_zero"],
        serde_json::json!([]),
        "{summary:#}"
    );
}

#[test]
fn a_crash_of_every_replica_of_a_rank_is_reported_mpich() {
    crash_of_a_rank(Mpi::Mpich);
}

#[test]
fn a_crash_of_every_replica_of_a_rank_is_reported_openmpi() {
    crash_of_a_rank(Mpi::OpenMpi);
}

/// Without replicas, world rank 0 exits with status 6 right after
/// `MPI_Init` while the other three wait for it in a barrier: the job ends
/// with 6, as under plain `mpiexec`. Open MPI 5 under ULFM never reports a
/// non-zero exit, so there the others waited for good (4 processes) until
/// `redio run` stopped starting jobs that cannot survive with ULFM on.
fn early_exit_without_replicas(mpi: Mpi) {
    let (job, summary) = run_shape(
        mpi,
        "exit-early",
        "exit-early",
        &[("OUTCOME_STATUS", "6")],
        (4, 1),
    );
    assert_eq!(job.code, Some(6), "{job:#?}");
    assert_eq!(summary["completed"], false, "{summary:#}");
    assert_eq!(world_ranks(&summary, "exited_non_zero"), [0], "{summary:#}");
}

#[test]
fn an_early_exit_without_replicas_ends_the_job_mpich() {
    early_exit_without_replicas(Mpi::Mpich);
}

#[test]
fn an_early_exit_without_replicas_ends_the_job_openmpi() {
    early_exit_without_replicas(Mpi::OpenMpi);
}

#[test]
fn an_early_exit_without_replicas_ends_the_job_openmpi5() {
    early_exit_without_replicas(Mpi::OpenMpi5);
}

/// Every process fails before `MPI_Init` (as a Python program whose
/// import fails): the job gives their status. (`redio run` may end the
/// last ones itself once the first is gone, a death before start-up: they
/// are then killed, or even stopped before they reached libredio.so.)
fn death_before_init_everywhere(mpi: Mpi) {
    let (job, summary) = run(mpi, "pre-init", "pre-init", &[]);
    assert_eq!(job.code, Some(7), "{job:#?}");
    let ends = ends(&summary);
    let stopped =
        |e: &(String, Option<i64>)| e.1.is_none() && ["killed", "unseen"].contains(&&*e.0);
    assert!(
        ends.iter().all(|e| *e == exited(7) || stopped(e)),
        "{summary:#}"
    );
    assert!(!world_ranks(&summary, "exited_non_zero").is_empty());
    assert_eq!(summary["completed"], false);
}

#[test]
fn a_failure_before_mpi_init_everywhere_gives_its_status_mpich() {
    death_before_init_everywhere(Mpi::Mpich);
}

#[test]
fn a_failure_before_mpi_init_everywhere_gives_its_status_openmpi() {
    death_before_init_everywhere(Mpi::OpenMpi);
}

/// `MPI_Abort(MPI_COMM_WORLD, 7)` (tests/programs/abort.c, logical rank
/// 1): the job's exit code is 7, also where the launcher kills the
/// aborting process (MPICH) or reports 0 (Open MPI 4.1 with recovery).
fn mpi_abort(mpi: Mpi) {
    let dir = fresh_dir(&format!("outcome/abort-{}", mpi.key()));
    let summary = dir.join("summary.json");
    let mut launch = Launch::redio(mpi, 2, 2, "block", &compile(mpi, "abort")).timeout(TIMEOUT);
    launch.redio_args = vec!["--summary".into(), summary.display().to_string()];
    let job = launch.run();
    assert_eq!(job.code, Some(7), "{job:#?}");
    let summary = read_summary(&summary);
    assert_eq!(summary["completed"], false, "{summary:#}");
    let aborted = world_ranks(&summary, "exited_non_zero");
    assert!(
        !aborted.is_empty() && aborted.iter().all(|w| [1, 3].contains(w)),
        "{summary:#}"
    );
}

#[test]
fn mpi_abort_s_code_is_the_job_s_mpich() {
    mpi_abort(Mpi::Mpich);
}

#[test]
fn mpi_abort_s_code_is_the_job_s_openmpi() {
    mpi_abort(Mpi::OpenMpi);
}

/// Waits (bounded) until `path` holds a pid; returns it.
fn wait_for_pid(path: &Path, deadline: Instant) -> i32 {
    loop {
        if let Some(pid) = std::fs::read_to_string(path)
            .ok()
            .and_then(|t| t.trim().parse().ok())
        {
            return pid;
        }
        assert!(
            Instant::now() < deadline,
            "{} never appeared",
            path.display()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// `redio run` of outcome.c in `mode`, started in the background (bounded
/// by `timeout`), with its directory.
fn start(mpi: Mpi, name: &str, mode: &str, victim: u32) -> (std::process::Child, PathBuf) {
    let dir = fresh_dir(&format!("outcome/{name}-{}", mpi.key()));
    let exe = compile(mpi, "outcome");
    let child = Command::new(common::redio_bin())
        .args(["run", "--mpi", mpi.key(), "-n", "2", "-r", "2", "--summary"])
        .arg(dir.join("summary.json"))
        .arg("--")
        .arg(exe)
        .env_remove("REDIO_CONFIG")
        .env("OUTCOME_MODE", mode)
        .env("OUTCOME_DIR", &dir)
        .env("OUTCOME_VICTIM", victim.to_string())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    (child, dir)
}

/// Waits for `child` (killing it after [`TIMEOUT`]); returns its exit code
/// and stderr.
fn finish(mut child: std::process::Child) -> (Option<i32>, String) {
    let deadline = Instant::now() + Duration::from_secs(u64::from(TIMEOUT));
    let mut stderr = child.stderr.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = std::io::Read::read_to_string(&mut stderr, &mut text);
        text
    });
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("redio run hung");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    (status.code(), reader.join().unwrap())
}

/// Whether process `pid` still runs (a zombie does not).
fn running(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| {
            s.rsplit_once(')')
                .map(|(_, r)| r.trim().starts_with(['Z', 'X']))
        })
        .is_some_and(|zombie| !zombie)
}

/// A process killed before `MPI_Init`, while the others wait in it: the
/// job ends at once, non-zero, with the victim in `failed`.
fn death_during_start_up(mpi: Mpi) {
    let _machine = common::launch_lock();
    let victim = 1;
    let (child, dir) = start(mpi, "start-up", "hold-init", victim);
    let deadline = Instant::now() + Duration::from_secs(60);
    let pid = wait_for_pid(&dir.join(format!("pid.{victim}")), deadline);
    // SAFETY: killing the test's own job's process.
    unsafe { libc::kill(pid, libc::SIGKILL) };
    let (code, stderr) = finish(child);
    assert!(code.is_some_and(|c| c != 0), "{code:?}\n{stderr}");
    let summary = read_summary(&dir.join("summary.json"));
    assert!(
        world_ranks(&summary, "failed").contains(&u64::from(victim)),
        "{summary:#}\n{stderr}"
    );
    assert_eq!(summary["completed"], false);
    assert_eq!(
        ends(&summary)[victim as usize],
        ("killed".to_string(), None)
    );
}

#[test]
fn a_death_during_start_up_ends_the_job_mpich() {
    death_during_start_up(Mpi::Mpich);
}

#[test]
fn a_death_during_start_up_ends_the_job_openmpi() {
    death_during_start_up(Mpi::OpenMpi);
}

#[test]
fn a_death_during_start_up_ends_the_job_openmpi5() {
    death_during_start_up(Mpi::OpenMpi5);
}

/// One process killed (`SIGKILL`) after start-up, outside any coordinated
/// operation: it is in `failed`, and the exit code is the truth about the
/// rest (0 when its rank finished on the other replica, else 3).
fn killed_after_start_up(mpi: Mpi) {
    let _machine = common::launch_lock();
    let (child, dir) = start(mpi, "killed-one", "hold", 0);
    let deadline = Instant::now() + Duration::from_secs(60);
    let pids: Vec<i32> = (0..4)
        .map(|w| wait_for_pid(&dir.join(format!("pid.{w}")), deadline))
        .collect();
    // SAFETY: killing the test's own job's process.
    unsafe { libc::kill(pids[1], libc::SIGKILL) };
    std::fs::write(dir.join("go"), b"").unwrap();
    let (code, stderr) = finish(child);
    let summary = read_summary(&dir.join("summary.json"));
    let failed = world_ranks(&summary, "failed");
    assert!(failed.contains(&1), "{summary:#}\n{stderr}");
    assert_eq!(
        ends(&summary)[1],
        ("killed".to_string(), None),
        "{summary:#}"
    );
    if summary["completed"] == true {
        assert_eq!(code, Some(0), "{summary:#}\n{stderr}");
        if mpi != Mpi::Mpich {
            // (Hydra may kill world rank 0 before it retires.)
            assert_eq!(retired(&summary), [0], "{summary:#}");
        }
    } else {
        // MPICH's Hydra ends the whole job on a SIGKILL (issue 16).
        assert_eq!(code, Some(3), "{summary:#}\n{stderr}");
        // Every process is accounted for: failed, retired, or finished
        // before Hydra ended the job.
        let finished = summary["processes"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|p| p["finished"] == true)
            .count();
        assert_eq!(
            failed.len() + retired(&summary).len() + finished,
            4,
            "{summary:#}"
        );
    }
}

fn retired(summary: &Value) -> Vec<u64> {
    world_ranks(summary, "retired")
}

#[test]
fn a_process_killed_after_start_up_is_failed_mpich() {
    killed_after_start_up(Mpi::Mpich);
}

#[test]
fn a_process_killed_after_start_up_is_failed_openmpi() {
    killed_after_start_up(Mpi::OpenMpi);
}

#[test]
fn a_process_killed_after_start_up_is_failed_openmpi5() {
    killed_after_start_up(Mpi::OpenMpi5);
}

/// The children of process `parent`.
fn children(parent: u32) -> Vec<i32> {
    std::fs::read_to_string(format!("/proc/{parent}/task/{parent}/children"))
        .unwrap_or_default()
        .split_whitespace()
        .filter_map(|p| p.parse().ok())
        .collect()
}

/// Every process holds after `MPI_Init`; then `signal` goes to the
/// launcher (`to_launcher`) or to `redio run`: every process ends, and the
/// summary and the exit code say so.
fn launcher_killed(mpi: Mpi, signal: i32, to_launcher: bool) {
    let _machine = common::launch_lock();
    let name = format!("killed-{signal}-{to_launcher}");
    let (child, dir) = start(mpi, &name, "hold", 0);
    let deadline = Instant::now() + Duration::from_secs(60);
    let pids: Vec<i32> = (0..4)
        .map(|w| wait_for_pid(&dir.join(format!("pid.{w}")), deadline))
        .collect();
    let target = if to_launcher {
        let launchers = children(child.id());
        assert_eq!(launchers.len(), 1, "{launchers:?}");
        launchers[0]
    } else {
        child.id() as i32
    };
    // SAFETY: signalling the test's own job.
    unsafe { libc::kill(target, signal) };
    let (code, stderr) = finish(child);
    if signal == libc::SIGKILL && !to_launcher {
        // redio run itself cannot write anything more: its launcher got
        // SIGTERM (PR_SET_PDEATHSIG), and the provisional summary remains.
        assert_eq!(code, None, "{stderr}");
    } else if to_launcher && signal == libc::SIGTERM {
        // The launcher handles SIGTERM: it stops its processes and exits
        // with a code (Hydra: 15), so the job simply did not complete.
        assert_eq!(code, Some(3), "{stderr}");
    } else {
        assert_eq!(code, Some(128 + signal), "{stderr}");
    }
    let stopped = Instant::now() + Duration::from_secs(30);
    while pids.iter().any(|&p| running(p)) && Instant::now() < stopped {
        std::thread::sleep(Duration::from_millis(50));
    }
    let left: Vec<i32> = pids.iter().copied().filter(|&p| running(p)).collect();
    for &p in &left {
        // SAFETY: cleaning up the test's own processes.
        unsafe { libc::kill(p, libc::SIGKILL) };
    }
    assert!(
        left.is_empty(),
        "processes left running: {left:?}\n{stderr}"
    );
    let summary = read_summary(&dir.join("summary.json"));
    assert_eq!(summary["completed"], false, "{summary:#}");
    if code.is_none() {
        let why = summary["interrupted"].as_str().unwrap_or_default();
        assert!(why.contains("did not conclude"), "{summary:#}");
        return;
    }
    assert_eq!(summary["exit_code"], code.unwrap());
    if code != Some(3) {
        assert!(summary["interrupted"].is_string(), "{summary:#}");
    }
    assert_eq!(world_ranks(&summary, "failed"), [0, 1, 2, 3], "{summary:#}");
}

#[test]
fn the_launcher_killed_ends_every_process_mpich() {
    launcher_killed(Mpi::Mpich, libc::SIGKILL, true);
    launcher_killed(Mpi::Mpich, libc::SIGTERM, true);
    launcher_killed(Mpi::Mpich, libc::SIGTERM, false);
    launcher_killed(Mpi::Mpich, libc::SIGKILL, false);
}

#[test]
fn the_launcher_killed_ends_every_process_openmpi() {
    launcher_killed(Mpi::OpenMpi, libc::SIGKILL, true);
    launcher_killed(Mpi::OpenMpi, libc::SIGTERM, false);
    launcher_killed(Mpi::OpenMpi, libc::SIGKILL, false);
}

#[test]
fn the_launcher_killed_ends_every_process_openmpi5() {
    // Open MPI 5's mpirun killed by SIGKILL leaves its processes running:
    // redio run kills them.
    launcher_killed(Mpi::OpenMpi5, libc::SIGKILL, true);
    launcher_killed(Mpi::OpenMpi5, libc::SIGKILL, false);
}

/// A program that cannot run (missing, a directory, no execute bit) gives
/// the shell's 127 at r=2 too, with every MPI (issue 44, item 1: Open MPI
/// 4.1 and 5 said 0, nothing having run).
fn a_program_that_cannot_run(mpi: Mpi) {
    let dir = fresh_dir(&format!("outcome/cannot-run-{}", mpi.key()));
    let not_executable = dir.join("not-executable");
    std::fs::write(&not_executable, "#!/bin/sh\nexit 0\n").unwrap();
    let summary = dir.join("summary.json");
    for program in [dir.join("no-such-program"), dir.clone(), not_executable] {
        let mut launch = Launch::redio(mpi, 2, 2, "block", &program).timeout(TIMEOUT);
        launch.redio_args = vec!["--summary".into(), summary.display().to_string()];
        let job = launch.run();
        assert!(!job.timed_out(), "the job hung:\n{job:#?}");
        assert_eq!(job.code, Some(127), "{}: {job:#?}", program.display());
        let summary = read_summary(&summary);
        assert_eq!(summary["exit_code"], 127, "{summary:#}");
        assert_eq!(summary["completed"], false, "{summary:#}");
        assert!(
            !world_ranks(&summary, "exited_non_zero").is_empty(),
            "{summary:#}"
        );
        assert!(
            job.stderr.contains("redio exec: cannot run"),
            "{}",
            job.stderr
        );
    }
}

#[test]
fn a_program_that_cannot_run_gives_127_mpich() {
    a_program_that_cannot_run(Mpi::Mpich);
}

#[test]
fn a_program_that_cannot_run_gives_127_openmpi() {
    a_program_that_cannot_run(Mpi::OpenMpi);
}

#[test]
fn a_program_that_cannot_run_gives_127_openmpi5() {
    a_program_that_cannot_run(Mpi::OpenMpi5);
}

/// Compiles `tests/programs/static_kill.c` as a static executable with
/// `cc` (no MPI, and no library loaded at start: LD_PRELOAD does not reach
/// it), once per test binary: the tests run in parallel, and rewriting
/// the executable while another job runs it would fail that job.
fn static_kill() -> PathBuf {
    static BUILT: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    BUILT
        .get_or_init(|| {
            let out_dir = common::scratch().join("bin/static");
            std::fs::create_dir_all(&out_dir).unwrap();
            let exe = out_dir.join("static_kill");
            let source = common::repo().join("tests/programs/static_kill.c");
            let status = Command::new("cc")
                .args(["-static", "-O2", "-Wall", "-Wextra", "-Werror", "-o"])
                .arg(&exe)
                .arg(&source)
                .status()
                .unwrap();
            assert!(status.success(), "cc -static {} failed", source.display());
            exe
        })
        .clone()
}

/// World rank 0 is SIGKILLed before any library is loaded
/// (tests/programs/static_kill.c), while the others wait for it in
/// `MPI_Init`: `redio exec` sees the death, and the job ends with 3 and
/// the victim named, never a hang (issue 44, item 3).
fn death_before_the_library_loads(mpi: Mpi) {
    let shim = static_kill();
    let exe = compile(mpi, "outcome");
    let dir = fresh_dir(&format!("outcome/before-load-{}", mpi.key()));
    let summary = dir.join("summary.json");
    let mut launch = Launch::redio(mpi, 2, 2, "block", &shim)
        .args([exe.display().to_string()])
        .env("SHIM_VICTIM", "0")
        .env("OUTCOME_MODE", "status")
        .env("OUTCOME_STATUS", "0")
        .env("OUTCOME_DIR", &dir.display().to_string())
        .timeout(TIMEOUT);
    launch.redio_args = vec!["--summary".into(), summary.display().to_string()];
    let job = launch.run();
    assert!(!job.timed_out(), "the job hung:\n{job:#?}");
    assert_eq!(job.code, Some(3), "{job:#?}");
    let summary = read_summary(&summary);
    assert_eq!(summary["exit_code"], 3, "{summary:#}");
    assert_eq!(summary["completed"], false, "{summary:#}");
    assert!(world_ranks(&summary, "failed").contains(&0), "{summary:#}");
    assert_eq!(
        ends(&summary)[0],
        ("killed".to_string(), None),
        "{summary:#}"
    );
    let why = summary["interrupted"].as_str().unwrap_or_default();
    assert!(
        why.contains("world rank 0") && why.contains("killed by a signal"),
        "{summary:#}"
    );
}

#[test]
fn a_death_before_libredio_loads_ends_the_job_mpich() {
    death_before_the_library_loads(Mpi::Mpich);
}

#[test]
fn a_death_before_libredio_loads_ends_the_job_openmpi() {
    death_before_the_library_loads(Mpi::OpenMpi);
}

#[test]
fn a_death_before_libredio_loads_ends_the_job_openmpi5() {
    death_before_the_library_loads(Mpi::OpenMpi5);
}

/// The replicas of each rank write different data (outcome.c `diverge`):
/// at r=2 nothing can correct it and every replica gets `EIO`, which the
/// program ignores, returning 0. The run fails with 75, the divergence in
/// the summary; `--on-divergence warn` keeps the old exit code 0 (issue
/// 44, item 2).
fn an_uncorrected_divergence(mpi: Mpi) {
    let (job, summary) = run(mpi, "diverge", "diverge", &[]);
    assert_eq!(job.code, Some(75), "{job:#?}");
    assert_eq!(summary["exit_code"], 75, "{summary:#}");
    assert_eq!(summary["completed"], true, "{summary:#}");
    let mut ranks: Vec<u64> = summary["divergences"]
        .as_array()
        .unwrap_or_else(|| panic!("no divergences in {summary:#}"))
        .iter()
        .map(|d| d["rank"].as_u64().unwrap())
        .collect();
    ranks.sort_unstable();
    ranks.dedup();
    assert_eq!(ranks, [0, 1], "{summary:#}");
    assert!(
        job.stderr
            .contains("redio run: error: replicas of rank 0 diverged"),
        "{}",
        job.stderr
    );

    let dir = fresh_dir(&format!("outcome/diverge-warn-{}", mpi.key()));
    let summary = dir.join("summary.json");
    let mut launch = Launch::redio(mpi, 2, 2, "block", &compile(mpi, "outcome"))
        .env("OUTCOME_MODE", "diverge")
        .env("OUTCOME_DIR", &dir.display().to_string())
        .timeout(TIMEOUT);
    launch.redio_args = vec![
        "--on-divergence".into(),
        "warn".into(),
        "--summary".into(),
        summary.display().to_string(),
    ];
    let job = launch.run();
    assert_eq!(job.code, Some(0), "{job:#?}");
    let summary = read_summary(&summary);
    assert!(
        !summary["divergences"].as_array().unwrap().is_empty(),
        "{summary:#}"
    );
    assert!(
        job.stderr
            .contains("redio run: warning: replicas of rank 0 diverged"),
        "{}",
        job.stderr
    );
}

#[test]
fn an_uncorrected_divergence_fails_the_run_mpich() {
    an_uncorrected_divergence(Mpi::Mpich);
}

#[test]
fn an_uncorrected_divergence_fails_the_run_openmpi() {
    an_uncorrected_divergence(Mpi::OpenMpi);
}
