//! The MPI side of libredio.so.
//!
//! - [`ffi`]: bindgen declarations of this implementation's `mpi.h`, plus the
//!   handle constants exported by the C shim (`shim.c`);
//! - [`pmpi`]: one stub per `PMPI_*` function, resolved with `dlsym`;
//! - [`generated`]: one `MPI_*` wrapper per `PMPI_*` function, generated at
//!   build time (see `preload/build/wrappers.rs`);
//! - [`lifecycle`], [`attributes`] and [`barrier`]: the few wrappers
//!   written by hand.

pub mod attributes;
pub mod barrier;
pub mod lifecycle;

/// Raw declarations of the MPI implementation this library is built for.
#[allow(
    non_camel_case_types,
    non_upper_case_globals,
    non_snake_case,
    dead_code,
    missing_docs,
    clippy::all
)]
pub mod ffi {
    include!(concat!(env!("OUT_DIR"), "/mpi_bindings.rs"));
}

/// Stubs that call the implementation's `PMPI_*` functions through pointers
/// resolved at run time (see `preload/build/wrappers.rs` for why).
#[allow(non_snake_case, clippy::all, missing_docs, unused_imports)]
pub mod pmpi {
    use super::ffi::*;
    use crate::runtime::symbols::resolve;
    use std::sync::atomic::AtomicUsize;
    include!(concat!(env!("OUT_DIR"), "/mpi_pmpi.rs"));
}

/// Generated `MPI_*` wrappers that translate `MPI_COMM_WORLD` and mark the
/// thread as inside MPI.
#[allow(non_snake_case, clippy::all, missing_docs)]
pub mod generated {
    #[allow(unused_imports)]
    use super::{ffi::*, pmpi::*};
    include!(concat!(env!("OUT_DIR"), "/mpi_wrappers.rs"));
}
