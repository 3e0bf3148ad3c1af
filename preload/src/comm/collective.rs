//! The few MPI operations redio runs on its own communicators: rank and
//! size, group communicators, and the collectives, posted nonblocking and
//! waited for with [`poll`] (MPICH busy-polls in blocking collectives).
//!
//! Each collective comes twice: `iname` posts it and returns its
//! [`Request`], for a caller that waits in its own way (watching peers);
//! `name` posts it and waits, and returns the MPI code (or one of
//! [`poll`]'s). Sizes that would let MPI write past a buffer are checked
//! first (a mismatch is a bug: it panics, which aborts the process).

// Safe the way redio treats every MPI handle: a communicator it holds was
// made by MPI and stays valid until freed. Open MPI's handles happen to be
// pointers, which is all this lint sees.
#![allow(clippy::not_unsafe_ptr_arg_deref)]

use crate::comm::request::{address, address_mut, comm_size, count, Element, Kind, Op, Request};
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
    let mut len = [bytes.len() as u64];
    check(bcast(&mut len, 0, comm));
    bytes.resize(len[0] as usize, 0);
    check(bcast(&mut bytes, 0, comm));
    bytes
}

/// A barrier that sleeps while it waits (see [`poll`]).
///
/// # Safety
/// `comm` is a valid communicator, and every member calls this.
pub unsafe fn barrier(comm: ffi::MPI_Comm) {
    check(completed(ibarrier(comm), 0));
}

/// Waits for a posted collective that moves `bytes` ([`poll::wait_each`]),
/// or returns the code that stopped its post.
fn completed(posted: Result<Request<'_>, i32>, bytes: usize) -> i32 {
    match posted {
        Ok(mut request) => poll::wait_each(
            std::slice::from_mut(&mut request),
            bytes,
            poll::Watch::Nothing,
            None,
        ),
        Err(rc) => rc,
    }
}

/// Posts a barrier over `comm` (`MPI_Ibarrier`).
pub fn ibarrier(comm: ffi::MPI_Comm) -> Result<Request<'static>, i32> {
    // SAFETY: no buffer.
    unsafe {
        Request::start(Kind::Collective, |request| {
            pmpi::PMPI_Ibarrier(comm, request)
        })
    }
}

/// Posts the broadcast of `buffer` from rank `root` of `comm` (`MPI_Ibcast`);
/// every member passes a buffer of the same length.
pub fn ibcast<'a, T: Element>(
    buffer: &'a mut [T],
    root: i32,
    comm: ffi::MPI_Comm,
) -> Result<Request<'a>, i32> {
    let n = count(buffer.len())?;
    // SAFETY: `buffer` stays borrowed by the request.
    unsafe {
        Request::start(Kind::Collective, |request| {
            pmpi::PMPI_Ibcast(address_mut(buffer), n, T::datatype(), root, comm, request)
        })
    }
}

/// [`ibcast`], waited for.
pub fn bcast<T: Element>(buffer: &mut [T], root: i32, comm: ffi::MPI_Comm) -> i32 {
    let bytes = std::mem::size_of_val(buffer);
    completed(ibcast(buffer, root, comm), bytes)
}

/// Posts the gathering of every member's `mine` into `all`, in rank order
/// (`MPI_Iallgather`); `all` holds `mine.len()` elements per member.
pub fn iallgather<'a, T: Element>(
    mine: &'a [T],
    all: &'a mut [T],
    comm: ffi::MPI_Comm,
) -> Result<Request<'a>, i32> {
    let n = count(mine.len())?;
    let size = comm_size(comm)?;
    assert!(
        all.len() >= size * mine.len(),
        "allgather: buffer too small"
    );
    // SAFETY: both buffers stay borrowed by the request; MPI writes `size`
    // blocks of `n` elements into `all`, which holds them.
    unsafe {
        Request::start(Kind::Collective, |request| {
            pmpi::PMPI_Iallgather(
                address(mine),
                n,
                T::datatype(),
                address_mut(all),
                n,
                T::datatype(),
                comm,
                request,
            )
        })
    }
}

/// [`iallgather`], waited for.
pub fn allgather<T: Element>(mine: &[T], all: &mut [T], comm: ffi::MPI_Comm) -> i32 {
    let bytes = std::mem::size_of_val(all);
    completed(iallgather(mine, all, comm), bytes)
}

/// Posts the gathering of every member's `mine`, of different lengths, into
/// `all` (`MPI_Iallgatherv`): member `i`'s `counts[i]` elements land at
/// `displs[i]`.
pub fn iallgatherv<'a, T: Element>(
    mine: &'a [T],
    all: &'a mut [T],
    counts: &'a [i32],
    displs: &'a [i32],
    comm: ffi::MPI_Comm,
) -> Result<Request<'a>, i32> {
    let n = count(mine.len())?;
    let size = comm_size(comm)?;
    assert!(
        layout_fits(counts, displs, size, all.len()),
        "allgatherv: counts and displacements do not fit the buffer"
    );
    // SAFETY: every buffer stays borrowed by the request (MPI reads
    // `counts` and `displs` until it completes); every block fits `all`.
    unsafe {
        Request::start(Kind::Collective, |request| {
            pmpi::PMPI_Iallgatherv(
                address(mine),
                n,
                T::datatype(),
                address_mut(all),
                counts.as_ptr(),
                displs.as_ptr(),
                T::datatype(),
                comm,
                request,
            )
        })
    }
}

