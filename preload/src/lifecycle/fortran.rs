//! Fortran programs under Open MPI: refused when replicated.
//!
//! Open MPI's Fortran bindings call the C library's `PMPI_*` functions
//! directly (`libmpi_mpifh`'s `mpi_init_` calls `PMPI_Init`), past every
//! `MPI_*` wrapper of libredio.so: redio's start-up never runs, and a
//! replicated program runs as one world of N×r ranks, each replica's
//! processes taking ranks of their own (measured: a Fortran program that
//! prints `MPI_Comm_size` printed 4 under `redio run --mpi openmpi -n 2
//! -r 2`, 2 under `--mpi mpich`, whose Fortran layer calls `MPI_*`). So
//! the Open MPI builds export Open MPI's Fortran entry points of `MPI_INIT`
//! and `MPI_INIT_THREAD` ([`crate::exports::fortran`]): with a degree of
//! redundancy above 1 the process stops there with the remedy, otherwise
//! the call goes on to Open MPI's own.

use crate::sys::log;
use redio_core::config::Config;

/// The exit status of a process stopped here (the one every refusal at
/// start-up uses).
const EXIT_REFUSED: i32 = 3;

/// Stops the process with the remedy when the job replicates (the degree
/// of the process's configuration, which `redio run` sets, is above 1);
/// returns when it does not, for the caller to go on to Open MPI's
/// `entry`.
pub fn refuse_if_replicated(entry: &str) {
    let degree = Config::load_process_env(None).map_or(1, |c| c.replication.degree);
    if degree <= 1 {
        return;
    }
    let rank = std::env::var("OMPI_COMM_WORLD_RANK").unwrap_or_else(|_| "?".into());
    log::announce(format_args!(
        "error: world rank {rank}: this program starts MPI from Fortran ({entry}). Open MPI's \
         Fortran bindings call PMPI_* directly, past redio's translation, so its {degree} \
         replicas would run as one world of every process. Run it with MPICH (`redio run \
         --mpi mpich`), whose Fortran layer redio translates, or without redundancy (-r 1)."
    ));
    // SAFETY: leaving before MPI starts; nothing is held.
    unsafe { libc::_exit(EXIT_REFUSED) };
}
