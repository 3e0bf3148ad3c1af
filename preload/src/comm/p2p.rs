//! Point-to-point messages, posted nonblocking: sends, receives and probes
//! on redio's own communicators. Wait for the [`Request`]s with
//! [`crate::comm::poll`].

// Safe the way redio treats every MPI handle: a communicator it holds was
// made by MPI and stays valid until freed. Open MPI's handles happen to be
// pointers, which is all this lint sees.
#![allow(clippy::not_unsafe_ptr_arg_deref)]

use crate::comm::ffi;
use crate::comm::pmpi;
use crate::comm::request::{
    address, address_mut, byte_count, count, empty_status, success, Element, Kind, Request,
};
use redio_aligned::AlignedBuf;
use std::mem::MaybeUninit;
use std::rc::Rc;

/// Posts the send of `data` to rank `to` of `comm` with `tag`.
pub fn isend<'a, T: Element>(
    data: &'a [T],
    to: i32,
    tag: i32,
    comm: ffi::MPI_Comm,
) -> Result<Request<'a>, i32> {
    let n = count(data.len())?;
    // SAFETY: `data` stays borrowed by the request.
    unsafe {
        Request::start(Kind::PointToPoint, |request| {
            pmpi::PMPI_Isend(address(data), n, T::datatype(), to, tag, comm, request)
        })
    }
}

/// Posts a receive of up to `buffer.len()` elements from rank `from` of
/// `comm` with `tag` into `buffer`.
pub fn irecv<'a, T: Element>(
    buffer: &'a mut [T],
    from: i32,
    tag: i32,
    comm: ffi::MPI_Comm,
) -> Result<Request<'a>, i32> {
    let n = count(buffer.len())?;
    // SAFETY: `buffer` stays borrowed by the request; any bits are valid T.
    unsafe { post_irecv(address_mut(buffer), n, T::datatype(), from, tag, comm) }
}

/// Posts `MPI_Irecv` of `n` elements of `datatype` into `address`.
///
/// # Safety
/// `address` holds `n` elements and stays borrowed by the returned request
/// (its lifetime `'a`); MPI may write any bits there.
unsafe fn post_irecv<'a>(
    address: *mut std::ffi::c_void,
    n: i32,
    datatype: ffi::MPI_Datatype,
    from: i32,
    tag: i32,
    comm: ffi::MPI_Comm,
) -> Result<Request<'a>, i32> {
    Request::start(Kind::PointToPoint, |request| {
        pmpi::PMPI_Irecv(address, n, datatype, from, tag, comm, request)
    })
}

/// [`irecv`] of bytes into memory not yet initialised (an [`AlignedBuf`]'s
/// spare capacity): a receive needs no zero-filled buffer.
pub fn irecv_uninit<'a>(
    buffer: &'a mut [MaybeUninit<u8>],
    from: i32,
    tag: i32,
    comm: ffi::MPI_Comm,
) -> Result<Request<'a>, i32> {
    let n = count(buffer.len())?;
    // SAFETY: `buffer` stays borrowed by the request; MPI only writes it.
    unsafe { post_irecv(address_mut(buffer), n, u8::datatype(), from, tag, comm) }
}

/// A message waiting to be received, found by [`iprobe`].
pub struct Probed {
    status: ffi::MPI_Status,
}

impl Probed {
    /// Its length in bytes, or the MPI error code.
    pub fn bytes(&self) -> Result<usize, i32> {
        byte_count(&self.status)
    }
}

/// Looks once, without waiting, for a message from rank `from` of `comm`
/// with `tag` (`ffi::MPI_ANY_SOURCE` and `ffi::MPI_ANY_TAG` allowed).
/// Returns it when there is one, or the MPI error code.
pub fn iprobe(from: i32, tag: i32, comm: ffi::MPI_Comm) -> Result<Option<Probed>, i32> {
    let mut status = empty_status();
    let mut found = 0;
    // SAFETY: a communicator of this process and local out-parameters.
    let rc = unsafe { pmpi::PMPI_Iprobe(from, tag, comm, &mut found, &mut status) };
    if rc != success() {
        return Err(rc);
    }
    Ok((found != 0).then_some(Probed { status }))
}

/// A send from a buffer it holds, for a sender that cannot keep a borrow
/// alive until the send completes (the parity ring's transport). The
/// buffer is shared (`Rc`): two sends may read one buffer at once (allowed
/// since MPI 3.0), each holding it until it completes. It comes back once
/// the send has completed.
#[must_use = "dropping a pending send gives up on it"]
pub struct OwnedSend {
    // Declared first, so dropped first: the send is given up on before its
    // buffer is freed.
    request: Request<'static>,
    buffer: Rc<AlignedBuf>,
}

impl OwnedSend {
    /// Tests once, without waiting ([`Request::test`]).
    pub fn test(&mut self) -> Result<bool, i32> {
        self.request.test()
    }

    /// The bytes it sends.
    pub fn bytes(&self) -> usize {
        self.buffer.len()
    }

    /// The buffer back once a test found the send complete; before, the
    /// send itself.
    pub fn into_buffer(self) -> Result<Rc<AlignedBuf>, OwnedSend> {
        if !self.request.is_done() {
            return Err(self);
        }
        let OwnedSend { request, buffer } = self;
        drop(request);
        Ok(buffer)
    }
}

/// Posts the send of `buffer` to rank `to` of `comm` with `tag`; the
/// returned [`OwnedSend`] keeps the buffer until the send has completed.
pub fn isend_owned(
    buffer: Rc<AlignedBuf>,
    to: i32,
    tag: i32,
    comm: ffi::MPI_Comm,
) -> Result<OwnedSend, i32> {
    let n = count(buffer.len())?;
    let at = address(&buffer[..]);
    // SAFETY: the heap block of `buffer` does not move, and the OwnedSend
    // holds it (drops the request before its share of the buffer).
    let request = unsafe {
        Request::start(Kind::PointToPoint, |request| {
            pmpi::PMPI_Isend(at, n, u8::datatype(), to, tag, comm, request)
        })
    }?;
    Ok(OwnedSend { request, buffer })
}
