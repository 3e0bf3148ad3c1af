//! Majority voting over per-replica digests. Pure: no I/O, no messages.
//!
//! Each replica contributes a [`Digest`] (its request and the [`Outcome`]
//! of its I/O); [`vote`] decides:
//!
//! - [`Verdict::Unanimous`]: all digests are equal (always so with one
//!   replica);
//! - [`Verdict::Majority`]: more than half agree (with three replicas: two
//!   against one). The agreed digest is the one of the lowest-index
//!   majority replica, `source`, which is also the replica the minority
//!   copies from;
//! - [`Verdict::NoMajority`]: any disagreement between two replicas, or
//!   three different digests. The protocols then return [`EIO`](crate::EIO)
//!   everywhere.

use crate::Errno;

/// What one replica's I/O call produced, reduced to what is compared.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Outcome {
    /// `len` bytes whose CRC-32/IEEE is `crc`.
    Data {
        /// Byte count.
        len: usize,
        /// CRC-32/IEEE of those bytes.
        crc: u32,
    },
    /// The call failed with this errno.
    Error(Errno),
}

impl Outcome {
    /// The outcome of holding `bytes`.
    pub fn data(bytes: &[u8]) -> Outcome {
        Outcome::Data {
            len: bytes.len(),
            crc: crc32fast::hash(bytes),
        }
    }

    /// The outcome of a read into `buf` that returned `result`. A count
    /// beyond the buffer cannot be checksummed and counts as `EIO`.
    pub fn of_read(result: Result<usize, Errno>, buf: &[u8]) -> Outcome {
        match result {
            Ok(n) => buf
                .get(..n)
                .map_or(Outcome::Error(crate::EIO), Outcome::data),
            Err(errno) => Outcome::Error(errno),
        }
    }

    /// The byte count or errno this outcome stands for.
    pub fn result(&self) -> Result<usize, Errno> {
        match *self {
            Outcome::Data { len, .. } => Ok(len),
            Outcome::Error(errno) => Err(errno),
        }
    }
}

/// One replica's vote: the request it made and what came of it. Requests
/// are part of the vote so that replicas whose file offsets or buffer
/// sizes have diverged are caught even when their data happen to agree.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Digest {
    /// File offset of the request.
    pub offset: u64,
    /// Requested byte count (the application buffer's length).
    pub requested: usize,
    /// What the I/O produced (for a write: the buffer's length and CRC).
    pub outcome: Outcome,
}

/// The decision of [`vote`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Every replica agrees.
    Unanimous,
    /// More than half of the replicas agree, the others do not.
    Majority {
        /// The lowest-index replica of the majority: the agreed digest is
        /// its digest, and the minority copies from it.
        source: usize,
        /// The replicas outside the majority, ascending.
        minority: Vec<usize>,
    },
    /// No value is held by more than half of the replicas.
    NoMajority,
}

impl Verdict {
    /// The replica whose digest is the agreed one: 0 when unanimous, the
    /// lowest-index majority replica otherwise, `None` without a majority.
    pub fn source(&self) -> Option<usize> {
        match self {
            Verdict::Unanimous => Some(0),
            Verdict::Majority { source, .. } => Some(*source),
            Verdict::NoMajority => None,
        }
    }
}

