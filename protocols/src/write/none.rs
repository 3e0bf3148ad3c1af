//! The None write protocol: every replica writes the file itself, as if
//! redio were not there. No messages, no vote; the baseline for
//! benchmarks (and the file receives every write once per replica).

use crate::io::{checked, FileIo};
use crate::OpError;

/// Writes `data` at `offset` on this replica only.
pub(super) fn run<F: FileIo + ?Sized>(
    io: &mut F,
    data: &[u8],
    offset: u64,
) -> Result<usize, OpError> {
    checked(io.pwrite(data, offset), data.len()).map_err(OpError::Io)
}
