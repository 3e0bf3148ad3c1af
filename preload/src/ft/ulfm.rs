//! The ULFM back-end of fail-over (Open MPI 5 started with
//! `mpirun --with-ft ulfm`): the MPI library itself reports a dead peer.
//!
//! - [`activate`] puts `MPI_ERRORS_RETURN` on the real `MPI_COMM_WORLD`
//!   before redio builds its communicators from it, so that a failure comes
//!   back as an error code instead of killing the job (their children
//!   inherit the handler).
//! - The waits map `MPIX_ERR_PROC_FAILED` and `MPIX_ERR_REVOKED` to
//!   [`poll::PEER_DIED`] ([`is_failure`]), as the liveness back-end does
//!   for a dead process id.
//! - [`recover`] replaces the liveness back-end's meeting: the first
//!   survivor to notice revokes the replica set's communicator (so every
//!   other survivor's pending operation fails too), all survivors shrink
//!   it, agree on the dead set with `MPIX_Comm_agree`, and find the
//!   furthest operation with one all-reduce on the new communicator.
//! - The application's replica world gets an error handler
//!   ([`guard_replica_world`]) that retires this replica when a process of
//!   it failed, and ends the job on any other error, as
//!   `MPI_ERRORS_ARE_FATAL` would.
//!
//! The liveness back-end keeps running beside it (process ids on the same
//! node, the watchdog), because Open MPI does not report a process that
//! exits with a non-zero code, and rarely not even a `SIGKILL`
//! (docs/fault-tolerance.md): such a death is seen by process id, and
//! [`recover`] waits for Open MPI to know it before shrinking, as long as
//! how the dead ended says it will ([`grace_for`]). When Open MPI never
//! learns, [`recover`] says so ([`Unrecovered::Unreported`]) and the
//! survivors meet by process id instead, as on the liveness back-end
//! (`membership`).

use crate::comm::collective;
use crate::comm::ffi;

use crate::comm::mpix;
use crate::comm::p2p;
use crate::comm::pmpi;
use crate::comm::poll;
use crate::comm::request::Op;
use crate::ft::liveness;
use crate::ft::watchdog;
use crate::state::exits;
use crate::state::settings;
use crate::state::world;
use crate::sys::guard::InsideMpi;
use crate::sys::log;
use redio_core::outcome::ExitHow;
use std::ffi::c_int;
use std::time::{Duration, Instant};

/// How long a survivor that saw a death by process id waits for Open MPI
/// to report it before it gives up on revoke and shrink (which would wait
/// for the dead forever), when it cannot tell whether Open MPI will
/// ([`grace_for`]).
pub const REPORT_GRACE: Duration = Duration::from_secs(2);

/// How long it waits when the dead ended in a way Open MPI reports (a
/// signal, an exit with status 0, redio's own retirement by `SIGKILL`):
/// the report usually comes within milliseconds, but under load it came
/// after more than [`REPORT_GRACE`] (the soak, docs/fault-tolerance.md),
/// and a report that arrives while the survivors meet by process id
/// splits them.
pub const LATE_REPORT_GRACE: Duration = Duration::from_secs(10);

/// Turns the back-end on when this is an Open MPI 5 build running with
/// `--with-ft ulfm` ([`mpix::enabled`]). Call once after `MPI_Init`, before
/// redio creates any communicator. Returns whether it is on.
pub fn activate() -> bool {
    if !mpix::enabled() {
        return false;
    }
    let _inside = InsideMpi::enter();
    // SAFETY: the real world is valid after MPI_Init.
    let rc = unsafe {
        pmpi::PMPI_Comm_set_errhandler(world::real_world(), ffi::redio_mpi_errors_return)
    };
    if rc != unsafe { ffi::redio_mpi_success } {
        crate::log!(
            Warn,
            "ULFM: cannot set MPI_ERRORS_RETURN (MPI code {rc}): fail-over uses process ids only"
        );
        return false;
    }
    liveness::set_mpi_reports_deaths();
    crate::log!(
        Debug,
        "ULFM fault tolerance is on: fail-over uses revoke, shrink and agree"
    );
    true
}

/// True when the ULFM back-end is on ([`activate`]).
pub fn active() -> bool {
    liveness::mpi_reports_deaths()
}

/// True when `code` (an MPI return code) reports a failed process or a
/// revoked communicator under the ULFM back-end: a peer died somewhere.
pub fn is_failure(code: c_int) -> bool {
    active() && (mpix::is_proc_failed(code) || mpix::is_revoked_error(code))
}

