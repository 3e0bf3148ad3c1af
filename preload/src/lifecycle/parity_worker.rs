//! The collective `redio parity encode | verify | rebuild` job, run by the
//! `redio` CLI's MPI worker processes (`redio_parity_job` of the C API):
//! MPI started and finalised here, the work in [`crate::parity::worker`].

use crate::comm::ffi;
use crate::comm::pmpi;
use crate::sys::guard::InsideMpi;
use std::ffi::c_int;

/// Initialises MPI, runs the parity worker over `MPI_COMM_WORLD` with the
/// `KEY=VALUE` words `args`, prints the report and `redio-parity-exit: N`
/// on rank 0's stdout, and finalises MPI. Returns N, or -1 when MPI could
/// not start.
pub fn run(args: &[String]) -> c_int {
    let _inside = InsideMpi::enter();
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
