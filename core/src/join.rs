//! Distributed Separate Write: the part files the replicas write, and the
//! join that turns them into the final file.
//!
//! Under `distributed-separate`, replica `k` of logical rank `R` in run
//! `RUN` writes its pieces of every write into its own part file beside the
//! final file, `DIR/.NAME.redio-part<k>.<R>.<RUN>` (`RUN`: 16 hex digits,
//! chosen by world rank 0 at `MPI_Init`; see [`rank_part_path`]), at the
//! offsets they have in the final file (the part file is sparse), and
//! appends one [`Record`] per piece to the part's index,
//! `DIR/.NAME.redio-part<k>.<R>.<RUN>.idx`. Several ranks writing one file
//! thus never share a part, and a run never mistakes another run's parts
//! for its own. A part is *held* while its writer has it open: the writer
//! takes an open-file-description lock on it ([`lock_part`]), which the
//! kernel drops when the process ends.
//!
//! The joins:
//!
//! - the in-job join of one rank ([`join_rank_into`]) replays the records
//!   of that rank's parts in this run (all its replicas) in operation order
//!   (a later write to a range wins, as in the file it stands for), copying
//!   each piece into the final file with `copy_file_range(2)`, then syncs
//!   the final file and removes those parts. Other ranks' parts are never
//!   touched: their writers are still writing them;
//! - parts of earlier runs ([`settle_earlier_runs`], when a run opens the
//!   file; [`join`], `redio join`): every part not named by the current run
//!   is taken with its lock first, so a part still held by a running job
//!   (a live run) is left alone, and two ranks settling at once never join
//!   one part twice. Parts named `.NAME.redio-part<k>` ([`part_path`]) were
//!   left by a redio that named parts by replica only; they are joined the
//!   same way. Groups of parts (one rank of one run, or the old names) are
//!   replayed one after the other, the old names first, then by their
//!   parts' modification time; within a group, by operation order. (The
//!   order of overlapping pieces of different ranks is not recorded, as it
//!   is not defined for unsynchronised writes of different processes.)
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
//! - Parts and indexes are opened through [`redio_parity::safe_fs`] (or
//!   with the same checks, when a part is opened to be locked): a symbolic
//!   link, a FIFO or a device in their place is refused (a link to a file
//!   outside would copy that file into the output), and an index is read
//!   up to [`MAX_INDEX_LEN`] bytes.
//! - `redio join` ([`join`]) writes a new file beside the final one and
//!   renames it into place: a final path that is a link is refused, never
//!   written through, and the result ends at the last piece (a longer file
//!   left there by an earlier run keeps no stale tail) unless the caller
//!   keeps the tail ([`Tail::Keep`]: a job that joined in place before it
//!   stopped put it there). It refuses to run while a part is held. The
//!   joins inside a job write into the final file in place, as the
//!   application's own writes would: other ranks may have it open.

use redio_parity::files::AtomicFile;
use redio_parity::safe_fs::{self, Links};
use std::collections::BTreeMap;
use std::ffi::CString;
use std::fs::File;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{FileExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::os::unix::io::{AsRawFd, FromRawFd, RawFd};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

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

/// Who wrote a part: the group whose records are replayed together.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Writer {
    /// A part named by replica only, `.NAME.redio-part<k>`: left by a redio
    /// that did not name parts by rank and run.
    Legacy,
    /// One logical rank of one run.
    Rank {
        /// The run, chosen by world rank 0 at `MPI_Init`.
        run: u64,
        /// The logical rank.
        rank: u32,
    },
}

/// What a part file's name says about it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct PartName {
    /// The rank and run that wrote it.
    pub writer: Writer,
    /// The replica that wrote it.
    pub replica: u32,
}

impl PartName {
    /// The name's suffix after `.NAME.redio-part`: `<k>` for
    /// [`Writer::Legacy`], `<k>.<rank>.<run>` otherwise.
    pub fn suffix(&self) -> String {
        match self.writer {
            Writer::Legacy => self.replica.to_string(),
            Writer::Rank { run, rank } => format!("{}.{rank}.{run:016x}", self.replica),
        }
    }

    /// Parses what [`PartName::suffix`] makes; `None` for anything else
    /// (an index's `.idx` included).
    pub fn parse(suffix: &str) -> Option<PartName> {
        let number = |text: &str| -> Option<u32> {
            (!text.is_empty() && text.bytes().all(|b| b.is_ascii_digit()))
                .then(|| text.parse().ok())
                .flatten()
        };
        let mut fields = suffix.split('.');
        let replica = number(fields.next()?)?;
        let writer = match (fields.next(), fields.next(), fields.next()) {
            (None, _, _) => Writer::Legacy,
            (Some(rank), Some(run), None)
                if run.len() == 16 && run.bytes().all(|b| b.is_ascii_hexdigit()) =>
            {
                Writer::Rank {
                    run: u64::from_str_radix(run, 16).ok()?,
                    rank: number(rank)?,
                }
            }
            _ => return None,
        };
        Some(PartName { writer, replica })
    }

