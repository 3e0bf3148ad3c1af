//! A replica is a unit: when one of its processes dies, the others stop.
//!
//! The failed replica cannot go on: its world lost a rank, and its
//! remaining processes would hang in the application's next collective
//! (MPICH reports nothing). A thread per process ([`start`]) checks the
//! other processes of its replica every `faults.heartbeat` (at once on
//! MPICH's death hint, `SIGUSR1`) and, when one is dead, retires this
//! process ([`retire`]): it records the event and leaves with `_exit`,
//! without `MPI_Finalize` (which would wait for the dead) and without
//! touching MPI (the main thread may be inside it). The thread makes no
//! MPI calls, so it needs no thread support from the MPI library.
//!
//! Under MPICH a process killed by a signal ends the whole job, whatever
//! redio does; an exit does not. So with `on_replica_failure: continue`,
//! fatal signals (SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT) become an
//! exit with code 128 + signal ([`install_signal_handlers`]).

use crate::state::exits;

use crate::ft::heartbeat;

use crate::ft::liveness;

use crate::sys::log;

use crate::state::report;

use redio_core::outcome::{Event, ExitHow, Process};
use redio_core::signals::set_handler;
use redio_core::topology::Topology;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU32, Ordering};
use std::sync::OnceLock;
use std::time::Duration;

/// Exit code of a retired process: it stopped on purpose.
pub const EXIT_RETIRED: i32 = 0;
/// Exit code when every replica of a logical rank is gone.
pub const EXIT_RANK_LOST: i32 = 3;

static TOPOLOGY: OnceLock<Topology> = OnceLock::new();
static ME: OnceLock<u32> = OnceLock::new();
static STOPPED: AtomicBool = AtomicBool::new(false);

/// Stops watching: this process is past the point where a peer's exit
/// could mean a failure (every process reached `MPI_Finalize`).
pub fn stop() {
    STOPPED.store(true, Ordering::Relaxed);
}

/// Starts watching the processes of this process's replica (world rank
/// `me`), checking every `period`.
pub fn start(topology: Topology, me: u32, period: Duration) {
    // SAFETY: gettid has no preconditions.
    MAIN_THREAD.store(unsafe { libc::gettid() }, Ordering::Relaxed);
    let _ = TOPOLOGY.set(topology);
    let _ = ME.set(me);
    let spawned = std::thread::Builder::new()
        .name("redio-watchdog".into())
        .spawn(move || watch(period));
    if let Err(e) = spawned {
        crate::log!(Warn, "cannot start the replica watchdog: {e}");
    }
}

/// The other processes of this process's replica.
pub fn own_replica() -> Vec<u32> {
    let (Some(topology), Some(&me)) = (TOPOLOGY.get(), ME.get()) else {
        return Vec::new();
    };
    let replica = topology.place(me).replica;
    topology
        .replica_members(replica)
        .into_iter()
        .filter(|&w| w != me)
        .collect()
}

/// A process of this process's own replica that failed, if any.
pub fn dead_in_own_replica() -> Option<u32> {
    own_replica().into_iter().find(|&w| liveness::failed(w))
}

fn watch(period: Duration) {
    let mine = own_replica();
    // Short steps so that a hint is acted on quickly.
    let step = period.min(Duration::from_millis(50));
    let mut waited = Duration::ZERO;
    let mut hints = liveness::hints();
    loop {
        std::thread::sleep(step);
        waited += step;
        if waited < period && liveness::hints() == hints {
            continue;
        }
        waited = Duration::ZERO;
        hints = liveness::hints();
        if STOPPED.load(Ordering::Relaxed) {
            return;
        }
        heartbeat::beat();
        if let Some(dead) = mine.iter().copied().find(|&w| liveness::failed(w)) {
            retire_soon(dead);
        }
    }
}

/// The process whose death retires this one (world rank + 1; 0: none),
/// for the main thread to act on at its next safe point.
static RETIRE_REQUEST: AtomicU32 = AtomicU32::new(0);
/// The thread that called `MPI_Init` (the only one that makes MPI calls).
static MAIN_THREAD: AtomicI32 = AtomicI32::new(0);
/// How long the watchdog leaves the main thread to reach a safe point.
const RETIRE_GRACE: Duration = Duration::from_millis(300);

/// Retires this process because `dead` died, preferably from the main
/// thread between two MPI calls ([`retire_at_safe_point`]).
///
/// Why: an exit in the middle of the MPI library's shared-memory send
/// (UCX's FIFO: the sender claims the receiver's next slot, copies, then
/// marks it ready) leaves a slot that is never marked ready, and the
/// receiver reads no message from anybody ever again. Seen: a process of
/// another logical rank, receiving from the retired one, hung in the
/// survivors' meeting (1 in 25 r=3 SIGKILL trials with eager messages).
/// If the main thread is busy elsewhere (application code, a blocking MPI
/// call), the watchdog retires the process itself after [`RETIRE_GRACE`].
fn retire_soon(dead: u32) {
    RETIRE_REQUEST.store(dead + 1, Ordering::SeqCst);
    std::thread::sleep(RETIRE_GRACE);
    retire(dead)
}

/// Called by redio's waits between two MPI calls: retires this process
/// now if the watchdog asked for it and this is the main thread.
pub fn retire_at_safe_point() {
    let request = RETIRE_REQUEST.load(Ordering::Relaxed);
    // SAFETY: gettid has no preconditions.
    if request != 0 && MAIN_THREAD.load(Ordering::Relaxed) == unsafe { libc::gettid() } {
        retire(request - 1);
    }
}

