//! Handlers of the name and attribute calls on paths and descriptors:
//! `mkdir`, `rmdir`, `unlinkat`, `renameat`, `access`, `mknod`,
//! `symlink`, `link`, `chmod`, `chown`, `utime`, `utimensat`, `truncate`
//! and their `*at`/`f*` variants.
//!
//! On a shared path the leader makes the call, once, and every replica
//! returns its result and errno: a `mkdir -p` race between ranks (Python's
//! `os.makedirs(exist_ok=True)`) then takes the same turn on every replica
//! of a rank, as in a plain run. With storage per replica (`remap` to
//! different servers) every replica makes the call on its own copy and all
//! return the first failure in replica order. Node-local paths pass
//! through.
//!
//! # Safety (every handler)
//! A handler is called only by its hook in [`crate::exports::hooks`], with the
//! arguments the C caller passed: its contract is that of the C function.

#![allow(clippy::missing_safety_doc)]

use crate::coord::round;
use crate::io::dispatch::{int_result, on_descriptor, on_managed, with_path};
use crate::io::paths;
use crate::io::route::{self, Bypass};
use crate::sys::errno::errno;
use libc::{c_char, c_int, dev_t, gid_t, mode_t, timespec, timeval, uid_t, utimbuf};
use std::ffi::CStr;

/// Runs the name call `call` on a shared path (`subject`, as the
/// application named it): once, on the leader, or with storage per replica
/// on every replica's own copy, agreed (the first failure in replica
/// order).
fn name_call(
    what: &str,
    subject: &std::path::Path,
    per_replica: bool,
    mut call: impl FnMut() -> c_int,
) -> c_int {
    if per_replica {
        if let Err(errno) = round::main_thread_only(what, &subject.display()) {
            return int_result(Err(errno));
        }
        let rc = call();
        let mine = if rc < 0 { Err(errno()) } else { Ok(()) };
        let op = round::operation(what, subject.display(), 0, 0);
        return int_result(round::agree_on_outcome(op, mine));
    }
    int_result(round::name_on_leader(what, subject, call))
}

/// A call on one path relative to `dirfd`: coordinated on a shared path,
/// passed through otherwise (`real` gets the path for the real call).
///
/// # Safety
/// `path` is null or a NUL-terminated string; `real` is safe to call with
/// it or with the resolved path.
pub unsafe fn on_path(
    what: &str,
    dirfd: c_int,
    path: *const c_char,
    mut real: impl FnMut(*const c_char) -> c_int,
) -> c_int {
    let real = std::cell::RefCell::new(&mut real);
    with_path(
        what,
        dirfd,
        path,
        |p| (real.borrow_mut())(p),
        |resolved| {
            let c_path = resolved.c_path.as_ptr();
            name_call(what, &resolved.app_path, resolved.per_replica, || {
                (real.borrow_mut())(c_path)
            })
        },
    )
}

/// A call on two paths (`rename`, `link`, `renameat`): coordinated when
/// either is shared, with the paths for the real call (remapped where
/// `remap` applies).
///
/// # Safety
/// `from` and `to` are null or NUL-terminated strings; `real` is safe to
/// call with them or with the resolved paths.
pub unsafe fn on_two_paths(
    what: &str,
    (from_dir, from): (c_int, *const c_char),
    (to_dir, to): (c_int, *const c_char),
    mut real: impl FnMut(*const c_char, *const c_char) -> c_int,
) -> c_int {
    if from.is_null() || to.is_null() {
        return real(from, to);
    }
    let _entered = match route::enter() {
        Ok(entered) => entered,
        Err(reason) => {
            route::log_bypass(what, reason, &CStr::from_ptr(from).to_string_lossy());
            return real(from, to);
        }
    };
    let source = paths::resolve(from_dir, CStr::from_ptr(from));
    let target = paths::resolve(to_dir, CStr::from_ptr(to));
    let (from_path, to_path) = (source.for_real_call(from), target.for_real_call(to));
    // A temporary file named apart on co-located replicas (its name holds
    // a process id) renamed to a common name: each replica renames its own.
    let apart = source.named_apart || target.named_apart;
    if !apart && (source.bypass().is_none() || target.bypass().is_none()) {
        let subject = if source.bypass().is_none() {
            &source.app_path
        } else {
            &target.app_path
        };
        let per_replica = source.per_replica || target.per_replica;
        name_call(what, subject, per_replica, || real(from_path, to_path))
    } else {
        route::log_bypass(what, Bypass::NodeLocal, &source.path.display());
        real(from_path, to_path)
    }
}

