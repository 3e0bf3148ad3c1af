//! Communicators for every group of survivors the replica set can be left
//! with, built at start-up while every member is alive.
//!
//! The survivors' agreement by process id ([`super::membership`]) needs a
//! communicator of the survivors. Built after the death with
//! `MPI_Comm_create_group`, a blocking collective that nothing interrupts,
//! it could hang the fail-over: under ULFM a survivor whose call failed (a
//! late death report) left the other blocked inside it for good (soak run
//! 9, docs/fault-tolerance.md), and a second death during the call would
//! block every survivor. A measured fact: an Open MPI 5 process blocked in
//! `MPI_Comm_create_group` whose peer never joins stays blocked when that
//! peer revokes the parent communicator, and when a third process of it is
//! SIGKILLed (docs/fault-tolerance.md, "What survivors see"). Built
//! beforehand, the fail-over only picks one.

use crate::comm::collective;
use crate::comm::ffi;
use crate::comm::handle::HandleBits;
use crate::ft::liveness;
use std::sync::Mutex;

/// Beyond this degree the groups are too many (2^r); the fail-over then
/// builds its communicator after the death, as it always did.
const MAX_DEGREE: usize = 4;
/// Tag base of the creations (plus the group's mask), distinct from the
/// survivors' meeting tags of [`super::membership`].
const SPARE_TAG: i32 = 0x5300;

/// (mask of the group's replica indices, its communicator as bits).
static SPARES: Mutex<Vec<(u64, usize)>> = Mutex::new(Vec::new());

fn lock() -> std::sync::MutexGuard<'static, Vec<(u64, usize)>> {
    SPARES.lock().unwrap_or_else(|p| p.into_inner())
}

/// Builds, with the other members, the communicator of every proper group
/// of the replica set `set` (rank = replica index) that contains this
/// process, `me`. Does nothing unless the job goes on after a failure.
///
/// Every member walks the groups in the same order (ascending mask), so
/// the smallest group not yet built always has all its members at it: no
/// member waits for another that waits for it.
///
/// # Safety
/// `set` is a valid communicator of `degree` processes, and every member
/// calls this together.
pub unsafe fn build(set: ffi::MPI_Comm, me: usize, degree: usize) {
    let survives =
        crate::state::settings::get().is_some_and(|c| c.faults.survive_deaths(degree as u32));
    if !survives || degree > MAX_DEGREE {
        return;
    }
    let whole = (1u64 << degree) - 1;
    let mut built = Vec::new();
    for mask in (1..whole).filter(|m| m & (1 << me) != 0) {
        let ranks: Vec<i32> = (0..degree as i32)
            .filter(|r| mask & (1 << r) != 0)
            .collect();
        match collective::try_create_group(set, &ranks, SPARE_TAG + mask as i32) {
            Ok(comm) => built.push((mask, comm.to_bits())),
            // A failure now is a failure in start-up, which ends the job;
            // without this spare the fail-over builds one as before.
            Err(code) => crate::log!(
                Warn,
                "cannot build the communicator of replicas {ranks:?} in advance (MPI code {code})"
            ),
        }
    }
    *lock() = built;
}

/// The communicator built for the survivors of replica indices `alive`
/// (a mask), once: it leaves the table.
pub fn take(alive: u64) -> Option<ffi::MPI_Comm> {
    let mut spares = lock();
    let at = spares.iter().position(|&(mask, _)| mask == alive)?;
    Some(ffi::MPI_Comm::from_bits(spares.swap_remove(at).1))
}

/// Forgets the unused communicators (at `MPI_Finalize`) and returns them
/// to free, unless a failure happened (freeing one with a dead member can
/// wait for the dead).
pub fn uninstall() -> Vec<ffi::MPI_Comm> {
    let spares = std::mem::take(&mut *lock());
    if liveness::failures_seen() {
        return Vec::new();
    }
    spares
        .into_iter()
        .map(|(_, bits)| ffi::MPI_Comm::from_bits(bits))
        .collect()
}
