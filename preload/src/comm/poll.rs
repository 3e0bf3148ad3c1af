//! Waiting for MPI without burning a core.
//!
//! MPICH busy-polls inside blocking calls: on an oversubscribed node a rank
//! that waits in `PMPI_Barrier` steals the CPU from a rank that computes.
//! redio's own coordination therefore posts nonblocking operations and tests
//! them in two phases:
//!
//! 1. for [`YIELDING_PHASE`], tests with `sched_yield` in between: replicas
//!    doing I/O in lock step answer each other within microseconds, and a
//!    computing neighbour gets the core whenever it wants it;
//! 2. then tests with a sleep that backs off from [`FIRST_PAUSE`] to
//!    [`LONGEST_PAUSE`], for long waits (a peer still computing).
//!
//! Sleeping early makes each message hop cost up to the peer's current
//! pause, and two replicas that both sleep fall into a convoy: sleeping from
//! the first test, 4 KiB coordinated writes ran at 1 MiB/s; yielding for a
//! fixed number of tests (200) still let a descheduled peer push both into
//! the sleeping phase, with 2.4 ms per write. A phase measured in time does
//! not.
//!
//! A wait may also watch processes ([`Watch`]): every [`WATCH_PERIOD`] (and
//! at once after a death hint) it checks that they are alive
//! (through the [`Watcher`] fault tolerance installed), and it gives up with [`PEER_DIED`] when one is not, or
//! with [`TIMED_OUT`] after its deadline. MPICH and Open MPI 4.1 would
//! otherwise wait for a dead peer forever.

use crate::comm::ffi;

use crate::comm::request::Request;
use crate::sys::guard::InsideMpi;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// What a polled wait asks fault tolerance (`crate::ft::watch` installs
/// the real one at start-up; until then nothing is watched). This layer
/// stays below fault tolerance: it never names it.
pub trait Watcher: Sync {
    /// True when `code`, returned by an MPI call, reports a dead peer
    /// (ULFM).
    fn is_failure(&self, code: i32) -> bool;
    /// Called between two tests of a pending operation: where a retiring
    /// process may leave.
    fn safe_point(&self);
    /// True when the death of a process can be seen at all.
    fn enabled(&self) -> bool;
    /// A counter that moves when a death is hinted (a signal, a beat).
    fn hints(&self) -> u64;
    /// The first of `ranks` (world ranks) that is dead, if any.
    fn first_dead(&self, ranks: &[u32]) -> Option<u32>;
}

/// The watcher before fault tolerance installed one: nobody dies.
struct Nobody;

impl Watcher for Nobody {
    fn is_failure(&self, _: i32) -> bool {
        false
    }
    fn safe_point(&self) {}
    fn enabled(&self) -> bool {
        false
    }
    fn hints(&self) -> u64 {
        0
    }
    fn first_dead(&self, _: &[u32]) -> Option<u32> {
        None
    }
}

static WATCHER: OnceLock<&'static dyn Watcher> = OnceLock::new();

/// Installs the watcher every later wait consults (once; later calls are
/// ignored).
pub fn install_watcher(watcher: &'static dyn Watcher) {
    let _ = WATCHER.set(watcher);
}

fn watcher() -> &'static dyn Watcher {
    WATCHER.get().copied().unwrap_or(&Nobody)
}

/// What a wait gives up on besides its deadline.
#[derive(Clone, Copy)]
pub enum Watch<'a> {
    /// Nothing: wait until the operation completes.
    Nothing,
    /// Give up when one of these world ranks is dead.
    Processes(&'a [u32]),
}

/// Returned instead of an MPI error code: a watched process is dead.
pub const PEER_DIED: i32 = -0x7ed1;
/// Returned instead of an MPI error code: the deadline passed.
pub const TIMED_OUT: i32 = -0x7ed2;
/// The death hints ([`Watcher::hints`]) the waits have acted on: a hint
/// that arrives between two waits is acted on by the next one.
static HINTS_SEEN: AtomicU64 = AtomicU64::new(0);
/// How often a wait checks the processes it watches.
pub const WATCH_PERIOD: Duration = Duration::from_millis(20);

/// How long a wait tests with `sched_yield` in between before it sleeps.
pub const YIELDING_PHASE: Duration = Duration::from_millis(2);
/// First sleep between two tests of a pending operation.
pub const FIRST_PAUSE: Duration = Duration::from_micros(50);
/// Longest sleep between two tests: bounds the added latency.
pub const LONGEST_PAUSE: Duration = Duration::from_millis(1);

/// The slowest transfer rate a waiting side assumes while bytes flow: a wait
/// for `n` bytes stays in the yielding phase for `n / TRANSFER_RATE` longer.
/// Large messages move in fragments, each needing a test from both sides;
/// sleeping between tests would stretch every fragment to the pause (a
/// 256 MiB message ran at ~300 MiB/s instead of GB/s).
pub const TRANSFER_RATE: u64 = 256 << 20;

