//! One program against its plain run, with the bytes counted from outside.

use crate::common::strace::{strace_prefix, written_bytes};
use crate::common::{Launch, Mpi};
use crate::support::{assert_like_plain, check_success, replicated, Area, Reference, RANKS};
use redio::topology::LayoutKind;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Seconds before a job counts as hung: these programs take a few seconds
/// under strace on a loaded machine.
const TIMEOUT: u32 = 120;

/// Bookkeeping files of the MPI-IO libraries, each replica world's own
/// (ROMIO's shared file pointer `.<file>.shfp.<random>.<pid>`): their names
/// hold a process id, so they are left out of the byte comparison.
fn is_bookkeeping(name: &str) -> bool {
    name.starts_with('.') && name.contains(".shfp.")
}

fn data_bytes(bytes: BTreeMap<String, u64>) -> BTreeMap<String, u64> {
    bytes
        .into_iter()
        .filter(|(name, _)| !is_bookkeeping(name))
        .collect()
}

/// Where the replicated runs write, and how redio learns it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Storage {
    /// `<area>/shared` declared shared in `<area>/redio.yaml` (`--config`),
    /// node-local files remapped per replica.
    Configured,
    /// No `--config` and no `REDIO_CONFIG`, as a new user on one machine:
    /// `<area>/shared` is then a node-local directory (the test's tmp area,
    /// on the local disk) that every replica of a rank names, so redio must
    /// coordinate it by itself (docs/interposition.md, "Replicas sharing a
    /// node").
    NodeLocal,
    /// No configuration either, the files under `/dev/shm` (tmpfs, also
    /// node-local, where the MPI libraries keep their own segments too).
    DevShm,
}

impl Storage {
    /// A fresh area for one run: under the test's tmp area, or under
    /// `/dev/shm` for [`Storage::DevShm`] (removed with the area's
    /// [`ShmRoot`]).
    fn area(self, name: &str, shm: &Option<ShmRoot>) -> Area {
        match (self, shm) {
            (Storage::DevShm, Some(ShmRoot(parent))) => {
                let root = parent.join(name);
                let area = Area {
                    shared: root.join("shared"),
                    local: root.join("local"),
                    config: root.join("redio.yaml"),
                    root,
                };
                std::fs::create_dir_all(&area.shared).unwrap();
                std::fs::create_dir_all(&area.local).unwrap();
                area
            }
            _ => Area::new(name, self == Storage::Configured),
        }
    }
}

/// This test's directory under `/dev/shm`, removed when dropped: files
/// there take the machine's memory. One per test (named after it), since
/// the tests of a binary run at once and one's removal must not take
/// another's files.
struct ShmRoot(PathBuf);

impl Drop for ShmRoot {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Runs `exe` plain, then under redio at each of `degrees` (block layout,
/// Simple Read and Simple Write), every process under strace, and asserts
/// that each replicated run printed, stored and wrote what the plain run
/// did. `name` names the areas; `env` is given to the replicated runs.
pub fn like_plain_and_written_once(
    mpi: Mpi,
    exe: &Path,
    name: &str,
    degrees: &[u32],
    env: &[(&str, &str)],
) {
    let command = [exe.display().to_string()];
    command_like_plain(mpi, &command, name, degrees, env, Storage::Configured);
}

/// [`like_plain_and_written_once`] with no configuration, writing into a
/// node-local directory ([`Storage::NodeLocal`]).
pub fn node_local_like_plain_and_written_once(
    mpi: Mpi,
    exe: &Path,
    name: &str,
    degrees: &[u32],
    env: &[(&str, &str)],
) {
    let command = [exe.display().to_string()];
    command_like_plain(mpi, &command, name, degrees, env, Storage::NodeLocal);
}

/// [`like_plain_and_written_once`] for a command with arguments before the
/// area's (an interpreter and its script).
pub fn command_like_plain_and_written_once(
    mpi: Mpi,
    program: &[String],
    name: &str,
    degrees: &[u32],
    env: &[(&str, &str)],
) {
    command_like_plain(mpi, program, name, degrees, env, Storage::Configured);
}

/// `program` plain, then under redio at each of `degrees` with `storage`,
/// every process under strace: each run must print, store and write (bytes
/// per file, counted by strace) what the plain run did.
pub fn command_like_plain(
    mpi: Mpi,
    program: &[String],
    name: &str,
    degrees: &[u32],
    env: &[(&str, &str)],
    storage: Storage,
) {
    let shm = (storage == Storage::DevShm).then(|| {
        let root = PathBuf::from(format!(
            "/dev/shm/redio-tests-{}-{name}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&root);
        ShmRoot(root)
    });
    let plain_storage = match storage {
        Storage::DevShm => Storage::DevShm,
        _ => Storage::NodeLocal,
    };
    let plain_area = plain_storage.area(&format!("{name}-plain"), &shm);
    let trace = plain_area.root.join("trace");
    let mut command = vec!["-n".to_string(), RANKS.to_string(), "strace".into()];
    command.extend(strace_prefix(&trace));
    command.extend(program.iter().cloned());
    command.extend(plain_area.args());
    let mut launch = Launch::launcher(mpi, command).timeout(TIMEOUT);
    for (variable, value) in env {
        launch = launch.env(variable, value);
    }
    let plain_job = launch.run();
    check_success(&plain_job, &format!("plain run of {name}"));
    let plain_bytes = data_bytes(written_bytes(&trace, &plain_area.shared));
    assert!(
        !plain_bytes.is_empty(),
        "the strace count of the plain run of {name} found no write to a shared file"
    );
    let plain = Reference {
        job: plain_job,
        area: plain_area,
    };

    for &degree in degrees {
        let configured = storage == Storage::Configured;
        let what = format!("{name} ({}) r={degree} {storage:?}", mpi.key());
        let area = storage.area(&format!("{name}-r{degree}"), &shm);
        let trace = area.root.join("trace");
        let mut args = strace_prefix(&trace);
        args.extend(program.iter().cloned());
        let job = if configured {
            replicated(
                mpi,
                Path::new("strace"),
                &area,
                (degree, "block"),
                &args,
                env,
            )
        } else {
            let mut launch = Launch::redio(mpi, RANKS, degree, "block", Path::new("strace"))
                .args(args)
                .args(area.args())
                .timeout(TIMEOUT);
            for (variable, value) in env {
                launch = launch.env(variable, value);
            }
            launch.run()
        };
        check_success(&job, &what);
        assert_like_plain(&plain, &job, &area, degree, LayoutKind::Block, &what);
        let bytes = data_bytes(written_bytes(&trace, &area.shared));
        println!("{what}: bytes written per file: plain {plain_bytes:?}, redio {bytes:?}");
        assert_eq!(
            bytes, plain_bytes,
            "{what}: the bytes that reached each file (strace) differ from the plain run's; r \
             times them would mean every replica wrote"
        );
    }
}
