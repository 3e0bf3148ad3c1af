//! The live replica set of this logical rank, and the survivors' agreement
//! when a member dies.
//!
//! The set starts as the `r` processes of the logical rank, in replica
//! order; the protocols address them by position (0 leads). When a wait
//! finds a member dead ([`poll::PEER_DIED`]), the operation stops and the
//! caller runs [`recover`]: the survivors meet on the old communicator,
//! agree on who is dead and how far each got, build a communicator of the
//! survivors, and go on with positions renumbered (the first survivor
//! leads). docs/fault-tolerance.md tells the whole story.

use crate::comm::collective;
use crate::comm::ffi;

use crate::comm::handle::HandleBits;
use crate::comm::mpix;
use crate::comm::p2p;
use crate::comm::pmpi;
use crate::comm::poll;
use crate::comm::request::Request;
use crate::ft::liveness;
use crate::ft::spares;
use crate::ft::ulfm;
use crate::ft::ulfm::Unrecovered;
use crate::ft::watchdog;
use crate::sys::guard::InsideMpi;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::Instant;

/// The live members of the replica set and their communicator.
#[derive(Clone, Debug)]
pub struct View {
    /// The communicator of the live members (rank = position), as bits
    /// (Open MPI's handles are pointers, which a static cannot hold).
    comm_bits: usize,
    /// World ranks of the live members, in replica order.
    pub members: Vec<u32>,
    /// Their replica indices (the original ones).
    pub replicas: Vec<u32>,
    /// This process's position in `members`.
    pub me: usize,
}

static VIEW: Mutex<Option<View>> = Mutex::new(None);
/// Whether this process led its set when the view was last installed
/// (kept after `MPI_Finalize`, when the view is gone).
static LEADER: AtomicBool = AtomicBool::new(true);

/// Tag base of the survivors' meeting on the old communicator: above every
/// protocol tag (`redio_protocols::tag` stays below 2^14); the dead set's
/// mask is added, so meetings about different dead sets never mix.
const MEETING_TAG: i32 = 0x5000;
/// Tag base of the survivors' communicator creation (plus the mask).
const GROUP_TAG: i32 = 0x5100;
/// Tag base of the survivors' check that every one of them built it (ULFM).
const BUILT_TAG: i32 = 0x5200;

/// Records the replica set built at start-up.
pub fn install(comm: ffi::MPI_Comm, members: Vec<u32>, replicas: Vec<u32>, me: usize) {
    LEADER.store(me == 0, Ordering::Relaxed);
    *lock() = Some(View {
        comm_bits: comm.to_bits(),
        members,
        replicas,
        me,
    });
}

/// Records the replica set `comm` (rank in it = replica index): its
/// members' world ranks are gathered with one polled `Iallgather`.
///
/// # Safety
/// `comm` is a valid communicator of this process, and every member calls
/// this together.
pub unsafe fn install_from_comm(comm: ffi::MPI_Comm, my_world_rank: u32) {
    let (mut me, mut size) = (0, 0);
    pmpi::PMPI_Comm_rank(comm, &mut me);
    pmpi::PMPI_Comm_size(comm, &mut size);
    // World ranks travel as MPI_INT, as they always did.
    let mut members = vec![0i32; size.max(0) as usize];
    collective::check(collective::allgather(
        &[my_world_rank as i32],
        &mut members,
        comm,
    ));
    let members: Vec<u32> = members.iter().map(|&w| w as u32).collect();
    let replicas = (0..members.len() as u32).collect();
    let me = me.max(0) as usize;
    spares::build(comm, me, members.len());
    install(comm, members, replicas, me);
}

impl View {
    /// The communicator of the live members.
    pub fn comm(&self) -> ffi::MPI_Comm {
        ffi::MPI_Comm::from_bits(self.comm_bits)
    }
}

fn lock() -> std::sync::MutexGuard<'static, Option<View>> {
    VIEW.lock().unwrap_or_else(|p| p.into_inner())
}

/// The current view, once the replica set exists.
pub fn current() -> Option<View> {
    lock().clone()
}

/// Forgets the view (at `MPI_Finalize`) and returns its communicator to
/// free, unless a failure happened (a communicator with a dead member is
/// not freed: that can wait for the dead).
pub fn uninstall() -> Option<ffi::MPI_Comm> {
    let view = lock().take()?;
    (!liveness::failures_seen()).then_some(view.comm())
}

