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

use crate::scheme::Scheme;
use std::fmt::Write as _;

/// First bytes of a header.
pub const MAGIC: &[u8; 8] = b"REDIOPAR";
/// Last bytes of a redundancy file.
pub const TRAILER_MAGIC: &[u8; 8] = b"REDIOEND";
/// The format version this code writes and reads.
pub const VERSION: u16 = 1;
/// Bytes of the trailer after copy B: its length and the trailer magic.
pub const TRAILER_LEN: u64 = 16;
/// Bytes before the header body: magic, version, flags, length.
const PREFIX_LEN: usize = 16;
/// Upper bound on a header, so a corrupt length cannot make us allocate
/// gigabytes.
pub const MAX_HEADER_LEN: u32 = 64 << 20;

/// Upper bound on a member's logical file and on one payload chunk (2^56
/// bytes, 64 PiB): sums and offsets of valid headers never overflow.
pub const MAX_LOGICAL_LEN: u64 = 1 << 56;

/// One protected file of a member.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileMeta {
    /// Path relative to the member's root, `/`-separated.
    pub path: String,
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

struct Writer(Vec<u8>);

impl Writer {
    fn u8(&mut self, v: u8) {
        self.0.push(v);
    }
    fn u16(&mut self, v: u16) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn u32(&mut self, v: u32) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn u64(&mut self, v: u64) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn str(&mut self, s: &str) {
        self.u32(s.len() as u32);
        self.0.extend_from_slice(s.as_bytes());
    }
}

struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize, what: &str) -> Result<&'a [u8], FormatError> {
        let have = self.bytes.len() - self.at;
        if n > have {
            return Err(FormatError::Truncated {
                what: what.into(),
                at: self.at,
                need: n,
                have,
            });
        }
        let s = &self.bytes[self.at..self.at + n];
        self.at += n;
        Ok(s)
    }
    fn array<const N: usize>(&mut self, what: &str) -> Result<[u8; N], FormatError> {
        let s = self.take(N, what)?;
        let mut a = [0u8; N];
        a.copy_from_slice(s);
        Ok(a)
    }
    fn u8(&mut self, what: &str) -> Result<u8, FormatError> {
        Ok(self.array::<1>(what)?[0])
    }
    fn u16(&mut self, what: &str) -> Result<u16, FormatError> {
        Ok(u16::from_le_bytes(self.array(what)?))
    }
    fn u32(&mut self, what: &str) -> Result<u32, FormatError> {
        Ok(u32::from_le_bytes(self.array(what)?))
    }
    fn u64(&mut self, what: &str) -> Result<u64, FormatError> {
        Ok(u64::from_le_bytes(self.array(what)?))
    }
    fn str(&mut self, what: &str) -> Result<String, FormatError> {
        let n = self.u32(what)? as usize;
        let b = self.take(n, what)?;
        String::from_utf8(b.to_vec())
            .map_err(|_| FormatError::Invalid(format!("{what} is not UTF-8")))
    }
    /// A count of items that each take at least `min_item` bytes: checked
    /// against the bytes left before anything is allocated.
    fn count(&mut self, what: &str, min_item: usize) -> Result<usize, FormatError> {
        let n = self.u32(what)? as usize;
        let have = self.bytes.len() - self.at;
        if n.saturating_mul(min_item) > have {
            return Err(FormatError::Truncated {
                what: format!("{n} x {what}"),
                at: self.at,
                need: n.saturating_mul(min_item),
                have,
            });
        }
        Ok(n)
    }
}

