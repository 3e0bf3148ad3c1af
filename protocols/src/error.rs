//! The two error types: [`LinkError`] from a [`ReplicaLink`](crate::ReplicaLink)
//! and [`OpError`], what a protocol run returns instead of a byte count.

use crate::{Errno, EIO};
use thiserror::Error;

/// Why a message could not be sent to or received from another replica.
///
/// Protocols propagate it unchanged (as [`OpError::Link`]); fail-over is the
/// caller's business.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum LinkError {
    /// The replica is known to have failed.
    #[error("replica {replica} has failed")]
    PeerFailed {
        /// Index of the failed replica.
        replica: usize,
    },
    /// The replica did not answer within the link's deadline.
    #[error("replica {replica} did not answer in time")]
    Timeout {
        /// Index of the silent replica.
        replica: usize,
    },
    /// The index names no replica of this link (a caller bug).
    #[error("there is no replica {replica} on this link")]
    NoSuchReplica {
        /// The offending index.
        replica: usize,
    },
    /// A message did not fit the buffer it was received into (the sender
    /// broke the protocol, or the message was damaged).
    #[error("a {len}-byte message from replica {replica} exceeds the {capacity}-byte buffer")]
    TooLong {
        /// Index of the sending replica.
        replica: usize,
        /// The message's length.
        len: usize,
        /// The receiving buffer's length.
        capacity: usize,
    },
    /// The transport reported an error of its own, e.g. an MPI error code.
    #[error("transport error {code} talking to replica {replica}")]
    Transport {
        /// Index of the replica the message was for or from.
        replica: usize,
        /// The transport's error code.
        code: i32,
    },
}

/// Why a protocol run did not return a byte count.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum OpError {
    /// The agreed outcome is this errno. It is the same on every replica
    /// (the file system's error, or [`EIO`] when the replicas disagreed
    /// without a majority); hand it to the application.
    #[error("I/O error, errno {0}")]
    Io(Errno),
    /// This replica could not talk to another one; the other replicas may
    /// have returned something else. Candidate for fail-over.
    #[error(transparent)]
    Link(#[from] LinkError),
    /// Another replica sent a message that breaks the protocol (malformed,
    /// or inconsistent with the vote). Local to this replica, like `Link`.
    #[error("replica {replica} broke the protocol: {what}")]
    Protocol {
        /// Index of the replica whose message was rejected.
        replica: usize,
        /// What was wrong with it.
        what: &'static str,
    },
}

impl OpError {
    /// The errno to give the application: the agreed one for [`OpError::Io`],
    /// [`EIO`] when coordination itself failed.
    pub fn errno(&self) -> Errno {
        match self {
            OpError::Io(errno) => *errno,
            OpError::Link(_) | OpError::Protocol { .. } => EIO,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errno_of_each_variant() {
        assert_eq!(OpError::Io(libc::ENOSPC).errno(), libc::ENOSPC);
        assert_eq!(
            OpError::from(LinkError::PeerFailed { replica: 1 }).errno(),
            EIO
        );
        let protocol = OpError::Protocol {
            replica: 2,
            what: "short",
        };
        assert_eq!(protocol.errno(), EIO);
        assert_eq!(protocol.to_string(), "replica 2 broke the protocol: short");
    }
}
