//! The `PMPI_*` waits and collectives that ROMIO calls (MPICH builds
//! only), as the exported `PMPI_*` entries (`exports::fortran`) hand them
//! over when they are the library's own calls: inside an MPI-IO call of a
//! replicated job they are polled instead of spun
//! (`crate::comm::library_waits`); anywhere else they go straight to the
//! MPI library. (The application's calls, from MPICH's `mpi_f08`
//! bindings, go to the `MPI_*` wrappers instead.)
//!
//! The condition is the same on every member of a replica world (the
//! degree, and being inside a collective MPI-IO call, which all members
//! make together), as a blocking collective must not meet a nonblocking
//! one. Open MPI's OMPIO calls its collectives through internal tables, out
//! of reach: this module is not built there.

// The C names of the functions they replace.
#![allow(non_snake_case)]

use crate::comm::{ffi, library_waits, pmpi};
use crate::state::world;
use crate::sys::guard::InsideMpiIo;
use std::ffi::{c_int, c_void};

/// True inside an MPI-IO call of a job with replicas.
fn polled() -> bool {
    InsideMpiIo::active() && world::identity().is_some_and(|i| i.degree > 1)
}

/// `PMPI_Waitall`.
///
/// # Safety
/// The arguments the MPI standard specifies for this function.
pub(crate) unsafe fn PMPI_Waitall(
    count: c_int,
    requests: *mut ffi::MPI_Request,
    statuses: *mut ffi::MPI_Status,
) -> c_int {
    library_waits::waitall(polled(), count, requests, statuses)
}

/// `PMPI_Wait`.
///
/// # Safety
/// The arguments the MPI standard specifies for this function.
pub(crate) unsafe fn PMPI_Wait(
    request: *mut ffi::MPI_Request,
    status: *mut ffi::MPI_Status,
) -> c_int {
    library_waits::wait(polled(), request, status)
}

/// An exported blocking collective: [`library_waits::blocking_or_polled`]
/// with the blocking function of that name and its nonblocking form.
macro_rules! polled_collective {
    ($name:ident => $nonblocking:ident ($($arg:ident: $ty:ty),* $(,)?)) => {
        #[doc = concat!("`", stringify!($name), "`.")]
        ///
        /// # Safety
        /// The arguments the MPI standard specifies for this function.
        pub(crate) unsafe fn $name($($arg: $ty),*) -> c_int {
            library_waits::blocking_or_polled(
                polled(),
                || pmpi::$name($($arg),*),
                |request| pmpi::$nonblocking($($arg,)* request),
            )
        }
    };
}

polled_collective!(PMPI_Alltoall => PMPI_Ialltoall(
    send: *const c_void,
    send_count: c_int,
    send_type: ffi::MPI_Datatype,
    recv: *mut c_void,
    recv_count: c_int,
    recv_type: ffi::MPI_Datatype,
    comm: ffi::MPI_Comm,
));
polled_collective!(PMPI_Allgather => PMPI_Iallgather(
    send: *const c_void,
    send_count: c_int,
    send_type: ffi::MPI_Datatype,
    recv: *mut c_void,
    recv_count: c_int,
    recv_type: ffi::MPI_Datatype,
    comm: ffi::MPI_Comm,
));
polled_collective!(PMPI_Allreduce => PMPI_Iallreduce(
    send: *const c_void,
    recv: *mut c_void,
    count: c_int,
    datatype: ffi::MPI_Datatype,
    op: ffi::MPI_Op,
    comm: ffi::MPI_Comm,
));
polled_collective!(PMPI_Bcast => PMPI_Ibcast(
    buffer: *mut c_void,
    count: c_int,
    datatype: ffi::MPI_Datatype,
    root: c_int,
    comm: ffi::MPI_Comm,
));
polled_collective!(PMPI_Barrier => PMPI_Ibarrier(comm: ffi::MPI_Comm));