/// The process of world rank `w`.
pub fn process(w: u32) -> Process {
    let placement = TOPOLOGY.get().map(|t| t.place(w));
    Process {
        world_rank: w,
        replica: placement.map_or(0, |p| p.replica),
        rank: placement.map_or(0, |p| p.rank),
    }
}

/// Leaves the job because `dead`, a process of this replica, died: logs
/// it, records it, says so if a logical rank has no replica left, and
/// exits without `MPI_Finalize`.
pub fn retire(dead: u32) -> ! {
    let because = process(dead);
    leave_as_replica(
        because,
        format_args!(
            "world rank {dead} (replica {}, rank {}) died: replica {} is retired, this process \
             stops",
            because.replica, because.rank, because.replica
        ),
    )
}

/// Leaves the job because this process's replica was outvoted: it issued
/// another call than the majority of its replica set (a divergence). Its
/// replica stops like a failed one; the majority goes on without it.
pub fn retire_diverged() -> ! {
    let because = process(ME.get().copied().unwrap_or(0));
    leave_as_replica(
        because,
        format_args!(
            "replica {} diverged from its replica set: it is retired, this process stops",
            because.replica
        ),
    )
}

/// The retirement of this process's replica `because` of a process (dead,
/// or this one outvoted): says why, records it for `redio run`, and leaves
/// (with the lost-rank status when no replica of some rank is left).
fn leave_as_replica(because: Process, why: std::fmt::Arguments<'_>) -> ! {
    liveness::note_failure();
    crate::log!(Warn, "{why}");
    report::event(Event::Retired { because });
    if let Some(lost) = lost_rank() {
        lost_rank_exit(lost);
    }
    leave(EXIT_RETIRED, ExitHow::Retired)
}

/// Ends this process at once with `code`, without `MPI_Finalize`. Under
/// the ULFM back-end a non-zero code is never reported to the survivors,
/// and an exit in a thread other than the MPI one was seen to go
/// unreported too: the process kills itself instead, which Open MPI
/// reports within milliseconds (docs/fault-tolerance.md); `redio run`
/// draws its verdict from the events and the exit recorded first
/// ([`exits::record`]), not from how the process ended.
fn leave(code: i32, how: ExitHow) -> ! {
    exits::record(code, how);
    // SAFETY: leaving at once; nothing of this process is needed any more.
    unsafe {
        if liveness::mpi_reports_deaths() {
            libc::kill(libc::getpid(), libc::SIGKILL);
        }
        libc::_exit(code)
    }
}

/// A logical rank all of whose replicas are dead, if any.
pub fn lost_rank() -> Option<u32> {
    let topology = TOPOLOGY.get()?;
    (0..topology.ranks()).find(|&rank| {
        topology
            .replica_set_members(rank)
            .into_iter()
            .all(liveness::failed)
    })
}

/// Reports that every replica of logical rank `lost` died, and exits.
pub fn lost_rank_exit(lost: u32) -> ! {
    log::announce(format_args!(
        "error: every replica of logical rank {lost} has failed: the job cannot complete"
    ));
    report::event(Event::RankLost { lost_rank: lost });
    leave(EXIT_RANK_LOST, ExitHow::RankLost)
}

/// Installs the handlers: `SIGUSR1` (MPICH's death hint) raises the hint;
/// fatal signals exit with 128 + signal instead of killing the process, so
/// that MPICH's launcher treats the death as an exit and keeps the job.
pub fn install_signal_handlers(convert_fatal: bool) {
    // Both handlers are async-signal-safe.
    set_handler(libc::SIGUSR1, on_hint);
    if convert_fatal {
        for signal in [
            libc::SIGSEGV,
            libc::SIGBUS,
            libc::SIGFPE,
            libc::SIGILL,
            libc::SIGABRT,
        ] {
            set_handler(signal, on_fatal);
        }
    }
}

/// Ignores `SIGPIPE` for the rest of the process's life (ULFM back-end).
///
/// Open MPI 5 with ULFM writes to the socket of a process that died (its
/// failure propagation), and the default action of the `SIGPIPE` that
/// follows killed a survivor that was only waiting in a barrier with a live
/// peer. The experiment (`benches/experiments/run.sh`, part 3, a plain
/// Open MPI 5 program): one process exits with 1, another kills itself, a
/// third waits in a barrier of a communicator without them: it died of
/// SIGPIPE in 6 of 7 runs, in none of 6 with SIGPIPE ignored. The
/// application then sees `EPIPE` from a write to a closed pipe instead of
/// dying, and its child processes inherit the setting.
pub fn ignore_broken_pipes() {
    // SAFETY: setting a signal's disposition to SIG_IGN.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_IGN);
    }
}

extern "C" fn on_hint(_: i32) {
    liveness::hint();
}

extern "C" fn on_fatal(signal: i32) {
    const MESSAGE: &[u8] = b"redio: fatal signal: this process exits so that the job survives\n";
    // SAFETY: write, exits::record (raw system calls on a stack buffer)
    // and _exit are async-signal-safe.
    unsafe {
        libc::syscall(libc::SYS_write, 2, MESSAGE.as_ptr(), MESSAGE.len());
        exits::record(128 + signal, ExitHow::Signal);
        libc::_exit(128 + signal);
    }
}
