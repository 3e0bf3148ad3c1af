//! Which calls redio coordinates, and the named reason why the others pass
//! through untouched.
//!
//! A call is coordinated only when all of these hold: this process is an MPI
//! rank between `MPI_Init` and `MPI_Finalize`; the thread is not inside an
//! MPI call nor already inside redio; and the file is a managed one (a
//! shared-file-system path, or a descriptor opened from one).

use crate::runtime::{guard::InsideMpi, log};
use std::cell::Cell;
use std::sync::atomic::{AtomicI32, AtomicU8, Ordering};

/// Why a call passes through to the C library untouched.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Bypass {
    /// Before `MPI_Init` (or after `MPI_Finalize`).
    NotInitialised,
    /// A child process (`fork`, `system`): not an MPI rank.
    NotRank,
    /// Called by the MPI library itself.
    InsideMpi,
    /// Called by redio itself, while it handles another call.
    ReEntered,
    /// `/proc`, `/sys`, `/dev`, `/run`: never managed.
    System,
    /// A node-local path (perhaps remapped per replica).
    NodeLocal,
    /// A shared path whose read and write protocols are both `none`: every
    /// replica does its own I/O, as if redio were not there.
    ProtocolNone,
    /// A descriptor or stream redio did not open from a shared path.
    Unmanaged,
}

#[derive(Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
enum State {
    Before = 0,
    Active = 1,
    Finished = 2,
    Child = 3,
}

static STATE: AtomicU8 = AtomicU8::new(State::Before as u8);
/// Kernel thread id of the thread that called `MPI_Init`.
static MAIN_THREAD: AtomicI32 = AtomicI32::new(0);

thread_local! {
    // Const-initialised, no destructor (see runtime::guard).
    static IN_REDIO: Cell<bool> = const { Cell::new(false) };
}

/// Starts coordinating (end of `MPI_Init`); the calling thread is the one
/// whose shared-file I/O is coordinated.
pub fn activate() {
    // SAFETY: gettid has no preconditions.
    MAIN_THREAD.store(unsafe { libc::gettid() }, Ordering::Relaxed);
    STATE.store(State::Active as u8, Ordering::Release);
    // A forked child is not a rank: everything it does passes through.
    extern "C" fn in_child() {
        STATE.store(State::Child as u8, Ordering::Release);
    }
    // SAFETY: registering a handler that only stores an atomic.
    unsafe { libc::pthread_atfork(None, None, Some(in_child)) };
}

/// Stops coordinating (in `MPI_Finalize`, after managed streams are flushed).
pub fn finish() {
    STATE.store(State::Finished as u8, Ordering::Release);
}

/// True while calls may be coordinated at all.
#[inline]
pub fn active() -> bool {
    STATE.load(Ordering::Acquire) == State::Active as u8
}

/// True when the calling thread is the one that called `MPI_Init`.
pub fn on_main_thread() -> bool {
    // SAFETY: gettid has no preconditions.
    (unsafe { libc::gettid() }) == MAIN_THREAD.load(Ordering::Relaxed)
}

/// Proof that the current thread is inside redio: while it lives, every
/// hooked call made by this thread passes through ([`Bypass::ReEntered`]).
pub struct Entered(());

impl Drop for Entered {
    fn drop(&mut self) {
        IN_REDIO.with(|flag| flag.set(false));
    }
}

/// Enters redio for one call, or says why the call must pass through.
#[inline]
pub fn enter() -> Result<Entered, Bypass> {
    match STATE.load(Ordering::Acquire) {
        s if s == State::Active as u8 => {}
        s if s == State::Child as u8 => return Err(Bypass::NotRank),
        _ => return Err(Bypass::NotInitialised),
    }
    if InsideMpi::active() {
        return Err(Bypass::InsideMpi);
    }
    if IN_REDIO.with(|flag| flag.replace(true)) {
        return Err(Bypass::ReEntered);
    }
    Ok(Entered(()))
}

/// Runs `f` with the current thread marked as inside redio, so that the
/// C library calls `f` makes (through `std`, say) pass through.
pub fn inside<T>(f: impl FnOnce() -> T) -> T {
    let was = IN_REDIO.with(|flag| flag.replace(true));
    let result = f();
    IN_REDIO.with(|flag| flag.set(was));
    result
}

/// Logs a pass-through at debug level (trace level for descriptors redio
/// does not manage, which is nearly every call).
pub fn log_bypass(call: &str, reason: Bypass, what: &dyn std::fmt::Display) {
    let level = if reason == Bypass::Unmanaged {
        log::Level::Trace
    } else {
        log::Level::Debug
    };
    if log::enabled(level) {
        log::write(
            level,
            format_args!("{call}({what}) passes through: {reason:?}"),
        );
    }
}