    /// The part file of this name for the final file `path`.
    pub fn path_for(&self, path: &Path) -> PathBuf {
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned());
        let part = format!(".{}{PART_MARK}{}", name.unwrap_or_default(), self.suffix());
        path.with_file_name(part)
    }
}

/// The part file of `replica` for the final file `path`, as a redio that
/// named parts by replica only wrote it (`.NAME.redio-part<k>`): still
/// joined as a part of an earlier run.
pub fn part_path(path: &Path, replica: u32) -> PathBuf {
    PartName {
        writer: Writer::Legacy,
        replica,
    }
    .path_for(path)
}

/// The part file of `replica` of logical rank `rank` in run `run` for the
/// final file `path`: `.NAME.redio-part<k>.<rank>.<run as 16 hex digits>`.
pub fn rank_part_path(path: &Path, run: u64, rank: u32, replica: u32) -> PathBuf {
    PartName {
        writer: Writer::Rank { run, rank },
        replica,
    }
    .path_for(path)
}

/// The index file of a part file.
pub fn index_path(part: &Path) -> PathBuf {
    let mut name = part.as_os_str().to_owned();
    name.push(INDEX_SUFFIX);
    PathBuf::from(name)
}

/// The part files that exist for `path`, sorted by name.
pub fn existing_parts(path: &Path) -> io::Result<Vec<(PartName, PathBuf)>> {
    let dir = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned());
    let prefix = format!(".{}{PART_MARK}", name.unwrap_or_default());
    let mut parts = Vec::new();
    for entry in std::fs::read_dir(&dir)? {
        let file_name = entry?.file_name().to_string_lossy().into_owned();
        let Some(suffix) = file_name.strip_prefix(&prefix) else {
            continue;
        };
        if let Some(part) = PartName::parse(suffix) {
            parts.push((part, dir.join(&file_name)));
        }
    }
    parts.sort();
    Ok(parts)
}

/// Takes the lock that marks a part as held (an open-file-description
/// write lock on the whole file: released when `fd` is closed or its
/// process ends), without waiting. `fd` must be open for writing.
///
/// `Ok(true)`: taken; `Ok(false)`: another open file holds it (a running
/// writer, or another join). A file system without locks answers
/// `Ok(true)`: nothing can be told there, and the part counts as free.
pub fn lock_part(fd: RawFd) -> io::Result<bool> {
    // SAFETY: an all-zero flock is a valid value; the fields are set below.
    let mut lock: libc::flock = unsafe { std::mem::zeroed() };
    lock.l_type = libc::F_WRLCK as libc::c_short;
    lock.l_whence = libc::SEEK_SET as libc::c_short;
    // SAFETY: fcntl on a descriptor of the caller with a valid flock.
    if unsafe { libc::fcntl(fd, libc::F_OFD_SETLK, &lock) } == 0 {
        return Ok(true);
    }
    let e = io::Error::last_os_error();
    match e.raw_os_error() {
        Some(libc::EAGAIN | libc::EACCES) => Ok(false),
        Some(libc::ENOLCK | libc::EINVAL | libc::EOPNOTSUPP | libc::ENOSYS) => Ok(true),
        _ => Err(e),
    }
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
    /// Parts of other runs left alone because a running job holds them
    /// ([`settle_earlier_runs`]).
    pub held: usize,
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

/// What [`settle_earlier_runs`] does with the parts of earlier runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Earlier {
    /// Join them into the final file, in place (the file is opened to go
    /// on with it).
    Join,
    /// Remove them (the file is opened with `O_TRUNC`).
    Drop,
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
    path: PathBuf,
    name: PartName,
    /// Open read-only, or read-write holding the part's lock when it was
    /// taken from an earlier run (kept until the part is removed).
    file: File,
    records: Vec<Record>,
    modified: SystemTime,
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

/// How a part is opened.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Take {
    /// Read-only, no lock: the current run's own parts, whose writers have
    /// synced them and wait for this join.
    Own,
    /// Read-write with the part's lock: another run's part, left alone
    /// while someone holds it.
    Locked,
}

