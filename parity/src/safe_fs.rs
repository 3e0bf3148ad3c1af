//! The safe-file layer: how redio opens what it reads and creates what it
//! writes, whoever else can write the directories involved.
//!
//! - Reads open with `O_NONBLOCK` (a FIFO does not block the open) and are
//!   refused unless `fstat` of the opened descriptor says regular file
//!   (no FIFO, device, socket or directory), and read at most a stated
//!   number of bytes ([`read_bounded`]).
//! - [`Links::Refuse`] adds `O_NOFOLLOW`: a symbolic link is refused
//!   instead of followed (the join's part files and indexes).
//! - Files redio creates are created relative to a directory descriptor
//!   ([`Dir`], `openat`) with `O_CREAT | O_EXCL | O_NOFOLLOW`: nothing that
//!   is already there, a planted symlink included, is opened or written
//!   through; renames and removals go through the same descriptor
//!   (`renameat`, `unlinkat`), and a rename replaces a link at the final
//!   name instead of writing through it.
//!
//! One code for the parity files, `redio join` and the configuration loader.

use std::ffi::{CString, OsStr};
use std::fs::File;
use std::io::{self, Read};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};

/// Whether opening a path may follow a symbolic link at its last component.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Links {
    /// Follow it (a configuration file the user names may be a link).
    Follow,
    /// Refuse it with an error naming the path.
    Refuse,
}

fn c_name(name: &OsStr) -> io::Result<CString> {
    CString::new(name.as_bytes()).map_err(|_| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{:?} contains a NUL byte", name),
        )
    })
}

/// What kind of file `meta` describes, for messages.
pub fn kind_of(meta: &std::fs::Metadata) -> &'static str {
    let t = meta.file_type();
    if t.is_file() {
        "a regular file"
    } else if t.is_dir() {
        "a directory"
    } else if t.is_symlink() {
        "a symbolic link"
    } else if t.is_fifo() {
        "a FIFO (named pipe)"
    } else if t.is_char_device() {
        "a character device"
    } else if t.is_block_device() {
        "a block device"
    } else if t.is_socket() {
        "a socket"
    } else {
        "not a regular file"
    }
}

/// The error for a path that is not a regular file.
fn not_regular(path: &Path, meta: &std::fs::Metadata) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidInput,
        format!(
            "{} is {}, not a regular file; redio reads and writes regular files only",
            path.display(),
            kind_of(meta)
        ),
    )
}

/// Turns `ELOOP` from `O_NOFOLLOW` into a message naming the link.
fn name_error(path: &Path, e: io::Error) -> io::Error {
    match e.raw_os_error() {
        Some(libc::ELOOP) => io::Error::new(
            io::ErrorKind::InvalidInput,
            format!(
                "{} is a symbolic link; redio does not follow links here (replace it with the file itself)",
                path.display()
            ),
        ),
        _ => io::Error::new(e.kind(), format!("{}: {e}", path.display())),
    }
}

/// Checks that `file` (opened from `path`) is a regular file and clears
/// `O_NONBLOCK` again.
fn regular_only(file: File, path: &Path) -> io::Result<File> {
    let meta = file.metadata().map_err(|e| name_error(path, e))?;
    if !meta.is_file() {
        return Err(not_regular(path, &meta));
    }
    // SAFETY: fcntl on a descriptor this function owns.
    unsafe {
        let fl = libc::fcntl(file.as_raw_fd(), libc::F_GETFL);
        if fl >= 0 {
            libc::fcntl(file.as_raw_fd(), libc::F_SETFL, fl & !libc::O_NONBLOCK);
        }
    }
    Ok(file)
}

