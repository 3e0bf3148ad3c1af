//! File access with raw system calls, for redio's own bookkeeping files
//! (finished markers, heartbeats, `/proc`): no interposed hook sees them,
//! so they are never coordinated, counted or redirected.
//!
//! Paths are `&str` without a NUL; each call appends one.

use std::ffi::{CStr, CString};

fn c_path(path: &str) -> Option<CString> {
    CString::new(path).ok()
}

/// Creates directory `path` (mode 0700); an existing one is fine.
pub fn mkdir(path: &str) {
    let Some(path) = c_path(path) else { return };
    // SAFETY: a NUL-terminated path.
    unsafe { libc::syscall(libc::SYS_mkdirat, libc::AT_FDCWD, path.as_ptr(), 0o700) };
}

/// Replaces the contents of `path` with `bytes` (created with mode 0600),
/// closing it at once so that NFS clients on other nodes see the new
/// contents at their next open. Returns whether every byte was written.
pub fn write(path: &str, bytes: &[u8]) -> bool {
    c_path(path).is_some_and(|path| write_with(&path, libc::O_TRUNC, bytes))
}

/// Opens `path` for writing (created with mode 0600) with the extra
/// `flags` (`O_TRUNC`, `O_APPEND`), writes `bytes` with one `write` and
/// closes it. Allocates nothing: async-signal-safe. Returns whether every
/// byte was written.
pub fn write_with(path: &CStr, flags: libc::c_int, bytes: &[u8]) -> bool {
    // SAFETY: a NUL-terminated path; the descriptor is closed below.
    let fd = unsafe {
        libc::syscall(
            libc::SYS_openat,
            libc::AT_FDCWD,
            path.as_ptr(),
            libc::O_WRONLY | libc::O_CREAT | libc::O_CLOEXEC | flags,
            0o600,
        )
    };
    if fd < 0 {
        return false;
    }
    // SAFETY: writing from a live slice of its length; our own descriptor.
    let written = unsafe { libc::syscall(libc::SYS_write, fd, bytes.as_ptr(), bytes.len()) };
    unsafe { libc::syscall(libc::SYS_close, fd) };
    usize::try_from(written).is_ok_and(|n| n == bytes.len())
}

/// Reads up to `buf.len()` bytes of `path`; `None` when it cannot be read.
pub fn read(path: &str, buf: &mut [u8]) -> Option<usize> {
    let path = c_path(path)?;
    // SAFETY: a NUL-terminated path; the descriptor is closed below.
    let fd = unsafe {
        libc::syscall(
            libc::SYS_openat,
            libc::AT_FDCWD,
            path.as_ptr(),
            libc::O_RDONLY | libc::O_CLOEXEC,
        )
    };
    if fd < 0 {
        return None;
    }
    // SAFETY: reading into a live buffer of its length; our own descriptor.
    let n = unsafe { libc::syscall(libc::SYS_read, fd, buf.as_mut_ptr(), buf.len()) };
    unsafe { libc::syscall(libc::SYS_close, fd) };
    usize::try_from(n).ok()
}

/// Whether `path` exists.
pub fn exists(path: &str) -> bool {
    let Some(path) = c_path(path) else {
        return false;
    };
    // SAFETY: a NUL-terminated path.
    unsafe {
        libc::syscall(
            libc::SYS_faccessat,
            libc::AT_FDCWD,
            path.as_ptr(),
            libc::F_OK,
        ) == 0
    }
}

/// What [`real_path`] found.
pub enum RealPath {
    /// The path exists; its absolute name without symlinks, `.` or `..`.
    Found(std::path::PathBuf),
    /// The path does not resolve (missing, a dangling symlink, a file
    /// where a directory was expected, no permission).
    Missing,
    /// The kernel could not name it (no `/proc`): ask `realpath(3)`.
    Unknown,
}