/// How long moving `bytes` may take at [`TRANSFER_RATE`].
pub fn transfer_time(bytes: usize) -> Duration {
    Duration::from_secs_f64(bytes as f64 / TRANSFER_RATE as f64)
}

/// How long a wait for an operation that moves `bytes` yields before it
/// sleeps: [`YIELDING_PHASE`] plus their [`transfer_time`].
pub fn yielding_phase(bytes: usize) -> Duration {
    YIELDING_PHASE + transfer_time(bytes)
}

/// Calls `test` until it reports completion (`Ok(true)`) or an MPI error
/// code (`Err`), sleeping with back-off in between. Returns the error code,
/// or `MPI_SUCCESS`.
pub fn until(test: impl FnMut() -> Result<bool, i32>) -> i32 {
    until_moved(0, Watch::Nothing, None, test)
}

/// [`until`] for an operation that moves `bytes`: it yields (never sleeps)
/// for as long as moving them may take at [`TRANSFER_RATE`], on top of
/// [`YIELDING_PHASE`]. It gives up with [`PEER_DIED`] when a process of
/// `watch` dies, and with [`TIMED_OUT`] after `deadline`.
pub fn until_moved(
    bytes: usize,
    watch: Watch<'_>,
    deadline: Option<Duration>,
    test: impl FnMut() -> Result<bool, i32>,
) -> i32 {
    until_ready(bytes, watch, deadline, test, std::thread::sleep)
}

/// [`until_moved`] for a test whose progress the kernel can announce (a
/// socket): instead of sleeping for a pause, it calls `nap(pause)`, which
/// may return early when there is something to do (`ppoll` on the socket).
pub fn until_ready(
    bytes: usize,
    watch: Watch<'_>,
    deadline: Option<Duration>,
    test: impl FnMut() -> Result<bool, i32>,
    nap: impl FnMut(Duration),
) -> i32 {
    let _inside = InsideMpi::enter();
    poll_loop(bytes, watch, deadline, test, nap)
}

/// What one cycle of ROMIO's collective buffering moves between two ranks
/// at most: its default collective buffer (`cb_buffer_size`, 16 MiB).
pub const LIBRARY_CYCLE_BYTES: usize = 16 << 20;

/// [`until`] for a wait of the MPI library's own (`comm::library_waits`):
/// the thread keeps the marks the library's caller gave it, so the POSIX
/// calls the library makes while it is tested (ROMIO's generalized
/// requests) are routed as they would be without the wait.
///
/// It yields for as long as a cycle of collective buffering may take to
/// move ([`LIBRARY_CYCLE_BYTES`] at [`TRANSFER_RATE`], about 64 ms) before
/// it sleeps: UCX moves a large message in fragments that need both sides'
/// tests. Measured (docs/benchmarks.md, "MPI-IO on emulated NFS"), two
/// ranks at r=2: sleeping after 2 ms, ROMIO's 8 MiB exchanges between two
/// writes took 20-73 ms instead of 5 and the collective write ran at 0.82
/// of r=1; yielding for 16 ms, 0.93; for 64 ms, 0.95; for 250 ms, 0.93
/// with three times the CPU.
pub fn until_inside_library(test: impl FnMut() -> Result<bool, i32>) -> i32 {
    poll_loop(
        LIBRARY_CYCLE_BYTES,
        Watch::Nothing,
        None,
        test,
        std::thread::sleep,
    )
}

fn poll_loop(
    bytes: usize,
    watch: Watch<'_>,
    deadline: Option<Duration>,
    mut test: impl FnMut() -> Result<bool, i32>,
    mut nap: impl FnMut(Duration),
) -> i32 {
    let yielding = yielding_phase(bytes);
    let started = Instant::now();
    let mut pause = FIRST_PAUSE;
    let mut checked = started;
    loop {
        match test() {
            Ok(true) => return unsafe { ffi::redio_mpi_success },
            // Under ULFM, MPI itself reports the dead (or the revoke of a
            // survivor that saw them first).
            Err(code) if watcher().is_failure(code) => return PEER_DIED,
            Err(code) => return blame_a_death(code, watch),
            Ok(false) => {}
        }
        // Between two MPI calls: where a retiring process may leave.
        watcher().safe_point();
        if let (Watch::Processes(ranks), true) = (watch, watcher().enabled()) {
            let hints = watcher().hints();
            let hinted = HINTS_SEEN.load(Ordering::Relaxed) != hints;
            if hinted || checked.elapsed() >= WATCH_PERIOD {
                checked = Instant::now();
                HINTS_SEEN.store(hints, Ordering::Relaxed);
                if watcher().first_dead(ranks).is_some() {
                    return PEER_DIED;
                }
            }
        }
        if deadline.is_some_and(|d| started.elapsed() > d) {
            return TIMED_OUT;
        }
        if started.elapsed() < yielding {
            // SAFETY: sched_yield has no preconditions.
            unsafe { libc::sched_yield() };
        } else {
            nap(pause);
            pause = (pause * 2).min(LONGEST_PAUSE);
        }
    }
}

