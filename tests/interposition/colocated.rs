//! Node-local files of co-located replicas, with no configuration (issue
//! 18, "safe without configuration"): the README's quick start runs every
//! replica on one machine, where a node-local path names one file for all
//! replicas of a rank. `io_colocated.c` makes the calls that go wrong when
//! each replica makes them on that one file (`O_EXCL`, `O_TRUNC`,
//! `O_APPEND`, a stat-then-create, `unlink`, `mkdir`/`rmdir`) and renames a
//! temporary file named after its process id over a common name. Under
//! `redio run` with no configuration every replica must print the plain
//! run's lines, the directory must hold the plain run's files byte for
//! byte (and no leftover temporary file), and (MPICH, strace) the bytes
//! that reach each file must be the plain run's, written once.
//!
//! The same from Python (`tests/programs/py/colocated.py`, mpi4py on Open
//! MPI): `os.makedirs`, JSON files, a log per rank appended to twice, a
//! log both ranks append to at once, a
//! `NamedTemporaryFile` moved over a common name, a module written and
//! imported after `MPI_Init`.
//!
//! Without the coordination (before it: `git stash` the preload's
//! `io/paths.rs` change) the second replica's `O_EXCL` open fails with
//! `EEXIST` and the appended file is 14 bytes too long.

use crate::common::strace::{strace_prefix, written_bytes};
use crate::common::{Flavour, Launch, Mpi};
use crate::support::{
    assert_same_files, assert_stdout_matches, check_success, no_skip, reference, Area, RANKS,
    TIMEOUT,
};
use redio::topology::LayoutKind;
use std::collections::BTreeMap;
use std::path::Path;

const COLOCATED: &str = "io/io_colocated.c";

/// `io_colocated` plain, then under redio at each of `degrees` with no
/// configuration (under strace when `count_bytes`).
fn like_plain_without_configuration(mpi: Mpi, degrees: &[u32], count_bytes: bool) {
    let plain = reference(mpi, COLOCATED, Flavour::O0, &[]);
    let exe = crate::common::compile_flavour(mpi, COLOCATED, Flavour::O0);
    let plain_bytes = count_bytes.then(|| {
        // The plain run's bytes per file, under strace too.
        let area = Area::new(&format!("{}-colocated-plain-traced", mpi.key()), false);
        let trace = area.root.join("trace");
        let mut command = vec!["-n".to_string(), RANKS.to_string(), "strace".into()];
        command.extend(strace_prefix(&trace));
        command.push(exe.display().to_string());
        command.extend(area.args());
        let job = Launch::launcher(mpi, command).timeout(TIMEOUT).run();
        check_success(&job, "plain run of io_colocated under strace");
        written_bytes(&trace, &area.shared)
    });
    for &degree in degrees {
        let what = format!("io_colocated under {mpi:?}, r={degree}, no configuration");
        let area = Area::new(&format!("{}-colocated-r{degree}", mpi.key()), false);
        let trace = area.root.join("trace");
        let job = if count_bytes {
            let mut args = strace_prefix(&trace);
            args.push(exe.display().to_string());
            Launch::redio(mpi, RANKS, degree, "block", Path::new("strace"))
                .args(args)
                .args(area.args())
        } else {
            Launch::redio(mpi, RANKS, degree, "block", &exe).args(area.args())
        }
        .timeout(TIMEOUT)
        .run();
        check_success(&job, &what);
        assert_stdout_matches(&plain.job, &job, degree, LayoutKind::Block, &what, |out| {
            out.to_string()
        });
        assert_same_files(&plain.area.shared, &area.shared, &what, &no_skip);
        if let Some(plain_bytes) = &plain_bytes {
            let (own, bytes) = apart(written_bytes(&trace, &area.shared));
            let (plain_own, plain_bytes) = apart(plain_bytes.clone());
            assert_eq!(
                bytes, plain_bytes,
                "{what}: the bytes that reached each node-local file (strace) must be the \
                 plain run's, written once"
            );
            assert_eq!(
                own.len(),
                plain_own.len() * degree as usize,
                "{what}: every replica writes its own temporary file (named after its process \
                 id): {own:?}"
            );
        }
    }
}

/// Splits byte counts into the temporary files named after a process id
/// (`tmp.<rank>.<pid>`: each process's own) and the others.
fn apart(bytes: BTreeMap<String, u64>) -> (BTreeMap<String, u64>, BTreeMap<String, u64>) {
    bytes
        .into_iter()
        .partition(|(name, _)| name.starts_with("tmp."))
}

#[test]
fn colocated_replicas_share_node_local_files_as_in_a_plain_run_mpich() {
    like_plain_without_configuration(Mpi::Mpich, &[2, 3], true);
}

#[test]
fn colocated_replicas_share_node_local_files_as_in_a_plain_run_openmpi() {
    like_plain_without_configuration(Mpi::OpenMpi, &[2], false);
}

/// `colocated.py` plainly and at r=2 and r=3 with no configuration: every
/// replica prints the plain run's lines, the directory holds the plain
/// run's files and no temporary file is left.
#[test]
fn colocated_replicas_share_node_local_files_from_python_openmpi() {
    const PYTHON: &str = "/usr/bin/python3";
    let mpi = Mpi::OpenMpi;
    let script = crate::common::repo().join("tests/programs/py/colocated.py");
    let plain_area = Area::new("openmpi-colocated-python-plain", false);
    let plain = Launch::plain(mpi, RANKS, Path::new(PYTHON))
        .args([script.display().to_string()])
        .args([plain_area.shared.display().to_string()])
        .timeout(TIMEOUT)
        .run();
    check_success(&plain, "plain run of colocated.py");
    for degree in [2, 3] {
        let what = format!("colocated.py under {mpi:?}, r={degree}, no configuration");
        let area = Area::new(&format!("openmpi-colocated-python-r{degree}"), false);
        let job = Launch::redio(mpi, RANKS, degree, "block", Path::new(PYTHON))
            .args([script.display().to_string()])
            .args([area.shared.display().to_string()])
            .timeout(TIMEOUT)
            .run();
        check_success(&job, &what);
        assert_stdout_matches(&plain, &job, degree, LayoutKind::Block, &what, |out| {
            out.to_string()
        });
        assert_same_files(&plain_area.shared, &area.shared, &what, &no_skip);
    }
}
