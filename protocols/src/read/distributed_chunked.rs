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
//!    the buffer. It skips the read (and reports 0 bytes) when an earlier
//!    round already showed a short chunk or an error;
//! 2. **data** (tag step `Data`): all-to-all exchange (every pair, lower
//!    index first) of each replica's chunk message (`bytes · CRC-32`, or
//!    `result · bytes · CRC-32` when short or failed; empty when the
//!    replica has no chunk this round). Every replica checks the CRCs and
//!    copies the chunks into place; a damaged message counts as `EIO`;
//! 3. after the last round, each replica adds up the chunk results in
//!    chunk order: the sum up to and including the first short chunk (end
//!    of file), or the errno of the first failed chunk before it — so a
//!    read error on one replica's chunk becomes every replica's errno;
//! 4. **check** (tag step `Check`): all-to-all exchange of digests of the
//!    whole buffer. Unanimous: every replica returns the result. Otherwise
//!    `EIO` everywhere and one identical report (`disagreeing` = the
//!    minority of a vote on these digests, or everyone), not corrected.
//!
//! Every round has the same messages whatever the data, so a damaged
//! message cannot desynchronise the replicas.
//!
//! Cost per operation (`n` = bytes requested, `m` chunks): each replica
//! reads about `n / r` bytes (its chunks; chunks past the end of file in the
//! round where it is reached are read too, returning 0); each replica sends
//! `⌈m / r⌉·(r − 1)` data messages carrying its own chunks to each other
//! replica (about `(r − 1)·n / r` bytes) plus `r − 1` digests. With `m < r`
//! only the first `m` replicas read.

use super::relay::take_chunk;
use crate::chunks::{at, pieces, Tally};
use crate::consensus::confirm;
use crate::io::{checked, FileIo};
use crate::link::ReplicaLink;
use crate::report::OpKind;
use crate::tag::{tag, Step};
use crate::vote::{Digest, Outcome};
use crate::{wire, OpContext, OpError, EIO};

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
    let data_tag = tag(ctx.seq, Step::Data);
    let chunks = pieces(requested, chunk);
    let mut tally = Tally::default();
    for round in chunks.chunks(degree) {
        let mut own = None;
        let message = match round.get(me) {
            Some(range) => {
                let full = range.len();
                let piece = &mut buf[range.clone()];
                let result = if tally.ended() {
                    Ok(0)
                } else {
                    checked(io.pread(piece, at(offset, range.start)), full)
                };
                own = Some(result);
                wire::encode_chunk(result, &piece[..result.unwrap_or(0)], full)
            }
            None => Vec::new(),
        };
        let all = link.exchange_all(data_tag, &message)?;
        if all.len() != degree {
            return Err(OpError::Protocol {
                replica: me,
                what: "link returned a payload count other than the degree",
            });
        }
        for (k, range) in round.iter().enumerate() {
            let full = range.len();
            let result = match own.filter(|_| k == me) {
                Some(result) => result,
                None if tally.ended() => Ok(0),
                None => take_chunk(&all[k], &mut buf[range.clone()]),
            };
            tally.add(result, full);
        }
        // Payloads of replicas without a chunk must be empty.
        if all[round.len()..].iter().any(|p| !p.is_empty()) {
            tally.add(Err(EIO), 1);
        }
    }
    let result = tally.result();
    let mine = Digest {
        offset,
        requested,
        outcome: Outcome::of_read(result, buf),
    };
    let (result, mismatch) = confirm(OpKind::Read, ctx, link, &mine, None)?;
    if let Some(mismatch) = mismatch {
        (ctx.on_mismatch)(mismatch);
    }
    result.map_err(OpError::Io)
}
