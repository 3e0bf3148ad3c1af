//! Handlers of the POSIX hooks: route each call, then either pass it
//! through to the real function or coordinate it ([`crate::coord`]).
//!
//! # Safety (every handler)
//! A handler is called only by its hook in [`crate::exports::hooks`], with the
//! arguments the C caller passed: its contract is that of the C function.

#![allow(clippy::missing_safety_doc)]

use crate::coord::{open, round};

use crate::sys::errno::set_errno;

use crate::coord::file::SharedFile;

use crate::coord::round::Outcome;
use crate::coord::table;
use crate::io::dispatch::{int_result, on_descriptor, on_file, on_managed, with_path};
use crate::io::names;
use libc::{c_char, c_int, c_uint, c_ulong, c_void, iovec, mode_t, size_t, ssize_t};
use redio_aligned::AlignedBuf;
use std::sync::Arc;

fn size_result(outcome: Outcome<usize>) -> ssize_t {
    match outcome {
        Ok(count) => count as ssize_t,
        Err(errno) => {
            set_errno(errno);
            -1
        }
    }
}

/// A new descriptor `fd` came from a call redio did not manage: make sure no
/// stale entry of an earlier file with the same number survives.
fn forget_reused(fd: c_int) {
    if fd >= 0 {
        table::clear(fd);
    }
}

// --- open family -----------------------------------------------------------

unsafe fn open_at(
    call: &str,
    dirfd: c_int,
    path: *const c_char,
    flags: c_int,
    mode: mode_t,
    real: impl FnOnce(*const c_char) -> c_int,
) -> c_int {
    // The mode argument is only there with O_CREAT or O_TMPFILE.
    let mode = if flags & (libc::O_CREAT | libc::O_TMPFILE) != 0 {
        mode
    } else {
        0
    };
    let passed = std::cell::Cell::new(false);
    let fd = with_path(
        call,
        dirfd,
        path,
        |p| {
            passed.set(true);
            real(p)
        },
        |resolved| {
            if flags & (libc::O_DIRECTORY | libc::O_PATH) != 0 {
                // Directories carry no data to coordinate.
                passed.set(true);
                return crate::sys::real::open(resolved.c_path.as_ptr(), flags, mode);
            }
            match open::open(&resolved.target(), flags, mode) {
                Ok((fd, file)) => {
                    table::set(fd, Arc::new(file));
                    fd
                }
                Err(errno) => {
                    set_errno(errno);
                    -1
                }
            }
        },
    );
    if passed.get() {
        forget_reused(fd);
    }
    fd
}

/// `open`, `open64`.
pub unsafe fn open(
    real: unsafe fn(*const c_char, c_int, mode_t) -> c_int,
    path: *const c_char,
    flags: c_int,
    mode: mode_t,
) -> c_int {
    open_at("open", libc::AT_FDCWD, path, flags, mode, |p| {
        real(p, flags, mode)
    })
}

/// `__open_2`, `__open64_2` (fortified, no mode).
pub unsafe fn open_2(
    real: unsafe fn(*const c_char, c_int) -> c_int,
    path: *const c_char,
    flags: c_int,
) -> c_int {
    open_at("open", libc::AT_FDCWD, path, flags, 0, |p| real(p, flags))
}

/// `openat`, `openat64`.
pub unsafe fn openat(
    real: unsafe fn(c_int, *const c_char, c_int, mode_t) -> c_int,
    dirfd: c_int,
    path: *const c_char,
    flags: c_int,
    mode: mode_t,
) -> c_int {
    open_at("openat", dirfd, path, flags, mode, |p| {
        real(dirfd, p, flags, mode)
    })
}

/// `__openat_2`, `__openat64_2` (fortified, no mode).
pub unsafe fn openat_2(
    real: unsafe fn(c_int, *const c_char, c_int) -> c_int,
    dirfd: c_int,
    path: *const c_char,
    flags: c_int,
) -> c_int {
    open_at("openat", dirfd, path, flags, 0, |p| real(dirfd, p, flags))
}

