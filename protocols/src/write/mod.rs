//! Write protocols: one module per protocol, and [`run`], the dispatcher
//! the interposition layer calls for every write to a coordinated file.

pub mod append;
mod distributed;
mod none;
mod simple;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_append;
#[cfg(test)]
mod tests_distributed;

use crate::{FileIo, OpContext, OpError, ReplicaLink};

/// How the replicas of one logical rank write a shared file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum WriteProtocol {
    /// No coordination: every replica writes for itself, so the file
    /// receives every write `r` times (see `write::none`).
    None,
    /// The replicas vote on CRC-32 digests of their buffers; one replica
    /// holding the agreed buffer writes it and tells the others the result
    /// (see `write::simple`).
    Simple,
    /// The replicas vote as in Simple Write, then piece `i` of the buffer
    /// (`chunk` bytes) is written by replica `i mod r` and the replicas
    /// exchange their results (see `write::distributed`). `chunk = 0`: one
    /// piece.
    Distributed {
        /// Piece size in bytes.
        chunk: usize,
    },
    /// Simple or Distributed Write, chosen from the placement (see
    /// [`crate::auto`]).
    Auto {
        /// Piece size in bytes.
        chunk: usize,
        /// Where the replicas reach the file.
        placement: crate::Placement,
    },
}

impl WriteProtocol {
    /// The protocol's name as the configuration spells it.
    pub const fn name(self) -> &'static str {
        match self {
            WriteProtocol::None => "none",
            WriteProtocol::Simple => "simple",
            WriteProtocol::Distributed { .. } => "distributed",
            WriteProtocol::Auto { .. } => "auto",
        }
    }
}

/// Writes `data` at `offset` under `protocol`, coordinated with the other
/// replicas over `link`.
///
/// Every replica of the logical rank must call this for the same
/// application write, with the same protocol, `ctx.seq`, offset and data
/// length. Returns the byte count written (possibly short, like
/// `pwrite(2)`) or the agreed errno ([`OpError::Io`]), identical on every
/// replica; see [`OpError`] for the local failures. Blocks until the
/// protocol's last message has been sent or received: a non-writing
/// replica waits for the writer's `pwrite` to finish.
pub fn run<L, F>(
    protocol: WriteProtocol,
    ctx: &mut OpContext<'_>,
    link: &mut L,
    io: &mut F,
    data: &[u8],
    offset: u64,
) -> Result<usize, OpError>
where
    L: ReplicaLink + ?Sized,
    F: FileIo + ?Sized,
{
    match protocol {
        WriteProtocol::None => none::run(io, data, offset),
        WriteProtocol::Simple => simple::run(ctx, link, io, data, offset),
        WriteProtocol::Distributed { chunk } => {
            distributed::run(ctx, link, io, data, offset, chunk)
        }
        WriteProtocol::Auto { chunk, placement } => {
            let chosen = crate::auto::write_for(data.len(), chunk, placement, link.degree());
            run(chosen, ctx, link, io, data, offset)
        }
    }
}
