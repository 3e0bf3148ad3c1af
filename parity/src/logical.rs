//! A member's logical file: its protected files concatenated in header
//! order, zero-padded past the end. Parity is computed over it, so every
//! verb reads and writes members through it.

use crate::error::Error;
use crate::files::{self, AtomicFile};
use crate::format::{Header, MemberMeta};
use crate::safe_fs::{self, Links};
use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

/// A member's files read as one logical file, zero-padded past its end.
pub struct LogicalReader {
    files: Vec<(File, u64)>,
}

impl LogicalReader {
    /// Opens `paths` with their recorded sizes.
    pub fn open(paths: &[(PathBuf, u64)]) -> io::Result<Self> {
        let files = paths
            .iter()
            .map(|(p, n)| safe_fs::open_regular(p, Links::Follow).map(|f| (f, *n)))
            .collect::<io::Result<_>>()?;
        Ok(LogicalReader { files })
    }

    /// A reader over files already open, with their recorded sizes.
    pub fn from_files(files: Vec<(File, u64)>) -> Self {
        LogicalReader { files }
    }

    /// Fills `buf` with the logical bytes at `offset` (zeros past the end).
    pub fn read_at(&self, mut offset: u64, buf: &mut [u8]) -> io::Result<()> {
        let mut out = 0usize;
        for (f, size) in &self.files {
            if out == buf.len() {
                break;
            }
            if offset >= *size {
                offset -= size;
                continue;
            }
            let n = ((size - offset) as usize).min(buf.len() - out);
            f.read_exact_at(&mut buf[out..out + n], offset)?;
            out += n;
            offset = 0;
        }
        buf[out..].fill(0);
        Ok(())
    }
}

/// A reader of the logical file of the member whose files `meta` lists
/// under `root`, taking file `i` from `rebuilt[i]`'s temporary copy if set.
pub fn logical_reader(
    root: &Path,
    meta: &MemberMeta,
    rebuilt: &[Option<AtomicFile>],
) -> Result<LogicalReader, Error> {
    let files = meta
        .files
        .iter()
        .enumerate()
        .map(|(i, f)| {
            let file = match rebuilt.get(i).and_then(Option::as_ref) {
                Some(a) => a.file().try_clone()?,
                None => {
                    let full = files::resolve_in_root(root, &f.path)?;
                    safe_fs::open_regular(&full, Links::Follow)?
                }
            };
            Ok((file, f.size))
        })
        .collect::<Result<Vec<_>, Error>>()?;
    Ok(LogicalReader::from_files(files))
}

/// Writes logical bytes `bytes` at `offset` of member `m` into the files
/// being rebuilt (intact files and padding are skipped).
pub fn write_logical(
    h: &Header,
    m: usize,
    outs: &[Option<AtomicFile>],
    offset: u64,
    bytes: &[u8],
) -> io::Result<()> {
    let mut start = 0u64;
    let end = offset + bytes.len() as u64;
    for (i, f) in h.members[m].files.iter().enumerate() {
        let (fs, fe) = (start, start + f.size);
        start = fe;
        let (lo, hi) = (offset.max(fs), end.min(fe));
        if lo >= hi {
            continue;
        }
        if let Some(out) = &outs[i] {
            out.write_at(
                &bytes[(lo - offset) as usize..(hi - offset) as usize],
                lo - fs,
            )?;
        }
    }
    Ok(())
}