/// True when this process leads its replica set (position 0), or has no
/// set; after `MPI_Finalize`, whether it led the set last.
pub fn is_leader() -> bool {
    LEADER.load(Ordering::Relaxed)
}

/// True when a member of the current replica set is known dead.
pub fn any_member_dead() -> bool {
    current().is_some_and(|v| liveness::first_dead(&v.members).is_some())
}

/// What the survivors agreed on.
#[derive(Debug)]
pub struct Recovered {
    /// World ranks found dead (members of the old view).
    pub dead: Vec<u32>,
    /// True when another survivor had already finished this operation:
    /// this process must complete it alone (no peer will run it again).
    pub behind: bool,
    /// Members left.
    pub degree: usize,
    /// When the agreement started.
    pub started: Instant,
}

/// Runs the survivors' agreement after operation `seq` stopped on a dead
/// member. Returns `None` when no member is known dead (the wait failed for
/// another reason: nothing to fail over).
pub fn recover(seq: u64) -> Option<Recovered> {
    let _inside = InsideMpi::enter();
    let started = Instant::now();
    let Some(old) = current() else {
        crate::log!(Warn, "fail-over: no replica set is installed");
        return None;
    };
    if ulfm::active() {
        match recover_with_ulfm(&old, seq, started) {
            Ok(recovered) => return Some(recovered),
            Err(Unrecovered::Failed) => return None,
            Err(Unrecovered::Unreported { ranks, waited }) => {
                crate::log!(
                    Warn,
                    "fail-over: world rank(s) {ranks:?} died, but Open MPI has not reported it \
                     after {waited:?} (a process that exits with a non-zero code is reported only \
                     with `--mca mpi_ft_detector true`): the survivors meet by process id \
                     instead of shrinking"
                );
                let met = recover_by_process_id(&old, seq, started);
                // SAFETY: the old view's communicator is still valid.
                if met.is_none() && unsafe { mpix::is_revoked(old.comm()) }.unwrap_or(false) {
                    // A survivor learned of the death late and revoked the
                    // set while this one met by process id: join its shrink.
                    return recover_with_ulfm(&old, seq, started).ok();
                }
                return met;
            }
        }
    }
    recover_by_process_id(&old, seq, started)
}

/// The liveness back-end's agreement: the survivors (by process id) meet
/// on the old communicator and build theirs with `MPI_Comm_create_group`.
fn recover_by_process_id(old: &View, seq: u64, started: Instant) -> Option<Recovered> {
    let mut dead = liveness::dead_among(&old.members);
    if dead.is_empty() {
        // A wait saw a dead member that is not dead now: it should not
        // happen (a reaped zombie once looked alive: `liveness::process_alive`).
        // Say so, so that any other cause can be traced.
        crate::log!(
            Warn,
            "fail-over: a wait gave up on a peer, but no member of the set {:?} is dead now",
            old.members
        );
        return None;
    }
    liveness::note_failure();
    // A replica that lost a process retires as a whole, whatever it was
    // doing: this process must not go on in its place.
    if let Some(own) = watchdog::dead_in_own_replica() {
        watchdog::retire(own);
    }
    die_in_failover_if_asked(old.members[old.me], seq, FailoverMoment::Meeting);
    loop {
        let mask = mask_of(old, &dead);
        let survivors: Vec<usize> = (0..old.members.len())
            .filter(|&i| mask & (1 << old.replicas[i]) == 0)
            .collect();
        match meet(old, &survivors, seq, mask) {
            Meeting::Agreed { max_seq } => {
                die_in_failover_if_asked(old.members[old.me], seq, FailoverMoment::Agreed);
                // The survivors' replicas: the whole set less the dead.
                let alive = mask_of(old, &old.members) & !mask;
                let comm = match spares::take(alive) {
                    Some(comm) => comm,
                    None => {
                        let built = survivors_comm(old, &survivors, mask);
                        if ulfm::active()
                            && !built_everywhere(old, &survivors, mask, built.is_some())
                        {
                            // The caller joins the shrink the revoke asks for.
                            return None;
                        }
                        built?
                    }
                };
                let Some(me) = survivors.iter().position(|&i| i == old.me) else {
                    // Every path that gives up says why (see the warning above).
                    crate::log!(
                        Error,
                        "fail-over: the survivors agreed on a set without this process \
                         (dead mask {mask:#x})"
                    );
                    return None;
                };
                install(
                    comm,
                    survivors.iter().map(|&i| old.members[i]).collect(),
                    survivors.iter().map(|&i| old.replicas[i]).collect(),
                    me,
                );
                return Some(Recovered {
                    dead,
                    behind: seq < max_seq,
                    degree: survivors.len(),
                    started,
                });
            }
            Meeting::Failed(code) => {
                crate::log!(
                    Error,
                    "fail-over: the survivors could not meet (MPI code {code})"
                );
                return None;
            }
            // Someone saw more dead (or another member died meanwhile):
            // meet again about the larger set.
            Meeting::Wider(wider) => {
                for (i, &w) in old.members.iter().enumerate() {
                    if wider & (1 << old.replicas[i]) != 0 && !dead.contains(&w) {
                        dead.push(w);
                    }
                }
            }
        }
    }
}

