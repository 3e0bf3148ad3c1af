//! Read & Distribute (Böhm & Engelmann 2012, section IV.A, figure 3): the
//! master (replica 0) alone reads, and sends what it read to every other
//! replica, with an end-to-end CRC-32.
//!
//! Message sequence of operation `seq` among replicas `0..r`:
//!
//! 1. the master `pread`s the whole buffer once;
//! 2. **data** (tag step `Data`): the master sends one chunk message to
//!    each other replica, ascending: `bytes · CRC-32(bytes)` when the read
//!    filled the buffer, else `result (short count | errno) · bytes ·
//!    CRC-32` (see `wire`). Each receiver checks the CRC and copies the
//!    bytes into its buffer; a message that fails the check makes that
//!    receiver's result `EIO`;
//! 3. **check** (tag step `Check`): all-to-all exchange of digests of what
//!    each replica ended with (offset, length, count and CRC-32 of its
//!    buffer, or errno). Unanimous: every replica returns the master's
//!    result (a short count at end of file, or the master's errno).
//!    Otherwise (a transfer was corrupted, or a replica's request
//!    diverged): every replica returns `EIO` and gets the same mismatch
//!    report, `disagreeing` = the replicas whose digest differs from the
//!    master's, not corrected.
//!
//! Cost per operation (`n` = bytes read, `r` replicas):
//! - file: the master reads `n` bytes, once; the others do not touch the
//!   file (their [`FileIo`] is never called);
//! - messages: the master sends `r − 1` data messages of `n + 4` bytes
//!   (`n + 13` when short, `+1` padding in one corner case); every replica
//!   sends `r − 1` digests (≤ 29 bytes). So the master sends `(r − 1)·n`
//!   data bytes, the others none.
//!
//! Tolerates soft errors in transit (detected, `EIO` everywhere), not in
//! the master's read (nothing to compare it with).

use super::relay::{self, Route};
use crate::{FileIo, OpContext, OpError, ReplicaLink};

/// Runs Read & Distribute on this replica.
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
    relay::run(ctx, link, io, buf, offset, 0, Route::Star)
}
