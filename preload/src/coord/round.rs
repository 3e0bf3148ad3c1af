//! One coordinated operation of the replica set: announced by every
//! replica (a divergence fails it), bounded by the deadline, failed over
//! when a member dies ([`coordinated`]); and the leader round of metadata
//! calls ([`on_leader`], whose messages are [`redio_protocols::leader`]'s).
//!
//! - Data (`read`, `write` and their variants) goes through the configured
//!   protocol of `redio-protocols`, with CRC32 voting ([`super::file`]).
//! - Metadata (`open`, `fstat`, `lseek(SEEK_END)`, `ftruncate`, `fsync`,
//!   the `stat` and `access` families, name operations such as `unlink`,
//!   `rename`, `mkdir`, `rmdir`, `link`, `chmod`, directory listings, and
//!   locks) is done once, by the leader (replica 0),
//!   which sends its outcome to the others: every replica returns the same
//!   answer, and `O_CREAT|O_TRUNC` truncates exactly once.

use crate::coord::failover::{self, Stop};
use crate::coord::link::SetLink;
use crate::coord::{divergence, faults, sequence};
use crate::ft::membership;
use crate::state::{phase, settings, world};
use crate::sys::errno::errno;
use redio_core::outcome::Event;
use redio_protocols::leader::{self, Reply};
use redio_protocols::{Errno, LinkError, Mismatch, OnMismatch, Operation};
use std::cell::Cell;

/// Result of one replica's operation: a value or an errno.
pub type Outcome<T> = Result<T, Errno>;

/// Refuses coordinated I/O from threads other than the one that called
/// `MPI_Init`: their order is not deterministic across replicas. (After
/// `MPI_Finalize` nothing is coordinated, so any thread may go on.)
pub(crate) fn main_thread_only(call: &str, file: &dyn std::fmt::Display) -> Outcome<()> {
    if !phase::active() || phase::on_main_thread() {
        Ok(())
    } else {
        crate::log!(
            Error,
            "{call}({file}) from a thread other than the MPI main thread: shared-file I/O \
             is coordinated on the thread that called MPI_Init only; refused with ENOTSUP"
        );
        Err(libc::ENOTSUP)
    }
}

/// Logs a mismatch report; under `on_mismatch: abort`, then ends the job.
/// Every replica gets the same report, so every replica aborts. One that
/// nothing corrected (every replica gets `EIO`) is also recorded for
/// `redio run`, which fails the job for it.
pub(crate) fn report_mismatch(mismatch: Mismatch) {
    if mismatch.corrected_from.is_none() && mismatch.policy != OnMismatch::Abort {
        crate::state::report::event(Event::Diverged {
            report: mismatch.to_string(),
        });
    }
    match mismatch.policy {
        OnMismatch::Warn => crate::log!(Warn, "{mismatch}"),
        OnMismatch::Abort => {
            crate::log!(Error, "{mismatch}; on_mismatch is abort: ending the job");
            crate::state::exits::abort_job(divergence::EXIT_MISMATCH);
        }
        _ => crate::log!(Error, "{mismatch}"),
    }
}

/// This process's replica index (the original one: fault-injection
/// switches and part files name replicas by it).
pub(crate) fn my_replica() -> usize {
    world::identity().map_or(0, |i| i.placement.replica as usize)
}

/// Runs `step` as the next coordinated operation `op`: every replica
/// announces it (a divergence fails it), waits at most the deadline, and
/// fails over when a member dies. `step` gets the link and the sequence
/// number.
pub(crate) fn coordinated<T>(
    op: &Operation,
    mut step: impl FnMut(&mut SetLink, u64) -> Result<T, Stop>,
) -> Result<T, Errno> {
    let seq = sequence::next();
    let tentative = TENTATIVE.with(|t| t.replace(false));
    let refusal = REFUSAL.with(|r| r.replace(None));
    failover::run(
        seq,
        op,
        |e| report_link(&op.kind, e),
        |link| {
            if tentative {
                if !divergence::same_path(link, seq, op, refusal)? {
                    // Nothing was done: the caller passes the call through.
                    APART.with(|a| a.set(true));
                    return Err(Stop::Errno(libc::EIO));
                }
            } else {
                divergence::agree(link, seq, op, refusal)?;
            }
            link.set_deadline(deadline());
            step(link, seq)
        },
    )
}

thread_local! {
    /// Set by [`tentatively`] until the next coordinated operation takes it.
    static TENTATIVE: Cell<bool> = const { Cell::new(false) };
    /// Set when that operation found the replicas naming different paths.
    static APART: Cell<bool> = const { Cell::new(false) };
    /// Set by [`refusing`] until the next coordinated operation takes it.
    static REFUSAL: Cell<Option<Errno>> = const { Cell::new(None) };
}

