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

use crc32fast::Hasher;

/// One stretch of the logical file inside one file and one chunk.
struct Segment {
    /// Logical offset of its first byte.
    start: u64,
    /// One past its last byte.
    end: u64,
    /// The next byte it expects (bytes must come in order).
    next: u64,
    hasher: Hasher,
}

/// Per-file CRC32s assembled from reads of a logical file.
pub struct LogicalCrc {
    /// Sorted by `start`, covering `0..logical length` without gaps.
    segments: Vec<Segment>,
    /// Index of the first segment of each file (and one past the last).
    file_first: Vec<usize>,
    /// Logical offset of each file's first byte (and one past the last).
    file_start: Vec<u64>,
    /// The chunk size it cuts at (0: none).
    chunk: u64,
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
                    hasher: Hasher::new(),
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
            chunk,
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
                let mut file = Hasher::new();
                let mut whole = true;
                for s in segments.by_ref().take(w[1] - w[0]) {
                    whole &= s.next == s.end;
                    file.combine(&s.hasher);
                }
                whole.then(|| file.finalize())
            })
            .collect()
    }

    /// The CRC32 of each of the first `count` chunks of the logical file,
    /// padded with zeros to the end of the last (XOR parity's CRC32 comes
    /// from them: [`crc_of_xor`]); `None` when some byte was not seen or
    /// no chunk size was given.
    pub fn chunk_crcs(&self, count: usize) -> Option<Vec<u32>> {
        if self.chunk == 0 {
            return None;
        }
        let mut out = vec![Hasher::new(); count];
        for s in &self.segments {
            let d = (s.start / self.chunk) as usize;
            if s.next != s.end || d >= count {
                return None;
            }
            out[d].combine(&s.hasher);
        }
        Some(
            out.into_iter()
                .map(|mut h| {
                    h.combine(&zeros(self.chunk - h.total_len()));
                    h.finalize()
                })
                .collect(),
        )
    }

    /// Each file's CRC32, or `None` when some byte was not seen (the
    /// caller then reads the files again).
    pub fn finish(self) -> Option<Vec<u32>> {
        self.file_crcs().into_iter().collect()
    }
}

/// The CRC32 state of `len` zero bytes, to append with
/// [`Hasher::combine`], without hashing them (by doubling: 64 steps at
/// most).
pub fn zeros(len: u64) -> Hasher {
    let mut out = Hasher::new();
    let mut power = Hasher::new();
    power.update(&[0]);
    let mut n = len;
    while n > 0 {
        if n & 1 == 1 {
            out.combine(&power);
        }
        let twice = power.clone();
        power.combine(&twice);
        n >>= 1;
    }
    out
}

/// The CRC32 of the XOR of blocks of `len` bytes each, from the blocks'
/// CRC32s. CRC32 is affine over GF(2): `crc(a) = L(a) ^ crc(zeros)` with
/// `L` linear, so the XOR of an odd number of CRC32s is the CRC32 of the
/// XOR, and an even number needs `crc(zeros)` once more. An encode that
/// knows its members' chunk CRC32s (it read them) so hashes no parity.
pub fn crc_of_xor(crcs: &[u32], len: u64) -> u32 {
    let x = crcs.iter().fold(0, |acc, &c| acc ^ c);
    if crcs.len() % 2 == 0 {
        x ^ zeros(len).finalize()
    } else {
        x
    }
}

/// The CRC32 of files one after the other, from each one's CRC32 and size
/// (a logical file's, from its files').
pub fn crc_of_concatenation(parts: impl IntoIterator<Item = (u32, u64)>) -> u32 {
    let mut out = Hasher::new();
    for (crc, len) in parts {
        out.combine(&Hasher::new_with_initial_len(crc, len));
    }
    out.finalize()
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
    fn parity_crcs_follow_from_the_chunks_crcs_without_hashing_the_parity() {
        // Three members' logical files (different lengths, one of two
        // files), each padded to 2 chunks of 700 bytes.
        let chunk = 700u64;
        let members: Vec<Vec<Vec<u8>>> = vec![
            vec![bytes(1000, 1)],
            vec![bytes(300, 2), bytes(99, 3)],
            vec![bytes(1400, 4)],
        ];
        let mut padded = Vec::new();
        let mut chunk_crcs = Vec::new();
        for files in &members {
            let mut logical = files.concat();
            let sizes: Vec<u64> = files.iter().map(|f| f.len() as u64).collect();
            let mut crc = LogicalCrc::new(&sizes, chunk);
            for (i, piece) in logical.chunks(128).enumerate() {
                crc.observe(i as u64 * 128, piece);
            }
            logical.resize(2 * chunk as usize, 0);
            let want: Vec<u32> = logical
                .chunks(chunk as usize)
                .map(crc32fast::hash)
                .collect();
            assert_eq!(crc.chunk_crcs(2), Some(want.clone()));
            // The logical file's CRC32 from its files' CRC32s and sizes.
            let whole =
                crc_of_concatenation(files.iter().map(|f| (crc32fast::hash(f), f.len() as u64)));
            assert_eq!(whole, crc32fast::hash(&files.concat()));
            padded.push(logical);
            chunk_crcs.push(want);
        }
        // The XOR of one, two and three chunks.
        for n in 1..=3 {
            let mut xor = vec![0u8; chunk as usize];
            for m in &padded[..n] {
                for (x, b) in xor.iter_mut().zip(&m[..chunk as usize]) {
                    *x ^= b;
                }
            }
            let crcs: Vec<u32> = chunk_crcs[..n].iter().map(|c| c[0]).collect();
            assert_eq!(
                crc_of_xor(&crcs, chunk),
                crc32fast::hash(&xor),
                "{n} blocks"
            );
        }
        assert_eq!(zeros(0).finalize(), 0);
        assert_eq!(zeros(4099).finalize(), crc32fast::hash(&[0; 4099]));
        // A chunk with a byte not seen gives none.
        let mut crc = LogicalCrc::new(&[1000], chunk);
        crc.observe(0, &bytes(500, 1));
        assert_eq!(crc.chunk_crcs(2), None);
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
