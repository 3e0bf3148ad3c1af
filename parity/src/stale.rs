//! Temporary files of runs that died: found and removed by the next
//! encode or rebuild, never those of a run still going (issue 44: a
//! replica killed in the protect step left ~12 MB `.rdp.redio-tmp` files
//! in every rank's directory, a killed rebuild full-size ones).
//!
//! How a live run is told from a dead one: every [`crate::files::AtomicFile`]
//! holds an exclusive `flock` on its temporary file for as long as it
//! exists. The kernel drops the lock when the holder dies, whatever killed
//! it, and a lock is no process id: nothing is confused by a reused pid,
//! and on NFS the lock is seen from every node. So a temporary whose lock
//! this process can take belongs to nobody alive. A run that is creating
//! its temporary and finds the lock taken (a sweep got there between its
//! create and its lock) leaves that name to the sweep and takes another.

use std::ffi::OsStr;
use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

/// The marker in every temporary name: `.<name>.redio-tmp.<pid>.<n>`.
pub const TMP_MARKER: &str = ".redio-tmp.";

/// A temporary file of a dead run, removed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Removed {
    /// Where it was.
    pub path: PathBuf,
    /// Its size.
    pub bytes: u64,
}

impl std::fmt::Display for Removed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "removed {} ({} bytes), a temporary file of a run that is no longer running",
            self.path.display(),
            self.bytes
        )
    }
}

/// Whether `name` is one of redio's temporary names, exactly
/// (`.<name>.redio-tmp.<digits>.<digits>`, or `….<digits>` from older
/// versions): a data file that merely contains the marker is not one.
pub fn is_temporary_name(name: &OsStr) -> bool {
    let b = name.as_bytes();
    let marker = TMP_MARKER.as_bytes();
    let Some(at) = b.windows(marker.len()).rposition(|w| w == marker) else {
        return false;
    };
    let tail = &b[at + marker.len()..];
    let digits = |s: &[u8]| !s.is_empty() && s.iter().all(u8::is_ascii_digit);
    let numbered = match tail.iter().position(|&c| c == b'.') {
        Some(dot) => digits(&tail[..dot]) && digits(&tail[dot + 1..]),
        None => digits(tail),
    };
    b.first() == Some(&b'.') && at > 1 && numbered
}

/// Takes the exclusive lock on `file` without waiting: `Ok(true)` taken,
/// `Ok(false)` someone holds it.
pub fn try_lock(file: &File) -> io::Result<bool> {
    // SAFETY: a descriptor `file` owns.
    if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } == 0 {
        return Ok(true);
    }
    let e = io::Error::last_os_error();
    match e.raw_os_error() {
        Some(libc::EWOULDBLOCK) => Ok(false),
        _ => Err(e),
    }
}

/// Removes the temporary files of dead runs in `dir` (and below it if
/// `recursive`, not following symlinks). One that is in use, that cannot
/// be locked (a file system without `flock`: nobody can tell) or that is
/// not a regular file is left alone. A directory that cannot be read
/// yields nothing: what uses it reports that.
pub fn sweep(dir: &Path, recursive: bool) -> Vec<Removed> {
    let mut out = Vec::new();
    walk(dir, recursive, &mut out);
    out
}

fn walk(dir: &Path, recursive: bool, out: &mut Vec<Removed>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let Ok(kind) = e.file_type() else { continue };
        if kind.is_dir() && recursive {
            walk(&e.path(), recursive, out);
        } else if kind.is_file() && is_temporary_name(&e.file_name()) {
            if let Some(r) = remove_if_dead(&e.path()) {
                out.push(r);
            }
        }
    }
}

/// Removes `path` if no live run holds its lock: the lock is taken first
/// and held through the removal, and the name must still be the file
/// locked.
fn remove_if_dead(path: &Path) -> Option<Removed> {
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        // No FIFO can block the open, no link is followed.
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)
        .ok()?;
    let meta = file.metadata().ok()?;
    if !meta.is_file() || !try_lock(&file).ok()? {
        return None;
    }
    let now = std::fs::symlink_metadata(path).ok()?;
    if (now.dev(), now.ino()) != (meta.dev(), meta.ino()) {
        return None;
    }
    std::fs::remove_file(path).ok()?;
    Some(Removed {
        path: path.to_path_buf(),
        bytes: meta.len(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::files::AtomicFile;

    fn scratch(tag: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("redio-stale-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(d.join("sub")).unwrap();
        d
    }

    #[test]
    fn temporary_names_are_matched_exactly() {
        for yes in [
            ".a.dat.redio-tmp.12.0",
            ".x.redio-tmp.7",
            ".r.rdp.redio-tmp.4194303.63",
        ] {
            assert!(is_temporary_name(OsStr::new(yes)), "{yes}");
        }
        for no in [
            "a.dat.redio-tmp.12.0",
            ".a.dat.redio-tmp.x",
            ".a.redio-tmp.1.2.3",
            "my.redio-tmp.notes",
            ".redio-tmp.1.0",
            ".a.redio-tmp.",
        ] {
            assert!(!is_temporary_name(OsStr::new(no)), "{no}");
        }
    }

    #[test]
    fn a_dead_runs_temporary_goes_and_a_live_ones_stays() {
        let d = scratch("live");
        // Live: an AtomicFile of this process, still being written.
        let live = AtomicFile::create(&d.join("sub/ckpt.dat")).unwrap();
        live.write_at(b"in progress", 0).unwrap();
        // Dead: the same kind of name, nobody holding it.
        let dead = d.join(".redio-parity.s0.m1.rdp.redio-tmp.4194303.0");
        std::fs::write(&dead, vec![7u8; 4096]).unwrap();
        // Not one of ours, though the marker is in its name.
        let user = d.join("notes.redio-tmp.txt");
        std::fs::write(&user, b"mine").unwrap();
        let removed = sweep(&d, true);
        assert_eq!(
            removed,
            vec![Removed {
                path: dead.clone(),
                bytes: 4096
            }]
        );
        assert!(!dead.exists());
        assert!(live.tmp_path().exists(), "a live run's temporary is left");
        assert!(user.exists());
        live.sync().unwrap();
        live.commit().unwrap();
        assert_eq!(
            std::fs::read(d.join("sub/ckpt.dat")).unwrap(),
            b"in progress"
        );
        std::fs::remove_dir_all(&d).unwrap();
    }
}
