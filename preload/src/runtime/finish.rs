//! What `MPI_Finalize` adds: wait for the whole job without spinning, print
//! the summary, free redio's communicators.

use crate::mpi::{ffi, pmpi};
use crate::runtime::{guard::InsideMpi, log, poll, world};
use redio_core::job;

/// Runs before `PMPI_Finalize`.
///
/// The sum of the per-process counters is an all-reduce, so it doubles as
/// the polled barrier: ranks that finish early sleep in [`poll::wait`]
/// instead of spinning in the MPI library's own finalize barrier while their
/// peers still compute.
pub fn before_finalize() {
    crate::io::stop();
    let _inside = InsideMpi::enter();
    let mine = world::translated_count();
    let mut total = 0u64;
    let mut request = unsafe { std::mem::zeroed() };
    // SAFETY: both buffers outlive the request, which is waited for here.
    let rc = unsafe {
        pmpi::PMPI_Iallreduce(
            (&mine as *const u64).cast(),
            (&mut total as *mut u64).cast(),
            1,
            ffi::redio_mpi_uint64,
            ffi::redio_mpi_sum,
            world::real_world(),
            &mut request,
        )
    };
    if rc == unsafe { ffi::redio_mpi_success } {
        poll::wait(&mut request);
    }
    if let Some(identity) = world::identity() {
        if identity.world_rank == 0 {
            let shape = job::shape(identity.world_size, identity.ranks, identity.degree);
            log::emit(&format!(
                "redio: finished: {shape}; {total} MPI_COMM_WORLD arguments redirected to \
                 replica worlds\n"
            ));
        }
    }
    for mut comm in world::uninstall() {
        // SAFETY: redio's own communicators, freed once.
        unsafe { pmpi::PMPI_Comm_free(&mut comm) };
    }
}
