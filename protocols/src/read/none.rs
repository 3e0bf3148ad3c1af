//! The None read protocol: every replica reads the file itself, as if redio
//! were not there. No messages, no vote; the baseline for benchmarks.

use crate::io::{checked, FileIo};
use crate::OpError;

/// Reads into `buf` at `offset` on this replica only.
pub(super) fn run<F: FileIo + ?Sized>(
    io: &mut F,
    buf: &mut [u8],
    offset: u64,
) -> Result<usize, OpError> {
    let requested = buf.len();
    checked(io.pread(buf, offset), requested).map_err(OpError::Io)
}