/// Gives `comm`, the application's replica world, the error handler that
/// retires this replica on a process failure (`crate::exports::callbacks::redio_on_replica_world_error`).
/// Communicators the application derives from it inherit the handler.
///
/// # Safety
/// `comm` is a valid communicator of this process.
pub unsafe fn guard_replica_world(comm: ffi::MPI_Comm) {
    if !active() {
        return;
    }
    let _inside = InsideMpi::enter();
    let mut handler = std::mem::zeroed();
    let created =
        pmpi::PMPI_Comm_create_errhandler(ffi::redio_errhandler_replica_world, &mut handler);
    if created != ffi::redio_mpi_success
        || pmpi::PMPI_Comm_set_errhandler(comm, handler) != ffi::redio_mpi_success
    {
        crate::log!(
            Warn,
            "ULFM: cannot guard the replica world: a failure seen first by the application \
             ends the job"
        );
    }
}

/// What the replica world's error handler (shim.c, through
/// `crate::exports::callbacks`) does with the error code of a failed MPI
/// call of the application.
pub fn on_replica_world_error(code: c_int) -> ! {
    if is_failure(code) {
        // A process of this replica died (the replica world holds only
        // this replica's processes): the replica retires as a unit.
        // Open MPI may not say which; any other process of it stands in.
        if let Some(dead) =
            failed_in_own_replica().or_else(|| watchdog::own_replica().first().copied())
        {
            watchdog::retire(dead);
        }
    }
    log::announce(format_args!(
        "error: MPI error in the application: {} (MPI_ERRORS_ARE_FATAL)",
        error_text(code)
    ));
    crate::state::exits::abort_job(code)
}

/// A failed process of this replica: by process id, else by Open MPI's
/// local knowledge of the real world.
fn failed_in_own_replica() -> Option<u32> {
    watchdog::dead_in_own_replica().or_else(|| {
        // SAFETY: the real world is valid while MPI runs.
        let failed = unsafe { mpix::failed_ranks(world::real_world()) }.ok()?;
        let own = watchdog::own_replica();
        failed
            .iter()
            .map(|&r| r as u32)
            .find(|w| own.contains(w))
            .or_else(|| failed.first().map(|&r| r as u32))
    })
}

/// The MPI library's text for `code`.
fn error_text(code: c_int) -> String {
    let mut text = vec![0u8; 1024];
    let mut len = 0;
    let _inside = InsideMpi::enter();
    // SAFETY: the buffer holds MPI_MAX_ERROR_STRING (256 in Open MPI) bytes.
    unsafe { pmpi::PMPI_Error_string(code, text.as_mut_ptr().cast(), &mut len) };
    text.truncate(len.clamp(0, 1024) as usize);
    String::from_utf8_lossy(&text).into_owned()
}

/// What the survivors of a replica set agreed on.
pub struct Shrunk {
    /// The survivors' communicator.
    pub comm: ffi::MPI_Comm,
    /// Positions (in the old view) of the survivors, in order.
    pub survivors: Vec<usize>,
    /// The furthest operation any survivor reached.
    pub max_seq: u64,
}

/// Whether Open MPI will report a death, judged by how the dead process
/// ended (docs/fault-tolerance.md, "How a death is reported").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Report {
    /// Ended by a signal, with status 0, or retired by redio (which kills
    /// itself under this back-end): reported, perhaps late.
    Coming,
    /// The application exited with a non-zero status, and the heartbeat
    /// detector is off: never reported.
    Never,
    /// Its event file is out of sight (outside `redio run`, another node).
    Unknown,
}

/// How Open MPI will learn of the death of `world_rank`, from the exit it
/// recorded in the run directory ([`exits::event_file_of`]).
fn report_of(world_rank: u32) -> Report {
    let Some(events) = exits::event_file_of(world_rank) else {
        return Report::Unknown;
    };
    match redio_core::outcome::recorded_exit(&events) {
        // No exit line: killed by a signal.
        None => Report::Coming,
        Some((_, ExitHow::Retired | ExitHow::RankLost)) | Some((0, _)) => Report::Coming,
        Some(_) if heartbeat_detector_on() => Report::Coming,
        Some(_) => Report::Never,
    }
}

