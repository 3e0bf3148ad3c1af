//! Hand-written wrappers: `MPI_Init`, `MPI_Init_thread`, `MPI_Finalize`,
//! `MPI_Finalized`, `MPI_Abort`.

use crate::comm::ffi;

use crate::comm::pmpi;
use crate::lifecycle::finish;
use crate::lifecycle::start;
use std::ffi::{c_char, c_int};

/// The generated wrappers, and how many translate a communicator (logged
/// at start-up).
const WRAPPERS: (usize, usize) = (
    crate::exports::wrappers::WRAPPERS,
    crate::exports::wrappers::TRANSLATING,
);

/// `MPI_Init`: initialise MPI, then set up the replicated world.
///
/// # Safety
/// Called from C with the arguments the MPI standard specifies for this function.
#[no_mangle]
pub unsafe extern "C" fn MPI_Init(argc: *mut c_int, argv: *mut *mut *mut c_char) -> c_int {
    start::init(|| pmpi::PMPI_Init(argc, argv), WRAPPERS)
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
    start::init(
        || pmpi::PMPI_Init_thread(argc, argv, required, provided),
        WRAPPERS,
    )
}

/// `MPI_Finalize`: redio's summary and clean-up, then finalize.
///
/// # Safety
/// Called from C with the arguments the MPI standard specifies for this function.
#[no_mangle]
pub unsafe extern "C" fn MPI_Finalize() -> c_int {
    finish::finalize(|| pmpi::PMPI_Finalize())
}

/// `MPI_Finalized`: also true after an `MPI_Finalize` that left without
/// the real one.
///
/// # Safety
/// Called from C with the arguments the MPI standard specifies for this function.
#[no_mangle]
pub unsafe extern "C" fn MPI_Finalized(flag: *mut c_int) -> c_int {
    finish::finalized(flag, || pmpi::PMPI_Finalized(flag))
}

/// `MPI_Abort`: the application gave up, so the whole job stops, all
/// replicas included (they would all reach the same abort anyway).
///
/// # Safety
/// Called from C with the arguments the MPI standard specifies for this function.
#[no_mangle]
pub unsafe extern "C" fn MPI_Abort(comm: ffi::MPI_Comm, errorcode: c_int) -> c_int {
    finish::abort(comm, errorcode)
}
