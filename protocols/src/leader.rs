//! The leader round: a call made once, by the leader (replica 0 of the
//! live set), whose outcome every replica returns.
//!
//! Metadata calls (`open`, `fstat`, `lseek(SEEK_END)`, `ftruncate`,
//! `fsync`, `stat`, `unlink`, `rename`, a Distributed Separate join) are
//! not voted on: the file system answers once, and the leader forwards
//! the answer. Messages (one per follower, tag [`Step::Result`]):
//!
//! ```text
//! leader -> each follower:  value i64 LE | errno i32 LE (0: success) | payload
//! ```
//!
//! Cost: `r - 1` messages of `12 + payload` bytes, one hop.
//!
//! [`agree_on_outcome`] is the round for calls every replica made on its
//! own copy (one server per replica): each sends its errno to all, and all
//! return the first failure in replica order.

use crate::tag::{tag, Step};
use crate::{Errno, LinkError, ReplicaLink, EIO};

/// What the leader sends back: a value (or errno) and optional bytes (a
/// `stat` buffer, say).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reply {
    /// The call's value, or its errno.
    pub outcome: Result<i64, Errno>,
    /// Bytes the call produced, copied to every replica.
    pub payload: Vec<u8>,
}

impl Reply {
    /// A reply without payload.
    pub fn bare(outcome: Result<i64, Errno>) -> Reply {
        Reply {
            outcome,
            payload: Vec::new(),
        }
    }

    /// The reply as sent on the wire.
    pub fn encode(&self) -> Vec<u8> {
        let (value, errno) = match self.outcome {
            Ok(value) => (value, 0),
            Err(errno) => (-1, errno),
        };
        let mut out = Vec::with_capacity(12 + self.payload.len());
        out.extend_from_slice(&value.to_le_bytes());
        out.extend_from_slice(&errno.to_le_bytes());
        out.extend_from_slice(&self.payload);
        out
    }

    /// Decodes [`Reply::encode`]'s bytes; `None` when they are too short.
    pub fn decode(bytes: &[u8]) -> Option<Reply> {
        let (value, rest) = bytes.split_first_chunk::<8>()?;
        let (errno, payload) = rest.split_first_chunk::<4>()?;
        let errno = i32::from_le_bytes(*errno);
        Some(Reply {
            outcome: if errno == 0 {
                Ok(i64::from_le_bytes(*value))
            } else {
                Err(errno)
            },
            payload: payload.to_vec(),
        })
    }
}

/// Runs `call` on the leader (`link.me() == 0`) and returns its reply on
/// every replica of operation `seq`, with whether this replica was the
/// leader. `after_call` runs on the leader between the call and the send
/// (fault injection uses it). A reply that arrives damaged is `EIO`.
pub fn round(
    link: &mut dyn ReplicaLink,
    seq: u64,
    call: impl FnOnce() -> Reply,
    after_call: impl FnOnce(),
) -> Result<(Reply, bool), LinkError> {
    let step = tag(seq, Step::Result);
    if link.me() == 0 {
        let reply = call();
        after_call();
        link.send_to_others(step, &reply.encode())?;
        Ok((reply, true))
    } else {
        let bytes = link.recv(0, step)?;
        let reply = Reply::decode(&bytes).unwrap_or(Reply::bare(Err(EIO)));
        Ok((reply, false))
    }
}

/// Agrees on a call every replica made on its own copy of a file: the
/// first failure in replica order, the same on every replica, or success
/// when all succeeded.
pub fn agree_on_outcome(
    link: &mut dyn ReplicaLink,
    seq: u64,
    mine: Result<(), Errno>,
) -> Result<Result<(), Errno>, LinkError> {
    let errno: Errno = mine.err().unwrap_or(0);
    let all = link.exchange_all(tag(seq, Step::Result), &errno.to_le_bytes())?;
    let first = all
        .iter()
        .filter_map(|b| b.first_chunk::<4>().map(|e| i32::from_le_bytes(*e)))
        .find(|&e| e != 0);
    Ok(first.map_or(Ok(()), Err))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::{link_set, run_replicas};

    #[test]
    fn a_reply_survives_its_wire_format() {
        for reply in [
            Reply::bare(Ok(7)),
            Reply::bare(Err(libc::ENOENT)),
            Reply {
                outcome: Ok(-3),
                payload: vec![1, 2, 3],
            },
        ] {
            assert_eq!(Reply::decode(&reply.encode()), Some(reply));
        }
        assert_eq!(Reply::decode(&[0; 11]), None);
    }

    #[test]
    fn every_replica_returns_the_leaders_reply_and_only_it_calls() {
        let calls = std::sync::atomic::AtomicUsize::new(0);
        let results = run_replicas(link_set(3), |mut link| {
            round(
                &mut link,
                5,
                || {
                    calls.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    Reply {
                        outcome: Err(libc::EEXIST),
                        payload: b"stat".to_vec(),
                    }
                },
                || {},
            )
            .unwrap()
        });
        assert_eq!(calls.into_inner(), 1);
        let leaders: Vec<bool> = results.iter().map(|(_, leader)| *leader).collect();
        assert_eq!(leaders, [true, false, false]);
        for (reply, _) in results {
            assert_eq!(reply.outcome, Err(libc::EEXIST));
            assert_eq!(reply.payload, b"stat");
        }
    }

    #[test]
    fn the_first_failure_in_replica_order_is_everyones() {
        let results = run_replicas(link_set(3), |mut link| {
            let mine = match link.me() {
                0 => Ok(()),
                1 => Err(libc::ENOSPC),
                _ => Err(libc::EACCES),
            };
            agree_on_outcome(&mut link, 9, mine).unwrap()
        });
        assert_eq!(results, vec![Err(libc::ENOSPC); 3]);
        let all_fine = run_replicas(link_set(2), |mut link| {
            agree_on_outcome(&mut link, 10, Ok(())).unwrap()
        });
        assert_eq!(all_fine, vec![Ok(()); 2]);
    }
}
