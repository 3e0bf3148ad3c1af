//! Hand-written `MPI_Barrier`: the lazy-parity trigger, and a barrier that
//! survives a stalled channel (`crate::lifecycle::barrier`).

use crate::comm::ffi;
use std::ffi::c_int;

/// `MPI_Barrier`.
///
/// # Safety
/// Called from C with the arguments the MPI standard specifies for this function.
#[no_mangle]
pub unsafe extern "C" fn MPI_Barrier(comm: ffi::MPI_Comm) -> c_int {
    crate::lifecycle::barrier::barrier(comm)
}
