//! The few collectives the protect step needs, on the polled collectives
//! of [`crate::comm::collective`] (MPICH busy-polls in blocking calls).

use crate::comm::collective;
use crate::comm::ffi;

use crate::comm::pmpi;
use crate::comm::request::Op;

/// Longest failure-group name exchanged (longer names are cut).
pub const NAME_MAX: usize = 255;

/// `Ok` for `MPI_SUCCESS`, else an error naming the call.
pub(crate) fn ok(rc: i32, what: &str) -> Result<(), String> {
    if rc == unsafe { ffi::redio_mpi_success } {
        Ok(())
    } else {
        Err(format!("{what} failed with MPI error code {rc}"))
    }
}

/// Rank and size of `comm`.
pub(crate) fn rank_and_size(comm: ffi::MPI_Comm) -> Result<(usize, usize), String> {
    let (mut rank, mut size) = (0, 0);
    // SAFETY: plain out-parameters on a valid communicator.
    ok(
        unsafe { pmpi::PMPI_Comm_rank(comm, &mut rank) },
        "MPI_Comm_rank",
    )?;
    ok(
        unsafe { pmpi::PMPI_Comm_size(comm, &mut size) },
        "MPI_Comm_size",
    )?;
    Ok((rank as usize, size as usize))
}

/// Every rank's `name` (cut to [`NAME_MAX`] bytes), in rank order.
pub(crate) fn allgather_names(comm: ffi::MPI_Comm, name: &str) -> Result<Vec<String>, String> {
    let (_, size) = rank_and_size(comm)?;
    let width = NAME_MAX + 1;
    let mut mine = vec![0u8; width];
    let bytes = name.as_bytes();
    let n = bytes.len().min(NAME_MAX);
    mine[0] = n as u8;
    mine[1..=n].copy_from_slice(&bytes[..n]);
    let mut all = vec![0u8; width * size];
    ok(
        collective::allgather(&mine, &mut all, comm),
        "MPI_Iallgather",
    )?;
    Ok(all
        .chunks(width)
        .map(|c| String::from_utf8_lossy(&c[1..=c[0] as usize]).into_owned())
        .collect())
}

/// Every rank's `mine` (any length), in rank order: the lengths first, then
/// the bytes (`MPI_Iallgatherv`). For headers and report lines, not data.
pub(crate) fn allgather_bytes(comm: ffi::MPI_Comm, mine: &[u8]) -> Result<Vec<Vec<u8>>, String> {
    let (_, size) = rank_and_size(comm)?;
    let len = i32::try_from(mine.len()).map_err(|_| "message over 2 GiB")?;
    let mut lens = vec![0i32; size];
    ok(
        collective::allgather(&[len], &mut lens, comm),
        "MPI_Iallgather",
    )?;
    let mut displs = Vec::with_capacity(size);
    let mut total = 0i32;
    for &l in &lens {
        displs.push(total);
        total = total.checked_add(l).ok_or("gathered messages over 2 GiB")?;
    }
    // Empty buffers are fine: comm never hands MPI a dangling 0x1 (Open
    // MPI's MPI_IN_PLACE).
    let mut all = vec![0u8; total as usize];
    ok(
        collective::allgatherv(mine, &mut all, &lens, &displs, comm),
        "MPI_Iallgatherv",
    )?;
    Ok(lens
        .iter()
        .zip(&displs)
        .map(|(&l, &d)| all[d as usize..(d + l) as usize].to_vec())
        .collect())
}

/// Whether every rank of `comm` passed `mine` = true (a logical AND), so
/// that all ranks take the same branch after a local step that may fail.
pub(crate) fn all_agree(comm: ffi::MPI_Comm, mine: bool) -> Result<bool, String> {
    let send = [i32::from(mine)];
    let mut out = [0i32];
    ok(
        collective::allreduce(&send, &mut out, Op::Min, comm),
        "MPI_Iallreduce",
    )?;
    Ok(out[0] == 1)
}

/// A private duplicate of `comm`, freed when dropped.
pub struct OwnComm(pub ffi::MPI_Comm);

impl OwnComm {
    /// Duplicates `comm` (collective over it).
    pub(crate) fn dup(comm: ffi::MPI_Comm) -> Result<Self, String> {
        let mut out = unsafe { ffi::redio_mpi_comm_null };
        // SAFETY: a valid communicator and an out-parameter.
        ok(
            unsafe { pmpi::PMPI_Comm_dup(comm, &mut out) },
            "MPI_Comm_dup",
        )?;
        Ok(OwnComm(out))
    }
}

impl OwnComm {
    /// Splits `comm` by `color`, ordered by `key` (collective over it).
    pub(crate) fn split(comm: ffi::MPI_Comm, color: i32, key: i32) -> Result<Self, String> {
        let mut out = unsafe { ffi::redio_mpi_comm_null };
        // SAFETY: a valid communicator and an out-parameter.
        ok(
            unsafe { pmpi::PMPI_Comm_split(comm, color, key, &mut out) },
            "MPI_Comm_split",
        )?;
        Ok(OwnComm(out))
    }
}

impl Drop for OwnComm {
    fn drop(&mut self) {
        // SAFETY: our own communicator, freed once.
        unsafe { pmpi::PMPI_Comm_free(&mut self.0) };
    }
}
