//! The C library's own functions, called when redio passes a call through
//! or does the real I/O of a coordinated one: `real::open`, `real::write`, …
//!
//! `hooked_functions!` is the one list of hooked functions. It hands the
//! list to a macro: `real_functions!` here (the real functions, found with
//! `dlsym(RTLD_NEXT)` and cached; every pointer is resolved eagerly by the
//! library constructor, [`resolve_all`]), and `crate::exports::hooks` (the
//! exported hooks, each calling `handler(real::name, args…)`). The handler
//! named after `=>` is resolved where the hooks are exported; here it is
//! ignored.
//!
//! Variadic functions (`open`, `openat`, `fcntl`) are declared with their
//! optional argument as a fixed one: on x86-64 and aarch64 Linux a variadic
//! integer argument travels exactly like a fixed one, and the handlers read
//! it only when the flags say it is there.

#![allow(clippy::missing_safety_doc, clippy::too_many_arguments)]

pub use libc::{
    c_char, c_int, c_uint, c_ulong, c_void, dev_t, dirent, dirent64, gid_t, iovec, mode_t, off64_t,
    off_t, size_t, ssize_t, timespec, timeval, uid_t, utimbuf, DIR, FILE,
};

/// `struct stat`, as the hook list names it.
pub type Stat = libc::stat;
/// `struct stat64`.
pub type Stat64 = libc::stat64;
/// `struct statx`.
pub type Statx = libc::statx;
/// `struct statfs`.
pub type StatFs = libc::statfs;
/// `struct statfs64`.
pub type StatFs64 = libc::statfs64;
/// `struct statvfs`.
pub type StatVfs = libc::statvfs;
/// `struct statvfs64`.
pub type StatVfs64 = libc::statvfs64;
/// `struct aiocb` (the same layout as `struct aiocb64` on 64-bit Linux).
pub type Aiocb = libc::aiocb;
/// `struct sigevent`.
pub type SigEvent = libc::sigevent;
/// `struct timespec`.
pub type Timespec = libc::timespec;

