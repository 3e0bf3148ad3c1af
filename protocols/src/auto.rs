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
//!   which spread the bytes over all of them (reads only when each
//!   replica's share is at least [`MIN_READ_SPREAD`]).

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

/// The smallest piece `auto` gives each replica when it spreads an
/// operation over the servers: below a page, the servers' per-request
/// latency costs more than the bandwidth gained.
pub const MIN_PIECE: usize = 4096;

/// The smallest share of a read `auto` spreads over the servers. A spread
/// read costs every replica a request to its server and an all-to-all
/// exchange; measured on emulated NFS and sshfs with a server per replica,
/// spreading 64 KiB reads over 3 replicas (24 KiB each) ran at 0.82–0.97 of
/// one replica reading them all, while spreading 1 MiB (344 KiB each) ran
/// at 2.0x. Writes exchange only checksums and gain even at 64 KiB.
pub const MIN_READ_SPREAD: usize = 64 << 10;

/// The piece size that spreads `len` bytes over `degree` replicas: at most
/// `chunk`, at least [`MIN_PIECE`], a multiple of it. An operation smaller
/// than `chunk` would otherwise go to one replica alone.
fn spread(len: usize, chunk: usize, degree: usize) -> usize {
    let share = len.div_ceil(degree.max(1)).next_multiple_of(MIN_PIECE);
    let chunk = if chunk == 0 { usize::MAX } else { chunk };
    share.clamp(MIN_PIECE, chunk.max(MIN_PIECE))
}

/// The read protocol `auto` runs for a `len`-byte read by `degree` replicas.
pub fn read_for(len: usize, chunk: usize, placement: Placement, degree: usize) -> ReadProtocol {
    match placement {
        // Too small to spread: one replica reads it all, from its server.
        Placement::Separate if len.div_ceil(degree.max(1)) < MIN_READ_SPREAD => {
            ReadProtocol::DistributedChunked { chunk }
        }
        Placement::Separate => ReadProtocol::DistributedChunked {
            chunk: spread(len, chunk, degree),
        },
        Placement::Shared if chunk == 0 || len <= chunk => ReadProtocol::ReadDistribute,
        Placement::Shared => ReadProtocol::ChunkedChained { chunk },
    }
}

/// The write protocol `auto` runs for a `len`-byte write by `degree`
/// replicas.
pub fn write_for(len: usize, chunk: usize, placement: Placement, degree: usize) -> WriteProtocol {
    match placement {
        Placement::Shared => WriteProtocol::Simple,
        Placement::Separate => WriteProtocol::Distributed {
            chunk: spread(len, chunk, degree),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn auto_follows_size_and_placement() {
        let mib = 1 << 20;
        let shared = Placement::Shared;
        let separate = Placement::Separate;
        assert_eq!(read_for(4096, mib, shared, 2), ReadProtocol::ReadDistribute);
        assert_eq!(read_for(mib, mib, shared, 2), ReadProtocol::ReadDistribute);
        assert_eq!(
            read_for(mib + 1, mib, shared, 2),
            ReadProtocol::ChunkedChained { chunk: mib }
        );
        // A server per replica: every replica gets a share, even of one chunk.
        // Shares under MIN_READ_SPREAD are not spread.
        assert_eq!(
            read_for(64 << 10, mib, separate, 2),
            ReadProtocol::DistributedChunked { chunk: mib }
        );
        assert_eq!(
            read_for(256 << 10, mib, separate, 2),
            ReadProtocol::DistributedChunked { chunk: 128 << 10 }
        );
        assert_eq!(
            read_for(16 * mib, mib, separate, 3),
            ReadProtocol::DistributedChunked { chunk: mib }
        );
        assert_eq!(
            read_for(100, mib, separate, 3),
            ReadProtocol::DistributedChunked { chunk: mib }
        );
        assert_eq!(write_for(mib, mib, shared, 2), WriteProtocol::Simple);
        // ⌈1 MiB / 3⌉ rounded up to 4 KiB.
        assert_eq!(
            write_for(mib, mib, separate, 3),
            WriteProtocol::Distributed { chunk: 344 << 10 }
        );
    }
}
