//! What `MPI_Finalize` adds: wait for the whole job without spinning, print
//! the summary, free redio's communicators; in a job that survives deaths,
//! leave without finalizing.

use crate::comm::collective;
use crate::comm::ffi;
use crate::comm::flavour;
use crate::lifecycle::parity_at_finalize;

use crate::comm::pmpi;
use crate::comm::poll;
use crate::comm::request::Op;
use crate::coord::faults;
use crate::ft::heartbeat;
use crate::ft::liveness;
use crate::ft::membership;
use crate::ft::spares;
use crate::ft::ulfm;
use crate::ft::watchdog;
use crate::state::report;
use crate::state::world;
use crate::sys::guard::InsideMpi;
use crate::sys::log;
use crate::sys::pmi;
use redio_core::outcome::Event;
use redio_core::startup;
use std::ffi::c_int;
use std::sync::atomic::{AtomicBool, Ordering};

/// Whether `PMPI_Finalize` may run.
#[derive(Debug, PartialEq, Eq)]
pub enum Finalize {
    /// Every process is alive: finalize as usual.
    Normally,
    /// Return without `PMPI_Finalize` (the application then exits as
    /// usual): a process of the job died, and `PMPI_Finalize` would wait
    /// for it forever; or a death during it could not be survived
    /// ([`finalize_can_wait_for_the_dead`]).
    Skip,
}

/// Set once `MPI_Finalize` returned without `PMPI_Finalize`: from then on
/// `MPI_Finalized` says true, as the application expects.
static SKIPPED: AtomicBool = AtomicBool::new(false);

/// Runs before `PMPI_Finalize`.
///
/// The summary sums the per-process counters with an all-reduce, which
/// doubles as the polled barrier: ranks that finish early sleep in
/// [`poll::wait`] instead of spinning in the MPI library's own finalize
/// barrier while their peers still compute. The wait watches every
/// process of the job: one that died turns this into [`Finalize::Skip`].
pub fn before_finalize() -> Finalize {
    crate::lifecycle::files::stop();
    let _inside = InsideMpi::enter();
    report::event(Event::Finished);
    let everyone: Vec<u32> = (0..world::identity().map_or(0, |i| i.world_size)).collect();
    let failed = liveness::failures_seen() || liveness::first_dead(&everyone).is_some();
    // Before leaving after a failure: a replica that lost nobody still
    // protects its files.
    parity_at_finalize::run();
    if failed {
        return leave_without_finalize(&everyone);
    }
    let (operations, read, written) = crate::state::counters::snapshot();
    let mine = [world::translated_count(), operations, read, written];
    let mut total = [0u64; 4];
    let summed = collective::iallreduce(&mine, &mut total, Op::Sum, world::real_world())
        .map(|mut request| poll::wait_watching(&mut request, poll::Watch::Processes(&everyone)));
    if summed == Ok(poll::PEER_DIED) {
        return leave_without_finalize(&everyone);
    }
    // Everyone reached MPI_Finalize: exits from here on are not failures.
    watchdog::stop();
    if let Some(identity) = world::identity() {
        if identity.world_rank == 0 {
            let shape = startup::shape(identity.world_size, identity.ranks, identity.degree);
            let [translated, operations, read, written] = total;
            log::emit(&format!(
                "redio: finished: {shape}; {translated} MPI_COMM_WORLD arguments redirected to \
                 replica worlds; {} coordinated shared-file operations, {} read and {} \
                 written on the shared file system\n",
                operations / u64::from(identity.degree.max(1)),
                startup::bytes(read),
                startup::bytes(written)
            ));
        }
    }
    let mut owned = world::uninstall();
    owned.extend(membership::uninstall());
    owned.extend(spares::uninstall());
    for mut comm in owned {
        // SAFETY: redio's own communicators, freed once.
        unsafe { pmpi::PMPI_Comm_free(&mut comm) };
    }
    die_in_finalize_if_asked();
    if finalize_can_wait_for_the_dead() {
        // Nobody may leave while another still waits in the barrier
        // above: to that one, a process gone unmarked is a dead one.
        if let Some(identity) = world::identity() {
            liveness::mark_finished(identity.world_rank);
        }
        wait_until_everyone_is_done(&everyone);
        if flavour::built_for() == "MPICH" && !pmi::finalize() {
            crate::log!(
                Warn,
                "MPICH's launcher did not acknowledge this process's finalize: it may \
                 take its exit for a death"
            );
        }
        return Finalize::Skip;
    }
    Finalize::Normally
}

