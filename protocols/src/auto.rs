//! The `auto` protocols: a fixed protocol chosen per operation from the
//! operation's size and from where the replicas' files live. Every replica
//! makes the same choice, because every replica sees the same length and
//! the same placement.
//!
//! The rule, and the measurements behind it, are in docs/protocols.md
//! ("auto"):
//!
//! - one server for all replicas ([`Placement::Shared`]): the file is read
//!   once. Up to one chunk, Read & Distribute (one message, the lowest
//!   latency); above, Chunked & Chained Read, whose pipeline overlaps the
//!   read with the transfers. Writes: Simple Write (one writer, so the one
//!   server receives the bytes once);
//! - one server per replica ([`Placement::Separate`]): every server can
//!   serve at once, so Distributed Chunked Read and Distributed Write,
//!   which spread the bytes over all of them.

use crate::{ReadProtocol, WriteProtocol};

/// Where the replicas of one logical rank reach a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Placement {
    /// All replicas reach the same file on the same server.
    #[default]
    Shared,
    /// Each replica reaches its own copy (a path remapped per replica,
    /// e.g. one server per replica).
    Separate,
}

/// The read protocol `auto` runs for a `len`-byte read.
pub fn read_for(len: usize, chunk: usize, placement: Placement) -> ReadProtocol {
    match placement {
        Placement::Separate => ReadProtocol::DistributedChunked { chunk },
        Placement::Shared if chunk == 0 || len <= chunk => ReadProtocol::ReadDistribute,
        Placement::Shared => ReadProtocol::ChunkedChained { chunk },
    }
}

/// The write protocol `auto` runs for a write.
pub fn write_for(chunk: usize, placement: Placement) -> WriteProtocol {
    match placement {
        Placement::Shared => WriteProtocol::Simple,
        Placement::Separate => WriteProtocol::Distributed { chunk },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn auto_follows_size_and_placement() {
        let mib = 1 << 20;
        assert_eq!(
            read_for(4096, mib, Placement::Shared),
            ReadProtocol::ReadDistribute
        );
        assert_eq!(
            read_for(mib, mib, Placement::Shared),
            ReadProtocol::ReadDistribute
        );
        assert_eq!(
            read_for(mib + 1, mib, Placement::Shared),
            ReadProtocol::ChunkedChained { chunk: mib }
        );
        assert_eq!(
            read_for(4096, mib, Placement::Separate),
            ReadProtocol::DistributedChunked { chunk: mib }
        );
        assert_eq!(write_for(mib, Placement::Shared), WriteProtocol::Simple);
        assert_eq!(
            write_for(mib, Placement::Separate),
            WriteProtocol::Distributed { chunk: mib }
        );
    }
}
