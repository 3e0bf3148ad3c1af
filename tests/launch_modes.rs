//! Launch forms, replica mappings and the ways a job is refused.
//!
//! Impossible topologies, bad configurations and the wrong MPI build must
//! stop every rank with the same clear message, in bounded time; external
//! mode and map files must give each process the placement they describe.

mod common;

use common::{compile, under_redio_exec, Job, Launch, Mpi};
use redio::topology::Topology;
use std::path::Path;
use std::process::Command;

/// Asserts the job failed cleanly: non-zero, not by the timeout, and every
/// one of `processes` ranks printed `message`.
fn refused_on_every_rank(job: &Job, processes: usize, message: &str) {
    assert!(!job.timed_out(), "job hung instead of stopping:\n{job:#?}");
    assert_ne!(job.code, Some(0), "job should have failed:\n{job:#?}");
    assert_eq!(
        job.stderr.matches(message).count(),
        processes,
        "every rank must print {message:?}:\n{}",
        job.stderr
    );
    assert!(
        job.ranks.values().all(|out| out.is_empty()),
        "the application must not have run:\n{job:#?}"
    );
}

fn raw_launch(mpi: Mpi, processes: u32, program: &str) -> Launch<'static> {
    let exe = compile(mpi, program);
    let mut command = vec!["-n".to_string(), processes.to_string()];
    command.extend(under_redio_exec(mpi, &exe));
    Launch::launcher(mpi, command)
}

#[test]
fn world_size_not_divisible_by_degree_is_refused() {
    let job = raw_launch(Mpi::Mpich, 5, "p2p")
        .env("REDIO_REPLICATION_DEGREE", "2")
        .run();
    refused_on_every_rank(
        &job,
        5,
        "impossible replica topology: 5 processes cannot form 2 replicas",
    );
}

#[test]
fn degree_out_of_range_in_the_environment_is_refused() {
    for degree in ["0", "4"] {
        let job = raw_launch(Mpi::Mpich, 4, "p2p")
            .env("REDIO_REPLICATION_DEGREE", degree)
            .run();
        refused_on_every_rank(&job, 4, &format!("REDIO_REPLICATION_DEGREE={degree}"));
    }
}

#[test]
fn redio_run_refuses_a_bad_degree_before_launching() {
    let exe = compile(Mpi::Mpich, "p2p");
    for degree in ["0", "4"] {
        let output = Command::new(common::redio_bin())
            .args(["run", "--mpi", "mpich", "-n", "2", "-r", degree, "--"])
            .arg(&exe)
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(2));
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            stderr.contains(&format!(
                "-r {degree}: the degree of redundancy must be between 1 and 3"
            )),
            "{stderr}"
        );
    }
}

#[test]
fn invalid_configuration_stops_every_rank_with_its_location() {
    let dir = common::fresh_dir("bad-config");
    let file = dir.join("bad.yaml");
    std::fs::write(&file, "version: 1\nreplication:\n  degree: 7\n").unwrap();
    let job = raw_launch(Mpi::Mpich, 3, "p2p")
        .env("REDIO_CONFIG", file.to_str().unwrap())
        .run();
    refused_on_every_rank(&job, 3, &format!("{}:3:", file.display()));
}

#[test]
fn wrong_mpi_build_is_named() {
    for (program_mpi, library_mpi, message) in [
        (
            Mpi::OpenMpi,
            Mpi::Mpich,
            "this libredio.so was built for MPICH, but the program uses Open MPI",
        ),
        (
            Mpi::Mpich,
            Mpi::OpenMpi,
            "this libredio.so was built for Open MPI, but the program uses MPICH",
        ),
        (
            Mpi::OpenMpi5,
            Mpi::OpenMpi,
            "this libredio.so was built for Open MPI, but the program uses Open MPI 5",
        ),
        (
            Mpi::OpenMpi,
            Mpi::OpenMpi5,
            "this libredio.so was built for Open MPI 5, but the program uses Open MPI.",
        ),
    ] {
        let exe = compile(program_mpi, "p2p");
        let mut command = vec!["-n".to_string(), "2".to_string()];
        command.extend(under_redio_exec(library_mpi, &exe));
        let job = Launch::launcher(program_mpi, command).run();
        assert!(!job.timed_out(), "{job:#?}");
        assert_ne!(job.code, Some(0));
        assert!(job.stderr.contains(message), "{}", job.stderr);
    }
}

