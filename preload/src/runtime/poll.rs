//! Waiting for MPI without burning a core.
//!
//! MPICH busy-polls inside blocking calls: on an oversubscribed node a rank
//! that waits in `PMPI_Barrier` steals the CPU from a rank that computes.
//! redio's own coordination therefore posts nonblocking operations and tests
//! them with a short sleep that backs off from [`FIRST_PAUSE`] to
//! [`LONGEST_PAUSE`].

use crate::mpi::{ffi, pmpi};
use crate::runtime::guard::InsideMpi;
use std::time::Duration;

/// First sleep between two tests of a pending operation.
pub const FIRST_PAUSE: Duration = Duration::from_micros(20);
/// Longest sleep between two tests: bounds the added latency.
pub const LONGEST_PAUSE: Duration = Duration::from_millis(2);

/// Calls `test` until it reports completion (`Ok(true)`) or an MPI error
/// code (`Err`), sleeping with back-off in between. Returns the error code,
/// or `MPI_SUCCESS`.
pub fn until(mut test: impl FnMut() -> Result<bool, i32>) -> i32 {
    let _inside = InsideMpi::enter();
    let mut pause = FIRST_PAUSE;
    loop {
        match test() {
            Ok(true) => return unsafe { ffi::redio_mpi_success },
            Err(code) => return code,
            Ok(false) => {}
        }
        std::thread::sleep(pause);
        pause = (pause * 2).min(LONGEST_PAUSE);
    }
}

/// Waits for `request` to complete, sleeping between tests.
///
/// Returns the MPI error code of the first failing `PMPI_Test`.
pub fn wait(request: &mut ffi::MPI_Request) -> i32 {
    until(|| {
        let mut done = 0;
        // SAFETY: `request` is a live request handle owned by the caller.
        let rc = unsafe { pmpi::PMPI_Test(request, &mut done, ffi::redio_mpi_status_ignore) };
        if rc == unsafe { ffi::redio_mpi_success } {
            Ok(done != 0)
        } else {
            Err(rc)
        }
    })
}
