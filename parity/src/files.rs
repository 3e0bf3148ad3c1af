//! File-system helpers: safe paths under a root, stat and CRC of files,
//! and atomic writes (temporary file, fsync, rename, fsync of the
//! directory). Logical files are in [`crate::logical`].

use crate::format::{show_name, FileMeta};
use crate::safe_fs::{self, Dir, Links};
use redio_aligned::AlignedBuf;
use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io::{self, Write};
use std::os::fd::AsRawFd;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{FileExt, MetadataExt, PermissionsExt};
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, UNIX_EPOCH};

/// A path from a header that must not be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unsafe path `{path}` in a redundancy header: {why}")]
pub struct UnsafePath {
    /// The path as recorded, for messages ([`show_name`]).
    pub path: String,
    /// Why it is refused.
    pub why: String,
}

/// Checks that a recorded path is relative, non-empty and has no `..`,
/// `.` or root components. This is the security check done before any file
/// named in a header is read or written. The path is bytes (a Unix name
/// need not be UTF-8); `/` separates its components.
pub fn check_relative(path: &[u8]) -> Result<PathBuf, UnsafePath> {
    let refuse = |why: &str| {
        Err(UnsafePath {
            path: show_name(path),
            why: why.to_string(),
        })
    };
    if path.is_empty() {
        return refuse("it is empty");
    }
    if path.contains(&0) {
        return refuse("it contains a NUL byte");
    }
    let p = Path::new(OsStr::from_bytes(path));
    if p.is_absolute() {
        return refuse("it is absolute");
    }
    // Checked on the bytes: `Path::components` silently drops `.` and `//`.
    for c in path.split(|&b| b == b'/') {
        match c {
            b".." => return refuse("it contains `..`"),
            b"." => return refuse("it contains `.`"),
            b"" => return refuse("it has an empty component (`//` or a trailing `/`)"),
            _ => {}
        }
    }
    if p.components().any(|c| !matches!(c, Component::Normal(_))) {
        return refuse("it contains a root or prefix component");
    }
    Ok(p.to_path_buf())
}

/// Checks a redundancy-file name prefix: a part of a file name, never a
/// path (`--prefix ../../x` would put redundancy files outside every
/// directory).
pub fn check_prefix(prefix: &str) -> Result<(), String> {
    let why = if prefix.is_empty() {
        "it is empty"
    } else if prefix.contains('/') {
        "it contains `/`"
    } else if prefix.contains('\0') {
        "it contains a NUL byte"
    } else if prefix.starts_with('.') {
        "it starts with `.`"
    } else {
        return Ok(());
    };
    Err(format!(
        "prefix `{prefix}`: {why}; the prefix is the first part of the redundancy files' \
         names (e.g. `redio-parity`), not a path"
    ))
}

/// Checks every path a header records before anything is read or written
/// through it: each must be safe ([`check_relative`]), must not name a
/// redundancy or temporary file of redio (a data file recorded as
/// `<prefix>.s0.m1.rdp` would be rebuilt over member 1's redundancy file),
/// and, when members share a directory (`shared_root`), no two members may
/// record the same path.
pub fn check_header_paths(
    h: &crate::format::Header,
    prefix: &str,
    shared_root: bool,
) -> Result<(), UnsafePath> {
    let mut seen: std::collections::BTreeMap<&[u8], usize> = Default::default();
    for (m, meta) in h.members.iter().enumerate() {
        for f in &meta.files {
            check_relative(&f.path)?;
            let name = f.path.rsplit(|&b| b == b'/').next().unwrap_or_default();
            // redio's names are ASCII: a lossy view keeps them intact.
            if is_redio_file(&String::from_utf8_lossy(name), prefix) {
                return Err(UnsafePath {
                    path: f.shown(),
                    why: format!(
                        "member {m} records it as a data file, but it is the name of a redundancy \
                         or temporary file of redio (prefix `{prefix}`)"
                    ),
                });
            }
            if shared_root {
                if let Some(o) = seen.insert(&f.path, m).filter(|&o| o != m) {
                    return Err(UnsafePath {
                        path: f.shown(),
                        why: format!(
                            "members {o} and {m} both record it, and their files share one \
                             directory: give each rank its own (a --root without {{rank}}?), or \
                             the header is forged or mixed up"
                        ),
                    });
                }
            }
        }
    }
    Ok(())
}

