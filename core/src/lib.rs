//! redio-core: the MPI-free core of redio, shared by the `redio` CLI (crate
//! `redio`) and by the preload library (`libredio.so`, crate
//! `redio-preload`):
//!
//! - [`config`]: the YAML schema, loading with precedence and interpolation,
//!   and diagnostics with file, line and column;
//! - [`topology`]: how `N·r` world ranks map onto `r` replicas of an `N`-rank
//!   world (block, cyclic, explicit map file);
//! - [`job`]: the bootstrap packet and the start-up line;
//! - [`fsclass`]: path classification (shared or local) and remapping;
//! - [`join`]: Distributed Separate Write's part files and their join;
//! - [`outcome`]: the events and exit statuses processes record for
//!   `redio run`;
//! - [`plan`]: the configuration as the protocols (`redio-protocols`) and
//!   the parity code (`redio-parity`) take it: the one translation between
//!   them.
//!
//! Nothing here links MPI or parses a command line: the CLI is built once,
//! while `libredio.so` is built once per MPI implementation and must not
//! carry the CLI's dependencies.

pub mod config;
pub mod fsclass;
pub mod join;
pub mod outcome;
pub mod output;
pub mod plan;
pub mod signals;
pub mod startup;
pub mod topology;