/// `creat`, `creat64`: `open(path, O_CREAT|O_WRONLY|O_TRUNC, mode)`.
pub unsafe fn creat(
    real: unsafe fn(*const c_char, mode_t) -> c_int,
    path: *const c_char,
    mode: mode_t,
) -> c_int {
    let flags = libc::O_CREAT | libc::O_WRONLY | libc::O_TRUNC;
    open_at("creat", libc::AT_FDCWD, path, flags, mode, |p| {
        real(p, mode)
    })
}

// --- data transfer ---------------------------------------------------------

/// A mutable byte slice over a C buffer (empty for a zero count, where the
/// pointer may be anything).
unsafe fn buffer<'a>(buf: *mut c_void, count: size_t) -> &'a mut [u8] {
    if count == 0 || buf.is_null() {
        &mut []
    } else {
        std::slice::from_raw_parts_mut(buf.cast(), count)
    }
}

unsafe fn data<'a>(buf: *const c_void, count: size_t) -> &'a [u8] {
    if count == 0 || buf.is_null() {
        &[]
    } else {
        std::slice::from_raw_parts(buf.cast(), count)
    }
}

/// Reads of a managed file at `at` (or the file offset); the real call
/// otherwise.
unsafe fn read_with(
    call: &str,
    fd: c_int,
    buf: *mut c_void,
    count: size_t,
    at: Option<u64>,
    real: impl FnOnce() -> ssize_t,
) -> ssize_t {
    on_file(
        call,
        fd,
        |file| size_result(file.read(fd, buffer(buf, count), at)),
        real,
    )
}

/// Writes of a managed file at `at` (or the file offset); the real call
/// otherwise.
unsafe fn write_with(
    call: &str,
    fd: c_int,
    buf: *const c_void,
    count: size_t,
    at: Option<u64>,
    real: impl FnOnce() -> ssize_t,
) -> ssize_t {
    on_file(
        call,
        fd,
        |file| size_result(file.write(fd, data(buf, count), at)),
        real,
    )
}

/// `read`.
pub unsafe fn read(
    real: unsafe fn(c_int, *mut c_void, size_t) -> ssize_t,
    fd: c_int,
    buf: *mut c_void,
    count: size_t,
) -> ssize_t {
    read_with("read", fd, buf, count, None, || real(fd, buf, count))
}

/// `__read_chk`: `read` with the fortify check of the buffer size.
pub unsafe fn read_chk(
    real: unsafe fn(c_int, *mut c_void, size_t, size_t) -> ssize_t,
    fd: c_int,
    buf: *mut c_void,
    count: size_t,
    buflen: size_t,
) -> ssize_t {
    if count > buflen {
        // The real function reports the overflow and aborts.
        return real(fd, buf, count, buflen);
    }
    read_with("read", fd, buf, count, None, || {
        real(fd, buf, count, buflen)
    })
}

/// `pread`, `pread64`.
pub unsafe fn pread(
    real: unsafe fn(c_int, *mut c_void, size_t, i64) -> ssize_t,
    fd: c_int,
    buf: *mut c_void,
    count: size_t,
    offset: i64,
) -> ssize_t {
    if offset < 0 {
        return real(fd, buf, count, offset);
    }
    read_with("pread", fd, buf, count, Some(offset as u64), || {
        real(fd, buf, count, offset)
    })
}

/// `__pread_chk`, `__pread64_chk`.
pub unsafe fn pread_chk(
    real: unsafe fn(c_int, *mut c_void, size_t, i64, size_t) -> ssize_t,
    fd: c_int,
    buf: *mut c_void,
    count: size_t,
    offset: i64,
    buflen: size_t,
) -> ssize_t {
    if count > buflen || offset < 0 {
        return real(fd, buf, count, offset, buflen);
    }
    read_with("pread", fd, buf, count, Some(offset as u64), || {
        real(fd, buf, count, offset, buflen)
    })
}

