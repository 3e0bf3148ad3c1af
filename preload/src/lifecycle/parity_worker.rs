//! The collective `redio parity encode | verify | rebuild` job, run by the
//! `redio` CLI's MPI worker processes (`redio_parity_job` of the C API):
//! MPI started and finalised here, the work in [`crate::parity::worker`].

use crate::comm::ffi;
use crate::comm::flavour;
use crate::comm::pmpi;
use crate::sys::guard::InsideMpi;
use std::ffi::{c_int, OsString};

/// MPICH's variable that makes every process treat the others as remote:
/// no shared-memory segment at start-up, every message through the
/// network module. Under ch4:ucx, UCX still moves a node's messages
/// through shared memory and cross-memory attach. What it saves: MPICH
/// 4.0.2 sets up that segment with barriers that spin without yielding,
/// so with more workers than cores the waiting ranks keep the late ones
/// off the cores (a 4-rank launch on 2 cores: 35% of the first 100 ms in
/// that spin; 0.133 → 0.061 s wall; docs/benchmarks.md, runs 15 and 16).
const MPICH_NOLOCAL: &str = "MPIR_CVAR_NOLOCAL";

/// The MPICH device under which [`MPICH_NOLOCAL`] was measured. Other
/// devices may send a node's messages over TCP instead: left alone.
const NOLOCAL_DEVICE: &str = "ch4:ucx";

/// Initialises MPI, runs the parity worker over `MPI_COMM_WORLD` with the
/// `KEY=VALUE` words `args`, prints the report and `redio-parity-exit: N`
/// on rank 0's stdout, and finalises MPI. Returns N, or -1 when MPI could
/// not start.
pub fn run(args: &[String]) -> c_int {
    let _inside = InsideMpi::enter();
    if nolocal_wanted(
        std::env::var_os(MPICH_NOLOCAL),
        &flavour::library_version_text(),
    ) {
        // MPICH reads its variables in MPI_Init, below. This process is
        // the CLI's worker and has started no thread yet (MPI starts its
        // own in MPI_Init), so nothing reads the environment beside this
        // write.
        std::env::set_var(MPICH_NOLOCAL, "1");
    }
    let (mut zero_argc, mut zero_argv) = (0, std::ptr::null_mut());
    // SAFETY: MPI is started once, by this worker, with no arguments.
    if unsafe { pmpi::PMPI_Init(&mut zero_argc, &mut zero_argv) != ffi::redio_mpi_success } {
        return -1;
    }
    // SAFETY: a constant of shim.c; MPI is initialised.
    let world = unsafe { ffi::redio_mpi_comm_world };
    let mut rank = 0;
    // SAFETY: the real world, valid after PMPI_Init.
    unsafe { pmpi::PMPI_Comm_rank(world, &mut rank) };
    let report = redio_parity::worker_args::JobSpec::from_args(args)
        .and_then(|spec| crate::parity::worker::run(world, &spec));
    // An error that stopped this rank is printed by it, whatever its rank.
    let (code, lines, stopped) = match report {
        Ok(r) => (r.code, r.lines, false),
        Err(e) => (
            crate::parity::worker::EXIT_ERROR,
            vec![format!("rank {rank}: {e}")],
            true,
        ),
    };
    if rank == 0 || stopped {
        // This process is the redio CLI's worker, not an application: its
        // own stdout is the report channel back to the CLI.
        use std::io::Write;
        let mut out = std::io::stdout().lock();
        for l in &lines {
            let _ = writeln!(out, "{l}");
        }
        if rank == 0 {
            let _ = writeln!(out, "redio-parity-exit: {code}");
        }
        let _ = out.flush();
    }
    // SAFETY: every worker finalises once, at the end of its job.
    unsafe { pmpi::PMPI_Finalize() };
    c_int::from(code)
}

/// Whether to set [`MPICH_NOLOCAL`]: not when the user set it (`user`),
/// else when the loaded library (its `MPI_Get_library_version` text) is an
/// MPICH built with [`NOLOCAL_DEVICE`]. Every worker loads the same
/// library, so all of them decide alike.
fn nolocal_wanted(user: Option<OsString>, version_text: &str) -> bool {
    user.is_none() && redio_core::startup::mpich_device(version_text) == Some(NOLOCAL_DEVICE)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mpich_goes_without_shared_memory_only_under_ucx_and_unless_the_user_chose() {
        let mpich = |device: &str| format!("MPICH Version:\t4.0.2\nMPICH Device:\t{device}\n");
        assert!(nolocal_wanted(None, &mpich("ch4:ucx")));
        assert!(!nolocal_wanted(Some("0".into()), &mpich("ch4:ucx")));
        assert!(!nolocal_wanted(None, &mpich("ch4:ofi")));
        assert!(!nolocal_wanted(None, &mpich("ch3:nemesis")));
        assert!(!nolocal_wanted(None, "Open MPI v4.1.4, package: Debian"));
    }
}
