//! A test hook that shows what ULFM reports when a process dies
//! (`REDIO_TEST_ULFM_PROBE`), with Open MPI 5's functions of
//! [`crate::comm::mpix`].

use crate::comm::mpix::{
    agree, available, enabled, failed_ranks, is_proc_failed, is_revoked, is_revoked_error, revoke,
    shim, shrink,
};
use crate::comm::{ffi, p2p, pmpi};
use crate::sys::guard::InsideMpi;
use std::ffi::c_int;
use std::time::{Duration, Instant};

/// Test hook, run after `MPI_Init` when `REDIO_TEST_ULFM_PROBE` is set.
///
/// `REDIO_TEST_ULFM_PROBE=<world rank>:<kill|exit0|exit1>`: on a duplicate
/// of the real `MPI_COMM_WORLD` with `MPI_ERRORS_RETURN`, that rank dies
/// (`SIGKILL` to itself, `_exit(0)` or `_exit(1)`) half a second after a
/// barrier; every other rank
/// waits for a message from it with `MPI_Irecv` + `MPI_Test` until the error
/// comes (at most 20 s: `MPIX_ERR_PROC_FAILED`, or `MPIX_ERR_REVOKED` when
/// another survivor revoked first), then revokes the communicator, shrinks
/// it, agrees on a flag, lists the failed ranks, and prints one line:
///
/// `ulfm probe: rank R: <error class> after S s; failed [..]; revoked true;
/// shrunk to N; agree rc 0 flag F`
///
/// and leaves with `_exit(0)` (after a failure, `MPI_Finalize` may hang).
pub fn probe_if_asked() {
    let Ok(spec) = std::env::var("REDIO_TEST_ULFM_PROBE") else {
        return;
    };
    let emit = |text: String| crate::sys::log::emit(&format!("ulfm probe: {text}\n"));
    let (victim, how) = match spec.split_once(':') {
        Some((rank, how @ ("kill" | "exit0" | "exit1"))) if rank.parse::<i32>().is_ok() => {
            (rank.parse::<i32>().unwrap_or(0), how)
        }
        _ => {
            emit(format!(
                "bad REDIO_TEST_ULFM_PROBE={spec:?}: expected <rank>:<kill|exit0|exit1>"
            ));
            // SAFETY: leaving at once from a test hook.
            unsafe { libc::_exit(2) };
        }
    };
    let _inside = InsideMpi::enter();
    let world = crate::state::world::real_world();
    let mut comm = shim!(redio_mpi_comm_null);
    let mut rank = 0;
    // SAFETY: MPI is initialised; handles come from the loaded library.
    unsafe {
        pmpi::PMPI_Comm_dup(world, &mut comm);
        pmpi::PMPI_Comm_set_errhandler(comm, shim!(redio_mpi_errors_return));
        pmpi::PMPI_Comm_rank(comm, &mut rank);
        pmpi::PMPI_Barrier(comm);
    }
    if !available() || !enabled() {
        emit(format!(
            "rank {rank}: ULFM available {}, enabled {}",
            available(),
            enabled()
        ));
        // SAFETY: leaving from a test hook.
        unsafe { libc::_exit(4) };
    }
    let start = Instant::now();
    if rank == victim {
        std::thread::sleep(Duration::from_millis(500));
        // A planned death, like REDIO_TEST_DIE's: not the application's
        // exit status for `redio run`.
        crate::state::report::event(redio_core::outcome::Event::Injected {
            how: how.into(),
            seq: 0,
        });
        // SAFETY: the point of the probe is to die here.
        unsafe {
            match how {
                "kill" => libc::kill(libc::getpid(), libc::SIGKILL),
                "exit0" => libc::_exit(0),
                _ => libc::_exit(1),
            };
            libc::_exit(1);
        }
    }
    let mut value: c_int = 0;
    // Tested by hand, not through `poll`: the probe shows what MPI itself
    // reports. A receive still pending stays posted: the probe leaves with
    // `_exit` below, and never gives it up.
    let mut receive = p2p::irecv(std::slice::from_mut(&mut value), victim, 0x7ed9, comm);
    let rc = match &mut receive {
        Err(code) => *code,
        Ok(request) => loop {
            match request.test() {
                Err(code) => break code,
                Ok(true) => break shim!(redio_mpi_success),
                Ok(false) if start.elapsed() >= Duration::from_secs(20) => {
                    break shim!(redio_mpi_success)
                }
                Ok(false) => std::thread::sleep(Duration::from_millis(1)),
            }
        },
    };
    let detected = start.elapsed().as_secs_f64() - 0.5;
    let class = if is_proc_failed(rc) {
        "MPIX_ERR_PROC_FAILED".to_string()
    } else if is_revoked_error(rc) {
        // Another survivor saw the failure first and revoked.
        "MPIX_ERR_REVOKED".to_string()
    } else {
        format!("rc {rc}")
    };
    // SAFETY: `comm` is the live duplicate made above.
    let revoked = unsafe { revoke(comm).and_then(|()| is_revoked(comm)) };
    // SAFETY: as above.
    let (size, agreed) = match unsafe { shrink(comm) } {
        Ok(mut shrunk) => {
            let (mut size, mut flags) = (0, 0b101);
            // SAFETY: `shrunk` is a valid new communicator, freed here.
            unsafe { pmpi::PMPI_Comm_size(shrunk, &mut size) };
            // SAFETY: `shrunk` is valid until freed below.
            let agree_rc = match unsafe { agree(shrunk, &mut flags) } {
                Ok(()) => 0,
                Err(code) => code,
            };
            // SAFETY: as above.
            unsafe { pmpi::PMPI_Comm_free(&mut shrunk) };
            (size, format!("agree rc {agree_rc} flag {flags}"))
        }
        Err(code) => (-1, format!("shrink rc {code}")),
    };
    // After the shrink: before it, a survivor that saw only the revoke may
    // not know of the failure yet (local knowledge, empty list).
    // SAFETY: `comm` is still a valid (revoked) communicator.
    let failed = unsafe { failed_ranks(comm) };
    emit(format!(
        "rank {rank}: {class} after {detected:.3} s; failed {failed:?}; revoked {revoked:?}; \
         shrunk to {size}; {agreed}"
    ));
    // The probe is this survivor's whole job: it completed (for `redio
    // run`'s verdict, as if it had reached MPI_Finalize).
    crate::state::report::event(redio_core::outcome::Event::Finished);
    // SAFETY: after a failure MPI_Finalize can hang; leave at once.
    unsafe { libc::_exit(0) };
}
