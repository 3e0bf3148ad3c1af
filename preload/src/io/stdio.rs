//! Handlers of the stdio hooks.
//!
//! glibc's stdio does its I/O internally, never through the hooked `read`
//! and `write`. So a stream on a shared file is a `fopencookie` stream whose
//! read, write, seek and close callbacks are the managed operations of its
//! descriptor: every stdio function (`fprintf`, `fgets`, `fread`, `fseek`,
//! fortified `__*_chk` variants, …) then works unchanged. `fileno` returns
//! the managed descriptor, because C++ `fstream` writes with `write(fileno)`.
//!
//! # Safety (every handler)
//! A handler is called only by its hook in [`crate::exports::hooks`], with the
//! arguments the C caller passed: its contract is that of the C function.

#![allow(clippy::missing_safety_doc)]

use crate::coord::file::SharedFile;
use crate::coord::table;
use crate::coord::{open, round};
use crate::io::route;
use crate::io::route::Bypass;
use crate::sys::errno::set_errno;
use crate::sys::real;
use libc::{c_char, c_int, c_void, off64_t, size_t, ssize_t, FILE};
use redio_core::fsclass::Class;
use std::ffi::CStr;
use std::sync::Arc;

/// glibc's `cookie_io_functions_t` (not in the `libc` crate).
#[repr(C)]
struct CookieFunctions {
    read: Option<unsafe extern "C" fn(*mut c_void, *mut c_char, size_t) -> ssize_t>,
    write: Option<unsafe extern "C" fn(*mut c_void, *const c_char, size_t) -> ssize_t>,
    seek: Option<unsafe extern "C" fn(*mut c_void, *mut off64_t, c_int) -> c_int>,
    close: Option<unsafe extern "C" fn(*mut c_void) -> c_int>,
}

extern "C" {
    /// glibc: a stream whose I/O goes through the given callbacks.
    fn fopencookie(
        cookie: *mut c_void,
        mode: *const c_char,
        functions: CookieFunctions,
    ) -> *mut FILE;
}

/// `open(2)` flags for an `fopen` mode, and the mode to give `fopencookie`
/// (without the `e`, `x`, `m` and `,ccs=` extensions it does not know).
fn parse_mode(mode: &CStr) -> Option<(c_int, &'static str)> {
    let text = mode.to_str().ok()?;
    let text = text.split(',').next().unwrap_or("");
    let plus = text.contains('+');
    let (mut flags, cookie_mode) = match (text.chars().next()?, plus) {
        ('r', false) => (libc::O_RDONLY, "r"),
        ('r', true) => (libc::O_RDWR, "r+"),
        ('w', false) => (libc::O_WRONLY | libc::O_CREAT | libc::O_TRUNC, "w"),
        ('w', true) => (libc::O_RDWR | libc::O_CREAT | libc::O_TRUNC, "w+"),
        ('a', false) => (libc::O_WRONLY | libc::O_CREAT | libc::O_APPEND, "a"),
        ('a', true) => (libc::O_RDWR | libc::O_CREAT | libc::O_APPEND, "a+"),
        _ => return None,
    };
    if text.contains('x') {
        flags |= libc::O_EXCL;
    }
    if text.contains('e') {
        flags |= libc::O_CLOEXEC;
    }
    Some((flags, cookie_mode))
}

/// The cookie of a managed stream is its descriptor.
fn cookie_fd(cookie: *mut c_void) -> c_int {
    cookie as usize as c_int
}

/// Runs a managed operation for a stream callback (coordinated while the
/// runtime is active; [`SharedFile`] serves this replica alone
/// after `MPI_Finalize`).
fn with_file<T>(
    cookie: *mut c_void,
    op: impl FnOnce(&SharedFile, c_int) -> round::Outcome<T>,
) -> Option<T> {
    let fd = cookie_fd(cookie);
    let Some(file) = table::get(fd) else {
        set_errno(libc::EBADF);
        return None;
    };
    crate::sys::guard::inside(|| op(&file, fd))
        .map_err(set_errno)
        .ok()
}

unsafe extern "C" fn cookie_read(cookie: *mut c_void, buf: *mut c_char, size: size_t) -> ssize_t {
    let buffer: &mut [u8] = if size == 0 {
        &mut []
    } else {
        std::slice::from_raw_parts_mut(buf.cast(), size)
    };
    with_file(cookie, |file, fd| file.read(fd, buffer, None)).map_or(-1, |n| n as ssize_t)
}

unsafe extern "C" fn cookie_write(
    cookie: *mut c_void,
    buf: *const c_char,
    size: size_t,
) -> ssize_t {
    let data: &[u8] = if size == 0 {
        &[]
    } else {
        std::slice::from_raw_parts(buf.cast(), size)
    };
    // fopencookie: return the bytes written, 0 on error (never negative).
    with_file(cookie, |file, fd| file.write(fd, data, None)).map_or(0, |n| n as ssize_t)
}

unsafe extern "C" fn cookie_seek(
    cookie: *mut c_void,
    offset: *mut off64_t,
    whence: c_int,
) -> c_int {
    let wanted = *offset;
    let at = with_file(cookie, |file, fd| file.seek(fd, wanted, whence));
    match at {
        Some(at) => {
            *offset = at;
            0
        }
        None => -1,
    }
}

unsafe extern "C" fn cookie_close(cookie: *mut c_void) -> c_int {
    let fd = cookie_fd(cookie);
    let settled = crate::coord::close::release(fd);
    match (settled, real::close(fd)) {
        (Err(errno), 0) => {
            set_errno(errno);
            -1
        }
        (_, rc) => rc,
    }
}

