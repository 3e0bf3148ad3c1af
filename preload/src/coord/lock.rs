//! Advisory locks on shared files (`flock`, `fcntl` record and OFD locks,
//! `lockf`): taken once for the replica set, by the leader (the replica
//! that does the file's I/O), on its own descriptor; every replica returns
//! the leader's result and errno.
//!
//! Why only the leader. A lock coordinates *logical* ranks (or other
//! programs). If every replica locked its own descriptor, the replicas of
//! one rank would conflict with each other (`flock` and OFD locks belong to
//! the open file description: serial HDF5's `H5Fcreate` failed with
//! `EAGAIN`), and a follower blocked in `F_SETLKW` on a region its own
//! leader holds, while the leader waits for the follower's CRC32 of the
//! next write, would deadlock (ROMIO locks around its data-sieving
//! writes). Followers never call the real function: they wait for the
//! leader's reply, with no deadline for a blocking lock (waiting for
//! another rank to unlock is not a stuck peer; a dead leader is still
//! seen by the wait).
//!
//! Fail-over: the kernel releases a dead leader's locks with its
//! descriptors. A lock call the leader was in is run again by the new
//! leader, so it takes that lock; locks taken in earlier calls are not
//! re-acquired (docs/interposition.md, "Locks").

use crate::coord::failover::Stop;
use crate::coord::faults;
use crate::coord::file::SharedFile;
use crate::coord::round::{coordinated, copy_payload, forgive_redo, main_thread_only, Outcome};
use crate::ft::membership;
use crate::state::phase;
use crate::sys::errno::errno;
use redio_protocols::leader::{self, Reply};
use redio_protocols::Operation;

/// What a lock call does, as far as coordination cares.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LockCall {
    /// The call may wait for another holder to unlock (`F_SETLKW`,
    /// `F_OFD_SETLKW`, `flock` without `LOCK_NB`, `lockf(F_LOCK)`).
    pub blocking: bool,
    /// The call reports a conflicting lock into the caller's buffer
    /// (`F_GETLK`, `F_OFD_GETLK`): its bytes are the leader's.
    pub query: bool,
}

/// The `fcntl` commands that are locks, or `None`.
pub fn fcntl_lock(cmd: i32) -> Option<LockCall> {
    match cmd {
        libc::F_SETLK | libc::F_OFD_SETLK => Some(LockCall {
            blocking: false,
            query: false,
        }),
        libc::F_SETLKW | libc::F_OFD_SETLKW => Some(LockCall {
            blocking: true,
            query: false,
        }),
        libc::F_GETLK | libc::F_OFD_GETLK => Some(LockCall {
            blocking: false,
            query: true,
        }),
        _ => None,
    }
}

/// What `flock(fd, operation)` does.
pub fn flock_call(operation: i32) -> LockCall {
    LockCall {
        blocking: operation & libc::LOCK_NB == 0 && operation & libc::LOCK_UN == 0,
        query: false,
    }
}

/// What `lockf(fd, cmd, len)` does.
pub fn lockf_call(cmd: i32) -> LockCall {
    LockCall {
        blocking: cmd == libc::F_LOCK,
        query: false,
    }
}

/// Runs the lock call `call` on `file` once, by the leader; every replica
/// returns its value (or errno). `what` and `args` are announced (a replica
/// that asks for another lock diverges). With `buf` (`len` bytes, the
/// caller's `struct flock`), `call` gets a copy of it and the leader's
/// bytes afterwards are copied into it on every replica.
///
/// After `MPI_Finalize` there is no round: the leader locks, the others
/// return success without locking (a query asks the real function).
pub fn on_leader(
    what: &str,
    file: &SharedFile,
    args: (u64, u64),
    kind: LockCall,
    buf: Option<(*mut u8, usize)>,
    mut call: impl FnMut(*mut u8) -> i32,
) -> Outcome<i32> {
    main_thread_only(what, &file.path.display())?;
    let mut run = || {
        let mut local = match buf {
            // SAFETY: the caller's buffer holds `len` bytes.
            Some((ptr, len)) => unsafe { std::slice::from_raw_parts(ptr, len) }.to_vec(),
            None => Vec::new(),
        };
        let rc = call(if buf.is_some() {
            local.as_mut_ptr()
        } else {
            std::ptr::null_mut()
        });
        Reply {
            outcome: if rc < 0 {
                Err(errno())
            } else {
                Ok(i64::from(rc))
            },
            payload: if kind.query { local } else { Vec::new() },
        }
    };
    let reply = if !phase::active() {
        if membership::is_leader() || kind.query {
            run()
        } else {
            Reply::bare(Ok(0))
        }
    } else {
        let op = Operation {
            kind: what.to_owned(),
            path: file.app_path.display().to_string(),
            offset: args.0,
            len: args.1,
        };
        coordinated(&op, |link, seq| {
            if kind.blocking {
                // Waiting for another rank's unlock is not a stuck peer.
                link.set_deadline(None);
            }
            faults::maybe_die(seq);
            let (reply, _) = leader::round(
                link,
                seq,
                || forgive_redo(&op, run()),
                || faults::after_call(seq),
            )
            .map_err(Stop::from)?;
            Ok(reply)
        })
        .unwrap_or_else(|errno| Reply::bare(Err(errno)))
    };
    let value = reply.outcome?;
    if let (true, Some((ptr, len))) = (kind.query, buf) {
        if !reply.payload.is_empty() {
            copy_payload(&reply.payload, ptr, len)?;
        }
    }
    Ok(value as i32)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_waiting_calls_wait_without_a_deadline() {
        for cmd in [libc::F_SETLKW, libc::F_OFD_SETLKW] {
            assert_eq!(
                fcntl_lock(cmd),
                Some(LockCall {
                    blocking: true,
                    query: false
                })
            );
        }
        for cmd in [libc::F_SETLK, libc::F_OFD_SETLK] {
            assert!(!fcntl_lock(cmd).unwrap().blocking);
        }
        for cmd in [libc::F_GETLK, libc::F_OFD_GETLK] {
            assert_eq!(
                fcntl_lock(cmd),
                Some(LockCall {
                    blocking: false,
                    query: true
                })
            );
        }
        for cmd in [libc::F_GETFL, libc::F_SETFL, libc::F_DUPFD, libc::F_GETFD] {
            assert_eq!(fcntl_lock(cmd), None);
        }
        assert!(flock_call(libc::LOCK_EX).blocking);
        assert!(!flock_call(libc::LOCK_EX | libc::LOCK_NB).blocking);
        assert!(!flock_call(libc::LOCK_UN).blocking);
        assert!(lockf_call(libc::F_LOCK).blocking);
        for cmd in [libc::F_TLOCK, libc::F_ULOCK, libc::F_TEST] {
            assert!(!lockf_call(cmd).blocking);
        }
    }
}
