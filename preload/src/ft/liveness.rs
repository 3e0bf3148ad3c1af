//! Which processes of the job are still alive.
//!
//! MPICH and Open MPI 4.1 report nothing when a peer dies: a receive from it
//! simply never completes. redio therefore watches the processes itself.
//! At start-up every process learns every other one's process id and host
//! ([`install`]); a process on the same host is dead once `kill(pid, 0)`
//! fails with `ESRCH` or `/proc` shows it as a zombie. Processes on other
//! hosts cannot be checked this way: for them the beats of
//! [`heartbeat`] (with `faults.heartbeat_dir`) or else the operation
//! deadlines (`faults.timeout`) apply (docs/fault-tolerance.md).
//!
//! A survivor that completes after a failure leaves without `MPI_Finalize`,
//! so its exit looks like a death. It first leaves a marker
//! ([`mark_finished`]): the watchdogs of its replica do not retire over a
//! finished process ([`finished`]), while its replica-set peers stop
//! waiting for it like for a dead one.
//!
//! MPICH's launcher sends `SIGUSR1` to the survivors when a process dies
//! (with `-disable-auto-cleanup`); the handler only counts it ([`hint`]),
//! so that waits and the watchdog check at once instead of at their next
//! period. A count, not a flag: each of them notices a new hint by
//! comparing with the count it saw last ([`hints`]); a flag cleared by the
//! first to look hid the hint from the other (the watchdog then retired a
//! failed replica a whole `faults.heartbeat` late).

use crate::ft::heartbeat;

use crate::sys::rawfs;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::Instant;

/// One process of the job, as seen at start-up.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Peer {
    /// Its process id.
    pub pid: i32,
    /// A hash of its host name (equal hashes: the same node).
    pub host: u64,
}

static PEERS: OnceLock<Vec<Peer>> = OnceLock::new();
/// `REDIO_BENCH_NO_LIVENESS=1` turns every check off (peers count as
/// alive), for measuring what fail-over readiness costs (benches/failover.py).
static DISABLED: AtomicBool = AtomicBool::new(false);
static HOST: OnceLock<u64> = OnceLock::new();
/// Directory of the finished markers, with a trailing slash.
static MARKERS: OnceLock<String> = OnceLock::new();
static HINTS: AtomicU64 = AtomicU64::new(0);

/// Records every world rank's process (indexed by world rank) and this
/// process's host.
pub fn install(peers: Vec<Peer>, my_host: u64) {
    let _ = HOST.set(my_host);
    DISABLED.store(
        std::env::var_os("REDIO_BENCH_NO_LIVENESS").is_some_and(|v| v == "1"),
        Ordering::Relaxed,
    );
    // One directory per job and node: the run directory of `redio run`,
    // else one named after world rank 0's process.
    let dir = match std::env::var(redio_core::outcome::ENV_RUN_DIR) {
        Ok(dir) => format!("{dir}/"),
        Err(_) => format!(
            "{}/{}/",
            std::env::temp_dir().display(),
            job_name_of(&peers)
        ),
    };
    let _ = MARKERS.set(dir);
    let _ = PEERS.set(peers);
}

fn marker(world_rank: u32) -> Option<String> {
    Some(format!("{}finished.{world_rank}", MARKERS.get()?))
}

/// Leaves this process's finished marker (before it exits without
/// `MPI_Finalize`), in the node's run directory and, with heartbeats, in
/// the shared beat directory where other nodes look.
pub fn mark_finished(world_rank: u32) {
    let (Some(dir), Some(path)) = (MARKERS.get(), marker(world_rank)) else {
        return;
    };
    rawfs::mkdir(dir);
    rawfs::write(&path, b"");
    heartbeat::mark_finished(world_rank);
}

/// Whether `world_rank` left a finished marker (here or, with heartbeats,
/// in the beat directory).
pub fn finished(world_rank: u32) -> bool {
    marker(world_rank).is_some_and(|path| rawfs::exists(&path)) || heartbeat::finished(world_rank)
}

