//! Append Write: a write to a file opened with `O_APPEND`, at its end.
//!
//! In a plain run the kernel places each such write at the end of the file
//! in one step, so lines appended by several ranks to one log never
//! overwrite each other. Replicas cannot learn the end first and write
//! there later: another rank may append in between. So Append Write is
//! Simple Write (`write::simple`) whose writer appends in one call
//! ([`FileIo::append`]), whatever protocol the file's other writes use,
//! and whose result message carries where the bytes landed (8 more
//! bytes), so that every replica's file offset moves alike.
//!
//! The vote's digests carry [`AT_THE_END`] as their offset.

use super::simple::one_writer;
use crate::io::FileIo;
use crate::link::ReplicaLink;
use crate::{OpContext, OpError};

/// The offset the replicas vote on for an append: not a position.
pub const AT_THE_END: u64 = u64::MAX;

/// Appends `data` to the file on behalf of every replica; returns the byte
/// count and the offset where the bytes landed, the same on every replica.
pub fn run<L, F>(
    ctx: &mut OpContext<'_>,
    link: &mut L,
    io: &mut F,
    data: &[u8],
) -> Result<(usize, u64), OpError>
where
    L: ReplicaLink + ?Sized,
    F: FileIo + ?Sized,
{
    one_writer(ctx, link, data, AT_THE_END, true, |data| io.append(data))
}
