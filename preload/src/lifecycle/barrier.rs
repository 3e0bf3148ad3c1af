//! The application's `MPI_Barrier`: a synchronisation point every rank of
//! a replica world reaches together, where lazy parity runs
//! (`parity.when: close`, [`crate::parity::lazy`]).
//!
//! On the replica world, with fail-over on, the barrier is posted
//! nonblocking and waited for with the polled waits (it sleeps instead of
//! spinning, and the watchdog can retire the process at a safe point). And
//! it ends when every other member of the replica world has left the job:
//! under MPICH a SIGKILL in the middle of a shared-memory transfer can
//! leave the process that was receiving unable to hear anyone again
//! (docs/fault-tolerance.md, "Limits"); the others, which did get its
//! arrival, pass the barrier, finish and leave their finished markers,
//! while it would wait forever. Once they have all left, nobody is left to
//! synchronise with: the barrier is complete for it too.

use crate::comm::handle::HandleBits;
use crate::comm::{collective, ffi, pmpi, poll};
use crate::coord::faults;
use crate::ft::{liveness, watchdog};
use crate::state::world;
use crate::sys::guard::InsideMpi;
use std::ffi::c_int;
use std::time::{Duration, Instant};

/// How often a waiting barrier looks for the others' finished markers.
const LEFT_CHECK_PERIOD: Duration = Duration::from_millis(100);

/// `MPI_Barrier` on `comm` (`MPI_COMM_WORLD` is translated to the replica
/// world, as in every wrapper); after a successful barrier on that world,
/// lazy parity.
pub fn barrier(comm: ffi::MPI_Comm) -> c_int {
    let comm = world::translate(comm);
    let success = unsafe { ffi::redio_mpi_success };
    let on_replica_world = comm.to_bits() == world::replica_world().to_bits();
    let rc = if on_replica_world && liveness::enabled() {
        replica_world_barrier(comm)
    } else {
        let _inside = InsideMpi::enter();
        // SAFETY: the application's communicator, as it passed it.
        unsafe { pmpi::PMPI_Barrier(comm) }
    };
    if rc == success && on_replica_world {
        crate::parity::lazy::at_barrier();
    }
    rc
}

/// The polled barrier of the replica world `comm`, which also ends once
/// every other member has left the job.
fn replica_world_barrier(comm: ffi::MPI_Comm) -> c_int {
    let _inside = InsideMpi::enter();
    let mut request = match collective::ibarrier(comm) {
        Ok(request) => request,
        Err(rc) => return rc,
    };
    let others = watchdog::own_replica();
    let deaf = test_deafness();
    let mut checked = Instant::now();
    let mut alone = false;
    let rc = poll::until(|| {
        if request.test()? && !deaf {
            return Ok(true);
        }
        if checked.elapsed() >= LEFT_CHECK_PERIOD {
            checked = Instant::now();
            if !others.is_empty() && others.iter().all(|&w| liveness::finished(w)) {
                alone = true;
                return Ok(true);
            }
        }
        Ok(false)
    });
    if alone {
        // The request stays pending (a collective cannot be cancelled, and
        // dropping it leaves it alone): this process leaves without
        // MPI_Finalize (a failure happened), so nothing waits for it.
        crate::log!(
            Warn,
            "MPI_Barrier: every other process of this replica has left the job while this one \
             waited (its MPI channel to them is stalled): the barrier is complete, it goes on \
             alone"
        );
    }
    rc
}

/// Test hook: `REDIO_TEST_DEAF_BARRIER=<world rank>` makes that process
/// never see its replica-world barriers complete, as if it could not hear
/// its peers (the stalled channel above).
fn test_deafness() -> bool {
    // Read once: MPI_Barrier may be in the application's inner loop.
    static DEAF: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *DEAF.get_or_init(|| faults::names_this_process("REDIO_TEST_DEAF_BARRIER"))
}
