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
use crate::transfer::{self, CrcSum};
use crate::vote::{Digest, Outcome};
use crate::{OpContext, OpError};

/// How the data travel from the master.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Route {
    /// The master sends each chunk to every other replica, ascending.
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
    // With one replica there is nobody to compare with or send to.
    let checksums = ctx.policy.checksums && degree > 1;
    let data_tag = tag(ctx.seq, Step::Data);
    let (from, to): (Option<usize>, Vec<usize>) = match route {
        Route::Star if me == 0 => (None, (1..degree).collect()),
        Route::Star => (Some(0), Vec::new()),
        Route::Chain => (me.checked_sub(1), (me + 1..degree).take(1).collect()),
    };
    let chunks = pieces(requested, chunk);
    let last = chunks.len() - 1;
    let mut tally = Tally::default();
    let mut crc = CrcSum::default();
    for (i, range) in chunks.into_iter().enumerate() {
        let full = range.len();
        let piece = &mut buf[range.clone()];
        let (result, more, piece_crc) = match from {
            None => {
                let result = checked(io.pread(piece, at(offset, range.start)), full);
                let bytes = &piece[..result.unwrap_or(0)];
                let piece_crc = transfer::crc_of(bytes, checksums);
                transfer::send(link, &to, data_tag, result, bytes, piece_crc)?;
                (result, result == Ok(full), piece_crc)
            }
            Some(source) => {
                let got = transfer::recv(link, source, &to, data_tag, piece, checksums)?;
                (got.result, got.more, got.crc)
            }
        };
        if let (false, Ok(count)) = (tally.ended(), result) {
            crc.add(piece_crc, count);
        }
        tally.add(result, full);
        if !more || i == last {
            break;
        }
    }
    let result = tally.result();
    let mine = Digest {
        offset,
        requested,
        outcome: match result {
            Ok(len) => Outcome::Data {
                len,
                crc: crc.crc(),
            },
            Err(errno) => Outcome::Error(errno),
        },
    };
    let (result, mismatch) = confirm(OpKind::Read, ctx, link, &mine, Some(0), buf)?;
    if let Some(mismatch) = mismatch {
        (ctx.on_mismatch)(mismatch);
    }
    result.map_err(OpError::Io)
}
