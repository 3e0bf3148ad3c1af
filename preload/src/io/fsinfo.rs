//! `statfs` and `statvfs`: what file system holds a path.
//!
//! MPI-IO libraries ask before they open a file (ROMIO picks its driver by
//! the file system's type), so the path must be the one the open will use:
//! `remap` applies. The answer is each replica's own, also on shared paths:
//! it describes the file system, not the file, and no replica's answer
//! changes what another sees.
//!
//! # Safety (every handler)
//! A handler is called only by its hook in [`crate::exports::hooks`], with the
//! arguments the C caller passed: its contract is that of the C function.

#![allow(clippy::missing_safety_doc)]

use crate::io::dispatch::with_path;
use libc::{c_char, c_int};

/// `statfs`, `statfs64`, `statvfs`, `statvfs64`, on the remapped path.
pub unsafe fn statfs<T>(
    real: unsafe fn(*const c_char, *mut T) -> c_int,
    path: *const c_char,
    buf: *mut T,
) -> c_int {
    with_path(
        "statfs",
        libc::AT_FDCWD,
        path,
        |p| real(p, buf),
        |resolved| real(resolved.c_path.as_ptr(), buf),
    )
}
