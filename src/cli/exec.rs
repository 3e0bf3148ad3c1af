//! `redio exec`: put libredio.so into one application process and exec it.
//!
//! It is the last hop of every launch: `mpiexec … redio exec -- APP`. The
//! launcher itself never gets the preload, only the application does.

use super::mpi::{find_library, Flavour};
use std::ffi::OsString;
use std::os::unix::process::CommandExt;
use std::process::{Command, ExitCode};

/// UCX's setting for how it hooks `mmap` (see [`exec`]).
pub const UCX_MMAP_HOOK: &str = "UCX_MEM_MMAP_HOOK_MODE";

/// Arguments of `redio exec`.
#[derive(clap::Args)]
pub struct ExecArgs {
    /// MPI implementation the application is linked to (default: from
    /// REDIO_MPI or the launcher's environment).
    #[arg(long, value_enum)]
    pub mpi: Option<Flavour>,
    /// The application and its arguments.
    #[arg(last = true, required = true)]
    pub command: Vec<OsString>,
}

/// Runs `redio exec`; returns only on failure.
pub fn exec(args: ExecArgs) -> ExitCode {
    let result = Flavour::resolve(args.mpi).and_then(find_library);
    let library = match result {
        Ok(library) => library,
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
    if std::env::var_os(UCX_MMAP_HOOK).is_none() {
        command.env(UCX_MMAP_HOOK, "none");
    }
    let error = command.exec();
    eprintln!(
        "redio exec: cannot run {}: {error}",
        program.to_string_lossy()
    );
    ExitCode::from(127)
}
