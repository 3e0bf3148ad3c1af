//! The engine of the protocols where the master (replica 0) alone reads and
//! the data travel to the other replicas: Read & Distribute (a star, one
//! message), Chained Read (a chain, one message) and Chunked & Chained Read
//! (a chain, one message per chunk). See those modules for the message
//! sequences.

use crate::chunks::{at, pieces, Tally};
use crate::consensus::confirm;
use crate::io::{checked, FileIo};
use crate::link::ReplicaLink;
use crate::report::OpKind;
use crate::tag::{tag, Step};
use crate::vote::{Digest, Outcome};
use crate::wire::{self, Chunk};
use crate::{OpContext, OpError, EIO};

/// How the data travel from the master.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Route {
    /// The master sends each message to every other replica, ascending.
    Star,
    /// Replica `k` receives from `k − 1` and forwards to `k + 1`.
    Chain,
}

/// Runs a master-reads protocol on this replica, the buffer cut into
/// `chunk`-byte chunks (`0`: one chunk).
pub(super) fn run<L, F>(
    ctx: &mut OpContext<'_>,
    link: &mut L,
    io: &mut F,
    buf: &mut [u8],
    offset: u64,
    chunk: usize,
    route: Route,
) -> Result<usize, OpError>
where
    L: ReplicaLink + ?Sized,
    F: FileIo + ?Sized,
{
    let me = link.me();
    let degree = link.degree();
    let requested = buf.len();
    let data_tag = tag(ctx.seq, Step::Data);
    let (from, to): (Option<usize>, Vec<usize>) = match route {
        Route::Star if me == 0 => (None, (1..degree).collect()),
        Route::Star => (Some(0), Vec::new()),
        Route::Chain => (me.checked_sub(1), (me + 1..degree).take(1).collect()),
    };
    let chunks = pieces(requested, chunk);
    let last = chunks.len() - 1;
    let mut tally = Tally::default();
    for (i, range) in chunks.into_iter().enumerate() {
        let full = range.len();
        let start = range.start;
        let piece = &mut buf[range];
        let more = match from {
            None => {
                let result = checked(io.pread(piece, at(offset, start)), full);
                let count = result.unwrap_or(0);
                let message = wire::encode_chunk(result, &piece[..count], full);
                link.send_to_each(&to, data_tag, &message)?;
                tally.add(result, full);
                !tally.ended()
            }
            Some(source) => {
                let message = link.recv(source, data_tag)?;
                // Forward first: the next replica's transfer overlaps our copy.
                link.send_to_each(&to, data_tag, &message)?;
                tally.add(take_chunk(&message, piece), full);
                // Whether more follow is in the length, which survives corruption.
                wire::is_full_chunk(message.len(), full)
            }
        };
        if !more || i == last {
            break;
        }
    }
    let result = tally.result();
    let mine = Digest {
        offset,
        requested,
        outcome: Outcome::of_read(result, buf),
    };
    let (result, mismatch) = confirm(OpKind::Read, ctx, link, &mine, Some(0))?;
    if let Some(mismatch) = mismatch {
        (ctx.on_mismatch)(mismatch);
    }
    result.map_err(OpError::Io)
}

/// Decodes a received chunk message into `piece` (a `piece.len()`-byte
/// chunk) and returns the chunk's result; a message that does not decode or
/// fails its CRC counts as `EIO` (then the confirmation round reports it).
pub(super) fn take_chunk(message: &[u8], piece: &mut [u8]) -> Result<usize, crate::Errno> {
    match wire::decode_chunk(message, piece.len()) {
        Ok(Chunk::Full(bytes)) => {
            piece.copy_from_slice(bytes);
            Ok(bytes.len())
        }
        Ok(Chunk::Final(Ok(count), bytes)) => {
            piece[..count].copy_from_slice(bytes);
            Ok(count)
        }
        Ok(Chunk::Final(Err(errno), _)) => Err(errno),
        Err(_) => Err(EIO),
    }
}