impl Header {
    /// The header in its binary form (one copy), CRC included.
    pub fn encode(&self) -> Vec<u8> {
        let mut w = Writer(Vec::new());
        w.0.extend_from_slice(MAGIC);
        w.u16(VERSION);
        w.u16(0); // flags
        w.u32(0); // total length, patched below
        w.u8(self.scheme.code());
        w.u8(self.scheme.param());
        w.u16(self.member);
        w.u32(self.set_id);
        w.u32(self.set_count);
        w.u32(self.logical_ranks);
        w.u64(self.chunk_size);
        w.u32(self.members.len() as u32);
        for m in &self.members {
            w.u32(m.world_rank);
            w.u32(m.logical_rank);
            w.str(&m.failure_group);
            w.str(&m.host);
            w.u32(m.files.len() as u32);
            for f in &m.files {
                w.str(&f.path);
                w.u64(f.size);
                w.u32(f.mode);
                w.u64(f.mtime_sec as u64);
                w.u32(f.mtime_nsec);
                w.u32(f.crc32);
            }
        }
        w.u32(self.payload.len() as u32);
        for c in &self.payload {
            w.u64(c.len);
            w.u32(c.crc32);
        }
        let total = (w.0.len() + 4) as u32;
        w.0[12..16].copy_from_slice(&total.to_le_bytes());
        let crc = crc32(&w.0);
        w.u32(crc);
        w.0
    }

    /// The length of a header from its first 16 bytes, checking magic and
    /// version on the way.
    pub fn length_from_prefix(prefix: &[u8]) -> Result<u32, FormatError> {
        let mut r = Reader {
            bytes: prefix,
            at: 0,
        };
        let magic: [u8; 8] = r.array("magic")?;
        if &magic != MAGIC {
            return Err(FormatError::Magic(
                String::from_utf8_lossy(&magic).into_owned(),
            ));
        }
        let version = r.u16("version")?;
        if version != VERSION {
            return Err(FormatError::Version(version));
        }
        let flags = r.u16("flags")?;
        if flags != 0 {
            // Version 1 defines no flag: a set one is damage, or a newer
            // writer whose meaning this code would silently drop.
            return Err(FormatError::Invalid(format!(
                "unknown header flags 0x{flags:04x} (version {VERSION} defines none)"
            )));
        }
        let len = r.u32("header length")?;
        if (len as usize) < PREFIX_LEN + 4 || len > MAX_HEADER_LEN {
            return Err(FormatError::Invalid(format!(
                "header length {len} is out of range"
            )));
        }
        Ok(len)
    }

    /// Parses one header copy (exactly its bytes) and checks it.
    pub fn decode(bytes: &[u8]) -> Result<Header, FormatError> {
        let len = Self::length_from_prefix(bytes)? as usize;
        if bytes.len() < len {
            return Err(FormatError::Truncated {
                what: "header".into(),
                at: 0,
                need: len,
                have: bytes.len(),
            });
        }
        let body = &bytes[..len - 4];
        let stored = u32::from_le_bytes([
            bytes[len - 4],
            bytes[len - 3],
            bytes[len - 2],
            bytes[len - 1],
        ]);
        let computed = crc32(body);
        if stored != computed {
            return Err(FormatError::Crc { stored, computed });
        }
        let mut r = Reader {
            bytes: body,
            at: PREFIX_LEN,
        };
        let code = r.u8("scheme")?;
        let param = r.u8("scheme parameter")?;
        let scheme = Scheme::from_code(code, param).ok_or_else(|| {
            FormatError::Invalid(format!("unknown scheme {code} (parameter {param})"))
        })?;
        let member = r.u16("member index")?;
        let set_id = r.u32("set id")?;
        let set_count = r.u32("set count")?;
        let logical_ranks = r.u32("logical rank count")?;
        let chunk_size = r.u64("chunk size")?;
        let nmembers = r.count("members", 20)?;
        let mut members = Vec::with_capacity(nmembers);
        for i in 0..nmembers {
            let world_rank = r.u32("world rank")?;
            let logical_rank = r.u32("logical rank")?;
            let failure_group = r.str("failure group")?;
            let host = r.str("host")?;
            let nfiles = r.count(&format!("files of member {i}"), 32)?;
            let mut files = Vec::with_capacity(nfiles);
            for _ in 0..nfiles {
                files.push(FileMeta {
                    path: r.str("file path")?,
                    size: r.u64("file size")?,
                    mode: r.u32("file mode")?,
                    mtime_sec: r.u64("file mtime")? as i64,
                    mtime_nsec: r.u32("file mtime ns")?,
                    crc32: r.u32("file CRC")?,
                });
            }
            members.push(MemberMeta {
                world_rank,
                logical_rank,
                failure_group,
                host,
                files,
            });
        }
        let nchunks = r.count("payload chunks", 12)?;
        let mut payload = Vec::with_capacity(nchunks);
        for _ in 0..nchunks {
            payload.push(ChunkMeta {
                len: r.u64("chunk length")?,
                crc32: r.u32("chunk CRC")?,
            });
        }
        if r.at != body.len() {
            return Err(FormatError::Invalid(format!(
                "{} unexpected byte(s) after the payload table",
                body.len() - r.at
            )));
        }
        let h = Header {
            scheme,
            set_id,
            set_count,
            logical_ranks,
            member,
            chunk_size,
            members,
            payload,
        };
        h.validate()?;
        Ok(h)
    }

