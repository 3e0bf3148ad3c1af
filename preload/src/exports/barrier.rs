//! Hand-written `MPI_Barrier`: the application's barrier on its world is a
//! synchronisation point every rank reaches together, where lazy parity
//! (`parity.when: close`, [`crate::parity::lazy`]) runs.

use crate::comm::ffi;

use crate::comm::handle::HandleBits;
use crate::comm::pmpi;
use crate::state::world;
use crate::sys::guard::InsideMpi;
use std::ffi::c_int;

/// `MPI_Barrier`, with `MPI_COMM_WORLD` translated to the replica world as
/// in every wrapper; after a successful barrier on that world, lazy parity.
///
/// # Safety
/// Called from C with the arguments the MPI standard specifies for this function.
#[no_mangle]
pub unsafe extern "C" fn MPI_Barrier(comm: ffi::MPI_Comm) -> c_int {
    let comm = world::translate(comm);
    let rc = {
        let _inside = InsideMpi::enter();
        pmpi::PMPI_Barrier(comm)
    };
    if rc == ffi::redio_mpi_success && comm.to_bits() == world::replica_world().to_bits() {
        crate::parity::lazy::at_barrier();
    }
    rc
}