/// Calls `$callback!` with every hooked function, one per line:
/// `fn name(args) -> ret => handler;`.
macro_rules! hooked_functions {
    ($callback:ident) => {
        $callback! {
            /// `open(2)`.
            fn open(path: *const c_char, flags: c_int, mode: mode_t) -> c_int => posix::open;
            /// `open64`, the large-file `open`.
            fn open64(path: *const c_char, flags: c_int, mode: mode_t) -> c_int => posix::open;
            /// `open` as called by `-D_FORTIFY_SOURCE` programs without a mode.
            fn __open_2(path: *const c_char, flags: c_int) -> c_int => posix::open_2;
            /// `open64` as called by fortified programs.
            fn __open64_2(path: *const c_char, flags: c_int) -> c_int => posix::open_2;
            /// `openat(2)`.
            fn openat(dirfd: c_int, path: *const c_char, flags: c_int, mode: mode_t) -> c_int => posix::openat;
            /// `openat64`.
            fn openat64(dirfd: c_int, path: *const c_char, flags: c_int, mode: mode_t) -> c_int => posix::openat;
            /// `openat` as called by fortified programs.
            fn __openat_2(dirfd: c_int, path: *const c_char, flags: c_int) -> c_int => posix::openat_2;
            /// `openat64` as called by fortified programs.
            fn __openat64_2(dirfd: c_int, path: *const c_char, flags: c_int) -> c_int => posix::openat_2;
            /// `creat(2)`.
            fn creat(path: *const c_char, mode: mode_t) -> c_int => posix::creat;
            /// `creat64`.
            fn creat64(path: *const c_char, mode: mode_t) -> c_int => posix::creat;

            /// `read(2)`.
            fn read(fd: c_int, buf: *mut c_void, count: size_t) -> ssize_t => posix::read;
            /// `read` as called by fortified programs.
            fn __read_chk(fd: c_int, buf: *mut c_void, count: size_t, buflen: size_t) -> ssize_t => posix::read_chk;
            /// `write(2)`.
            fn write(fd: c_int, buf: *const c_void, count: size_t) -> ssize_t => posix::write;
            /// `pread(2)`.
            fn pread(fd: c_int, buf: *mut c_void, count: size_t, offset: off_t) -> ssize_t => posix::pread;
            /// `pread64`.
            fn pread64(fd: c_int, buf: *mut c_void, count: size_t, offset: off64_t) -> ssize_t => posix::pread;
            /// `pread` as called by fortified programs.
            fn __pread_chk(fd: c_int, buf: *mut c_void, count: size_t, offset: off_t, buflen: size_t) -> ssize_t => posix::pread_chk;
            /// `pread64` as called by fortified programs.
            fn __pread64_chk(fd: c_int, buf: *mut c_void, count: size_t, offset: off64_t, buflen: size_t) -> ssize_t => posix::pread_chk;
            /// `pwrite(2)`.
            fn pwrite(fd: c_int, buf: *const c_void, count: size_t, offset: off_t) -> ssize_t => posix::pwrite;
            /// `pwrite64`.
            fn pwrite64(fd: c_int, buf: *const c_void, count: size_t, offset: off64_t) -> ssize_t => posix::pwrite;
            /// `readv(2)`.
            fn readv(fd: c_int, iov: *const iovec, iovcnt: c_int) -> ssize_t => posix::readv;
            /// `writev(2)`.
            fn writev(fd: c_int, iov: *const iovec, iovcnt: c_int) -> ssize_t => posix::writev;
            /// `preadv(2)`.
            fn preadv(fd: c_int, iov: *const iovec, iovcnt: c_int, offset: off_t) -> ssize_t => posix::preadv;
            /// `preadv64`.
            fn preadv64(fd: c_int, iov: *const iovec, iovcnt: c_int, offset: off64_t) -> ssize_t => posix::preadv;
            /// `pwritev(2)`.
            fn pwritev(fd: c_int, iov: *const iovec, iovcnt: c_int, offset: off_t) -> ssize_t => posix::pwritev;
            /// `pwritev64`.
            fn pwritev64(fd: c_int, iov: *const iovec, iovcnt: c_int, offset: off64_t) -> ssize_t => posix::pwritev;
            /// `preadv2(2)`.
            fn preadv2(fd: c_int, iov: *const iovec, iovcnt: c_int, offset: off_t, flags: c_int) -> ssize_t => posix::preadv2;
            /// `preadv64v2`.
            fn preadv64v2(fd: c_int, iov: *const iovec, iovcnt: c_int, offset: off64_t, flags: c_int) -> ssize_t => posix::preadv2;
            /// `pwritev2(2)`.
            fn pwritev2(fd: c_int, iov: *const iovec, iovcnt: c_int, offset: off_t, flags: c_int) -> ssize_t => posix::pwritev2;
            /// `pwritev64v2`.
            fn pwritev64v2(fd: c_int, iov: *const iovec, iovcnt: c_int, offset: off64_t, flags: c_int) -> ssize_t => posix::pwritev2;

            /// `lseek(2)`.
            fn lseek(fd: c_int, offset: off_t, whence: c_int) -> off_t => posix::lseek;
            /// `lseek64`.
            fn lseek64(fd: c_int, offset: off64_t, whence: c_int) -> off64_t => posix::lseek;
            /// `close(2)`.
            fn close(fd: c_int) -> c_int => posix::close;
            /// `close_range(2)`.
            fn close_range(first: c_uint, last: c_uint, flags: c_int) -> c_int => posix::close_range;
            /// `dup(2)`.
            fn dup(fd: c_int) -> c_int => posix::dup;
            /// `dup2(2)`.
            fn dup2(fd: c_int, target: c_int) -> c_int => posix::dup2;
            /// `dup3(2)`.
            fn dup3(fd: c_int, target: c_int, flags: c_int) -> c_int => posix::dup3;
            /// `fcntl(2)`.
            fn fcntl(fd: c_int, cmd: c_int, arg: c_ulong) -> c_int => posix::fcntl;
            /// `fcntl64`, what `-D_FILE_OFFSET_BITS=64` programs call.
            fn fcntl64(fd: c_int, cmd: c_int, arg: c_ulong) -> c_int => posix::fcntl;

            /// `fsync(2)`.
            fn fsync(fd: c_int) -> c_int => posix::fsync;
            /// `fdatasync(2)`.
            fn fdatasync(fd: c_int) -> c_int => posix::fdatasync;
            /// `ftruncate(2)`.
            fn ftruncate(fd: c_int, length: off_t) -> c_int => posix::ftruncate;
            /// `ftruncate64`.
            fn ftruncate64(fd: c_int, length: off64_t) -> c_int => posix::ftruncate;
            /// `fstat(2)`.
            fn fstat(fd: c_int, buf: *mut Stat) -> c_int => posix::fstat;
            /// `fstat64`.
            fn fstat64(fd: c_int, buf: *mut Stat64) -> c_int => posix::fstat;
            /// `stat(2)`.
            fn stat(path: *const c_char, buf: *mut Stat) -> c_int => posix::stat;
            /// `stat64`.
            fn stat64(path: *const c_char, buf: *mut Stat64) -> c_int => posix::stat;
            /// `lstat(2)`.
            fn lstat(path: *const c_char, buf: *mut Stat) -> c_int => posix::lstat;
            /// `lstat64`.
            fn lstat64(path: *const c_char, buf: *mut Stat64) -> c_int => posix::lstat;
            /// `fstatat(2)`.
            fn fstatat(dirfd: c_int, path: *const c_char, buf: *mut Stat, flags: c_int) -> c_int => posix::fstatat;
            /// `fstatat64`.
            fn fstatat64(dirfd: c_int, path: *const c_char, buf: *mut Stat64, flags: c_int) -> c_int => posix::fstatat;
            /// `statx(2)`.
            fn statx(dirfd: c_int, path: *const c_char, flags: c_int, mask: c_uint, buf: *mut Statx) -> c_int => posix::statx;
            /// `__fxstat`: `fstat` of programs built against glibc before 2.33.
            fn __fxstat(version: c_int, fd: c_int, buf: *mut Stat) -> c_int => posix::fxstat;
            /// `__fxstat64`.
            fn __fxstat64(version: c_int, fd: c_int, buf: *mut Stat64) -> c_int => posix::fxstat;
            /// `__xstat`: `stat` of programs built against glibc before 2.33.
            fn __xstat(version: c_int, path: *const c_char, buf: *mut Stat) -> c_int => posix::xstat;
            /// `__xstat64`.
            fn __xstat64(version: c_int, path: *const c_char, buf: *mut Stat64) -> c_int => posix::xstat;
            /// `__lxstat`: `lstat` of programs built against glibc before 2.33.
            fn __lxstat(version: c_int, path: *const c_char, buf: *mut Stat) -> c_int => posix::lxstat;
            /// `__lxstat64`.
            fn __lxstat64(version: c_int, path: *const c_char, buf: *mut Stat64) -> c_int => posix::lxstat;
            /// `__fxstatat`: `fstatat` of programs built against glibc before 2.33.
            fn __fxstatat(version: c_int, dirfd: c_int, path: *const c_char, buf: *mut Stat, flags: c_int) -> c_int => posix::fxstatat;
            /// `__fxstatat64`.
            fn __fxstatat64(version: c_int, dirfd: c_int, path: *const c_char, buf: *mut Stat64, flags: c_int) -> c_int => posix::fxstatat;
            /// `unlink(2)`.
            fn unlink(path: *const c_char) -> c_int => posix::unlink;
            /// `rename(2)`.
            fn rename(from: *const c_char, to: *const c_char) -> c_int => posix::rename;
            /// `renameat(2)`.
            fn renameat(from_dir: c_int, from: *const c_char, to_dir: c_int, to: *const c_char) -> c_int => names::renameat;
            /// `renameat2(2)`.
            fn renameat2(from_dir: c_int, from: *const c_char, to_dir: c_int, to: *const c_char, flags: c_uint) -> c_int => names::renameat2;
            /// `unlinkat(2)`, also `rmdir` with `AT_REMOVEDIR`.
            fn unlinkat(dirfd: c_int, path: *const c_char, flags: c_int) -> c_int => names::unlinkat;
            /// `remove(3)`: glibc's calls `unlink`/`rmdir` internally, past the hooks.
            fn remove(path: *const c_char) -> c_int => names::remove;
            /// `mkfifo(3)`: glibc's calls `mknodat` internally, past the hook.
            fn mkfifo(path: *const c_char, mode: mode_t) -> c_int => names::mkfifo;
            /// `mkfifoat(3)`.
            fn mkfifoat(dirfd: c_int, path: *const c_char, mode: mode_t) -> c_int => names::mkfifoat;
            /// `mkdir(2)`.
            fn mkdir(path: *const c_char, mode: mode_t) -> c_int => names::mkdir;
            /// `mkdirat(2)`.
            fn mkdirat(dirfd: c_int, path: *const c_char, mode: mode_t) -> c_int => names::mkdirat;
            /// `rmdir(2)`.
            fn rmdir(path: *const c_char) -> c_int => names::rmdir;
            /// `mknod(2)`.
            fn mknod(path: *const c_char, mode: mode_t, dev: dev_t) -> c_int => names::mknod;
            /// `mknodat(2)`.
            fn mknodat(dirfd: c_int, path: *const c_char, mode: mode_t, dev: dev_t) -> c_int => names::mknodat;
            /// `symlink(2)`.
            fn symlink(target: *const c_char, path: *const c_char) -> c_int => names::symlink;
            /// `symlinkat(2)`.
            fn symlinkat(target: *const c_char, dirfd: c_int, path: *const c_char) -> c_int => names::symlinkat;
            /// `link(2)`.
            fn link(from: *const c_char, to: *const c_char) -> c_int => names::link;
            /// `linkat(2)`.
            fn linkat(from_dir: c_int, from: *const c_char, to_dir: c_int, to: *const c_char, flags: c_int) -> c_int => names::linkat;
            /// `access(2)`.
            fn access(path: *const c_char, mode: c_int) -> c_int => names::access;
            /// `faccessat(2)`.
            fn faccessat(dirfd: c_int, path: *const c_char, mode: c_int, flags: c_int) -> c_int => names::faccessat;
            /// `eaccess(3)`: `access` with the effective ids.
            fn eaccess(path: *const c_char, mode: c_int) -> c_int => names::eaccess;
            /// `euidaccess(3)`, the same as `eaccess`.
            fn euidaccess(path: *const c_char, mode: c_int) -> c_int => names::eaccess;
            /// `chmod(2)`.
            fn chmod(path: *const c_char, mode: mode_t) -> c_int => names::chmod;
            /// `fchmod(2)`.
            fn fchmod(fd: c_int, mode: mode_t) -> c_int => names::fchmod;
            /// `fchmodat(2)`.
            fn fchmodat(dirfd: c_int, path: *const c_char, mode: mode_t, flags: c_int) -> c_int => names::fchmodat;
            /// `chown(2)`.
            fn chown(path: *const c_char, owner: uid_t, group: gid_t) -> c_int => names::chown;
            /// `lchown(2)`.
            fn lchown(path: *const c_char, owner: uid_t, group: gid_t) -> c_int => names::lchown;
            /// `fchown(2)`.
            fn fchown(fd: c_int, owner: uid_t, group: gid_t) -> c_int => names::fchown;
            /// `fchownat(2)`.
            fn fchownat(dirfd: c_int, path: *const c_char, owner: uid_t, group: gid_t, flags: c_int) -> c_int => names::fchownat;
            /// `utime(2)`.
            fn utime(path: *const c_char, times: *const utimbuf) -> c_int => names::utime;
            /// `utimes(2)`.
            fn utimes(path: *const c_char, times: *const timeval) -> c_int => names::utimes;
            /// `utimensat(2)`.
            fn utimensat(dirfd: c_int, path: *const c_char, times: *const timespec, flags: c_int) -> c_int => names::utimensat;
            /// `futimens(3)`.
            fn futimens(fd: c_int, times: *const timespec) -> c_int => names::futimens;
            /// `truncate(2)`.
            fn truncate(path: *const c_char, length: off_t) -> c_int => names::truncate;
            /// `truncate64`.
            fn truncate64(path: *const c_char, length: off64_t) -> c_int => names::truncate;

            /// `flock(2)`: taken once, by the leader, on a managed descriptor.
            fn flock(fd: c_int, operation: c_int) -> c_int => locks::flock;
            /// `lockf(3)`: glibc's calls `fcntl` internally, past the hook.
            fn lockf(fd: c_int, cmd: c_int, len: off_t) -> c_int => locks::lockf;
            /// `lockf64`.
            fn lockf64(fd: c_int, cmd: c_int, len: off64_t) -> c_int => locks::lockf;

            /// `opendir(3)`: a shared directory is listed by the leader.
            fn opendir(path: *const c_char) -> *mut DIR => dirs::opendir;
            /// `fdopendir(3)`.
            fn fdopendir(fd: c_int) -> *mut DIR => dirs::fdopendir;
            /// `readdir(3)`.
            fn readdir(dir: *mut DIR) -> *mut dirent => dirs::readdir;
            /// `readdir64`.
            fn readdir64(dir: *mut DIR) -> *mut dirent64 => dirs::readdir64;
            /// `rewinddir(3)`.
            fn rewinddir(dir: *mut DIR) -> () => dirs::rewinddir;
            /// `closedir(3)`.
            fn closedir(dir: *mut DIR) -> c_int => dirs::closedir;

            /// `fopen(3)`.
            fn fopen(path: *const c_char, mode: *const c_char) -> *mut FILE => stdio::fopen;
            /// `fopen64`.
            fn fopen64(path: *const c_char, mode: *const c_char) -> *mut FILE => stdio::fopen;
            /// `fdopen(3)`.
            fn fdopen(fd: c_int, mode: *const c_char) -> *mut FILE => stdio::fdopen;
            /// `freopen(3)`.
            fn freopen(path: *const c_char, mode: *const c_char, stream: *mut FILE) -> *mut FILE => stdio::freopen;
            /// `freopen64`.
            fn freopen64(path: *const c_char, mode: *const c_char, stream: *mut FILE) -> *mut FILE => stdio::freopen;
            /// `fclose(3)`.
            fn fclose(stream: *mut FILE) -> c_int => stdio::fclose;
            /// `fileno(3)`: the managed descriptor of a managed stream.
            fn fileno(stream: *mut FILE) -> c_int => stdio::fileno;
            /// `fileno_unlocked`.
            fn fileno_unlocked(stream: *mut FILE) -> c_int => stdio::fileno;
            /// `fflush(3)`.
            fn fflush(stream: *mut FILE) -> c_int => stdio::fflush;

            /// `statfs(2)`, on the remapped path.
            fn statfs(path: *const c_char, buf: *mut StatFs) -> c_int => fsinfo::statfs;
            /// `statfs64`.
            fn statfs64(path: *const c_char, buf: *mut StatFs64) -> c_int => fsinfo::statfs;
            /// `statvfs(3)`, on the remapped path.
            fn statvfs(path: *const c_char, buf: *mut StatVfs) -> c_int => fsinfo::statfs;
            /// `statvfs64`.
            fn statvfs64(path: *const c_char, buf: *mut StatVfs64) -> c_int => fsinfo::statfs;

            /// `aio_read(3)`: done at once on coordinated files.
            fn aio_read(block: *mut Aiocb) -> c_int => aio::aio_read;
            /// `aio_read64`.
            fn aio_read64(block: *mut Aiocb) -> c_int => aio::aio_read;
            /// `aio_write(3)`: done at once on coordinated files.
            fn aio_write(block: *mut Aiocb) -> c_int => aio::aio_write;
            /// `aio_write64`.
            fn aio_write64(block: *mut Aiocb) -> c_int => aio::aio_write;
            /// `aio_fsync(3)`.
            fn aio_fsync(operation: c_int, block: *mut Aiocb) -> c_int => aio::aio_fsync;
            /// `aio_fsync64`.
            fn aio_fsync64(operation: c_int, block: *mut Aiocb) -> c_int => aio::aio_fsync;
            /// `aio_error(3)`.
            fn aio_error(block: *const Aiocb) -> c_int => aio::aio_error;
            /// `aio_error64`.
            fn aio_error64(block: *const Aiocb) -> c_int => aio::aio_error;
            /// `aio_return(3)`.
            fn aio_return(block: *mut Aiocb) -> ssize_t => aio::aio_return;
            /// `aio_return64`.
            fn aio_return64(block: *mut Aiocb) -> ssize_t => aio::aio_return;
            /// `aio_suspend(3)`.
            fn aio_suspend(list: *const *const Aiocb, count: c_int, timeout: *const Timespec) -> c_int => aio::aio_suspend;
            /// `aio_suspend64`.
            fn aio_suspend64(list: *const *const Aiocb, count: c_int, timeout: *const Timespec) -> c_int => aio::aio_suspend;
            /// `aio_cancel(3)`.
            fn aio_cancel(fd: c_int, block: *mut Aiocb) -> c_int => aio::aio_cancel;
            /// `aio_cancel64`.
            fn aio_cancel64(fd: c_int, block: *mut Aiocb) -> c_int => aio::aio_cancel;
            /// `lio_listio(3)`.
            fn lio_listio(mode: c_int, list: *const *mut Aiocb, count: c_int, event: *mut SigEvent) -> c_int => aio::lio_listio;
            /// `lio_listio64`.
            fn lio_listio64(mode: c_int, list: *const *mut Aiocb, count: c_int, event: *mut SigEvent) -> c_int => aio::lio_listio;

            /// `mmap(2)`: refused on managed files.
            fn mmap(addr: *mut c_void, len: size_t, prot: c_int, flags: c_int, fd: c_int, offset: off_t) -> *mut c_void => unsupported::mmap;
            /// `mmap64`: refused on managed files.
            fn mmap64(addr: *mut c_void, len: size_t, prot: c_int, flags: c_int, fd: c_int, offset: off64_t) -> *mut c_void => unsupported::mmap;
            /// `sendfile(2)`: refused on managed files.
            fn sendfile(out_fd: c_int, in_fd: c_int, offset: *mut off_t, count: size_t) -> ssize_t => unsupported::sendfile;
            /// `sendfile64`: refused on managed files.
            fn sendfile64(out_fd: c_int, in_fd: c_int, offset: *mut off64_t, count: size_t) -> ssize_t => unsupported::sendfile;
            /// `copy_file_range(2)`: refused on managed files.
            fn copy_file_range(fd_in: c_int, off_in: *mut off64_t, fd_out: c_int, off_out: *mut off64_t, len: size_t, flags: c_uint) -> ssize_t => unsupported::copy_file_range;
            /// `splice(2)`: refused on managed files.
            fn splice(fd_in: c_int, off_in: *mut off64_t, fd_out: c_int, off_out: *mut off64_t, len: size_t, flags: c_uint) -> ssize_t => unsupported::splice;
        }
    };
}
pub(crate) use hooked_functions;