/// Resolves a recorded path under `root`, refusing it if it is unsafe or if
/// an existing part of it is a symlink that leads outside the root, or if
/// the file itself is a symlink.
pub fn resolve_in_root(root: &Path, path: &[u8]) -> Result<PathBuf, UnsafePath> {
    let rel = check_relative(path)?;
    let full = root.join(&rel);
    let refuse = |why: String| UnsafePath {
        path: show_name(path),
        why,
    };
    if let Ok(meta) = std::fs::symlink_metadata(&full) {
        if meta.file_type().is_symlink() {
            return Err(refuse("the file is a symlink".into()));
        }
    }
    // The deepest existing ancestor must resolve inside the root.
    if let Ok(real_root) = root.canonicalize() {
        let mut existing = full.parent();
        while let Some(dir) = existing {
            if dir.exists() {
                let real = dir
                    .canonicalize()
                    .map_err(|e| refuse(format!("cannot resolve {}: {e}", dir.display())))?;
                if !real.starts_with(&real_root) {
                    return Err(refuse(format!(
                        "{} resolves to {} outside the root {} (symlink escape)",
                        dir.display(),
                        real.display(),
                        real_root.display()
                    )));
                }
                break;
            }
            existing = dir.parent();
        }
    }
    Ok(full)
}

/// CRC32 and length of a whole regular file, read in 1 MiB pieces (a
/// FIFO or device is refused, see [`crate::safe_fs`]).
pub fn crc_file(path: &Path) -> io::Result<(u64, u32)> {
    crc_of(&safe_fs::open_regular(path, Links::Follow)?)
}

/// CRC32 and length of an open file from its start to its end.
pub fn crc_of(f: &File) -> io::Result<(u64, u32)> {
    let mut h = crc32fast::Hasher::new();
    let mut buf = AlignedBuf::for_overwrite(1 << 20);
    let mut n = 0u64;
    loop {
        let got = f.read_at(&mut buf, n)?;
        if got == 0 {
            return Ok((n, h.finalize()));
        }
        h.update(&buf[..got]);
        n += got as u64;
    }
}

/// The metadata the header records for the file at `full`, named `rel`.
pub fn file_meta(full: &Path, rel: &[u8]) -> io::Result<FileMeta> {
    let mut meta = stat_meta(full, rel)?;
    (meta.size, meta.crc32) = crc_file(full)?;
    Ok(meta)
}

/// [`file_meta`] without reading the file: the size as `stat` gives it
/// and a CRC32 of 0, for a caller that computes the CRC while it reads the
/// file anyway ([`crate::logical_crc`]).
pub fn stat_meta(full: &Path, rel: &[u8]) -> io::Result<FileMeta> {
    let meta = std::fs::metadata(full)?;
    if !meta.is_file() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{} is not a regular file", full.display()),
        ));
    }
    Ok(FileMeta {
        path: rel.to_vec(),
        size: meta.len(),
        mode: meta.mode(),
        mtime_sec: meta.mtime(),
        mtime_nsec: meta.mtime_nsec() as u32,
        crc32: 0,
    })
}

/// A file written under a temporary name and renamed into place only by
/// [`AtomicFile::commit`]; dropped uncommitted, it is removed.
///
/// The temporary file is created with `O_CREAT | O_EXCL | O_NOFOLLOW`
/// relative to the destination's directory, opened once
/// ([`crate::safe_fs::Dir`]): a file or link planted at the temporary name
/// is never opened or written through (another name is taken), and the
/// rename goes through the same directory descriptor. It is held under an
/// exclusive `flock` while it exists, so that [`crate::stale::sweep`]
/// leaves it alone.
pub struct AtomicFile {
    file: File,
    dir: Dir,
    tmp: OsString,
    name: OsString,
    dest: PathBuf,
    done: bool,
    /// Bytes written since write-back was last started.
    unstarted: AtomicU64,
}

/// Write-back of a file being written is started every this many bytes:
/// the disk writes while later pieces arrive, and the fsync before the
/// rename waits for the tail only (issue 20: on disk it waited for every
/// byte at the end).
const WRITEBACK_EVERY: u64 = 8 << 20;

/// How many temporary names [`AtomicFile::create`] tries before it gives up.
const TMP_TRIES: u32 = 64;

