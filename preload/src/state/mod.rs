//! Layer `state`: what this process knows about the job and itself.
//!
//! Rule: imports `comm` and `sys` only.
//!
//! - [`world`]: the replica worlds and `MPI_COMM_WORLD` translation;
//! - [`settings`]: the configuration broadcast at start-up;
//! - [`phase`]: before `MPI_Init`, coordinating, finished, forked child;
//! - [`counters`]: coordinated operations and bytes moved on shared files;
//! - [`report`]: events for `redio run`'s outcome;
//! - [`exits`]: this process's start and exit status, for `redio run`.

pub mod counters;
pub mod exits;
pub mod phase;
pub mod report;
pub mod settings;
pub mod world;