/// Wraps managed descriptor `fd` in a stdio stream.
unsafe fn managed_stream(fd: c_int, mode: &'static str) -> *mut FILE {
    let functions = CookieFunctions {
        read: Some(cookie_read),
        write: Some(cookie_write),
        seek: Some(cookie_seek),
        close: Some(cookie_close),
    };
    let c_mode = match mode {
        "r" => c"r",
        "r+" => c"r+",
        "w" => c"w",
        "w+" => c"w+",
        "a" => c"a",
        _ => c"a+",
    };
    let stream = fopencookie(fd as usize as *mut c_void, c_mode.as_ptr(), functions);
    if !stream.is_null() {
        table::set_stream(stream, fd);
    }
    stream
}

/// `fopen`, `fopen64`.
pub unsafe fn fopen(
    real: unsafe fn(*const c_char, *const c_char) -> *mut FILE,
    path: *const c_char,
    mode: *const c_char,
) -> *mut FILE {
    if path.is_null() || mode.is_null() {
        return real(path, mode);
    }
    let _entered = match route::enter() {
        Ok(entered) => entered,
        Err(reason) => {
            route::log_bypass("fopen", reason, &CStr::from_ptr(path).to_string_lossy());
            return real(path, mode);
        }
    };
    let resolved = crate::io::paths::resolve_tentatively(libc::AT_FDCWD, CStr::from_ptr(path));
    if resolved.class != Class::Shared {
        let reason = if resolved.class == Class::System {
            Bypass::System
        } else {
            Bypass::NodeLocal
        };
        route::log_bypass("fopen", reason, &resolved.path.display());
        return real(
            if resolved.remapped {
                resolved.c_path.as_ptr()
            } else {
                path
            },
            mode,
        );
    }
    let Some((flags, cookie_mode)) = parse_mode(CStr::from_ptr(mode)) else {
        set_errno(libc::EINVAL);
        return std::ptr::null_mut();
    };
    let opened = if resolved.tentative {
        let open = || open::open(&resolved.target(), flags, 0o666);
        let (opened, apart) = crate::coord::round::tentatively(open);
        if apart {
            // Each co-located replica named its own file: as in a plain run.
            route::log_bypass("fopen", Bypass::NodeLocal, &resolved.path.display());
            return real(path, mode);
        }
        opened
    } else {
        open::open(&resolved.target(), flags, 0o666)
    };
    match opened {
        Ok((fd, file)) => {
            table::set(fd, Arc::new(file));
            let stream = managed_stream(fd, cookie_mode);
            if stream.is_null() {
                table::clear(fd);
                real::close(fd);
            }
            stream
        }
        Err(errno) => {
            set_errno(errno);
            std::ptr::null_mut()
        }
    }
}

/// `fdopen`: a managed descriptor gets a managed stream.
pub unsafe fn fdopen(
    real: unsafe fn(c_int, *const c_char) -> *mut FILE,
    fd: c_int,
    mode: *const c_char,
) -> *mut FILE {
    if table::get(fd).is_none() || mode.is_null() {
        return real(fd, mode);
    }
    let Some((_, cookie_mode)) = parse_mode(CStr::from_ptr(mode)) else {
        set_errno(libc::EINVAL);
        return std::ptr::null_mut();
    };
    managed_stream(fd, cookie_mode)
}

/// `freopen`, `freopen64`: when the old stream or the new path is managed,
/// the old stream is closed and a new one opened (its address may differ:
/// use the returned pointer); otherwise the real call, on the remapped path.
pub unsafe fn freopen(
    real: unsafe fn(*const c_char, *const c_char, *mut FILE) -> *mut FILE,
    path: *const c_char,
    mode: *const c_char,
    stream: *mut FILE,
) -> *mut FILE {
    if path.is_null() {
        return real(path, mode, stream);
    }
    let managed_old = table::stream_fd(stream).is_some();
    let resolved = match route::enter() {
        Ok(_entered) => Some(crate::io::paths::resolve(
            libc::AT_FDCWD,
            CStr::from_ptr(path),
        )),
        Err(reason) => {
            route::log_bypass("freopen", reason, &CStr::from_ptr(path).to_string_lossy());
            None
        }
    };
    let shared_new = resolved.as_ref().is_some_and(|r| r.bypass().is_none());
    if managed_old || shared_new {
        fclose(real::fclose, stream);
        return fopen(real::fopen, path, mode);
    }
    match resolved {
        Some(resolved) => real(resolved.for_real_call(path), mode, stream),
        None => real(path, mode, stream),
    }
}

/// `fclose`: a managed stream's close callback releases its descriptor.
pub unsafe fn fclose(real: unsafe fn(*mut FILE) -> c_int, stream: *mut FILE) -> c_int {
    if crate::parity::lazy::enabled() {
        // glibc closes the descriptor inside fclose, past the close hook.
        crate::parity::lazy::closing(fileno(real::fileno, stream));
    }
    table::clear_stream(stream);
    real(stream)
}

/// `fileno`, `fileno_unlocked`: the managed descriptor of a managed stream.
pub unsafe fn fileno(real: unsafe fn(*mut FILE) -> c_int, stream: *mut FILE) -> c_int {
    table::stream_fd(stream).unwrap_or_else(|| real(stream))
}

/// `fflush`: glibc calls a managed stream's write callback.
pub unsafe fn fflush(real: unsafe fn(*mut FILE) -> c_int, stream: *mut FILE) -> c_int {
    real(stream)
}

/// Flushes every managed stream while coordination is still possible (at
/// `MPI_Finalize`; glibc would flush them at exit, too late).
pub fn flush_all() {
    for stream in table::all_streams() {
        // SAFETY: a stream this process opened and has not closed.
        unsafe { real::fflush(stream) };
    }
}
