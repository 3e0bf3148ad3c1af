//! A pending nonblocking MPI operation as a value.
//!
//! A [`Request`] owns its MPI request handle and borrows, for its lifetime
//! `'a`, the buffers MPI reads from or writes into: the borrow checker keeps
//! them alive and untouched until the request is waited for ([`poll`]) or
//! dropped. The operations that make one live beside it ([`p2p`],
//! [`collective`]); only this layer starts them.
//!
//! Dropping a request that has not completed gives up on it:
//! a point-to-point request is cancelled (a pending receive must never write
//! into its buffer later) and freed. A collective one is left to MPI, which
//! allows neither cancelling nor freeing it; that happens only when a
//! process failed or the job ends, as before this type existed.
//!
//! Limits of the guarantee: MPI cannot cancel a receive that has already
//! matched a message, and `std::mem::forget` skips the cancel; redio does
//! neither on purpose (a request is dropped only after a failed wait).
//!
//! [`poll`]: crate::comm::poll
//! [`p2p`]: crate::comm::p2p
//! [`collective`]: crate::comm::collective

use crate::comm::ffi;
use crate::comm::handle::HandleBits;
use crate::comm::pmpi;
use std::ffi::c_void;
use std::marker::PhantomData;

/// Returned instead of an MPI error code: a buffer holds more elements than
/// an MPI count (a C `int`) can say. Nothing was started.
pub const TOO_LONG: i32 = -0x7ed3;

/// A value type MPI moves as one of its predefined datatypes.
///
/// # Safety
/// [`Element::datatype`] describes exactly `size_of::<Self>()` bytes, and
/// every bit pattern is a valid `Self` (MPI writes whatever arrives).
pub unsafe trait Element: Copy {
    /// The MPI datatype of one element.
    fn datatype() -> ffi::MPI_Datatype;
}

// SAFETY: MPI_BYTE is one byte; any byte is a valid u8.
unsafe impl Element for u8 {
    fn datatype() -> ffi::MPI_Datatype {
        // SAFETY: a constant of shim.c.
        unsafe { ffi::redio_mpi_byte }
    }
}

// SAFETY: MPI_INT is a C int, which is i32 on every platform redio builds for.
unsafe impl Element for i32 {
    fn datatype() -> ffi::MPI_Datatype {
        // SAFETY: a constant of shim.c.
        unsafe { ffi::redio_mpi_int }
    }
}

// SAFETY: MPI_UINT64_T is eight bytes; any bits are a valid u64.
unsafe impl Element for u64 {
    fn datatype() -> ffi::MPI_Datatype {
        // SAFETY: a constant of shim.c.
        unsafe { ffi::redio_mpi_uint64 }
    }
}

/// The reductions redio uses. `Min` and `Sum` need an integer element
/// (`i32`, `u64`); `BitXor` also takes bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    /// `MPI_MIN`.
    Min,
    /// `MPI_SUM`.
    Sum,
    /// `MPI_BXOR`.
    BitXor,
}

impl Op {
    /// The MPI handle of this operation.
    pub(super) fn handle(self) -> ffi::MPI_Op {
        // SAFETY: constants of shim.c.
        unsafe {
            match self {
                Op::Min => ffi::redio_mpi_min,
                Op::Sum => ffi::redio_mpi_sum,
                Op::BitXor => ffi::redio_mpi_bxor,
            }
        }
    }
}

/// What a request is, for [`Drop`]: MPI lets only point-to-point requests
/// be cancelled and freed while pending.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Kind {
    /// A send or a receive.
    PointToPoint,
    /// A nonblocking collective.
    Collective,
}

/// A started nonblocking operation that reads or writes buffers borrowed
/// for `'a`. Wait for it with [`crate::comm::poll`].
#[must_use = "dropping a pending request gives up on it"]
pub struct Request<'a> {
    handle: ffi::MPI_Request,
    /// Filled by the test that completes it (a receive's source and size).
    status: ffi::MPI_Status,
    kind: Kind,
    buffers: PhantomData<&'a mut [u8]>,
}