/// `scripts/install.sh PREFIX` gives a relocatable tree whose `bin/redio`
/// finds its libraries and runs a replicated job.
#[test]
fn installed_tree_runs_a_replicated_job() {
    let prefix = common::fresh_dir("prefix");
    let status = Command::new(common::repo().join("scripts/install.sh"))
        .arg(&prefix)
        .env("REDIO_NO_BUILD", "1")
        .status()
        .unwrap();
    assert!(status.success());
    for file in [
        "bin/redio",
        "lib/redio/mpich/libredio.so",
        "lib/redio/openmpi/libredio.so",
        "include/redio.h",
    ] {
        assert!(prefix.join(file).is_file(), "{file} not installed");
    }
    let exe = compile(Mpi::Mpich, "collectives");
    let _machine = common::launch_lock();
    let output = Command::new("timeout")
        .arg("120")
        .arg(prefix.join("bin/redio"))
        .args(["run", "--mpi", "mpich", "-n", "2", "-r", "2", "--"])
        .arg(&exe)
        .env_remove("REDIO_LIB_DIR")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert!(
        stderr.contains("redio: 4 processes = 2 ranks x 2 replicas (block)"),
        "{stderr}"
    );
    // Each line once (`--output once`, the default): one per logical rank,
    // not one per process.
    assert_eq!(
        String::from_utf8_lossy(&output.stdout)
            .matches("bcast 4242")
            .count(),
        2
    );
}

#[test]
fn map_file_places_ranks_as_written() {
    let mpi = Mpi::Mpich;
    let exe = compile(mpi, "p2p");
    let plain = Launch::plain(mpi, 2, &exe).run();
    plain.assert_success();
    let map = "# world replica rank\n0 1 1\n1 0 0\n2 1 0\n3 0 1\n";
    let dir = common::fresh_dir("map");
    let file = dir.join("replicas.map");
    std::fs::write(&file, map).unwrap();
    let job = raw_launch(mpi, 4, "p2p")
        .env("REDIO_REPLICATION_DEGREE", "2")
        .env("REDIO_REPLICATION_LAYOUT", "map")
        .env("REDIO_REPLICATION_MAP_FILE", file.to_str().unwrap())
        .run();
    job.assert_success();
    let topology = Topology::from_map_text(map, 4, 2).unwrap();
    for (world, output) in &job.ranks {
        let rank = topology.place(*world).rank;
        assert_eq!(output, &plain.ranks[&rank], "world rank {world}");
    }
    assert!(job.stderr.contains("(map)"), "{}", job.stderr);
}

/// External mode, MPMD launch: one `REDIO_EXTERNAL_REPLICA` per replica.
#[test]
fn external_mode_takes_the_mapping_from_the_environment() {
    let mpi = Mpi::Mpich;
    let exe = compile(mpi, "external");
    let mut command = Vec::new();
    for replica in ["0", "1"] {
        if replica != "0" {
            command.push(":".to_string());
        }
        command.extend(["-n", "2", "-env", "REDIO_EXTERNAL_REPLICA", replica].map(String::from));
        command.extend(under_redio_exec(mpi, &exe));
    }
    let job = Launch::launcher(mpi, command)
        .env("REDIO_REPLICATION_SOURCE", "external")
        .run();
    job.assert_success();
    for world in 0..4 {
        // No translation: the program sees the whole world of 4.
        let expected = format!(
            "world {world} of 4: info rc 0 replica {} rank {} degree 2\n",
            world / 2,
            world % 2
        );
        assert_eq!(job.ranks[&world], expected);
    }
    assert!(
        job.stderr
            .contains("redio: 4 processes = 2 ranks x 2 replicas (external, from the environment)"),
        "{}",
        job.stderr
    );
}

