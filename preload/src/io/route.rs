//! Which calls redio coordinates, and the named reason why the others pass
//! through untouched.
//!
//! A call is coordinated only when all of these hold: this process is an MPI
//! rank between `MPI_Init` and `MPI_Finalize`; the thread is not inside an
//! MPI call nor already inside redio; and the file is a managed one (a
//! shared-file-system path, or a descriptor opened from one).

use crate::state::phase::{self, Phase};
use crate::sys::guard::{InsideMpi, InsideRedio};
use crate::sys::log;

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
    /// `/proc`, `/sys`, `/dev` (but not `/dev/shm`), `/run`: never managed.
    System,
    /// A node-local path (perhaps remapped per replica).
    NodeLocal,
    /// A shared path whose read and write protocols are both `none`: every
    /// replica does its own I/O, as if redio were not there.
    ProtocolNone,
    /// A descriptor or stream redio did not open from a shared path.
    Unmanaged,
}

/// Enters redio for one call, or says why the call must pass through.
#[inline]
pub fn enter() -> Result<InsideRedio, Bypass> {
    match phase::current() {
        Phase::Active => {}
        Phase::Child => return Err(Bypass::NotRank),
        Phase::Before | Phase::Finished => return Err(Bypass::NotInitialised),
    }
    if InsideMpi::active() {
        return Err(Bypass::InsideMpi);
    }
    InsideRedio::enter().ok_or(Bypass::ReEntered)
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::phase;

    /// One test: the phase is process-wide, and tests run on threads.
    #[test]
    fn calls_are_coordinated_only_while_active_once_per_thread_outside_mpi() {
        assert_eq!(phase::current(), Phase::Before);
        assert_eq!(enter().err(), Some(Bypass::NotInitialised));

        phase::activate();
        assert!(phase::active() && phase::on_main_thread());
        {
            let _entered = enter().expect("active, outside MPI, not re-entered");
            // A hooked call made by redio itself passes through.
            assert_eq!(enter().err(), Some(Bypass::ReEntered));
            // So does everything std does inside `inside`.
            assert!(crate::sys::guard::inside(|| enter().is_err()));
        }
        {
            let _mpi = InsideMpi::enter();
            assert_eq!(enter().err(), Some(Bypass::InsideMpi));
        }
        // Another thread is routed too (the main-thread rule is coord's).
        let other = std::thread::spawn(|| (enter().is_ok(), phase::on_main_thread()));
        assert_eq!(other.join().unwrap(), (true, false));

        phase::finish();
        assert_eq!(phase::current(), Phase::Finished);
        assert_eq!(enter().err(), Some(Bypass::NotInitialised));
    }
}
