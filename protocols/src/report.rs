//! [`Mismatch`]: the report of a vote that was not unanimous.
//!
//! Protocols never print. When the replicas' digests differ, the protocol
//! builds one `Mismatch` and passes it to
//! [`OpContext::on_mismatch`](crate::OpContext::on_mismatch) before it
//! returns. Every replica computes the same verdict from the same digests,
//! so every replica receives an identical report; a caller that logs should
//! either log on one replica only or prefix the replica index. The
//! [`Display`](std::fmt::Display) form is one log line.

use crate::policy::OnMismatch;
use crate::vote::{Digest, Outcome, Verdict};
use std::fmt;

/// Which kind of operation a report is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum OpKind {
    /// A read: digests describe what each replica read.
    Read,
    /// A write: digests describe each replica's buffer.
    Write,
}

/// A disagreement between the replicas of one logical rank.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mismatch {
    /// Read or write.
    pub op: OpKind,
    /// The logical rank.
    pub rank: u32,
    /// The file's path.
    pub path: String,
    /// The operation's file offset (the agreed request's, or replica 0's
    /// when there is no majority).
    pub offset: u64,
    /// The operation's requested length, chosen like `offset`.
    pub len: usize,
    /// Every replica's digest, by replica index.
    pub digests: Vec<Digest>,
    /// The replicas whose digest differs from the agreed one; all replicas
    /// when there is no majority.
    pub disagreeing: Vec<usize>,
    /// The majority replica whose data or outcome every replica used, or
    /// `None` when nothing could be agreed and every replica got `EIO`.
    pub corrected_from: Option<usize>,
    /// The `on_mismatch` setting that decided what happened.
    pub policy: OnMismatch,
}

impl Mismatch {
    /// The report for the plain majority vote `raw` and the `decided`
    /// verdict the policy made of it, or `None` when `raw` was unanimous.
    /// `disagreeing` comes from `raw`, `corrected_from` from `decided`.
    pub(crate) fn from_vote(
        op: OpKind,
        ctx: &crate::OpContext<'_>,
        digests: &[Digest],
        raw: &Verdict,
        decided: &Verdict,
    ) -> Option<Mismatch> {
        let disagreeing = match raw {
            Verdict::Unanimous => return None,
            Verdict::Majority { minority, .. } => minority.clone(),
            Verdict::NoMajority => (0..digests.len()).collect(),
        };
        let corrected_from = decided.source();
        let reference = digests.get(corrected_from.unwrap_or(0));
        Some(Mismatch {
            op,
            rank: ctx.rank,
            path: ctx.path.to_owned(),
            offset: reference.map_or(0, |d| d.offset),
            len: reference.map_or(0, |d| d.requested),
            digests: digests.to_vec(),
            disagreeing,
            corrected_from,
            policy: ctx.policy.on_mismatch,
        })
    }

    /// Whether the majority's result was used (three replicas, one
    /// dissenting) rather than `EIO` returned everywhere.
    pub fn corrected(&self) -> bool {
        self.corrected_from.is_some()
    }
}

impl fmt::Display for Mismatch {
    /// E.g. `read mismatch: rank 3 path /nfs/in.dat offset 4096 length 512:
    /// replicas [2] disagree, corrected from replica 0 (r0: 512 bytes crc
    /// 0x1a2b3c4d; r1: …)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let op = match self.op {
            OpKind::Read => "read",
            OpKind::Write => "write",
        };
        write!(
            f,
            "{op} mismatch: rank {} path {} offset {} length {}: replicas {:?} disagree, ",
            self.rank, self.path, self.offset, self.len, self.disagreeing
        )?;
        match (self.corrected_from, self.policy) {
            (Some(source), OnMismatch::Warn) => write!(
                f,
                "continued with replica {source}'s data (on_mismatch: warn)"
            )?,
            (Some(source), _) => write!(f, "corrected from replica {source}")?,
            (None, OnMismatch::Correct) => f.write_str("not correctable, EIO returned")?,
            (None, policy) => write!(f, "EIO returned (on_mismatch: {})", policy.name())?,
        }
        f.write_str(" (")?;
        for (replica, digest) in self.digests.iter().enumerate() {
            if replica > 0 {
                f.write_str("; ")?;
            }
            write!(f, "r{replica}: ")?;
            match digest.outcome {
                Outcome::Data { len, crc } => write!(f, "{len} bytes crc {crc:#010x}")?,
                Outcome::Error(errno) => write!(f, "errno {errno}")?,
            }
            write!(f, " at {}+{}", digest.offset, digest.requested)?;
        }
        f.write_str(")")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vote::vote;
    use crate::OpContext;

    fn ctx(sink: &mut dyn FnMut(Mismatch)) -> OpContext<'_> {
        OpContext {
            rank: 3,
            path: "/nfs/in.dat",
            seq: 0,
            on_mismatch: sink,
            policy: Default::default(),
        }
    }

    #[test]
    fn unanimous_votes_produce_no_report() {
        let d = Digest {
            offset: 0,
            requested: 4,
            outcome: Outcome::data(b"abcd"),
        };
        let mut sink = |_| {};
        assert_eq!(
            Mismatch::from_vote(
                OpKind::Read,
                &ctx(&mut sink),
                &[d, d],
                &vote(&[d, d]),
                &vote(&[d, d])
            ),
            None
        );
    }

    #[test]
    fn corrected_report_names_minority_and_source() {
        let good = Digest {
            offset: 4096,
            requested: 4,
            outcome: Outcome::data(b"abcd"),
        };
        let bad = Digest {
            outcome: Outcome::Error(libc::EIO),
            ..good
        };
        let digests = [good, good, bad];
        let mut sink = |_| {};
        let m = Mismatch::from_vote(
            OpKind::Read,
            &ctx(&mut sink),
            &digests,
            &vote(&digests),
            &vote(&digests),
        )
        .expect("a report");
        assert_eq!(m.disagreeing, vec![2]);
        assert_eq!(m.corrected_from, Some(0));
        assert!(m.corrected());
        assert_eq!(
            (m.rank, m.path.as_str(), m.offset, m.len),
            (3, "/nfs/in.dat", 4096, 4)
        );
        assert_eq!(
            m.to_string(),
            "read mismatch: rank 3 path /nfs/in.dat offset 4096 length 4: replicas [2] disagree, \
             corrected from replica 0 (r0: 4 bytes crc 0xed82cd11 at 4096+4; \
             r1: 4 bytes crc 0xed82cd11 at 4096+4; r2: errno 5 at 4096+4)"
        );
    }

    #[test]
    fn uncorrectable_report_names_every_replica() {
        let a = Digest {
            offset: 8,
            requested: 4,
            outcome: Outcome::data(b"abcd"),
        };
        let b = Digest {
            outcome: Outcome::data(b"abce"),
            ..a
        };
        let mut sink = |_| {};
        let m = Mismatch::from_vote(
            OpKind::Write,
            &ctx(&mut sink),
            &[a, b],
            &vote(&[a, b]),
            &vote(&[a, b]),
        )
        .expect("a report");
        assert_eq!(m.disagreeing, vec![0, 1]);
        assert!(!m.corrected());
        assert!(m
            .to_string()
            .starts_with("write mismatch: rank 3 path /nfs/in.dat offset 8 length 4:"));
        assert!(m.to_string().contains("not correctable, EIO returned"));
    }
}
