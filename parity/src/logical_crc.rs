//! The CRC32 of each of a member's files, computed from the bytes the
//! encode reads anyway, so that the files are read once, not twice (once
//! for the header's CRCs, once for the parity); the rebuild uses it the same
//! way to check survivors while they serve pieces, and to check what it
//! writes without reading it back.
//!
//! The encode reads the logical file chunk by chunk, and within a chunk in
//! increasing offsets, but interleaves the chunks. So the logical file is
//! cut at every file and every chunk boundary into segments, each segment
//! is hashed as its bytes arrive (in order), and a file's CRC is the
//! combination of its segments' CRCs (`crc32fast::Hasher::combine`).
//! Bytes seen again are skipped; bytes past a gap in a segment are not
//! hashed, and [`LogicalCrc::missing`] names what is left to read.

/// One stretch of the logical file inside one file and one chunk.
struct Segment {
    /// Logical offset of its first byte.
    start: u64,
    /// One past its last byte.
    end: u64,
    /// The next byte it expects (bytes must come in order).
    next: u64,
    hasher: crc32fast::Hasher,
}

/// Per-file CRC32s assembled from reads of a logical file.
pub struct LogicalCrc {
    /// Sorted by `start`, covering `0..logical length` without gaps.
    segments: Vec<Segment>,
    /// Index of the first segment of each file (and one past the last).
    file_first: Vec<usize>,
    /// Logical offset of each file's first byte (and one past the last).
    file_start: Vec<u64>,
}

impl LogicalCrc {
    /// For files of `sizes` (in logical order) read in chunks of `chunk`
    /// bytes (0: no chunking).
    pub fn new(sizes: &[u64], chunk: u64) -> Self {
        let mut segments = Vec::new();
        let mut file_first = Vec::with_capacity(sizes.len() + 1);
        let mut file_start = Vec::with_capacity(sizes.len() + 1);
        let mut start = 0u64;
        for &size in sizes {
            file_first.push(segments.len());
            file_start.push(start);
            let end = start + size;
            let mut at = start;
            while at < end {
                let chunk_end = at
                    .checked_div(chunk)
                    .map_or(u64::MAX, |index| (index + 1) * chunk);
                let stop = end.min(chunk_end);
                segments.push(Segment {
                    start: at,
                    end: stop,
                    next: at,
                    hasher: crc32fast::Hasher::new(),
                });
                at = stop;
            }
            start = end;
        }
        file_first.push(segments.len());
        file_start.push(start);
        Self {
            segments,
            file_first,
            file_start,
        }
    }

    /// Takes `bytes` read at logical `offset` (bytes past the logical
    /// length, the padding, are ignored). Within a segment, bytes already
    /// hashed are skipped (a piece read twice counts once), and bytes that
    /// do not continue where the segment stands are left for
    /// [`missing`](Self::missing).
    pub fn observe(&mut self, offset: u64, bytes: &[u8]) {
        let end = offset + bytes.len() as u64;
        // The first segment that ends after `offset`.
        let mut i = self.segments.partition_point(|s| s.end <= offset);
        while let Some(s) = self.segments.get_mut(i) {
            if s.start >= end {
                break;
            }
            let from = offset.max(s.start);
            let to = end.min(s.end);
            if from <= s.next && s.next < to {
                s.hasher
                    .update(&bytes[(s.next - offset) as usize..(to - offset) as usize]);
                s.next = to;
            }
            i += 1;
        }
    }

    /// What is left to read before every CRC is known: `(file, offset in
    /// the file, length)`, each within one segment, in logical order.
    pub fn missing(&self) -> Vec<(usize, u64, u64)> {
        let mut out = Vec::new();
        for (f, w) in self.file_first.windows(2).enumerate() {
            for s in &self.segments[w[0]..w[1]] {
                if s.next < s.end {
                    out.push((f, s.next - self.file_start[f], s.end - s.next));
                }
            }
        }
        out
    }

    /// Each file's CRC32, `None` for a file with bytes not seen.
    pub fn file_crcs(self) -> Vec<Option<u32>> {
        let mut segments = self.segments.into_iter();
        self.file_first
            .windows(2)
            .map(|w| {
                let mut file = crc32fast::Hasher::new();
                let mut whole = true;
                for s in segments.by_ref().take(w[1] - w[0]) {
                    whole &= s.next == s.end;
                    file.combine(&s.hasher);
                }
                whole.then(|| file.finalize())
            })
            .collect()
    }