// --- directories and names ---------------------------------------------------

/// `mkdir`.
pub unsafe fn mkdir(
    real: unsafe fn(*const c_char, mode_t) -> c_int,
    path: *const c_char,
    mode: mode_t,
) -> c_int {
    on_path("mkdir", libc::AT_FDCWD, path, |p| real(p, mode))
}

/// `mkdirat`.
pub unsafe fn mkdirat(
    real: unsafe fn(c_int, *const c_char, mode_t) -> c_int,
    dirfd: c_int,
    path: *const c_char,
    mode: mode_t,
) -> c_int {
    on_path("mkdirat", dirfd, path, |p| real(dirfd, p, mode))
}

/// `rmdir`.
pub unsafe fn rmdir(real: unsafe fn(*const c_char) -> c_int, path: *const c_char) -> c_int {
    on_path("rmdir", libc::AT_FDCWD, path, |p| real(p))
}

/// `remove(3)`: glibc's calls `unlink` (then `rmdir`) internally, past the
/// hooks, so it is coordinated as a whole.
pub unsafe fn remove(real: unsafe fn(*const c_char) -> c_int, path: *const c_char) -> c_int {
    on_path("remove", libc::AT_FDCWD, path, |p| real(p))
}

/// `mkfifo(3)`: glibc's makes the FIFO with `mknodat` internally, past the
/// hook.
pub unsafe fn mkfifo(
    real: unsafe fn(*const c_char, mode_t) -> c_int,
    path: *const c_char,
    mode: mode_t,
) -> c_int {
    on_path("mkfifo", libc::AT_FDCWD, path, |p| real(p, mode))
}

/// `mkfifoat(3)`.
pub unsafe fn mkfifoat(
    real: unsafe fn(c_int, *const c_char, mode_t) -> c_int,
    dirfd: c_int,
    path: *const c_char,
    mode: mode_t,
) -> c_int {
    on_path("mkfifoat", dirfd, path, |p| real(dirfd, p, mode))
}

/// `unlinkat` (also `rmdir` with `AT_REMOVEDIR`).
pub unsafe fn unlinkat(
    real: unsafe fn(c_int, *const c_char, c_int) -> c_int,
    dirfd: c_int,
    path: *const c_char,
    flags: c_int,
) -> c_int {
    on_path("unlinkat", dirfd, path, |p| real(dirfd, p, flags))
}

/// `renameat`.
pub unsafe fn renameat(
    real: unsafe fn(c_int, *const c_char, c_int, *const c_char) -> c_int,
    from_dir: c_int,
    from: *const c_char,
    to_dir: c_int,
    to: *const c_char,
) -> c_int {
    on_two_paths("renameat", (from_dir, from), (to_dir, to), |f, t| {
        real(from_dir, f, to_dir, t)
    })
}

/// `renameat2`.
pub unsafe fn renameat2(
    real: unsafe fn(c_int, *const c_char, c_int, *const c_char, libc::c_uint) -> c_int,
    from_dir: c_int,
    from: *const c_char,
    to_dir: c_int,
    to: *const c_char,
    flags: libc::c_uint,
) -> c_int {
    on_two_paths("renameat", (from_dir, from), (to_dir, to), |f, t| {
        real(from_dir, f, to_dir, t, flags)
    })
}

