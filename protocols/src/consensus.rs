//! The step every voting protocol starts with: exchange digests with all
//! replicas (tag step [`Step::Vote`]), decode them, vote, and report a
//! mismatch. Read and write protocols differ only in what they digest and
//! in what they do with the [`Agreement`].

use crate::link::ReplicaLink;
use crate::report::{Mismatch, OpKind};
use crate::tag::{tag, Step};
use crate::vote::{vote, Digest, Verdict};
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
/// the digest of what this replica holds, with every replica.
///
/// Unanimous: returns this replica's result. Otherwise returns `EIO` (the
/// same on every replica) and the report to pass on: the replicas whose
/// digest differs from `reference`'s (the replica the data came from), or
/// without a reference the vote's minority (everyone without a majority);
/// `corrected_from` is `None`.
pub(crate) fn confirm<L: ReplicaLink + ?Sized>(
    op: OpKind,
    ctx: &OpContext<'_>,
    link: &mut L,
    mine: &Digest,
    reference: Option<usize>,
) -> Result<(Result<usize, Errno>, Option<Mismatch>), OpError> {
    let digests = exchange_digests(link, tag(ctx.seq, Step::Check), mine)?;
    if digests.iter().all(|d| d == mine) {
        return Ok((mine.outcome.result(), None));
    }
    let n = digests.len();
    let (disagreeing, reference) = match reference {
        Some(k) if k < n => ((0..n).filter(|&i| digests[i] != digests[k]).collect(), k),
        _ => match vote(&digests) {
            Verdict::Majority { source, minority } => (minority, source),
            _ => ((0..n).collect(), 0),
        },
    };
    let mismatch = Mismatch {
        op,
        rank: ctx.rank,
        path: ctx.path.to_owned(),
        offset: digests[reference].offset,
        len: digests[reference].requested,
        digests,
        disagreeing,
        corrected_from: None,
        policy: ctx.policy.on_mismatch,
    };
    Ok((Err(EIO), Some(mismatch)))
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