/// Runs `call`, whose next coordinated operation this replica already
/// knows it cannot complete when `refusal` is set (e.g. `EMFILE`: no
/// descriptor left for an `open`). The refusal travels with that
/// operation's announcement: when any replica refuses, the operation does
/// nothing and fails with the first refusal's errno on every replica, so
/// every replica fails the same call, as a plain run would.
pub(crate) fn refusing<R>(refusal: Option<Errno>, call: impl FnOnce() -> R) -> R {
    REFUSAL.with(|r| r.set(refusal));
    let result = call();
    REFUSAL.with(|r| r.set(None));
    result
}

/// Runs `call`, a call on a node-local path of co-located replicas
/// ([`crate::io::paths::Resolved::tentative`]), so that its first
/// coordinated operation also checks that every replica names the same
/// path, as [`same_path_everywhere`] does in a round of its own. Returns
/// the call's result and whether the replicas named different paths: the
/// operation then did nothing and failed alike on every replica, and the
/// caller passes the call through.
pub(crate) fn tentatively<R>(call: impl FnOnce() -> R) -> (R, bool) {
    TENTATIVE.with(|t| t.set(true));
    APART.with(|a| a.set(false));
    let result = call();
    TENTATIVE.with(|t| t.set(false));
    (result, APART.with(|a| a.replace(false)))
}

/// The kind under which co-located replicas compare a node-local path
/// ([`same_path_everywhere`]).
const COLOCATED_PATH: &str = "node-local path";

/// True when every replica of this logical rank names `path` at this
/// point: co-located replicas then share that node-local file and
/// coordinate it. Names that differ (a process id or a random temporary
/// name in them) are each replica's own file, as in a plain run: false,
/// and no divergence. A failed round (a dead peer, a real divergence) also
/// gives false: the call then passes through, as it did before redio
/// coordinated node-local files.
pub(crate) fn same_path_everywhere(path: &std::path::Path) -> bool {
    let op = operation(COLOCATED_PATH, path.display(), 0, 0);
    let seq = sequence::next();
    failover::run(
        seq,
        &op,
        |e| report_link(&op.kind, e),
        |link| {
            link.set_deadline(deadline());
            divergence::same_path(link, seq, &op, None)
        },
    )
    .unwrap_or(false)
}

/// The deadline of a wait once every replica announced the operation
/// (`faults.timeout`). With heartbeats a dead peer on another node is
/// found after `faults.timeout` without a beat, and fails over: the
/// deadline, which ends the operation with an error instead, then only
/// catches peers that are alive but stuck, so it is twice as long.
pub(crate) fn deadline() -> Option<std::time::Duration> {
    settings::get().map(|c| match c.faults.heartbeat_dir {
        Some(_) => 2 * c.faults.timeout,
        None => c.faults.timeout,
    })
}

/// The announcement of a call `kind` on `path`.
pub(crate) fn operation(
    kind: &str,
    path: impl std::fmt::Display,
    offset: u64,
    len: u64,
) -> Operation {
    Operation {
        kind: kind.to_owned(),
        path: path.to_string(),
        offset,
        len,
    }
}

pub(crate) fn report_link(what: &str, error: &LinkError) -> Errno {
    crate::log!(
        Error,
        "{what}: coordination with the other replicas failed: {error}"
    );
    libc::EIO
}

/// Runs `operation` once, on the leader (the first live replica), and
/// returns its reply on every replica, with whether this process was the
/// leader. After `MPI_Finalize` every replica runs it alone. A leader that
/// dies is replaced, and the new one runs `operation` again
/// ([`failover::run`]).
pub(crate) fn on_leader(op: Operation, mut operation: impl FnMut() -> Reply) -> (Reply, bool) {
    if !phase::active() {
        return (operation(), membership::is_leader());
    }
    let result = coordinated(&op, |link, seq| {
        faults::maybe_die(seq);
        let (reply, leader) = leader::round(
            link,
            seq,
            || forgive_redo(&op, operation()),
            || faults::after_call(seq),
        )?;
        Ok((reply, leader))
    });
    result.unwrap_or_else(|errno| (Reply::bare(Err(errno)), false))
}

/// Agrees on a call every replica made on its own copy of a file (one
/// server per replica): the first failure in replica order, the same on
/// every replica, or success when all succeeded.
pub(crate) fn agree_on_outcome(op: Operation, mine: Outcome<()>) -> Outcome<()> {
    if !phase::active() {
        return mine;
    }
    coordinated(&op, |link, seq| {
        Ok(leader::agree_on_outcome(link, seq, mine)?)
    })
    .and_then(|agreed| agreed)
}

