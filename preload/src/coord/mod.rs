//! Layer `coord` (coordination): one shared file's plan and its coordinated
//! operations, the leader round, fail-over, the descriptor table, the real
//! file.
//!
//! Rule: imports `parity`, `ft`, `state`, `comm`, `sys`; never `io`,
//! `lifecycle` or `exports`.
//!
//! - [`target`]: the shared file a call acts on; [`plan`]: its protocols;
//! - [`open`](mod@open): opening it on every replica; [`file`](mod@file): its coordinated
//!   operations; [`round`]: one coordinated operation and the leader round;
//! - [`lock`]: advisory locks, taken once by the leader;
//! - [`listing`]: directory listings read once, by the leader;
//! - [`close`]: releasing descriptors, settling files at `MPI_Finalize`;
//! - [`sequence`]: the per-process sequence of coordinated operations;
//! - [`failover`]: running one again when a replica dies;
//! - [`divergence`]: replicas that issue different calls;
//! - [`table`]: managed descriptors and streams;
//! - [`parts`]: Distributed Separate Write's part files;
//! - [`link`]: the replicas' MPI message link;
//! - [`faults`]: the replica's real file, with test-only fault injection.

pub mod close;
pub mod divergence;
pub mod failover;
pub mod faults;
pub mod file;
pub mod link;
pub mod listing;
pub mod lock;
pub mod open;
pub mod parts;
pub mod plan;
pub mod round;
pub mod sequence;
pub mod table;
pub mod target;
