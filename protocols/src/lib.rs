//! redio's coordination protocols (Böhm & Engelmann 2012, section IV.A) and
//! checksum voting, written as pure logic over two traits: a link between
//! the replicas of one logical rank ([`ReplicaLink`]) and the file back end
//! of one replica ([`FileIo`]).
//!
//! Every replica of a logical rank calls the same entry point, with the same
//! arguments, for the same application I/O call:
//!
//! - [`read::run`] with a [`ReadProtocol`];
//! - [`write::run`](fn@write::run) with a [`WriteProtocol`].
//!
//! The result (byte count or errno, see [`OpError`]) is the same on every
//! replica unless the coordination itself failed ([`OpError::Link`],
//! [`OpError::Protocol`]). Disagreements between replicas are voted on
//! ([`vote`]) and reported through [`OpContext::on_mismatch`]; this crate
//! never prints.
//!
//! # Calling the protocols
//!
//! - All replicas of the logical rank must make the same call, in the same
//!   order: same protocol, same [`OpContext::seq`], same offset and buffer
//!   length. `seq` is a per-link counter of coordinated operations.
//! - Every call blocks until its last message is through; a non-writing
//!   replica waits for the writer's `pwrite`. Link deadlines must therefore
//!   allow for the file system's latency.
//! - A link carries one operation at a time: with several threads doing
//!   coordinated I/O, serialise them (same order on every replica).
//! - The protocols only use tags in [`tag::PROTOCOL_TAGS`].
//! - Which replicas call [`FileIo`]: every replica under None and Simple
//!   (read); only replica 0 under Read & Distribute, Chained and Chunked &
//!   Chained Read; replicas `0..readers` under Extended Simple Read; the
//!   owner of each chunk (`i mod r`) under Distributed Chunked Read; the
//!   writer under Simple Write; every majority replica under Distributed
//!   Write. Pass every replica a real descriptor anyway: which replicas
//!   touch the file can depend on the vote and on the buffer length.
//! - [`OpError::Link`] and [`OpError::Protocol`] are local failures (the
//!   other replicas may have returned something else); fail-over is the
//!   caller's. [`OpError::errno`] gives the errno for the application.
//!
//! Crate layout, one job per module:
//!
//! - [`link`], [`io`]: the two traits the caller implements;
//! - [`vote`]: the pure majority decision over per-replica digests;
//! - [`tag`]: message tags derived from the operation sequence number;
//! - [`report`]: the mismatch report;
//! - `consensus` and `wire` (private): the digest exchange and vote every
//!   voting protocol starts with (and the confirmation round of the
//!   protocols that pass data between replicas), and the byte encoding of
//!   their messages; `chunks` (private): cutting buffers into chunks;
//! - [`read`], [`write`](mod@write): one module per protocol and a dispatcher;
//! - [`leader`]: the leader round of metadata calls, and its wire format;
//! - `memory` (feature `memory-link`, always on in this crate's tests): an
//!   in-memory link and file with fault injection, for tests.

#![warn(missing_docs)]

pub mod announce;
pub mod auto;
mod chunks;
mod consensus;
pub mod error;
pub mod io;
pub mod leader;
pub mod link;
#[cfg(any(test, feature = "memory-link"))]
pub mod memory;
pub mod policy;
pub mod read;
pub mod report;
pub mod tag;
#[cfg(test)]
mod testkit;
#[cfg(test)]
mod tests;
mod transfer;
pub mod vote;
mod wire;
pub mod write;

pub use announce::{announce, announce_refusable, Announced, Divergence, Operation};
pub use auto::Placement;
pub use error::{LinkError, OpError};
pub use io::FileIo;
pub use link::ReplicaLink;
pub use policy::{OnMismatch, Policy};
pub use read::ReadProtocol;
pub use report::{Mismatch, OpKind};
pub use vote::{Digest, Outcome, Verdict};
pub use write::WriteProtocol;

/// A POSIX error number (`errno`), always positive.
pub type Errno = i32;

/// The errno every replica returns when the replicas disagree and no
/// majority can be formed.
pub const EIO: Errno = libc::EIO;

/// What the protocols need to know about one application I/O operation
/// besides its buffer and offset.
///
/// Every replica must pass the same `rank`, `path` and `seq` for the same
/// operation: `seq` selects the message tags (see [`tag`]), and all three
/// end up in mismatch reports.
pub struct OpContext<'a> {
    /// The logical (application-visible) MPI rank.
    pub rank: u32,
    /// The file's path, as the caller resolved it; used in reports only.
    pub path: &'a str,
    /// The operation's sequence number on this link. It must count up by one
    /// per coordinated operation in the same order on every replica (a
    /// per-link counter, not per file), so that the messages of consecutive
    /// operations cannot be confused.
    pub seq: u64,
    /// Receives a [`Mismatch`] whenever a vote was not unanimous: once per
    /// operation, on every replica, with identical content. The sink must
    /// not block on the other replicas.
    pub on_mismatch: &'a mut dyn FnMut(Mismatch),
    /// Checksums and the reaction to disagreements; the same on every
    /// replica.
    pub policy: Policy,
}

impl std::fmt::Debug for OpContext<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OpContext")
            .field("rank", &self.rank)
            .field("path", &self.path)
            .field("seq", &self.seq)
            .field("policy", &self.policy)
            .finish_non_exhaustive()
    }
}