/// `mknod`.
pub unsafe fn mknod(
    real: unsafe fn(*const c_char, mode_t, dev_t) -> c_int,
    path: *const c_char,
    mode: mode_t,
    dev: dev_t,
) -> c_int {
    on_path("mknod", libc::AT_FDCWD, path, |p| real(p, mode, dev))
}

/// `mknodat`.
pub unsafe fn mknodat(
    real: unsafe fn(c_int, *const c_char, mode_t, dev_t) -> c_int,
    dirfd: c_int,
    path: *const c_char,
    mode: mode_t,
    dev: dev_t,
) -> c_int {
    on_path("mknodat", dirfd, path, |p| real(dirfd, p, mode, dev))
}

/// `symlink`: the link's own path decides; its target is stored as given.
pub unsafe fn symlink(
    real: unsafe fn(*const c_char, *const c_char) -> c_int,
    target: *const c_char,
    path: *const c_char,
) -> c_int {
    on_path("symlink", libc::AT_FDCWD, path, |p| real(target, p))
}

/// `symlinkat`.
pub unsafe fn symlinkat(
    real: unsafe fn(*const c_char, c_int, *const c_char) -> c_int,
    target: *const c_char,
    dirfd: c_int,
    path: *const c_char,
) -> c_int {
    on_path("symlinkat", dirfd, path, |p| real(target, dirfd, p))
}

/// `link`.
pub unsafe fn link(
    real: unsafe fn(*const c_char, *const c_char) -> c_int,
    from: *const c_char,
    to: *const c_char,
) -> c_int {
    on_two_paths(
        "link",
        (libc::AT_FDCWD, from),
        (libc::AT_FDCWD, to),
        |f, t| real(f, t),
    )
}

/// `linkat`.
pub unsafe fn linkat(
    real: unsafe fn(c_int, *const c_char, c_int, *const c_char, c_int) -> c_int,
    from_dir: c_int,
    from: *const c_char,
    to_dir: c_int,
    to: *const c_char,
    flags: c_int,
) -> c_int {
    on_two_paths("linkat", (from_dir, from), (to_dir, to), |f, t| {
        real(from_dir, f, to_dir, t, flags)
    })
}

// --- access ------------------------------------------------------------------

/// `access`.
pub unsafe fn access(
    real: unsafe fn(*const c_char, c_int) -> c_int,
    path: *const c_char,
    mode: c_int,
) -> c_int {
    on_path("access", libc::AT_FDCWD, path, |p| real(p, mode))
}

/// `eaccess`, `euidaccess`.
pub unsafe fn eaccess(
    real: unsafe fn(*const c_char, c_int) -> c_int,
    path: *const c_char,
    mode: c_int,
) -> c_int {
    on_path("eaccess", libc::AT_FDCWD, path, |p| real(p, mode))
}

/// `faccessat`.
pub unsafe fn faccessat(
    real: unsafe fn(c_int, *const c_char, c_int, c_int) -> c_int,
    dirfd: c_int,
    path: *const c_char,
    mode: c_int,
    flags: c_int,
) -> c_int {
    on_path("faccessat", dirfd, path, |p| real(dirfd, p, mode, flags))
}

// --- attributes ----------------------------------------------------------------

/// `chmod`.
pub unsafe fn chmod(
    real: unsafe fn(*const c_char, mode_t) -> c_int,
    path: *const c_char,
    mode: mode_t,
) -> c_int {
    on_path("chmod", libc::AT_FDCWD, path, |p| real(p, mode))
}

/// `fchmod`: once, by the leader, on a managed descriptor.
pub unsafe fn fchmod(real: unsafe fn(c_int, mode_t) -> c_int, fd: c_int, mode: mode_t) -> c_int {
    on_managed(
        "fchmod",
        fd,
        |file| file.on_leader_fd("fchmod", || real(fd, mode)),
        || real(fd, mode),
    )
}