/// How long a failed wait looks for a dead watched process to blame.
const DEATH_GRACE: Duration = Duration::from_secs(1);

/// The result of a wait whose MPI call failed with `code`: [`PEER_DIED`]
/// when a watched process is (or within [`DEATH_GRACE`] turns out to be)
/// dead, else `code`. MPICH itself fails a pending receive from a process
/// that died, sometimes before its process id is gone (the victim is still
/// in its exit path): that failure must fail over, not become `EIO`.
fn blame_a_death(code: i32, watch: Watch<'_>) -> i32 {
    let Watch::Processes(ranks) = watch else {
        return code;
    };
    if !watcher().enabled() {
        return code;
    }
    let started = Instant::now();
    loop {
        if watcher().first_dead(ranks).is_some() {
            return PEER_DIED;
        }
        if started.elapsed() > DEATH_GRACE {
            return code;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Waits for `request` to complete, sleeping between tests.
///
/// Returns the MPI error code of the first failing `PMPI_Test`, or
/// `MPI_SUCCESS`.
pub fn wait(request: &mut Request<'_>) -> i32 {
    wait_each(std::slice::from_mut(request), 0, Watch::Nothing, None)
}

/// Waits for `request`, giving up when a process of `watch` dies
/// ([`PEER_DIED`]).
pub fn wait_watching(request: &mut Request<'_>, watch: Watch<'_>) -> i32 {
    wait_each(std::slice::from_mut(request), 0, watch, None)
}

/// Waits for every request of `requests`, which move `bytes` in all, to
/// complete ([`until_moved`], watching `watch`, giving up after
/// `deadline` with [`TIMED_OUT`]). Each request keeps the status of the
/// test that completed it.
///
/// Returns the MPI error code of the first failing `PMPI_Test`, or
/// [`PEER_DIED`] or [`TIMED_OUT`]. The requests still pending then are
/// given up on when dropped ([`Request`]'s `Drop`: receives cancelled).
pub fn wait_each(
    requests: &mut [Request<'_>],
    bytes: usize,
    watch: Watch<'_>,
    deadline: Option<Duration>,
) -> i32 {
    until_moved(bytes, watch, deadline, || {
        let mut all = true;
        for request in requests.iter_mut() {
            // A completed request is not tested again (its status stays).
            all &= request.test()?;
        }
        Ok(all)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::comm::request::Kind;

    fn success() -> i32 {
        // SAFETY: a constant of shim.c.
        unsafe { ffi::redio_mpi_success }
    }

    #[test]
    fn a_wait_ends_when_its_test_completes_or_fails() {
        let mut tests = 0;
        let rc = until(|| {
            tests += 1;
            Ok(tests == 5)
        });
        assert_eq!((rc, tests), (success(), 5));
        assert_eq!(until(|| Err(17)), 17);
    }

    #[test]
    fn waiting_for_completed_requests_calls_no_mpi() {
        // Without libmpi, a PMPI_Test call would end the test process.
        let completed = || {
            // SAFETY: no buffer; MPI is not called (the handle stays null).
            unsafe { Request::start(Kind::PointToPoint, |_| success()) }
                .unwrap_or_else(|rc| panic!("start failed with {rc}"))
        };
        let mut requests = [completed(), completed()];
        assert_eq!(wait_each(&mut requests, 0, Watch::Nothing, None), success());
        assert_eq!(wait(&mut requests[0]), success());
        let mut none: [Request<'_>; 0] = [];
        assert_eq!(wait_each(&mut none, 0, Watch::Nothing, None), success());
    }

    #[test]
    fn a_watched_wait_gives_up_at_its_deadline() {
        let watch = Watch::Processes(&[1]);
        let rc = until_moved(0, watch, Some(Duration::from_millis(30)), || Ok(false));
        assert_eq!(rc, TIMED_OUT);
    }

    #[test]
    fn a_wait_that_can_be_woken_naps_instead_of_sleeping_once_it_stops_yielding() {
        let naps = std::cell::RefCell::new(Vec::new());
        let rc = until_ready(
            0,
            Watch::Nothing,
            None,
            || Ok(naps.borrow().len() >= 3),
            |pause| naps.borrow_mut().push(pause),
        );
        assert_eq!(rc, success());
        // Each nap asks for the back-off's pause, growing from the first.
        let naps = naps.into_inner();
        assert_eq!(naps[0], FIRST_PAUSE);
        assert!(naps.windows(2).all(|w| w[1] >= w[0]));
    }
}
