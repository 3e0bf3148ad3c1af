//! The per-process sequence of coordinated operations.
//!
//! Every replica of a logical rank makes the same calls in the same order
//! (the application is deterministic), so each coordinated operation takes
//! the next number of this sequence, and its messages carry tags derived
//! from it ([`redio_protocols::tag`]).

use std::sync::atomic::{AtomicU64, Ordering};

static SEQUENCE: AtomicU64 = AtomicU64::new(0);

/// Takes the next sequence number (and counts the operation).
pub fn next() -> u64 {
    crate::state::counters::operation();
    SEQUENCE.fetch_add(1, Ordering::Relaxed)
}

/// The number the next operation will take, without taking it.
pub fn peek() -> u64 {
    SEQUENCE.load(Ordering::Relaxed)
}

/// Number of coordinated operations this process took part in.
pub fn operations() -> u64 {
    peek()
}