/// True when `errno` from name operation `kind`, run again after a
/// fail-over, means the failed leader already did it: the source is gone
/// (`unlink`, `remove`, `rename`, `rmdir`) or the name exists (`mkdir`,
/// `link`, `symlink`, `mknod`, `mkfifo`).
pub fn done_by_failed_leader(kind: &str, errno: Errno) -> bool {
    match errno {
        libc::ENOENT => matches!(
            kind,
            "unlink" | "unlinkat" | "remove" | "rename" | "renameat" | "rmdir"
        ),
        libc::EEXIST => matches!(
            kind,
            "mkdir"
                | "mkdirat"
                | "link"
                | "linkat"
                | "symlink"
                | "symlinkat"
                | "mknod"
                | "mknodat"
                | "mkfifo"
                | "mkfifoat"
        ),
        _ => false,
    }
}

/// A name operation run again by a new leader may find its work done by
/// the dead one (`unlink`/`rename`: the source is gone; `mkdir`: the
/// directory exists): that is success.
pub(crate) fn forgive_redo(op: &Operation, reply: Reply) -> Reply {
    let done_before = failover::redoing()
        && reply
            .outcome
            .is_err_and(|errno| done_by_failed_leader(&op.kind, errno));
    if done_before {
        crate::log!(
            Warn,
            "{} {}: run again after a fail-over, found done by the failed leader",
            op.kind,
            op.path
        );
        return Reply {
            outcome: Ok(0),
            payload: reply.payload,
        };
    }
    reply
}

/// Runs a C call returning `0`/`-1` once on the leader; same result
/// everywhere.
pub(crate) fn leader_call(op: Operation, mut call: impl FnMut() -> i32) -> Outcome<()> {
    on_leader(op, || {
        let rc = call();
        Reply {
            outcome: if rc < 0 {
                Err(errno())
            } else {
                Ok(i64::from(rc))
            },
            payload: Vec::new(),
        }
    })
    .0
    .outcome
    .map(|_| ())
}

/// A `stat`-like call on a shared path (`subject`, as the application
/// named it), done by the leader: `call` fills a buffer of `len` bytes;
/// every replica gets the same bytes in `buf`.
pub fn stat_on_leader(
    what: &str,
    subject: &std::path::Path,
    buf: *mut u8,
    len: usize,
    mut call: impl FnMut(*mut u8) -> i32,
) -> Outcome<()> {
    main_thread_only(what, &subject.display())?;
    let (reply, _) = on_leader(operation(what, subject.display(), 0, 0), || {
        let mut local = vec![0u8; len];
        let rc = call(local.as_mut_ptr());
        Reply {
            outcome: if rc < 0 { Err(errno()) } else { Ok(0) },
            payload: local,
        }
    });
    reply.outcome?;
    copy_payload(&reply.payload, buf, len)
}

/// A name operation (`unlink`, `rename`) on shared paths (`subject`, as
/// the application named it), done once by the leader; same result
/// everywhere.
pub fn name_on_leader(
    what: &str,
    subject: &std::path::Path,
    call: impl FnMut() -> i32,
) -> Outcome<()> {
    main_thread_only(what, &subject.display())?;
    leader_call(operation(what, subject.display(), 0, 0), call)
}

pub(crate) fn copy_payload(payload: &[u8], buf: *mut u8, len: usize) -> Outcome<()> {
    if payload.len() != len {
        return Err(libc::EIO);
    }
    // SAFETY: the caller's buffer has `len` bytes.
    unsafe { std::ptr::copy_nonoverlapping(payload.as_ptr(), buf, len) };
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::done_by_failed_leader;

    #[test]
    fn a_redone_name_operation_forgives_only_the_trace_of_its_first_run() {
        for kind in [
            "unlink", "unlinkat", "remove", "rename", "renameat", "rmdir",
        ] {
            assert!(done_by_failed_leader(kind, libc::ENOENT), "{kind}");
            assert!(!done_by_failed_leader(kind, libc::EEXIST), "{kind}");
        }
        for kind in [
            "mkdir",
            "mkdirat",
            "link",
            "linkat",
            "symlink",
            "symlinkat",
            "mknod",
        ] {
            assert!(done_by_failed_leader(kind, libc::EEXIST), "{kind}");
            assert!(!done_by_failed_leader(kind, libc::ENOENT), "{kind}");
        }
        for kind in ["chmod", "access", "open", "flock"] {
            assert!(!done_by_failed_leader(kind, libc::ENOENT), "{kind}");
            assert!(!done_by_failed_leader(kind, libc::EEXIST), "{kind}");
        }
    }
}