/// Decides among `digests`, indexed by replica. An empty slice has no
/// majority.
pub fn vote<T: PartialEq>(digests: &[T]) -> Verdict {
    let n = digests.len();
    let holders = |value: &T| digests.iter().filter(|d| *d == value).count();
    // The first index holding a strict majority value is that value's lowest index.
    let Some(source) = (0..n).find(|&i| holders(&digests[i]) * 2 > n) else {
        return Verdict::NoMajority;
    };
    let minority: Vec<usize> = (0..n).filter(|&i| digests[i] != digests[source]).collect();
    if minority.is_empty() {
        Verdict::Unanimous
    } else {
        Verdict::Majority { source, minority }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::EIO;
    use libc::ENOSPC;

    const A: Outcome = Outcome::Data {
        len: 4,
        crc: 0xAAAA,
    };
    const B: Outcome = Outcome::Data {
        len: 4,
        crc: 0xBBBB,
    };
    const SHORT: Outcome = Outcome::Data {
        len: 2,
        crc: 0xAAAA,
    };
    const FAIL: Outcome = Outcome::Error(EIO);
    const FULL: Outcome = Outcome::Error(ENOSPC);
    const ALPHABET: [Outcome; 5] = [A, B, SHORT, FAIL, FULL];

    /// Every assignment of `ALPHABET` to `r` replicas.
    fn assignments(r: usize) -> Vec<Vec<Outcome>> {
        (0..r).fold(vec![Vec::new()], |acc, _| {
            acc.iter()
                .flat_map(|prefix| {
                    ALPHABET.iter().map(move |o| {
                        let mut next = prefix.clone();
                        next.push(*o);
                        next
                    })
                })
                .collect()
        })
    }

    /// The verdict spelled out by counting, independently of `vote`.
    fn expected(outcomes: &[Outcome]) -> Verdict {
        let n = outcomes.len();
        for value in ALPHABET {
            let holders: Vec<usize> = (0..n).filter(|&i| outcomes[i] == value).collect();
            if holders.len() == n {
                return Verdict::Unanimous;
            }
            if holders.len() * 2 > n {
                return Verdict::Majority {
                    source: holders[0],
                    minority: (0..n).filter(|i| !holders.contains(i)).collect(),
                };
            }
        }
        Verdict::NoMajority
    }

    #[test]
    fn exhaustive_over_one_two_and_three_replicas() {
        for r in 1..=3 {
            let all = assignments(r);
            assert_eq!(all.len(), ALPHABET.len().pow(r as u32));
            for outcomes in all {
                assert_eq!(vote(&outcomes), expected(&outcomes), "{outcomes:?}");
            }
        }
    }

    #[test]
    fn one_replica_is_always_unanimous() {
        for o in ALPHABET {
            assert_eq!(vote(&[o]), Verdict::Unanimous);
            assert_eq!(vote(&[o]).source(), Some(0));
        }
    }

    #[test]
    fn two_replicas_disagreeing_in_any_way_have_no_majority() {
        assert_eq!(vote(&[A, A]), Verdict::Unanimous);
        for (x, y) in [(A, B), (A, SHORT), (A, FAIL), (FAIL, A), (FAIL, FULL)] {
            assert_eq!(vote(&[x, y]), Verdict::NoMajority, "{x:?} {y:?}");
            assert_eq!(vote(&[x, y]).source(), None);
        }
    }

    #[test]
    fn three_replicas_correct_a_single_fs_error() {
        assert_eq!(
            vote(&[FAIL, A, A]),
            Verdict::Majority {
                source: 1,
                minority: vec![0]
            }
        );
        assert_eq!(
            vote(&[A, FAIL, A]),
            Verdict::Majority {
                source: 0,
                minority: vec![1]
            }
        );
        assert_eq!(
            vote(&[A, A, FULL]),
            Verdict::Majority {
                source: 0,
                minority: vec![2]
            }
        );
    }

    #[test]
    fn three_replicas_with_a_majority_error_agree_on_the_error() {
        let verdict = vote(&[A, FULL, FULL]);
        assert_eq!(
            verdict,
            Verdict::Majority {
                source: 1,
                minority: vec![0]
            }
        );
        assert_eq!(verdict.source(), Some(1));
    }

    #[test]
    fn three_different_outcomes_have_no_majority() {
        assert_eq!(vote(&[A, B, FAIL]), Verdict::NoMajority);
        assert_eq!(vote(&[A, SHORT, B]), Verdict::NoMajority);
    }

    #[test]
    fn empty_input_has_no_majority() {
        assert_eq!(vote::<Outcome>(&[]), Verdict::NoMajority);
    }

    #[test]
    fn digests_differing_only_in_the_request_disagree() {
        let here = Digest {
            offset: 0,
            requested: 4,
            outcome: A,
        };
        let there = Digest {
            offset: 4096,
            ..here
        };
        assert_eq!(
            vote(&[here, there, here]),
            Verdict::Majority {
                source: 0,
                minority: vec![1]
            }
        );
    }

    #[test]
    fn outcome_of_a_read_checksums_only_the_bytes_read() {
        let buf = *b"abcdXXXX";
        assert_eq!(Outcome::of_read(Ok(4), &buf), Outcome::data(b"abcd"));
        assert_eq!(
            Outcome::of_read(Ok(0), &buf),
            Outcome::Data { len: 0, crc: 0 }
        );
        assert_eq!(Outcome::of_read(Ok(9), &buf), Outcome::Error(EIO));
        assert_eq!(Outcome::of_read(Err(ENOSPC), &buf), Outcome::Error(ENOSPC));
        assert_eq!(Outcome::data(b"abcd").result(), Ok(4));
        assert_eq!(FULL.result(), Err(ENOSPC));
    }
}
