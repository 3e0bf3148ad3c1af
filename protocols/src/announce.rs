//! Divergence detection: before each coordinated operation, the replicas
//! tell each other which operation they are about to run (tag step
//! [`Step::Announce`]). Replicas of a deterministic application always
//! announce the same one; any difference (another kind of call, another
//! file, offset or length) means their executions have diverged, and no
//! protocol may run, because the replicas would wait for messages that
//! never come or mix data of different requests.
//!
//! Every replica receives every announcement, so every replica reaches the
//! same verdict and the same [`Divergence`] report, which names what each
//! replica tried to do.
//!
//! An announcement may carry a *refusal* ([`announce_refusable`]): the
//! replica makes the same call but knows it cannot complete it (no
//! descriptor left for an `open`). Every replica then fails the call with
//! the first refusing replica's errno, before anything is done, so all of
//! them fail it at the same call.

use crate::link::ReplicaLink;
use crate::tag::{tag, Step};
use crate::{wire, Errno, OpError};
use std::fmt;

/// One replica's next operation, as far as replicas must agree on it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Operation {
    /// The call, e.g. `read`, `write`, `open`, `fstat`.
    pub kind: String,
    /// The file's path (as this replica resolved it), or another subject.
    pub path: String,
    /// The file offset, 0 when the call has none.
    pub offset: u64,
    /// The byte count, 0 when the call has none.
    pub len: u64,
}

impl fmt::Display for Operation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}({}", self.kind, self.path)?;
        if self.offset != 0 || self.len != 0 {
            write!(f, ", offset {}, {} bytes", self.offset, self.len)?;
        }
        f.write_str(")")
    }
}

/// Replicas that announced different operations under one sequence number.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Divergence {
    /// The logical rank.
    pub rank: u32,
    /// The operation's sequence number.
    pub seq: u64,
    /// What every replica announced, by replica index.
    pub operations: Vec<Operation>,
}

impl Divergence {
    /// The operation more than half of the replicas announced, if any: at
    /// r=3 one odd replica is outvoted; at r=2 nobody is.
    pub fn majority(&self) -> Option<&Operation> {
        self.operations.iter().find(|candidate| {
            let votes = self.operations.iter().filter(|op| op == candidate).count();
            2 * votes > self.operations.len()
        })
    }

    /// The replicas (by index) that announced something other than the
    /// majority; empty when there is no majority.
    pub fn outvoted(&self) -> Vec<usize> {
        let Some(majority) = self.majority() else {
            return Vec::new();
        };
        (0..self.operations.len())
            .filter(|&replica| &self.operations[replica] != majority)
            .collect()
    }
}

impl fmt::Display for Divergence {
    /// E.g. `divergence: rank 0 operation 17: replica 0 read(/nfs/a, offset
    /// 0, 4096 bytes); replica 1 write(/nfs/a, offset 0, 4096 bytes)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "divergence: rank {} operation {}: the replicas issued different calls:",
            self.rank, self.seq
        )?;
        for (replica, op) in self.operations.iter().enumerate() {
            let sep = if replica == 0 { " " } else { "; " };
            write!(f, "{sep}replica {replica} {op}")?;
        }
        Ok(())
    }
}

/// Exchanges `mine` with every replica for operation `seq`. Returns
/// `Ok(None)` when all replicas announced the same operation, the
/// [`Divergence`] (identical on every replica) otherwise, or the link's
/// error.
pub fn announce<L: ReplicaLink + ?Sized>(
    link: &mut L,
    rank: u32,
    seq: u64,
    mine: &Operation,
) -> Result<Option<Divergence>, OpError> {
    match announce_refusable(link, rank, seq, mine, None)? {
        Announced::Agreed { .. } => Ok(None),
        Announced::Diverged(divergence) => Ok(Some(divergence)),
    }
}

/// What the replicas announced for one operation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Announced {
    /// Every replica announced the same operation; `refused` names the
    /// first replica (by index) that refused it, with its errno.
    Agreed {
        /// The first refusal, if any: `(replica, errno)`.
        refused: Option<(usize, Errno)>,
    },
    /// The replicas announced different operations.
    Diverged(Divergence),
}

