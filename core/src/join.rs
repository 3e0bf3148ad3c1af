//! Distributed Separate Write: the part files the replicas write, and the
//! join that turns them into the final file.
//!
//! Under `distributed-separate`, replica `k` writes its pieces of every
//! write into its own part file beside the final file,
//! `DIR/.NAME.redio-part<k>`, at the offsets they have in the final file
//! (the part file is sparse), and appends one [`Record`] per piece to the
//! part's index, `DIR/.NAME.redio-part<k>.idx`. The join replays the
//! records of all parts in operation order (a later write to a range wins,
//! as in the file it stands for), copying each piece into the final file
//! with `copy_file_range(2)`, then syncs the final file and removes the
//! parts.
//!
//! - `copy_file_range` copies inside the kernel (no user-space copy). On
//!   file systems with reflinks (Btrfs, XFS with `reflink=1`) a
//!   block-aligned range is shared instead of copied, and NFS 4.2 copies on
//!   the server; elsewhere (ext4, tmpfs, NFSv3) the data are read and
//!   written once more. When the call is refused (`EXDEV`, `ENOSYS`,
//!   `EINVAL`, `EOPNOTSUPP`) the join falls back to `pread`/`pwrite`.
//! - The join is idempotent: a join interrupted half-way leaves the parts in
//!   place, and running it again gives the same file.
//! - Every index is checked before anything is written: a torn or damaged
//!   index, or a record pointing past the end of its part, is refused with
//!   a message naming the file and the record, and the final file is left
//!   untouched.
//! - Parts and indexes are opened through [`redio_parity::safe_fs`]: a
//!   symbolic link, a FIFO or a device in their place is refused (a link
//!   to a file outside would copy that file into the output), and an index
//!   is read up to [`MAX_INDEX_LEN`] bytes.
//! - `redio join` ([`join`]) writes a new file beside the final one and
//!   renames it into place: a final path that is a link is refused, never
//!   written through, and the result ends at the last piece (a longer file
//!   left there by an earlier run keeps no stale tail) unless the caller
//!   keeps the tail ([`Tail::Keep`]: a job that joined in place before it
//!   stopped put it there). The in-job join ([`join_into`]) writes into
//!   the application's open file, as the application's own writes would.

use redio_parity::files::AtomicFile;
use redio_parity::safe_fs::{self, Links};
use std::fs::File;
use std::io;
use std::os::unix::fs::{FileExt, PermissionsExt};
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};

/// What separates a part file's name from its replica index.
pub const PART_MARK: &str = ".redio-part";

/// The suffix of a part's index file.
pub const INDEX_SUFFIX: &str = ".idx";

/// Bytes per index record.
pub const RECORD_LEN: usize = 24;

/// The largest index the join reads (1 GiB, 44 million records): an index
/// is held in memory while its records are checked.
pub const MAX_INDEX_LEN: u64 = 1 << 30;

/// One piece a replica wrote into its part: the operation's sequence
/// number, and where the piece goes in the final file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Record {
    /// The coordinated operation's sequence number (orders the writes).
    pub seq: u64,
    /// Offset of the piece, in the final file and in the part.
    pub offset: u64,
    /// Length of the piece.
    pub len: u64,
}

impl Record {
    /// The record as stored: three little-endian `u64`.
    pub fn encode(&self) -> [u8; RECORD_LEN] {
        let mut out = [0; RECORD_LEN];
        out[..8].copy_from_slice(&self.seq.to_le_bytes());
        out[8..16].copy_from_slice(&self.offset.to_le_bytes());
        out[16..].copy_from_slice(&self.len.to_le_bytes());
        out
    }

    fn decode(bytes: &[u8]) -> Record {
        let word = |i: usize| {
            let mut w = [0; 8];
            w.copy_from_slice(&bytes[i..i + 8]);
            u64::from_le_bytes(w)
        };
        Record {
            seq: word(0),
            offset: word(8),
            len: word(16),
        }
    }
}

/// The part file of `replica` for the final file `path`.
pub fn part_path(path: &Path, replica: u32) -> PathBuf {
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned());
    let part = format!(".{}{PART_MARK}{replica}", name.unwrap_or_default());
    path.with_file_name(part)
}

/// The index file of a part file.
pub fn index_path(part: &Path) -> PathBuf {
    let mut name = part.as_os_str().to_owned();
    name.push(INDEX_SUFFIX);
    PathBuf::from(name)
}