/// When in the fail-over [`die_in_failover_if_asked`] may kill.
#[derive(Clone, Copy, PartialEq)]
enum FailoverMoment {
    /// On joining the survivors' meeting.
    Meeting,
    /// Once the survivors agreed, before the new communicator is installed.
    Agreed,
}

/// Test hook: `REDIO_TEST_DIE_IN_FAILOVER=<world rank>[:kill][:agreed]`
/// makes that process die (`_exit(1)`, or SIGKILL) when it joins the
/// survivors' meeting, or with `agreed` once they agreed, so that a death
/// during the fail-over itself is tested.
fn die_in_failover_if_asked(me: u32, seq: u64, now: FailoverMoment) {
    let Ok(spec) = std::env::var("REDIO_TEST_DIE_IN_FAILOVER") else {
        return;
    };
    let mut fields = spec.split(':').map(str::trim);
    if fields.next().and_then(|r| r.parse::<u32>().ok()) != Some(me) {
        return;
    }
    let rest: Vec<&str> = fields.collect();
    let how = if rest.contains(&"kill") {
        "kill"
    } else {
        "exit"
    };
    let (moment, words) = if rest.contains(&"agreed") {
        (FailoverMoment::Agreed, "after the survivors agreed")
    } else {
        (FailoverMoment::Meeting, "in the survivors' meeting")
    };
    if moment != now {
        return;
    }
    crate::log!(
        Warn,
        "REDIO_TEST_DIE_IN_FAILOVER: dying ({how}) {words} after operation {seq}"
    );
    let signal = (how == "kill").then_some(libc::SIGKILL);
    crate::state::report::die_on_purpose(how, seq, signal)
}

/// [`recover`] on the ULFM back-end: revoke, shrink, agree
/// ([`ulfm::recover`]).
fn recover_with_ulfm(old: &View, seq: u64, started: Instant) -> Result<Recovered, Unrecovered> {
    liveness::note_failure();
    if let Some(own) = watchdog::dead_in_own_replica() {
        watchdog::retire(own);
    }
    let shrunk = ulfm::recover(old.comm(), &old.members, seq)?;
    let me = shrunk
        .survivors
        .iter()
        .position(|&i| i == old.me)
        .ok_or(Unrecovered::Failed)?;
    let dead: Vec<u32> = (0..old.members.len())
        .filter(|i| !shrunk.survivors.contains(i))
        .map(|i| old.members[i])
        .collect();
    install(
        shrunk.comm,
        shrunk.survivors.iter().map(|&i| old.members[i]).collect(),
        shrunk.survivors.iter().map(|&i| old.replicas[i]).collect(),
        me,
    );
    Ok(Recovered {
        dead,
        behind: seq < shrunk.max_seq,
        degree: shrunk.survivors.len(),
        started,
    })
}

/// The dead set as a mask of original replica indices.
fn mask_of(view: &View, dead: &[u32]) -> u64 {
    view.members
        .iter()
        .zip(&view.replicas)
        .filter(|(w, _)| dead.contains(w))
        .fold(0, |mask, (_, &replica)| mask | (1 << replica))
}

enum Meeting {
    /// Every survivor saw the same dead set; the furthest one is at `max_seq`.
    Agreed { max_seq: u64 },
    /// The union of what the survivors saw is larger: this mask.
    Wider(u64),
    /// The meeting failed with this code, and nobody new is known dead.
    Failed(i32),
}