/// Opens `path` for reading if it is a regular file: never blocks on a
/// FIFO, refuses devices, sockets and directories (and links with
/// [`Links::Refuse`]), each with a message naming the path.
pub fn open_regular(path: &Path, links: Links) -> io::Result<File> {
    let name = c_name(path.as_os_str())?;
    let mut flags = libc::O_RDONLY | libc::O_NONBLOCK | libc::O_CLOEXEC;
    if links == Links::Refuse {
        flags |= libc::O_NOFOLLOW;
    }
    // SAFETY: a NUL-terminated path; the descriptor is owned at once.
    let fd = unsafe { libc::open(name.as_ptr(), flags) };
    if fd < 0 {
        return Err(name_error(path, io::Error::last_os_error()));
    }
    // SAFETY: `fd` was just opened and is owned by nothing else.
    regular_only(unsafe { File::from_raw_fd(fd) }, path)
}

/// Reads the whole of `file` (opened from `path`), refusing more than
/// `max` bytes; `what` names the content in the message.
pub fn read_all_bounded(file: File, path: &Path, max: u64, what: &str) -> io::Result<Vec<u8>> {
    let too_big = |n: u64| {
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!(
                "{} is {n} bytes or more; a {what} may have at most {max} bytes",
                path.display()
            ),
        )
    };
    let size = file.metadata().map(|m| m.len()).unwrap_or(0);
    if size > max {
        return Err(too_big(size));
    }
    let mut out = Vec::with_capacity(size as usize);
    file.take(max + 1)
        .read_to_end(&mut out)
        .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", path.display())))?;
    if out.len() as u64 > max {
        return Err(too_big(out.len() as u64));
    }
    Ok(out)
}

/// [`open_regular`] and [`read_all_bounded`]: the whole content of a
/// regular file of at most `max` bytes.
pub fn read_bounded(path: &Path, links: Links, max: u64, what: &str) -> io::Result<Vec<u8>> {
    read_all_bounded(open_regular(path, links)?, path, max, what)
}

/// An open directory: files are created, renamed and removed relative to
/// it, so that a directory swapped for a link after the checks is not
/// written through.
#[derive(Debug)]
pub struct Dir {
    fd: OwnedFd,
    path: PathBuf,
}

impl Dir {
    /// Opens the directory at `path` (which the caller has checked).
    pub fn open(path: &Path) -> io::Result<Dir> {
        let shown = if path.as_os_str().is_empty() {
            Path::new(".")
        } else {
            path
        };
        let name = c_name(shown.as_os_str())?;
        // SAFETY: a NUL-terminated path; the descriptor is owned at once.
        let fd = unsafe {
            libc::open(
                name.as_ptr(),
                libc::O_RDONLY | libc::O_DIRECTORY | libc::O_CLOEXEC,
            )
        };
        if fd < 0 {
            let e = io::Error::last_os_error();
            return Err(io::Error::new(
                e.kind(),
                format!("directory {}: {e}", shown.display()),
            ));
        }
        Ok(Dir {
            // SAFETY: `fd` was just opened and is owned by nothing else.
            fd: unsafe { OwnedFd::from_raw_fd(fd) },
            path: shown.to_path_buf(),
        })
    }

    /// The directory's path, for messages and for readers that go by path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Creates the new file `name` in this directory for reading and
    /// writing with permission bits `mode` (under the umask): fails with `AlreadyExists` if
    /// anything (a file, a link, a FIFO) is there already.
    pub fn create_new(&self, name: &OsStr, mode: u32) -> io::Result<File> {
        let c = c_name(name)?;
        // SAFETY: a valid directory descriptor and a NUL-terminated name.
        let fd = unsafe {
            libc::openat(
                self.fd.as_raw_fd(),
                c.as_ptr(),
                libc::O_RDWR | libc::O_CREAT | libc::O_EXCL | libc::O_NOFOLLOW | libc::O_CLOEXEC,
                mode as libc::c_uint,
            )
        };
        if fd < 0 {
            let e = io::Error::last_os_error();
            return Err(io::Error::new(
                e.kind(),
                format!("{}: {e}", self.path.join(name).display()),
            ));
        }
        // SAFETY: `fd` was just opened and is owned by nothing else.
        Ok(unsafe { File::from_raw_fd(fd) })
    }