/// External mode through the C API: the "outer layer" pairs world ranks.
#[test]
fn external_mode_takes_the_mapping_from_the_c_api() {
    let mpi = Mpi::Mpich;
    let job = raw_launch(mpi, 4, "external")
        .args(["api"])
        .env("REDIO_REPLICATION_SOURCE", "external")
        .run();
    job.assert_success();
    for world in 0..4u32 {
        let expected = format!(
            "set_replica_comm returned 0\nworld {world} of 4: info rc 0 replica {} rank {} degree 2\n",
            world % 2,
            world / 2
        );
        assert_eq!(job.ranks[&world], expected);
    }
}

#[test]
fn mpi_abort_stops_the_whole_job() {
    let exe = compile(Mpi::Mpich, "abort");
    let job = Launch::redio(Mpi::Mpich, 2, 2, "block", &exe).run();
    assert!(!job.timed_out(), "{job:#?}");
    assert_ne!(job.code, Some(0));
    assert!(
        job.stderr
            .contains("MPI_Abort(MPI_COMM_WORLD, 7) called by the application"),
        "{}",
        job.stderr
    );
    assert!(job
        .ranks
        .values()
        .all(|out| !out.contains("passed the barrier")));
}

#[test]
fn processes_that_are_not_mpi_programs_run_untouched() {
    let output = Command::new(common::redio_bin())
        .args([
            "exec",
            "--mpi",
            "mpich",
            "--",
            "sh",
            "-c",
            "echo $LD_PRELOAD; echo child ok",
        ])
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.contains("libredio.so"), "{stdout}");
    assert!(stdout.ends_with("child ok\n"), "{stdout}");
}

/// A job still running at its deadline is reported with the stacks of its
/// processes (tests/common/hang.rs), so that a hang seen once in a loaded
/// CI run can be analysed: here rank 0 sleeps in its own function and
/// rank 1 waits for it in `MPI_Barrier` (redio's polled barrier).
#[test]
fn a_hung_job_is_reported_with_its_processes_stacks() {
    let exe = compile(Mpi::Mpich, "hang");
    let job = Launch::redio(Mpi::Mpich, 2, 1, "block", &exe)
        .timeout(5)
        .run();
    assert!(job.timed_out(), "the job should have hung:\n{job:#?}");
    for expected in ["the stacks of its processes", "sleep_forever", "barrier"] {
        assert!(
            job.stderr.contains(expected),
            "{expected:?} missing from the report:\n{}",
            job.stderr
        );
    }
    assert_eq!(
        job.stderr.matches("=== process ").count(),
        2,
        "one report per process of the application:\n{}",
        job.stderr
    );
}

/// Leaves in `tmp` what an Open MPI 5 launcher killed before its cleanup
/// leaves: `ompi.<pid>/pmix.<host>.tool`, for each of the next `count`
/// pids the kernel will hand out (wrapping past `kernel.pid_max`).
fn plant_stale_launcher_files(tmp: &Path, count: u32) {
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap();
    let pid_max: u32 = std::fs::read_to_string("/proc/sys/kernel/pid_max")
        .ok()
        .and_then(|text| text.trim().parse().ok())
        .unwrap_or(32768);
    let mut probe = Command::new("true").spawn().unwrap();
    let last = probe.id();
    probe.wait().unwrap();
    for step in 1..=count {
        // Past pid_max the kernel starts again above the 300 reserved pids.
        let pid = match last + step {
            pid if pid < pid_max => pid,
            pid => 300 + pid - pid_max,
        };
        let dir = tmp.join(format!("ompi.{pid}"));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join(format!("pmix.{}.tool", host.trim())), "").unwrap();
    }
}

