//! Layer `exports`: the symbols libredio.so exports, one-line functions
//! that hand over to the layers below.
//!
//! Rule: nothing below imports from here.
//!
//! - [`hooks`]: every hooked C library function;
//! - [`lifecycle`]: `MPI_Init`, `MPI_Init_thread`, `MPI_Finalize`, `MPI_Abort`;
//! - [`barrier`]: `MPI_Barrier`, the lazy-parity trigger;
//! - [`attributes`]: attribute queries on `MPI_COMM_WORLD`;
//! - [`wrappers`]: one generated `MPI_*` wrapper per `PMPI_*` function;
//! - [`capi`]: the C API of `include/redio.h`;
//! - [`fortran`]: one generated `PMPI_*` entry per wrapper, for the
//!   Fortran bindings that call `PMPI_*` (Open MPI's, MPICH's `mpi_f08`);
//! - [`callbacks`]: functions the C shim calls;
//! - `library_waits` (MPICH builds): the `PMPI_*` waits and collectives
//!   ROMIO calls, polled inside MPI-IO under redundancy (reached through
//!   the entries of `fortran`).

pub mod attributes;
pub mod barrier;
pub mod callbacks;
pub mod capi;
pub mod fortran;
pub mod hooks;
#[cfg(redio_mpi = "mpich")]
pub mod library_waits;
pub mod lifecycle;

/// Generated `MPI_*` wrappers that translate `MPI_COMM_WORLD` and mark the
/// thread as inside MPI (see `preload/build/wrappers.rs`).
#[allow(non_snake_case, clippy::all, missing_docs)]
pub mod wrappers {
    #[allow(unused_imports)]
    use crate::comm::{ffi::*, pmpi::*};
    include!(concat!(env!("OUT_DIR"), "/mpi_wrappers.rs"));
}