impl AtomicFile {
    /// Creates the temporary file beside `dest` (its directory must exist).
    pub fn create(dest: &Path) -> io::Result<Self> {
        let name = dest.file_name().ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("{}: no file name", dest.display()),
            )
        })?;
        let dir = Dir::open(dest.parent().unwrap_or(Path::new("")))?;
        let pid = std::process::id();
        let mut last = None;
        for n in 0..TMP_TRIES {
            let tmp = OsString::from(format!(".{}.redio-tmp.{pid}.{n}", name.to_string_lossy()));
            // 0o666 under the umask, as any new file; data files get their
            // recorded mode from `set_meta`.
            match dir.create_new(&tmp, 0o666) {
                // The lock says "a live run writes this" to a later sweep
                // (crate::stale) until the file is renamed or removed.
                // Taken by a sweep between our create and our lock: the
                // sweep removes it, we take the next name. A file system
                // without flock: no lock, and no sweep removes the file.
                Ok(file) if !crate::stale::try_lock(&file).unwrap_or(true) => {
                    last = Some(io::Error::new(
                        io::ErrorKind::AlreadyExists,
                        "a sweep of stale temporary files holds it",
                    ));
                }
                Ok(file) => {
                    return Ok(AtomicFile {
                        file,
                        dir,
                        tmp,
                        name: name.to_os_string(),
                        dest: dest.to_path_buf(),
                        done: false,
                        unstarted: AtomicU64::new(0),
                    })
                }
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => last = Some(e),
                Err(e) => return Err(e),
            }
        }
        Err(io::Error::new(
            io::ErrorKind::AlreadyExists,
            format!(
                "{}: {TMP_TRIES} temporary names beside it are taken ({}); remove the stale \
                 `.{}.redio-tmp.*` files",
                dest.display(),
                last.map(|e| e.to_string()).unwrap_or_default(),
                name.to_string_lossy()
            ),
        ))
    }

    /// Writes `data` at `offset`.
    pub fn write_at(&self, data: &[u8], offset: u64) -> io::Result<()> {
        self.file.write_all_at(data, offset)?;
        self.wrote(data.len());
        Ok(())
    }

    /// Appends at the current end (for sequential writers).
    pub fn append(&mut self, data: &[u8]) -> io::Result<()> {
        self.file.write_all(data)?;
        self.wrote(data.len());
        Ok(())
    }

    /// Counts `n` bytes written; every [`WRITEBACK_EVERY`] starts the
    /// write-back of the file's dirty pages without waiting for it
    /// (`sync_file_range(SYNC_FILE_RANGE_WRITE)`: durability still comes
    /// from [`sync`](Self::sync)). A no-op on tmpfs.
    fn wrote(&self, n: usize) {
        let total = self.unstarted.fetch_add(n as u64, Ordering::Relaxed) + n as u64;
        if total < WRITEBACK_EVERY {
            return;
        }
        self.unstarted.store(0, Ordering::Relaxed);
        // SAFETY: a descriptor this value owns; offset 0 and length 0
        // mean the whole file. A failure only loses the head start.
        unsafe {
            libc::sync_file_range(self.file.as_raw_fd(), 0, 0, libc::SYNC_FILE_RANGE_WRITE);
        }
    }

    /// Sets the length (so a file whose tail is zeros has its full size).
    pub fn set_len(&self, len: u64) -> io::Result<()> {
        self.file.set_len(len)
    }

    /// The temporary file, open for reading and writing (to read back
    /// what was written).
    pub fn file(&self) -> &File {
        &self.file
    }

    /// The temporary path (for messages, and readers that go by path).
    pub fn tmp_path(&self) -> PathBuf {
        self.dir.path().join(&self.tmp)
    }

    /// The final path.
    pub fn dest(&self) -> &Path {
        &self.dest
    }

    /// Sets permission bits and modification time (before the rename, so
    /// the file appears complete with its metadata).
    pub fn set_meta(&self, mode: u32, mtime_sec: i64, mtime_nsec: u32) -> io::Result<()> {
        self.file
            .set_permissions(std::fs::Permissions::from_mode(mode & 0o7777))?;
        let t = if mtime_sec >= 0 {
            UNIX_EPOCH.checked_add(Duration::new(mtime_sec as u64, mtime_nsec.min(999_999_999)))
        } else {
            UNIX_EPOCH
                .checked_sub(Duration::from_secs(mtime_sec.unsigned_abs()))
                .and_then(|t| t.checked_add(Duration::from_nanos(mtime_nsec as u64)))
        };
        let t = t.ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::InvalidData,
                format!(
                    "{}: recorded modification time {mtime_sec}.{mtime_nsec:09} is out of range",
                    self.dest.display()
                ),
            )
        })?;
        self.file.set_modified(t)
    }

    /// fsyncs the data; call on every file before committing any of them.
    pub fn sync(&self) -> io::Result<()> {
        self.file.sync_all()
    }

    /// Renames into place and fsyncs the directory.
    pub fn commit(mut self) -> io::Result<()> {
        self.dir.rename(&self.tmp, &self.name)?;
        self.done = true;
        self.dir.sync()
    }
}

