//! Read protocols: one module per protocol, and [`run`], the dispatcher the
//! interposition layer calls for every read of a coordinated file.

mod none;
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
}

impl ReadProtocol {
    /// The protocol's name as the configuration spells it.
    pub const fn name(self) -> &'static str {
        match self {
            ReadProtocol::None => "none",
            ReadProtocol::Simple => "simple",
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
    }
}