/// The kernel's name of an existing `path`: one path walk (`open` with
/// `O_PATH`, which reads and opens nothing) and the name of that
/// descriptor in `/proc/self/fd`. `realpath(3)` instead calls `readlink`
/// on every prefix, each a walk from the root: 5 to 6 system calls per
/// path on the benchmark's files (docs/benchmarks.md, "Node-local files
/// of co-located replicas").
pub fn real_path(path: &CStr) -> RealPath {
    use std::os::unix::ffi::OsStrExt;
    // SAFETY: a NUL-terminated path; the descriptor is closed below.
    let fd = unsafe {
        libc::syscall(
            libc::SYS_openat,
            libc::AT_FDCWD,
            path.as_ptr(),
            libc::O_PATH | libc::O_CLOEXEC,
        )
    };
    if fd < 0 {
        return RealPath::Missing;
    }
    let mut link = [0u8; 40];
    let link = fd_link(&mut link, fd);
    let mut name = vec![0u8; libc::PATH_MAX as usize];
    // SAFETY: a NUL-terminated link name and a live buffer of its length.
    let n = unsafe {
        libc::syscall(
            libc::SYS_readlinkat,
            libc::AT_FDCWD,
            link.as_ptr(),
            name.as_mut_ptr(),
            name.len(),
        )
    };
    // SAFETY: our own descriptor.
    unsafe { libc::syscall(libc::SYS_close, fd) };
    let Ok(n) = usize::try_from(n) else {
        return RealPath::Unknown;
    };
    name.truncate(n);
    // A name the process cannot reach ("(unreachable)/x", outside its
    // root) or a full buffer (possibly cut) is left to realpath(3).
    if n == 0 || n == libc::PATH_MAX as usize || name[0] != b'/' {
        return RealPath::Unknown;
    }
    RealPath::Found(std::ffi::OsStr::from_bytes(&name).into())
}

/// `/proc/self/fd/<fd>` with its NUL, in `buf`, without allocating.
fn fd_link(buf: &mut [u8; 40], fd: libc::c_long) -> &CStr {
    const PREFIX: &[u8] = b"/proc/self/fd/";
    buf[..PREFIX.len()].copy_from_slice(PREFIX);
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    let mut value = fd.unsigned_abs();
    loop {
        at -= 1;
        digits[at] = b'0' + (value % 10) as u8;
        value /= 10;
        if value == 0 {
            break;
        }
    }
    let digits = &digits[at..];
    let end = PREFIX.len() + digits.len();
    buf[PREFIX.len()..end].copy_from_slice(digits);
    buf[end] = 0;
    CStr::from_bytes_with_nul(&buf[..=end]).unwrap_or(c"/proc/self/fd/")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::CString;
    use std::os::unix::ffi::OsStrExt;

    fn c(path: &std::path::Path) -> CString {
        CString::new(path.as_os_str().as_bytes()).unwrap()
    }

    #[test]
    fn the_kernels_name_of_a_path_is_realpaths() {
        let dir = std::env::temp_dir().join(format!("redio-rawfs-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("real/sub")).unwrap();
        std::fs::write(dir.join("real/sub/file"), b"x").unwrap();
        std::os::unix::fs::symlink(dir.join("real"), dir.join("link")).unwrap();
        std::os::unix::fs::symlink("sub/file", dir.join("real/relative")).unwrap();
        std::os::unix::fs::symlink(dir.join("nowhere"), dir.join("dangling")).unwrap();
        for name in [
            "link/sub/file",
            "link/./sub/../sub/file",
            "link/relative",
            "link",
            "real/sub",
        ] {
            let path = dir.join(name);
            match real_path(&c(&path)) {
                RealPath::Found(found) => {
                    assert_eq!(found, std::fs::canonicalize(&path).unwrap(), "{name}")
                }
                _ => panic!("{name}: not found"),
            }
        }
        for name in [
            "missing",
            "link/missing/file",
            "dangling",
            "real/sub/file/x",
        ] {
            assert!(
                matches!(real_path(&c(&dir.join(name))), RealPath::Missing),
                "{name}"
            );
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_descriptors_link_is_named_without_allocating() {
        let mut buf = [0u8; 40];
        assert_eq!(fd_link(&mut buf, 0), c"/proc/self/fd/0");
        assert_eq!(fd_link(&mut buf, 1234567), c"/proc/self/fd/1234567");
    }
}