/// `write`.
pub unsafe fn write(
    real: unsafe fn(c_int, *const c_void, size_t) -> ssize_t,
    fd: c_int,
    buf: *const c_void,
    count: size_t,
) -> ssize_t {
    write_with("write", fd, buf, count, None, || real(fd, buf, count))
}

/// `pwrite`, `pwrite64`.
pub unsafe fn pwrite(
    real: unsafe fn(c_int, *const c_void, size_t, i64) -> ssize_t,
    fd: c_int,
    buf: *const c_void,
    count: size_t,
    offset: i64,
) -> ssize_t {
    if offset < 0 {
        return real(fd, buf, count, offset);
    }
    write_with("pwrite", fd, buf, count, Some(offset as u64), || {
        real(fd, buf, count, offset)
    })
}

/// The `iovec` array as slices.
unsafe fn iovecs<'a>(iov: *const iovec, count: c_int) -> Option<&'a [iovec]> {
    if count < 0 || (count > 0 && iov.is_null()) {
        None
    } else if count == 0 {
        Some(&[])
    } else {
        Some(std::slice::from_raw_parts(iov, count as usize))
    }
}

/// Vectored read of a managed file: one coordinated read into a bounce
/// buffer, then scattered.
unsafe fn readv_with(
    call: &str,
    fd: c_int,
    iov: *const iovec,
    count: c_int,
    at: Option<i64>,
    real: impl FnOnce() -> ssize_t,
) -> ssize_t {
    let Some(vectors) = iovecs(iov, count) else {
        return real();
    };
    let at = at.filter(|&at| at >= 0).map(|at| at as u64);
    let scatter = |file: &SharedFile| {
        // Page-aligned: the coordinated read lands here.
        let mut bounce = AlignedBuf::for_overwrite(vectors.iter().map(|v| v.iov_len).sum());
        let n = file.read(fd, &mut bounce, at)?;
        let mut rest = &bounce[..n];
        for v in vectors {
            let take = rest.len().min(v.iov_len);
            if take > 0 {
                // SAFETY: the application's iovec has room for iov_len bytes.
                unsafe { std::ptr::copy_nonoverlapping(rest.as_ptr(), v.iov_base.cast(), take) };
            }
            rest = &rest[take..];
        }
        Ok(n)
    };
    on_file(call, fd, |file| size_result(scatter(file)), real)
}

/// Vectored write of a managed file: gathered, then one coordinated write.
unsafe fn writev_with(
    call: &str,
    fd: c_int,
    iov: *const iovec,
    count: c_int,
    at: Option<i64>,
    real: impl FnOnce() -> ssize_t,
) -> ssize_t {
    let Some(vectors) = iovecs(iov, count) else {
        return real();
    };
    let at = at.filter(|&at| at >= 0).map(|at| at as u64);
    let gather = |file: &SharedFile| {
        // Page-aligned: the coordinated write goes out from here.
        let mut gathered = AlignedBuf::with_capacity(vectors.iter().map(|v| v.iov_len).sum());
        for v in vectors {
            // SAFETY: the application's iovec holds iov_len bytes.
            gathered.extend_from_slice(unsafe { data(v.iov_base, v.iov_len) });
        }
        file.write(fd, &gathered, at)
    };
    on_file(call, fd, |file| size_result(gather(file)), real)
}

/// `readv`.
pub unsafe fn readv(
    real: unsafe fn(c_int, *const iovec, c_int) -> ssize_t,
    fd: c_int,
    iov: *const iovec,
    count: c_int,
) -> ssize_t {
    readv_with("readv", fd, iov, count, None, || real(fd, iov, count))
}

/// `writev`.
pub unsafe fn writev(
    real: unsafe fn(c_int, *const iovec, c_int) -> ssize_t,
    fd: c_int,
    iov: *const iovec,
    count: c_int,
) -> ssize_t {
    writev_with("writev", fd, iov, count, None, || real(fd, iov, count))
}

/// `preadv`, `preadv64`.
pub unsafe fn preadv(
    real: unsafe fn(c_int, *const iovec, c_int, i64) -> ssize_t,
    fd: c_int,
    iov: *const iovec,
    count: c_int,
    offset: i64,
) -> ssize_t {
    readv_with("preadv", fd, iov, count, Some(offset), || {
        real(fd, iov, count, offset)
    })
}