    /// Renames `from` to `to`, both in this directory (a link at `to` is
    /// replaced, not followed).
    pub fn rename(&self, from: &OsStr, to: &OsStr) -> io::Result<()> {
        let (f, t) = (c_name(from)?, c_name(to)?);
        let fd = self.fd.as_raw_fd();
        // SAFETY: a valid directory descriptor and NUL-terminated names.
        if unsafe { libc::renameat(fd, f.as_ptr(), fd, t.as_ptr()) } != 0 {
            let e = io::Error::last_os_error();
            return Err(io::Error::new(
                e.kind(),
                format!("rename to {}: {e}", self.path.join(to).display()),
            ));
        }
        Ok(())
    }

    /// Removes the file `name` of this directory (a link is removed, not
    /// its target).
    pub fn remove(&self, name: &OsStr) -> io::Result<()> {
        let c = c_name(name)?;
        // SAFETY: a valid directory descriptor and a NUL-terminated name.
        if unsafe { libc::unlinkat(self.fd.as_raw_fd(), c.as_ptr(), 0) } != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }

    /// fsyncs the directory (makes renames and creations durable).
    pub fn sync(&self) -> io::Result<()> {
        // SAFETY: a valid descriptor.
        if unsafe { libc::fsync(self.fd.as_raw_fd()) } != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(tag: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("redio-safe-fs-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn a_fifo_is_refused_without_blocking_and_devices_too() {
        let d = scratch("fifo");
        let fifo = d.join("pipe");
        let c = CString::new(fifo.as_os_str().as_bytes()).unwrap();
        // SAFETY: a NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let e = read_bounded(&fifo, Links::Follow, 100, "test file").unwrap_err();
        assert!(e.to_string().contains("FIFO"), "{e}");
        let e = read_bounded(Path::new("/dev/zero"), Links::Follow, 100, "x").unwrap_err();
        assert!(e.to_string().contains("character device"), "{e}");
        let e = read_bounded(&d, Links::Follow, 100, "x").unwrap_err();
        assert!(e.to_string().contains("directory"), "{e}");
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn links_are_refused_when_asked_and_sizes_are_bounded() {
        let d = scratch("link");
        std::fs::write(d.join("f"), b"0123456789").unwrap();
        std::os::unix::fs::symlink(d.join("f"), d.join("l")).unwrap();
        let e = read_bounded(&d.join("l"), Links::Refuse, 100, "x").unwrap_err();
        assert!(e.to_string().contains("symbolic link"), "{e}");
        assert_eq!(
            read_bounded(&d.join("l"), Links::Follow, 100, "x").unwrap(),
            b"0123456789"
        );
        let e = read_bounded(&d.join("f"), Links::Refuse, 9, "test file").unwrap_err();
        assert!(e.to_string().contains("at most 9 bytes"), "{e}");
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn create_new_never_opens_what_is_there() {
        let d = scratch("excl");
        let outside = d.join("outside");
        std::fs::write(&outside, b"secret").unwrap();
        std::os::unix::fs::symlink(&outside, d.join("planted")).unwrap();
        let dir = Dir::open(&d).unwrap();
        let e = dir.create_new(OsStr::new("planted"), 0o600).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::AlreadyExists, "{e}");
        assert_eq!(std::fs::read(&outside).unwrap(), b"secret");
        drop(dir.create_new(OsStr::new("new"), 0o600).unwrap());
        dir.rename(OsStr::new("new"), OsStr::new("planted"))
            .unwrap();
        assert!(std::fs::symlink_metadata(d.join("planted"))
            .unwrap()
            .is_file());
        assert_eq!(std::fs::read(&outside).unwrap(), b"secret");
        std::fs::remove_dir_all(&d).unwrap();
    }
}
