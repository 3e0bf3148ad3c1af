//! The replica worlds, and translation of `MPI_COMM_WORLD`.
//!
//! In built-in mode every process gets a *replica world*: the communicator
//! of the `N` processes of its replica. The generated wrappers pass every
//! communicator argument through [`translate`], which swaps the real
//! `MPI_COMM_WORLD` for that replica world. The *replica set* is the
//! communicator of the `r` processes that run one logical rank; the
//! coordination protocols use it.

use crate::comm::ffi;
use crate::comm::handle::HandleBits;
use redio_core::topology::Placement;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::OnceLock;

/// How the replica mapping of this process was obtained.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// redio split `MPI_COMM_WORLD` itself and translates it.
    Builtin,
    /// An outer layer hides the replicas; the mapping came from the
    /// environment. Nothing is translated.
    ExternalEnv,
    /// An outer layer gave the replica set through `redio_set_replica_comm`.
    ExternalApi,
}

/// What this process is in the replicated job. Set once per process.
#[derive(Clone, Copy, Debug)]
pub struct Identity {
    /// How the mapping was obtained.
    pub mode: Mode,
    /// Rank in the real `MPI_COMM_WORLD`.
    pub world_rank: u32,
    /// Size of the real `MPI_COMM_WORLD`.
    pub world_size: u32,
    /// Replica and logical rank.
    pub placement: Placement,
    /// Degree of redundancy `r`.
    pub degree: u32,
    /// Logical ranks per replica `N`.
    pub ranks: u32,
}

static IDENTITY: OnceLock<Identity> = OnceLock::new();
static TRANSLATING: AtomicBool = AtomicBool::new(false);
static REPLICA_WORLD: AtomicUsize = AtomicUsize::new(0);
/// Every replica of this process's logical rank runs on its node.
static COLOCATED: AtomicBool = AtomicBool::new(false);
/// How many communicator arguments were redirected, for the final summary.
static TRANSLATED: AtomicU64 = AtomicU64::new(0);

/// This run's identity (from world rank 0's bootstrap packet); 0 before
/// `MPI_Init`.
static RUN: AtomicU64 = AtomicU64::new(0);

/// Records this run's identity, the same in every process of the job.
pub fn set_run(run: u64) {
    RUN.store(run, Ordering::Relaxed);
}

/// This run's identity (names its Distributed Separate Write parts); 0
/// before `MPI_Init`.
pub fn run() -> u64 {
    RUN.load(Ordering::Relaxed)
}

/// The real `MPI_COMM_WORLD` handle.
#[inline]
pub fn real_world() -> ffi::MPI_Comm {
    // SAFETY: a constant defined in shim.c.
    unsafe { ffi::redio_mpi_comm_world }
}

/// Swaps the real `MPI_COMM_WORLD` for this process's replica world.
#[inline]
pub fn translate(comm: ffi::MPI_Comm) -> ffi::MPI_Comm {
    if TRANSLATING.load(Ordering::Relaxed) && comm.to_bits() == real_world().to_bits() {
        TRANSLATED.fetch_add(1, Ordering::Relaxed);
        ffi::MPI_Comm::from_bits(REPLICA_WORLD.load(Ordering::Relaxed))
    } else {
        comm
    }
}

/// This process's replica world (the real `MPI_COMM_WORLD` when redio does
/// not translate it), for redio's own collectives such as parity.
pub fn replica_world() -> ffi::MPI_Comm {
    if TRANSLATING.load(Ordering::Acquire) {
        ffi::MPI_Comm::from_bits(REPLICA_WORLD.load(Ordering::Relaxed))
    } else {
        real_world()
    }
}

/// Number of `MPI_COMM_WORLD` arguments redirected so far by this process.
pub fn translated_count() -> u64 {
    TRANSLATED.load(Ordering::Relaxed)
}

/// Records the identity; later calls are ignored (the first one wins).
pub fn set_identity(identity: Identity) -> bool {
    IDENTITY.set(identity).is_ok()
}

/// Records whether every replica of this process's logical rank runs on
/// its node (known at start-up, from the host names).
pub fn set_colocated(colocated: bool) {
    COLOCATED.store(colocated, Ordering::Relaxed);
}

/// True when every replica of this process's logical rank runs on its
/// node, with `r > 1`: a node-local path then names one file for all of
/// them, which they coordinate like a shared one (`io::paths`).
pub fn colocated() -> bool {
    COLOCATED.load(Ordering::Relaxed)
}

/// This process's identity, once the mapping is known.
pub fn identity() -> Option<Identity> {
    IDENTITY.get().copied()
}

/// Starts translating `MPI_COMM_WORLD` to `replica_world`.
pub fn install_replica_world(replica_world: ffi::MPI_Comm) {
    REPLICA_WORLD.store(replica_world.to_bits(), Ordering::Relaxed);
    TRANSLATING.store(true, Ordering::Release);
}

/// Stops translating and forgets the replica world (at `MPI_Finalize`).
/// Returns the communicators to free (the replica set's are
/// `ft::membership::uninstall`'s).
pub fn uninstall() -> Vec<ffi::MPI_Comm> {
    let mut owned = Vec::new();
    if TRANSLATING.swap(false, Ordering::AcqRel) {
        owned.push(ffi::MPI_Comm::from_bits(
            REPLICA_WORLD.swap(0, Ordering::AcqRel),
        ));
    }
    owned
}
