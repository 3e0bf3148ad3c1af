//! Distributed Chunked Read (Böhm & Engelmann 2012, section IV.A,
//! figure 6): the buffer is cut into `chunk`-byte chunks, chunk `i` is read
//! by replica `i mod r` (a master per chunk), and the replicas exchange
//! their chunks.
//!
//! Message sequence of operation `seq` among replicas `0..r`, chunks
//! `0..m` (`m = ⌈len / chunk⌉`, at least 1; `chunk = 0` means one chunk),
//! in `⌈m / r⌉` rounds; round `j` covers chunks `j·r .. j·r + r`:
//!
//! 1. replica `k` `pread`s chunk `j·r + k` (if it exists) into its place in
//!    the buffer (also after an earlier chunk came back short or failed:
//!    past the end of file that read returns 0 at once);
//! 2. **data** (tag step `Data`): every pair of replicas swaps its chunks
//!    (pairs in ascending order, both directions at once where the link
//!    can): the bytes straight from one buffer into the other, then a
//!    trailer with the result and CRC-32 (see `transfer`); a replica
//!    without a chunk this round sends nothing. Every replica checks the
//!    CRCs; a damaged chunk counts as `EIO`;
//! 3. after the last round, each replica adds up the chunk results in
//!    chunk order: the sum up to and including the first short chunk (end
//!    of file), or the errno of the first failed chunk before it — so a
//!    read error on one replica's chunk becomes every replica's errno;
//! 4. **check** (tag step `Check`): all-to-all exchange of digests of the
//!    whole buffer. Unanimous: every replica returns the result. Otherwise,
//!    with a majority (r = 3) and under `correct`/`warn`, the majority's
//!    lowest replica resends its buffer to the others; else `EIO`
//!    everywhere. One identical report (`disagreeing` = the minority of a
//!    vote on these digests, or everyone).
//!
//! Every round has the same messages whatever the data (a chunk's length
//! says where it ends), so a damaged message cannot desynchronise the
//! replicas.
//!
//! Cost per operation (`n` = bytes requested, `m` chunks): each replica
//! reads about `n / r` bytes (its chunks; chunks past the end of file in the
//! round where it is reached are read too, returning 0); each replica sends
//! `⌈m / r⌉·(r − 1)` data messages carrying its own chunks to each other
//! replica (about `(r − 1)·n / r` bytes) plus `r − 1` digests. With `m < r`
//! only the first `m` replicas read.

use crate::chunks::{at, pieces};
use crate::consensus::confirm_read;
use crate::io::{checked, FileIo};
use crate::link::ReplicaLink;
use crate::tag::{tag, Step};
use crate::transfer::{self, ChunkTally};
use crate::{Errno, OpContext, OpError};

/// Runs Distributed Chunked Read on this replica.
pub(super) fn run<L, F>(
    ctx: &mut OpContext<'_>,
    link: &mut L,
    io: &mut F,
    buf: &mut [u8],
    offset: u64,
    chunk: usize,
) -> Result<usize, OpError>
where
    L: ReplicaLink + ?Sized,
    F: FileIo + ?Sized,
{
    let me = link.me();
    let degree = link.degree();
    let requested = buf.len();
    let checksums = ctx.policy.checksums && degree > 1;
    let data_tag = tag(ctx.seq, Step::Data);
    let chunks = pieces(requested, chunk);
    let mut tally = ChunkTally::default();
    for round in chunks.chunks(degree) {
        // Each replica's chunk of this round: its result and CRC.
        let mut got: Vec<(Result<usize, Errno>, u32)> = vec![(Ok(0), 0); round.len()];
        if let Some(range) = round.get(me) {
            let full = range.len();
            let piece = &mut buf[range.clone()];
            // Read even after the operation has ended for this replica: its
            // end may come from a damaged transfer only it saw, and the
            // others must still get every chunk for a repair to be right.
            let result = checked(io.pread(piece, at(offset, range.start)), full);
            got[me] = (
                result,
                transfer::crc_of(&piece[..result.unwrap_or(0)], checksums),
            );
        }
        // Pairs in ascending order of the peer, as `exchange_all` does.
        for peer in (0..degree).filter(|&peer| peer != me) {
            let theirs = round.get(peer).cloned();
            let (bytes, rest) = split_around(buf, round.get(me).cloned(), theirs.clone());
            let (result, piece_crc) = got.get(me).copied().unwrap_or((Ok(0), 0));
            let mine = bytes.map(|b| &b[..result.unwrap_or(0)]);
            let received = match (mine, rest) {
                (Some(mine), Some(slot)) => Some(transfer::swap(
                    link, peer, data_tag, result, mine, piece_crc, slot, checksums,
                )?),
                (Some(mine), None) => {
                    transfer::send(link, &[peer], data_tag, result, mine, piece_crc)?;
                    None
                }
                (None, Some(slot)) => {
                    Some(transfer::recv(link, peer, &[], data_tag, slot, checksums)?)
                }
                (None, None) => None,
            };
            if let Some(received) = received {
                got[peer] = (received.result, received.crc);
            }
        }
        for ((result, piece_crc), range) in got.into_iter().zip(round) {
            tally.add(result, piece_crc, range.len());
        }
    }
    confirm_read(ctx, link, &tally.digest(offset, requested), None, buf)
}

/// Borrows the two disjoint chunks `mine` (to send) and `theirs` (to
/// receive into) of `buf` at once.
fn split_around(
    buf: &mut [u8],
    mine: Option<std::ops::Range<usize>>,
    theirs: Option<std::ops::Range<usize>>,
) -> (Option<&[u8]>, Option<&mut [u8]>) {
    match (mine, theirs) {
        (None, None) => (None, None),
        (Some(m), None) => (Some(&buf[m]), None),
        (None, Some(t)) => (None, Some(&mut buf[t])),
        (Some(m), Some(t)) if m.end <= t.start => {
            let (low, high) = buf.split_at_mut(t.start);
            (Some(&low[m]), Some(&mut high[..t.end - t.start]))
        }
        (Some(m), Some(t)) => {
            let (low, high) = buf.split_at_mut(m.start);
            (Some(&high[..m.end - m.start]), Some(&mut low[t]))
        }
    }
}
