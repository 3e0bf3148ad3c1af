//! Read & Distribute (Böhm & Engelmann 2012, section IV.A, figure 3): the
//! master (replica 0) alone reads, and sends what it read to every other
//! replica, with an end-to-end CRC-32.
//!
//! Message sequence of operation `seq` among replicas `0..r`:
//!
//! 1. the master `pread`s the whole buffer once;
//! 2. **data** (tag step `Data`): the master sends the bytes it read, then
//!    a trailer with its result (count or errno) and their CRC-32, to each
//!    other replica, ascending (see `transfer`). Each receiver receives the
//!    bytes straight into its buffer and checks them; a transfer that fails
//!    the check makes that receiver's result `EIO`;
//! 3. **check** (tag step `Check`): all-to-all exchange of digests of what
//!    each replica ended with (offset, length, count and CRC-32 of its
//!    buffer, or errno). Unanimous: every replica returns the master's
//!    result (a short count at end of file, or the master's errno).
//!    Otherwise (a transfer was damaged): under `correct` and `warn` the
//!    master resends to the replicas that differ and all confirm again
//!    (`consensus::confirm`); under `error`/`abort`, or if that fails too,
//!    every replica returns `EIO`. Every replica gets the same report,
//!    `disagreeing` = the replicas whose digest differed from the master's.
//!
//! Cost per operation (`n` = bytes read, `r` replicas):
//! - file: the master reads `n` bytes, once; the others do not touch the
//!   file (their [`FileIo`] is never called);
//! - messages: the master sends `r − 1` data messages of `n` bytes, each
//!   followed by a trailer of at most 13; every replica sends `r − 1`
//!   digests (≤ 29 bytes). So the master sends `(r − 1)·n` data bytes, the
//!   others none.
//!
//! Tolerates soft errors in transit (repaired by a resend), not in the
//! master's read (nothing to compare it with).

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
