//! Simple Write (Böhm & Engelmann 2012, section IV.A, figure 7): one
//! replica writes for all, after the replicas agreed on what to write.
//!
//! Message sequence of operation `seq` among replicas `0..r`:
//!
//! 1. **vote** (tag step `Vote`): all-to-all exchange of digests, each
//!    `(offset, length, length and CRC-32 of the replica's buffer)`, then
//!    [`vote`](crate::vote::vote) on every replica;
//! 2. *no majority* (r = 2 disagreeing, or three different buffers):
//!    nobody writes, every replica returns `EIO`; mismatch reported, not
//!    corrected. No more messages;
//! 3. otherwise the **writer** is the agreed digest's source: replica 0
//!    when unanimous, else the lowest-index majority replica (r = 3 with a
//!    corrupted buffer on replica 0: replica 1 writes, so the majority's
//!    bytes reach the file; mismatch reported as corrected). The writer
//!    calls `pwrite` once with its buffer; a short count is passed on as
//!    is, like `write(2)`;
//! 4. **result** (tag step `Result`): the writer sends its byte count or
//!    errno to every other replica, ascending; each checks that the count
//!    does not exceed the agreed length. Every replica returns the
//!    writer's result, an errno such as `ENOSPC` included.
//!
//! Messages: `r·(r−1)` digests (29 bytes each) plus `r−1` results (at most
//! 9 bytes each). Bytes reaching the file: the buffer, once.

use crate::consensus::agree;
use crate::io::{checked, FileIo};
use crate::link::ReplicaLink;
use crate::report::OpKind;
use crate::tag::{tag, Step};
use crate::vote::Digest;
use crate::{wire, OpContext, OpError, EIO};

/// Runs Simple Write on this replica.
pub(super) fn run<L, F>(
    ctx: &mut OpContext<'_>,
    link: &mut L,
    io: &mut F,
    data: &[u8],
    offset: u64,
) -> Result<usize, OpError>
where
    L: ReplicaLink + ?Sized,
    F: FileIo + ?Sized,
{
    let mine = Digest {
        offset,
        requested: data.len(),
        outcome: ctx.policy.outcome_of(data),
    };
    let agreement = agree(OpKind::Write, ctx, link, &mine)?;
    let Some((writer, agreed)) = agreement.agreed() else {
        return Err(OpError::Io(EIO));
    };
    let result_tag = tag(ctx.seq, Step::Result);
    let result = if link.me() == writer {
        let result = checked(io.pwrite(data, offset), data.len());
        let mut message = Vec::with_capacity(9);
        wire::encode_result(result, &mut message);
        link.send_to_others(result_tag, &message)?;
        result
    } else {
        let message = link.recv(writer, result_tag)?;
        wire::decode_result(&message, agreed.requested).map_err(|what| OpError::Protocol {
            replica: writer,
            what,
        })?
    };
    result.map_err(OpError::Io)
}
