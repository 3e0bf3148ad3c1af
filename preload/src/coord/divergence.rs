//! What the replicas do when they announced different calls under one
//! sequence number ([`redio_protocols::announce()`]): a divergence.
//!
//! - With a majority (r=3, one odd replica): the outvoted replica retires
//!   (like a failed one: its whole replica stops), and the majority fails
//!   over without it once it is gone ([`Stop::Link`]).
//! - Without one (r=2): every replica logs the divergence and the
//!   operation fails with `EIO` everywhere, or the job ends under
//!   `on_mismatch: abort`. At `MPI_Finalize`, which cannot fail, the job
//!   ends with [`EXIT_MISMATCH`] instead: waiting would hang it, since the
//!   other side waits for a call that will never come.
//!
//! `MPI_Finalize` is announced like an operation ([`announce_finalize`]), so
//! that a replica with an extra (or a missing) coordinated call at the end
//! meets its peers' `MPI_Finalize` instead of waiting for them forever.

use crate::coord::failover::Stop;
use crate::coord::link::SetLink;
use crate::ft::liveness;
use crate::ft::membership;
use crate::ft::watchdog;
use crate::state::settings;
use crate::state::world;
use redio_core::config;
use redio_protocols::{announce_refusable, Announced, Divergence, Errno};
use redio_protocols::{LinkError, Operation};
use std::time::{Duration, Instant};

/// The exit code of a job ended by a mismatch or divergence it cannot
/// return as an error (`on_mismatch: abort`, or a divergence at
/// `MPI_Finalize` without a majority).
pub const EXIT_MISMATCH: i32 = redio_core::outcome::EXIT_DIVERGED as i32;

/// The kind an `MPI_Finalize` is announced as.
pub const FINALIZE: &str = "MPI_Finalize";

/// Checks that every replica is about to run `op` as operation `seq`. A
/// divergence is logged with every replica's call and settled as the
/// module comment says. `refusal`: this replica cannot make the call (the
/// errno it would fail with); when any replica refuses, every replica
/// fails the call with the first refusal's errno, before anything is done.
pub fn agree(
    link: &mut SetLink,
    seq: u64,
    op: &Operation,
    refusal: Option<Errno>,
) -> Result<(), Stop> {
    let rank = world::identity().map_or(0, |i| i.placement.rank);
    match announce_refusable(link, rank, seq, op, refusal) {
        Ok(Announced::Agreed { refused: None }) => Ok(()),
        Ok(Announced::Agreed {
            refused: Some((replica, errno)),
        }) => {
            crate::log!(
                Debug,
                "{op}: replica {replica} cannot make the call (errno {errno}): it fails on \
                 every replica"
            );
            Err(Stop::Errno(errno))
        }
        Ok(Announced::Diverged(divergence)) => settle(&divergence, op.kind == FINALIZE),
        Err(error) => Err(Stop::from(error)),
    }
}

/// Announces `op` as operation `seq` like [`agree`], but different paths
/// under the same kind are no divergence: returns whether every replica
/// named the same path. Any other difference is a divergence, settled as
/// in [`agree`]; a refusal on the same path fails the call as there.
pub fn same_path(
    link: &mut SetLink,
    seq: u64,
    op: &Operation,
    refusal: Option<Errno>,
) -> Result<bool, Stop> {
    let rank = world::identity().map_or(0, |i| i.placement.rank);
    match announce_refusable(link, rank, seq, op, refusal) {
        Ok(Announced::Agreed { refused: None }) => Ok(true),
        Ok(Announced::Agreed {
            refused: Some((_, errno)),
        }) => Err(Stop::Errno(errno)),
        Ok(Announced::Diverged(divergence)) if named_apart(&divergence, op) => Ok(false),
        Ok(Announced::Diverged(divergence)) => settle(&divergence, false).map(|()| false),
        Err(error) => Err(Stop::from(error)),
    }
}

/// True when the replicas announced the same kind of call, on paths that
/// are not all `mine`'s: each replica named its own file (a process id in
/// the name), which is no divergence.
fn named_apart(divergence: &Divergence, mine: &Operation) -> bool {
    divergence.operations.iter().all(|o| o.kind == mine.kind)
        && divergence.operations.iter().any(|o| o.path != mine.path)
}

/// Announces `MPI_Finalize` to the replica set as operation `seq`, so that
/// a replica still issuing coordinated calls learns that its peers are
/// done. Deaths found on the way are left to the finish (it sees them).
pub fn announce_finalize(seq: u64) {
    let Some(mut link) = SetLink::current() else {
        return;
    };
    let op = Operation {
        kind: FINALIZE.into(),
        path: String::new(),
        offset: 0,
        len: 0,
    };
    let _ = agree(&mut link, seq, &op, None);
}

fn settle(divergence: &Divergence, at_finalize: bool) -> Result<(), Stop> {
    let Some(view) = membership::current() else {
        return Err(Stop::Errno(libc::EIO));
    };
    let outvoted = divergence.outvoted();
    if outvoted.contains(&view.me) {
        crate::log!(Error, "{divergence}; this replica is outvoted and retires");
        watchdog::retire_diverged();
    }
    if !outvoted.is_empty() {
        let odd: Vec<u32> = outvoted.iter().map(|&i| view.members[i]).collect();
        crate::log!(
            Error,
            "{divergence}; world rank(s) {odd:?} outvoted: they retire and the others go on"
        );
        wait_for_exit(&odd);
        return Err(Stop::Link(LinkError::PeerFailed {
            replica: outvoted[0],
        }));
    }
    let abort = settings::get().is_some_and(|c| c.voting.on_mismatch == config::OnMismatch::Abort);
    if abort || at_finalize {
        let why = if at_finalize {
            "at MPI_Finalize, with no majority to outvote a replica"
        } else {
            "on_mismatch is abort"
        };
        crate::log!(Error, "{divergence}; {why}: ending the job");
        crate::state::exits::abort_job(EXIT_MISMATCH);
    }
    crate::log!(Error, "{divergence}; every replica returns EIO");
    crate::state::report::event(redio_core::outcome::Event::Diverged {
        report: divergence.to_string(),
    });
    Err(Stop::Errno(libc::EIO))
}

/// Waits until the outvoted processes are gone (they retire at once), so
/// that the fail-over that follows finds them dead. One that lingers past
/// `faults.timeout` on this node is killed; after twice that the wait ends
/// (a process on another node: the fail-over then finds nobody dead and
/// the operation fails with `EIO`).
fn wait_for_exit(odd: &[u32]) {
    let limit = settings::get().map_or(Duration::from_secs(10), |c| c.faults.timeout);
    let started = Instant::now();
    while !odd.iter().all(|&w| liveness::failed(w)) && started.elapsed() < 2 * limit {
        if started.elapsed() > limit {
            odd.iter().for_each(|&w| liveness::kill_if_local(w));
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}