/// `fchmodat`.
pub unsafe fn fchmodat(
    real: unsafe fn(c_int, *const c_char, mode_t, c_int) -> c_int,
    dirfd: c_int,
    path: *const c_char,
    mode: mode_t,
    flags: c_int,
) -> c_int {
    on_path("fchmodat", dirfd, path, |p| real(dirfd, p, mode, flags))
}

/// `chown`.
pub unsafe fn chown(
    real: unsafe fn(*const c_char, uid_t, gid_t) -> c_int,
    path: *const c_char,
    owner: uid_t,
    group: gid_t,
) -> c_int {
    on_path("chown", libc::AT_FDCWD, path, |p| real(p, owner, group))
}

/// `lchown`.
pub unsafe fn lchown(
    real: unsafe fn(*const c_char, uid_t, gid_t) -> c_int,
    path: *const c_char,
    owner: uid_t,
    group: gid_t,
) -> c_int {
    on_path("lchown", libc::AT_FDCWD, path, |p| real(p, owner, group))
}

/// `fchown`: once, by the leader, on a managed descriptor.
pub unsafe fn fchown(
    real: unsafe fn(c_int, uid_t, gid_t) -> c_int,
    fd: c_int,
    owner: uid_t,
    group: gid_t,
) -> c_int {
    on_managed(
        "fchown",
        fd,
        |file| file.on_leader_fd("fchown", || real(fd, owner, group)),
        || real(fd, owner, group),
    )
}

/// `fchownat` (`AT_EMPTY_PATH` with an empty path: the descriptor).
pub unsafe fn fchownat(
    real: unsafe fn(c_int, *const c_char, uid_t, gid_t, c_int) -> c_int,
    dirfd: c_int,
    path: *const c_char,
    owner: uid_t,
    group: gid_t,
    flags: c_int,
) -> c_int {
    if on_descriptor(path, flags) {
        return on_managed(
            "fchownat",
            dirfd,
            |file| file.on_leader_fd("fchownat", || real(dirfd, path, owner, group, flags)),
            || real(dirfd, path, owner, group, flags),
        );
    }
    on_path("fchownat", dirfd, path, |p| {
        real(dirfd, p, owner, group, flags)
    })
}

/// `utime`.
pub unsafe fn utime(
    real: unsafe fn(*const c_char, *const utimbuf) -> c_int,
    path: *const c_char,
    times: *const utimbuf,
) -> c_int {
    on_path("utime", libc::AT_FDCWD, path, |p| real(p, times))
}

/// `utimes`.
pub unsafe fn utimes(
    real: unsafe fn(*const c_char, *const timeval) -> c_int,
    path: *const c_char,
    times: *const timeval,
) -> c_int {
    on_path("utimes", libc::AT_FDCWD, path, |p| real(p, times))
}

/// `utimensat` (a null path: the descriptor itself).
pub unsafe fn utimensat(
    real: unsafe fn(c_int, *const c_char, *const timespec, c_int) -> c_int,
    dirfd: c_int,
    path: *const c_char,
    times: *const timespec,
    flags: c_int,
) -> c_int {
    if path.is_null() || on_descriptor(path, flags) {
        return on_managed(
            "utimensat",
            dirfd,
            |file| file.on_leader_fd("utimensat", || real(dirfd, path, times, flags)),
            || real(dirfd, path, times, flags),
        );
    }
    on_path("utimensat", dirfd, path, |p| real(dirfd, p, times, flags))
}

/// `futimens`: once, by the leader, on a managed descriptor.
pub unsafe fn futimens(
    real: unsafe fn(c_int, *const timespec) -> c_int,
    fd: c_int,
    times: *const timespec,
) -> c_int {
    on_managed(
        "futimens",
        fd,
        |file| file.on_leader_fd("futimens", || real(fd, times)),
        || real(fd, times),
    )
}

/// `truncate`, `truncate64`.
pub unsafe fn truncate(
    real: unsafe fn(*const c_char, i64) -> c_int,
    path: *const c_char,
    length: i64,
) -> c_int {
    on_path("truncate", libc::AT_FDCWD, path, |p| real(p, length))
}
