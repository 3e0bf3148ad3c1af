//! Routing shared by the hook handlers: a call on a descriptor
//! ([`on_file`], [`on_managed`]) or on a path ([`with_path`]) is either
//! handed to coordination or passed through to the real function, with the
//! reason logged ([`crate::io::route`]).

use crate::coord::file::SharedFile;
use crate::coord::round::Outcome;
use crate::coord::table;
use crate::io::paths;
use crate::io::paths::Resolved;
use crate::io::route;
use crate::io::route::Bypass;
use crate::sys::errno::set_errno;
use libc::{c_char, c_int};
use std::ffi::CStr;

/// Runs `op` on the managed file behind `fd`, or passes the call through.
///
/// After `MPI_Finalize` (a stream flushed at exit) the file is still served,
/// by this replica alone ([`SharedFile`] knows when it cannot coordinate).
pub fn on_file<T>(
    call: &str,
    fd: c_int,
    op: impl FnOnce(&SharedFile) -> T,
    real: impl FnOnce() -> T,
) -> T {
    let Some(file) = table::get(fd) else {
        route::log_bypass(call, Bypass::Unmanaged, &fd);
        return real();
    };
    match route::enter() {
        Ok(_entered) => op(&file),
        Err(Bypass::NotInitialised) => op(&file),
        Err(reason) => {
            route::log_bypass(call, reason, &fd);
            real()
        }
    }
}

/// Routes a call on a path: `pass` gets the path to use for the real call
/// (remapped per replica when `remap` applies); `managed` gets the resolved
/// shared path. On a node-local path of co-located replicas, `managed`
/// runs first, and `pass` after it when the replicas turn out to name
/// different paths (`managed` then did nothing: its first coordinated
/// operation failed on every replica before any call was made).
///
/// # Safety
/// `path` is null or a NUL-terminated string.
pub unsafe fn with_path<R>(
    call: &str,
    dirfd: c_int,
    path: *const c_char,
    pass: impl FnOnce(*const c_char) -> R,
    managed: impl FnOnce(&Resolved) -> R,
) -> R {
    if path.is_null() {
        return pass(path);
    }
    let raw = CStr::from_ptr(path);
    let _entered = match route::enter() {
        Ok(entered) => entered,
        Err(reason) => {
            route::log_bypass(call, reason, &raw.to_string_lossy());
            return pass(path);
        }
    };
    let resolved = paths::resolve_tentatively(dirfd, raw);
    match resolved.bypass() {
        None if resolved.tentative => {
            let (result, apart) = crate::coord::round::tentatively(|| managed(&resolved));
            if !apart {
                return result;
            }
            // Each co-located replica named its own file: as in a plain run.
            route::log_bypass(call, Bypass::NodeLocal, &resolved.path.display());
            pass(resolved.for_real_call(path))
        }
        None => managed(&resolved),
        Some(reason) => {
            route::log_bypass(call, reason, &resolved.path.display());
            pass(resolved.for_real_call(path))
        }
    }
}

/// `0`, or `-1` with errno set.
pub fn int_result(outcome: Outcome<()>) -> c_int {
    match outcome {
        Ok(()) => 0,
        Err(errno) => {
            set_errno(errno);
            -1
        }
    }
}

/// Runs `op` on the managed file behind `fd` and returns `0`/`-1` with
/// errno, or passes the call through.
pub fn on_managed(
    call: &str,
    fd: c_int,
    op: impl FnOnce(&SharedFile) -> Outcome<()>,
    real: impl FnOnce() -> c_int,
) -> c_int {
    on_file(call, fd, |file| int_result(op(file)), real)
}

/// True when an `*at` call with this path and flags means "the descriptor
/// itself" (`AT_EMPTY_PATH` with an empty path).
///
/// # Safety
/// `path` is null or a NUL-terminated string.
pub unsafe fn on_descriptor(path: *const c_char, flags: c_int) -> bool {
    flags & libc::AT_EMPTY_PATH != 0 && !path.is_null() && *path == 0
}
