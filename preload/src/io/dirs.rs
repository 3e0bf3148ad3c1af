//! Handlers of the directory-stream calls: `opendir`, `fdopendir`,
//! `readdir`, `readdir64`, `rewinddir`, `closedir`.
//!
//! A directory on a shared path is listed once, by the leader, and every
//! replica's `readdir` hands out the leader's entries
//! ([`crate::coord::listing`]): the same names in the same order on every
//! replica, even while other ranks change the directory. Each replica's
//! `DIR*` is still a real one (`dirfd`, `closedir` work as usual).
//! `telldir`, `seekdir` and `readdir_r` are not hooked: on a managed stream
//! they see the real, unread stream.
//!
//! # Safety (every handler)
//! A handler is called only by its hook in [`crate::exports::hooks`], with the
//! arguments the C caller passed: its contract is that of the C function.

#![allow(clippy::missing_safety_doc)]

use crate::coord::listing;
use crate::io::dispatch::with_path;
use crate::io::paths;
use crate::io::route;
use crate::sys::errno::{errno, set_errno};
use crate::sys::real;
use libc::{c_char, c_int, dirent, dirent64, DIR};
use std::ffi::{CStr, CString};

/// Opens directory `path` (NUL-terminated) with the real functions.
fn open_path(path: &CStr) -> *mut DIR {
    // SAFETY: a NUL-terminated path.
    unsafe { real::opendir(path.as_ptr()) }
}

/// Opens the directory behind descriptor `fd` again (its own descriptor,
/// so the caller's stream is not read).
fn open_fd(fd: c_int) -> *mut DIR {
    // SAFETY: plain system calls on a descriptor of this process.
    unsafe {
        let again = real::openat(
            fd,
            c".".as_ptr(),
            libc::O_RDONLY | libc::O_DIRECTORY | libc::O_CLOEXEC,
            0,
        );
        if again < 0 {
            return std::ptr::null_mut();
        }
        let dir = real::fdopendir(again);
        if dir.is_null() {
            let e = errno();
            real::close(again);
            set_errno(e);
        }
        dir
    }
}

/// `opendir`.
pub unsafe fn opendir(real: unsafe fn(*const c_char) -> *mut DIR, path: *const c_char) -> *mut DIR {
    with_path(
        "opendir",
        libc::AT_FDCWD,
        path,
        |p| real(p),
        |resolved| {
            let c_path: CString = resolved.c_path.clone();
            let app_path = resolved.app_path.clone();
            let listed = listing::list_on_leader("opendir", &app_path, || open_path(&c_path));
            let entries = match listed {
                Ok(entries) => entries,
                Err(e) => {
                    set_errno(e);
                    return std::ptr::null_mut();
                }
            };
            let mut dir = real(c_path.as_ptr());
            if dir.is_null() {
                crate::log!(
                    Warn,
                    "{}: the leader listed it but this replica cannot open it ({}); \
                     serving the leader's entries on a placeholder stream",
                    resolved.path.display(),
                    std::io::Error::last_os_error()
                );
                dir = real(c"/".as_ptr());
                if dir.is_null() {
                    return dir;
                }
            }
            let relist =
                move || listing::list_on_leader("opendir", &app_path, || open_path(&c_path));
            listing::register(dir, entries, Box::new(relist));
            dir
        },
    )
}

/// `fdopendir`: a descriptor of a shared directory (`open(O_DIRECTORY)`
/// passes through, so it is found by its path in `/proc/self/fd`, mapped
/// back through `remap`).
pub unsafe fn fdopendir(real: unsafe fn(c_int) -> *mut DIR, fd: c_int) -> *mut DIR {
    let Ok(_entered) = route::enter() else {
        return real(fd);
    };
    let Ok(link) = std::fs::read_link(format!("/proc/self/fd/{fd}")) else {
        return real(fd);
    };
    let resolved = paths::resolve_real(&link);
    if let Some(reason) = resolved.bypass() {
        route::log_bypass("fdopendir", reason, &resolved.path.display());
        return real(fd);
    }
    let app_path = resolved.app_path.clone();
    let entries = match listing::list_on_leader("fdopendir", &app_path, || open_fd(fd)) {
        Ok(entries) => entries,
        Err(e) => {
            set_errno(e);
            return std::ptr::null_mut();
        }
    };
    let dir = real(fd);
    if !dir.is_null() {
        let relist = move || listing::list_on_leader("fdopendir", &app_path, || open_fd(fd));
        listing::register(dir, entries, Box::new(relist));
    }
    dir
}

/// `readdir`: the leader's next entry on a managed stream.
pub unsafe fn readdir(real: unsafe fn(*mut DIR) -> *mut dirent, dir: *mut DIR) -> *mut dirent {
    // `struct dirent` and `struct dirent64` are one layout on 64-bit Linux.
    const _: () = assert!(std::mem::size_of::<dirent>() == std::mem::size_of::<dirent64>());
    match listing::next(dir) {
        Some(entry) => entry.cast(),
        None => real(dir),
    }
}

/// `readdir64`.
pub unsafe fn readdir64(
    real: unsafe fn(*mut DIR) -> *mut dirent64,
    dir: *mut DIR,
) -> *mut dirent64 {
    match listing::next(dir) {
        Some(entry) => entry,
        None => real(dir),
    }
}

/// `rewinddir`: a managed stream is listed again by the leader.
pub unsafe fn rewinddir(real: unsafe fn(*mut DIR), dir: *mut DIR) {
    let relisted = match route::enter() {
        Ok(_entered) => listing::rewind(dir),
        Err(_) => false,
    };
    if !relisted {
        real(dir);
    }
}

/// `closedir`: forgets a managed stream, then closes it.
pub unsafe fn closedir(real: unsafe fn(*mut DIR) -> c_int, dir: *mut DIR) -> c_int {
    listing::forget(dir);
    real(dir)
}
