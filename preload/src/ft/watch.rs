//! What a polled wait of `comm` asks fault tolerance: installed at
//! start-up as [`crate::comm::poll::Watcher`], so that the waits below
//! fault tolerance see deaths without importing it.

use crate::comm::poll::{self, Watcher};
use crate::ft::{liveness, ulfm, watchdog};

/// Fault tolerance as the polled waits see it.
struct FaultTolerance;

impl Watcher for FaultTolerance {
    fn is_failure(&self, code: i32) -> bool {
        ulfm::is_failure(code)
    }
    fn safe_point(&self) {
        watchdog::retire_at_safe_point();
    }
    fn enabled(&self) -> bool {
        liveness::enabled()
    }
    fn hints(&self) -> u64 {
        liveness::hints()
    }
    fn first_dead(&self, ranks: &[u32]) -> Option<u32> {
        liveness::first_dead(ranks)
    }
}

/// Makes every later polled wait watch for deaths.
pub fn install() {
    poll::install_watcher(&FaultTolerance);
}
