//! Chunked & Chained Read (Böhm & Engelmann 2012, section IV.A, figure 5):
//! Chained Read with the buffer cut into `chunk`-byte chunks, so that the
//! master's read of chunk `i + 1` overlaps with chunk `i` travelling down
//! the chain (a pipeline).
//!
//! Message sequence of operation `seq` among replicas `0..r`, chunks
//! `0..m` (`m = ⌈len / chunk⌉`, at least 1; `chunk = 0` means one chunk):
//!
//! 1. the master, for each chunk in order: `pread`s it into its place in
//!    the buffer, sends its chunk message (tag step `Data`) to replica 1,
//!    and goes on with the next chunk — unless the read was short (end of
//!    file) or failed: then that message was the final one, and the master
//!    reads no further;
//! 2. replica `k`, for each chunk: receives the message from `k − 1`,
//!    forwards it unchanged to `k + 1` (if any) and checks its CRC; the
//!    bytes land straight in their place in the buffer. A full chunk's data
//!    message is exactly `chunk` bytes; any other length marks the final
//!    chunk, so every replica stops after the same message even when a
//!    message was damaged in transit;
//! 3. the result is the sum of the chunk counts up to and including the
//!    first short chunk, or the errno of a failed chunk read before it
//!    (chunk by chunk like one `pread`);
//! 4. **check** (tag step `Check`): as in Read & Distribute — unanimous
//!    digests of the whole buffer: the master's result everywhere;
//!    otherwise a resend from the master or `EIO` everywhere, with one
//!    identical report.
//!
//! Messages on each link of the chain arrive in order (same pair, same
//! tag), so no chunk index is sent.
//!
//! Cost per operation (`n` = bytes read, `m'` = chunks sent, i.e. up to and
//! including the first short one): the master reads `n` bytes in `m'`
//! `pread`s, the others do not touch the file; every replica but the last
//! sends `m'` data messages (`n` bytes) and `m'` trailers (≤ 13 bytes
//! each); every replica sends `r − 1` digests. Latency ≈ the read of `n`
//! bytes plus `r − 1` transfers of one chunk.

use super::relay::{self, Route};
use crate::{FileIo, OpContext, OpError, ReplicaLink};

/// Runs Chunked & Chained Read on this replica.
pub(super) fn run<L, F>(
    ctx: &mut OpContext<'_>,
    link: &mut L,
    io: &mut F,
    buf: &mut [u8],
    offset: u64,
    chunk: usize,
) -> Result<usize, OpError>
where
    L: ReplicaLink + ?Sized,
    F: FileIo + ?Sized,
{
    relay::run(ctx, link, io, buf, offset, chunk, Route::Chain)
}
