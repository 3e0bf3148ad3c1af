//! The redundancy-file format, version 1 (documented in `docs/formats.md`).
//!
//! ```text
//! header (copy A) | payload chunks | header (copy B) | u64 len(B) | "REDIOEND"
//! ```
//!
//! Every integer is little-endian. A header starts with `"REDIOPAR"`, the
//! version, flags and its own length, and ends with a CRC32 of everything
//! before it. It describes the whole set (every member's files), so any
//! surviving redundancy file of a set carries every member's metadata, and
//! it is written twice so that one damaged copy does not lose this file's
//! own payload CRCs.
//!
//! The types are here; the binary form is in `codec`, the rules a header
//! must satisfy in `validate`, and the file around the header in
//! [`crate::redundancy_file`].

use crate::scheme::Scheme;
use std::fmt::Write as _;

// Both add methods to Header: its bytes, and what a valid one is.
mod codec;
mod validate;

/// First bytes of a header.
pub const MAGIC: &[u8; 8] = b"REDIOPAR";
/// Last bytes of a redundancy file.
pub const TRAILER_MAGIC: &[u8; 8] = b"REDIOEND";
/// The format version this code writes and reads.
pub const VERSION: u16 = 1;
/// Bytes of the trailer after copy B: its length and the trailer magic.
pub const TRAILER_LEN: u64 = 16;
/// Upper bound on a header, so a corrupt length cannot make us allocate
/// gigabytes.
pub const MAX_HEADER_LEN: u32 = 64 << 20;

/// Upper bound on a member's logical file and on one payload chunk (2^56
/// bytes, 64 PiB): sums and offsets of valid headers never overflow.
pub const MAX_LOGICAL_LEN: u64 = 1 << 56;

/// One protected file of a member.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileMeta {
    /// Path relative to the member's root, `/`-separated, as the bytes
    /// the file system holds (a Unix name need not be UTF-8).
    pub path: Vec<u8>,
    /// Size in bytes.
    pub size: u64,
    /// `st_mode` permission bits (and file type bits, as stat gives them).
    pub mode: u32,
    /// Modification time, seconds since the epoch.
    pub mtime_sec: i64,
    /// Modification time, nanoseconds.
    pub mtime_nsec: u32,
    /// CRC32 (IEEE) of the whole file.
    pub crc32: u32,
}

/// One member of a set.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemberMeta {
    /// Rank in `MPI_COMM_WORLD` of the process that wrote the files.
    pub world_rank: u32,
    /// Logical rank (rank in its replica world).
    pub logical_rank: u32,
    /// Failure group (by default the host name).
    pub failure_group: String,
    /// Host name.
    pub host: String,
    /// The member's files, in logical-file order.
    pub files: Vec<FileMeta>,
}

impl FileMeta {
    /// The recorded path as a relative `Path` (unchecked: see
    /// [`crate::files::check_relative`] before using it).
    pub fn rel_path(&self) -> &std::path::Path {
        use std::os::unix::ffi::OsStrExt;
        std::path::Path::new(std::ffi::OsStr::from_bytes(&self.path))
    }

    /// The path for messages ([`show_name`]).
    pub fn shown(&self) -> String {
        show_name(&self.path)
    }
}

/// A file name for messages and reports: its UTF-8 parts as they are,
/// every other byte as `\xNN` (so two different names never look alike
/// through U+FFFD, and the user can type the name back).
pub fn show_name(bytes: &[u8]) -> String {
    let mut s = String::with_capacity(bytes.len());
    for chunk in bytes.utf8_chunks() {
        s.push_str(chunk.valid());
        for b in chunk.invalid() {
            let _ = write!(s, "\\x{b:02x}");
        }
    }
    s
}

impl MemberMeta {
    /// Length of the member's logical file (its files concatenated).
    pub fn logical_len(&self) -> u64 {
        self.files.iter().map(|f| f.size).sum()
    }
}

/// Length and CRC32 of one payload chunk of this file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChunkMeta {
    /// Bytes.
    pub len: u64,
    /// CRC32 of those bytes.
    pub crc32: u32,
}

