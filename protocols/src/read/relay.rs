//! The engine of the protocols where the master (replica 0) alone reads and
//! the data travel to the other replicas: Read & Distribute (a star, one
//! message), Chained Read (a chain, one message) and Chunked & Chained Read
//! (a chain, one message per chunk). See those modules for the message
//! sequences.

use crate::chunks::{at, pieces};
use crate::consensus::confirm_read;
use crate::io::{checked, FileIo};
use crate::link::ReplicaLink;
use crate::tag::{tag, Step};
use crate::transfer::{self, ChunkTally};
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
    let tally = match from {
        None => master(link, io, buf, offset, chunk, &to, data_tag, checksums)?,
        Some(source) => {
            let chunks = pieces(requested, chunk);
            let last = chunks.len() - 1;
            let mut tally = ChunkTally::default();
            for (i, range) in chunks.into_iter().enumerate() {
                let full = range.len();
                let piece = &mut buf[range];
                let got = transfer::recv(link, source, &to, data_tag, piece, checksums)?;
                tally.add(got.result, got.crc, full);
                if !got.more || i == last {
                    break;
                }
            }
            tally
        }
    };
    confirm_read(ctx, link, &tally.digest(offset, requested), Some(0), buf)
}

/// The master's side: reads the buffer chunk by chunk and sends each chunk
/// to `to`. With one receiver (a chain), the read of chunk `i + 1` runs
/// while chunk `i` is on its way. Stops after the first short or failed
/// chunk. Returns the tally of the chunks read.
#[allow(clippy::too_many_arguments)]
fn master<L, F>(
    link: &mut L,
    io: &mut F,
    buf: &mut [u8],
    offset: u64,
    chunk: usize,
    to: &[usize],
    data_tag: u32,
    checksums: bool,
) -> Result<ChunkTally, OpError>
where
    L: ReplicaLink + ?Sized,
    F: FileIo + ?Sized,
{
    let ranges = pieces(buf.len(), chunk);
    let starts: Vec<usize> = ranges.iter().map(|r| r.start).collect();
    // Disjoint chunks of `buf`, so one can travel while the next is read.
    let mut chunks: Vec<&mut [u8]> = Vec::with_capacity(ranges.len());
    let mut rest = buf;
    for range in &ranges {
        let (head, tail) = std::mem::take(&mut rest).split_at_mut(range.len());
        chunks.push(head);
        rest = tail;
    }
    let read = |io: &mut F, piece: &mut [u8], start: usize| {
        let full = piece.len();
        checked(io.pread(piece, at(offset, start)), full)
    };
    let mut tally = ChunkTally::default();
    let mut current = read(io, &mut *chunks[0], starts[0]);
    for i in 0..chunks.len() {
        let (done, ahead) = chunks.split_at_mut(i + 1);
        let piece = &*done[i];
        let full = piece.len();
        let result = current;
        let bytes = &piece[..result.unwrap_or(0)];
        let more = result == Ok(full) && i + 1 < starts.len();
        // While the bytes travel to the first receiver, this replica
        // computes their CRC and reads the next chunk.
        let mut piece_crc = 0;
        let mut next = None;
        let mut meanwhile = || {
            piece_crc = transfer::crc_of(bytes, checksums);
            if more {
                let start = starts[i + 1];
                next = Some(read(io, &mut *ahead[0], start));
            }
        };
        transfer::send_overlapping(link, to, data_tag, bytes, &mut meanwhile)?;
        transfer::send_trailers(link, to, data_tag, result, piece_crc)?;
        tally.add(result, piece_crc, full);
        match next {
            Some(result) if more => current = result,
            _ => break,
        }
    }
    Ok(tally)
}
