//! Simple Read (Böhm & Engelmann 2012, section IV.A, figure 1): every
//! replica reads the same data from the shared file system itself, and the
//! replicas vote on what they read.
//!
//! Message sequence of operation `seq` among replicas `0..r`:
//!
//! 1. every replica `pread`s into the application buffer;
//! 2. **vote** (tag step `Vote`): all-to-all exchange of digests, each
//!    `(offset, requested length, byte count and CRC-32 of the bytes read
//!    | errno)`, then [`vote`](crate::vote::vote) on every replica;
//! 3. by verdict (identical on every replica):
//!    - *unanimous*: each replica returns its own result; no more messages;
//!    - *majority on `len` bytes* (r = 3, two against one): the source
//!      (lowest-index majority replica) sends its `len` bytes (tag step
//!      `Data`) to each minority replica, ascending. A minority replica
//!      checks them against the agreed length and CRC, copies them into
//!      its buffer and returns `len`; so do all the others. Mismatch
//!      reported as corrected;
//!    - *majority on an errno*: every replica returns that errno; no more
//!      messages; mismatch reported as corrected;
//!    - *no majority* (r = 2 disagreeing, or three different digests):
//!      every replica returns `EIO`; mismatch reported, not corrected.
//!
//! Messages: `r·(r−1)` digests (29 bytes each at most), plus one data
//! message per minority replica when correcting.

use crate::consensus::agree;
use crate::io::{checked, FileIo};
use crate::link::ReplicaLink;
use crate::report::OpKind;
use crate::tag::{tag, Step};
use crate::vote::{Digest, Outcome, Verdict};
use crate::{OpContext, OpError, Policy, EIO};

/// Runs Simple Read on this replica.
pub(super) fn run<L, F>(
    ctx: &mut OpContext<'_>,
    link: &mut L,
    io: &mut F,
    buf: &mut [u8],
    offset: u64,
) -> Result<usize, OpError>
where
    L: ReplicaLink + ?Sized,
    F: FileIo + ?Sized,
{
    let requested = buf.len();
    let local = checked(io.pread(buf, offset), requested);
    let mine = Digest {
        offset,
        requested,
        outcome: ctx.policy.outcome_of_read(local, buf),
    };
    let agreement = agree(OpKind::Read, ctx, link, &mine)?;
    let Some((source, agreed)) = agreement.agreed() else {
        return Err(OpError::Io(EIO));
    };
    let len = agreed.outcome.result().map_err(OpError::Io)?;
    if let Verdict::Majority { minority, .. } = &agreement.verdict {
        let data_tag = tag(ctx.seq, Step::Data);
        let me = link.me();
        if me == source {
            // The agreed digest is this replica's own, so `len` fits `buf`.
            let bytes = buf.get(..len).ok_or(OpError::Protocol {
                replica: me,
                what: "agreed length exceeds this replica's buffer",
            })?;
            link.send_to_each(minority, data_tag, bytes)?;
        } else if minority.contains(&me) {
            let policy = ctx.policy;
            receive_correction(link, source, data_tag, agreed.outcome, buf, &policy)?;
        }
    }
    Ok(len)
}

/// Receives the majority's bytes from `source`, checks them against the
/// agreed `outcome` and puts them at the front of `buf`.
fn receive_correction<L: ReplicaLink + ?Sized>(
    link: &mut L,
    source: usize,
    data_tag: u32,
    outcome: Outcome,
    buf: &mut [u8],
    policy: &Policy,
) -> Result<(), OpError> {
    let len = link.recv_into(source, data_tag, buf)?;
    if policy.outcome_of(&buf[..len]) != outcome {
        return Err(OpError::Protocol {
            replica: source,
            what: "corrected data do not match the agreed digest",
        });
    }
    Ok(())
}
