//! The step every voting protocol starts with: exchange digests with all
//! replicas (tag step [`Step::Vote`]), decode them, vote, and report a
//! mismatch. Read and write protocols differ only in what they digest and
//! in what they do with the [`Agreement`].

use crate::link::ReplicaLink;
use crate::policy::OnMismatch;
use crate::report::{Mismatch, OpKind};
use crate::tag::{tag, Step};
use crate::transfer;
use crate::vote::{vote, Digest, Outcome, Verdict};
use crate::{wire, Errno, OpContext, OpError, EIO};

/// The digests of all replicas and the verdict on them.
#[derive(Debug)]
pub(crate) struct Agreement {
    /// Every replica's digest, by replica index (`degree` entries).
    pub digests: Vec<Digest>,
    /// The vote on `digests`.
    pub verdict: Verdict,
}

impl Agreement {
    /// The replica whose digest won and that digest; `None` without a
    /// majority.
    pub fn agreed(&self) -> Option<(usize, &Digest)> {
        let source = self.verdict.source()?;
        self.digests.get(source).map(|digest| (source, digest))
    }
}

/// Exchanges `mine` with every replica and votes. Reports a mismatch through
/// `ctx` when the vote is not unanimous; returns an error only when a digest
/// could not be exchanged or decoded.
pub(crate) fn agree<L: ReplicaLink + ?Sized>(
    op: OpKind,
    ctx: &mut OpContext<'_>,
    link: &mut L,
    mine: &Digest,
) -> Result<Agreement, OpError> {
    let digests = exchange_digests(link, tag(ctx.seq, Step::Vote), mine)?;
    let raw = vote(&digests);
    let verdict = ctx.policy.on_mismatch.apply(raw.clone(), &digests);
    if let Some(mismatch) = Mismatch::from_vote(op, ctx, &digests, &raw, &verdict) {
        (ctx.on_mismatch)(mismatch);
    }
    Ok(Agreement { digests, verdict })
}

/// Checks that every replica ended with the same result after data were
/// passed between replicas (tag step [`Step::Check`]): exchanges `mine`,
/// the digest of what this replica holds in `buf`, with every replica.
///
/// Unanimous: returns this replica's result. Otherwise, unless the policy
/// is `error` or `abort`, a *repair* is tried from a source: `reference`
/// when given (the replica the data came from, whose bytes are the truth
/// even when several replicas hold the same damaged copy), else the
/// majority's lowest replica (under `warn` without a majority: replica 0).
/// The source resends its bytes (tag
/// step [`Step::Repair`]) to the replicas that differ, which check them
/// against the source's digest, and all confirm again (tag step
/// [`Step::Recheck`]). A repaired operation returns the source's result
/// everywhere with a report naming the source in `corrected_from`.
/// Otherwise every replica returns `EIO` (the same everywhere) and the
/// report: the replicas whose digest differs from `reference`'s (the
/// replica the data came from), or without a reference the vote's
/// minority (everyone without a majority).
pub(crate) fn confirm<L: ReplicaLink + ?Sized>(
    op: OpKind,
    ctx: &OpContext<'_>,
    link: &mut L,
    mine: &Digest,
    reference: Option<usize>,
    buf: &mut [u8],
) -> Result<(Result<usize, Errno>, Option<Mismatch>), OpError> {
    let digests = exchange_digests(link, tag(ctx.seq, Step::Check), mine)?;
    if digests.iter().all(|d| d == mine) {
        return Ok((mine.outcome.result(), None));
    }
    let n = digests.len();
    let raw = vote(&digests);
    let reference_given = reference.is_some_and(|k| k < n);
    let (disagreeing, reference) = match (reference, &raw) {
        (Some(k), _) if k < n => ((0..n).filter(|&i| digests[i] != digests[k]).collect(), k),
        (_, Verdict::Majority { source, minority }) => (minority.clone(), *source),
        _ => ((0..n).collect(), 0),
    };
    // The data came from `reference`: its bytes are the truth, however
    // many replicas hold the same damaged copy (a chain forwards it).
    // Without one (every replica sent chunks), a majority decides.
    let source = match (ctx.policy.on_mismatch, reference_given, &raw) {
        (OnMismatch::Error | OnMismatch::Abort, _, _) => None,
        (_, true, _) => Some(reference),
        (_, false, Verdict::Majority { source, .. }) => Some(*source),
        (OnMismatch::Warn, false, _) => Some(reference),
        (OnMismatch::Correct, false, _) => None,
    };
    let mut mismatch = Mismatch {
        op,
        rank: ctx.rank,
        path: ctx.path.to_owned(),
        offset: digests[reference].offset,
        len: digests[reference].requested,
        digests: digests.clone(),
        disagreeing,
        corrected_from: None,
        policy: ctx.policy.on_mismatch,
    };
    let Some(source) = source else {
        return Ok((Err(EIO), Some(mismatch)));
    };
    let repaired = repair(ctx, link, &digests, source, buf)?;
    if repaired {
        mismatch.corrected_from = Some(source);
        return Ok((digests[source].outcome.result(), Some(mismatch)));
    }
    Ok((Err(EIO), Some(mismatch)))
}