/// The part files that exist for `path`, by replica index.
pub fn existing_parts(path: &Path) -> io::Result<Vec<(u32, PathBuf)>> {
    let dir = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned());
    let prefix = format!(".{}{PART_MARK}", name.unwrap_or_default());
    let mut parts = Vec::new();
    for entry in std::fs::read_dir(&dir)? {
        let file_name = entry?.file_name().to_string_lossy().into_owned();
        let Some(index) = file_name.strip_prefix(&prefix) else {
            continue;
        };
        if let Ok(replica) = index.parse::<u32>() {
            parts.push((replica, dir.join(&file_name)));
        }
    }
    parts.sort();
    Ok(parts)
}

/// What a join did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Joined {
    /// Part files merged.
    pub parts: usize,
    /// Records replayed.
    pub records: usize,
    /// Bytes copied into the final file.
    pub bytes: u64,
    /// Bytes that had to go through user space (the kernel refused
    /// `copy_file_range`).
    pub bytes_through_user_space: u64,
    /// Bytes of an existing longer final file dropped past the last piece
    /// ([`join`] with [`Tail::Drop`]).
    pub tail_dropped: u64,
}

/// What [`join`] does with bytes of an existing final file past the end
/// of the last piece.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tail {
    /// Drop them: the file ends where the parts end.
    Drop,
    /// Keep them (a job that joined in place before it stopped wrote them).
    Keep,
}

/// Why a join was refused or failed.
#[derive(Debug, thiserror::Error)]
pub enum JoinError {
    /// A part or index could not be read, or the final file written.
    #[error("{path}: {source}")]
    Io {
        /// The file concerned.
        path: PathBuf,
        /// The system's error.
        source: io::Error,
    },
    /// A part, index or final path that must not be used; nothing was
    /// written.
    #[error("{path}: {what}; the final file was not touched")]
    Refused {
        /// The file concerned.
        path: PathBuf,
        /// Why, and what to do.
        what: String,
    },
    /// An index is damaged; nothing was written.
    #[error("{path}: {what}; the final file was not touched")]
    Corrupt {
        /// The index file.
        path: PathBuf,
        /// What is wrong, with the record number.
        what: String,
    },
}

fn io_error(path: &Path) -> impl FnOnce(io::Error) -> JoinError + '_ {
    move |source| JoinError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// One part, opened and with its checked records.
struct Part {
    file: File,
    records: Vec<Record>,
}

/// A refusal from the safe-file layer (a link, a FIFO, a device, too
/// big), or an ordinary I/O error.
fn open_error(path: &Path) -> impl FnOnce(io::Error) -> JoinError + '_ {
    move |e| match e.kind() {
        io::ErrorKind::InvalidInput | io::ErrorKind::InvalidData => JoinError::Refused {
            path: path.to_path_buf(),
            what: e.to_string(),
        },
        _ => io_error(path)(e),
    }
}

/// Reads and checks the index of `part`.
fn open_part(part: &Path) -> Result<Part, JoinError> {
    let file = safe_fs::open_regular(part, Links::Refuse).map_err(open_error(part))?;
    let size = file.metadata().map_err(io_error(part))?.len();
    let index = index_path(part);
    let bytes = match safe_fs::read_bounded(&index, Links::Refuse, MAX_INDEX_LEN, "join index") {
        Ok(bytes) => bytes,
        // A part without index has nothing the join may trust.
        Err(e) if e.kind() == io::ErrorKind::NotFound => Vec::new(),
        Err(e) => return Err(open_error(&index)(e)),
    };
    let records =
        parse_index(&bytes, size).map_err(|what| JoinError::Corrupt { path: index, what })?;
    Ok(Part { file, records })
}

/// Parses an index of a part of `part_len` bytes: every record must lie
/// inside the part. The error says what is wrong, with the record number.
pub fn parse_index(bytes: &[u8], part_len: u64) -> Result<Vec<Record>, String> {
    if bytes.len() % RECORD_LEN != 0 {
        return Err(format!(
            "{} bytes is not a whole number of {RECORD_LEN}-byte records (torn write?)",
            bytes.len()
        ));
    }
    let mut records = Vec::with_capacity(bytes.len() / RECORD_LEN);
    for (n, chunk) in bytes.chunks(RECORD_LEN).enumerate() {
        let record = Record::decode(chunk);
        match record.offset.checked_add(record.len) {
            Some(end) if end <= part_len => records.push(record),
            _ => {
                return Err(format!(
                    "record {n} (offset {}, {} bytes) reaches past the part's {part_len} bytes",
                    record.offset, record.len
                ))
            }
        }
    }
    Ok(records)
}

