//! libredio.so: redio's replication runtime, loaded with `LD_PRELOAD`.
//!
//! It exports `MPI_*` functions (a PMPI layer) so that an unmodified MPI
//! program, started as `N·r` processes, runs as `r` independent replicas of
//! an `N`-rank world. See `docs/architecture.md` for the whole picture.
//!
//! Rules that keep a preload library safe (see also `mpi/mod.rs`):
//! - never call `MPI_*` from here, only `PMPI_*`: `MPI_*` binds to our own
//!   wrappers;
//! - no `std` I/O (`println!`, `std::fs` on the application's behalf): log
//!   through [`runtime::log`], which writes with the raw syscall;
//! - thread-locals are const-initialised and have no destructor;
//! - panics abort (workspace profile): unwinding must never cross C frames.

pub mod capi;
pub mod io;
pub mod mpi;
pub mod parity;
pub mod runtime;
