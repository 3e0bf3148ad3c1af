//! The phase of this process, one explicit machine:
//! `Before` → `Active` (end of `MPI_Init`) → `Finished` (`MPI_Finalize`);
//! `Child` in a forked child at any time. Shared files are coordinated only
//! while `Active`.

use std::sync::atomic::{AtomicI32, AtomicU8, Ordering};

/// Where this process is in its life.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Phase {
    /// Before the end of `MPI_Init`: nothing is coordinated yet.
    Before = 0,
    /// Between `MPI_Init` and `MPI_Finalize`: shared files are coordinated.
    Active = 1,
    /// After `MPI_Finalize`: nothing is coordinated any more.
    Finished = 2,
    /// A forked child: not a rank, everything passes through.
    Child = 3,
}

static PHASE: AtomicU8 = AtomicU8::new(Phase::Before as u8);
static MAIN_THREAD: AtomicI32 = AtomicI32::new(0);

/// The current phase.
#[inline]
pub fn current() -> Phase {
    match PHASE.load(Ordering::Acquire) {
        1 => Phase::Active,
        2 => Phase::Finished,
        3 => Phase::Child,
        _ => Phase::Before,
    }
}

/// `Before` → `Active`, on the thread that called `MPI_Init`.
pub fn activate() {
    // SAFETY: gettid has no preconditions.
    MAIN_THREAD.store(unsafe { libc::gettid() }, Ordering::Relaxed);
    PHASE.store(Phase::Active as u8, Ordering::Release);
    // A forked child is not a rank: everything it does passes through.
    extern "C" fn in_child() {
        PHASE.store(Phase::Child as u8, Ordering::Release);
    }
    // SAFETY: registering a handler that only stores an atomic.
    unsafe { libc::pthread_atfork(None, None, Some(in_child)) };
}

/// → `Finished`, in `MPI_Finalize`.
pub fn finish() {
    PHASE.store(Phase::Finished as u8, Ordering::Release);
}

/// True while shared files are coordinated.
#[inline]
pub fn active() -> bool {
    current() == Phase::Active
}

/// True on the thread that called `MPI_Init`.
pub fn on_main_thread() -> bool {
    // SAFETY: gettid has no preconditions.
    (unsafe { libc::gettid() }) == MAIN_THREAD.load(Ordering::Relaxed)
}
