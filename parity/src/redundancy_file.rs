//! One redundancy file on disk (the layout of `docs/formats.md`: header
//! copy A, payload, header copy B, trailer): its name, opening it without
//! blocking, reading a usable header copy, checking the payload CRC32s, and
//! completing a file whose payload is written. `format` holds the header's
//! bytes; this module holds the file around them.

use crate::files::AtomicFile;
use crate::format::{self, FormatError, Header, TRAILER_LEN, TRAILER_MAGIC};
use crate::options::DEFAULT_PIECE;
use crate::safe_fs::{self, Links};
use redio_aligned::AlignedBuf;
use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;
use std::path::Path;

/// A redundancy file read from disk.
#[derive(Debug, Clone)]
pub struct Parsed {
    /// The header (from copy A, or copy B if A is damaged).
    pub header: Header,
    /// Offset of the payload.
    pub payload_at: u64,
    /// Set when copy A was unusable (and why).
    pub copy_a_error: Option<FormatError>,
}

/// Opens a redundancy file for reading: a regular file only (a FIFO, a
/// device or a directory with a redundancy file's name is refused without
/// blocking), the message naming the path.
pub fn open_redundancy(path: &Path) -> io::Result<File> {
    safe_fs::open_regular(path, Links::Follow)
}

/// Reads and checks a redundancy file's header (copy A, else copy B) and
/// its overall length. Does not read the payload.
pub fn read_header(path: &Path) -> Result<Parsed, String> {
    let f = open_redundancy(path).map_err(|e| e.to_string())?;
    let bytes_len = f
        .metadata()
        .map_err(|e| format!("{}: {e}", path.display()))?
        .len();
    let read = |at: u64, n: u64| -> Result<Vec<u8>, String> {
        let mut b = vec![0u8; n as usize];
        f.read_exact_at(&mut b, at)
            .map_err(|e| format!("{}: {e}", path.display()))?;
        Ok(b)
    };
    let copy_a = (|| -> Result<Header, FormatError> {
        let prefix = read(0, 16.min(bytes_len)).map_err(FormatError::Invalid)?;
        let len = Header::length_from_prefix(&prefix)? as u64;
        let bytes = read(0, len.min(bytes_len)).map_err(FormatError::Invalid)?;
        let h = Header::decode(&bytes)?;
        let want = 2 * len + h.payload_len() + TRAILER_LEN;
        if bytes_len != want {
            return Err(FormatError::Invalid(format!(
                "file is {bytes_len} bytes but its header describes {want} (truncated or extended)"
            )));
        }
        Ok(h)
    })();
    let a_err = match copy_a {
        Ok(h) => {
            let payload_at = h.encode().len() as u64;
            return Ok(Parsed {
                header: h,
                payload_at,
                copy_a_error: None,
            });
        }
        Err(e) => e,
    };
    let copy_b = (|| -> Result<(Header, u64), String> {
        if bytes_len < TRAILER_LEN {
            return Err(format!("file is only {bytes_len} bytes"));
        }
        let t = read(bytes_len - TRAILER_LEN, TRAILER_LEN)?;
        if &t[8..] != TRAILER_MAGIC {
            return Err("no trailer (file truncated?)".into());
        }
        let len = u64::from_le_bytes(t[..8].try_into().unwrap_or([0; 8]));
        if len > bytes_len - TRAILER_LEN || len > u64::from(format::MAX_HEADER_LEN) {
            return Err(format!(
                "trailer names a {len}-byte header in a {bytes_len}-byte file (a header has at \
                 most {} bytes): the trailer is damaged",
                format::MAX_HEADER_LEN
            ));
        }
        let bytes = read(bytes_len - TRAILER_LEN - len, len)?;
        let h = Header::decode(&bytes).map_err(|e| e.to_string())?;
        if bytes_len != 2 * len + h.payload_len() + TRAILER_LEN {
            return Err("length does not match header copy B".into());
        }
        Ok((h, len))
    })();
    match copy_b {
        Ok((header, len)) => Ok(Parsed {
            header,
            payload_at: len,
            copy_a_error: Some(a_err),
        }),
        Err(b) => Err(format!(
            "{}: header copy A: {a_err}; copy B: {b}",
            path.display()
        )),
    }
}

/// Completes a redundancy file whose payload is written (at the encoded
/// header's length): records the payload CRCs in `header`, writes both
/// header copies and the trailer, and fsyncs. The file is not committed.
pub fn finish_file(
    out: &AtomicFile,
    header: &mut Header,
    crcs: impl IntoIterator<Item = u32>,
) -> io::Result<()> {
    for (c, crc) in header.payload.iter_mut().zip(crcs) {
        c.crc32 = crc;
    }
    let bytes = header.encode();
    let hlen = bytes.len() as u64;
    let tail = hlen + header.payload_len();
    out.write_at(&bytes, 0)?;
    out.write_at(&bytes, tail)?;
    let mut trailer = hlen.to_le_bytes().to_vec();
    trailer.extend_from_slice(TRAILER_MAGIC);
    out.write_at(&trailer, tail + hlen)?;
    out.sync()
}

/// Parses `prefix.s<set>.m<member>.rdp` into set and member.
pub fn parse_name(name: &str, prefix: &str) -> Option<(u32, usize)> {
    let rest = name
        .strip_prefix(prefix)?
        .strip_prefix(".s")?
        .strip_suffix(".rdp")?;
    let (s, m) = rest.split_once(".m")?;
    Some((s.parse().ok()?, m.parse().ok()?))
}

/// Checks every payload chunk's CRC32.
pub fn check_payload(path: &Path, parsed: &Parsed) -> Result<(), String> {
    let f = open_redundancy(path).map_err(|e| e.to_string())?;
    let mut at = parsed.payload_at;
    let mut buf = AlignedBuf::for_overwrite(DEFAULT_PIECE);
    for (i, c) in parsed.header.payload.iter().enumerate() {
        let mut h = crc32fast::Hasher::new();
        let mut left = c.len;
        while left > 0 {
            let n = (left as usize).min(buf.len());
            f.read_exact_at(&mut buf[..n], at)
                .map_err(|e| e.to_string())?;
            h.update(&buf[..n]);
            at += n as u64;
            left -= n as u64;
        }
        let crc = h.finalize();
        if crc != c.crc32 {
            return Err(format!(
                "payload chunk {i}: CRC32 {crc:08x} instead of {:08x} (parity damaged)",
                c.crc32
            ));
        }
    }
    Ok(())
}

/// Reads a redundancy file's header for `inspect`.
pub fn inspect(path: &Path) -> Result<Parsed, String> {
    read_header(path)
}
