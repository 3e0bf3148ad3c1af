//! Handlers of the lock calls on descriptors: `flock`, `lockf` and the
//! `fcntl` lock commands (`F_SETLK`, `F_SETLKW`, `F_GETLK` and their
//! `F_OFD_*` variants). On a managed descriptor the leader takes (or
//! tests, or drops) the lock on its own descriptor and every replica
//! returns its answer ([`crate::coord::lock`]); others pass through.
//!
//! Regions relative to the file offset (`lockf`, `l_whence = SEEK_CUR`)
//! start at the application's offset: redio keeps it itself and reads and
//! writes at explicit offsets, so the leader moves its real descriptor's
//! offset there first (nothing else uses that offset).
//!
//! # Safety (every handler)
//! A handler is called only by its hook in [`crate::exports::hooks`], with the
//! arguments the C caller passed: its contract is that of the C function.

#![allow(clippy::missing_safety_doc)]

use crate::coord::file::SharedFile;
use crate::coord::lock::{self, LockCall};
use crate::io::dispatch::on_file;
use crate::sys::errno::set_errno;
use crate::sys::real;
use libc::{c_int, c_ulong};

fn value(outcome: Result<c_int, c_int>) -> c_int {
    match outcome {
        Ok(value) => value,
        Err(errno) => {
            set_errno(errno);
            -1
        }
    }
}

/// Moves `fd`'s real offset to the application's offset of `file`, for a
/// lock relative to it.
unsafe fn seek_to_position(fd: c_int, file: &SharedFile) {
    real::lseek64(fd, file.position() as i64, libc::SEEK_SET);
}

/// `fcntl(fd, cmd, struct flock *)` for a lock command `kind` (see
/// [`lock::fcntl_lock`]); called by [`crate::io::posix::fcntl`].
pub unsafe fn fcntl(
    real: unsafe fn(c_int, c_int, c_ulong) -> c_int,
    fd: c_int,
    cmd: c_int,
    arg: c_ulong,
    kind: LockCall,
) -> c_int {
    if arg == 0 {
        // EFAULT, from the kernel.
        return real(fd, cmd, arg);
    }
    let flock = arg as *mut libc::flock;
    on_file(
        "fcntl",
        fd,
        |file| {
            let region = *flock;
            let relative = c_int::from(region.l_whence) == libc::SEEK_CUR;
            let from = if relative { file.position() } else { 0 };
            // The command, the region and its type are announced: replicas
            // asking for different locks diverge.
            let args = (
                ((cmd as u64) << 32)
                    | ((region.l_type as u16 as u64) << 16)
                    | region.l_whence as u16 as u64,
                (region.l_start as u64).wrapping_add(from) ^ (region.l_len as u64).rotate_left(32),
            );
            value(lock::on_leader(
                "fcntl",
                file,
                args,
                kind,
                Some((flock.cast(), std::mem::size_of::<libc::flock>())),
                |local| {
                    if relative {
                        seek_to_position(fd, file);
                    }
                    real(fd, cmd, local as c_ulong)
                },
            ))
        },
        || real(fd, cmd, arg),
    )
}

/// `flock`.
pub unsafe fn flock(real: unsafe fn(c_int, c_int) -> c_int, fd: c_int, operation: c_int) -> c_int {
    on_file(
        "flock",
        fd,
        |file| {
            value(lock::on_leader(
                "flock",
                file,
                (operation as u64, 0),
                lock::flock_call(operation),
                None,
                |_| real(fd, operation),
            ))
        },
        || real(fd, operation),
    )
}

/// `lockf`, `lockf64`: a region from the application's file offset.
pub unsafe fn lockf(
    real: unsafe fn(c_int, c_int, i64) -> c_int,
    fd: c_int,
    cmd: c_int,
    len: i64,
) -> c_int {
    on_file(
        "lockf",
        fd,
        |file| {
            value(lock::on_leader(
                "lockf",
                file,
                ((cmd as u64) << 32 | file.position(), len as u64),
                lock::lockf_call(cmd),
                None,
                |_| {
                    seek_to_position(fd, file);
                    real(fd, cmd, len)
                },
            ))
        },
        || real(fd, cmd, len),
    )
}