    /// Checks the fields against each other and the scheme.
    pub fn validate(&self) -> Result<(), FormatError> {
        let bad = |m: String| Err(FormatError::Invalid(m));
        let p = self.members.len();
        if let Err(e) = self.scheme.validate(p) {
            return bad(e.to_string());
        }
        if self.member as usize >= p {
            return bad(format!(
                "member index {} but the set has {p} member(s)",
                self.member
            ));
        }
        if self.set_id >= self.set_count {
            return bad(format!(
                "set id {} but the job has {} set(s)",
                self.set_id, self.set_count
            ));
        }
        for (i, m) in self.members.iter().enumerate() {
            if m.logical_rank >= self.logical_ranks {
                return bad(format!(
                    "logical rank {} but the job has {} rank(s)",
                    m.logical_rank, self.logical_ranks
                ));
            }
            if let Some(j) = self.members[..i]
                .iter()
                .position(|o| o.logical_rank == m.logical_rank)
            {
                return bad(format!(
                    "members {j} and {i} both claim logical rank {} (forged or mixed-up header)",
                    m.logical_rank
                ));
            }
            let mut total = 0u64;
            for (k, f) in m.files.iter().enumerate() {
                if m.files[..k].iter().any(|o| o.path == f.path) {
                    return bad(format!("member {i} lists the file `{}` twice", f.path));
                }
                total = match total.checked_add(f.size) {
                    Some(t) if t <= MAX_LOGICAL_LEN => t,
                    _ => {
                        return bad(format!(
                            "member {i}'s file sizes add up to more than {MAX_LOGICAL_LEN} bytes"
                        ))
                    }
                };
            }
        }
        if self.payload.iter().any(|c| c.len > MAX_LOGICAL_LEN) {
            return bad(format!(
                "a payload chunk is longer than {MAX_LOGICAL_LEN} bytes"
            ));
        }
        let expect = match self.scheme {
            Scheme::Single => 0,
            Scheme::Partner { copies } => copies as usize,
            Scheme::Xor => 1,
            Scheme::Rs { k } => k as usize,
        };
        if self.payload.len() != expect {
            return bad(format!(
                "{} payload chunk(s), but {} stores {expect}",
                self.payload.len(),
                self.scheme
            ));
        }
        match self.scheme {
            Scheme::Xor | Scheme::Rs { .. } => {
                let p_k = (p - self.scheme.tolerance()) as u64;
                let max = self
                    .members
                    .iter()
                    .map(MemberMeta::logical_len)
                    .max()
                    .unwrap_or(0);
                if self.chunk_size != max.div_ceil(p_k) {
                    return bad(format!(
                        "chunk size {} does not fit the largest logical file ({max} bytes)",
                        self.chunk_size
                    ));
                }
                if let Some(c) = self.payload.iter().find(|c| c.len != self.chunk_size) {
                    return bad(format!(
                        "parity chunk of {} bytes, chunk size is {}",
                        c.len, self.chunk_size
                    ));
                }
            }
            Scheme::Partner { copies } => {
                let held = crate::partner::stored_by(self.member as usize, p, copies as usize);
                for (c, &m) in self.payload.iter().zip(&held) {
                    if c.len != self.members[m].logical_len() {
                        return bad(format!(
                            "copy of member {m} is {} bytes, its files are {}",
                            c.len,
                            self.members[m].logical_len()
                        ));
                    }
                }
            }
            Scheme::Single => {}
        }
        Ok(())
    }

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
                    f.path,
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
                path: format!("out/rank{n}.dat"),
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
        f.path = "other".into();
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
