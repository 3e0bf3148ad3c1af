//! What `MPI_Finalize` adds: wait for the whole job without spinning, print
//! the summary, free redio's communicators; or, after a replica failure,
//! leave without finalizing.

use crate::comm::collective;
use crate::comm::ffi;

use crate::comm::pmpi;
use crate::comm::poll;
use crate::comm::request::Op;
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
use redio_core::outcome::Event;
use redio_core::startup;
use std::ffi::c_int;

/// Whether `PMPI_Finalize` may run.
#[derive(Debug, PartialEq, Eq)]
pub enum Finalize {
    /// Every process is alive: finalize as usual.
    Normally,
    /// A process of the job died: `PMPI_Finalize` would wait for it
    /// forever, so the survivor returns without it (the application then
    /// exits as usual).
    Skip,
}

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
    if liveness::failures_seen() || liveness::first_dead(&everyone).is_some() {
        return leave_without_finalize(&everyone);
    }
    // Lazy parity (`parity.when: finalize`), while the replica world lives.
    crate::parity::at_finalize();
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
    Finalize::Normally
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
/// or anywhere with heartbeats) has finished or died.
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
        return unsafe { ffi::redio_mpi_success };
    }
    let _inside = InsideMpi::enter();
    finalize()
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