/// True when the job runs Open MPI's heartbeat detector
/// (`--mca mpi_ft_detector true`), which reports non-zero exits too.
/// `mpirun --mca` puts it in every process's environment (checked with
/// Open MPI 5.0.11: `mpirun --mca mpi_ft_detector true -n 1 env`).
fn heartbeat_detector_on() -> bool {
    std::env::var("OMPI_MCA_mpi_ft_detector")
        .is_ok_and(|v| matches!(v.trim(), "1" | "true" | "yes" | "on"))
}

/// How long to wait for Open MPI to report the deaths of `dead` (world
/// ranks): not at all when it never will, [`LATE_REPORT_GRACE`] when it
/// will, and [`REPORT_GRACE`] (or `faults.timeout` when that is shorter)
/// when it cannot be told or the deaths differ.
fn grace_for(dead: &[u32]) -> Duration {
    let reports: Vec<Report> = dead.iter().map(|&w| report_of(w)).collect();
    if reports.iter().all(|&r| r == Report::Never) {
        Duration::ZERO
    } else if reports.iter().all(|&r| r == Report::Coming) {
        LATE_REPORT_GRACE
    } else {
        settings::get().map_or(REPORT_GRACE, |c| c.faults.timeout.min(REPORT_GRACE))
    }
}

/// Why [`recover`] gave the survivors no communicator.
pub enum Unrecovered {
    /// These world ranks are dead by process id, but Open MPI was not told
    /// within the grace ([`grace_for`]: `waited`) and nobody revoked the
    /// set: shrinking would wait for them forever, so the survivors must
    /// meet by process id.
    Unreported {
        /// The dead Open MPI does not know of.
        ranks: Vec<u32>,
        /// How long this survivor waited for the report.
        waited: Duration,
    },
    /// MPI failed; the reason is logged.
    Failed,
}

/// Revokes `comm` (the replica set of `members`, world ranks by position),
/// shrinks it to its survivors and agrees with them; this process is at
/// operation `seq`.
pub fn recover(comm: ffi::MPI_Comm, members: &[u32], seq: u64) -> Result<Shrunk, Unrecovered> {
    let _inside = InsideMpi::enter();
    let (unreported, waited) = wait_until_reported(comm, members);
    if !unreported.is_empty() {
        return Err(Unrecovered::Unreported {
            ranks: unreported,
            waited,
        });
    }
    let mut current = comm;
    let mut positions: Vec<usize> = (0..members.len()).collect();
    loop {
        // SAFETY: `current` is this set's communicator (or its shrunk
        // successor), a valid communicator of every survivor.
        unsafe {
            // Wakes every other survivor's pending operation on it.
            let _ = mpix::revoke(current);
        }
        let shrunk = match unsafe { mpix::shrink(current) } {
            Ok(shrunk) => shrunk,
            Err(code) => {
                crate::log!(
                    Error,
                    "fail-over: MPIX_Comm_shrink failed: {}",
                    error_text(code)
                );
                return Err(Unrecovered::Failed);
            }
        };
        // SAFETY: both are valid; the shrunk one's members are in `current`.
        let kept = match unsafe { ranks_in(shrunk, current) } {
            Ok(kept) => kept,
            Err(code) => {
                crate::log!(
                    Error,
                    "fail-over: cannot place the survivors: {}",
                    error_text(code)
                );
                return Err(Unrecovered::Failed);
            }
        };
        let survivors: Vec<usize> = kept.iter().map(|&r| positions[r as usize]).collect();
        if survivors.len() == members.len() {
            // Nobody failed: the revoke was someone's mistake or a failure
            // outside this set. Go on with the new communicator all the same
            // (the old one is revoked).
            crate::log!(Debug, "fail-over: every member of the set is alive");
        }
        // Every survivor has the same shrunk communicator; the agreement
        // confirms the dead set, and fails if someone else died meanwhile.
        let dead_mask = (0..members.len())
            .filter(|p| !survivors.contains(p))
            .fold(0i32, |m, p| m | (1 << p));
        let mut flags = !dead_mask;
        // SAFETY: `shrunk` is valid; `flags` is a valid int.
        let agreed = unsafe { mpix::agree(shrunk, &mut flags) };
        let max_seq = match agreed {
            Ok(()) if !flags == dead_mask => furthest(shrunk, seq),
            Ok(()) => Err(unsafe { ffi::redio_mpi_success }),
            Err(code) => Err(code),
        };
        match max_seq {
            Ok(max_seq) => {
                return Ok(Shrunk {
                    comm: shrunk,
                    survivors,
                    max_seq,
                })
            }
            // Another member failed meanwhile (or views differ): again,
            // from the survivors' communicator.
            Err(code)
                if code == poll::PEER_DIED
                    || is_failure(code)
                    || code == unsafe { ffi::redio_mpi_success } =>
            {
                current = shrunk;
                positions = survivors;
            }
            Err(code) => {
                crate::log!(Error, "fail-over: agreement failed: {}", error_text(code));
                return Err(Unrecovered::Failed);
            }
        }
    }
}