/// Opens `path` read-write if it is a regular file (never a link, FIFO or
/// device), as `safe_fs::open_regular` does for reading.
fn open_regular_rw(path: &Path) -> io::Result<File> {
    let name = CString::new(path.as_os_str().as_bytes())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "a NUL byte in the path"))?;
    let flags = libc::O_RDWR | libc::O_NONBLOCK | libc::O_CLOEXEC | libc::O_NOFOLLOW;
    // SAFETY: a NUL-terminated path; the descriptor is owned at once.
    let fd = unsafe { libc::open(name.as_ptr(), flags) };
    if fd < 0 {
        let e = io::Error::last_os_error();
        return Err(if e.raw_os_error() == Some(libc::ELOOP) {
            io::Error::new(
                io::ErrorKind::InvalidInput,
                "is a symbolic link; redio never follows links to parts",
            )
        } else {
            e
        });
    }
    // SAFETY: `fd` was just opened and is owned by nothing else.
    let file = unsafe { File::from_raw_fd(fd) };
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("is {}, not a regular file", safe_fs::kind_of(&meta)),
        ));
    }
    // SAFETY: fcntl on a descriptor this function owns.
    unsafe {
        let fl = libc::fcntl(fd, libc::F_GETFL);
        if fl >= 0 {
            libc::fcntl(fd, libc::F_SETFL, fl & !libc::O_NONBLOCK);
        }
    }
    Ok(file)
}

/// Opens `part` and reads and checks its index. `Ok(None)`: taken with
/// [`Take::Locked`], and held by someone else or already joined and
/// removed by another join.
fn open_part(name: PartName, part: &Path, take: Take) -> Result<Option<Part>, JoinError> {
    let file = match take {
        Take::Own => safe_fs::open_regular(part, Links::Refuse).map_err(open_error(part))?,
        Take::Locked => {
            let file = match open_regular_rw(part) {
                Ok(file) => file,
                // Joined and removed by another join since the listing.
                Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
                Err(e) => {
                    return Err(match e.kind() {
                        io::ErrorKind::InvalidInput => JoinError::Refused {
                            path: part.to_path_buf(),
                            what: e.to_string(),
                        },
                        _ => io_error(part)(e),
                    })
                }
            };
            if !lock_part(file.as_raw_fd()).map_err(io_error(part))? {
                return Ok(None);
            }
            // Still the file of that name: a join that removed it while
            // this one waited for the lock leaves an unlinked file here.
            let opened = file.metadata().map_err(io_error(part))?;
            match std::fs::symlink_metadata(part) {
                Ok(now) if now.dev() == opened.dev() && now.ino() == opened.ino() => {}
                _ => return Ok(None),
            }
            file
        }
    };
    let meta = file.metadata().map_err(io_error(part))?;
    let size = meta.len();
    let modified = meta.modified().unwrap_or(SystemTime::UNIX_EPOCH);
    let index = index_path(part);
    let bytes = match safe_fs::read_bounded(&index, Links::Refuse, MAX_INDEX_LEN, "join index") {
        Ok(bytes) => bytes,
        // A part without index has nothing the join may trust.
        Err(e) if e.kind() == io::ErrorKind::NotFound => Vec::new(),
        Err(e) => return Err(open_error(&index)(e)),
    };
    let records =
        parse_index(&bytes, size).map_err(|what| JoinError::Corrupt { path: index, what })?;
    Ok(Some(Part {
        path: part.to_path_buf(),
        name,
        file,
        records,
        modified,
    }))
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

/// The existing parts of `path` that `select` accepts, opened with their
/// checked records; and how many were held by someone else.
fn open_parts(
    path: &Path,
    take: Take,
    select: impl Fn(&PartName) -> bool,
) -> Result<(Vec<Part>, usize), JoinError> {
    let mut parts = Vec::new();
    let mut held = 0;
    for (name, part) in existing_parts(path).map_err(io_error(path))? {
        if !select(&name) {
            continue;
        }
        match open_part(name, &part, take)? {
            Some(opened) => parts.push(opened),
            None => held += 1,
        }
    }
    Ok((parts, held))
}

/// The in-job join of logical rank `rank` in run `run`: joins that rank's
/// parts of `path` (all its replicas) into `target` (the final file, open
/// for writing), syncs it and removes them. Checks every index first.
/// Never touches another rank's or another run's parts.
pub fn join_rank_into(
    path: &Path,
    run: u64,
    rank: u32,
    target: &File,
) -> Result<Joined, JoinError> {
    let mine = Writer::Rank { run, rank };
    let (parts, _) = open_parts(path, Take::Own, |name| name.writer == mine)?;
    replay(path, &parts, target)
}

/// Before run `run` opens `path`: the parts of other runs (and those named
/// by replica only) that no running job holds are joined into `path` in
/// place ([`Earlier::Join`]; the file is created if it does not exist) or
/// removed ([`Earlier::Drop`]). Each is taken with its lock first, so two
/// ranks settling at once never join one part twice. Parts of `run`
/// itself are never touched; parts held by a running job are counted in
/// [`Joined::held`] and left alone.
pub fn settle_earlier_runs(path: &Path, run: u64, what: Earlier) -> Result<Joined, JoinError> {
    let (parts, held) = open_parts(
        path,
        Take::Locked,
        |name| !matches!(name.writer, Writer::Rank { run: r, .. } if r == run),
    )?;
    if parts.is_empty() {
        return Ok(Joined {
            held,
            ..Joined::default()
        });
    }
    let mut joined = match what {
        Earlier::Drop => {
            remove_parts(&parts)?;
            Joined {
                parts: parts.len(),
                ..Joined::default()
            }
        }
        Earlier::Join => {
            let target = std::fs::OpenOptions::new()
                .write(true)
                .create(true)
                .mode(0o666)
                .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC | libc::O_NONBLOCK)
                .open(path)
                .map_err(io_error(path))?;
            let meta = target.metadata().map_err(io_error(path))?;
            if !meta.is_file() {
                return Err(JoinError::Refused {
                    path: path.to_path_buf(),
                    what: format!("the final path is {}", safe_fs::kind_of(&meta)),
                });
            }
            replay(path, &parts, &target)?
        }
    };
    joined.held = held;
    Ok(joined)
}

