//! redio: file I/O under redundant execution of MPI programs.
//!
//! This crate is the MPI-free core shared by the `redio` CLI and by the
//! preload library (`libredio.so`, crate `redio-preload`):
//!
//! - [`config`]: the YAML schema, loading with precedence and interpolation,
//!   and diagnostics with file, line and column;
//! - [`topology`]: how `N·r` world ranks map onto `r` replicas of an `N`-rank
//!   world (block, cyclic, explicit map file).
//!
//! Nothing here links MPI: the CLI is built once, while `libredio.so` is built
//! once per MPI implementation.

pub mod cli;
pub mod config;
pub mod fsclass;
pub mod job;
pub mod join;
pub mod outcome;
pub mod topology;