    /// Each file's CRC32, or `None` when some byte was not seen (the
    /// caller then reads the files again).
    pub fn finish(self) -> Option<Vec<u32>> {
        self.file_crcs().into_iter().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bytes(n: usize, seed: u8) -> Vec<u8> {
        (0..n)
            .map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed))
            .collect()
    }

    /// Reads the logical file of `files` chunk-interleaved, as the encode
    /// does, in pieces of `piece`, with `pad` zero bytes past the end.
    fn interleaved(files: &[Vec<u8>], chunk: u64, piece: u64, pad: u64) -> Option<Vec<u32>> {
        let logical: Vec<u8> = files.concat();
        let len = logical.len() as u64;
        let sizes: Vec<u64> = files.iter().map(|f| f.len() as u64).collect();
        let mut crc = LogicalCrc::new(&sizes, chunk);
        let chunks = (len + pad).div_ceil(chunk).max(1);
        let mut off = 0;
        while off < chunk {
            for d in 0..chunks {
                let at = d * chunk + off;
                let n = piece.min(chunk - off);
                let mut buf = vec![0u8; n as usize];
                for (i, b) in buf.iter_mut().enumerate() {
                    *b = logical.get((at as usize) + i).copied().unwrap_or(0);
                }
                crc.observe(at, &buf);
            }
            off += piece;
        }
        crc.finish()
    }

    #[test]
    fn crcs_from_interleaved_chunk_reads_equal_whole_file_crcs() {
        let cases: Vec<Vec<Vec<u8>>> = vec![
            vec![bytes(1000, 1)],
            vec![
                bytes(0, 0),
                bytes(1, 2),
                bytes(999, 3),
                bytes(0, 4),
                bytes(4097, 5),
            ],
            vec![bytes(333, 6), bytes(334, 7), bytes(335, 8)],
            vec![],
        ];
        for files in &cases {
            let expected: Vec<u32> = files.iter().map(|f| crc32fast::hash(f)).collect();
            for (chunk, piece) in [(256, 64), (1000, 7), (17, 17), (4096, 4096)] {
                let got = interleaved(files, chunk, piece, 13);
                assert_eq!(got, Some(expected.clone()), "chunk {chunk} piece {piece}");
            }
        }
    }

    #[test]
    fn a_sequential_read_without_chunks_works_too() {
        let files = [bytes(10, 1), bytes(5000, 2)];
        let mut crc = LogicalCrc::new(&[10, 5000], 0);
        let logical = files.concat();
        for (i, piece) in logical.chunks(999).enumerate() {
            crc.observe(i as u64 * 999, piece);
        }
        let expected: Vec<u32> = files.iter().map(|f| crc32fast::hash(f)).collect();
        assert_eq!(crc.finish(), Some(expected));
    }

    #[test]
    fn pieces_seen_twice_count_once_and_gaps_are_named_for_a_second_read() {
        let files = [bytes(3000, 1), bytes(10, 2), bytes(0, 3), bytes(2000, 4)];
        let logical = files.concat();
        let sizes: Vec<u64> = files.iter().map(|f| f.len() as u64).collect();
        let expected: Vec<Option<u32>> = files.iter().map(|f| Some(crc32fast::hash(f))).collect();
        let mut crc = LogicalCrc::new(&sizes, 1024);
        // Chunk 0 twice, chunk 1 with a hole (its second half seen first).
        crc.observe(0, &logical[..1024]);
        crc.observe(0, &logical[..1024]);
        crc.observe(1536, &logical[1536..2048]);
        crc.observe(1024, &logical[1024..1200]);
        // Everything from 1200 on is left, in segments.
        let left = crc.missing();
        assert_eq!(left[0], (0, 1200, 848));
        assert!(left.iter().all(|&(f, _, n)| f != 2 && n > 0));
        for (f, at, n) in left {
            let start: u64 = sizes[..f].iter().sum();
            let from = (start + at) as usize;
            crc.observe(start + at, &logical[from..from + n as usize]);
        }
        assert!(crc.missing().is_empty());
        assert_eq!(crc.file_crcs(), expected);
    }

    #[test]
    fn missing_or_out_of_order_bytes_give_no_crcs() {
        let mut crc = LogicalCrc::new(&[100], 0);
        crc.observe(0, &[0; 50]);
        assert!(crc.finish().is_none(), "half a file seen");
        let mut crc = LogicalCrc::new(&[100], 0);
        crc.observe(50, &[0; 50]);
        crc.observe(0, &[0; 50]);
        assert!(crc.finish().is_none(), "out of order");
    }
}
