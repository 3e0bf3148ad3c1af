//! Layer `comm`: the only code that calls `PMPI_*`.
//!
//! Rule: imports only `sys`. Waits that must notice a dead peer take a
//! watcher installed by fault tolerance ([`poll::Watcher`]), so this layer
//! never names it.
//!
//! - [`ffi`]: bindgen declarations of this implementation's `mpi.h`, plus the
//!   handle constants exported by the C shim (`shim.c`);
//! - [`pmpi`]: one stub per `PMPI_*` function, resolved with `dlsym`;
//! - [`request`]: a pending nonblocking operation ([`request::Request`]),
//!   which borrows its buffers until it is waited for;
//! - [`p2p`]: point-to-point sends, receives and probes, posted nonblocking;
//! - [`collective`]: rank and size, group communicators, and the typed
//!   collectives (`allgather`, `allreduce`, `bcast`, `barrier`, …);
//! - [`poll`]: nonblocking, polled waiting with back-off;
//! - [`handle`]: MPI handles as plain bits, for atomics;
//! - [`frames`]: tagged messages over a TCP stream, the replica-set link
//!   outside MPI;
//! - [`flavour`]: refusing to run inside the other MPI implementation;
//! - [`mpix`]: Open MPI 5's fault-tolerance functions (revoke, shrink, agree);
//! - [`io_progress`]: keeping OMPIO's progress callback from running inside
//!   itself while redio communicates within MPI-IO;
//! - [`library_waits`]: ROMIO's own blocking waits and collectives, polled
//!   instead of spun inside MPI-IO under redundancy.

pub mod collective;
pub mod flavour;
pub mod frames;
pub mod handle;
pub mod io_progress;
pub mod library_waits;
pub mod mpix;
pub mod p2p;
pub mod poll;
pub mod request;

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
    use crate::sys::symbols::resolve_mpi;
    use std::sync::atomic::AtomicUsize;
    include!(concat!(env!("OUT_DIR"), "/mpi_pmpi.rs"));
}
