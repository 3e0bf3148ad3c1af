//! POSIX asynchronous I/O (`aio_*`, `lio_listio`) on coordinated files.
//!
//! MPI-IO's nonblocking calls (`MPI_File_iwrite*`, `MPI_File_iread*`) reach
//! the file system through `aio_write`/`aio_read` in both ROMIO and OMPIO.
//! glibc runs those on a helper thread that calls the kernel directly, out
//! of the hooks' sight: every replica would write. On a coordinated file the
//! request is therefore done at once, as the coordinated `pwrite`/`pread`
//! it stands for, and its result is kept until `aio_return` collects it.
//! The application sees a request that completed immediately, which POSIX
//! allows. Requests on other files go to the C library untouched.
//!
//! A completion signal (`SIGEV_SIGNAL`, which ROMIO asks for) is queued to
//! the process once the result is recorded, with the request's value (its
//! `si_code` is `SI_QUEUE`, not `SI_ASYNCIO`). A notification by thread
//! (`SIGEV_THREAD`, `SIGEV_THREAD_ID`) on a coordinated file is refused with
//! `ENOTSUP` and a log line: neither MPI library asks for one.
//!
//! # Safety (every handler)
//! A handler is called only by its hook in [`crate::exports::hooks`], with the
//! arguments the C caller passed: its contract is that of the C function.

#![allow(clippy::missing_safety_doc)]

use crate::coord::table;
use crate::io::{posix, route};
use crate::sys::errno::{errno, set_errno};
use crate::sys::real::{self, Aiocb};
use libc::{c_int, c_void, sigevent, ssize_t, timespec};
use std::sync::Mutex;

/// A request done at submission: its control block's address, what the
/// transfer returned, and its error (0 for success).
#[derive(Clone, Copy)]
struct Done {
    block: usize,
    result: ssize_t,
    error: c_int,
}

/// Requests done at submission whose result was not collected yet.
static DONE: Mutex<Vec<Done>> = Mutex::new(Vec::new());

fn done() -> std::sync::MutexGuard<'static, Vec<Done>> {
    DONE.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn find(block: *const Aiocb) -> Option<Done> {
    done().iter().find(|d| d.block == block as usize).copied()
}

/// Forgets an earlier request of the same control block: a block may be
/// reused once its result was collected, or abandoned.
fn forget(block: *const Aiocb) {
    done().retain(|d| d.block != block as usize);
}

/// True when `fd` is a coordinated file and this call may coordinate.
fn coordinated(fd: c_int) -> bool {
    table::get(fd).is_some() && route::enter().is_ok()
}

/// A notification redio cannot deliver (by thread).
fn unsupported_notification(event: &sigevent) -> bool {
    event.sigev_notify != libc::SIGEV_NONE && event.sigev_notify != libc::SIGEV_SIGNAL
}

/// Delivers a completion signal, if the request asked for one.
fn notify(event: &sigevent) {
    if event.sigev_notify == libc::SIGEV_SIGNAL {
        // SAFETY: queues a signal to this process, as the C library would.
        unsafe { libc::sigqueue(libc::getpid(), event.sigev_signo, event.sigev_value) };
    }
}

/// Refuses (`ENOTSUP`, with a log line) a request on a coordinated file
/// that asks for a notification redio cannot deliver.
fn refuses_notification(cb: &Aiocb) -> bool {
    if !unsupported_notification(&cb.aio_sigevent) {
        return false;
    }
    crate::log!(
        Error,
        "asynchronous I/O with a completion notification by thread on a coordinated \
         shared file (descriptor {}): not supported (ENOTSUP)",
        cb.aio_fildes
    );
    set_errno(libc::ENOTSUP);
    true
}

/// The transfer a control block asks for, done now through the hooks'
/// coordinated path. `opcode` is `LIO_READ` or `LIO_WRITE`.
unsafe fn transfer_now(block: *mut Aiocb, opcode: c_int) -> c_int {
    let cb = &*block;
    if refuses_notification(cb) {
        return -1;
    }
    let offset = cb.aio_offset;
    let result = if opcode == libc::LIO_WRITE {
        posix::pwrite(
            real::pwrite64,
            cb.aio_fildes,
            cb.aio_buf as *const c_void,
            cb.aio_nbytes,
            offset,
        )
    } else {
        posix::pread(
            real::pread64,
            cb.aio_fildes,
            cb.aio_buf,
            cb.aio_nbytes,
            offset,
        )
    };
    record(block, result);
    notify(&cb.aio_sigevent);
    0
}

fn record(block: *const Aiocb, result: ssize_t) {
    let error = if result < 0 { errno() } else { 0 };
    let mut list = done();
    list.retain(|d| d.block != block as usize);
    list.push(Done {
        block: block as usize,
        result,
        error,
    });
}

