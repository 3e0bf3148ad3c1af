//! redio: file I/O under redundant execution of MPI programs.
//!
//! This crate is the `redio` CLI ([`cli`]). The MPI-free core it shares with
//! the preload library (`libredio.so`, crate `redio-preload`) lives in the
//! crate `redio-core` and is re-exported here under its usual paths
//! (`redio::config`, `redio::topology`, …):
//!
//! - [`config`]: the YAML schema, loading with precedence and interpolation,
//!   and diagnostics with file, line and column;
//! - [`topology`]: how `N·r` world ranks map onto `r` replicas of an `N`-rank
//!   world (block, cyclic, explicit map file).
//!
//! Nothing here links MPI: the CLI is built once, while `libredio.so` is built
//! once per MPI implementation.

pub mod cli;
pub use redio_core::{config, fsclass, join, outcome, output, startup, topology};
