//! Read protocols: one module per protocol, and [`run`], the dispatcher the
//! interposition layer calls for every read of a coordinated file.

mod chained;
mod chunked_chained;
mod distribute;
mod distributed_chunked;
mod extended_simple;
mod none;
mod relay;
#[cfg(test)]
mod scenario_tests;
mod simple;
#[cfg(test)]
mod tests;

use crate::{FileIo, OpContext, OpError, ReplicaLink};

/// How the replicas of one logical rank read a shared file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ReadProtocol {
    /// No coordination: every replica reads for itself (see `read::none`).
    None,
    /// Every replica reads; the replicas vote on CRC-32 digests and a
    /// three-replica majority corrects the minority (see `read::simple`).
    Simple,
    /// The first `readers` replicas (clamped to `1..=r`) read and vote;
    /// the lowest-index majority reader sends the data to the others (see
    /// `read::extended_simple`).
    ExtendedSimple {
        /// How many replicas read the file (`s`).
        readers: usize,
    },
    /// Replica 0 reads and sends the data, with a CRC-32, to every other
    /// replica (see `read::distribute`).
    ReadDistribute,
    /// Replica 0 reads; the data pass along the chain `0 → 1 → 2` (see
    /// `read::chained`).
    Chained,
    /// Chained Read cut into `chunk`-byte chunks, reading overlapping with
    /// forwarding (see `read::chunked_chained`). `chunk = 0`: one chunk.
    ChunkedChained {
        /// Chunk size in bytes.
        chunk: usize,
    },
    /// Chunk `i` is read by replica `i mod r`, then all replicas exchange
    /// their chunks (see `read::distributed_chunked`). `chunk = 0`: one
    /// chunk.
    DistributedChunked {
        /// Chunk size in bytes.
        chunk: usize,
    },
    /// One of the above, chosen per read from its length and the
    /// placement (see [`crate::auto`]).
    Auto {
        /// Chunk size in bytes.
        chunk: usize,
        /// Where the replicas reach the file.
        placement: crate::Placement,
    },
}

impl ReadProtocol {
    /// The protocol's name as the configuration spells it.
    pub const fn name(self) -> &'static str {
        match self {
            ReadProtocol::None => "none",
            ReadProtocol::Simple => "simple",
            ReadProtocol::ExtendedSimple { .. } => "extended-simple",
            ReadProtocol::ReadDistribute => "read-distribute",
            ReadProtocol::Chained => "chained",
            ReadProtocol::ChunkedChained { .. } => "chunked-chained",
            ReadProtocol::DistributedChunked { .. } => "distributed-chunked",
            ReadProtocol::Auto { .. } => "auto",
        }
    }
}

/// Reads up to `buf.len()` bytes at `offset` into `buf` under `protocol`,
/// coordinated with the other replicas over `link`.
///
/// Every replica of the logical rank must call this for the same
/// application read, with the same protocol, `ctx.seq`, offset and buffer
/// length. Returns the byte count (a short count at end of file) and leaves
/// the agreed bytes in `buf[..count]`, or the agreed errno
/// ([`OpError::Io`]); see [`OpError`] for the local failures. Blocks until
/// the protocol's last message has been sent or received.
pub fn run<L, F>(
    protocol: ReadProtocol,
    ctx: &mut OpContext<'_>,
    link: &mut L,
    io: &mut F,
    buf: &mut [u8],
    offset: u64,
) -> Result<usize, OpError>
where
    L: ReplicaLink + ?Sized,
    F: FileIo + ?Sized,
{
    match protocol {
        ReadProtocol::None => none::run(io, buf, offset),
        ReadProtocol::Simple => simple::run(ctx, link, io, buf, offset),
        ReadProtocol::ExtendedSimple { readers } => {
            extended_simple::run(ctx, link, io, buf, offset, readers)
        }
        ReadProtocol::ReadDistribute => distribute::run(ctx, link, io, buf, offset),
        ReadProtocol::Chained => chained::run(ctx, link, io, buf, offset),
        ReadProtocol::ChunkedChained { chunk } => {
            chunked_chained::run(ctx, link, io, buf, offset, chunk)
        }
        ReadProtocol::DistributedChunked { chunk } => {
            distributed_chunked::run(ctx, link, io, buf, offset, chunk)
        }
        ReadProtocol::Auto { chunk, placement } => {
            let chosen = crate::auto::read_for(buf.len(), chunk, placement, link.degree());
            run(chosen, ctx, link, io, buf, offset)
        }
    }
}
