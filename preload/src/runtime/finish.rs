//! What `MPI_Finalize` adds: wait for the whole job without spinning, print
//! the summary, free redio's communicators.

use crate::mpi::{ffi, pmpi};
use crate::runtime::{guard::InsideMpi, log, poll, world};
use redio_core::job;

/// Runs before `PMPI_Finalize`.
///
/// The summary sums the per-process counters with an all-reduce, which
/// doubles as
/// the polled barrier: ranks that finish early sleep in [`poll::wait`]
/// instead of spinning in the MPI library's own finalize barrier while their
/// peers still compute.
pub fn before_finalize() {
    crate::io::stop();
    let _inside = InsideMpi::enter();
    // Lazy parity (`parity.when: finalize`), while the replica world lives.
    crate::parity::at_finalize();
    let [operations, read, written] = crate::io::counters();
    let mine = [world::translated_count(), operations, read, written];
    let mut total = [0u64; 4];
    let mut request = unsafe { std::mem::zeroed() };
    // SAFETY: both buffers outlive the request, which is waited for here.
    let rc = unsafe {
        pmpi::PMPI_Iallreduce(
            mine.as_ptr().cast(),
            total.as_mut_ptr().cast(),
            mine.len() as i32,
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
            let [translated, operations, read, written] = total;
            log::emit(&format!(
                "redio: finished: {shape}; {translated} MPI_COMM_WORLD arguments redirected to \
                 replica worlds; {} coordinated shared-file operations, {} read and {} \
                 written on the shared file system\n",
                operations / u64::from(identity.degree.max(1)),
                job::bytes(read),
                job::bytes(written)
            ));
        }
    }
    for mut comm in world::uninstall() {
        // SAFETY: redio's own communicators, freed once.
        unsafe { pmpi::PMPI_Comm_free(&mut comm) };
    }
}
