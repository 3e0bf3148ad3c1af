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
//! r=2 the collective write went from 0.82 to 0.93 of r=1 with a tenth of
//! the CPU (docs/benchmarks.md, "MPI-IO on emulated NFS").
//!
//! A blocking collective does not match a nonblocking one (MPI 4.0,
//! section 6.12): every member of the communicator must take the same
//! form. The caller decides with a condition that is the same on all of
//! them.

use crate::comm::{ffi, pmpi, poll};
use std::ffi::{c_int, c_void};

fn success() -> c_int {
    // SAFETY: a constant of shim.c.
    unsafe { ffi::redio_mpi_success }
}

/// A test's result as [`poll::until_inside_library`] takes it.
fn tested(rc: c_int, flag: c_int) -> Result<bool, c_int> {
    if rc == success() {
        Ok(flag != 0)
    } else {
        Err(rc)
    }
}

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

/// Waits for the operation a nonblocking call just started: `post` gets
/// the request to fill in and returns the call's error code.
///
/// # Safety
/// `post` starts an operation whose buffers stay valid until it completes
/// (the blocking call's own, which its caller keeps until it returns).
unsafe fn posted(post: impl FnOnce(*mut ffi::MPI_Request) -> c_int) -> c_int {
    let mut request = ffi::redio_mpi_request_null;
    let rc = post(&mut request);
    if rc != success() {
        return rc;
    }
    wait(true, &mut request, ffi::redio_mpi_status_ignore)
}

/// `PMPI_Alltoall`; when `polled`, as `PMPI_Ialltoall` and a polled wait.
///
/// # Safety
/// The arguments `PMPI_Alltoall` takes.
#[allow(clippy::too_many_arguments)]
pub unsafe fn alltoall(
    polled: bool,
    send: *const c_void,
    send_count: c_int,
    send_type: ffi::MPI_Datatype,
    recv: *mut c_void,
    recv_count: c_int,
    recv_type: ffi::MPI_Datatype,
    comm: ffi::MPI_Comm,
) -> c_int {
    if !polled {
        return pmpi::PMPI_Alltoall(
            send, send_count, send_type, recv, recv_count, recv_type, comm,
        );
    }
    posted(|request| {
        pmpi::PMPI_Ialltoall(
            send, send_count, send_type, recv, recv_count, recv_type, comm, request,
        )
    })
}

/// `PMPI_Allgather`; when `polled`, as `PMPI_Iallgather` and a polled wait.
///
/// # Safety
/// The arguments `PMPI_Allgather` takes.
#[allow(clippy::too_many_arguments)]
pub unsafe fn allgather(
    polled: bool,
    send: *const c_void,
    send_count: c_int,
    send_type: ffi::MPI_Datatype,
    recv: *mut c_void,
    recv_count: c_int,
    recv_type: ffi::MPI_Datatype,
    comm: ffi::MPI_Comm,
) -> c_int {
    if !polled {
        return pmpi::PMPI_Allgather(
            send, send_count, send_type, recv, recv_count, recv_type, comm,
        );
    }
    posted(|request| {
        pmpi::PMPI_Iallgather(
            send, send_count, send_type, recv, recv_count, recv_type, comm, request,
        )
    })
}

/// `PMPI_Allreduce`; when `polled`, as `PMPI_Iallreduce` and a polled wait.
///
/// # Safety
/// The arguments `PMPI_Allreduce` takes.
pub unsafe fn allreduce(
    polled: bool,
    send: *const c_void,
    recv: *mut c_void,
    count: c_int,
    datatype: ffi::MPI_Datatype,
    op: ffi::MPI_Op,
    comm: ffi::MPI_Comm,
) -> c_int {
    if !polled {
        return pmpi::PMPI_Allreduce(send, recv, count, datatype, op, comm);
    }
    posted(|request| pmpi::PMPI_Iallreduce(send, recv, count, datatype, op, comm, request))
}

/// `PMPI_Bcast`; when `polled`, as `PMPI_Ibcast` and a polled wait.
///
/// # Safety
/// The arguments `PMPI_Bcast` takes.
pub unsafe fn bcast(
    polled: bool,
    buffer: *mut c_void,
    count: c_int,
    datatype: ffi::MPI_Datatype,
    root: c_int,
    comm: ffi::MPI_Comm,
) -> c_int {
    if !polled {
        return pmpi::PMPI_Bcast(buffer, count, datatype, root, comm);
    }
    posted(|request| pmpi::PMPI_Ibcast(buffer, count, datatype, root, comm, request))
}

/// `PMPI_Barrier`; when `polled`, as `PMPI_Ibarrier` and a polled wait.
///
/// # Safety
/// The arguments `PMPI_Barrier` takes.
pub unsafe fn barrier(polled: bool, comm: ffi::MPI_Comm) -> c_int {
    if !polled {
        return pmpi::PMPI_Barrier(comm);
    }
    posted(|request| pmpi::PMPI_Ibarrier(comm, request))
}
