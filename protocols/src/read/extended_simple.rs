//! Extended Simple Read (Böhm & Engelmann 2012, section IV.A, figure 2):
//! only the first `s` replicas (the readers, `s` = `readers` clamped to
//! `1..=r`) read the file; they vote on CRC-32 digests, and one of them
//! sends the agreed data to the others.
//!
//! `s = 1` is Read & Distribute (no vote); `s = r` is Simple Read. For
//! `1 < s < r` (i.e. `r = 3`, `s = 2`), message sequence of operation
//! `seq`:
//!
//! 1. each reader `pread`s into its buffer;
//! 2. **vote** (tag step `Vote`): all-to-all exchange among all `r`
//!    replicas; a reader sends its digest (as in Simple Read), a
//!    non-reader an empty message. Every replica votes on the `s` readers'
//!    digests (so every replica reaches the same verdict);
//! 3. by verdict:
//!    - *no majority* (two readers disagreeing): `EIO` everywhere, no more
//!      messages; mismatch reported (the readers' digests), not corrected;
//!    - *majority on an errno*: that errno everywhere, no more messages;
//!    - *majority on `len` bytes*: the source (lowest-index majority
//!      reader) sends the bytes and a trailer (count and CRC-32; tag step
//!      `Data`) to each minority reader and each non-reader, ascending.
//!      Receivers get them straight into their buffers and check the CRC;
//!      then
//!    - **check** (tag step `Check`): all-to-all digests of what each
//!      replica holds. Unanimous: `len` everywhere, and the vote's report
//!      (if it was not unanimous: corrected from the source). Otherwise
//!      (damaged transfer): a resend from the source, or `EIO` everywhere,
//!      and a report naming the replicas that differ from the source.
//!
//! At most one report per operation, identical on every replica; vote
//! reports list the readers' digests only (replicas `0..s`).
//!
//! Cost per operation (`n` = bytes read, `r = 3`, `s = 2`): each reader
//! reads `n` bytes, the non-reader none (its [`FileIo`] is never called);
//! every replica sends `r − 1` vote messages (empty for the non-reader);
//! the source sends `n` bytes and a trailer to the non-reader (and to a minority
//! reader when correcting); every replica sends `r − 1` check digests.

use super::{distribute, simple};
use crate::consensus::confirm;
use crate::io::{checked, FileIo};
use crate::link::ReplicaLink;
use crate::report::{Mismatch, OpKind};
use crate::tag::{tag, Step};
use crate::transfer;
use crate::vote::{vote, Digest, Outcome, Verdict};
use crate::{wire, OpContext, OpError, EIO};

/// Runs Extended Simple Read with `readers` readers on this replica.
pub(super) fn run<L, F>(
    ctx: &mut OpContext<'_>,
    link: &mut L,
    io: &mut F,
    buf: &mut [u8],
    offset: u64,
    readers: usize,
) -> Result<usize, OpError>
where
    L: ReplicaLink + ?Sized,
    F: FileIo + ?Sized,
{
    let me = link.me();
    let degree = link.degree();
    let s = readers.clamp(1, degree.max(1));
    if s == 1 {
        return distribute::run(ctx, link, io, buf, offset);
    }
    if s >= degree {
        return simple::run(ctx, link, io, buf, offset);
    }
    let requested = buf.len();
    let reader = me < s;
    let mine = if reader {
        let local = checked(io.pread(buf, offset), requested);
        Some(Digest {
            offset,
            requested,
            outcome: ctx.policy.outcome_of_read(local, buf),
        })
    } else {
        None
    };
    let payload = mine.as_ref().map(wire::encode_digest).unwrap_or_default();
    let raw = link.exchange_all(tag(ctx.seq, Step::Vote), &payload)?;
    if raw.len() != degree {
        return Err(OpError::Protocol {
            replica: me,
            what: "link returned a payload count other than the degree",
        });
    }
    let digests = raw[..s]
        .iter()
        .enumerate()
        .map(|(replica, bytes)| {
            wire::decode_digest(bytes).map_err(|what| OpError::Protocol { replica, what })
        })
        .collect::<Result<Vec<_>, _>>()?;
    let raw = vote(&digests);
    let verdict = ctx.policy.on_mismatch.apply(raw.clone(), &digests);
    let vote_report = Mismatch::from_vote(OpKind::Read, ctx, &digests, &raw, &verdict);
    let report = |ctx: &mut OpContext<'_>, mismatch: Option<Mismatch>| {
        if let Some(mismatch) = mismatch {
            (ctx.on_mismatch)(mismatch);
        }
    };
    let Some(source) = verdict.source() else {
        report(ctx, vote_report);
        return Err(OpError::Io(EIO));
    };
    let agreed = digests[source];
    let len = match agreed.outcome.result() {
        Ok(len) => len,
        Err(errno) => {
            report(ctx, vote_report);
            return Err(OpError::Io(errno));
        }
    };
    let mut targets = match &verdict {
        Verdict::Majority { minority, .. } => minority.clone(),
        _ => Vec::new(),
    };
    targets.extend(s..degree);
    let data_tag = tag(ctx.seq, Step::Data);
    let held = if me == source {
        let bytes = buf.get(..len).ok_or(OpError::Protocol {
            replica: me,
            what: "agreed length exceeds this replica's buffer",
        })?;
        let crc = transfer::crc_of(bytes, ctx.policy.checksums);
        transfer::send(link, &targets, data_tag, Ok(len), bytes, crc)?;
        agreed.outcome
    } else if targets.contains(&me) {
        let got = transfer::recv(link, source, &[], data_tag, buf, ctx.policy.checksums)?;
        match got.result {
            Ok(len) => Outcome::Data { len, crc: got.crc },
            Err(errno) => Outcome::Error(errno),
        }
    } else {
        agreed.outcome
    };
    let mine = Digest {
        offset,
        requested,
        outcome: held,
    };
    let (result, check_report) = confirm(OpKind::Read, ctx, link, &mine, Some(source), buf)?;
    report(ctx, check_report.or(vote_report));
    result.map_err(OpError::Io)
}
