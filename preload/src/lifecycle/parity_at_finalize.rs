//! Lazy parity at `MPI_Finalize`, in a job that may have lost processes.
//!
//! A death retires its whole replica; the others go on. Each replica
//! protects its own files over its own replica world, so a replica none of
//! whose processes died can still run the collective protect step, even
//! when the job leaves without `PMPI_Finalize` afterwards. A retired one
//! cannot: its files stay unprotected, and the survivors say so.

use crate::comm::collective;
use crate::comm::ffi;
use crate::comm::poll;
use crate::comm::request::Op;
use crate::ft::liveness;
use crate::ft::watchdog;
use crate::state::world;
use std::collections::BTreeSet;

/// Runs the protect step `parity.when` asks for at `MPI_Finalize` if this
/// process's replica is intact, on every member of it or on none.
///
/// Why an agreement first: members of one replica learn of a death in
/// another at different moments (one in a fail-over, one not at all), and
/// a member of a retired replica may still be running; a protect step
/// entered by some members only would wait forever in its first
/// collective. The agreement's wait watches the replica's processes, so a
/// dead member ends it instead of hanging it. A death during the protect
/// step itself retires this replica: the watchdog ends its processes (at
/// the next safe point of a wait, or after its grace period inside a
/// blocking call), so nobody waits for the dead.
pub fn run() {
    if !crate::parity::wanted_at_finalize() {
        return;
    }
    let Some(identity) = world::identity() else {
        return;
    };
    let mut replica = watchdog::own_replica();
    replica.push(identity.world_rank);
    let intact = liveness::first_dead(&replica).is_none();
    if agree(intact, &replica) {
        crate::parity::at_finalize();
        if identity.placement.rank == 0 {
            warn_about_retired(identity.placement.replica, identity.world_size);
        }
    } else if intact {
        // Another member saw a death in this replica: it is retiring.
        crate::log!(
            Warn,
            "parity: replica {} lost a process: its files (rank {}) get no redundancy file at \
             MPI_Finalize",
            identity.placement.replica,
            identity.placement.rank
        );
    }
}

/// Whether every member of this replica world says `intact` (a logical
/// AND). False when a member died before it answered.
fn agree(intact: bool, replica: &[u32]) -> bool {
    let mine = [i32::from(intact)];
    let mut all = [0i32];
    let waited = collective::iallreduce(&mine, &mut all, Op::Min, world::replica_world())
        .map(|mut request| poll::wait_watching(&mut request, poll::Watch::Processes(replica)));
    // SAFETY: a constant of shim.c.
    waited == Ok(unsafe { ffi::redio_mpi_success }) && all[0] == 1
}

/// Says which replicas lost a process, so that their files got no
/// redundancy file (their processes cannot say it: they are retired).
fn warn_about_retired(mine: u32, world_size: u32) {
    let retired: BTreeSet<u32> = (0..world_size)
        .filter(|&w| liveness::failed(w))
        .map(|w| watchdog::process(w).replica)
        .collect();
    if retired.is_empty() {
        return;
    }
    let list: Vec<String> = retired.iter().map(u32::to_string).collect();
    crate::log!(
        Warn,
        "parity: replica(s) {} lost a process: their files got no redundancy file at \
         MPI_Finalize (replica {mine}'s are protected: rebuild from its files)",
        list.join(", ")
    );
}
