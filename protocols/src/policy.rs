//! What the replicas do with a disagreement: the `on_mismatch` and
//! `voting` settings of a configuration rule, applied to a vote.

use crate::vote::{Digest, Outcome, Verdict};
use std::fmt;

/// The reaction to replicas whose digests disagree (`on_mismatch`).
///
/// This is also the configuration's type (`redio_core::config::OnMismatch`
/// re-exports it), so [`name`](OnMismatch::name) is the only place the
/// configuration's words for it are spelled.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum OnMismatch {
    /// A majority wins and the minority is corrected from it; without a
    /// majority (always so at r = 2) the operation fails with `EIO`.
    #[default]
    Correct,
    /// Any disagreement fails the operation with `EIO` on every replica,
    /// even when a majority exists; nothing is written.
    Error,
    /// Like [`Error`](OnMismatch::Error) inside the protocols; the caller
    /// ends the job when it receives the report.
    Abort,
    /// Never fail over a disagreement: report it, then go on with the
    /// majority's data, or replica 0's when there is no majority.
    Warn,
}

impl OnMismatch {
    /// The setting's name as the configuration spells it.
    pub const fn name(self) -> &'static str {
        match self {
            OnMismatch::Correct => "correct",
            OnMismatch::Error => "error",
            OnMismatch::Abort => "abort",
            OnMismatch::Warn => "warn",
        }
    }

    /// Turns the plain majority `verdict` on `digests` into the verdict the
    /// protocols act on: `Error`/`Abort` refuse any majority, `Warn` makes
    /// replica 0 the source when there is no majority.
    pub fn apply(self, verdict: Verdict, digests: &[Digest]) -> Verdict {
        match (self, verdict) {
            (OnMismatch::Error | OnMismatch::Abort, Verdict::Majority { .. }) => {
                Verdict::NoMajority
            }
            (OnMismatch::Warn, Verdict::NoMajority) if !digests.is_empty() => {
                let minority = (1..digests.len())
                    .filter(|&i| digests[i] != digests[0])
                    .collect();
                Verdict::Majority {
                    source: 0,
                    minority,
                }
            }
            (_, verdict) => verdict,
        }
    }
}

impl fmt::Display for OnMismatch {
    /// The name, as the configuration spells it.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The per-path settings every protocol run follows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Policy {
    /// Whether replicas compare CRC-32 checksums of the data (`voting`).
    /// Off, they still agree on byte counts and errnos, and the data that
    /// travel between replicas carry no end-to-end checksum.
    pub checksums: bool,
    /// The reaction to a disagreement.
    pub on_mismatch: OnMismatch,
}

impl Default for Policy {
    fn default() -> Policy {
        Policy {
            checksums: true,
            on_mismatch: OnMismatch::Correct,
        }
    }
}

impl Policy {
    /// The outcome to vote with for holding `bytes`: with checksums off the
    /// CRC is left at 0, so only the length is compared.
    pub fn outcome_of(&self, bytes: &[u8]) -> Outcome {
        if self.checksums {
            Outcome::data(bytes)
        } else {
            Outcome::Data {
                len: bytes.len(),
                crc: 0,
            }
        }
    }

    /// [`Outcome::of_read`] under this policy's `checksums`.
    pub fn outcome_of_read(&self, result: Result<usize, crate::Errno>, buf: &[u8]) -> Outcome {
        match result {
            Ok(n) => buf
                .get(..n)
                .map_or(Outcome::Error(crate::EIO), |bytes| self.outcome_of(bytes)),
            Err(errno) => Outcome::Error(errno),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn digests(crcs: &[u32]) -> Vec<Digest> {
        crcs.iter()
            .map(|&crc| Digest {
                offset: 0,
                requested: 4,
                outcome: Outcome::Data { len: 4, crc },
            })
            .collect()
    }

    #[test]
    fn each_policy_turns_the_vote_into_its_own_decision() {
        let two_one = digests(&[1, 2, 1]);
        let majority = Verdict::Majority {
            source: 0,
            minority: vec![1],
        };
        assert_eq!(
            OnMismatch::Correct.apply(majority.clone(), &two_one),
            majority
        );
        assert_eq!(
            OnMismatch::Error.apply(majority.clone(), &two_one),
            Verdict::NoMajority
        );
        assert_eq!(
            OnMismatch::Abort.apply(majority.clone(), &two_one),
            Verdict::NoMajority
        );
        assert_eq!(OnMismatch::Warn.apply(majority.clone(), &two_one), majority);
        let split = digests(&[1, 2]);
        assert_eq!(
            OnMismatch::Correct.apply(Verdict::NoMajority, &split),
            Verdict::NoMajority
        );
        assert_eq!(
            OnMismatch::Warn.apply(Verdict::NoMajority, &split),
            Verdict::Majority {
                source: 0,
                minority: vec![1]
            }
        );
        assert_eq!(
            OnMismatch::Warn.apply(Verdict::Unanimous, &split),
            Verdict::Unanimous
        );
    }

    #[test]
    fn without_checksums_only_lengths_are_compared() {
        let off = Policy {
            checksums: false,
            ..Policy::default()
        };
        assert_eq!(off.outcome_of(b"abc"), off.outcome_of(b"xyz"));
        assert_ne!(
            Policy::default().outcome_of(b"abc"),
            Policy::default().outcome_of(b"xyz")
        );
        assert_eq!(off.outcome_of_read(Err(5), b""), Outcome::Error(5));
    }
}
