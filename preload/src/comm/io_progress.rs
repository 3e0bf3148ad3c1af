//! Keeps Open MPI's file-I/O progress from running inside itself.
//!
//! OMPIO (Open MPI's MPI-IO) completes nonblocking file requests
//! (`MPI_File_i*`) in a callback of Open MPI's progress engine,
//! `mca_common_ompio_progress`, which is not re-entrant: it asks each
//! pending request's progress function whether it is done, and completes
//! the request when it is. That progress function calls `fcntl` (Open MPI 5
//! releases the region lock it took for the request) and `aio_write` /
//! `aio_read` (the next batch of a request of more than 2048 pieces). Under
//! redundancy redio coordinates those calls with the other replicas through
//! `PMPI_*`, and every MPI call runs the progress engine again: the inner
//! run completes the same request, and the outer one then completes it a
//! second time and crashes (`SIGSEGV` at address 0x1 in
//! `mca_common_ompio_progress`, under `MPI_Waitall`: docs/io-stacks.md).
//!
//! So while redio communicates inside an MPI-IO call or a call that
//! completes requests, OMPIO's callback is taken out of the progress engine
//! ([`pause`]) and put back afterwards: OMPIO's requests progress on the
//! next turn of the engine instead. MPICH's ROMIO polls its requests with
//! `aio_error`/`aio_return` only, which redio answers locally: nothing to
//! do there.

use crate::sys::symbols;
use std::cell::Cell;
use std::ffi::c_int;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;

/// `opal_progress_register` / `opal_progress_unregister`.
type Registration = unsafe extern "C" fn(usize) -> c_int;

/// Open MPI's `OPAL_SUCCESS`.
const OPAL_SUCCESS: c_int = 0;

/// The functions a pause needs, found once OMPIO is loaded.
#[derive(Clone, Copy)]
struct Engine {
    callback: usize,
    register: Registration,
    unregister: Registration,
}

static ENGINE: OnceLock<Engine> = OnceLock::new();
/// The number of loaded objects when a lookup last found nothing (OMPIO
/// is a component Open MPI 4.1 loads at the first `MPI_File_open`).
static MISSED_AT: AtomicUsize = AtomicUsize::new(usize::MAX);

fn engine() -> Option<Engine> {
    if cfg!(redio_mpi = "mpich") {
        return None;
    }
    if let Some(engine) = ENGINE.get() {
        return Some(*engine);
    }
    let objects = symbols::loaded_object_count();
    if MISSED_AT.load(Ordering::Relaxed) == objects {
        return None;
    }
    let found = (|| {
        Some((
            symbols::lookup_loaded(c"mca_common_ompio_progress")?,
            symbols::lookup_loaded(c"opal_progress_register")?,
            symbols::lookup_loaded(c"opal_progress_unregister")?,
        ))
    })();
    let Some((callback, register, unregister)) = found else {
        MISSED_AT.store(objects, Ordering::Relaxed);
        return None;
    };
    // SAFETY: dlsym's answers for these functions, whose C signature is
    // `int f(int (*)(void))`.
    let engine = unsafe {
        Engine {
            callback,
            register: std::mem::transmute::<usize, Registration>(register),
            unregister: std::mem::transmute::<usize, Registration>(unregister),
        }
    };
    Some(*ENGINE.get_or_init(|| engine))
}

thread_local! {
    /// Pauses in force on this thread (they nest: fail-over opens a new
    /// link while the old one is still held).
    static DEPTH: Cell<u32> = const { Cell::new(0) };
    /// Whether the outermost pause took the callback out.
    static TAKEN_OUT: Cell<bool> = const { Cell::new(false) };
}

/// While it lives, OMPIO's progress callback is out of Open MPI's progress
/// engine (if it was in it).
pub struct Paused(());

/// Takes OMPIO's progress callback out of the progress engine until the
/// returned guard is dropped. Does nothing under MPICH, before OMPIO is
/// loaded, or when the callback is not registered.
pub fn pause() -> Paused {
    let depth = DEPTH.with(|d| d.replace(d.get() + 1));
    if depth == 0 {
        let taken_out = engine().is_some_and(|e| {
            // SAFETY: Open MPI's own function, with a callback it registered.
            unsafe { (e.unregister)(e.callback) == OPAL_SUCCESS }
        });
        TAKEN_OUT.with(|t| t.set(taken_out));
    }
    Paused(())
}

impl Drop for Paused {
    fn drop(&mut self) {
        let depth = DEPTH.with(|d| {
            d.set(d.get() - 1);
            d.get()
        });
        if depth == 0 && TAKEN_OUT.with(|t| t.replace(false)) {
            if let Some(e) = ENGINE.get() {
                // SAFETY: puts back the callback the pause took out.
                if unsafe { (e.register)(e.callback) } != OPAL_SUCCESS {
                    crate::log!(
                        Error,
                        "could not give OMPIO's progress callback back to Open MPI: \
                         nonblocking MPI-IO requests may not complete"
                    );
                }
            }
        }
    }
}