impl Drop for AtomicFile {
    fn drop(&mut self) {
        if !self.done {
            let _ = self.dir.remove(&self.tmp);
        }
    }
}

/// Creates the missing directories of `dir` below `root`, one at a time,
/// refusing to go through a symlink.
pub fn create_dirs_in_root(root: &Path, dir: &Path) -> io::Result<()> {
    std::fs::create_dir_all(root)?;
    let rel = dir.strip_prefix(root).unwrap_or(Path::new(""));
    let mut cur = root.to_path_buf();
    for c in rel.components() {
        cur.push(c);
        match std::fs::symlink_metadata(&cur) {
            Ok(m) if m.file_type().is_symlink() => {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidInput,
                    format!(
                        "{} is a symlink; refusing to create files through it",
                        cur.display()
                    ),
                ))
            }
            Ok(_) => {}
            Err(_) => std::fs::create_dir(&cur)?,
        }
    }
    Ok(())
}

/// The directories a rebuild made for the files it writes, removed again
/// when it is dropped (those left empty: its temporary files are gone,
/// nothing was renamed into them) unless [`MadeDirs::keep`] was called. A
/// refused or failed rebuild leaves the directories as it found them.
#[derive(Debug, Default)]
pub struct MadeDirs {
    /// In the order they were made (parents first).
    dirs: Vec<PathBuf>,
    keep: bool,
}

impl MadeDirs {
    /// [`create_dirs_in_root`], remembering what did not exist.
    pub fn create(&mut self, root: &Path, dir: &Path) -> io::Result<()> {
        let missing = Self::missing(dir);
        let made = create_dirs_in_root(root, dir);
        self.dirs.extend(missing);
        made
    }

    /// `create_dir_all` of a directory the user named (no root to stay
    /// in), remembering what did not exist.
    pub fn create_all(&mut self, dir: &Path) -> io::Result<()> {
        let missing = Self::missing(dir);
        let made = std::fs::create_dir_all(dir);
        self.dirs.extend(missing);
        made
    }

    /// Everything was renamed into place: the directories stay.
    pub fn keep(mut self) {
        self.keep = true;
    }

    /// `dir` and its ancestors that do not exist, parents first.
    fn missing(dir: &Path) -> Vec<PathBuf> {
        let mut missing = Vec::new();
        let mut at = Some(dir);
        while let Some(d) = at.filter(|d| std::fs::symlink_metadata(d).is_err()) {
            missing.push(d.to_path_buf());
            at = d.parent();
        }
        missing.reverse();
        missing
    }
}

impl Drop for MadeDirs {
    fn drop(&mut self) {
        if !self.keep {
            for d in self.dirs.iter().rev() {
                // Only an empty directory goes: never anything written.
                let _ = std::fs::remove_dir(d);
            }
        }
    }
}

/// Whether `name` is a redundancy file (`<prefix>…rdp`) or one of redio's
/// temporary files: never protected, so a later encode folds no old parity in.
pub fn is_redio_file(name: &str, prefix: &str) -> bool {
    (name.starts_with(prefix) && name.ends_with(".rdp")) || name.contains(".redio-tmp.")
}

