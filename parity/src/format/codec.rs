//! A header's binary form: [`Header::encode`] writes one copy (CRC32
//! last), [`Header::decode`] reads one back and validates it. Every read
//! is bounds-checked, and every count is checked against the bytes left
//! before anything is allocated: a corrupt count is an error, not a huge
//! allocation.

use super::{
    crc32, ChunkMeta, FileMeta, FormatError, Header, MemberMeta, MAGIC, MAX_HEADER_LEN, VERSION,
};
use crate::scheme::Scheme;

/// Bytes before the header body: magic, version, flags, length.
const PREFIX_LEN: usize = 16;

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
        self.bytes(s.as_bytes());
    }
    fn bytes(&mut self, b: &[u8]) {
        self.u32(b.len() as u32);
        self.0.extend_from_slice(b);
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
        String::from_utf8(self.bytes(what)?)
            .map_err(|_| FormatError::Invalid(format!("{what} is not UTF-8")))
    }
    fn bytes(&mut self, what: &str) -> Result<Vec<u8>, FormatError> {
        let n = self.u32(what)? as usize;
        Ok(self.take(n, what)?.to_vec())
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
                w.bytes(&f.path);
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
                    path: r.bytes("file path")?,
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
}
