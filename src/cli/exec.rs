//! `redio exec`: put libredio.so into one application process and exec it.
//!
//! It is the last hop of every launch: `mpiexec … redio exec -- APP`. The
//! launcher itself never gets the preload, only the application does. With
//! `--survive` under MPICH, and with replicas (to print each output line
//! once, [`super::output`]), it stays as the application's parent
//! ([`super::supervise`]).

use super::exec_life::{Recorder, CANNOT_RUN};
use super::flavour::{find_library, Flavour};
use super::output;
use crate::output::OutputMode;
use std::ffi::OsString;
use std::os::unix::process::CommandExt;
use std::process::{Command, ExitCode};

/// UCX's setting for how it hooks `mmap` (see [`exec`]).
pub const UCX_MMAP_HOOK: &str = "UCX_MEM_MMAP_HOOK_MODE";

/// UCX's message size from which it uses the rendezvous protocol. On one
/// node that protocol reads the sender's buffer with `process_vm_readv`
/// (the CMA transport), and MPICH 4.0.2 opens its UCX endpoints without
/// error handling, so when the sender dies mid-transfer the reader dies
/// too (`cma_ep.c: process_vm_readv(...) returned -1: No such process`, a
/// UCX fatal error): a replica's death took a survivor of another logical
/// rank with it. `inf` sends every message eagerly, through buffers that
/// a dead peer simply stops filling. Measured cost: benches/ucx_transports.sh
/// (docs/benchmarks.md, "What surviving SIGKILL costs under MPICH").
pub const UCX_RNDV_THRESH: &str = "UCX_RNDV_THRESH";

/// Arguments of `redio exec`.
#[derive(clap::Args)]
pub struct ExecArgs {
    /// MPI implementation the application is linked to (default: from
    /// REDIO_MPI or the launcher's environment).
    #[arg(long, value_enum)]
    pub mpi: Option<Flavour>,
    /// The job must survive the death of a process (`redio run` sets it
    /// for replicated jobs with `on_replica_failure: continue`). Under
    /// MPICH this runs the application as a child ([`super::supervise`])
    /// and keeps UCX off the transfers that abort when a peer vanishes
    /// ([`UCX_RNDV_THRESH`]).
    #[arg(long)]
    pub survive: bool,
    /// The application and its arguments.
    #[arg(last = true, required = true)]
    pub command: Vec<OsString>,
}

/// Runs `redio exec`; returns only on failure.
pub fn exec(args: ExecArgs) -> ExitCode {
    let result = Flavour::resolve(args.mpi).and_then(|f| Ok((f, find_library(f)?)));
    let (flavour, library) = match result {
        Ok(found) => found,
        Err(message) => {
            eprintln!("redio exec: {message}");
            return ExitCode::from(2);
        }
    };
    let mut preload = OsString::from(library);
    if let Some(existing) = std::env::var_os("LD_PRELOAD").filter(|v| !v.is_empty()) {
        preload.push(" ");
        preload.push(existing);
    }
    let mode = match OutputMode::from_env() {
        Ok(mode) => mode,
        Err(message) => {
            eprintln!("redio exec: {message}");
            return ExitCode::from(2);
        }
    };
    let (program, rest) = args.command.split_first().expect("clap requires a command");
    let mut command = Command::new(program);
    command.args(rest).env("LD_PRELOAD", preload);
    // exec keeps the pid: this tells the application process from its
    // children, which inherit the environment (preload `runtime/exits.rs`).
    command.env(crate::outcome::ENV_EXEC_PID, std::process::id().to_string());
    // UCX (under MPICH's ch4:ucx and Open MPI's pml/ucx) rewrites every
    // loaded object's `mmap` relocation at MPI_Init, which would route the
    // application's mmap around libredio.so: mmap of a shared file could not
    // be refused. Without the hook UCX only loses its registration cache
    // (RDMA networks). An explicit setting of the user's wins.
    set_default(&mut command, UCX_MMAP_HOOK, "none");
    let survive = args.survive && flavour == Flavour::Mpich;
    if survive {
        set_default(&mut command, UCX_RNDV_THRESH, "inf");
    }
    let output = output_plan(mode);
    if survive || output.is_some() {
        // The application is this process's child, not this process.
        command.env(
            crate::outcome::ENV_EXEC_PID,
            format!("parent:{}", std::process::id()),
        );
        return super::supervise::run(command, &program.to_string_lossy(), output, survive);
    }
    let error = command.exec();
    eprintln!(
        "redio exec: cannot run {}: {error}",
        program.to_string_lossy()
    );
    if let Some(recorder) = Recorder::from_env() {
        recorder.cannot_run(CANNOT_RUN);
    }
    ExitCode::from(CANNOT_RUN)
}

/// How this process's output must be handled, or `None` when it passes
/// through untouched: one replica (`once` has nothing to deduplicate), or
/// a placement `redio exec` cannot know (see [`output::role_from_env`]).
fn output_plan(mode: OutputMode) -> Option<output::Plan> {
    let role = output::role_from_env()?;
    if mode == OutputMode::Once && role.degree < 2 {
        return None;
    }
    Some(output::Plan {
        mode,
        role,
        // Another node's processes cannot reach the run directory of
        // `redio run` (it is in that node's temporary directory).
        run_dir: std::env::var_os(crate::outcome::ENV_RUN_DIR)
            .map(std::path::PathBuf::from)
            .filter(|dir| dir.is_dir()),
    })
}

/// Sets `name` to `value` for the application unless the user set it.
fn set_default(command: &mut Command, name: &str, value: &str) {
    if std::env::var_os(name).is_none() {
        command.env(name, value);
    }
}