/// Copies the pieces of `parts` into `target`, syncs it, and removes the
/// parts.
fn replay(path: &Path, parts: &[Part], target: &File) -> Result<Joined, JoinError> {
    let joined = replay_pieces(parts, target)?;
    target.sync_all().map_err(io_error(path))?;
    remove_parts(parts)?;
    Ok(joined)
}

/// Copies the pieces of `parts` into `target`: group by group (one rank
/// of one run; the parts named by replica only first, then the groups by
/// their parts' latest modification), each in operation order.
fn replay_pieces(parts: &[Part], target: &File) -> Result<Joined, JoinError> {
    let mut groups: BTreeMap<Writer, (SystemTime, Vec<usize>)> = BTreeMap::new();
    for (i, part) in parts.iter().enumerate() {
        let group = groups
            .entry(part.name.writer)
            .or_insert((SystemTime::UNIX_EPOCH, Vec::new()));
        group.0 = group.0.max(part.modified);
        group.1.push(i);
    }
    let mut groups: Vec<(Writer, (SystemTime, Vec<usize>))> = groups.into_iter().collect();
    groups.sort_by_key(|(writer, (modified, _))| (*writer != Writer::Legacy, *modified, *writer));
    let mut joined = Joined {
        parts: parts.len(),
        ..Joined::default()
    };
    for (_, (_, members)) in groups {
        let mut order: Vec<(Record, usize)> = members
            .iter()
            .flat_map(|&i| parts[i].records.iter().map(move |r| (*r, i)))
            .collect();
        order.sort();
        joined.records += order.len();
        for (record, i) in order {
            let through_user = copy_range(&parts[i].file, target, record.offset, record.len)
                .map_err(io_error(&parts[i].path))?;
            joined.bytes += record.len;
            joined.bytes_through_user_space += through_user;
        }
    }
    Ok(joined)
}

/// Removes the joined parts and their indexes.
fn remove_parts(parts: &[Part]) -> Result<(), JoinError> {
    for part in parts {
        for file in [index_path(&part.path), part.path.clone()] {
            match std::fs::remove_file(&file) {
                Err(e) if e.kind() != io::ErrorKind::NotFound => return Err(io_error(&file)(e)),
                _ => {}
            }
        }
    }
    Ok(())
}

