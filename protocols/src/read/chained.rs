//! Chained Read (Böhm & Engelmann 2012, section IV.A, figure 4): the master
//! (replica 0) alone reads; the data travel point-to-point along the chain
//! `0 → 1 → … → r − 1`, with an end-to-end CRC-32.
//!
//! Message sequence of operation `seq` among replicas `0..r`:
//!
//! 1. the master `pread`s the whole buffer once;
//! 2. **data** (tag step `Data`): the master sends the chunk (the bytes
//!    read, then a trailer with the result and their CRC-32; see
//!    `transfer`) to replica 1; replica `k` receives it from `k − 1`
//!    straight into its buffer, forwards it unchanged to `k + 1` (if any),
//!    then checks the CRC. A damaged message is still forwarded, so every
//!    replica downstream of the damage sees it too;
//! 3. **check** (tag step `Check`): as in Read & Distribute — unanimous
//!    digests: the master's result everywhere; otherwise the master resends
//!    to the replicas that differ (under `correct`/`warn`; `consensus`) or
//!    `EIO` everywhere, with one identical report (`disagreeing` = the
//!    replicas whose digest differs from the master's).
//!
//! Cost per operation (`n` = bytes read): the master reads `n` bytes, the
//! others do not touch the file; every replica but the last sends one data
//! message of `n` bytes and a trailer of at most 13 (one per hop); every replica
//! sends `r − 1` digests. Latency: `r − 1` transfers of `n` bytes in a row.

use super::relay::{self, Route};
use crate::{FileIo, OpContext, OpError, ReplicaLink};

/// Runs Chained Read on this replica.
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
    relay::run(ctx, link, io, buf, offset, 0, Route::Chain)
}