/// A redundancy-file header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Header {
    /// The scheme and its parameter.
    pub scheme: Scheme,
    /// Index of the set among the job's sets.
    pub set_id: u32,
    /// Number of sets in the job.
    pub set_count: u32,
    /// Number of logical ranks in the job.
    pub logical_ranks: u32,
    /// Which member of the set this file belongs to.
    pub member: u16,
    /// Chunk size of XOR / RS (0 for SINGLE and PARTNER).
    pub chunk_size: u64,
    /// Every member of the set, in set order.
    pub members: Vec<MemberMeta>,
    /// This file's payload chunks (XOR: 1, RS: k, PARTNER: copies, SINGLE: 0).
    pub payload: Vec<ChunkMeta>,
}

/// A header or redundancy file that cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FormatError {
    /// Fewer bytes than the structure needs.
    #[error("truncated: needed {need} byte(s) for {what} at offset {at}, but only {have} remain")]
    Truncated {
        /// What was being read.
        what: String,
        /// Offset in the header.
        at: usize,
        /// Bytes needed.
        need: usize,
        /// Bytes left.
        have: usize,
    },
    /// Not a redio redundancy file.
    #[error("not a redio redundancy header (magic {0:?})")]
    Magic(String),
    /// A version this code does not read.
    #[error("format version {0} is not supported (this redio reads version {VERSION})")]
    Version(u16),
    /// The stored CRC does not match the header bytes.
    #[error(
        "header CRC mismatch: stored {stored:08x}, computed {computed:08x} (header is corrupt)"
    )]
    Crc {
        /// CRC in the file.
        stored: u32,
        /// CRC of the bytes read.
        computed: u32,
    },
    /// Fields that contradict each other or the scheme.
    #[error("invalid header: {0}")]
    Invalid(String),
}

/// The format's CRC32 (IEEE, as zlib and SCR).
pub fn crc32(bytes: &[u8]) -> u32 {
    crc32fast::hash(bytes)
}

impl Header {
    /// Total payload bytes.
    pub fn payload_len(&self) -> u64 {
        self.payload.iter().map(|c| c.len).sum()
    }

    /// Offset of payload chunk `i` within the payload.
    pub fn payload_offset(&self, i: usize) -> u64 {
        self.payload[..i].iter().map(|c| c.len).sum()
    }

    /// The set-wide part of the header (everything but the member index and
    /// this file's payload), for comparing the headers of one set.
    pub fn same_set(&self, other: &Header) -> bool {
        self.scheme == other.scheme
            && self.set_id == other.set_id
            && self.set_count == other.set_count
            && self.logical_ranks == other.logical_ranks
            && self.chunk_size == other.chunk_size
            && self.members == other.members
    }

    /// A human-readable rendering, for `redio parity inspect`.
    pub fn describe(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(s, "format version {VERSION}, scheme {}", self.scheme);
        let _ = writeln!(
            s,
            "set {} of {}, member {} of {}, {} logical rank(s) in the job",
            self.set_id,
            self.set_count,
            self.member,
            self.members.len(),
            self.logical_ranks
        );
        let _ = writeln!(s, "chunk size {} bytes", self.chunk_size);
        for (i, m) in self.members.iter().enumerate() {
            let _ = writeln!(
                s,
                "member {i}: world rank {}, logical rank {}, failure group {}, host {}, {} file(s), {} bytes",
                m.world_rank,
                m.logical_rank,
                m.failure_group,
                m.host,
                m.files.len(),
                m.logical_len()
            );
            for f in &m.files {
                let _ = writeln!(
                    s,
                    "  {}  {} bytes  mode {:o}  mtime {}.{:09}  crc32 {:08x}",
                    f.shown(),
                    f.size,
                    f.mode & 0o7777,
                    f.mtime_sec,
                    f.mtime_nsec,
                    f.crc32
                );
            }
        }
        for (i, c) in self.payload.iter().enumerate() {
            let _ = writeln!(
                s,
                "payload chunk {i}: {} bytes, crc32 {:08x}",
                c.len, c.crc32
            );
        }
        s
    }
}