/// Every regular file under `root` (recursively, not following symlinks),
/// relative to it and sorted, without redundancy and temporary files: what
/// `redio parity encode` protects. Paths are the file system's bytes.
pub fn list_protectable(root: &Path, prefix: &str) -> io::Result<Vec<Vec<u8>>> {
    fn walk(root: &Path, dir: &Path, prefix: &str, out: &mut Vec<Vec<u8>>) -> io::Result<()> {
        for entry in std::fs::read_dir(dir)? {
            let entry = entry?;
            let path = entry.path();
            let ty = entry.file_type()?;
            let name = entry.file_name().to_string_lossy().into_owned();
            if ty.is_dir() {
                walk(root, &path, prefix, out)?;
            } else if ty.is_file() && !is_redio_file(&name, prefix) {
                if let Ok(rel) = path.strip_prefix(root) {
                    out.push(rel.as_os_str().as_bytes().to_vec());
                }
            }
        }
        Ok(())
    }
    let mut out = Vec::new();
    walk(root, root, prefix, &mut out)
        .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", root.display())))?;
    out.sort();
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unsafe_paths_are_refused() {
        for p in [
            "",
            "/etc/passwd",
            "../x",
            "a/../../x",
            "./a",
            "a/./b",
            "a//b",
            "a/",
        ] {
            assert!(check_relative(p.as_bytes()).is_err(), "{p:?} accepted");
        }
        assert!(check_relative(b"a/b.dat").is_ok());
        assert!(
            check_relative(b"a/\xff.dat").is_ok(),
            "a name need not be UTF-8"
        );
    }

    #[test]
    fn a_prefix_is_a_name_part_not_a_path() {
        for bad in ["", "../../x", "a/b", ".x", "a\0b"] {
            assert!(check_prefix(bad).is_err(), "{bad:?} accepted");
        }
        assert!(check_prefix("redio-parity").is_ok());
    }

    #[test]
    fn an_atomic_file_never_writes_through_a_planted_link() {
        let dir = std::env::temp_dir().join(format!("redio-parity-plant-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("root")).unwrap();
        let outside = dir.join("outside.dat");
        std::fs::write(&outside, b"outside").unwrap();
        let dest = dir.join("root/ckpt.dat");
        // Links at every temporary name this process could use, the old
        // one (without a counter) included.
        let pid = std::process::id();
        let mut planted = vec![format!(".ckpt.dat.redio-tmp.{pid}")];
        planted.extend((0..4).map(|n| format!(".ckpt.dat.redio-tmp.{pid}.{n}")));
        for name in &planted {
            std::os::unix::fs::symlink(&outside, dir.join("root").join(name)).unwrap();
        }
        let f = AtomicFile::create(&dest).unwrap();
        f.write_at(b"rebuilt", 0).unwrap();
        f.sync().unwrap();
        f.commit().unwrap();
        assert_eq!(std::fs::read(&outside).unwrap(), b"outside");
        let meta = std::fs::symlink_metadata(&dest).unwrap();
        assert!(meta.is_file(), "the final file is a regular file");
        assert_eq!(std::fs::read(&dest).unwrap(), b"rebuilt");
        for name in &planted {
            let m = std::fs::symlink_metadata(dir.join("root").join(name)).unwrap();
            assert!(m.file_type().is_symlink(), "{name} left alone");
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn header_paths_that_collide_or_name_redio_files_are_refused() {
        let mut h = crate::format::tests::sample();
        assert!(check_header_paths(&h, "redio-parity", false).is_ok());
        h.members[0].files[0].path = b"redio-parity.s0.m1.rdp".to_vec();
        let e = check_header_paths(&h, "redio-parity", false).unwrap_err();
        assert!(e.why.contains("redundancy or temporary file"), "{e}");
        let mut h = crate::format::tests::sample();
        h.members[2].files[0].path = h.members[1].files[0].path.clone();
        assert!(check_header_paths(&h, "redio-parity", false).is_ok());
        let e = check_header_paths(&h, "redio-parity", true).unwrap_err();
        assert!(e.why.contains("members 1 and 2"), "{e}");
    }

    #[test]
    fn symlink_escape_is_refused() {
        let dir = std::env::temp_dir().join(format!("redio-parity-sym-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("root")).unwrap();
        std::os::unix::fs::symlink("/tmp", dir.join("root/out")).unwrap();
        let e = resolve_in_root(&dir.join("root"), b"out/x.dat").unwrap_err();
        assert!(e.why.contains("outside the root"), "{e}");
        std::fs::write(dir.join("root/ok.dat"), b"x").unwrap();
        assert!(resolve_in_root(&dir.join("root"), b"ok.dat").is_ok());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