/// Whether a death during the real `PMPI_Finalize` would hang this
/// process, in a job that must survive it. Every MPI redio supports waits
/// there for the others: one process SIGKILLed after the barrier above
/// (`REDIO_TEST_DIE_IN_FINALIZE`, 2 ranks x 2 replicas) left a survivor in
/// `PMPI_Finalize` until the timeout in 2 runs of 3 on MPICH, 1 of 9 on
/// Open MPI 4.1 and 3 of 11 on Open MPI 5; and 4 of 51 random SIGKILLs
/// under parallel HDF5 on MPICH landed there (benches/stack_kills.py).
/// Such jobs leave without it, where the launcher then takes the exit
/// for a normal one, with the process's own status: Open MPI 5 as it is,
/// Open MPI 4.1 told so by `redio run`, MPICH's Hydra told by this process
/// ([`pmi`]; another launcher of MPICH: the real finalize). See
/// docs/fault-tolerance.md, "At `MPI_Finalize`".
fn finalize_can_wait_for_the_dead() -> bool {
    let degree = world::identity().map_or(1, |i| i.degree);
    // Without liveness checks (a benchmark's switch) nobody could tell a
    // process that left from one still finishing.
    crate::state::settings::get().is_some_and(|c| c.faults.survive_deaths(degree))
        && liveness::enabled()
        && (flavour::built_for() != "MPICH" || pmi::available())
}

/// `REDIO_TEST_DIE_IN_FINALIZE=<world rank>`: that process is SIGKILLed
/// once every process passed the barrier above, just before the real
/// `PMPI_Finalize`: a death the barrier cannot see.
fn die_in_finalize_if_asked() {
    if !faults::names_this_process("REDIO_TEST_DIE_IN_FINALIZE") {
        return;
    }
    crate::log!(
        Warn,
        "REDIO_TEST_DIE_IN_FINALIZE: dying (kill) after the finalize barrier"
    );
    crate::state::report::die_on_purpose("kill", 0, Some(libc::SIGKILL))
}

/// After a failure: stop translating, keep every communicator (freeing one
/// with a dead member can wait for the dead), and skip `PMPI_Finalize`.
fn leave_without_finalize(everyone: &[u32]) -> Finalize {
    liveness::note_failure();
    let failed: Vec<_> = everyone
        .iter()
        .copied()
        .filter(|&w| liveness::failed(w))
        .map(watchdog::process)
        .collect();
    report::event(Event::DeathSeen {
        failed,
        at: "MPI_Finalize".into(),
    });
    if let Some(identity) = world::identity() {
        liveness::mark_finished(identity.world_rank);
    }
    if ulfm::active() {
        wait_until_everyone_is_done(everyone);
    }
    let _ = world::uninstall();
    let _ = membership::uninstall();
    let _ = spares::uninstall();
    if world::identity().is_some_and(|i| i.placement.rank == 0) {
        crate::log!(
            Warn,
            "a replica failed during the run: this survivor finishes without MPI_Finalize"
        );
    }
    Finalize::Skip
}

/// Waits until every process of `everyone` this one can see (on this node,
/// or anywhere with heartbeats) has finished or died: before a survivor
/// leaves without `MPI_Finalize`, and before any process of a job that
/// survives deaths does ([`finalize_can_wait_for_the_dead`]).
///
/// Why: under Open MPI 5 (PRRTE), a process that exits without
/// `MPI_Finalize` is "terminated without sync", and the runtime then kills
/// every process still running. A survivor that finished first killed the
/// last survivor of another logical rank, still failing over (seen with
/// `--prtemca errmgr_base_verbose 5`: "terminated without sync", then
/// "kill_local_proc working on WILDCARD"; the test
/// `a_death_open_mpi_never_reports_is_survived_by_process_id_ulfm` lost
/// its rank 0 this way on a loaded machine, 4 runs of 4).
fn wait_until_everyone_is_done(everyone: &[u32]) {
    let visible: Vec<u32> = everyone
        .iter()
        .copied()
        .filter(|&w| heartbeat::on() || liveness::all_local(&[w]))
        .collect();
    while !visible
        .iter()
        .all(|&w| liveness::finished(w) || liveness::failed(w))
    {
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
}

/// `MPI_Finalize`: redio's summary and clean-up, then `finalize` (the real
/// `PMPI_Finalize`) unless a failure means leaving without it.
pub fn finalize(finalize: impl FnOnce() -> c_int) -> c_int {
    if before_finalize() == Finalize::Skip {
        SKIPPED.store(true, Ordering::Relaxed);
        return unsafe { ffi::redio_mpi_success };
    }
    let _inside = InsideMpi::enter();
    finalize()
}

/// `MPI_Finalized`: true after an `MPI_Finalize` that left without
/// `PMPI_Finalize`; else what `finalized` (the real one) says.
///
/// # Safety
/// `flag` is valid for a write, as the MPI standard requires.
pub unsafe fn finalized(flag: *mut c_int, finalized: impl FnOnce() -> c_int) -> c_int {
    if SKIPPED.load(Ordering::Relaxed) {
        *flag = 1;
        return ffi::redio_mpi_success;
    }
    let _inside = InsideMpi::enter();
    finalized()
}

/// `MPI_Abort` on `comm`: the application gave up, so the whole job stops,
/// all replicas included (they would all reach the same abort anyway).
pub fn abort(comm: ffi::MPI_Comm, errorcode: c_int) -> ! {
    let _inside = InsideMpi::enter();
    let scope = if comm == world::real_world() {
        "MPI_COMM_WORLD"
    } else {
        "a communicator"
    };
    log::announce(format_args!(
        "MPI_Abort({scope}, {errorcode}) called by the application: stopping the whole job"
    ));
    crate::state::exits::abort_job(errorcode)
}
