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
