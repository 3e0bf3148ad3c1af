//! External mode through the C API: an outer redundancy layer tells redio
//! the replica-set communicator it chose (`redio_set_replica_comm`).

use crate::comm::collective;
use crate::comm::ffi;
use crate::comm::pmpi;
use crate::comm::request::Op;
use crate::state::world;
use crate::state::world::{Identity, Mode};
use crate::sys::guard::InsideMpi;
use crate::sys::log;
use redio_core::topology::Placement;
use std::ffi::c_int;

/// Installs `replica_set` as this process's replica set (collective over
/// the real `MPI_COMM_WORLD`); see `redio_set_replica_comm` in
/// `include/redio.h`. Returns 0, or -1 when the mapping was already set or
/// the sets do not form a valid topology.
///
/// # Safety
/// `replica_set` is a valid communicator of the calling process.
pub unsafe fn set_replica_comm(replica_set: ffi::MPI_Comm) -> c_int {
    let _inside = InsideMpi::enter();
    if world::identity().is_some() {
        crate::log!(
            Error,
            "redio_set_replica_comm: the replica mapping is already set"
        );
        return -1;
    }
    let comm = world::real_world();
    let (world_rank, world_size) = collective::rank_and_size(comm);
    let (replica, degree) = collective::rank_and_size(replica_set);
    // Identify each replica set by its lowest world rank.
    let mut lowest = world_rank as c_int;
    collective::check(collective::allreduce_in_place(
        std::slice::from_mut(&mut lowest),
        Op::Min,
        replica_set,
    ));
    let mut ids = vec![0 as c_int; world_size as usize];
    collective::check(collective::allgather(&[lowest], &mut ids, comm));
    let mut distinct = ids.clone();
    distinct.sort_unstable();
    distinct.dedup();
    let rank = distinct.binary_search(&lowest).unwrap_or(0) as u32;
    let ranks = distinct.len() as u32;
    if ranks * degree != world_size {
        crate::log!(
            Error,
            "redio_set_replica_comm: {world_size} processes do not form {ranks} sets of {degree}"
        );
        return -1;
    }
    let mut dup = ffi::redio_mpi_comm_null;
    collective::check(pmpi::PMPI_Comm_dup(replica_set, &mut dup));
    crate::ft::membership::install_from_comm(dup, world_rank);
    let placement = Placement { replica, rank };
    log::set_identity(world_rank, Some((replica, rank)));
    world::set_identity(Identity {
        mode: Mode::ExternalApi,
        world_rank,
        world_size,
        placement,
        degree,
        ranks,
    });
    0
}