/// Every survivor sends `(seq, mask)` to every other one on the old
/// communicator and receives theirs, watching the survivors.
fn meet(old: &View, survivors: &[usize], seq: u64, mask: u64) -> Meeting {
    crate::log!(
        Debug,
        "fail-over: meeting the survivors about dead mask {mask:#x} at operation {seq}"
    );
    let theirs = match exchange(old, survivors, MEETING_TAG + mask as i32, [seq, mask]) {
        Ok(theirs) => theirs,
        Err((rc, watched)) => {
            // Another survivor died (or the transport gave up on it).
            let wider = mask | mask_of(old, &liveness::dead_among(&watched));
            if wider == mask {
                // Nobody new is known dead: the transport failed for another
                // reason, and there is nothing to agree on.
                return Meeting::Failed(rc);
            }
            return Meeting::Wider(wider);
        }
    };
    crate::log!(Debug, "fail-over: met the survivors: they sent {theirs:?}");
    let union = theirs.iter().fold(mask, |m, t| m | t[1]);
    if union != mask {
        return Meeting::Wider(union);
    }
    let max_seq = theirs.iter().map(|t| t[0]).fold(seq, u64::max);
    Meeting::Agreed { max_seq }
}

/// Sends `mine` to every other survivor on the old communicator with `tag`
/// and receives theirs, watching them. On failure: the MPI code and the
/// world ranks watched.
fn exchange(
    old: &View,
    survivors: &[usize],
    tag: i32,
    mine: [u64; 2],
) -> Result<Vec<[u64; 2]>, (i32, Vec<u32>)> {
    let others: Vec<usize> = survivors.iter().copied().filter(|&i| i != old.me).collect();
    let mut theirs = vec![[0u64; 2]; others.len()];
    let watched: Vec<u32> = others.iter().map(|&i| old.members[i]).collect();
    if others.is_empty() {
        return Ok(theirs);
    }
    let comm = old.comm();
    // The first post that fails stops the exchange (the ones before it are
    // given up on as they drop).
    let posted: Result<Vec<Request<'_>>, i32> = theirs
        .iter_mut()
        .zip(&others)
        .map(|(slot, &peer)| p2p::irecv(slot, peer as i32, tag, comm))
        .chain(
            others
                .iter()
                .map(|&peer| p2p::isend(&mine, peer as i32, tag, comm)),
        )
        .collect();
    // Requests still pending after a failed wait are dropped here:
    // receives are cancelled, so `theirs` is never written later.
    let rc = posted.map_or_else(
        |code| code,
        |mut requests| poll::wait_each(&mut requests, 0, poll::Watch::Processes(&watched), None),
    );
    if rc != unsafe { ffi::redio_mpi_success } {
        return Err((rc, watched));
    }
    Ok(theirs)
}

/// ULFM reports errors to some processes and not others: one survivor's
/// `MPI_Comm_create_group` failed with `MPIX_ERR_PROC_FAILED` while the
/// other's succeeded and went on, waiting for it (the soak, Open MPI 5,
/// r=3). The survivors tell each other whether they built the
/// communicator; unless all did (and all heard it), this one revokes the
/// old communicator, so that every survivor joins the shrink instead
/// ([`recover`]).
fn built_everywhere(old: &View, survivors: &[usize], mask: u64, mine: bool) -> bool {
    let all = exchange(
        old,
        survivors,
        BUILT_TAG + mask as i32,
        [u64::from(mine), mask],
    )
    .is_ok_and(|theirs| mine && theirs.iter().all(|t| t[0] == 1));
    if !all {
        crate::log!(
            Warn,
            "fail-over: not every survivor built the survivors' communicator: revoking the \
             replica set's, to shrink it instead"
        );
        // SAFETY: the old view's communicator is still valid.
        let _ = unsafe { mpix::revoke(old.comm()) };
    }
    all
}

/// The communicator of `survivors` (positions in `old`), created by them
/// only.
fn survivors_comm(old: &View, survivors: &[usize], mask: u64) -> Option<ffi::MPI_Comm> {
    let ranks: Vec<i32> = survivors.iter().map(|&i| i as i32).collect();
    // SAFETY: every survivor makes the same call with the same ranks and
    // tag (they all agreed on `mask`).
    match unsafe {
        crate::comm::collective::try_create_group(old.comm(), &ranks, GROUP_TAG + mask as i32)
    } {
        Ok(comm) => Some(comm),
        Err(code) => {
            crate::log!(
                Error,
                "fail-over: cannot build the survivors' communicator (MPI code {code})"
            );
            None
        }
    }
}