/// Defines `real::name` for every hooked function.
macro_rules! real_functions {
    ($(
        $(#[$meta:meta])*
        fn $name:ident($($arg:ident: $ty:ty),* $(,)?) -> $ret:ty => $handler:path;
    )*) => {
        /// One cached address per function.
        #[allow(non_upper_case_globals)]
        mod slot {
            use std::sync::atomic::AtomicUsize;
            $(pub static $name: AtomicUsize = AtomicUsize::new(0);)*
        }

        /// The NUL-terminated name of a function, for `dlsym`.
        macro_rules! symbol {
            ($symbol:ident) => {
                match std::ffi::CStr::from_bytes_with_nul(
                    concat!(stringify!($symbol), "\0").as_bytes(),
                ) {
                    Ok(name) => name,
                    Err(_) => unreachable!(),
                }
            };
        }

        $(
            /// The C library's own function of this name.
            #[inline]
            pub unsafe fn $name($($arg: $ty),*) -> $ret {
                // A constant: the name is checked at compile time, not per call.
                const NAME: &std::ffi::CStr = symbol!($name);
                let f: unsafe extern "C" fn($($ty),*) -> $ret = std::mem::transmute(
                    crate::sys::symbols::resolve(&slot::$name, NAME),
                );
                f($($arg),*)
            }
        )*

        /// Resolves every real function now, so that no `dlsym` runs
        /// later in a hot path or a signal-sensitive moment.
        pub fn resolve_all() {
            $(crate::sys::symbols::try_resolve(&slot::$name, symbol!($name));)*
        }
    };
}

hooked_functions!(real_functions);

/// Resolves every real function when the library is loaded, before the
/// application's `main`. (Hooks that fire even earlier, from other
/// libraries' constructors, resolve their function on first use.)
#[used]
#[link_section = ".init_array"]
static RESOLVE_AT_LOAD: extern "C" fn() = {
    extern "C" fn resolve_at_load() {
        resolve_all();
    }
    resolve_at_load
};