/// The name of a member's redundancy file in its root directory.
pub fn file_name(prefix: &str, set_id: u32, member: usize) -> String {
    format!("{prefix}.s{set_id}.m{member}.rdp")
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A valid XOR header of three members.
    pub(crate) fn sample() -> Header {
        let files = |n: u64| {
            vec![FileMeta {
                path: format!("out/rank{n}.dat").into_bytes(),
                size: 10 + n,
                mode: 0o100640,
                mtime_sec: 1_700_000_000,
                mtime_nsec: 5,
                crc32: 0xdead_beef,
            }]
        };
        let members: Vec<MemberMeta> = (0..3)
            .map(|i| MemberMeta {
                world_rank: i,
                logical_rank: i,
                failure_group: format!("node{i}"),
                host: format!("node{i}"),
                files: files(i as u64),
            })
            .collect();
        Header {
            scheme: Scheme::Xor,
            set_id: 0,
            set_count: 1,
            logical_ranks: 3,
            member: 1,
            chunk_size: 6,
            members,
            payload: vec![ChunkMeta { len: 6, crc32: 7 }],
        }
    }

    #[test]
    fn round_trip() {
        let h = sample();
        let bytes = h.encode();
        assert_eq!(Header::decode(&bytes).unwrap(), h);
        assert_eq!(
            Header::length_from_prefix(&bytes[..16]).unwrap() as usize,
            bytes.len()
        );
    }

    #[test]
    fn every_truncation_is_refused_with_a_message() {
        let bytes = sample().encode();
        for n in 0..bytes.len() {
            let e = Header::decode(&bytes[..n]).unwrap_err();
            assert!(matches!(e, FormatError::Truncated { .. }), "{n}: {e}");
        }
    }

    #[test]
    fn every_flipped_byte_is_detected() {
        let bytes = sample().encode();
        for i in 0..bytes.len() {
            let mut b = bytes.clone();
            b[i] ^= 0x20;
            assert!(Header::decode(&b).is_err(), "flip at {i} accepted");
        }
    }

    #[test]
    fn unknown_version_and_magic_are_named() {
        let mut b = sample().encode();
        b[8] = 9;
        assert_eq!(Header::decode(&b).unwrap_err(), FormatError::Version(9));
        let mut b = sample().encode();
        b[0] = b'X';
        assert!(Header::decode(&b)
            .unwrap_err()
            .to_string()
            .contains("not a redio"));
    }

    #[test]
    fn unknown_flags_are_refused() {
        // Found by tests/fuzz_parsers.rs: a set flag bit was ignored.
        let mut b = sample().encode();
        b[11] = 0x80;
        let n = b.len();
        let crc = crc32(&b[..n - 4]);
        b[n - 4..].copy_from_slice(&crc.to_le_bytes());
        let e = Header::decode(&b).unwrap_err();
        assert!(e.to_string().contains("unknown header flags 0x8000"), "{e}");
    }

    #[test]
    fn two_members_with_one_logical_rank_are_refused() {
        let mut h = sample();
        h.members[2].logical_rank = 0;
        let e = Header::decode(&h.encode()).unwrap_err();
        assert!(
            e.to_string()
                .contains("members 0 and 2 both claim logical rank 0"),
            "{e}"
        );
    }

    #[test]
    fn sizes_past_the_cap_are_refused_before_any_arithmetic() {
        // A file of 2^63 bytes (would overflow sums and `off_t`), and two
        // files whose sizes overflow u64 together.
        let mut h = sample();
        h.members[0].files[0].size = 1 << 63;
        let e = Header::decode(&h.encode()).unwrap_err();
        assert!(e.to_string().contains("add up to more than"), "{e}");
        let mut h = sample();
        let mut f = h.members[1].files[0].clone();
        f.path = b"other".to_vec();
        f.size = u64::MAX;
        h.members[1].files.push(f);
        let e = Header::decode(&h.encode()).unwrap_err();
        assert!(e.to_string().contains("member 1"), "{e}");
        let mut h = sample();
        let again = h.members[1].files[0].clone();
        h.members[1].files.push(again);
        let e = Header::decode(&h.encode()).unwrap_err();
        assert!(e.to_string().contains("twice"), "{e}");
    }

    #[test]
    fn inconsistent_fields_are_invalid() {
        let mut h = sample();
        h.chunk_size = 99;
        h.payload[0].len = 99;
        let e = Header::decode(&h.encode()).unwrap_err();
        assert!(e.to_string().contains("chunk size 99"), "{e}");
        let mut h = sample();
        h.member = 3;
        assert!(Header::decode(&h.encode()).is_err());
    }
}