/// [`confirm`] for a read protocol: passes the report on and returns the
/// agreed byte count or errno.
pub(crate) fn confirm_read<L: ReplicaLink + ?Sized>(
    ctx: &mut OpContext<'_>,
    link: &mut L,
    mine: &Digest,
    reference: Option<usize>,
    buf: &mut [u8],
) -> Result<usize, OpError> {
    let (result, mismatch) = confirm(OpKind::Read, ctx, link, mine, reference, buf)?;
    if let Some(mismatch) = mismatch {
        (ctx.on_mismatch)(mismatch);
    }
    result.map_err(OpError::Io)
}

/// Resends `source`'s bytes to every replica whose digest differs from
/// `source`'s, then confirms again; true when every replica now holds the
/// source's digest. The same on every replica.
fn repair<L: ReplicaLink + ?Sized>(
    ctx: &OpContext<'_>,
    link: &mut L,
    digests: &[Digest],
    source: usize,
    buf: &mut [u8],
) -> Result<bool, OpError> {
    let me = link.me();
    let wanted = digests[source];
    let targets: Vec<usize> = (0..digests.len())
        .filter(|&i| digests[i] != wanted)
        .collect();
    let repair_tag = tag(ctx.seq, Step::Repair);
    let checksums = ctx.policy.checksums;
    let mut holding = digests[me];
    match wanted.outcome {
        Outcome::Data { len, crc } if me == source => {
            let bytes = buf.get(..len).ok_or(OpError::Protocol {
                replica: me,
                what: "agreed length exceeds this replica's buffer",
            })?;
            transfer::send(link, &targets, repair_tag, Ok(len), bytes, crc)?;
        }
        Outcome::Data { .. } if targets.contains(&me) => {
            let got = transfer::recv(link, source, &[], repair_tag, buf, checksums)?;
            holding.outcome = match got.result {
                Ok(len) => Outcome::Data { len, crc: got.crc },
                Err(errno) => Outcome::Error(errno),
            };
        }
        // The source's outcome is an errno: nothing to resend, adopt it.
        Outcome::Error(_) if targets.contains(&me) => holding.outcome = wanted.outcome,
        _ => {}
    }
    let again = exchange_digests(link, tag(ctx.seq, Step::Recheck), &holding)?;
    Ok(again.iter().all(|d| *d == wanted))
}

/// Exchanges `mine` with every replica under `tag` and decodes the digests.
fn exchange_digests<L: ReplicaLink + ?Sized>(
    link: &mut L,
    tag: u32,
    mine: &Digest,
) -> Result<Vec<Digest>, OpError> {
    let raw = link.exchange_all(tag, &wire::encode_digest(mine))?;
    if raw.len() != link.degree() {
        // Only a faulty link implementation gets here.
        return Err(OpError::Protocol {
            replica: link.me(),
            what: "link returned a payload count other than the degree",
        });
    }
    raw.iter()
        .enumerate()
        .map(|(replica, bytes)| {
            wire::decode_digest(bytes).map_err(|what| OpError::Protocol { replica, what })
        })
        .collect()
}