/// Every existing part of `path`, opened, with its checked records.
fn open_parts(path: &Path) -> Result<Vec<(PathBuf, Part)>, JoinError> {
    existing_parts(path)
        .map_err(io_error(path))?
        .into_iter()
        .map(|(_, part)| open_part(&part).map(|opened| (part, opened)))
        .collect()
}

/// Joins the existing parts of `path` into `target` (the final file, open
/// for writing), then removes the parts. Checks every index first.
pub fn join_into(path: &Path, target: &File) -> Result<Joined, JoinError> {
    let parts = open_parts(path)?;
    replay(path, &parts, target)
}

/// Copies the pieces of `parts` into `target` in operation order, syncs
/// it, and removes the parts.
fn replay(path: &Path, parts: &[(PathBuf, Part)], target: &File) -> Result<Joined, JoinError> {
    let joined = replay_pieces(parts, target)?;
    target.sync_all().map_err(io_error(path))?;
    remove_parts(parts)?;
    Ok(joined)
}

/// Copies the pieces of `parts` into `target` in operation order.
fn replay_pieces(parts: &[(PathBuf, Part)], target: &File) -> Result<Joined, JoinError> {
    let mut order: Vec<(Record, usize)> = parts
        .iter()
        .enumerate()
        .flat_map(|(i, (_, part))| part.records.iter().map(move |r| (*r, i)))
        .collect();
    order.sort();
    let mut joined = Joined {
        parts: parts.len(),
        records: order.len(),
        ..Joined::default()
    };
    for (record, i) in order {
        let through_user = copy_range(&parts[i].1.file, target, record.offset, record.len)
            .map_err(io_error(&parts[i].0))?;
        joined.bytes += record.len;
        joined.bytes_through_user_space += through_user;
    }
    Ok(joined)
}

/// Removes the joined parts and their indexes.
fn remove_parts(parts: &[(PathBuf, Part)]) -> Result<(), JoinError> {
    for (part, _) in parts {
        for file in [index_path(part), part.clone()] {
            match std::fs::remove_file(&file) {
                Err(e) if e.kind() != io::ErrorKind::NotFound => return Err(io_error(&file)(e)),
                _ => {}
            }
        }
    }
    Ok(())
}

