//! Message tags, derived from the operation's sequence number.
//!
//! ```text
//! tag = (seq % SEQ_WINDOW) * STEPS_PER_OP + step      (SEQ_WINDOW = 2048, STEPS_PER_OP = 8)
//! ```
//!
//! - `step` names the message's role inside one operation ([`Step`]), so
//!   the vote of an operation never matches its data or result message;
//! - `seq` separates consecutive operations: the messages of operation `n`
//!   can only be confused with those of operation `n ± 2048`, and no
//!   protocol leaves messages behind for that long (a run that fails half
//!   way leaves at most the messages of that one operation).
//!
//! The protocols therefore use tags `0..16384` ([`PROTOCOL_TAGS`]). MPI
//! guarantees tags up to 32767 (`MPI_TAG_UB` ≥ 32767), so the caller may use
//! `16384..=32767` on the same communicator for its own coordination
//! (open, lseek, fstat, …) without colliding.

use std::ops::Range;

/// How many consecutive operations get distinct tags.
pub const SEQ_WINDOW: u64 = 2048;

/// Tag slots reserved per operation (steps `0..STEPS_PER_OP`).
pub const STEPS_PER_OP: u32 = 8;

/// Every tag the protocols may use; the rest of `0..=32767` is the caller's.
pub const PROTOCOL_TAGS: Range<u32> = 0..(SEQ_WINDOW as u32) * STEPS_PER_OP;

// MPI only guarantees tags up to 32767, and every step must fit its slot.
const _: () = assert!(PROTOCOL_TAGS.end <= 32767 + 1);
const _: () = assert!((Step::Recheck as u32) < STEPS_PER_OP);

/// The role of a message within one operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u32)]
pub enum Step {
    /// Digest exchange for the vote (every voting protocol's first step).
    Vote = 0,
    /// File data sent from one replica to another (e.g. a read correction).
    Data = 1,
    /// The outcome of an I/O call made by one replica for all (e.g. the
    /// writer's byte count or errno).
    Result = 2,
    /// Confirmation round after data were passed between replicas: every
    /// replica's digest of what it ended with, exchanged all-to-all, so
    /// that a transfer corrupted on the way is noticed by every replica.
    Check = 3,
    /// The operation each replica is about to run, exchanged all-to-all
    /// before it starts, to detect diverged replicas (see
    /// [`announce`](crate::announce)).
    Announce = 4,
    /// A source's resent bytes for replicas whose transfer was damaged.
    Repair = 5,
    /// The confirmation round after a repair.
    Recheck = 6,
}

/// The tag of the `step` message of operation `seq`.
pub fn tag(seq: u64, step: Step) -> u32 {
    // The window is a power of two below 2^32: the cast cannot truncate.
    (seq % SEQ_WINDOW) as u32 * STEPS_PER_OP + step as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    const STEPS: [Step; 7] = [
        Step::Vote,
        Step::Data,
        Step::Result,
        Step::Check,
        Step::Announce,
        Step::Repair,
        Step::Recheck,
    ];

    #[test]
    fn tags_stay_in_the_protocol_range_and_below_the_mpi_minimum_bound() {
        for seq in [0, 1, SEQ_WINDOW - 1, SEQ_WINDOW, u64::MAX] {
            for step in STEPS {
                let t = tag(seq, step);
                assert!(PROTOCOL_TAGS.contains(&t), "seq {seq} step {step:?} -> {t}");
            }
        }
        assert_eq!(PROTOCOL_TAGS.end, 16384);
    }

    #[test]
    fn tags_are_distinct_within_the_window() {
        let mut seen = std::collections::HashSet::new();
        for seq in 0..SEQ_WINDOW {
            for step in STEPS {
                assert!(seen.insert(tag(seq, step)), "duplicate tag at seq {seq}");
            }
        }
        assert_eq!(tag(5, Step::Vote), tag(5 + SEQ_WINDOW, Step::Vote));
    }
}