/// Waits (up to [`grace_for`] the dead) until Open MPI knows of every
/// member of `comm` found dead by process id, or another survivor revoked
/// `comm` (its knowledge then completes the shrink). Returns the world
/// ranks Open MPI still does not know dead after that (empty when
/// shrinking is safe), and how long it waited: a death with a non-zero exit
/// code, unreported without `mpi_ft_detector`, or a report later than the
/// grace (docs/fault-tolerance.md).
fn wait_until_reported(comm: ffi::MPI_Comm, members: &[u32]) -> (Vec<u32>, Duration) {
    let dead: Vec<usize> = (0..members.len())
        .filter(|&p| liveness::failed(members[p]))
        .collect();
    if dead.is_empty() {
        return (Vec::new(), Duration::ZERO);
    }
    let limit = grace_for(&dead.iter().map(|&p| members[p]).collect::<Vec<_>>());
    let started = Instant::now();
    loop {
        // Open MPI learns of a death in its progress engine, which looks
        // at runtime events only every so many calls: drive it hard.
        for _ in 0..PROGRESS_CALLS {
            // Only the progress matters, not what the probe finds.
            let _ = p2p::iprobe(ffi::MPI_ANY_SOURCE, ffi::MPI_ANY_TAG, comm);
        }
        // SAFETY: `comm` is valid.
        let revoked = unsafe { mpix::is_revoked(comm) }.unwrap_or(false);
        // SAFETY: `comm` is valid.
        let known = unsafe { mpix::failed_ranks(comm) }.unwrap_or_default();
        let unknown: Vec<u32> = dead
            .iter()
            .filter(|&&p| !known.contains(&(p as i32)))
            .map(|&p| members[p])
            .collect();
        let waited = started.elapsed();
        if revoked || unknown.is_empty() {
            // A late report is what the grace is for: say when it came.
            if waited >= REPORT_GRACE / 2 {
                crate::log!(
                    Info,
                    "fail-over: Open MPI reported the death after {waited:?}"
                );
            } else {
                crate::log!(
                    Debug,
                    "fail-over: Open MPI reported the death after {waited:?}"
                );
            }
            return (Vec::new(), waited);
        }
        if waited >= limit {
            return (unknown, waited);
        }
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// Progress calls per look at the failed set in [`wait_until_reported`].
const PROGRESS_CALLS: usize = 200;

/// The ranks in `outer` of the members of `inner`, in `inner`'s order.
///
/// # Safety
/// Both are valid communicators; `inner`'s members belong to `outer`.
unsafe fn ranks_in(inner: ffi::MPI_Comm, outer: ffi::MPI_Comm) -> Result<Vec<i32>, c_int> {
    let success = ffi::redio_mpi_success;
    let (mut from, mut to) = (std::mem::zeroed(), std::mem::zeroed());
    let mut size = 0;
    pmpi::PMPI_Comm_group(inner, &mut from);
    pmpi::PMPI_Comm_group(outer, &mut to);
    pmpi::PMPI_Group_size(from, &mut size);
    let ranks: Vec<c_int> = (0..size).collect();
    let mut translated = vec![0; ranks.len()];
    let rc =
        pmpi::PMPI_Group_translate_ranks(from, size, ranks.as_ptr(), to, translated.as_mut_ptr());
    pmpi::PMPI_Group_free(&mut from);
    pmpi::PMPI_Group_free(&mut to);
    if rc == success {
        Ok(translated)
    } else {
        Err(rc)
    }
}

/// The largest `seq` among the members of `comm`: a minimum of
/// `u64::MAX - seq` (the shim exports MPI_MIN), polled.
fn furthest(comm: ffi::MPI_Comm, seq: u64) -> Result<u64, c_int> {
    let mine = u64::MAX - seq;
    let mut least = [0u64];
    let rc = collective::allreduce(&[mine], &mut least, Op::Min, comm);
    if rc == unsafe { ffi::redio_mpi_success } {
        Ok(u64::MAX - least[0])
    } else {
        Err(rc)
    }
}