/// Open MPI 5's launcher exits 213 ("The PMIx server's listener thread
/// failed to start") when `$TMPDIR/ompi.<its pid>/` holds the files of an
/// earlier launcher with the same pid that was killed: on a busy machine
/// pids wrap within minutes, and fault tests kill launchers. `redio run`
/// gives its launcher a directory of its own (src/cli/scratch.rs).
#[test]
fn files_left_by_killed_open_mpi_5_launchers_do_not_stop_a_run() {
    let mpi = Mpi::OpenMpi5;
    let exe = compile(mpi, "p2p");
    let expected = Launch::plain(mpi, 2, &exe).run();
    expected.assert_success();
    let tmp = common::fresh_dir("stale-launchers");
    {
        // The premise: a plain launch in that TMPDIR fails.
        let _machine = common::launch_lock();
        plant_stale_launcher_files(&tmp, 400);
        let plain = Command::new("timeout")
            .args(["-k", "5", "120", &mpi.launcher()])
            .args(["--oversubscribe", "--allow-run-as-root", "-n", "2"])
            .arg(&exe)
            .env("TMPDIR", &tmp)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&plain.stderr);
        assert_eq!(
            plain.status.code(),
            Some(213),
            "premise: Open MPI 5 started in a TMPDIR with stale session files (if a new \
             version tolerates them, this test and src/cli/scratch.rs are obsolete):\n{stderr}"
        );
        assert!(
            stderr.contains("listener thread failed to start"),
            "{stderr}"
        );
    }
    // Other tests may start processes before this one's launcher does.
    plant_stale_launcher_files(&tmp, 3000);
    let job = Launch::redio(mpi, 2, 2, "block", &exe)
        .env("TMPDIR", tmp.to_str().unwrap())
        .run();
    job.assert_success();
    for (world, output) in &job.ranks {
        assert_eq!(output, &expected.ranks[&(world % 2)], "world rank {world}");
    }
}

/// `TMPDIR` naming a directory that does not exist is refused before the
/// launch, and nothing is created in its place (issue 44, item 10: `redio
/// run` created `/nonexistent/tmp` at the root of the file system).
#[test]
fn a_missing_tmpdir_is_refused_and_not_created() {
    let exe = compile(Mpi::Mpich, "p2p");
    let base = common::fresh_dir("missing-tmpdir");
    let tmpdir = base.join("nonexistent/tmp");
    let job = Launch::redio(Mpi::Mpich, 1, 1, "block", &exe)
        .env("TMPDIR", &tmpdir.display().to_string())
        .timeout(60)
        .run();
    assert!(!job.timed_out(), "{job:#?}");
    assert!(
        !base.join("nonexistent").exists(),
        "redio run created {}",
        tmpdir.display()
    );
    assert_eq!(job.code, Some(2), "{job:#?}");
    assert!(
        job.stderr.contains(&format!(
            "the temporary directory {} does not exist",
            tmpdir.display()
        )),
        "{}",
        job.stderr
    );
}

/// `--summary` naming a FIFO (or another file that is not a regular one)
/// is refused before the launch, without blocking (issue 44, item 4:
/// `redio run` blocked in `open()` on a FIFO nobody read).
#[test]
fn a_summary_path_that_is_not_a_regular_file_is_refused() {
    let exe = compile(Mpi::Mpich, "p2p");
    let dir = common::fresh_dir("summary-fifo");
    let fifo = dir.join("summary.fifo");
    let name = std::ffi::CString::new(fifo.display().to_string()).unwrap();
    // SAFETY: a NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(name.as_ptr(), 0o600) }, 0);
    for (path, what) in [(&fifo, "a FIFO"), (&dir, "a directory")] {
        let mut launch = Launch::redio(Mpi::Mpich, 1, 1, "block", &exe).timeout(30);
        launch.redio_args = vec!["--summary".into(), path.display().to_string()];
        let job = launch.run();
        assert!(!job.timed_out(), "redio run blocked on {what}:\n{job:#?}");
        assert_eq!(job.code, Some(2), "{job:#?}");
        assert!(
            job.stderr
                .contains(&format!("--summary {}: {what}", path.display())),
            "{}",
            job.stderr
        );
        assert!(
            job.ranks.values().all(|out| out.is_empty()),
            "the application must not have run:\n{job:#?}"
        );
    }
}
