//! Turning the coordination of shared files on (end of `MPI_Init`) and off
//! (in `MPI_Finalize`).

use crate::coord::{close, faults, sequence};
use crate::io::{paths, stdio};
use crate::state::phase;

/// Turns coordination on, at the end of `MPI_Init`.
pub fn start() {
    faults::load();
    paths::load_mounts();
    phase::activate();
}

/// Flushes managed streams while the replicas can still coordinate, then
/// turns coordination off (in `MPI_Finalize`).
pub fn stop() {
    if phase::active() {
        stdio::flush_all();
        close::settle_all();
        crate::coord::divergence::announce_finalize(sequence::peek());
        crate::log!(Debug, "{} coordinated operations", sequence::operations());
    }
    phase::finish();
}