/// `redio join`: builds the final file `path` from its existing content
/// and its parts in a new file beside it, and renames that into place.
/// A final path that is a link or not a regular file is refused; with
/// [`Tail::Drop`] the result ends at the last piece (or at the existing
/// file's end, if that comes first).
pub fn join(path: &Path, tail: Tail) -> Result<Joined, JoinError> {
    let existing = match std::fs::symlink_metadata(path) {
        Ok(meta) if meta.is_file() => Some(meta),
        Ok(meta) => {
            return Err(JoinError::Refused {
                path: path.to_path_buf(),
                what: format!(
                    "the final path is {}; redio join writes regular files only and never \
                     through a link (remove it, or join to the real path)",
                    safe_fs::kind_of(&meta)
                ),
            })
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => None,
        Err(e) => return Err(io_error(path)(e)),
    };
    let parts = open_parts(path)?;
    if parts.is_empty() {
        // Nothing to join: the final file stays as it is.
        return Ok(Joined::default());
    }
    let end = parts
        .iter()
        .flat_map(|(_, p)| p.records.iter().map(|r| r.offset + r.len))
        .max()
        .unwrap_or(0);
    let out = AtomicFile::create(path).map_err(io_error(path))?;
    let mut tail_dropped = 0;
    if let Some(meta) = &existing {
        let old = safe_fs::open_regular(path, Links::Refuse).map_err(open_error(path))?;
        let len = old.metadata().map_err(io_error(path))?.len();
        let keep = match tail {
            Tail::Keep => len,
            Tail::Drop => len.min(end),
        };
        tail_dropped = len - keep;
        copy_range(&old, out.file(), 0, keep).map_err(io_error(path))?;
        out.file()
            .set_permissions(std::fs::Permissions::from_mode(meta.permissions().mode()))
            .map_err(io_error(path))?;
    }
    let mut joined = replay_pieces(&parts, out.file())?;
    joined.tail_dropped = tail_dropped;
    out.sync().map_err(io_error(path))?;
    out.commit().map_err(io_error(path))?;
    remove_parts(&parts)?;
    Ok(joined)
}

/// Copies `len` bytes at `offset` from `from` to the same offset of `to`;
/// returns how many went through user space.
fn copy_range(from: &File, to: &File, offset: u64, len: u64) -> io::Result<u64> {
    let mut done = 0u64;
    while done < len {
        let mut off_in = (offset + done) as i64;
        let mut off_out = off_in;
        let want = (len - done).min(1 << 30) as usize;
        // SAFETY: two open descriptors and offsets owned by this frame.
        let n = unsafe {
            libc::copy_file_range(
                from.as_raw_fd(),
                &mut off_in,
                to.as_raw_fd(),
                &mut off_out,
                want,
                0,
            )
        };
        match n {
            n if n > 0 => done += n as u64,
            // 0: the source ends early (cannot happen for a checked record).
            0 => return Err(io::Error::from(io::ErrorKind::UnexpectedEof)),
            _ => {
                let e = io::Error::last_os_error();
                match e.raw_os_error() {
                    Some(libc::EXDEV | libc::ENOSYS | libc::EINVAL | libc::EOPNOTSUPP) => {
                        let rest = len - done;
                        copy_through_user_space(from, to, offset + done, rest)?;
                        return Ok(rest);
                    }
                    Some(libc::EINTR) => {}
                    _ => return Err(e),
                }
            }
        }
    }
    Ok(0)
}

fn copy_through_user_space(from: &File, to: &File, offset: u64, len: u64) -> io::Result<()> {
    let mut buf = vec![0u8; len.min(1 << 20) as usize];
    let mut done = 0u64;
    while done < len {
        let want = (len - done).min(buf.len() as u64) as usize;
        from.read_exact_at(&mut buf[..want], offset + done)?;
        to.write_all_at(&buf[..want], offset + done)?;
        done += want as u64;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs::OpenOptions;

    fn write_part(path: &Path, replica: u32, pieces: &[(u64, &[u8], u64)]) {
        let part = part_path(path, replica);
        let file = OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(false)
            .open(&part)
            .unwrap();
        let mut index = Vec::new();
        for &(seq, data, offset) in pieces {
            file.write_all_at(data, offset).unwrap();
            let record = Record {
                seq,
                offset,
                len: data.len() as u64,
            };
            index.extend_from_slice(&record.encode());
        }
        let mut old = std::fs::read(index_path(&part)).unwrap_or_default();
        old.extend(index);
        std::fs::write(index_path(&part), old).unwrap();
    }

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("redio-join-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir.join("out.dat")
    }

    #[test]
    fn join_replays_pieces_in_operation_order_and_removes_the_parts() {
        let path = scratch("order");
        // Write 1 (seq 4): "aaaa" by replica 0 at 0, "bbbb" by replica 1 at 4.
        // Write 2 (seq 9): "XX" at 2 by replica 1 (overwrites).
        write_part(&path, 0, &[(4, b"aaaa", 0)]);
        write_part(&path, 1, &[(4, b"bbbb", 4), (9, b"XX", 2)]);
        assert_eq!(existing_parts(&path).unwrap().len(), 2);
        let joined = join(&path, Tail::Drop).unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"aaXXbbbb");
        assert_eq!((joined.parts, joined.records, joined.bytes), (2, 3, 10));
        assert!(existing_parts(&path).unwrap().is_empty());
        assert!(!index_path(&part_path(&path, 1)).exists());
        // Nothing left to join: a no-op.
        assert_eq!(join(&path, Tail::Drop).unwrap().records, 0);
        assert_eq!(std::fs::read(&path).unwrap(), b"aaXXbbbb");
    }

    #[test]
    fn a_damaged_index_is_refused_and_the_final_file_is_untouched() {
        let path = scratch("corrupt");
        std::fs::write(&path, b"precious").unwrap();
        write_part(&path, 0, &[(1, b"zz", 0)]);
        let index = index_path(&part_path(&path, 0));
        let mut bytes = std::fs::read(&index).unwrap();
        bytes.push(7);
        std::fs::write(&index, &bytes).unwrap();
        let err = join(&path, Tail::Drop).unwrap_err().to_string();
        assert!(err.contains("not a whole number"), "{err}");
        assert!(err.contains(".out.dat.redio-part0.idx"), "{err}");
        bytes.pop();
        // A record past the end of its part.
        bytes[8] = 200;
        std::fs::write(&index, &bytes).unwrap();
        let err = join(&path, Tail::Drop).unwrap_err().to_string();
        assert!(err.contains("record 0"), "{err}");
        assert_eq!(std::fs::read(&path).unwrap(), b"precious");
        assert!(
            part_path(&path, 0).exists(),
            "parts are kept for a later join"
        );
    }
}