/// `pwritev`, `pwritev64`.
pub unsafe fn pwritev(
    real: unsafe fn(c_int, *const iovec, c_int, i64) -> ssize_t,
    fd: c_int,
    iov: *const iovec,
    count: c_int,
    offset: i64,
) -> ssize_t {
    writev_with("pwritev", fd, iov, count, Some(offset), || {
        real(fd, iov, count, offset)
    })
}

/// `preadv2`, `preadv64v2`: offset -1 means the file offset; the `RWF_*`
/// flags are hints that coordination does not need.
pub unsafe fn preadv2(
    real: unsafe fn(c_int, *const iovec, c_int, i64, c_int) -> ssize_t,
    fd: c_int,
    iov: *const iovec,
    count: c_int,
    offset: i64,
    flags: c_int,
) -> ssize_t {
    readv_with("preadv2", fd, iov, count, Some(offset), || {
        real(fd, iov, count, offset, flags)
    })
}

/// `pwritev2`, `pwritev64v2`.
pub unsafe fn pwritev2(
    real: unsafe fn(c_int, *const iovec, c_int, i64, c_int) -> ssize_t,
    fd: c_int,
    iov: *const iovec,
    count: c_int,
    offset: i64,
    flags: c_int,
) -> ssize_t {
    writev_with("pwritev2", fd, iov, count, Some(offset), || {
        real(fd, iov, count, offset, flags)
    })
}

// --- seek and descriptors --------------------------------------------------

/// `lseek`, `lseek64`.
pub unsafe fn lseek(
    real: unsafe fn(c_int, i64, c_int) -> i64,
    fd: c_int,
    offset: i64,
    whence: c_int,
) -> i64 {
    on_file(
        "lseek",
        fd,
        |file| match file.seek(fd, offset, whence) {
            Ok(at) => at,
            Err(errno) => {
                set_errno(errno);
                -1
            }
        },
        || real(fd, offset, whence),
    )
}

/// `close`: the entry goes before the real close, so the number is free.
pub unsafe fn close(real: unsafe fn(c_int) -> c_int, fd: c_int) -> c_int {
    crate::parity::lazy::closing(fd);
    let settled = crate::coord::close::release(fd);
    let rc = real(fd);
    match settled {
        Err(errno) if rc == 0 => {
            set_errno(errno);
            -1
        }
        _ => rc,
    }
}

/// `close_range`.
pub unsafe fn close_range(
    real: unsafe fn(c_uint, c_uint, c_int) -> c_int,
    first: c_uint,
    last: c_uint,
    flags: c_int,
) -> c_int {
    // CLOSE_RANGE_CLOEXEC only marks the descriptors; nothing closes now.
    if flags & (libc::CLOSE_RANGE_CLOEXEC as c_int) == 0 {
        table::clear_range(first, last);
    }
    real(first, last, flags)
}

/// After a real `dup*`: `new` refers to whatever `old` referred to.
fn copy_entry(old: c_int, new: c_int) {
    if new < 0 {
        return;
    }
    match table::get(old) {
        Some(file) => table::set(new, file),
        None => {
            table::clear(new);
        }
    }
}

/// `dup`.
pub unsafe fn dup(real: unsafe fn(c_int) -> c_int, fd: c_int) -> c_int {
    let new = real(fd);
    copy_entry(fd, new);
    new
}

/// `dup2`.
pub unsafe fn dup2(real: unsafe fn(c_int, c_int) -> c_int, fd: c_int, target: c_int) -> c_int {
    let new = real(fd, target);
    if new >= 0 && fd != target {
        copy_entry(fd, new);
    }
    new
}

/// `dup3`.
pub unsafe fn dup3(
    real: unsafe fn(c_int, c_int, c_int) -> c_int,
    fd: c_int,
    target: c_int,
    flags: c_int,
) -> c_int {
    let new = real(fd, target, flags);
    copy_entry(fd, new);
    new
}

