//! Distributed Write (Böhm & Engelmann 2012, section IV.A, figure 8): the
//! replicas agree on the buffer, then each writes its own pieces of it and
//! they exchange the results.
//!
//! Message sequence of operation `seq` among replicas `0..r`, pieces
//! `0..m` of `chunk` bytes (`m = ⌈len / chunk⌉`, at least 1; `chunk = 0`
//! means one piece):
//!
//! 1. **vote** (tag step `Vote`): exactly as in Simple Write — digests of
//!    `(offset, length, length and CRC-32 of the whole buffer)`,
//!    all-to-all, then [`vote`](crate::vote::vote). *No majority* (r = 2
//!    disagreeing, or three different buffers): nobody writes, `EIO`
//!    everywhere, mismatch reported, not corrected;
//! 2. piece `i` belongs to replica `i mod r`, unless that replica is in
//!    the vote's minority: then to the source (lowest-index majority
//!    replica), so only agreed bytes reach the file (mismatch reported as
//!    corrected). Each replica `pwrite`s its pieces in order, piece `i` at
//!    `offset + i·chunk`; after one of its pieces fails or is short it
//!    skips the rest (recorded as 0 bytes);
//! 3. **result** (tag step `Result`): all-to-all exchange; each replica
//!    sends the results of its pieces in piece order (byte count or errno
//!    each, 9 or 5 bytes; empty for a replica without pieces). Every
//!    replica adds them up in offset order: the total when every piece was
//!    written in full, else the count up to and including the first short
//!    piece, or the errno of the first failed piece (e.g. `ENOSPC`) when
//!    it comes first — the same on every replica.
//!
//! Cost per operation (`n` bytes, `r` replicas): the file receives the
//! buffer once, each replica writing about `n / r` bytes (`⌈m / r⌉`
//! pieces at most); every replica sends `r − 1` digests (29 bytes) and
//! `r − 1` result messages (≤ 9 bytes per piece it wrote). No file data
//! travel between replicas.
//!
//! Needs a file system that takes concurrent writes to disjoint ranges of
//! one file from several clients. Every replica needs its own writable
//! descriptor for the file.

use crate::chunks::{at, pieces, Tally};
use crate::consensus::agree;
use crate::io::{checked, FileIo};
use crate::link::ReplicaLink;
use crate::report::OpKind;
use crate::tag::{tag, Step};
use crate::vote::{Digest, Verdict};
use crate::{wire, OpContext, OpError, EIO};

/// Runs Distributed Write on this replica.
pub(super) fn run<L, F>(
    ctx: &mut OpContext<'_>,
    link: &mut L,
    io: &mut F,
    data: &[u8],
    offset: u64,
    chunk: usize,
) -> Result<usize, OpError>
where
    L: ReplicaLink + ?Sized,
    F: FileIo + ?Sized,
{
    let me = link.me();
    let degree = link.degree();
    let mine = Digest {
        offset,
        requested: data.len(),
        outcome: ctx.policy.outcome_of(data),
    };
    let agreement = agree(OpKind::Write, ctx, link, &mine)?;
    let Some((source, agreed)) = agreement.agreed() else {
        return Err(OpError::Io(EIO));
    };
    let requested = agreed.requested;
    let minority = match &agreement.verdict {
        Verdict::Majority { minority, .. } => minority.clone(),
        _ => Vec::new(),
    };
    let owner = |i: usize| match i % degree {
        k if minority.contains(&k) => source,
        k => k,
    };
    // Owners hold the agreed buffer, whose length is `requested`.
    let chunks = pieces(requested, chunk);
    let mut message = Vec::new();
    let mut failed = false;
    for (_, range) in chunks.iter().enumerate().filter(|&(i, _)| owner(i) == me) {
        let full = range.len();
        let result = if failed {
            Ok(0)
        } else {
            checked(
                io.pwrite(&data[range.clone()], at(offset, range.start)),
                full,
            )
        };
        failed |= result != Ok(full);
        wire::encode_result(result, &mut message);
    }
    let all = link.exchange_all(tag(ctx.seq, Step::Result), &message)?;
    if all.len() != degree {
        return Err(OpError::Protocol {
            replica: me,
            what: "link returned a payload count other than the degree",
        });
    }
    let mut rest: Vec<&[u8]> = all.iter().map(Vec::as_slice).collect();
    let mut tally = Tally::default();
    for (i, range) in chunks.iter().enumerate() {
        let k = owner(i);
        let (result, tail) = wire::decode_result_from(rest[k], range.len())
            .map_err(|what| OpError::Protocol { replica: k, what })?;
        rest[k] = tail;
        tally.add(result, range.len());
    }
    if let Some(k) = rest.iter().position(|tail| !tail.is_empty()) {
        return Err(OpError::Protocol {
            replica: k,
            what: "trailing bytes after piece results",
        });
    }
    tally.result().map_err(OpError::Io)
}
