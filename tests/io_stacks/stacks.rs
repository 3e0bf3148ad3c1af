//! One program against its plain run, with the bytes counted from outside.

use crate::common::strace::{strace_prefix, written_bytes};
use crate::common::{Launch, Mpi};
use crate::support::{assert_like_plain, check_success, replicated, Area, Reference, RANKS};
use redio::topology::LayoutKind;
use std::collections::BTreeMap;
use std::path::Path;

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
    command_like_plain_and_written_once(mpi, &command, name, degrees, env);
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
    let plain_area = Area::new(&format!("{name}-plain"), false);
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
        let what = format!("{name} ({}) r={degree}", mpi.key());
        let area = Area::new(&format!("{name}-r{degree}"), true);
        let trace = area.root.join("trace");
        let mut args = strace_prefix(&trace);
        args.extend(program.iter().cloned());
        let job = replicated(
            mpi,
            Path::new("strace"),
            &area,
            (degree, "block"),
            &args,
            env,
        );
        check_success(&job, &what);
        assert_like_plain(&plain, &job, &area, degree, LayoutKind::Block, &what);
        let bytes = data_bytes(written_bytes(&trace, &area.shared));
        println!("{what}: bytes written per shared file: plain {plain_bytes:?}, redio {bytes:?}");
        assert_eq!(
            bytes, plain_bytes,
            "{what}: the bytes that reached each shared file (strace) differ from the plain \
             run's; r times them would mean every replica wrote"
        );
    }
}