/// `fcntl`, `fcntl64`: duplicates share the managed file; the status flags
/// are the application's, the same on every replica (a placeholder
/// descriptor has its own); locks are the leader's ([`crate::io::locks`]).
pub unsafe fn fcntl(
    real: unsafe fn(c_int, c_int, c_ulong) -> c_int,
    fd: c_int,
    cmd: c_int,
    arg: c_ulong,
) -> c_int {
    match cmd {
        libc::F_DUPFD | libc::F_DUPFD_CLOEXEC => {
            let new = real(fd, cmd, arg);
            copy_entry(fd, new);
            new
        }
        libc::F_GETFL => on_file(
            "fcntl",
            fd,
            |file| file.flags() & !libc::O_CLOEXEC,
            || real(fd, cmd, arg),
        ),
        libc::F_SETFL => on_file(
            "fcntl",
            fd,
            |file| {
                // O_APPEND stays redio's to emulate (see managed::open).
                let rc = real(fd, cmd, arg & !(libc::O_APPEND as c_ulong));
                if rc == 0 {
                    file.set_status_flags(arg as c_int);
                }
                rc
            },
            || real(fd, cmd, arg),
        ),
        _ => match crate::coord::lock::fcntl_lock(cmd) {
            Some(kind) => crate::io::locks::fcntl(real, fd, cmd, arg, kind),
            None => real(fd, cmd, arg),
        },
    }
}

// --- sync, truncate, stat, names -------------------------------------------

/// `fsync`.
pub unsafe fn fsync(real: unsafe fn(c_int) -> c_int, fd: c_int) -> c_int {
    on_managed("fsync", fd, |file| file.sync(fd, false), || real(fd))
}

/// `fdatasync`.
pub unsafe fn fdatasync(real: unsafe fn(c_int) -> c_int, fd: c_int) -> c_int {
    on_managed("fdatasync", fd, |file| file.sync(fd, true), || real(fd))
}

/// `ftruncate`, `ftruncate64`.
pub unsafe fn ftruncate(real: unsafe fn(c_int, i64) -> c_int, fd: c_int, length: i64) -> c_int {
    on_managed(
        "ftruncate",
        fd,
        |file| file.truncate(fd, length),
        || real(fd, length),
    )
}

/// `fstat`, `fstat64`.
pub unsafe fn fstat<T>(real: unsafe fn(c_int, *mut T) -> c_int, fd: c_int, buf: *mut T) -> c_int {
    on_managed(
        "fstat",
        fd,
        |file| file.fstat(fd, buf.cast(), std::mem::size_of::<T>()),
        || real(fd, buf),
    )
}

/// `__fxstat`, `__fxstat64`.
pub unsafe fn fxstat<T>(
    real: unsafe fn(c_int, c_int, *mut T) -> c_int,
    version: c_int,
    fd: c_int,
    buf: *mut T,
) -> c_int {
    on_managed(
        "__fxstat",
        fd,
        |file| file.fstat(fd, buf.cast(), std::mem::size_of::<T>()),
        || real(version, fd, buf),
    )
}

/// A `stat`-like call on a path: the leader's answer on a shared path.
unsafe fn stat_path<T>(
    call: &str,
    dirfd: c_int,
    path: *const c_char,
    buf: *mut T,
    real: impl Fn(*const c_char, *mut T) -> c_int,
) -> c_int {
    with_path(
        call,
        dirfd,
        path,
        |p| real(p, buf),
        |resolved| {
            let c_path = resolved.c_path.as_c_str();
            int_result(round::stat_on_leader(
                call,
                &resolved.app_path,
                buf.cast(),
                std::mem::size_of::<T>(),
                |local| real(c_path.as_ptr(), local.cast()),
            ))
        },
    )
}

/// `stat`, `stat64`.
pub unsafe fn stat<T>(
    real: unsafe fn(*const c_char, *mut T) -> c_int,
    path: *const c_char,
    buf: *mut T,
) -> c_int {
    stat_path("stat", libc::AT_FDCWD, path, buf, |p, b| real(p, b))
}

