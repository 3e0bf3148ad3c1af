//! The step every voting protocol starts with: exchange digests with all
//! replicas (tag step [`Step::Vote`]), decode them, vote, and report a
//! mismatch. Read and write protocols differ only in what they digest and
//! in what they do with the [`Agreement`].

use crate::link::ReplicaLink;
use crate::report::{Mismatch, OpKind};
use crate::tag::{tag, Step};
use crate::vote::{vote, Digest, Verdict};
use crate::{wire, OpContext, OpError};

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
    let raw = link.exchange_all(tag(ctx.seq, Step::Vote), &wire::encode_digest(mine))?;
    if raw.len() != link.degree() {
        // Only a faulty link implementation gets here.
        return Err(OpError::Protocol {
            replica: link.me(),
            what: "link returned a payload count other than the degree",
        });
    }
    let digests = raw
        .iter()
        .enumerate()
        .map(|(replica, bytes)| {
            wire::decode_digest(bytes).map_err(|what| OpError::Protocol { replica, what })
        })
        .collect::<Result<Vec<_>, _>>()?;
    let verdict = vote(&digests);
    if let Some(mismatch) = Mismatch::from_vote(op, ctx, &digests, &verdict) {
        (ctx.on_mismatch)(mismatch);
    }
    Ok(Agreement { digests, verdict })
}
