//! Hand-written wrappers for attribute queries on `MPI_COMM_WORLD`.
//!
//! Predefined attributes (`MPI_TAG_UB`, `MPI_UNIVERSE_SIZE`, …) hang on the
//! real `MPI_COMM_WORLD` only, not on the replica world that replaces it.
//! User attributes set on `MPI_COMM_WORLD` land on the replica world. So:
//! ask the replica world first, then the real world.

use crate::comm::ffi;

use crate::comm::pmpi;
use crate::state::world;
use crate::sys::guard::InsideMpi;
use std::ffi::{c_int, c_void};

/// `MPI_Comm_get_attr` with the fallback described in the module docs.
///
/// # Safety
/// Called from C with the arguments the MPI standard specifies for this function.
#[no_mangle]
pub unsafe extern "C" fn MPI_Comm_get_attr(
    comm: ffi::MPI_Comm,
    keyval: c_int,
    value: *mut c_void,
    flag: *mut c_int,
) -> c_int {
    let _inside = InsideMpi::enter();
    let rc = pmpi::PMPI_Comm_get_attr(world::translate(comm), keyval, value, flag);
    if rc == ffi::redio_mpi_success && *flag == 0 && comm == world::real_world() {
        return pmpi::PMPI_Comm_get_attr(comm, keyval, value, flag);
    }
    rc
}

/// `MPI_Attr_get` (deprecated alias of [`MPI_Comm_get_attr`]).
///
/// # Safety
/// Called from C with the arguments the MPI standard specifies for this function.
#[no_mangle]
pub unsafe extern "C" fn MPI_Attr_get(
    comm: ffi::MPI_Comm,
    keyval: c_int,
    value: *mut c_void,
    flag: *mut c_int,
) -> c_int {
    MPI_Comm_get_attr(comm, keyval, value, flag)
}
