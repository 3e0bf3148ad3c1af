//! libredio.so: redio's replication runtime, loaded with `LD_PRELOAD`.
//!
//! It exports `MPI_*` functions (a PMPI layer) so that an unmodified MPI
//! program, started as `N·r` processes, runs as `r` independent replicas of
//! an `N`-rank world. See `docs/architecture.md` for the whole picture.
//!
//! # Layers
//! Each module imports only from the layers below it
//! (`scripts/check_layers.py` fails on an upward import):
//!
//! ```text
//! exports    the exported symbols: hooks, MPI lifecycle, C API
//! lifecycle  what MPI_Init / MPI_Finalize add; starts and stops the rest
//! io         hook handlers: route each call, pass through or coordinate
//! coord      one shared file's plan and coordinated operations, fail-over
//! parity | ft   lazy parity in the job | fault tolerance (neither imports the other)
//! state      world, settings, phase, counters, outcome events
//! comm       PMPI calls, polled waits
//! sys        the C library's real functions, guards, log, raw files
//! ```
//!
//! Rules that keep a preload library safe:
//! - never call `MPI_*` from here, only `PMPI_*`: `MPI_*` binds to our own
//!   wrappers;
//! - no `std` I/O (`println!`, `std::fs` on the application's behalf): log
//!   through [`sys::log`], which writes with the raw syscall;
//! - thread-locals are const-initialised and have no destructor;
//! - panics abort (workspace profile): unwinding must never cross C frames.

pub mod comm;
pub mod coord;
pub mod exports;
pub mod ft;
pub mod io;
pub mod lifecycle;
pub mod parity;
pub mod state;
pub mod sys;
