//! Calls that cannot be coordinated, refused on managed files with
//! `ENOTSUP` (and a log line naming the file); passed through otherwise.
//!
//! `mmap` turns file I/O into memory accesses redio cannot see;
//! `sendfile`, `copy_file_range` and `splice` move data inside the kernel.
//! (`io_uring` has no C library entry point to hook: it is not coordinated
//! either; see docs/interposition.md.)
//!
//! # Safety (every handler)
//! A handler is called only by its hook in [`crate::exports::hooks`], with the
//! arguments the C caller passed: its contract is that of the C function.

#![allow(clippy::missing_safety_doc)]

use crate::coord::table;
use crate::io::route;
use crate::sys::errno::set_errno;
use libc::{c_int, c_uint, c_void, off64_t, size_t, ssize_t};

/// The managed file among `fds`, if any, while coordination is on.
fn managed_among(fds: &[c_int]) -> Option<String> {
    if route::enter().is_err() {
        return None;
    }
    fds.iter()
        .find_map(|&fd| table::get(fd).map(|file| file.path.display().to_string()))
}

fn refuse(call: &str, path: &str) {
    crate::log!(
        Error,
        "{call} on {path}: not supported on a coordinated shared file (ENOTSUP); use read/write"
    );
    set_errno(libc::ENOTSUP);
}

/// `mmap`, `mmap64`.
pub unsafe fn mmap(
    real: unsafe fn(*mut c_void, size_t, c_int, c_int, c_int, i64) -> *mut c_void,
    addr: *mut c_void,
    len: size_t,
    prot: c_int,
    flags: c_int,
    fd: c_int,
    offset: i64,
) -> *mut c_void {
    if fd >= 0 && flags & libc::MAP_ANONYMOUS == 0 {
        if let Some(path) = managed_among(&[fd]) {
            refuse("mmap", &path);
            return libc::MAP_FAILED;
        }
    }
    real(addr, len, prot, flags, fd, offset)
}

/// `sendfile`, `sendfile64`.
pub unsafe fn sendfile<T>(
    real: unsafe fn(c_int, c_int, *mut T, size_t) -> ssize_t,
    out_fd: c_int,
    in_fd: c_int,
    offset: *mut T,
    count: size_t,
) -> ssize_t {
    if let Some(path) = managed_among(&[out_fd, in_fd]) {
        refuse("sendfile", &path);
        return -1;
    }
    real(out_fd, in_fd, offset, count)
}

/// The signature `copy_file_range` and `splice` share.
type Transfer = unsafe fn(c_int, *mut off64_t, c_int, *mut off64_t, size_t, c_uint) -> ssize_t;

/// `copy_file_range` and `splice`: refused when either end is managed.
#[allow(clippy::too_many_arguments)]
unsafe fn transfer(
    call: &str,
    real: Transfer,
    fd_in: c_int,
    off_in: *mut off64_t,
    fd_out: c_int,
    off_out: *mut off64_t,
    len: size_t,
    flags: c_uint,
) -> ssize_t {
    if let Some(path) = managed_among(&[fd_in, fd_out]) {
        refuse(call, &path);
        return -1;
    }
    real(fd_in, off_in, fd_out, off_out, len, flags)
}

/// `copy_file_range`.
pub unsafe fn copy_file_range(
    real: Transfer,
    fd_in: c_int,
    off_in: *mut off64_t,
    fd_out: c_int,
    off_out: *mut off64_t,
    len: size_t,
    flags: c_uint,
) -> ssize_t {
    transfer(
        "copy_file_range",
        real,
        fd_in,
        off_in,
        fd_out,
        off_out,
        len,
        flags,
    )
}

/// `splice`.
pub unsafe fn splice(
    real: Transfer,
    fd_in: c_int,
    off_in: *mut off64_t,
    fd_out: c_int,
    off_out: *mut off64_t,
    len: size_t,
    flags: c_uint,
) -> ssize_t {
    transfer("splice", real, fd_in, off_in, fd_out, off_out, len, flags)
}