impl<'a> Request<'a> {
    /// Starts an operation of `kind`: `post` calls the `PMPI_I*` function
    /// with the handle to fill and returns its code. A failed start made no
    /// request, so there is nothing to give up on later.
    ///
    /// # Safety
    /// Every buffer `post` hands to MPI stays valid, and is not accessed
    /// otherwise, for `'a`.
    pub(super) unsafe fn start(
        kind: Kind,
        post: impl FnOnce(&mut ffi::MPI_Request) -> i32,
    ) -> Result<Self, i32> {
        let mut request = Request {
            handle: null(),
            status: empty_status(),
            kind,
            buffers: PhantomData,
        };
        match post(&mut request.handle) {
            rc if rc == success() => Ok(request),
            rc => {
                request.handle = null();
                Err(rc)
            }
        }
    }

    /// True once a test has completed the request (MPI then set the handle
    /// to `MPI_REQUEST_NULL`).
    pub fn is_done(&self) -> bool {
        self.handle.to_bits() == null().to_bits()
    }

    /// Tests once, without waiting: `Ok(true)` once complete (and from then
    /// on, without calling MPI again), or the MPI error code.
    pub fn test(&mut self) -> Result<bool, i32> {
        if self.is_done() {
            return Ok(true);
        }
        let mut flag = 0;
        // SAFETY: a live handle of ours and our own status slot.
        let rc = unsafe { pmpi::PMPI_Test(&mut self.handle, &mut flag, &mut self.status) };
        tested(rc, flag)
    }

    /// Asks MPI to cancel a pending send or receive; the request still has
    /// to be waited for (it then completes, cancelled or not).
    pub fn cancel(&mut self) {
        if !self.is_done() && self.kind == Kind::PointToPoint {
            // SAFETY: a live point-to-point handle of ours.
            unsafe { pmpi::PMPI_Cancel(&mut self.handle) };
        }
    }

    /// The bytes a completed receive received, or the MPI error code.
    pub fn received_bytes(&self) -> Result<usize, i32> {
        byte_count(&self.status)
    }
}

impl Drop for Request<'_> {
    fn drop(&mut self) {
        if self.is_done() || self.kind == Kind::Collective {
            return;
        }
        // SAFETY: a live point-to-point handle of ours; cancelling and
        // freeing are allowed on active requests.
        unsafe {
            pmpi::PMPI_Cancel(&mut self.handle);
            pmpi::PMPI_Request_free(&mut self.handle);
        }
    }
}

/// The bytes a status of a completed receive (or a probe) describes: 0
/// when MPI cannot say (`MPI_UNDEFINED`).
pub(super) fn byte_count(status: &ffi::MPI_Status) -> Result<usize, i32> {
    let mut count = 0;
    // SAFETY: a status filled by MPI, and a constant of shim.c.
    let rc = unsafe { pmpi::PMPI_Get_count(status, ffi::redio_mpi_byte, &mut count) };
    if rc == success() {
        Ok(count.max(0) as usize)
    } else {
        Err(rc)
    }
}

/// A status to be filled by MPI.
pub(super) fn empty_status() -> ffi::MPI_Status {
    // SAFETY: MPI_Status is a plain C struct of integers.
    unsafe { std::mem::zeroed() }
}

/// The MPI count of a `len`-element buffer: a C `int`.
pub(super) fn count(len: usize) -> Result<i32, i32> {
    i32::try_from(len).map_err(|_| TOO_LONG)
}

/// Where MPI reads `buffer`. Never an empty slice's dangling pointer: for
/// bytes that is 0x1, which is Open MPI's `MPI_IN_PLACE`.
pub(super) fn address<T>(buffer: &[T]) -> *const c_void {
    if buffer.is_empty() {
        EMPTY.as_ptr().cast()
    } else {
        buffer.as_ptr().cast()
    }
}