/// `aio_read`, `aio_read64`.
pub unsafe fn aio_read(real: unsafe fn(*mut Aiocb) -> c_int, block: *mut Aiocb) -> c_int {
    forget(block);
    if block.is_null() || !coordinated((*block).aio_fildes) {
        return real(block);
    }
    transfer_now(block, libc::LIO_READ)
}

/// `aio_write`, `aio_write64`.
pub unsafe fn aio_write(real: unsafe fn(*mut Aiocb) -> c_int, block: *mut Aiocb) -> c_int {
    forget(block);
    if block.is_null() || !coordinated((*block).aio_fildes) {
        return real(block);
    }
    transfer_now(block, libc::LIO_WRITE)
}

/// `aio_fsync`, `aio_fsync64`: the coordinated `fsync`/`fdatasync`, now.
pub unsafe fn aio_fsync(
    real: unsafe fn(c_int, *mut Aiocb) -> c_int,
    operation: c_int,
    block: *mut Aiocb,
) -> c_int {
    forget(block);
    if block.is_null() || !coordinated((*block).aio_fildes) {
        return real(operation, block);
    }
    if refuses_notification(&*block) {
        return -1;
    }
    let fd = (*block).aio_fildes;
    let result = if operation == libc::O_DSYNC {
        posix::fdatasync(real::fdatasync, fd)
    } else {
        posix::fsync(real::fsync, fd)
    };
    record(block, result as ssize_t);
    notify(&(*block).aio_sigevent);
    0
}

/// `aio_error`, `aio_error64`.
pub unsafe fn aio_error(real: unsafe fn(*const Aiocb) -> c_int, block: *const Aiocb) -> c_int {
    match find(block) {
        Some(request) => request.error,
        None => real(block),
    }
}

/// `aio_return`, `aio_return64`: collects (and forgets) the result.
pub unsafe fn aio_return(real: unsafe fn(*mut Aiocb) -> ssize_t, block: *mut Aiocb) -> ssize_t {
    match find(block) {
        Some(request) => {
            forget(block);
            if request.result < 0 {
                set_errno(request.error);
            }
            request.result
        }
        None => real(block),
    }
}

/// `aio_suspend`, `aio_suspend64`: returns at once when one of the requests
/// is one redio completed.
pub unsafe fn aio_suspend(
    real: unsafe fn(*const *const Aiocb, c_int, *const timespec) -> c_int,
    list: *const *const Aiocb,
    count: c_int,
    timeout: *const timespec,
) -> c_int {
    if !list.is_null() && count > 0 {
        let blocks = std::slice::from_raw_parts(list, count as usize);
        if blocks.iter().any(|&b| !b.is_null() && find(b).is_some()) {
            return 0;
        }
    }
    real(list, count, timeout)
}

/// `aio_cancel`, `aio_cancel64`: a request redio completed is "all done".
pub unsafe fn aio_cancel(
    real: unsafe fn(c_int, *mut Aiocb) -> c_int,
    fd: c_int,
    block: *mut Aiocb,
) -> c_int {
    if !block.is_null() && find(block).is_some() {
        return libc::AIO_ALLDONE;
    }
    real(fd, block)
}

/// `lio_listio`, `lio_listio64`: requests on coordinated files are done
/// now, the others are handed to the C library in one call.
pub unsafe fn lio_listio(
    real: unsafe fn(c_int, *const *mut Aiocb, c_int, *mut sigevent) -> c_int,
    mode: c_int,
    list: *const *mut Aiocb,
    count: c_int,
    event: *mut sigevent,
) -> c_int {
    if list.is_null() || count <= 0 {
        return real(mode, list, count, event);
    }
    let blocks = std::slice::from_raw_parts(list, count as usize);
    let ours = |b: *mut Aiocb| !b.is_null() && coordinated((*b).aio_fildes);
    if !blocks.iter().any(|&b| ours(b)) {
        return real(mode, list, count, event);
    }
    if mode == libc::LIO_NOWAIT && !event.is_null() && unsupported_notification(&*event) {
        crate::log!(
            Error,
            "lio_listio with a completion notification by thread on a coordinated shared \
             file: not supported (ENOTSUP)"
        );
        set_errno(libc::ENOTSUP);
        return -1;
    }
    let mut others: Vec<*mut Aiocb> = Vec::with_capacity(blocks.len());
    let mut failed = false;
    for &block in blocks {
        if block.is_null() {
            continue;
        }
        forget(block);
        if !ours(block) {
            others.push(block);
            continue;
        }
        match (*block).aio_lio_opcode {
            libc::LIO_NOP => {}
            opcode => {
                failed |=
                    transfer_now(block, opcode) != 0 || find(block).is_some_and(|d| d.error != 0);
            }
        }
    }
    let rest = if others.is_empty() {
        if mode == libc::LIO_NOWAIT && !event.is_null() {
            notify(&*event);
        }
        0
    } else {
        real(mode, others.as_ptr(), others.len() as c_int, event)
    };
    if failed && mode == libc::LIO_WAIT {
        set_errno(libc::EIO);
        return -1;
    }
    rest
}
