//! Hand-written wrappers: `MPI_Init`, `MPI_Init_thread`, `MPI_Finalize`,
//! `MPI_Abort`.

use super::{ffi, pmpi};
use crate::runtime::{finish, flavour, guard::InsideMpi, log, start, ulfm, world};
use std::ffi::{c_char, c_int};

/// `MPI_Init`: initialise MPI, then set up the replicated world.
///
/// # Safety
/// Called from C with the arguments the MPI standard specifies for this function.
#[no_mangle]
pub unsafe extern "C" fn MPI_Init(argc: *mut c_int, argv: *mut *mut *mut c_char) -> c_int {
    flavour::check_or_exit();
    let rc = {
        let _inside = InsideMpi::enter();
        pmpi::PMPI_Init(argc, argv)
    };
    if rc == ffi::redio_mpi_success {
        start::after_init();
        ulfm::probe_if_asked();
    }
    rc
}

/// `MPI_Init_thread`: like [`MPI_Init`].
///
/// # Safety
/// Called from C with the arguments the MPI standard specifies for this function.
#[no_mangle]
pub unsafe extern "C" fn MPI_Init_thread(
    argc: *mut c_int,
    argv: *mut *mut *mut c_char,
    required: c_int,
    provided: *mut c_int,
) -> c_int {
    flavour::check_or_exit();
    let rc = {
        let _inside = InsideMpi::enter();
        pmpi::PMPI_Init_thread(argc, argv, required, provided)
    };
    if rc == ffi::redio_mpi_success {
        start::after_init();
        ulfm::probe_if_asked();
    }
    rc
}

/// `MPI_Finalize`: redio's summary and clean-up, then finalize.
///
/// # Safety
/// Called from C with the arguments the MPI standard specifies for this function.
#[no_mangle]
pub unsafe extern "C" fn MPI_Finalize() -> c_int {
    if finish::before_finalize() == finish::Finalize::Skip {
        return ffi::redio_mpi_success;
    }
    let _inside = InsideMpi::enter();
    pmpi::PMPI_Finalize()
}

/// `MPI_Abort`: the application gave up, so the whole job stops, all
/// replicas included (they would all reach the same abort anyway).
///
/// # Safety
/// Called from C with the arguments the MPI standard specifies for this function.
#[no_mangle]
pub unsafe extern "C" fn MPI_Abort(comm: ffi::MPI_Comm, errorcode: c_int) -> c_int {
    let _inside = InsideMpi::enter();
    let scope = if comm == world::real_world() {
        "MPI_COMM_WORLD"
    } else {
        "a communicator"
    };
    log::announce(format_args!(
        "MPI_Abort({scope}, {errorcode}) called by the application: stopping the whole job"
    ));
    abort_job(errorcode)
}

/// Ends the whole job with `errorcode`, after giving the launcher time to
/// forward what was just logged (it tears down its output forwarding as
/// soon as the abort reaches it).
///
/// The code is recorded as this process's exit status, even where the
/// launcher then kills it: it is the job's (the application's own
/// `MPI_Abort`, or redio's decision: 75 for a mismatch or divergence it
/// cannot return as an error, 76 for `on_replica_failure: abort`).
pub fn abort_job(errorcode: c_int) -> ! {
    let _inside = InsideMpi::enter();
    crate::runtime::exits::record(errorcode, redio_core::outcome::ExitHow::Exit);
    std::thread::sleep(std::time::Duration::from_millis(200));
    // SAFETY: aborting on the real world communicator.
    unsafe { pmpi::PMPI_Abort(world::real_world(), errorcode) };
    // PMPI_Abort does not return; if it ever does, do not go on.
    std::process::exit(errorcode)
}