/// Whether `world_rank` died: gone without finishing.
pub fn failed(world_rank: u32) -> bool {
    !is_alive(world_rank) && !finished(world_rank)
}

/// How many death hints have arrived: a caller that saw a smaller count
/// before has a new one to act on.
pub fn hints() -> u64 {
    HINTS.load(Ordering::Relaxed)
}

/// Counts a death hint (async-signal-safe: one atomic add).
pub fn hint() {
    HINTS.fetch_add(1, Ordering::Relaxed);
}

/// True unless liveness checks are off (`REDIO_BENCH_NO_LIVENESS=1`).
pub fn enabled() -> bool {
    !DISABLED.load(Ordering::Relaxed)
}

/// Whether `world_rank` is alive, as far as this process can tell: by its
/// process id on this node; on another node, by its beat when
/// `faults.heartbeat_dir` is set (else it counts as alive, as before
/// [`install`]).
pub fn is_alive(world_rank: u32) -> bool {
    let (Some(peers), Some(&host)) = (PEERS.get(), HOST.get()) else {
        return true;
    };
    if !enabled() {
        return true;
    }
    match peers.get(world_rank as usize) {
        Some(peer) if peer.host == host => process_alive(peer.pid),
        // Another node: its beat, when beats are on (else deadlines only).
        Some(_) => heartbeat::alive(world_rank),
        None => true,
    }
}

/// Kills `world_rank` (SIGKILL) if it runs on this node: a process that
/// must not go on (outvoted, or stopped too long) and did not leave.
pub fn kill_if_local(world_rank: u32) {
    let (Some(peers), Some(&host)) = (PEERS.get(), HOST.get()) else {
        return;
    };
    if let Some(peer) = peers.get(world_rank as usize).filter(|p| p.host == host) {
        // SAFETY: signalling a process of this job.
        unsafe { libc::kill(peer.pid, libc::SIGKILL) };
    }
}

/// The name of this job's directory, the same in every process: world
/// rank 0's process id and host.
pub fn job_name() -> String {
    job_name_of(PEERS.get().map_or(&[], |p| p.as_slice()))
}

fn job_name_of(peers: &[Peer]) -> String {
    let first = peers.first().copied().unwrap_or(Peer { pid: 0, host: 0 });
    format!("redio-job-{}-{:x}", first.pid, first.host)
}

/// Whether every one of `world_ranks` runs on this node, where its death
/// is seen directly (no deadline needed to notice it).
pub fn all_local(world_ranks: &[u32]) -> bool {
    let (Some(peers), Some(&host)) = (PEERS.get(), HOST.get()) else {
        return false;
    };
    world_ranks
        .iter()
        .all(|&w| peers.get(w as usize).is_some_and(|p| p.host == host))
}

/// The members of `world_ranks` known to be dead, in the given order.
pub fn dead_among(world_ranks: &[u32]) -> Vec<u32> {
    world_ranks
        .iter()
        .copied()
        .filter(|&w| !is_alive(w))
        .collect()
}

/// The first member of `world_ranks` known to be dead.
pub fn first_dead(world_ranks: &[u32]) -> Option<u32> {
    world_ranks.iter().copied().find(|&w| !is_alive(w))
}

/// A process on this host is alive unless it is gone or a zombie (dead,
/// not yet reaped by its launcher), or stopped for too long
/// ([`stopped_too_long`]).
fn process_alive(pid: i32) -> bool {
    if gone(pid) {
        return false;
    }
    let state = process_state(pid);
    if ended(pid, state) {
        return false;
    }
    state != Some(b'T') || !stopped_too_long(pid)
}

/// Whether `pid`, which existed a moment ago and now shows `state` in
/// `/proc`, has ended: a zombie (dead, not yet reaped by its launcher), or
/// no `/proc` entry because the launcher reaped it in between. Counting
/// the latter as alive made a survivor that had just seen the zombie find
/// nobody dead and fail the operation with EIO instead of failing over
/// (about one random death in 300). Without `/proc` at all, the signal
/// check decides.
fn ended(pid: i32, state: Option<u8>) -> bool {
    match state {
        Some(b'Z' | b'X' | b'x') => true,
        Some(_) => false,
        None => gone(pid),
    }
}

