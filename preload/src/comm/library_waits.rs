//! The MPI library's own blocking calls, waited for without spinning.
//!
//! ROMIO (MPICH's MPI-IO) reaches libmpich's `PMPI_Alltoall`,
//! `PMPI_Waitall`, … through its procedure linkage table, so it calls the
//! definitions libredio.so exports (`exports::library_waits`). MPICH spins
//! inside a blocking call. Under redundancy a node runs two or three
//! processes per logical rank, and while one aggregator writes, the others
//! of every replica world spin in the next step of the collective: on the
//! project's 2-core machine they took the cores that the file system's
//! client needed. The versions here post the nonblocking form and test
//! it, yielding while a cycle of collective buffering may still be moving
//! and sleeping after ([`poll::until_inside_library`]): at two ranks and
//! r=2 the collective write went from 0.82 to 0.93 of r=1 with a fifth of
//! the CPU (docs/benchmarks.md, "MPI-IO on emulated NFS").
//!
//! A blocking collective does not match a nonblocking one (MPI 4.0,
//! section 6.12): every member of the communicator must take the same
//! form. The caller decides with a condition that is the same on all of
//! them.

use crate::comm::request::{success, tested};
use crate::comm::{ffi, pmpi, poll};
use std::ffi::c_int;

/// `PMPI_Waitall`; when `polled`, as tests with `PMPI_Testall`.
///
/// # Safety
/// The arguments `PMPI_Waitall` takes.
pub unsafe fn waitall(
    polled: bool,
    count: c_int,
    requests: *mut ffi::MPI_Request,
    statuses: *mut ffi::MPI_Status,
) -> c_int {
    if !polled {
        return pmpi::PMPI_Waitall(count, requests, statuses);
    }
    poll::until_inside_library(|| {
        let mut flag = 0;
        tested(
            pmpi::PMPI_Testall(count, requests, &mut flag, statuses),
            flag,
        )
    })
}

/// `PMPI_Wait`; when `polled`, as tests with `PMPI_Test`.
///
/// # Safety
/// The arguments `PMPI_Wait` takes.
pub unsafe fn wait(
    polled: bool,
    request: *mut ffi::MPI_Request,
    status: *mut ffi::MPI_Status,
) -> c_int {
    if !polled {
        return pmpi::PMPI_Wait(request, status);
    }
    poll::until_inside_library(|| {
        let mut flag = 0;
        tested(pmpi::PMPI_Test(request, &mut flag, status), flag)
    })
}

/// A blocking call of the MPI library: `blocking` itself, or when
/// `polled`, its nonblocking form `post` (which fills in the request it is
/// given and returns the call's error code) and a polled wait.
///
/// # Safety
/// Both closures make the same call with the caller's arguments, whose
/// buffers stay valid until this returns.
pub unsafe fn blocking_or_polled(
    polled: bool,
    blocking: impl FnOnce() -> c_int,
    post: impl FnOnce(*mut ffi::MPI_Request) -> c_int,
) -> c_int {
    if !polled {
        return blocking();
    }
    let mut request = ffi::redio_mpi_request_null;
    let rc = post(&mut request);
    if rc != success() {
        return rc;
    }
    wait(true, &mut request, ffi::redio_mpi_status_ignore)
}
