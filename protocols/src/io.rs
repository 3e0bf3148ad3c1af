//! [`FileIo`]: the real file of this replica, as the protocols see it.

use crate::{Errno, EIO};

/// Positioned I/O on this replica's own descriptor for the file.
///
/// Only the replicas a protocol chooses call these; a replica that does not
/// touch the file (e.g. a non-writing replica under Simple Write) never
/// calls them, so its implementation may be a placeholder.
pub trait FileIo {
    /// Reads up to `buf.len()` bytes at `offset`, like `pread(2)`. A short
    /// count (0 at end of file) is a normal result; `Err` carries an errno.
    fn pread(&mut self, buf: &mut [u8], offset: u64) -> Result<usize, Errno>;

    /// Writes up to `data.len()` bytes at `offset`, like `pwrite(2)`, and
    /// returns how many were written or an errno.
    fn pwrite(&mut self, data: &[u8], offset: u64) -> Result<usize, Errno>;

    /// Writes `data` at the end of the file in one step, like `write(2)` on
    /// an `O_APPEND` descriptor: writers of other ranks cannot land in
    /// between. Returns the byte count and the offset where the bytes
    /// landed. By default unsupported (`EOPNOTSUPP`).
    fn append(&mut self, data: &[u8]) -> Result<(usize, u64), Errno> {
        let _ = data;
        Err(libc::EOPNOTSUPP)
    }
}

/// Normalises what a [`FileIo`] returned for a buffer of `cap` bytes: a
/// count beyond the buffer or a non-positive errno cannot be passed on to
/// other replicas or the application, so both become [`EIO`].
pub(crate) fn checked(result: Result<usize, Errno>, cap: usize) -> Result<usize, Errno> {
    match result {
        Ok(n) if n <= cap => Ok(n),
        Err(errno) if errno > 0 => Err(errno),
        Ok(_) | Err(_) => Err(EIO),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checked_passes_sane_results_and_rejects_impossible_ones() {
        assert_eq!(checked(Ok(0), 0), Ok(0));
        assert_eq!(checked(Ok(4), 4), Ok(4));
        assert_eq!(checked(Ok(5), 4), Err(EIO));
        assert_eq!(checked(Err(libc::ENOSPC), 4), Err(libc::ENOSPC));
        assert_eq!(checked(Err(0), 4), Err(EIO));
        assert_eq!(checked(Err(-1), 4), Err(EIO));
    }
}