/// A stopped process (`SIGSTOP`, `SIGTSTP`: state `T`) makes no progress
/// while its peers wait for it, and would write stale data if continued
/// later. Once this process has seen it stopped for `faults.timeout`, it
/// kills it (SIGKILL) and counts it dead: its replica retires and its
/// replica set fails over. Processes stopped by a debugger (state `t`) are
/// left alone.
///
/// The time counts only across observations at most two heartbeat periods
/// apart (the watchdog looks once per period; waits far more often): a
/// whole job stopped and continued (Ctrl-Z on the launcher) stopped the
/// observer too, and the gap in its observations restarts the count.
fn stopped_too_long(pid: i32) -> bool {
    let Some(faults) = crate::state::settings::get().map(|c| &c.faults) else {
        return false;
    };
    let (limit, gap) = (faults.timeout, 2 * faults.heartbeat);
    let now = Instant::now();
    let mut seen = STOPPED_SEEN.lock().unwrap_or_else(|p| p.into_inner());
    seen.retain(|_, watch| now.duration_since(watch.last) <= gap);
    let watch = seen.entry(pid).or_insert(StopWatch {
        first: now,
        last: now,
    });
    watch.last = now;
    if now.duration_since(watch.first) < limit {
        return false;
    }
    crate::log!(
        Warn,
        "process {pid} has been stopped for {limit:?} (faults.timeout) while its peers wait: \
         it is killed and counts as failed"
    );
    // SAFETY: signalling a process of this job.
    unsafe { libc::kill(pid, libc::SIGKILL) };
    // Dead for this process only once it is dead for every other one: the
    // fail-over that follows finds the dead by the same check.
    let killed = Instant::now();
    while !gone(pid) && !ended(pid, process_state(pid)) && killed.elapsed() < limit {
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    true
}

/// When this process first and last saw a process stopped.
struct StopWatch {
    first: Instant,
    last: Instant,
}

static STOPPED_SEEN: Mutex<BTreeMap<i32, StopWatch>> = Mutex::new(BTreeMap::new());

/// Whether no process `pid` exists any more (`kill(pid, 0)` fails with
/// `ESRCH`).
fn gone(pid: i32) -> bool {
    // SAFETY: signal 0 only checks that the process exists.
    let failed = unsafe { libc::kill(pid, 0) } != 0;
    failed && std::io::Error::last_os_error().raw_os_error() == Some(libc::ESRCH)
}

/// The state letter of `/proc/PID/stat` (the field after the command name).
fn process_state(pid: i32) -> Option<u8> {
    let mut buf = [0u8; 512];
    let n = rawfs::read(&format!("/proc/{pid}/stat"), &mut buf)?;
    let text = &buf[..n];
    // "PID (COMM) S ...": COMM may contain spaces and parentheses.
    let close = text.iter().rposition(|&b| b == b')')?;
    text.get(close + 2).copied()
}

/// Set once a death of a process of the job was seen.
static FAILURES_SEEN: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// True once a process of the job was seen dead.
pub fn failures_seen() -> bool {
    FAILURES_SEEN.load(std::sync::atomic::Ordering::Relaxed)
}

/// Notes that a process of the job died.
pub fn note_failure() {
    FAILURES_SEEN.store(true, std::sync::atomic::Ordering::Relaxed);
}

/// Set when the MPI library itself reports dead peers (the ULFM back-end,
/// `crate::ft::ulfm::activate`).
static MPI_REPORTS_DEATHS: std::sync::atomic::AtomicBool =
    std::sync::atomic::AtomicBool::new(false);

/// Notes that the MPI library reports dead peers from now on (ULFM).
pub fn set_mpi_reports_deaths() {
    MPI_REPORTS_DEATHS.store(true, std::sync::atomic::Ordering::Relaxed);
}

/// True when the MPI library reports dead peers (ULFM).
pub fn mpi_reports_deaths() -> bool {
    MPI_REPORTS_DEATHS.load(std::sync::atomic::Ordering::Relaxed)
}