/// `redio join`: builds the final file `path` from its existing content
/// and its parts (of any rank and run) in a new file beside it, and
/// renames that into place. A final path that is a link or not a regular
/// file is refused; so is a part still held by a running job (nothing is
/// written). With [`Tail::Drop`] the result ends at the last piece (or at
/// the existing file's end, if that comes first).
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
    let (parts, held) = open_parts(path, Take::Locked, |_| true)?;
    if held > 0 {
        return Err(JoinError::Refused {
            path: path.to_path_buf(),
            what: format!(
                "{held} part file(s) are held by a running job (it is still writing them); \
                 run redio join after the job ended"
            ),
        });
    }
    if parts.is_empty() {
        // Nothing to join: the final file stays as it is.
        return Ok(Joined::default());
    }
    let end = parts
        .iter()
        .flat_map(|p| p.records.iter().map(|r| r.offset + r.len))
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
        write_named(&part_path(path, replica), pieces);
    }

    fn write_named(part: &Path, pieces: &[(u64, &[u8], u64)]) {
        let part = part.to_path_buf();
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

    #[test]
    fn part_names_say_replica_rank_and_run() {
        let path = Path::new("/d/out.dat");
        let part = rank_part_path(path, 0xab, 3, 1);
        assert_eq!(
            part,
            Path::new("/d/.out.dat.redio-part1.3.00000000000000ab")
        );
        let name = PartName {
            writer: Writer::Rank { run: 0xab, rank: 3 },
            replica: 1,
        };
        assert_eq!(PartName::parse(&name.suffix()), Some(name));
        assert_eq!(
            PartName::parse("2"),
            Some(PartName {
                writer: Writer::Legacy,
                replica: 2
            })
        );
        for not_a_part in [
            "",
            "2.idx",
            "1.3.00000000000000ab.idx",
            "1.3.ab",
            "1.x.00000000000000ab",
            "+1",
            "1.3.00000000000000ab.7",
        ] {
            assert_eq!(PartName::parse(not_a_part), None, "{not_a_part:?}");
        }
    }

    #[test]
    fn a_rank_joins_only_its_own_parts_of_its_own_run() {
        let path = scratch("ranks");
        let (run, other_run) = (7, 8);
        // Rank 0 (replicas 0 and 1) and rank 1 of this run, and a part of
        // another run, all in one file.
        write_named(&rank_part_path(&path, run, 0, 0), &[(1, b"aa", 0)]);
        write_named(&rank_part_path(&path, run, 0, 1), &[(1, b"bb", 2)]);
        write_named(&rank_part_path(&path, run, 1, 0), &[(1, b"cc", 4)]);
        write_named(&rank_part_path(&path, other_run, 0, 0), &[(1, b"dd", 6)]);
        let target = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .open(&path)
            .unwrap();
        let joined = join_rank_into(&path, run, 0, &target).unwrap();
        assert_eq!((joined.parts, joined.records, joined.bytes), (2, 2, 4));
        assert_eq!(std::fs::read(&path).unwrap(), b"aabb");
        let left: Vec<_> = existing_parts(&path)
            .unwrap()
            .into_iter()
            .map(|(name, _)| name.writer)
            .collect();
        assert_eq!(
            left,
            [
                Writer::Rank { run, rank: 1 },
                Writer::Rank {
                    run: other_run,
                    rank: 0
                }
            ]
        );
    }

    #[test]
    fn earlier_runs_are_joined_in_place_unless_held_and_never_the_current_run() {
        let path = scratch("earlier");
        std::fs::write(&path, b"........").unwrap();
        let run = 42;
        write_part(&path, 0, &[(5, b"LL", 0)]);
        write_named(&rank_part_path(&path, 1, 0, 0), &[(1, b"aa", 2)]);
        write_named(&rank_part_path(&path, 2, 0, 0), &[(1, b"bb", 4)]);
        write_named(&rank_part_path(&path, run, 0, 0), &[(1, b"mine", 4)]);
        // Run 2 is still running: its writer holds the part's lock.
        let held = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(rank_part_path(&path, 2, 0, 0))
            .unwrap();
        assert!(lock_part(held.as_raw_fd()).unwrap());
        let inode_before = std::fs::metadata(&path).unwrap().ino();
        let joined = settle_earlier_runs(&path, run, Earlier::Join).unwrap();
        assert_eq!((joined.parts, joined.held, joined.bytes), (2, 1, 4));
        assert_eq!(std::fs::read(&path).unwrap(), b"LLaa....");
        assert_eq!(
            std::fs::metadata(&path).unwrap().ino(),
            inode_before,
            "joined in place: other ranks may have the file open"
        );
        // `redio join` refuses while a part is held, and writes nothing.
        let err = join(&path, Tail::Drop).unwrap_err().to_string();
        assert!(err.contains("held by a running job"), "{err}");
        assert_eq!(std::fs::read(&path).unwrap(), b"LLaa....");
        drop(held);
        // Under O_TRUNC, run 2's part (now free) is dropped; ours stays.
        let dropped = settle_earlier_runs(&path, run, Earlier::Drop).unwrap();
        assert_eq!((dropped.parts, dropped.held), (1, 0));
        let left: Vec<_> = existing_parts(&path).unwrap();
        assert_eq!(left.len(), 1);
        assert_eq!(left[0].0.writer, Writer::Rank { run, rank: 0 });
    }
}