/// [`iallgatherv`], waited for.
pub fn allgatherv<T: Element>(
    mine: &[T],
    all: &mut [T],
    counts: &[i32],
    displs: &[i32],
    comm: ffi::MPI_Comm,
) -> i32 {
    let bytes = std::mem::size_of_val(all);
    completed(iallgatherv(mine, all, counts, displs, comm), bytes)
}

/// True when `size` blocks of `counts[i]` elements at `displs[i]` all lie
/// within a buffer of `len` elements.
fn layout_fits(counts: &[i32], displs: &[i32], size: usize, len: usize) -> bool {
    counts.len() >= size
        && displs.len() >= size
        && counts.iter().zip(displs).take(size).all(|(&c, &d)| {
            c >= 0
                && d >= 0
                && (d as usize)
                    .checked_add(c as usize)
                    .is_some_and(|end| end <= len)
        })
}

/// Posts the reduction of every member's `mine` with `op`, element by
/// element, into every member's `out` (`MPI_Iallreduce`).
pub fn iallreduce<'a, T: Element>(
    mine: &'a [T],
    out: &'a mut [T],
    op: Op,
    comm: ffi::MPI_Comm,
) -> Result<Request<'a>, i32> {
    assert_eq!(mine.len(), out.len(), "allreduce: buffers differ in length");
    let n = count(mine.len())?;
    // SAFETY: both buffers stay borrowed by the request.
    unsafe {
        Request::start(Kind::Collective, |request| {
            pmpi::PMPI_Iallreduce(
                address(mine),
                address_mut(out),
                n,
                T::datatype(),
                op.handle(),
                comm,
                request,
            )
        })
    }
}

/// [`iallreduce`], waited for.
pub fn allreduce<T: Element>(mine: &[T], out: &mut [T], op: Op, comm: ffi::MPI_Comm) -> i32 {
    let bytes = std::mem::size_of_val(out);
    completed(iallreduce(mine, out, op, comm), bytes)
}

/// [`iallreduce`] in place: `values` is both this member's input and the
/// result (`MPI_IN_PLACE`).
pub fn iallreduce_in_place<'a, T: Element>(
    values: &'a mut [T],
    op: Op,
    comm: ffi::MPI_Comm,
) -> Result<Request<'a>, i32> {
    let n = count(values.len())?;
    // SAFETY: `values` stays borrowed by the request; MPI_IN_PLACE is a
    // constant of shim.c.
    unsafe {
        Request::start(Kind::Collective, |request| {
            pmpi::PMPI_Iallreduce(
                ffi::redio_mpi_in_place,
                address_mut(values),
                n,
                T::datatype(),
                op.handle(),
                comm,
                request,
            )
        })
    }
}

/// [`iallreduce_in_place`], waited for.
pub fn allreduce_in_place<T: Element>(values: &mut [T], op: Op, comm: ffi::MPI_Comm) -> i32 {
    let bytes = std::mem::size_of_val(values);
    completed(iallreduce_in_place(values, op, comm), bytes)
}

/// Posts the reduction of every member's `send` with `op`, whose block `i`
/// (of `recv.len()` elements) lands in member `i`'s `recv`
/// (`MPI_Ireduce_scatter_block`).
pub fn ireduce_scatter_block<'a, T: Element>(
    send: &'a [T],
    recv: &'a mut [T],
    op: Op,
    comm: ffi::MPI_Comm,
) -> Result<Request<'a>, i32> {
    let n = count(recv.len())?;
    let size = comm_size(comm)?;
    assert!(
        send.len() >= size * recv.len(),
        "reduce_scatter_block: send buffer too small"
    );
    // SAFETY: both buffers stay borrowed by the request; MPI reads `size`
    // blocks of `n` elements from `send`, which holds them.
    unsafe {
        Request::start(Kind::Collective, |request| {
            pmpi::PMPI_Ireduce_scatter_block(
                address(send),
                address_mut(recv),
                n,
                T::datatype(),
                op.handle(),
                comm,
                request,
            )
        })
    }
}

/// [`ireduce_scatter_block`], waited for.
pub fn reduce_scatter_block<T: Element>(
    send: &[T],
    recv: &mut [T],
    op: Op,
    comm: ffi::MPI_Comm,
) -> i32 {
    let bytes = std::mem::size_of_val(send);
    completed(ireduce_scatter_block(send, recv, op, comm), bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_allgatherv_layout_must_fit_its_buffer() {
        assert!(layout_fits(&[2, 3], &[0, 2], 2, 5));
        assert!(layout_fits(&[0, 0], &[0, 0], 2, 0));
        assert!(!layout_fits(&[2, 3], &[0, 2], 2, 4));
        assert!(!layout_fits(&[2], &[0], 2, 10));
        assert!(!layout_fits(&[-1, 3], &[0, 2], 2, 10));
        assert!(!layout_fits(&[1, 1], &[0, -1], 2, 10));
    }
}
