//! The few MPI operations redio runs on its own communicators: rank and
//! size, group communicators, and polled broadcasts and barriers (MPICH
//! busy-polls in blocking collectives, see [`poll`]).

use crate::comm::{ffi, pmpi, poll};
use crate::sys::log;

/// Stops this process when an MPI call made by redio itself fails.
pub fn check(rc: i32) {
    if rc != unsafe { ffi::redio_mpi_success } {
        log::announce(format_args!(
            "error: internal MPI call failed with code {rc}"
        ));
        // SAFETY: aborting the whole job is the only sane answer here.
        unsafe { pmpi::PMPI_Abort(ffi::redio_mpi_comm_world, 70) };
    }
}

/// Rank and size of `comm`.
///
/// # Safety
/// `comm` is a valid communicator of this process.
pub unsafe fn rank_and_size(comm: ffi::MPI_Comm) -> (u32, u32) {
    let (mut rank, mut size) = (0, 0);
    check(pmpi::PMPI_Comm_rank(comm, &mut rank));
    check(pmpi::PMPI_Comm_size(comm, &mut size));
    (rank as u32, size as u32)
}

/// Creates the communicator of `members` (world ranks, in the order of
/// their ranks in the new communicator).
///
/// # Safety
/// `comm` is a valid communicator containing `members`, and every member
/// calls this with the same list and `tag`.
pub unsafe fn create_group(comm: ffi::MPI_Comm, members: &[u32], tag: i32) -> ffi::MPI_Comm {
    let ranks: Vec<i32> = members.iter().map(|&w| w as i32).collect();
    try_create_group(comm, &ranks, tag).unwrap_or_else(|rc| {
        check(rc);
        ffi::redio_mpi_comm_null
    })
}

/// Creates the communicator of the processes of rank `ranks` in `comm` (in
/// that order), or returns the MPI error code.
///
/// # Safety
/// `comm` is a valid communicator, and every process named calls this with
/// the same list and `tag`.
pub unsafe fn try_create_group(
    comm: ffi::MPI_Comm,
    ranks: &[i32],
    tag: i32,
) -> Result<ffi::MPI_Comm, i32> {
    let (mut all, mut group) = (ffi::redio_mpi_group_null, ffi::redio_mpi_group_null);
    let mut out = ffi::redio_mpi_comm_null;
    let success = ffi::redio_mpi_success;
    let mut rc = pmpi::PMPI_Comm_group(comm, &mut all);
    if rc == success {
        rc = pmpi::PMPI_Group_incl(all, ranks.len() as i32, ranks.as_ptr(), &mut group);
        if rc == success {
            rc = pmpi::PMPI_Comm_create_group(comm, group, tag, &mut out);
            pmpi::PMPI_Group_free(&mut group);
        }
        pmpi::PMPI_Group_free(&mut all);
    }
    if rc == success {
        Ok(out)
    } else {
        Err(rc)
    }
}

/// Broadcasts `bytes` from rank 0 of `comm` with polled nonblocking calls.
pub fn broadcast(comm: ffi::MPI_Comm, mut bytes: Vec<u8>) -> Vec<u8> {
    let mut len = (bytes.len() as u64).to_le_bytes();
    ibcast(comm, &mut len);
    bytes.resize(u64::from_le_bytes(len) as usize, 0);
    ibcast(comm, &mut bytes);
    bytes
}

/// A barrier that sleeps while it waits (see [`poll::wait`]).
///
/// # Safety
/// `comm` is a valid communicator, and every member calls this.
pub unsafe fn barrier(comm: ffi::MPI_Comm) {
    let mut request = unsafe { std::mem::zeroed() };
    // SAFETY: collective over `comm`; the request is waited for here.
    check(unsafe { pmpi::PMPI_Ibarrier(comm, &mut request) });
    check(poll::wait(&mut request));
}

/// Broadcasts `buffer` from rank 0 of `comm`, polled: the buffer is
/// borrowed until the broadcast completed.
fn ibcast(comm: ffi::MPI_Comm, buffer: &mut [u8]) {
    let mut request = unsafe { std::mem::zeroed() };
    // SAFETY: the buffer lives until the request completes in poll::wait.
    check(unsafe {
        pmpi::PMPI_Ibcast(
            buffer.as_mut_ptr().cast(),
            buffer.len() as i32,
            ffi::redio_mpi_byte,
            0,
            comm,
            &mut request,
        )
    });
    check(poll::wait(&mut request));
}
