//! Cutting a buffer into chunks (pieces), and the rule by which the
//! per-chunk results of a chunked operation add up to one result.

use crate::Errno;
use std::ops::Range;

/// The chunks of a `len`-byte buffer cut into `chunk`-byte pieces, the last
/// one possibly shorter. Always at least one chunk (an empty one for
/// `len == 0`, so that the file is still asked); `chunk == 0` means the
/// whole buffer in one chunk.
pub(crate) fn pieces(len: usize, chunk: usize) -> Vec<Range<usize>> {
    let chunk = if chunk == 0 { len.max(1) } else { chunk };
    if len == 0 {
        return std::iter::once(0..0).collect();
    }
    (0..len)
        .step_by(chunk)
        .map(|start| start..len.min(start.saturating_add(chunk)))
        .collect()
}

/// The file offset of the byte `start` bytes into a request at `offset`.
pub(crate) fn at(offset: u64, start: usize) -> u64 {
    offset.saturating_add(start as u64)
}

/// Adds up per-chunk results in chunk order, like one `pread`/`pwrite`
/// over the whole buffer would: full chunks add up; the first short chunk
/// ends the operation with the count so far (its own bytes included); the
/// first error ends it with that errno. Chunks after the end are ignored.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Tally {
    total: usize,
    end: Option<Result<usize, Errno>>,
}

impl Tally {
    /// Accounts for the next chunk, `full` bytes long, which produced `result`.
    pub fn add(&mut self, result: Result<usize, Errno>, full: usize) {
        if self.end.is_some() {
            return;
        }
        match result {
            Ok(n) if n >= full => self.total += full,
            Ok(n) => {
                self.total += n;
                self.end = Some(Ok(self.total));
            }
            Err(errno) => self.end = Some(Err(errno)),
        }
    }

    /// Whether a short chunk or an error has ended the operation.
    pub fn ended(&self) -> bool {
        self.end.is_some()
    }

    /// The operation's result so far.
    pub fn result(&self) -> Result<usize, Errno> {
        self.end.unwrap_or(Ok(self.total))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pieces_cover_the_buffer_and_never_panic() {
        let spans = |len, chunk| -> Vec<(usize, usize)> {
            pieces(len, chunk)
                .iter()
                .map(|r| (r.start, r.end))
                .collect()
        };
        assert_eq!(spans(0, 16), [(0, 0)]);
        assert_eq!(spans(0, 0), [(0, 0)]);
        assert_eq!(spans(5, 0), [(0, 5)]);
        assert_eq!(spans(16, 16), [(0, 16)]);
        assert_eq!(spans(17, 16), [(0, 16), (16, 17)]);
        assert_eq!(spans(3, usize::MAX), [(0, 3)]);
        assert_eq!(pieces(7 * 16 + 3, 16).len(), 8);
    }

    #[test]
    fn tally_stops_at_the_first_short_chunk_or_error() {
        let mut t = Tally::default();
        t.add(Ok(4), 4);
        t.add(Ok(2), 4);
        t.add(Err(libc::EIO), 4);
        assert_eq!(t.result(), Ok(6));
        let mut t = Tally::default();
        t.add(Ok(4), 4);
        t.add(Err(libc::ENOSPC), 4);
        t.add(Ok(1), 4);
        assert!(t.ended());
        assert_eq!(t.result(), Err(libc::ENOSPC));
        let mut t = Tally::default();
        t.add(Ok(4), 4);
        t.add(Ok(3), 3);
        assert!(!t.ended());
        assert_eq!(t.result(), Ok(7));
    }
}