/// Like [`announce`], with this replica's `refusal` of the call (the
/// errno it cannot make it with). The verdict is the same on every
/// replica: a divergence, or agreement with the first refusal.
pub fn announce_refusable<L: ReplicaLink + ?Sized>(
    link: &mut L,
    rank: u32,
    seq: u64,
    mine: &Operation,
    refusal: Option<Errno>,
) -> Result<Announced, OpError> {
    if link.degree() <= 1 {
        let refused = refusal.map(|errno| (0, errno));
        return Ok(Announced::Agreed { refused });
    }
    let raw = link.exchange_all(
        tag(seq, Step::Announce),
        &wire::encode_operation(mine, refusal),
    )?;
    let announced = raw
        .iter()
        .enumerate()
        .map(|(replica, bytes)| {
            wire::decode_operation(bytes).map_err(|what| OpError::Protocol { replica, what })
        })
        .collect::<Result<Vec<_>, _>>()?;
    if announced.iter().all(|(op, _)| op == mine) {
        let refused = announced
            .iter()
            .enumerate()
            .find_map(|(replica, (_, refusal))| refusal.map(|errno| (replica, errno)));
        return Ok(Announced::Agreed { refused });
    }
    Ok(Announced::Diverged(Divergence {
        rank,
        seq,
        operations: announced.into_iter().map(|(op, _)| op).collect(),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::{link_set, run_replicas};

    fn op(kind: &str, len: u64) -> Operation {
        Operation {
            kind: kind.into(),
            path: "/shared/a".into(),
            offset: 8,
            len,
        }
    }

    #[test]
    fn same_operations_pass_and_different_ones_are_reported_everywhere() {
        let same = run_replicas(link_set(3), |mut link| {
            announce(&mut link, 4, 9, &op("read", 16)).unwrap()
        });
        assert!(same.iter().all(Option::is_none));
        let mixed = run_replicas(link_set(3), |mut link| {
            let me = ReplicaLink::me(&link);
            let mine = if me == 1 {
                op("write", 16)
            } else {
                op("read", 16)
            };
            announce(&mut link, 4, 9, &mine).unwrap()
        });
        let first = mixed[0].clone().expect("a divergence");
        assert!(mixed.iter().all(|d| d.as_ref() == Some(&first)));
        assert_eq!(first.operations[1].kind, "write");
        assert_eq!(
            first.to_string(),
            "divergence: rank 4 operation 9: the replicas issued different calls: replica 0 \
             read(/shared/a, offset 8, 16 bytes); replica 1 write(/shared/a, offset 8, 16 \
             bytes); replica 2 read(/shared/a, offset 8, 16 bytes)"
        );
        let sizes = run_replicas(link_set(2), |mut link| {
            let me = ReplicaLink::me(&link) as u64;
            announce(&mut link, 0, 1, &op("read", 16 + me)).unwrap()
        });
        assert!(sizes.iter().all(Option::is_some));
    }

    /// Paths longer than any cut (up to and past `PATH_MAX`): identical
    /// calls agree, and paths that differ only in their last byte diverge.
    #[test]
    fn long_paths_travel_whole() {
        for len in [511, 512, 513, 4095, 8200] {
            let long = |last: char| Operation {
                path: format!("/{}{last}", "d".repeat(len - 2)),
                ..op("open", 0)
            };
            let same = run_replicas(link_set(2), |mut link| {
                announce(&mut link, 0, 1, &long('x')).unwrap()
            });
            assert!(same.iter().all(Option::is_none), "length {len}");
            let apart = run_replicas(link_set(2), |mut link| {
                let last = if ReplicaLink::me(&link) == 0 {
                    'x'
                } else {
                    'y'
                };
                announce(&mut link, 0, 1, &long(last)).unwrap()
            });
            let first = apart[0].clone().expect("a divergence");
            assert_eq!(first.operations[1].path.len(), len, "length {len}");
            assert!(apart.iter().all(|d| d.as_ref() == Some(&first)));
        }
    }

    /// One replica that cannot make the call: every replica learns it,
    /// the first refusing replica's errno is the verdict everywhere.
    #[test]
    fn a_refusal_reaches_every_replica() {
        let verdicts = run_replicas(link_set(3), |mut link| {
            let refusal = match ReplicaLink::me(&link) {
                0 => None,
                1 => Some(libc::EMFILE),
                _ => Some(libc::ENFILE),
            };
            announce_refusable(&mut link, 0, 5, &op("open", 0), refusal).unwrap()
        });
        for verdict in verdicts {
            assert_eq!(
                verdict,
                Announced::Agreed {
                    refused: Some((1, libc::EMFILE))
                }
            );
        }
        let none = run_replicas(link_set(2), |mut link| {
            announce_refusable(&mut link, 0, 5, &op("open", 0), None).unwrap()
        });
        assert!(none
            .iter()
            .all(|v| *v == Announced::Agreed { refused: None }));
    }

    fn divergence(kinds: &[&str]) -> Divergence {
        Divergence {
            rank: 0,
            seq: 3,
            operations: kinds.iter().map(|k| op(k, 4)).collect(),
        }
    }

    #[test]
    fn at_three_replicas_the_odd_one_is_outvoted() {
        let d = divergence(&["write", "MPI_Finalize", "MPI_Finalize"]);
        assert_eq!(d.majority(), Some(&op("MPI_Finalize", 4)));
        assert_eq!(d.outvoted(), vec![0]);
    }

    #[test]
    fn two_replicas_or_three_different_calls_have_no_majority() {
        assert_eq!(divergence(&["write", "read"]).majority(), None);
        assert!(divergence(&["write", "read"]).outvoted().is_empty());
        assert!(divergence(&["write", "read", "open"]).outvoted().is_empty());
    }
}
