//! Threads, children and refused calls: shared I/O off the MPI_Init
//! thread, forked children and system(), and the calls redio refuses on a
//! shared file (mmap, sendfile, copy_file_range, splice).

use crate::common::{compile_flavour, Flavour, Job, Mpi};
use crate::support::{
    assert_like_plain, assert_local_copies, assert_same_files, assert_stdout_matches,
    check_success, lines_with, no_skip, reference, replicated, Area, CHILD, RANKS, THREADS,
    UNSUPPORTED,
};
use redio::topology::LayoutKind;
use std::fmt::Write as _;

/// What a plain run's stdout becomes when redio refuses every call on a
/// `[refusable]` line: the result after the first ": " is `-1 ENOTSUP`
/// (`NULL ENOTSUP` for fopen).
fn with_refusals(plain: &str) -> String {
    let mut out = String::new();
    for line in plain.lines() {
        match line.strip_prefix("[refusable] ") {
            Some(rest) => {
                let (what, _) = rest
                    .split_once(": ")
                    .expect("a [refusable] line has a result");
                let failed = if what.contains("fopen") {
                    "NULL ENOTSUP"
                } else {
                    "-1 ENOTSUP"
                };
                let _ = writeln!(out, "[refusable] {what}: {failed}");
            }
            None => {
                let _ = writeln!(out, "{line}");
            }
        }
    }
    out
}

/// Every process printed what the plain run's process of the same logical
/// rank printed, except that every `[refusable]` call failed with ENOTSUP.
fn assert_refusals_in_stdout(plain: &Job, job: &Job, degree: u32, what: &str) {
    assert_stdout_matches(
        plain,
        job,
        degree,
        LayoutKind::Block,
        &format!(
            "{what} (expected: the plain run, with every [refusable] call failing with ENOTSUP)"
        ),
        with_refusals,
    );
}

/// Node-local I/O in threads works; shared I/O from a thread other than the
/// MPI_Init thread fails with ENOTSUP and a log line that says so.
#[test]
fn threads_mpich() {
    let mpi = Mpi::Mpich;
    let exe = compile_flavour(mpi, THREADS, Flavour::Fortify);
    let plain = reference(mpi, THREADS, Flavour::Fortify, &[]);
    for out in plain.job.ranks.values() {
        assert!(
            out.contains("[refusable] thread write on shared fd: 100\n"),
            "plain run: the thread's shared I/O should work:\n{out}"
        );
    }
    let degree = 2;
    let what = format!("io_threads r={degree}");
    let area = Area::new("threads-r2", true);
    let job = replicated(mpi, &exe, &area, (degree, "block"), &[], &[]);
    check_success(&job, &what);
    assert_refusals_in_stdout(&plain.job, &job, degree, &what);
    let refused = |name: &str| {
        name.starts_with("refused.")
            || name.starts_with("thread-open.")
            || name.starts_with("thread-fopen.")
    };
    assert_same_files(
        &plain.area.shared,
        &area.shared,
        &format!("{what}: shared files"),
        &refused,
    );
    for rank in 0..RANKS {
        let refused_file = area.shared_file(&format!("refused.{rank}.dat"));
        assert_eq!(
            std::fs::read(&refused_file).unwrap(),
            b"main\n",
            "{what}: {} must hold only the main thread's write (the thread's were refused)",
            refused_file.display()
        );
        for name in [
            format!("thread-open.{rank}.dat"),
            format!("thread-fopen.{rank}.txt"),
        ] {
            assert!(
                !area.shared_file(&name).exists(),
                "{what}: the refused open created {name}"
            );
        }
    }
    assert_local_copies(&plain.area, &area, degree, &what, &no_skip);
    // E.g. `redio[world 0, rank 0 replica 0]: error: open(<path>) from a
    // thread other than the MPI main thread: ... refused with ENOTSUP`.
    for rank in 0..RANKS {
        let path = area.shared_file(&format!("thread-open.{rank}.dat"));
        let path = path.display().to_string();
        assert!(
            !lines_with(&job.stderr, &["thread", &path]).is_empty(),
            "{what}: the refusal must be logged on a line that names the thread and {path}:\n{}",
            job.stderr
        );
    }
}

/// A forked child and a system() shell write shared files themselves; the
/// parent's I/O around them stays coordinated.
#[test]
fn children_mpich() {
    let mpi = Mpi::Mpich;
    let exe = compile_flavour(mpi, CHILD, Flavour::Fortify);
    let plain = reference(mpi, CHILD, Flavour::Fortify, &[]);
    let degree = 2;
    let what = format!("io_child r={degree}");
    let area = Area::new("child-r2", true);
    let job = replicated(mpi, &exe, &area, (degree, "block"), &[], &[]);
    check_success(&job, &what);
    for rank in 0..RANKS {
        for (name, text) in [
            (
                format!("child.{rank}.txt"),
                format!("written by the forked child of rank {rank}\n"),
            ),
            (
                format!("system.{rank}.txt"),
                format!("written by system() for rank {rank}\n"),
            ),
        ] {
            let path = area.shared_file(&name);
            let found = std::fs::read_to_string(&path).unwrap_or_else(|e| {
                panic!("{what}: the child did not write {}: {e}", path.display())
            });
            assert_eq!(found, text, "{what}: {}", path.display());
        }
    }
    assert_like_plain(&plain, &job, &area, degree, LayoutKind::Block, &what);
    assert_local_copies(&plain.area, &area, degree, &what, &no_skip);
}

/// mmap, sendfile, copy_file_range and splice on a shared file fail with
/// ENOTSUP, logged with the operation and the path; on a node-local file
/// they work.
#[test]
fn unsupported_calls_are_refused_on_shared_files_mpich() {
    let mpi = Mpi::Mpich;
    for flavour in [Flavour::O0, Flavour::Fortify64] {
        let exe = compile_flavour(mpi, UNSUPPORTED, flavour);
        let plain = reference(mpi, UNSUPPORTED, flavour, &[]);
        let degree = 2;
        let what = format!("io_unsupported ({flavour:?}) r={degree}");
        let area = Area::new(&format!("unsupported-{}-r2", flavour.key()), true);
        let job = replicated(mpi, &exe, &area, (degree, "block"), &[], &[]);
        check_success(&job, &what);
        assert_refusals_in_stdout(&plain.job, &job, degree, &what);
        assert_same_files(
            &plain.area.shared,
            &area.shared,
            &format!("{what}: shared files"),
            &no_skip,
        );
        assert_local_copies(&plain.area, &area, degree, &what, &no_skip);
        let shared = area.shared.display().to_string();
        for operation in ["mmap", "sendfile", "copy_file_range", "splice"] {
            assert!(
                !lines_with(&job.stderr, &[operation, &shared]).is_empty(),
                "{what}: the refused {operation} must be logged with the path (a stderr line \
                 naming {operation} and a file under {shared}):\n{}",
                job.stderr
            );
        }
    }
}