/// `lstat`, `lstat64`.
pub unsafe fn lstat<T>(
    real: unsafe fn(*const c_char, *mut T) -> c_int,
    path: *const c_char,
    buf: *mut T,
) -> c_int {
    stat_path("lstat", libc::AT_FDCWD, path, buf, |p, b| real(p, b))
}

/// `__xstat`, `__xstat64`.
pub unsafe fn xstat<T>(
    real: unsafe fn(c_int, *const c_char, *mut T) -> c_int,
    version: c_int,
    path: *const c_char,
    buf: *mut T,
) -> c_int {
    stat_path("__xstat", libc::AT_FDCWD, path, buf, |p, b| {
        real(version, p, b)
    })
}

/// `__lxstat`, `__lxstat64`.
pub unsafe fn lxstat<T>(
    real: unsafe fn(c_int, *const c_char, *mut T) -> c_int,
    version: c_int,
    path: *const c_char,
    buf: *mut T,
) -> c_int {
    stat_path("__lxstat", libc::AT_FDCWD, path, buf, |p, b| {
        real(version, p, b)
    })
}

/// `fstatat`, `fstatat64`.
pub unsafe fn fstatat<T>(
    real: unsafe fn(c_int, *const c_char, *mut T, c_int) -> c_int,
    dirfd: c_int,
    path: *const c_char,
    buf: *mut T,
    flags: c_int,
) -> c_int {
    if on_descriptor(path, flags) {
        return on_managed(
            "fstatat",
            dirfd,
            |file| file.fstat(dirfd, buf.cast(), std::mem::size_of::<T>()),
            || real(dirfd, path, buf, flags),
        );
    }
    stat_path("fstatat", dirfd, path, buf, |p, b| real(dirfd, p, b, flags))
}

/// `__fxstatat`, `__fxstatat64`.
pub unsafe fn fxstatat<T>(
    real: unsafe fn(c_int, c_int, *const c_char, *mut T, c_int) -> c_int,
    version: c_int,
    dirfd: c_int,
    path: *const c_char,
    buf: *mut T,
    flags: c_int,
) -> c_int {
    stat_path("__fxstatat", dirfd, path, buf, |p, b| {
        real(version, dirfd, p, b, flags)
    })
}

/// `statx`: on a shared path (or a managed descriptor with
/// `AT_EMPTY_PATH`), the leader's answer.
pub unsafe fn statx(
    real: unsafe fn(c_int, *const c_char, c_int, c_uint, *mut libc::statx) -> c_int,
    dirfd: c_int,
    path: *const c_char,
    flags: c_int,
    mask: c_uint,
    buf: *mut libc::statx,
) -> c_int {
    if on_descriptor(path, flags) {
        return on_managed(
            "statx",
            dirfd,
            |file| {
                let path = c"";
                round::stat_on_leader(
                    "statx",
                    &file.app_path,
                    buf.cast(),
                    std::mem::size_of::<libc::statx>(),
                    |local| real(dirfd, path.as_ptr(), flags, mask, local.cast()),
                )
            },
            || real(dirfd, path, flags, mask, buf),
        );
    }
    stat_path("statx", dirfd, path, buf, |p, b| {
        real(dirfd, p, flags, mask, b)
    })
}

/// `unlink`: once, by the leader, on a shared path (with storage per
/// replica, on every replica's copy).
pub unsafe fn unlink(real: unsafe fn(*const c_char) -> c_int, path: *const c_char) -> c_int {
    names::on_path("unlink", libc::AT_FDCWD, path, |p| real(p))
}

/// `rename`: once, by the leader, when either path is shared (with storage
/// per replica, on every replica's copy).
pub unsafe fn rename(
    real: unsafe fn(*const c_char, *const c_char) -> c_int,
    from: *const c_char,
    to: *const c_char,
) -> c_int {
    names::on_two_paths(
        "rename",
        (libc::AT_FDCWD, from),
        (libc::AT_FDCWD, to),
        |f, t| real(f, t),
    )
}
