//! Functions the C shim (`comm/shim.c`) calls back.

use std::ffi::c_int;

/// Called by the replica world's error handler with the error code of a
/// failed MPI call of the application.
#[no_mangle]
pub extern "C" fn redio_on_replica_world_error(code: c_int) {
    crate::ft::ulfm::on_replica_world_error(code)
}
