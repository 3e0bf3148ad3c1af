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
use crate::{wire, Errno, OpContext, OpError, EIO};

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
    let written = one_writer(ctx, link, data, offset, false, |data| {
        io.pwrite(data, offset).map(|n| (n, offset))
    })?;
    Ok(written.0)
}

/// Simple Write's vote and single writer, with the writer's call `write`
/// (which returns the count and where the bytes landed). With
/// `tell_landing`, the result message also carries the landing offset
/// (8 bytes; Append Write, see `write::append`), and every replica returns
/// it; otherwise every replica returns `offset`.
pub(super) fn one_writer<L>(
    ctx: &mut OpContext<'_>,
    link: &mut L,
    data: &[u8],
    offset: u64,
    tell_landing: bool,
    write: impl FnOnce(&[u8]) -> Result<(usize, u64), Errno>,
) -> Result<(usize, u64), OpError>
where
    L: ReplicaLink + ?Sized,
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
    let (result, landed) = if link.me() == writer {
        let outcome = write(data);
        let landed = outcome.map_or(offset, |(_, at)| at);
        let result = checked(outcome.map(|(n, _)| n), data.len());
        let mut message = Vec::with_capacity(17);
        wire::encode_result(result, &mut message);
        if tell_landing {
            message.extend_from_slice(&landed.to_le_bytes());
        }
        link.send_to_others(result_tag, &message)?;
        (result, landed)
    } else {
        let message = link.recv(writer, result_tag)?;
        let malformed = |what| OpError::Protocol {
            replica: writer,
            what,
        };
        match tell_landing {
            false => (
                wire::decode_result(&message, agreed.requested).map_err(malformed)?,
                offset,
            ),
            true => {
                let (result, rest) =
                    wire::decode_result_from(&message, agreed.requested).map_err(malformed)?;
                let landed: [u8; 8] = rest
                    .try_into()
                    .map_err(|_| malformed("landing offset is not 8 bytes"))?;
                (result, u64::from_le_bytes(landed))
            }
        }
    };
    result.map(|n| (n, landed)).map_err(OpError::Io)
}