/// Where MPI writes `buffer` (an empty one: see [`address`]; MPI writes
/// nothing for a count of 0).
pub(super) fn address_mut<T>(buffer: &mut [T]) -> *mut c_void {
    if buffer.is_empty() {
        EMPTY.as_ptr().cast_mut().cast()
    } else {
        buffer.as_mut_ptr().cast()
    }
}

/// The address MPI gets for an empty buffer.
static EMPTY: [u64; 1] = [0];

/// The number of processes in `comm`, or the MPI error code.
pub(super) fn comm_size(comm: ffi::MPI_Comm) -> Result<usize, i32> {
    let mut size = 0;
    // SAFETY: a communicator of this process and an out-parameter.
    let rc = unsafe { pmpi::PMPI_Comm_size(comm, &mut size) };
    if rc == success() {
        Ok(size.max(0) as usize)
    } else {
        Err(rc)
    }
}

/// `MPI_SUCCESS`.
pub(super) fn success() -> i32 {
    // SAFETY: a constant of shim.c.
    unsafe { ffi::redio_mpi_success }
}

/// A test call's error code `rc` and completion `flag` as one result:
/// `Ok(true)` once complete, or the MPI error code.
pub(super) fn tested(rc: i32, flag: i32) -> Result<bool, i32> {
    if rc == success() {
        Ok(flag != 0)
    } else {
        Err(rc)
    }
}

fn null() -> ffi::MPI_Request {
    // SAFETY: a constant of shim.c.
    unsafe { ffi::redio_mpi_request_null }
}

#[cfg(test)]
mod tests {
    use super::*;

    // None of these may call MPI: the unit tests run without libmpi, where
    // the first PMPI_* call ends the process.

    /// A request that MPI completed at once (its handle is null).
    fn completed() -> Request<'static> {
        // SAFETY: no buffer is handed to MPI.
        unsafe { Request::start(Kind::PointToPoint, |_| success()) }.unwrap_or_else(|_| panic!())
    }

    #[test]
    fn a_failed_start_returns_its_code_and_leaves_nothing_to_cancel() {
        // MPI may leave junk in the handle of a start that failed.
        let post = |handle: &mut ffi::MPI_Request| {
            *handle = ffi::MPI_Request::from_bits(0x1234);
            17
        };
        // SAFETY: no buffer is handed to MPI.
        let started = unsafe { Request::start(Kind::PointToPoint, post) };
        assert_eq!(started.err(), Some(17));
    }

    #[test]
    fn a_completed_request_tests_done_without_mpi_and_drops_quietly() {
        let mut request = completed();
        assert!(request.is_done());
        assert_eq!(request.test(), Ok(true));
        request.cancel();
        drop(request);
    }

    #[test]
    fn counts_that_do_not_fit_an_int_are_refused() {
        assert_eq!(count(0), Ok(0));
        assert_eq!(count(i32::MAX as usize), Ok(i32::MAX));
        assert_eq!(count(i32::MAX as usize + 1), Err(TOO_LONG));
    }

    #[test]
    fn an_empty_buffer_never_reaches_mpi_as_in_place() {
        let empty: &mut [u8] = &mut [];
        assert_ne!(address(empty) as usize, 1);
        assert_ne!(address_mut(empty) as usize, 1);
        assert!(!address(empty).is_null());
        let mut full = [7u8; 3];
        assert_eq!(address(&full), full.as_ptr().cast());
        assert_eq!(address_mut(&mut full), full.as_mut_ptr().cast());
    }

    #[test]
    fn each_op_has_its_own_handle() {
        let handles = [Op::Min, Op::Sum, Op::BitXor].map(|op| op.handle().to_bits());
        assert_ne!(handles[0], handles[1]);
        assert_ne!(handles[1], handles[2]);
        assert_ne!(handles[0], handles[2]);
    }

    #[test]
    fn elements_name_distinct_datatypes() {
        let types = [u8::datatype(), i32::datatype(), u64::datatype()].map(|t| t.to_bits());
        assert_ne!(types[0], types[1]);
        assert_ne!(types[1], types[2]);
    }
}
